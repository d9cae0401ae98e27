// SPDX-License-Identifier: MIT
/* Unit tests for lib/jobcheck: the job decision from the pair-state matrix (blame a
 * minority instead of degrading, the same answer from the same matrix). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jobcheck.h"

#define MAXN 24
#define MAXK 3

struct lab {
	size_t n, k;
	struct npf_job_net nets[MAXK];
	uint8_t pairs[MAXK * MAXN * MAXN];
};

/* n nodes, networks with the given qualities, every pair ok. */
static void lab_init(struct lab *l, size_t n, size_t k, const int64_t *q)
{
	static const char *const names[MAXK] = {"fabric", "eno1", "third"};

	memset(l, 0, sizeof(*l));
	l->n = n;
	l->k = k;
	for (size_t x = 0; x < k; x++) {
		l->nets[x].name = names[x];
		l->nets[x].quality = q[x];
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++)
				l->pairs[x * n * n + i * n + j] = i == j ? 0 : NPF_PAIR_OK;
	}
}

static void set_pair(struct lab *l, size_t k, size_t i, size_t j, enum npf_pair_state s)
{
	l->pairs[k * l->n * l->n + i * l->n + j] = (uint8_t)s;
	l->pairs[k * l->n * l->n + j * l->n + i] = (uint8_t)s;
}

static void kill_node(struct lab *l, size_t k, size_t dead)
{
	for (size_t j = 0; j < l->n; j++)
		if (j != dead)
			set_pair(l, k, dead, j, NPF_PAIR_FAIL);
}

static void decide(const struct lab *l, bool degrade, struct npf_job_decision *d)
{
	struct npf_job_input in = {
	    .n_nodes = l->n,
	    .n_nets = l->k,
	    .nets = l->nets,
	    .pairs = l->pairs,
	    .degrade = degrade,
	};

	assert_int_equal(npf_job_decide(&in, d), 0);
}

static void test_healthy(void **state)
{
	const int64_t q[] = {2, 1};
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	lab_init(&l, 8, 2, q);
	decide(&l, false, &d);
	assert_int_equal(d.verdict, NPF_JOB_OK);
	assert_int_equal(d.net, 0);
	assert_int_equal(d.n_suspects, 0);
	npf_job_decision_clear(&d);
}

/* One dead fabric node in 4-, 8- and 24-node labs: only that node fails. */
static void test_one_dead_node(void **state)
{
	const int64_t q[] = {2, 1};
	const size_t sizes[] = {4, 8, 24};
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	for (size_t s = 0; s < 3; s++) {
		for (size_t dead = 0; dead < sizes[s]; dead += 3) {
			lab_init(&l, sizes[s], 2, q);
			kill_node(&l, 0, dead);
			decide(&l, false, &d);
			assert_int_equal(d.verdict, NPF_JOB_OK);
			assert_int_equal(d.net, 0);
			assert_int_equal(d.n_suspects, 1);
			assert_true(d.suspect[dead]);
			assert_non_null(strstr(d.reason, "fabric"));
			npf_job_decision_clear(&d);
			/* degrade: everyone moves, and says so. */
			decide(&l, true, &d);
			assert_int_equal(d.verdict, NPF_JOB_DEGRADED);
			assert_int_equal(d.net, 1);
			assert_int_equal(d.n_suspects, 0);
			npf_job_decision_clear(&d);
		}
	}
}

/* node3 drops SYNs from node1's fabric address only: one pair broken, one network. */
static void test_asymmetric_pair(void **state)
{
	const int64_t q[] = {2, 1};
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	lab_init(&l, 3, 2, q);
	set_pair(&l, 0, 0, 2, NPF_PAIR_FAIL);
	decide(&l, false, &d);
	/* Either end could explain it: nobody drained (issue 19; the greedy cover blamed the
	 * later node), the job moves, degraded, and the pair is named. */
	assert_int_equal(d.verdict, NPF_JOB_DEGRADED);
	assert_int_equal(d.net, 1);
	assert_int_equal(d.n_suspects, 0);
	assert_int_equal(d.pair_net, 0);
	assert_int_equal(d.pair_a, 0);
	assert_int_equal(d.pair_b, 2);
	assert_non_null(strstr(d.reason, "fabric fails between #0 and #2"));
	npf_job_decision_clear(&d);
}

