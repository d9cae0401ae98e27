// SPDX-License-Identifier: MIT
/* Reading the configuration file: the I/O half of lib/config.c, which parses bytes. */
#include "conffile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void put_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int npf_config_load_file(struct npf_config *cfg, const char *path, bool must_exist, char *err,
			 size_t errlen)
{
	char *buf = NULL, sub[256];
	struct stat st;
	size_t len = 0;
	int fd, rc;

	put_err(err, errlen, "%s", "");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ENOENT && !must_exist) {
			npf_config_defaults(cfg);
			return 0;
		}
		put_err(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		put_err(err, errlen, "%s: %s", path, strerror(-rc));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		put_err(err, errlen, "%s: not a regular file", path);
		goto out_close;
	}
	/* One byte more than allowed, to notice a file that is too big even
	 * if it grew after fstat. */
	buf = malloc(NPF_CONFIG_FILE_MAX + 1);
	if (!buf) {
		rc = -ENOMEM;
		put_err(err, errlen, "%s: out of memory", path);
		goto out_close;
	}
	while (len < NPF_CONFIG_FILE_MAX + 1) {
		ssize_t r = read(fd, buf + len, NPF_CONFIG_FILE_MAX + 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			put_err(err, errlen, "%s: %s", path, strerror(-rc));
			goto out_free;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	rc = npf_config_parse(cfg, buf, len, sub, sizeof(sub));
	if (rc < 0)
		put_err(err, errlen, "%s: %s", path, sub);
out_free:
	free(buf);
out_close:
	close(fd);
	return rc;
}
