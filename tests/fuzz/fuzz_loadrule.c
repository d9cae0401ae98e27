// SPDX-License-Identifier: MIT
/* libFuzzer target for npf_attempt_facts_from_detail(): the detail text of a reverse result
 * comes from a peer. No crash, and whatever it says, it can only make a stalled or timed-out
 * attempt's facts known, never turn another outcome into a failure. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loadrule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char detail[128]; /* wire details are bounded well below this */

	if (size >= sizeof(detail))
		size = sizeof(detail) - 1;
	memcpy(detail, data, size);
	detail[size] = '\0';
	for (int o = 0; o <= NPF_OUT__COUNT; o++) {
		struct npf_attempt_facts f = { .outcome = (enum npf_outcome)o,
					       .dir = NPF_DIR_REVERSE };
		enum npf_judgement j;

		npf_attempt_facts_from_detail(&f, detail);
		if ((f.echo_known || f.ctl_answered) && o != NPF_OUT_BULK_STALL)
			abort();
		if ((f.data_syn_lost || f.path_lossy) && o != NPF_OUT_TIMEOUT)
			abort();
		j = npf_attempt_judge(&f, NULL);
		/* Unknown evidence stays unknown, ok stays ok, whatever the text. */
		if ((o == NPF_OUT_OK || o == NPF_OUT_NOT_PROBED || o == NPF_OUT_PEER_UNAVAILABLE) &&
		    j != NPF_JUDGE_KEEP)
			abort();
		if (o == NPF_OUT__COUNT && j != NPF_JUDGE_INCONCLUSIVE)
			abort();
	}
	return 0;
}
