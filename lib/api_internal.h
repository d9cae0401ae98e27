/* SPDX-License-Identifier: MIT */
/* Internal to the local API codec (lib/api.c, api_request.c, check_json.c, api_env.c):
 * the helpers its files share. Not an API. */
#ifndef NPF_API_INTERNAL_H
#define NPF_API_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "api.h"

/* Sets *err (when err is not NULL) to code and the formatted message. */
void api_seterr(struct npf_api_error *err, enum npf_api_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The 4-byte big-endian length header of a frame of n bytes, into buf[0..3]. */
void api_put_hdr(char *buf, size_t n);
/* A string that may quote peer-supplied bytes (api.c); a new reference, NULL on ENOMEM. */
json_t *api_safe_string(const char *s, size_t n);

#endif
