/* SPDX-License-Identifier: MIT */
/* The job decision: from the same pair-state matrix on every node to the same network, the
 * same suspects and the same verdicts (docs/decision.md §10, "One decision per job"). Pure:
 * a function of its arguments, so every node that holds the same matrix decides the same. */
#ifndef NPF_JOBCHECK_H
#define NPF_JOBCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "pairstate.h"

/* Pair states are lib/pairstate's (the one reducer of issue 10): ok only when both
 * directions worked, fail on discriminating evidence in either, unknown otherwise, outside
 * when a sparse plan leaves the pair out on purpose (no part of the evidence). */

/* One network of the job, in the job's rank order (best first, tie-breakers included). */
struct npf_job_net {
	const char *name; /* "198.18.1.0/24", for reasons; borrowed */
	/* The quality key only (prefer=/avoid=, RDMA, link speed, role), higher is better;
	 * equal quality means the networks differ only in tie-breakers (family, prefix
	 * bytes), between which a job falls back as before, without blame. */
	int64_t quality;
};

struct npf_job_input {
	size_t n_nodes; /* nodes in hostlist order, the same on every node */
	size_t n_nets;
	const struct npf_job_net *nets; /* [n_nets], rank order */
	/* [net * n_nodes * n_nodes + i * n_nodes + j] for i != j; the matrix must be
	 * symmetric (a pair is one state); a node without an address on a network has
	 * every pair there in NPF_PAIR_FAIL. */
	const uint8_t *pairs;
	bool degrade; /* [publish] fallback = degrade */
	/* The job's last try (a participant's ROW said "settle"): an unknown pair on a better
	 * network no longer holds the job when a worse network works for every pair: the job
	 * settles on it, degraded ("a better network could not be verified"). */
	bool settle;
	const char *const *names; /* [n_nodes] for reasons, borrowed; NULL: "#i" */
};

enum npf_job_verdict {
	NPF_JOB_OK = 0,	  /* every non-suspect node on the chosen network */
	NPF_JOB_DEGRADED, /* ok, but on a strictly worse network than the best one */
	NPF_JOB_FAIL,	  /* no network works: everyone fails (suspects named) */
	NPF_JOB_UNKNOWN,  /* evidence missing where it decides */
};

struct npf_job_decision {
	enum npf_job_verdict verdict;
	int net;       /* chosen network index, -1 = none */
	int best;      /* the best-ranked network that any pair reached, -1 = none */
	bool *suspect; /* owned, [n_nodes]: nodes that fail (drained) */
	size_t n_suspects;
	char reason[200]; /* one line */
};

/* Decides for the whole job. On the networks in rank order:
 *  - the first network whose pairs are all ok is W (today's choice);
 *  - a network B ranked before W, of strictly better quality than W, whose failing pairs
 *    are covered by a strict minority of nodes C (every failing pair involves a node of
 *    C, every pair among the others is ok), gives: C suspects (fail), everyone else ok on
 *    B — unless degrade, then everyone ok on W, verdict degraded;
 *  - an unknown pair on a network ranked before the chosen one, among the nodes that
 *    would use it, makes the verdict unknown (the better network might work); on the
 *    job's last try (settle) the job takes W instead, degraded, when there is a W;
 *  - no W and no B: fail, the suspects being a cover of the best network's failures
 *    when a minority explains them.
 * The cover is greedy and deterministic: the node in most failing pairs first, ties to
 * the later node in hostlist order. On success the caller owns out (npf_job_decision_clear).
 * Returns 0, -EINVAL or -ENOMEM. */
int npf_job_decide(const struct npf_job_input *in, struct npf_job_decision *out);

void npf_job_decision_clear(struct npf_job_decision *d);

const char *npf_job_verdict_name(enum npf_job_verdict v);

#endif
