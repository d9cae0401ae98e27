// SPDX-License-Identifier: MIT
/* libFuzzer target for npf_config_parse(): no crash; accepted text survives dump and re-parse. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dump[NPF_CONFIG_DUMP_MAX];
	struct npf_config *a, *b;
	char err[256];
	int rc, n;

	/* The parser takes bytes with a length; no NUL terminator is added on
	 * purpose, so reads past the end show up under ASan. */
	a = malloc(sizeof(*a));
	b = malloc(sizeof(*b));
	if (!a || !b)
		goto out;
	memset(err, 'X', sizeof(err));
	rc = npf_config_parse(a, (const char *)data, size, err, sizeof(err));
	if (!memchr(err, '\0', sizeof(err)))
		abort();
	if (rc < 0) {
		if (err[0] == '\0')
			abort(); /* every failure explains itself */
		goto out;
	}
	n = npf_config_dump(a, dump, sizeof(dump));
	if (n < 0 || (size_t)n != strlen(dump))
		abort();
	if (npf_config_parse(b, dump, (size_t)n, err, sizeof(err)) != 0)
		abort();
	if (!npf_config_equal(a, b) || memcmp(a, b, sizeof(*a)) != 0)
		abort();

	/* The same values through the command-line path: set each key from
	 * its formatted value and expect no change. */
	{
		size_t nk;
		const struct npf_config_key *k = npf_config_keys(&nk);

		for (size_t i = 0; i < nk; i++) {
			if (npf_config_format(a, &k[i], dump, sizeof(dump)) < 0)
				abort();
			if (npf_config_set(b, NULL, k[i].option, dump, err, sizeof(err)) != 0)
				abort();
		}
		if (memcmp(a, b, sizeof(*a)) != 0)
			abort();
	}
out:
	free(a);
	free(b);
	return 0;
}
