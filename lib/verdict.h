/* SPDX-License-Identifier: MIT */
/* Per-interface evidence of a check: how each of our interfaces fared against the peers. */
#ifndef NPF_VERDICT_H
#define NPF_VERDICT_H

#include "check.h"

/* How one of our interfaces fared against the peers. */
struct npf_verdict_iface {
	char ifname[IFNAMSIZ];
	bool works;           /* fwd and rev ok with every probed peer (and at least one) */
	size_t n_ok;          /* peers reached ok both ways */
	bool unproven;        /* some pair is unknown (peer unavailable, a direction missing):
			       * cannot work "with every peer" */
	int fail_peer;        /* first failing available peer (index into check->nodes), -1 if none */
	enum npf_direction fail_dir;
	enum npf_outcome fail_outcome;
	char fail_detail[96];
};

/* Evidence only: the verdict of a check is npf_recommend()'s (lib/recommend.h), which
 * alone knows the inventory and the one-network rule. */
struct npf_verdict_report {
	size_t n_peers;       /* check->n_nodes - 1 */
	size_t n_unavailable; /* peers whose daemon did not answer (outside a sparse plan:
			       * not counted, they were never asked) */
	struct npf_verdict_iface *ifaces; /* owned, in order of first appearance in links */
	size_t n_ifaces;
};

/* Reduces the check's links per interface of ours (the rows of the check matrix and
 * of the "interfaces" array of the verdict object), every pair through
 * npf_pair_reduce() (lib/pairstate.h), the rule the decision uses too:
 *  - works: every pair ok both ways or outside the plan, and at least one ok;
 *  - the first failing available peer, its direction and outcome.
 * On success the caller owns out (npf_verdict_report_clear). Returns 0 or -ENOMEM. */
int npf_verdict_compute(const struct npf_check *c, struct npf_verdict_report *out);

/* Frees out->ifaces and zeroes it; safe on a zeroed struct. */
void npf_verdict_report_clear(struct npf_verdict_report *out);

#endif
