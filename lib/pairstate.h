/* SPDX-License-Identifier: MIT */
/* The one rule that turns the two directions of a (local interface, peer) pair into a
 * state. lib/verdict (the check matrix) and the decision (lib/recommend) both call it, so
 * the two can never disagree about what a pair proves (docs/decision.md, "pair state"). */
#ifndef NPF_PAIRSTATE_H
#define NPF_PAIRSTATE_H

#include <stdbool.h>

#include "check.h"

enum npf_pair_state {
	NPF_PAIR_OUTSIDE = 0, /* not this node's evidence: a peer a sparse plan left out */
	NPF_PAIR_OK,	      /* ok forward and ok reverse */
	NPF_PAIR_UNKNOWN,     /* no failure, but a direction is missing (never ok) */
	NPF_PAIR_FAIL,	      /* a direction failed with discriminating evidence */
};

struct npf_pair {
	enum npf_pair_state state;
	/* The deciding direction and outcome: the failed one (forward first), else the
	 * missing one; NPF_OUT_OK / forward for NPF_PAIR_OK and NPF_PAIR_OUTSIDE. */
	enum npf_direction dir;
	enum npf_outcome outcome;
};

/* True for an outcome that is a failure of the path (not ok, not "no evidence"). An
 * out-of-range value counts as a failure: it can only come from a corrupt summary. */
bool npf_outcome_failed(enum npf_outcome o);

/* The state of one pair.
 *  sparse:   the check follows a sparse plan (chk->sparse or the policy's flag);
 *  peer:     the peer node (its available/probed flags);
 *  have:     whether a result exists for the pair (a link, or paths on the network);
 *  fwd, rev: the best outcome each way (ignored when !have).
 * Rows, first match wins:
 *  1. sparse, peer neither probed nor available (never contacted)  -> outside
 *  2. peer unavailable                                              -> unknown (peer-unavailable)
 *  3. no result: sparse and peer not probed -> outside, else        -> unknown (not-probed)
 *  4. forward failed -> fail (forward); reverse failed              -> fail (reverse)
 *  5. ok both ways                                                  -> ok
 *  6. sparse, peer not probed, not-probed both ways                 -> outside
 *  7. otherwise (a direction not-probed or peer-unavailable)        -> unknown
 * A probed, available peer therefore needs ok BOTH ways; forward ok with the reverse
 * missing is unknown in a sparse plan as in a full mesh. */
struct npf_pair npf_pair_reduce(bool sparse, const struct npf_node *peer, bool have,
				enum npf_outcome fwd, enum npf_outcome rev);

/* "outside" | "ok" | "unknown" | "fail" */
const char *npf_pair_state_name(enum npf_pair_state s);

#endif