/* Each node's own account (said) beside the merged matrix: a failure only the accuser
 * reports never makes the accused a suspect, at every position of 3, 4, 5 and 8 nodes;
 * the accuser that claims every pair fails is the only one it can blame. */
static void test_liar(void **state)
{
	static const size_t sizes[] = {3, 4, 5, 8};
	const int64_t q[] = {2, 1};
	uint8_t said[MAXK * MAXN * MAXN];
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	for (size_t z = 0; z < 4; z++) {
		size_t n = sizes[z];

		for (size_t liar = 0; liar < n; liar++) {
			struct npf_job_input in;

			lab_init(&l, n, 2, q);
			memcpy(said, l.pairs, sizeof(said));
			for (size_t v = 0; v < n; v++)
				if (v != liar) {
					/* The merge: fail if either says fail. */
					set_pair(&l, 0, liar, v, NPF_PAIR_FAIL);
					said[liar * n + v] = NPF_PAIR_FAIL;
				}
			in = (struct npf_job_input){.n_nodes = n,
						    .n_nets = 2,
						    .nets = l.nets,
						    .pairs = l.pairs,
						    .said = said};
			assert_int_equal(npf_job_decide(&in, &d), 0);
			assert_int_equal(d.verdict, NPF_JOB_OK);
			assert_int_equal(d.net, 0);
			assert_int_equal(d.n_suspects, 1);
			assert_true(d.suspect[liar]);
			assert_int_equal(d.why[liar], NPF_BLAME_CORROBORATED);
			npf_job_decision_clear(&d);
			/* The same failures told only by the others (the liar now says all is
			 * well): they accuse it, its own row does not: nobody. */
			for (size_t v = 0; v < n; v++)
				if (v != liar) {
					said[liar * n + v] = NPF_PAIR_OK;
					said[v * n + liar] = NPF_PAIR_FAIL;
				}
			assert_int_equal(npf_job_decide(&in, &d), 0);
			assert_int_equal(d.verdict, NPF_JOB_DEGRADED);
			assert_int_equal(d.n_suspects, 0);
			npf_job_decision_clear(&d);
		}
	}
}

/* Local evidence: a node whose own row lacks the network is a suspect without any pair. */
static void test_absent(void **state)
{
	const int64_t q[] = {2, 1};
	bool absent[MAXK * MAXN] = {false};
	struct npf_job_decision d;
	struct npf_job_input in;
	struct lab l;

	(void)state;
	for (size_t x = 0; x < 5; x++) {
		lab_init(&l, 5, 2, q);
		memset(absent, 0, sizeof(absent));
		absent[x] = true;
		for (size_t j = 0; j < 5; j++)
			if (j != x)
				set_pair(&l, 0, x, j, NPF_PAIR_FAIL);
		/* The local row of the blame table comes first: no pair needed. */
		in = (struct npf_job_input){
		    .n_nodes = 5, .n_nets = 2, .nets = l.nets, .pairs = l.pairs, .absent = absent};
		assert_int_equal(npf_job_decide(&in, &d), 0);
		assert_int_equal(d.verdict, NPF_JOB_OK);
		assert_int_equal(d.net, 0);
		assert_int_equal(d.n_suspects, 1);
		assert_int_equal(d.why[x], NPF_BLAME_LOCAL);
		npf_job_decision_clear(&d);
	}
	assert_string_equal(npf_job_blame_text(NPF_BLAME_NONE), "is not a suspect");
}

/* Equal quality: fall back as before, no blame, not degraded. */
static void test_equal_quality(void **state)
{
	const int64_t q[] = {1, 1};
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	lab_init(&l, 4, 2, q);
	kill_node(&l, 0, 1);
	decide(&l, false, &d);
	assert_int_equal(d.verdict, NPF_JOB_OK);
	assert_int_equal(d.net, 1);
	assert_int_equal(d.n_suspects, 0);
	npf_job_decision_clear(&d);
}

