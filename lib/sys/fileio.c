// SPDX-License-Identifier: MIT
/* Whole-buffer writes and atomic, durable file replacement (lib/sys/fileio.h). */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int npf_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int npf_atomic_write(const char *dir, const char *name, const void *buf, size_t len, mode_t mode)
{
	char tmp[256];
	int dfd, fd, r = 0;

	if (!dir || !*dir || !name || !*name || (!buf && len))
		return -EINVAL;
	if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* A temporary left by a crashed run of this pid is ours to replace; O_NOFOLLOW: the
	 * directory may be writable by others (node_exporter's textfile group). */
	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		r = -errno;
		close(dfd);
		return r;
	}
	if (fchmod(fd, mode) < 0)
		r = -errno;
	if (r == 0)
		r = npf_write_all(fd, buf, len);
	/* Without the fsync a crash after the rename can leave an empty file in place of the
	 * old one (ext4 delayed allocation). */
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	/* The rename itself is durable only once the directory is synced. */
	if (r == 0 && fsync(dfd) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dfd, tmp, 0);
	close(dfd);
	return r;
}
