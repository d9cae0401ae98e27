/* SPDX-License-Identifier: MIT */
/* Whole-buffer writes and atomic file replacement, shared by the daemon's state file, its
 * metrics textfile and the CLI (issue 21: written once). */
#ifndef NPF_SYS_FILEIO_H
#define NPF_SYS_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* Writes all of buf to fd, retrying short writes and EINTR. Returns 0 or -errno. */
int npf_write_all(int fd, const void *buf, size_t len);

/* Replaces dir/name with buf atomically and durably: a hidden temporary file in dir
 * (".name.<pid>.tmp", created O_EXCL | O_NOFOLLOW with mode, then fchmod'ed to mode so the
 * umask does not narrow it), fsync, rename over name, fsync of dir. After a crash the
 * file is the old or the new one, never empty or half written; a reader never sees a
 * partial file. The temporary is removed on failure. Returns 0 or -errno. */
int npf_atomic_write(const char *dir, const char *name, const void *buf, size_t len, mode_t mode);

#endif
