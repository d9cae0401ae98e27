// SPDX-License-Identifier: MIT
/* NCCL_SOCKET_IFNAME / NCCL_IB_HCA grammar: prefix traps, exact and exclusion lists, ports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ncclmatch.h"

struct if_case {
	const char *value;
	const char *ifname;
	bool match;
};

static void socket_table(void **state)
{
	static const struct if_case cases[] = {
		/* prefix matching, the classic traps (nccl.md §1.4) */
		{ "eth1", "eth1", true },
		{ "eth1", "eth10", true },
		{ "eth1", "eth1.100", true },
		{ "eth0", "eth0.100", true },
		{ "bond0", "bond0.2973.1", true },
		{ "ib", "ibp12s0", true },
		{ "ib", "ib0.8001", true },
		{ "eth1", "eth", false },
		/* exact */
		{ "=eth1", "eth1", true },
		{ "=eth1", "eth10", false },
		{ "=eth0", "eth0.100", false },
		{ "=eth0", "eth0", true },
		{ "=ens1f0,eth2", "eth2", true },
		{ "=ens1f0,eth2", "ens1f0", true },
		{ "=ens1f0,eth2", "ens1f0np0", false },
		{ "=ens1f0,eth2", "eth20", false },
		/* exclusion */
		{ "^docker,lo", "docker0", false },
		{ "^docker,lo", "lo", false },
		{ "^docker,lo", "eth0", true },
		{ "^docker,lo", "br-5c2f8e1a9b07", true },
		{ "^docker,lo,virbr", "virbr0", false },
		{ "^=docker0", "docker0", false },
		{ "^=docker0", "docker1", true },
		{ "^docker0", "lo", true }, /* the horovod#700 trap */
		/* '^' must come first: "=^x" is an exact match on the literal "^x" */
		{ "=^x", "^x", true },
		{ "=^x", "x", false },
		/* ports are parsed but ignored for sockets */
		{ "eth0:5", "eth0", true },
		{ "=eth0:5,eth1", "eth1", true },
		/* values of length <= 1 are ignored: auto-selection, i.e. no filter */
		{ "^", "eth0", true },
		{ "=", "eth0", true },
		{ "", "docker0", true },
		/* empty tokens are skipped */
		{ ",,eth0", "eth0", true },
		{ ",=eth0", "eth0", false }, /* '=' only counts at the start */
		{ "eth0,,", "eth1", false },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ncclmatch_list l;
		bool got;

		assert_int_equal(ncclmatch_parse(cases[i].value, NCCLMATCH_SOCKET, &l), 0);
		got = ncclmatch_ifname(&l, cases[i].ifname);
		if (got != cases[i].match)
			fail_msg("'%s' vs %s: got %d want %d", cases[i].value, cases[i].ifname, got,
				 cases[i].match);
	}
}

static void socket_parse_details(void **state)
{
	struct ncclmatch_list l;
	(void)state;

	assert_int_equal(ncclmatch_parse("^=eth0:3,eth1", NCCLMATCH_SOCKET, &l), 0);
	assert_true(l.negate);
	assert_true(l.exact);
	assert_false(l.ignored);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.e[0].name, "eth0");
	assert_int_equal(l.e[0].port, 3);
	assert_string_equal(l.e[1].name, "eth1");
	assert_int_equal(l.e[1].port, -1);

	assert_int_equal(ncclmatch_parse("x", NCCLMATCH_SOCKET, &l), 0);
	assert_true(l.ignored);
	assert_int_equal(ncclmatch_parse("^=", NCCLMATCH_SOCKET, &l), 0);
	assert_false(l.ignored);
	assert_int_equal(l.n, 0);
	assert_true(ncclmatch_ifname(&l, "eth0") == false); /* empty list matches all, negated */

	assert_int_equal(ncclmatch_parse(NULL, NCCLMATCH_SOCKET, &l), -EINVAL);
	assert_int_equal(ncclmatch_parse("eth0", NCCLMATCH_SOCKET, NULL), -EINVAL);
	assert_false(ncclmatch_ifname(NULL, "eth0"));
}

static void socket_token_cap(void **state)
{
	char value[512] = "=";
	struct ncclmatch_list l;
	char name[16];
	(void)state;

	/* MAX_IFS = 16: the 17th name is dropped, so it is not selected. */
	for (int i = 0; i < 17; i++) {
		snprintf(name, sizeof(name), "%seth%d", i ? "," : "", i);
		strcat(value, name);
	}
	assert_int_equal(ncclmatch_parse(value, NCCLMATCH_SOCKET, &l), 0);
	assert_int_equal(l.n, 16);
	assert_int_equal(l.dropped, 1);
	assert_true(ncclmatch_ifname(&l, "eth15"));
	assert_false(ncclmatch_ifname(&l, "eth16"));

	/* IB keeps 32. */
	assert_int_equal(ncclmatch_parse(value, NCCLMATCH_IB, &l), 0);
	assert_int_equal(l.n, 17);
	assert_int_equal(l.dropped, 0);
}

