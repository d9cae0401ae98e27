// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model.h"

static void outcome_names_round_trip(void **state)
{
	(void)state;
	for (int i = 0; i < NPF_OUT__COUNT; i++)
		assert_int_equal(npf_outcome_parse(npf_outcome_name(i)), i);
	assert_int_equal(npf_outcome_parse("bogus"), -EINVAL);
	assert_int_equal(npf_outcome_parse(NULL), -EINVAL);
	assert_string_equal(npf_outcome_name(NPF_OUT__COUNT), "unknown");
}

/* Every verdict name parses back; only ok and degraded publish. */
static void verdict_names_round_trip(void **state)
{
	(void)state;
	for (int v = 0; v < NPF_VERDICT__COUNT; v++) {
		const char *name = npf_verdict_name((enum npf_verdict)v);

		assert_int_equal(npf_verdict_parse(name), v);
		assert_int_equal(npf_verdict_name_publishes(name),
				 v == NPF_VERDICT_OK || v == NPF_VERDICT_DEGRADED);
		assert_int_equal(npf_verdict_publishes((enum npf_verdict)v),
				 v == NPF_VERDICT_OK || v == NPF_VERDICT_DEGRADED);
	}
	assert_string_equal(npf_verdict_name(NPF_VERDICT_DEGRADED), "degraded");
	assert_int_equal(npf_verdict_parse("OK"), -EINVAL);
	assert_int_equal(npf_verdict_parse(""), -EINVAL);
	assert_int_equal(npf_verdict_parse(NULL), -EINVAL);
	assert_false(npf_verdict_name_publishes(NULL));
	assert_false(npf_verdict_name_publishes("suspect"));
}

static void local_only_addresses(void **state)
{
	struct npf_addr a = { .family = AF_INET };
	(void)state;

	inet_pton(AF_INET, "169.254.3.1", a.addr);
	assert_true(npf_addr_is_local_only(&a));
	inet_pton(AF_INET, "127.0.0.1", a.addr);
	assert_true(npf_addr_is_local_only(&a));
	inet_pton(AF_INET, "198.18.1.1", a.addr);
	assert_false(npf_addr_is_local_only(&a));
	a.family = AF_INET6;
	inet_pton(AF_INET6, "fe80::1", a.addr);
	assert_true(npf_addr_is_local_only(&a));
	inet_pton(AF_INET6, "::1", a.addr);
	assert_true(npf_addr_is_local_only(&a));
	inet_pton(AF_INET6, "2001:db8::1", a.addr);
	assert_false(npf_addr_is_local_only(&a));
}

static void inventory_ownership(void **state)
{
	struct npf_inventory inv = { 0 };
	struct npf_addr a = { .family = AF_INET, .prefixlen = 24 };
	char buf[64];
	(void)state;

	inv.ifaces = calloc(2, sizeof(*inv.ifaces));
	inv.n_ifaces = 2;
	strcpy(inv.ifaces[0].name, "lo");
	inv.ifaces[0].ifindex = 1;
	strcpy(inv.ifaces[1].name, "eth0");
	inv.ifaces[1].ifindex = 2;
	inet_pton(AF_INET, "198.18.0.1", a.addr);
	assert_int_equal(npf_iface_add_addr(&inv.ifaces[1], &a), 0);
	assert_int_equal(npf_iface_add_addr(&inv.ifaces[1], &a), 0);
	assert_int_equal(inv.ifaces[1].n_addrs, 2);
	assert_ptr_equal(npf_inventory_find_name(&inv, "eth0"), &inv.ifaces[1]);
	assert_ptr_equal(npf_inventory_find_ifindex(&inv, 1), &inv.ifaces[0]);
	assert_null(npf_inventory_find_name(&inv, "eth1"));
	assert_string_equal(npf_addr_str(&inv.ifaces[1].addrs[0], buf, sizeof(buf)), "198.18.0.1");
	npf_inventory_clear(&inv);
	assert_null(inv.ifaces);
	npf_inventory_clear(&inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(outcome_names_round_trip),
		cmocka_unit_test(verdict_names_round_trip),
		cmocka_unit_test(local_only_addresses),
		cmocka_unit_test(inventory_ownership),
	};
	return npf_run_tests(tests, NULL, NULL);
}