/* Half the nodes broken: no minority explains it; the job moves, degraded. */
static void test_no_minority(void **state)
{
	const int64_t q[] = {2, 1};
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	lab_init(&l, 4, 2, q);
	kill_node(&l, 0, 0);
	kill_node(&l, 0, 1);
	decide(&l, false, &d);
	assert_int_equal(d.verdict, NPF_JOB_DEGRADED);
	assert_int_equal(d.net, 1);
	assert_int_equal(d.n_suspects, 0);
	npf_job_decision_clear(&d);
	/* Two nodes: nobody can be blamed. A network that worked for no pair at all
	 * was never the job's network: leaving it is not a degradation. */
	lab_init(&l, 2, 2, q);
	kill_node(&l, 0, 1);
	decide(&l, false, &d);
	assert_int_equal(d.verdict, NPF_JOB_OK);
	assert_int_equal(d.net, 1);
	assert_int_equal(d.n_suspects, 0);
	npf_job_decision_clear(&d);
}

/* Missing evidence on the better network: unknown, never a worse network. */
static void test_unknown(void **state)
{
	const int64_t q[] = {2, 1};
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	lab_init(&l, 4, 2, q);
	set_pair(&l, 0, 1, 2, NPF_PAIR_UNKNOWN);
	decide(&l, false, &d);
	assert_int_equal(d.verdict, NPF_JOB_UNKNOWN);
	assert_int_equal(d.net, 0);
	npf_job_decision_clear(&d);
	/* An unknown pair of a suspect does not matter. */
	lab_init(&l, 4, 2, q);
	kill_node(&l, 0, 3);
	set_pair(&l, 0, 3, 1, NPF_PAIR_UNKNOWN);
	decide(&l, false, &d);
	assert_int_equal(d.verdict, NPF_JOB_OK);
	assert_true(d.suspect[3]);
	npf_job_decision_clear(&d);
}

/* Issue 18: `unknown` is not "nothing". On the job's last try (settle), an unknown pair on
 * the better network gives way to the network verified between every pair, degraded, with
 * the reason; nothing verified between every pair stays unknown (no env); settle changes
 * nothing that was decided without it. */
static void test_settle(void **state)
{
	const int64_t q[] = {2, 1};
	struct npf_job_input in;
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	lab_init(&l, 4, 2, q);
	set_pair(&l, 0, 1, 2, NPF_PAIR_UNKNOWN);
	in = (struct npf_job_input){
	    .n_nodes = l.n, .n_nets = l.k, .nets = l.nets, .pairs = l.pairs, .settle = true};
	assert_int_equal(npf_job_decide(&in, &d), 0);
	assert_int_equal(d.verdict, NPF_JOB_DEGRADED);
	assert_int_equal(d.net, 1);
	assert_int_equal(d.n_suspects, 0);
	assert_non_null(strstr(d.reason, "a better network could not be verified"));
	assert_non_null(strstr(d.reason, "fabric"));
	npf_job_decision_clear(&d);
	/* The same decision from the same matrix, whatever node computes it. */
	assert_int_equal(npf_job_decide(&in, &d), 0);
	assert_int_equal(d.verdict, NPF_JOB_DEGRADED);
	assert_int_equal(d.net, 1);
	npf_job_decision_clear(&d);
	/* The worse network has an unknown pair too: nothing verified, still unknown. */
	set_pair(&l, 1, 0, 3, NPF_PAIR_UNKNOWN);
	assert_int_equal(npf_job_decide(&in, &d), 0);
	assert_int_equal(d.verdict, NPF_JOB_UNKNOWN);
	assert_int_equal(d.net, 0);
	npf_job_decision_clear(&d);
	/* ... or fails between a pair (no network works for every pair): never degraded. */
	set_pair(&l, 1, 0, 3, NPF_PAIR_FAIL);
	assert_int_equal(npf_job_decide(&in, &d), 0);
	assert_int_not_equal(d.verdict, NPF_JOB_DEGRADED);
	assert_int_not_equal(d.verdict, NPF_JOB_OK);
	npf_job_decision_clear(&d);
	/* Everything verified, or a suspect explaining the better network: settle is moot. */
	lab_init(&l, 4, 2, q);
	kill_node(&l, 0, 3);
	assert_int_equal(npf_job_decide(&in, &d), 0);
	assert_int_equal(d.verdict, NPF_JOB_OK);
	assert_int_equal(d.net, 0);
	assert_true(d.suspect[3]);
	npf_job_decision_clear(&d);
}