static void token_length(void **state)
{
	char value[80];
	struct ncclmatch_list l;
	(void)state;

	/* char prefix[64]: 63 characters fit, 64 would overflow NCCL's buffer. */
	memset(value, 'a', 63);
	value[63] = '\0';
	assert_int_equal(ncclmatch_parse(value, NCCLMATCH_SOCKET, &l), 0);
	assert_true(ncclmatch_ifname(&l, value));
	memset(value, 'a', 64);
	value[64] = '\0';
	assert_int_equal(ncclmatch_parse(value, NCCLMATCH_SOCKET, &l), -ENAMETOOLONG);
	assert_int_equal(ncclmatch_parse(value, NCCLMATCH_IB, &l), -ENAMETOOLONG);
}

struct hca_case {
	const char *value;
	const char *dev;
	int port;
	bool match;
};

static void hca_table(void **state)
{
	static const struct hca_case cases[] = {
		{ "mlx5_1", "mlx5_1", 1, true },
		{ "mlx5_1", "mlx5_10", 1, true }, /* the documented trap */
		{ "mlx5_1", "mlx5_19", 2, true },
		{ "=mlx5_1", "mlx5_10", 1, false },
		{ "=mlx5_1", "mlx5_1", 2, true },
		{ "=mlx5_0:1", "mlx5_0", 1, true },
		{ "=mlx5_0:1", "mlx5_0", 2, false },
		{ "mlx5_0", "mlx5_0", 2, true },
		{ "mlx5", "mlx5_bond_0", 1, true },
		{ "^mlx5_1", "mlx5_10", 1, false },
		{ "^=mlx5_1", "mlx5_10", 1, true },
		{ "^=mlx5_0:1", "mlx5_0", 1, false },
		{ "^=mlx5_0:1", "mlx5_0", 2, true },
		{ "=mlx5_0:1,mlx5_3:1", "mlx5_3", 1, true },
		{ "=mlx5_0:1,mlx5_3:1", "mlx5_2", 1, false },
		{ "=mlx5_0:1:0:0", "mlx5_0", 1, true }, /* 2.30.7 rail/plane fields */
		{ "=mlx5_0:1:0:0", "mlx5_0", 2, false },
		/* no length rule for IB: "^" is an empty exclusion, which excludes all */
		{ "^", "mlx5_0", 1, false },
		{ "", "mlx5_0", 1, true },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ncclmatch_list l;
		bool got;

		assert_int_equal(ncclmatch_parse(cases[i].value, NCCLMATCH_IB, &l), 0);
		got = ncclmatch_hca(&l, cases[i].dev, cases[i].port);
		if (got != cases[i].match)
			fail_msg("'%s' vs %s:%d: got %d want %d", cases[i].value, cases[i].dev,
				 cases[i].port, got, cases[i].match);
	}
}

static void select_helper(void **state)
{
	const char *names[] = { "lo", "eth0", "eth0.100", "eth1", "eth10", "docker0" };
	bool sel[6];
	struct ncclmatch_list l;
	(void)state;

	assert_int_equal(ncclmatch_parse("eth1", NCCLMATCH_SOCKET, &l), 0);
	assert_int_equal(ncclmatch_select(&l, names, 6, sel), 2);
	assert_true(sel[3] && sel[4]);
	assert_int_equal(ncclmatch_parse("=eth1", NCCLMATCH_SOCKET, &l), 0);
	assert_int_equal(ncclmatch_select(&l, names, 6, sel), 1);
	assert_true(sel[3]);
	assert_int_equal(ncclmatch_parse("eth0", NCCLMATCH_SOCKET, &l), 0);
	assert_int_equal(ncclmatch_select(&l, names, 6, sel), 2);
	assert_int_equal(ncclmatch_parse("^docker,lo", NCCLMATCH_SOCKET, &l), 0);
	assert_int_equal(ncclmatch_select(&l, names, 6, sel), 4);
	assert_false(sel[0] || sel[5]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(socket_table),     cmocka_unit_test(socket_parse_details),
		cmocka_unit_test(socket_token_cap), cmocka_unit_test(token_length),
		cmocka_unit_test(hca_table),        cmocka_unit_test(select_helper),
	};

	return npf_run_tests(tests, NULL, NULL);
}
