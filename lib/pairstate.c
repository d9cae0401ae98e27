// SPDX-License-Identifier: MIT
/* The pair-state reducer: one table of rows, read top to bottom (lib/pairstate.h). */
#include "pairstate.h"

bool npf_outcome_failed(enum npf_outcome o)
{
	return (unsigned int)o >= NPF_OUT__COUNT ||
	       (o != NPF_OUT_OK && o != NPF_OUT_PEER_UNAVAILABLE && o != NPF_OUT_NOT_PROBED);
}

static struct npf_pair pair(enum npf_pair_state s, enum npf_direction d, enum npf_outcome o)
{
	struct npf_pair p = {.state = s, .dir = d, .outcome = o};

	return p;
}

struct npf_pair npf_pair_reduce(bool sparse, const struct npf_node *peer, bool have,
				enum npf_outcome fwd, enum npf_outcome rev)
{
	bool planned = !sparse || peer->probed;

	if (!planned && !peer->available)
		return pair(NPF_PAIR_OUTSIDE, NPF_DIR_FORWARD, NPF_OUT_OK);
	if (!peer->available)
		return pair(NPF_PAIR_UNKNOWN, NPF_DIR_FORWARD, NPF_OUT_PEER_UNAVAILABLE);
	if (!have)
		return planned ? pair(NPF_PAIR_UNKNOWN, NPF_DIR_FORWARD, NPF_OUT_NOT_PROBED)
			       : pair(NPF_PAIR_OUTSIDE, NPF_DIR_FORWARD, NPF_OUT_OK);
	if (npf_outcome_failed(fwd))
		return pair(NPF_PAIR_FAIL, NPF_DIR_FORWARD,
			    (unsigned int)fwd < NPF_OUT__COUNT ? fwd : NPF_OUT_UNREACHABLE);
	if (npf_outcome_failed(rev))
		return pair(NPF_PAIR_FAIL, NPF_DIR_REVERSE,
			    (unsigned int)rev < NPF_OUT__COUNT ? rev : NPF_OUT_UNREACHABLE);
	if (fwd == NPF_OUT_OK && rev == NPF_OUT_OK)
		return pair(NPF_PAIR_OK, NPF_DIR_FORWARD, NPF_OUT_OK);
	if (!planned && fwd == NPF_OUT_NOT_PROBED && rev == NPF_OUT_NOT_PROBED)
		return pair(NPF_PAIR_OUTSIDE, NPF_DIR_FORWARD, NPF_OUT_OK);
	if (fwd != NPF_OUT_OK)
		return pair(NPF_PAIR_UNKNOWN, NPF_DIR_FORWARD, fwd);
	return pair(NPF_PAIR_UNKNOWN, NPF_DIR_REVERSE, rev);
}

const char *npf_pair_state_name(enum npf_pair_state s)
{
	static const char *const names[] = {
	    [NPF_PAIR_OUTSIDE] = "outside",
	    [NPF_PAIR_OK] = "ok",
	    [NPF_PAIR_UNKNOWN] = "unknown",
	    [NPF_PAIR_FAIL] = "fail",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}