/* Sparse: pairs outside the plan are no evidence; node2's fabric drops TCP. */
static void test_sparse(void **state)
{
	const int64_t q[] = {2, 1};
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	lab_init(&l, 8, 2, q);
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < 8; i++)
			for (size_t j = i + 1; j < 8; j++)
				if ((j - i) % 8 > 2 && (j - i) % 8 < 6)
					set_pair(&l, k, i, j, NPF_PAIR_OUTSIDE);
	for (size_t j = 0; j < 8; j++)
		if (j != 1 && l.pairs[1 * 8 + j] != NPF_PAIR_OUTSIDE)
			set_pair(&l, 0, 1, j, NPF_PAIR_FAIL);
	decide(&l, false, &d);
	assert_int_equal(d.verdict, NPF_JOB_OK);
	assert_int_equal(d.net, 0);
	assert_int_equal(d.n_suspects, 1);
	assert_true(d.suspect[1]);
	npf_job_decision_clear(&d);
}

/* Nothing works anywhere: fail, with the minority that explains the best network. */
static void test_fail(void **state)
{
	const int64_t q[] = {2, 1};
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	lab_init(&l, 4, 2, q);
	kill_node(&l, 0, 2);
	kill_node(&l, 1, 2);
	kill_node(&l, 1, 0);
	set_pair(&l, 0, 0, 1, NPF_PAIR_FAIL);
	set_pair(&l, 0, 0, 3, NPF_PAIR_FAIL);
	set_pair(&l, 0, 1, 3, NPF_PAIR_FAIL);
	decide(&l, false, &d);
	assert_int_equal(d.verdict, NPF_JOB_FAIL);
	assert_int_equal(d.net, -1);
	npf_job_decision_clear(&d);
}

/* The decision is a function of the matrix: every node computes the same. */
static void test_deterministic(void **state)
{
	const int64_t q[] = {3, 2, 1};
	struct npf_job_decision a, b;
	struct lab l;
	unsigned int seed = 7;

	(void)state;
	for (int round = 0; round < 200; round++) {
		lab_init(&l, 6, 3, q);
		for (size_t k = 0; k < 3; k++)
			for (size_t i = 0; i < 6; i++)
				for (size_t j = i + 1; j < 6; j++)
					set_pair(&l, k, i, j,
						 rand_r(&seed) % 7 == 0 ? NPF_PAIR_FAIL : NPF_PAIR_OK);
		decide(&l, round % 2, &a);
		decide(&l, round % 2, &b);
		assert_int_equal(a.verdict, b.verdict);
		assert_int_equal(a.net, b.net);
		assert_memory_equal(a.suspect, b.suspect, 6 * sizeof(bool));
		/* Suspects are a strict minority, and the others' pairs on the chosen
		 * network all work. */
		assert_true(a.n_suspects * 2 < 6 || a.n_suspects == 0);
		if (a.net >= 0 && (a.verdict == NPF_JOB_OK || a.verdict == NPF_JOB_DEGRADED))
			for (size_t i = 0; i < 6; i++)
				for (size_t j = 0; j < 6; j++)
					if (i != j && !a.suspect[i] && !a.suspect[j])
						assert_int_equal(l.pairs[a.net * 36 + i * 6 + j],
								 NPF_PAIR_OK);
		npf_job_decision_clear(&a);
		npf_job_decision_clear(&b);
	}
}

/* The merge rule of lib/jobrows on two accounts of one pair. */
static uint8_t merged(uint8_t a, uint8_t b)
{
	if (a == NPF_PAIR_FAIL || b == NPF_PAIR_FAIL)
		return NPF_PAIR_FAIL;
	if (a == NPF_PAIR_OUTSIDE)
		return b;
	if (b == NPF_PAIR_OUTSIDE)
		return a;
	return a == NPF_PAIR_OK && b == NPF_PAIR_OK ? NPF_PAIR_OK : NPF_PAIR_UNKNOWN;
}

