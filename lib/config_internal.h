/* SPDX-License-Identifier: MIT */
/* What the config modules share and nothing else uses. The arrows (no cycles):
 * config_ini.c (INI front end) -> config_value.c (what a key accepts) -> config.c (the key
 * table); config_out.c (output) -> config.c. */
#ifndef NPF_CONFIG_INTERNAL_H
#define NPF_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "pubvar.h"

/* Units of the table's durations (ms) and sizes (bytes), shared with the output. */
#define SEC 1000u
#define MIB (1024u * 1024u)

/* Validates and stores one value of key k (trimmed here; refused when a config line could not
 * carry it); why gets the reason. Returns 0 or -EINVAL/-ERANGE. */
int npf_cfg_apply(struct npf_config *cfg, const struct npf_config_key *k, const char *raw,
		  char *why, size_t whylen);
/* True when s[0..len) names a section of the key table. */
bool npf_cfg_known_section(const char *s, size_t len);
/* printf into err (nothing when err is NULL or errlen 0). */
void npf_cfg_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* At most 60 bytes of a value for an error message, control bytes as '?', a cut marked. */
const char *npf_cfg_quote(const char *value, char buf[72]);

#endif
