// SPDX-License-Identifier: MIT
/* libFuzzer target for npf_explain(): any bytes (a log of any shape) give a report that obeys
 * the contract: no crash, evidence lines inside the input, a JSON rendering. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npf_xp_report rep = {0};
	json_t *j;

	if (npf_explain((const char *)data, size, &rep) < 0)
		return 0;
	if (rep.n_evidence > NPF_XP_MAX_EVIDENCE || rep.n_procs > NPF_XP_MAX_PROCS ||
	    (unsigned)rep.cause >= NPF_XC__COUNT)
		abort();
	if (rep.first_proc >= 0 && (size_t)rep.first_proc >= rep.n_procs)
		abort();
	/* A named cause always has evidence; no failure line, no cause beyond a finding. */
	if (rep.cause != NPF_XC_NONE && rep.cause != NPF_XC_UNKNOWN && rep.n_evidence == 0)
		abort();
	for (size_t i = 0; i < rep.n_evidence; i++) {
		if (rep.evidence[i].lineno < 1 || rep.evidence[i].lineno > rep.n_lines ||
		    !memchr(rep.evidence[i].text, '\0', sizeof(rep.evidence[i].text)))
			abort();
		for (const char *p = rep.evidence[i].text; *p; p++)
			if ((unsigned char)*p < ' ')
				abort();
	}
	j = npf_xp_report_to_json(&rep);
	json_decref(j);
	npf_xp_report_clear(&rep);
	return 0;
}
