// SPDX-License-Identifier: MIT
/* libFuzzer target for npf_launcher_nodes() (hostfiles, PBS node files, LSB_MCPU_HOSTS,
 * Slurm hostlists: outside input): no crash, and every result obeys the contract. The
 * first byte picks the form. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "hostlist.h"
#include "launcher.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum npf_nodes_form forms[] = { NPF_NODES_FILE, NPF_NODES_MCPU,
						     NPF_NODES_HOSTLIST };
	char err[160], **names;
	size_t n;
	int rc;

	if (size < 1)
		return 0;
	memset(err, 'X', sizeof(err));
	rc = npf_launcher_nodes(forms[data[0] % 3], (const char *)data + 1, size - 1, &names, &n,
				err, sizeof(err));
	if (!memchr(err, '\0', sizeof(err)))
		abort();
	if (rc < 0) {
		if (names || n || err[0] == '\0')
			abort();
		return 0;
	}
	if ((size_t)rc != n || n == 0 || n > NPF_API_MAX_PEERS || err[0] != '\0')
		abort();
	for (size_t i = 0; i < n; i++) {
		if (!npf_api_name_valid(names[i]))
			abort();
		for (size_t j = 0; n <= 512 && j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				abort();
	}
	npf_hostlist_free(names, n);
	return 0;
}
