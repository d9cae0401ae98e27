// SPDX-License-Identifier: MIT
/* Per-interface evidence (lib/verdict.c) of sparse checks: peers outside the plan are not
 * this node's evidence. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <stdbool.h>
#include <string.h>

#include "sparse_check.h"
#include "verdict.h"

static void sparse_check_works(void **state)
{
	struct npf_verdict_report r;
	struct npf_check chk;
	size_t n_plan = 0;
	(void)state;

	assert_int_equal(sparse_check_build(128, 64, &chk, NULL, &n_plan), 0);
	assert_true(chk.sparse);
	assert_int_equal(npf_verdict_compute(&chk, &r), 0);
	assert_int_equal(r.n_peers, 127);
	assert_int_equal(r.n_unavailable, 0);
	assert_int_equal(r.n_ifaces, 1);
	assert_string_equal(r.ifaces[0].ifname, "ens1f0");
	assert_true(r.ifaces[0].works);
	assert_false(r.ifaces[0].unproven);
	assert_int_equal(r.ifaces[0].n_ok, n_plan);
	assert_int_equal(r.ifaces[0].fail_peer, -1);
	npf_verdict_report_clear(&r);

	/* A planned peer that did not answer is unavailable, as ever. */
	for (size_t k = 1; k < chk.n_nodes; k++)
		if (chk.nodes[k].probed) {
			chk.nodes[k].available = false;
			break;
		}
	assert_int_equal(npf_verdict_compute(&chk, &r), 0);
	assert_int_equal(r.n_unavailable, 1);
	assert_false(r.ifaces[0].works);
	assert_true(r.ifaces[0].unproven);
	npf_verdict_report_clear(&r);

	/* In a full mesh every silent peer counts. */
	chk.sparse = false;
	assert_int_equal(npf_verdict_compute(&chk, &r), 0);
	assert_int_equal(r.n_unavailable, 127 - n_plan + 1);
	assert_false(r.ifaces[0].works);
	npf_verdict_report_clear(&r);
	npf_check_clear(&chk);
}

/* At or below full_mesh_max there is no plan to be outside of. */
static void full_mesh_unchanged(void **state)
{
	struct npf_verdict_report r;
	struct npf_check chk;
	size_t n_plan = 0;
	(void)state;

	assert_int_equal(sparse_check_build(16, 64, &chk, NULL, &n_plan), 0);
	assert_false(chk.sparse);
	assert_int_equal(n_plan, 15);
	assert_int_equal(npf_verdict_compute(&chk, &r), 0);
	assert_true(r.ifaces[0].works);
	assert_int_equal(r.ifaces[0].n_ok, 15);
	npf_verdict_report_clear(&r);
	npf_check_clear(&chk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sparse_check_works),
		cmocka_unit_test(full_mesh_unchanged),
	};

	return npf_run_tests(tests, NULL, NULL);
}
