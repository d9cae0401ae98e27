/* SPDX-License-Identifier: MIT */
/* First-stage verdict of a check: does one of our interfaces work to and from every peer? */
#ifndef NPF_VERDICT_H
#define NPF_VERDICT_H

#include "check.h"

/* How one of our interfaces fared against the peers. */
struct npf_verdict_iface {
	char ifname[IFNAMSIZ];
	bool works;           /* fwd and rev ok with every probed peer (and at least one) */
	size_t n_ok;          /* peers reached ok both ways */
	bool unproven;        /* some peer was unavailable: cannot work "with every peer" */
	int fail_peer;        /* first failing available peer (index into check->nodes), -1 if none */
	enum npf_direction fail_dir;
	enum npf_outcome fail_outcome;
	char fail_detail[96];
};

struct npf_verdict_report {
	enum npf_verdict verdict;
	size_t n_peers;       /* check->n_nodes - 1 */
	size_t n_unavailable; /* peers whose daemon did not answer */
	struct npf_verdict_iface *ifaces; /* owned, in order of first appearance in links */
	size_t n_ifaces;
};

/* Rules (the recommendation refines them later):
 *  - unknown when there is no peer or some peer is unavailable (never "ok" on
 *    incomplete evidence);
 *  - ok when at least one interface has fwd and rev ok with every peer, where in
 *    a sparse check a link that is not-probed both ways is outside the plan;
 *  - fail otherwise.
 * On success the caller owns out (npf_verdict_report_clear). Returns 0 or -ENOMEM. */
int npf_verdict_compute(const struct npf_check *c, struct npf_verdict_report *out);

/* Frees out->ifaces and zeroes it; safe on a zeroed struct. */
void npf_verdict_report_clear(struct npf_verdict_report *out);

/* One human line without the "verdict: " prefix, e.g.
 * "ok — fab0 works to and from 2 peers" or
 * "FAIL — node3: fab0 timeout (fwd); node2: docker0 wrong-peer (fwd)".
 * Truncates to len. Returns the untruncated length (snprintf style). */
int npf_verdict_format(const struct npf_verdict_report *r, const struct npf_check *c, char *buf,
		       size_t len);

#endif
