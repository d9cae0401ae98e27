// SPDX-License-Identifier: MIT
/* Atomic publication of the Prometheus textfile (write temp + fsync + rename). */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static int write_all(int fd, const char *p, size_t len)
{
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

int metrics_write(const char *dir, const char *text)
{
	char tmp[64];
	int dfd, fd, r;

	if (!dir || !*dir || !text)
		return -EINVAL;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* Not ending in ".prom": node_exporter must never read a half-written file.
	 * The pid keeps two daemons sharing a directory from truncating each
	 * other's temporary file. */
	snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", METRICS_FILE_NAME, (long)getpid());
	/* O_NOFOLLOW: the directory may be writable by others (node_exporter's group). */
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		goto err_dir;
	}
	/* The service runs with UMask=0077, node_exporter as another user. */
	if (fchmod(fd, 0644) < 0) {
		r = -errno;
		goto err_file;
	}
	r = write_all(fd, text, strlen(text));
	if (r < 0)
		goto err_file;
	/* Without the fsync a crash after the rename can leave an empty file in
	 * place of the old one (ext4 delayed allocation). */
	if (fsync(fd) < 0) {
		r = -errno;
		goto err_file;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto err_unlink;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, METRICS_FILE_NAME) < 0) {
		r = -errno;
		goto err_unlink;
	}
	/* The rename itself is durable only once the directory is synced. */
	r = fsync(dfd) < 0 ? -errno : 0;
	close(dfd);
	return r;

err_file:
	close(fd);
err_unlink:
	unlinkat(dfd, tmp, 0);
err_dir:
	close(dfd);
	return r;
}

int metrics_publish(const char *dir, const struct npf_check *chk,
		    const struct npf_recommendation *rec, const struct npf_metrics_counters *ctr)
{
	char *text = NULL;
	int r;

	if (!dir || !*dir)
		return 0;
	r = npf_metrics_render(chk, rec, ctr, &text);
	if (r < 0) {
		log_errc(r, "metrics: cannot render");
		return r;
	}
	r = metrics_write(dir, text);
	free(text);
	if (r < 0) {
		log_errc(r, "metrics: cannot write %s/%s", dir, METRICS_FILE_NAME);
		return r;
	}
	return 0;
}
