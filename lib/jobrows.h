/* SPDX-License-Identifier: MIT */
/* From the rows of a job check (wire message ROW, one per node) to the one pair-state
 * matrix that lib/jobcheck decides from (docs/decision.md §10, "Same evidence
 * everywhere"). Pure: every node that holds the same rows builds the same matrix,
 * whatever order they arrived in. */
#ifndef NPF_JOBROWS_H
#define NPF_JOBROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobcheck.h"
#include "wire.h"

/* The job id of an ordered hostlist: 32 lower-case hex digits of a BLAKE2b hash of the
 * names (each NUL-terminated), so rows of two jobs, or of one job with its nodes in
 * another order, never mix. names[0..n) must be non-NULL. Returns 0 or -EINVAL. */
int npf_job_id(const char *const *names, size_t n, char out[NPF_WIRE_JOB_ID_LEN + 1]);
/* The same with the job's tag (a Slurm job id; NULL or "" = none, then npf_job_id()): two
 * starts of one hostlist under different tags are two jobs. */
int npf_job_id_tag(const char *const *names, size_t n, const char *job_tag,
		   char out[NPF_WIRE_JOB_ID_LEN + 1]);

/* The job's order of two networks as a row carries them (rank, key): the local ranking's
 * (lib/rank.c) -- rank descending (the quality rows and the family packed into it), then
 * the prefix bytes and prefix length ascending, never the key's text (which would put
 * 198.18.10.0/24 before 198.18.2.0/24). <0: a first. */
int npf_job_net_order(int64_t rank_a, const char *key_a, int64_t rank_b, const char *key_b);

/* The merged matrix: networks in npf_job_net_order(), pairs as struct npf_job_input wants
 * them. Owned by the caller (npf_job_matrix_clear). */
struct npf_job_matrix {
	size_t n_nodes, n_nets;
	char (*keys)[NPF_WIRE_NET_KEY_MAX]; /* [n_nets] */
	struct npf_job_net *nets;	    /* [n_nets], name -> keys[k] */
	uint8_t *pairs;			    /* [n_nets * n_nodes * n_nodes] */
	uint8_t *said;			    /* [n_nets * n_nodes * n_nodes]: row i's own
					     * account of pair (i, j) (struct npf_job_input) */
	bool *absent;			    /* [n_nets * n_nodes]: absent from row i */
};

/* Merges rows[i] (node i's row, in hostlist order) into m. A pair's state is the merge
 * of the two rows that hold it, symmetric in the two: fail if either says fail; the
 * other's state if one says outside (a sparse plan gave the pair to one of the two);
 * ok if both say ok; unknown otherwise. A network absent from a row is one the node has
 * no address on: its pairs there are fail. Each row's own account is kept beside the
 * merge (said, absent): blame rests on it (lib/jobcheck.h). Returns
 *   0          m is the job's matrix;
 *   -ENODATA   a row is missing (rows[i] == NULL): the caller's verdict is unknown,
 *              never a network (a partial matrix differs between nodes);
 *   -EPROTO    the rows do not describe one job (another job id or size, a row at the
 *              wrong index), or more than NPF_WIRE_MAX_ROW_NETS networks in all;
 * A network's rank and quality are the coordinator's (rows[0]: its own policy and the
 * candidates it knows), never a participant's; one that rows[0] lacks takes the lowest
 * (rank, quality) any row gives it. The same on every node.
 *   -ENOMEM.
 * m is left zeroed on failure. */
int npf_job_rows_merge(const struct npf_msg_row *const *rows, size_t n_nodes,
		       struct npf_job_matrix *m);

void npf_job_matrix_clear(struct npf_job_matrix *m);

/* The decision's input over m (borrowed: valid while m is), each row's own account
 * included, so blame rests on it. */
struct npf_job_input npf_job_matrix_input(const struct npf_job_matrix *m, bool degrade);


struct npf_job_answer {
	enum npf_job_role role;
	char net[NPF_WIRE_NET_KEY_MAX]; /* the job's network, "" none */
	size_t n_suspects;
	char reason[320]; /* one line, names the suspects and their evidence */
};

/* The answer for node self (its hostlist index) from rows[0..n) (NULL = missing):
 * npf_job_rows_merge() then npf_job_decide(). A missing row is unknown for everyone
 * ("no row from node3"), never a network. Pure; the same rows give every node the same
 * net, suspects and reason. Returns 0 (out filled) or -EINVAL, -ENOMEM. */
int npf_job_answer(const struct npf_msg_row *const *rows, const char *const *hostlist, size_t n,
		   size_t self, bool degrade, struct npf_job_answer *out);

/* The coordinator's decision from the rows it holds, rows[i] NULL = missing (then the
 * verdict is unknown, node i marked 'm'): one message for every node of the job. Names in
 * the reason come from the rows. On success out owns its nodes string
 * (npf_wire_job_decision_clear). Returns 0, -EINVAL or -ENOMEM. */
int npf_job_round_decide(const struct npf_msg_row *const *rows, size_t n, bool degrade,
			 struct npf_msg_job_decision *out);

/* Node self's role in d (a suspect fails, the others follow d's verdict). */
enum npf_job_role npf_job_role_of(const struct npf_msg_job_decision *d, size_t self);


#endif
