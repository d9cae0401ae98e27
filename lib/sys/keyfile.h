/* SPDX-License-Identifier: MIT */
/* Reading the cluster key file (the I/O half; lib/auth.c parses). */
#ifndef NPF_SYS_KEYFILE_H
#define NPF_SYS_KEYFILE_H

#include <stddef.h>

#include "auth.h"

/* Loads path into *keys after checking that it is a regular file owned by our
 * effective uid and readable by nobody else than that user and its group (mode
 * 0600, 0640, 0400 or 0440). Returns 0, or -errno / -EPERM (ownership or mode) /
 * -EINVAL (contents) with a reason in err. Wipes what it read. */
int npf_keyfile_load(const char *path, struct npf_auth_keys *keys, char *err, size_t errsz);

#endif
