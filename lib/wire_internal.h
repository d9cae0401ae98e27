/* SPDX-License-Identifier: MIT */
/* Internal to the probe protocol codec (lib/wire.c, wire_job.c): the hex forms of the
 * instance id and of fixed-size byte strings, strict (lower-case, exact length). */
#ifndef NPF_WIRE_INTERNAL_H
#define NPF_WIRE_INTERNAL_H

#include <errno.h>
#include <sodium.h>
#include <stdint.h>
#include <string.h>

static inline void instance_hex(uint64_t v, char out[17])
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (56 - 8 * i));
	sodium_bin2hex(out, 17, b, sizeof(b));
}

static inline int hex_exact(const char *s, uint8_t *out, size_t n)
{
	size_t got = 0;
	const char *end = NULL;

	if (!s || strlen(s) != 2 * n)
		return -EBADMSG;
	for (size_t i = 0; i < 2 * n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return -EBADMSG;
	if (sodium_hex2bin(out, n, s, 2 * n, NULL, &got, &end) != 0 || got != n)
		return -EBADMSG;
	return 0;
}

static inline int instance_parse(const char *s, uint64_t *v)
{
	uint8_t b[8];

	if (hex_exact(s, b, sizeof(b)) < 0)
		return -EBADMSG;
	*v = 0;
	for (int i = 0; i < 8; i++)
		*v = *v << 8 | b[i];
	return *v ? 0 : -EBADMSG;
}

#endif
