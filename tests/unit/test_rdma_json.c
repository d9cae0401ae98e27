// SPDX-License-Identifier: MIT
/* Tests for the RDMA JSON view (the netpreflight rdma --json contract). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gid.h"
#include "model.h"
#include "rdma_join.h"
#include "rdma_json.h"
#include "rdma_sysfs.h"

static json_t *view(const char *name, struct npf_inventory *inv)
{
	char root[512];
	json_t *j;

	memset(inv, 0, sizeof(*inv));
	snprintf(root, sizeof(root), "%s/sysfs/%s", NPF_FIXTURES, name);
	assert_true(rdma_sysfs_read(root, inv) >= 0);
	gid_predict_inventory(inv);
	rdma_join_netdevs(inv);
	j = npf_rdma_to_json(inv);
	assert_non_null(j);
	return j;
}


static void roce_port(void **state)
{
	struct npf_inventory inv;
	json_t *j = view("mlx5-roce", &inv), *port, *gids, *g0, *g3, *warn;
	(void)state;

	assert_true(json_is_null(json_object_get(j, "note")));
	port = json_array_get(json_object_get(json_array_get(json_object_get(j, "devices"), 0),
					      "ports"),
			      0);
	assert_non_null(port);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(j, "devices"), 0), "node_guid")),
			    "0c42:a103:0065:8a2e");
	assert_string_equal(json_string_value(json_object_get(port, "state")), "ACTIVE");
	assert_string_equal(json_string_value(json_object_get(port, "phys_state")), "LinkUp");
	assert_int_equal(json_integer_value(json_object_get(port, "phys_state_num")), 5);
	assert_string_equal(json_string_value(json_object_get(port, "link_layer")), "Ethernet");
	assert_string_equal(json_string_value(json_object_get(port, "active_speed")), "EDR");
	assert_string_equal(json_string_value(json_object_get(port, "active_width")), "4X");
	assert_true(json_is_null(json_object_get(port, "active_mtu")));
	assert_string_equal(json_string_value(json_object_get(port, "netdev")), "enp65s0f0np0");
	assert_int_equal(json_integer_value(json_object_get(port, "gid_tbl_len")), 8);
	assert_int_equal(json_integer_value(json_object_get(port, "nccl_auto_gid")), 3);
	assert_int_equal(json_integer_value(json_object_get(port, "nccl_legacy_gid")), 0);
	warn = json_object_get(port, "warnings");
	assert_int_equal(json_array_size(warn), 2);
	assert_string_equal(json_string_value(json_array_get(warn, 0)), "legacy-link-local");
	assert_string_equal(json_string_value(json_array_get(warn, 1)), "legacy-roce-v1");
	gids = json_object_get(port, "gids");
	assert_int_equal(json_array_size(gids), 4);
	g0 = json_array_get(gids, 0);
	g3 = json_array_get(gids, 3);
	assert_string_equal(json_string_value(json_object_get(g0, "gid")),
			    "fe80:0000:0000:0000:0e42:a1ff:fe65:8a2e");
	assert_string_equal(json_string_value(json_object_get(g0, "type")), "IB/RoCE v1");
	assert_int_equal(json_integer_value(json_object_get(g0, "roce_version")), 1);
	assert_true(json_is_null(json_object_get(g0, "ipv4")));
	assert_true(json_is_true(json_object_get(g0, "nccl_legacy")));
	assert_true(json_is_false(json_object_get(g0, "nccl_auto")));
	assert_int_equal(json_integer_value(json_object_get(g3, "index")), 3);
	assert_string_equal(json_string_value(json_object_get(g3, "ipv4")), "198.18.0.11");
	assert_int_equal(json_integer_value(json_object_get(g3, "roce_version")), 2);
	assert_string_equal(json_string_value(json_object_get(g3, "ndev")), "enp65s0f0np0");
	assert_true(json_is_true(json_object_get(g3, "nccl_auto")));
	json_decref(j);
	npf_inventory_clear(&inv);
}

static void ib_port_nulls(void **state)
{
	struct npf_inventory inv;
	json_t *j = view("ib", &inv), *port, *g0;
	(void)state;

	port = json_array_get(json_object_get(json_array_get(json_object_get(j, "devices"), 1),
					      "ports"),
			      0);
	assert_string_equal(json_string_value(json_object_get(port, "state")), "INIT");
	assert_true(json_is_null(json_object_get(port, "netdev")));
	assert_int_equal(json_integer_value(json_object_get(port, "nccl_auto_gid")), 0);
	assert_true(json_is_null(json_object_get(port, "nccl_legacy_gid")));
	assert_int_equal(json_array_size(json_object_get(port, "warnings")), 0);
	g0 = json_array_get(json_object_get(port, "gids"), 0);
	/* IB GIDs have no RoCE version and no netdev. */
	assert_true(json_is_null(json_object_get(g0, "roce_version")));
	assert_true(json_is_null(json_object_get(g0, "ndev")));
	json_decref(j);
	npf_inventory_clear(&inv);
}

static void empty_inventory(void **state)
{
	struct npf_inventory inv = { 0 };
	json_t *j;
	char *s;
	(void)state;

	snprintf(inv.rdma_note, sizeof(inv.rdma_note), "no RDMA devices: test");
	j = npf_rdma_to_json(&inv);
	assert_non_null(j);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"devices\":[],\"note\":\"no RDMA devices: test\"}");
	free(s);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roce_port),
		cmocka_unit_test(ib_port_nulls),
		cmocka_unit_test(empty_inventory),
	};
	return npf_run_tests(tests, NULL, NULL);
}