/* Property over random accounts (every row says anything): a node whose own row reports no
 * failure and keeps the network is never a suspect, whatever the other rows say; every
 * suspect's own row says it fails with two peers or lacks the network; a 2-node job
 * blames nobody. */
static void test_own_evidence_only(void **state)
{
	static const uint8_t states[] = {NPF_PAIR_OK,	NPF_PAIR_OK,	  NPF_PAIR_OK,
					 NPF_PAIR_FAIL, NPF_PAIR_UNKNOWN, NPF_PAIR_OUTSIDE};
	const int64_t q[] = {3, 2, 1};
	uint8_t said[MAXK * MAXN * MAXN];
	bool absent[MAXK * MAXN];
	unsigned int seed = 1919;
	struct npf_job_decision d;
	struct lab l;

	(void)state;
	for (int round = 0; round < 3000; round++) {
		size_t n = 2 + (size_t)rand_r(&seed) % 7;
		struct npf_job_input in;

		lab_init(&l, n, 3, q);
		memset(said, 0, sizeof(said));
		memset(absent, 0, sizeof(absent));
		for (size_t k = 0; k < 3; k++)
			for (size_t i = 0; i < n; i++) {
				/* Some nodes report nothing wrong at all: the honest, healthy. */
				bool clean = rand_r(&seed) % 3 == 0;

				absent[k * n + i] = !clean && rand_r(&seed) % 9 == 0;
				for (size_t j = 0; j < n; j++)
					if (j != i)
						said[k * n * n + i * n + j] =
						    absent[k * n + i] ? NPF_PAIR_FAIL
						    : clean	      ? NPF_PAIR_OK
								      : states[rand_r(&seed) % 6];
			}
		for (size_t k = 0; k < 3; k++)
			for (size_t i = 0; i < n; i++)
				for (size_t j = 0; j < n; j++)
					if (i != j)
						l.pairs[k * n * n + i * n + j] =
						    merged(said[k * n * n + i * n + j],
							   said[k * n * n + j * n + i]);
		in = (struct npf_job_input){.n_nodes = n,
					    .n_nets = 3,
					    .nets = l.nets,
					    .pairs = l.pairs,
					    .said = said,
					    .absent = absent,
					    .degrade = round % 4 == 0};
		assert_int_equal(npf_job_decide(&in, &d), 0);
		if (n == 2)
			assert_int_equal(d.n_suspects, 0);
		for (size_t x = 0; x < n; x++) {
			size_t own = 0, k = (size_t)(d.net >= 0 ? d.net : d.best);

			if (!d.suspect[x])
				continue;
			for (size_t j = 0; j < n; j++)
				own += j != x && said[k * n * n + x * n + j] == NPF_PAIR_FAIL;
			assert_true(absent[k * n + x] || own >= 2);
		}
		npf_job_decision_clear(&d);
	}
}

static void test_bad_args(void **state)
{
	struct npf_job_decision d;
	struct npf_job_input in = { 0 };

	(void)state;
	assert_int_equal(npf_job_decide(NULL, &d), -22);
	assert_int_equal(npf_job_decide(&in, &d), -22);
	assert_string_equal(npf_job_verdict_name(NPF_JOB_DEGRADED), "degraded");
	assert_string_equal(npf_job_verdict_name((enum npf_job_verdict)99), "unknown");
	npf_job_decision_clear(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_healthy),
	    cmocka_unit_test(test_one_dead_node),
	    cmocka_unit_test(test_asymmetric_pair),
	    cmocka_unit_test(test_equal_quality),
	    cmocka_unit_test(test_no_minority),
	    cmocka_unit_test(test_unknown),
	    cmocka_unit_test(test_settle),
	    cmocka_unit_test(test_sparse),
	    cmocka_unit_test(test_fail),
	    cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_bad_args),
	    cmocka_unit_test(test_liar),
	    cmocka_unit_test(test_absent),
	    cmocka_unit_test(test_own_evidence_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
