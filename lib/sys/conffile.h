/* SPDX-License-Identifier: MIT */
/* Reading the configuration file (the I/O half; lib/config.c parses). */
#ifndef NPF_SYS_CONFFILE_H
#define NPF_SYS_CONFFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/*
 * Reads path (at most NPF_CONFIG_FILE_MAX bytes, a regular file) and calls
 * npf_config_parse() on its bytes. A missing file is not an error unless
 * must_exist: *cfg then gets the defaults. Returns 0 or -errno as
 * npf_config_parse(), plus the open/read errors; err names the path.
 */
int npf_config_load_file(struct npf_config *cfg, const char *path, bool must_exist, char *err,
			 size_t errlen);

#endif
