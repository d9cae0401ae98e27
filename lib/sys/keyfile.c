// SPDX-License-Identifier: MIT
/* Cluster key file: permission checks and reading; the format is lib/auth.c's. */
#include "keyfile.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEYFILE_MAX 4096

int npf_keyfile_load(const char *path, struct npf_auth_keys *keys, char *err, size_t errsz)
{
	char buf[KEYFILE_MAX];
	struct stat st;
	size_t len = 0;
	int fd, r;

	memset(keys, 0, sizeof(*keys));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errsz, "%s: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errsz, "%s: %s", path, strerror(-r));
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0137)) {
		snprintf(err, errsz,
			 "%s: must be a regular file owned by uid %u with mode 0600 or 0640 "
			 "(is uid %u, mode %04o)",
			 path, (unsigned int)geteuid(), (unsigned int)st.st_uid,
			 (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(err, errsz, "%s: %s", path, strerror(-r));
			sodium_memzero(buf, sizeof(buf));
			close(fd);
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == sizeof(buf)) {
			snprintf(err, errsz, "%s: larger than %d bytes", path, KEYFILE_MAX);
			sodium_memzero(buf, sizeof(buf));
			close(fd);
			return -EINVAL;
		}
	}
	close(fd);
	{
		char why[160] = "";

		r = npf_auth_keys_parse(buf, len, keys, why, sizeof(why));
		if (r < 0)
			snprintf(err, errsz, "%s: %s", path, why);
	}
	sodium_memzero(buf, sizeof(buf));
	return r;
}
