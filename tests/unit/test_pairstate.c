// SPDX-License-Identifier: MIT
/* The pair-state reducer, and the property it exists for: lib/verdict and lib/recommend
 * agree on every outcome mix, sparse or not (they both call npf_pair_reduce). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "pairstate.h"
#include "recommend.h"
#include "sparse_check.h"
#include "verdict.h"

static struct npf_node peer(bool available, bool probed)
{
	struct npf_node n;

	memset(&n, 0, sizeof(n));
	n.available = available;
	n.probed = probed;
	return n;
}

static void rows(void **state)
{
	struct npf_node ok = peer(true, true), gone = peer(false, true);
	struct npf_node never = peer(false, false), unplanned = peer(true, false);
	struct npf_pair p;
	(void)state;

	p = npf_pair_reduce(false, &ok, true, NPF_OUT_OK, NPF_OUT_OK);
	assert_int_equal(p.state, NPF_PAIR_OK);
	/* The disagreement this module removes: forward ok, reverse not probed. */
	for (int sparse = 0; sparse < 2; sparse++) {
		p = npf_pair_reduce(sparse, &ok, true, NPF_OUT_OK, NPF_OUT_NOT_PROBED);
		assert_int_equal(p.state, NPF_PAIR_UNKNOWN);
		assert_int_equal(p.dir, NPF_DIR_REVERSE);
		assert_int_equal(p.outcome, NPF_OUT_NOT_PROBED);
		p = npf_pair_reduce(sparse, &ok, true, NPF_OUT_NOT_PROBED, NPF_OUT_OK);
		assert_int_equal(p.state, NPF_PAIR_UNKNOWN);
		assert_int_equal(p.dir, NPF_DIR_FORWARD);
		/* No result at all for a planned peer: unknown, never fail. */
		p = npf_pair_reduce(sparse, &ok, false, NPF_OUT_OK, NPF_OUT_OK);
		assert_int_equal(p.state, NPF_PAIR_UNKNOWN);
	}
	p = npf_pair_reduce(false, &ok, true, NPF_OUT_OK, NPF_OUT_REFUSED);
	assert_int_equal(p.state, NPF_PAIR_FAIL);
	assert_int_equal(p.dir, NPF_DIR_REVERSE);
	assert_int_equal(p.outcome, NPF_OUT_REFUSED);
	p = npf_pair_reduce(false, &ok, true, NPF_OUT_TIMEOUT, NPF_OUT_REFUSED);
	assert_int_equal(p.dir, NPF_DIR_FORWARD);
	assert_int_equal(p.outcome, NPF_OUT_TIMEOUT);
	p = npf_pair_reduce(false, &ok, true, (enum npf_outcome)99, NPF_OUT_OK);
	assert_int_equal(p.state, NPF_PAIR_FAIL);
	assert_int_equal(p.outcome, NPF_OUT_UNREACHABLE);
	/* An unavailable peer is unknown whatever its links claim. */
	p = npf_pair_reduce(false, &gone, true, NPF_OUT_OK, NPF_OUT_OK);
	assert_int_equal(p.state, NPF_PAIR_UNKNOWN);
	assert_int_equal(p.outcome, NPF_OUT_PEER_UNAVAILABLE);
	/* Outside a sparse plan: not evidence; in a full mesh there is no outside. */
	assert_int_equal(npf_pair_reduce(true, &never, false, 0, 0).state, NPF_PAIR_OUTSIDE);
	assert_int_equal(npf_pair_reduce(false, &never, false, 0, 0).state, NPF_PAIR_UNKNOWN);
	assert_int_equal(
	    npf_pair_reduce(true, &unplanned, true, NPF_OUT_NOT_PROBED, NPF_OUT_NOT_PROBED).state,
	    NPF_PAIR_OUTSIDE);
	assert_int_equal(
	    npf_pair_reduce(true, &unplanned, true, NPF_OUT_WRONG_PEER, NPF_OUT_NOT_PROBED).state,
	    NPF_PAIR_FAIL);
	assert_string_equal(npf_pair_state_name(NPF_PAIR_UNKNOWN), "unknown");
}

/* Every (fwd, rev) mix on every link of a 5-node check, sparse and full: the verdict's
 * "works" and the decision's ok verdict on that one interface say the same thing. */
static void verdict_and_decision_agree(void **state)
{
	(void)state;

	for (int fo = 0; fo < NPF_OUT__COUNT; fo++)
		for (int ro = 0; ro < NPF_OUT__COUNT; ro++)
			for (int sparse = 0; sparse < 2; sparse++) {
				struct npf_check chk;
				struct npf_inventory inv;
				struct npf_verdict_report rep;
				struct npf_recommendation rec;

				assert_int_equal(sparse_check_build(5, 64, &chk, &inv, NULL), 0);
				chk.sparse = sparse;
				for (size_t l = 0; l < chk.n_links; l++)
					if (chk.links[l].peer == 2) {
						chk.links[l].fwd = (enum npf_outcome)fo;
						chk.links[l].rev = (enum npf_outcome)ro;
					}
				assert_int_equal(npf_verdict_compute(&chk, &rep), 0);
				assert_int_equal(npf_recommend(&inv, &chk, NULL, &rec), 0);
				assert_int_equal(rep.n_ifaces, 1);
				if (rep.ifaces[0].works != (rec.verdict == NPF_VERDICT_OK))
					fail_msg("fwd %s rev %s sparse %d: verdict works=%d, "
						 "decision %s",
						 npf_outcome_name(fo), npf_outcome_name(ro), sparse,
						 rep.ifaces[0].works,
						 npf_verdict_name(rec.verdict));
				if (rep.ifaces[0].fail_peer >= 0)
					assert_int_equal(rec.verdict, NPF_VERDICT_FAIL);
				npf_recommendation_clear(&rec);
				npf_verdict_report_clear(&rep);
				npf_check_clear(&chk);
				npf_inventory_clear(&inv);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(rows),
	    cmocka_unit_test(verdict_and_decision_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
