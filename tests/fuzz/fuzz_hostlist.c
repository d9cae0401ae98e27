// SPDX-License-Identifier: MIT
/* libFuzzer target for npf_hostlist_expand(): no crash, and every result obeys the contract. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char expr[4096], err[160], **names;
	size_t n;
	int rc;

	/* Hostlists come from an environment variable: a C string. */
	if (size >= sizeof(expr))
		size = sizeof(expr) - 1;
	memcpy(expr, data, size);
	expr[size] = '\0';

	memset(err, 'X', sizeof(err));
	rc = npf_hostlist_expand(expr, &names, &n, err, sizeof(err));
	if (!memchr(err, '\0', sizeof(err)))
		abort();
	if (rc < 0) {
		if (names || n || err[0] == '\0')
			abort();
		return 0;
	}
	if ((size_t)rc != n || n == 0 || n > NPF_HOSTLIST_MAX || err[0] != '\0')
		abort();
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);

		if (len == 0 || len >= NPF_NAME_MAX || strpbrk(names[i], "[],"))
			abort();
		/* Duplicates must be gone; quadratic, so only on small outputs. */
		for (size_t j = 0; n <= 512 && j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				abort();
	}
	npf_hostlist_free(names, n);
	return 0;
}
