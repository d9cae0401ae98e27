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
	/* Each node's own account, the same layout as pairs but not symmetric: said[i][j] is
	 * what node i's row says of its pair with j (NPF_PAIR_*). Blame rests on it, so that
	 * no node's row can make another node a suspect. NULL: every node said the merged
	 * state (a matrix without rows, as in unit tests). */
	const uint8_t *said;
	/* [net * n_nodes + i]: node i's own row says it has no usable address on the network
	 * (no address, its port down, no carrier: the network is absent from its row). NULL:
	 * none. */
	const bool *absent;
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

/* Why a node is a suspect on a network: one row of the blame table (lib/jobcheck.c). */
enum npf_job_blame {
	NPF_BLAME_NONE = 0,
	NPF_BLAME_LOCAL,	/* its own row: no usable address there */
	NPF_BLAME_CORROBORATED, /* its own row: fails with two peers that work with each other */
};

struct npf_job_decision {
	enum npf_job_verdict verdict;
	int net;       /* chosen network index, -1 = none */
	int best;      /* the best-ranked network that any pair reached, -1 = none */
	bool *suspect; /* owned, [n_nodes]: nodes that fail (drained) */
	uint8_t *why;  /* owned, [n_nodes]: enum npf_job_blame of each suspect */
	size_t n_suspects;
	/* A failing pair that either end could explain, on a better network the job left
	 * (the operator's alert: nobody is drained for it); -1 = none. */
	int pair_net, pair_a, pair_b;
	char reason[320]; /* one line */
};

/* Decides for the whole job. A node is a suspect on a network only on its own row's
 * evidence (the blame table, docs/decision.md §10): no usable address there, or failures
 * with two distinct peers that work with each other (joined by working pairs). A failure
 * only the other end reports never counts against a node: one lying row can spoil only
 * its own evidence. Suspects must be a strict minority (a 2-node job blames nobody).
 * On the networks in rank order:
 *  - the first network whose pairs are all ok is W (today's choice);
 *  - a network B ranked before W, of strictly better quality than W, where every pair
 *    among the non-suspects works, gives: the suspects fail, everyone else ok on B —
 *    unless degrade, then everyone ok on W, verdict degraded;
 *  - a failing pair between two non-suspects (either end could explain it) blames
 *    nobody: the job moves on (degraded) and the decision names the pair;
 *  - an unknown pair on a network ranked before the chosen one, among the nodes that
 *    would use it, makes the verdict unknown (the better network might work); on the
 *    job's last try (settle) the job takes W instead, degraded, when there is a W;
 *  - no W and no B: fail, the suspects of the best network named when a minority.
 * On success the caller owns out (npf_job_decision_clear). Returns 0, -EINVAL or
 * -ENOMEM. */
int npf_job_decide(const struct npf_job_input *in, struct npf_job_decision *out);

void npf_job_decision_clear(struct npf_job_decision *d);

const char *npf_job_verdict_name(enum npf_job_verdict v);

/* The blame table's text for why (e.g. "fails with two peers that work with each other"). */
const char *npf_job_blame_text(enum npf_job_blame why);

/* One node's answer in the job's decision: what the daemon of a node says once the
 * exchange is over (docs/decision.md §10). */
enum npf_job_role {
	NPF_JOB_ROLE_OK = 0,   /* ok on net (the job's network) */
	NPF_JOB_ROLE_DEGRADED, /* ok on net, a strictly worse network than the best one */
	NPF_JOB_ROLE_SUSPECT,  /* fail: this node is why the best network does not work */
	NPF_JOB_ROLE_FAIL,     /* fail: no network works for the job */
	NPF_JOB_ROLE_UNKNOWN,  /* evidence missing (a row, or a pair where it decides) */
};

/* "ok" | "degraded" | "suspect" | "fail" | "unknown" */
const char *npf_job_role_name(enum npf_job_role r);

#endif
