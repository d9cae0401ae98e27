// SPDX-License-Identifier: MIT
/* Tests for npf_rdma_collect: verbs path through the fake backend, sysfs fallback, no-RDMA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fake_verbs.h"
#include "gid.h"
#include "model.h"
#include "rdma.h"
#include "rdma_sysfs.h"

#define FE80 "fe80::e42:a1ff:fe65:8a60"

/* mlx5_0: the usual layout, returned out of order, plus junk the collector
 * must drop (a zero GID, an entry for a port the device does not have). */
static const struct fake_gid hca0_gids[] = {
	{ 1, 3, "::ffff:198.18.4.1", NPF_GID_ROCE_V2, "ens1f0np0" },
	{ 1, 0, FE80, NPF_GID_IB_ROCE_V1, "ens1f0np0" },
	{ 1, 2, "::ffff:198.18.4.1", NPF_GID_IB_ROCE_V1, "ens1f0np0" },
	{ 1, 1, FE80, NPF_GID_ROCE_V2, "ens1f0np0" },
	{ 1, 5, "::", NPF_GID_ROCE_V2, "ens1f0np0" },
	{ 2, 0, FE80, NPF_GID_IB_ROCE_V1, "ens1f0np0" },
};

/* mlx5_1: a table with gaps (2, 3 unpopulated), so the best index is 5. */
static const struct fake_gid hca1_gids[] = {
	{ 1, 0, "fe80::e42:a1ff:fe65:8a61", NPF_GID_IB_ROCE_V1, "ens1f1np1" },
	{ 1, 1, "fe80::e42:a1ff:fe65:8a61", NPF_GID_ROCE_V2, "ens1f1np1" },
	{ 1, 4, "::ffff:198.18.5.1", NPF_GID_IB_ROCE_V1, "ens1f1np1" },
	{ 1, 5, "::ffff:198.18.5.1", NPF_GID_ROCE_V2, "ens1f1np1" },
};

#define ROCE_PORT(tbl)                                                                             \
	{ NPF_PORT_ACTIVE, 5, NPF_LL_ETHERNET, RDMA_SPEED_EDR, RDMA_WIDTH_4X, 4096, tbl }

static struct fake_dev dev(const char *name, const struct fake_gid *gids, size_t n, int tbl)
{
	struct fake_dev d = {
		.name = name,
		.node_guid = 0x0c42a10300658a60ull,
		.nports = 1,
		.ports = { ROCE_PORT(tbl) },
		.gids = gids,
		.n_gids = n,
	};
	return d;
}

static void fixture(const char *name, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%s/sysfs/%s", NPF_FIXTURES, name);
}

static void two_hcas_through_verbs(void **state)
{
	struct fake_dev devs[2] = { dev("mlx5_0", hca0_gids, 6, 8), dev("mlx5_1", hca1_gids, 4, 6) };
	struct fake_counters cnt = { 0 };
	struct npf_inventory inv = { 0 };
	struct fake_verbs fv;
	struct rdma_collect_opts opts = { .ops = &fv.ops, .fallback_root = "/nonexistent" };
	const struct npf_rdma_port *p;
	(void)state;

	fake_verbs_init(&fv, devs, 2, &cnt);
	assert_int_equal(npf_rdma_collect(&inv, &opts), 2);
	assert_int_equal(cnt.opens, 2);
	assert_int_equal(cnt.closes, 2);
	assert_int_equal(inv.n_rdma, 2);
	assert_string_equal(inv.rdma[0].name, "mlx5_0");
	assert_true(inv.rdma[0].node_guid == 0x0c42a10300658a60ull);
	assert_string_equal(inv.rdma[0].node_type, "CA");
	p = &inv.rdma[0].ports[0];
	assert_int_equal(p->port, 1);
	assert_int_equal(p->state, NPF_PORT_ACTIVE);
	assert_int_equal(p->active_mtu, 4096);
	assert_int_equal(p->gid_tbl_len, 8);
	/* Rate text in the kernel's format, so both paths print alike. */
	assert_string_equal(p->rate, "100 Gb/sec (4X EDR)");
	/* Sorted by index; the zero GID and the port-2 entry are gone. */
	assert_int_equal(p->n_gids, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(p->gids[i].index, i);
	assert_true(p->gids[3].is_ipv4);
	assert_string_equal(p->gids[3].ndev, "ens1f0np0");
	/* Prediction ran: the HCAs need different indices. */
	assert_int_equal(p->nccl_auto_gid, 3);
	assert_int_equal(inv.rdma[1].ports[0].nccl_auto_gid, 5);
	assert_int_equal(inv.rdma[1].ports[0].nccl_legacy_gid, 0);
	assert_true(inv.rdma[1].ports[0].gid_warn & NPF_GIDW_LEGACY_LINK_LOCAL);
	assert_string_equal(inv.rdma_note, "");
	npf_inventory_clear(&inv);
}

static void open_failure_falls_back_to_sysfs(void **state)
{
	struct fake_dev devs[2] = { dev("mlx5_0", hca0_gids, 6, 8), dev("mlx5_1", hca1_gids, 4, 6) };
	struct fake_counters cnt = { 0 };
	struct npf_inventory inv = { 0 };
	struct fake_verbs fv;
	char root[512];
	struct rdma_collect_opts opts = { .ops = &fv.ops, .fallback_root = root };
	(void)state;

	fixture("two-hcas", root, sizeof(root));
	devs[1].open_err = -EACCES;
	fake_verbs_init(&fv, devs, 2, &cnt);
	assert_int_equal(npf_rdma_collect(&inv, &opts), 2);
	assert_int_equal(cnt.opens, 1);
	assert_int_equal(cnt.closes, 1);
	/* mlx5_1 came from the sysfs tree: its rate text and guid are sysfs'. */
	assert_string_equal(inv.rdma[1].name, "mlx5_1");
	assert_true(inv.rdma[1].node_guid == 0x0c42a10300658a61ull);
	assert_int_equal(inv.rdma[1].ports[0].gid_tbl_len, 6);
	assert_int_equal(inv.rdma[1].ports[0].nccl_auto_gid, 5);
	assert_int_equal(inv.rdma[1].ports[0].active_mtu, 0); /* sysfs does not say */
	npf_inventory_clear(&inv);
}

static void query_failures_fall_back(void **state)
{
	struct fake_dev devs[3] = { dev("mlx5_0", hca0_gids, 6, 8), dev("mlx5_1", hca1_gids, 4, 6),
				    dev("mlx5_2", hca1_gids, 4, 6) };
	struct fake_counters cnt = { 0 };
	struct npf_inventory inv = { 0 };
	struct fake_verbs fv;
	char root[512];
	struct rdma_collect_opts opts = { .ops = &fv.ops, .fallback_root = root };
	(void)state;

	fixture("two-hcas", root, sizeof(root));
	devs[0].query_gids_err = -EINVAL;
	devs[1].query_port_err = -EIO;
	devs[2].query_device_err = -EOPNOTSUPP; /* and not in the sysfs tree */
	fake_verbs_init(&fv, devs, 3, &cnt);
	assert_int_equal(npf_rdma_collect(&inv, &opts), 2);
	/* Every successful open was closed, whatever failed after it. */
	assert_int_equal(cnt.opens, 3);
	assert_int_equal(cnt.closes, 3);
	assert_int_equal(inv.n_rdma, 2);
	assert_string_equal(inv.rdma[0].name, "mlx5_0");
	assert_int_equal(inv.rdma[0].ports[0].nccl_auto_gid, 3);
	assert_string_equal(inv.rdma[1].name, "mlx5_1");
	assert_int_equal(inv.rdma[1].ports[0].nccl_auto_gid, 5);
	/* The device neither path could read is named in the note. */
	assert_non_null(strstr(inv.rdma_note, "mlx5_2 skipped"));
	npf_inventory_clear(&inv);
}

static void no_devices(void **state)
{
	struct fake_counters cnt = { 0 };
	struct npf_inventory inv = { 0 };
	struct fake_verbs fv;
	char root[512];
	struct rdma_collect_opts opts = { .ops = &fv.ops, .fallback_root = root };
	(void)state;

	/* Nothing from verbs and no class/infiniband: empty, noted, success. */
	snprintf(root, sizeof(root), "%s/sysfs", NPF_FIXTURES);
	fake_verbs_init(&fv, NULL, 0, &cnt);
	assert_int_equal(npf_rdma_collect(&inv, &opts), 0);
	assert_int_equal(inv.n_rdma, 0);
	assert_string_equal(inv.rdma_note,
			    "no RDMA devices: libibverbs found none (no /sys/class/infiniband)");
	npf_inventory_clear(&inv);

	/* Nothing from verbs although sysfs lists devices: still empty (NCCL
	 * cannot use them either), but the note says why. */
	fixture("two-hcas", root, sizeof(root));
	assert_int_equal(npf_rdma_collect(&inv, &opts), 0);
	assert_int_equal(inv.n_rdma, 0);
	assert_non_null(strstr(inv.rdma_note, "sysfs lists 2"));
	npf_inventory_clear(&inv);
}

static void list_error_is_returned(void **state)
{
	struct npf_inventory inv = { 0 };
	struct fake_verbs fv;
	struct rdma_collect_opts opts = { .ops = &fv.ops };
	(void)state;

	fake_verbs_init(&fv, NULL, 0, NULL);
	fv.list_err = -EPERM;
	assert_int_equal(npf_rdma_collect(&inv, &opts), -EPERM);
	assert_int_equal(inv.n_rdma, 0);
	assert_null(inv.rdma);
}

static void captured_tree_skips_verbs(void **state)
{
	struct fake_counters cnt = { 0 };
	struct npf_inventory inv = { 0 };
	struct fake_verbs fv;
	char root[512];
	struct rdma_collect_opts opts = { .sysfs_root = root, .ops = &fv.ops };
	(void)state;

	fixture("container-gaps", root, sizeof(root));
	fake_verbs_init(&fv, NULL, 0, &cnt);
	assert_int_equal(npf_rdma_collect(&inv, &opts), 1);
	assert_int_equal(cnt.lists, 0);
	assert_int_equal(inv.rdma[0].ports[0].nccl_auto_gid, 7);
	npf_inventory_clear(&inv);

	/* "/sys" is the live system: verbs is asked. */
	opts.sysfs_root = "/sys";
	opts.fallback_root = root;
	assert_int_equal(npf_rdma_collect(&inv, &opts), 0);
	assert_int_equal(cnt.lists, 1);
	npf_inventory_clear(&inv);

	/* A captured root that does not exist is an error. */
	opts.sysfs_root = "/nonexistent/npf";
	assert_int_equal(npf_rdma_collect(&inv, &opts), -ENOENT);
}

static void ib_port_through_verbs(void **state)
{
	static const struct fake_gid gids[] = {
		{ 1, 0, "fe80::b83f:d203:a1:1", NPF_GID_IB_ROCE_V1, NULL },
		{ 1, 1, "fec0:0:7:1:b83f:d203:a1:1", NPF_GID_IB_ROCE_V1, NULL },
	};
	struct fake_dev d = {
		.name = "mlx5_4",
		.nports = 1,
		.ports = { { NPF_PORT_ACTIVE, 5, NPF_LL_INFINIBAND, RDMA_SPEED_NDR, RDMA_WIDTH_4X,
			     4096, 128 } },
		.gids = gids,
		.n_gids = 2,
	};
	struct npf_inventory inv = { 0 };
	struct fake_verbs fv;
	struct rdma_collect_opts opts = { .ops = &fv.ops };
	(void)state;

	fake_verbs_init(&fv, &d, 1, NULL);
	assert_int_equal(npf_rdma_collect(&inv, &opts), 1);
	assert_string_equal(inv.rdma[0].ports[0].rate, "400 Gb/sec (4X NDR)");
	assert_int_equal(inv.rdma[0].ports[0].nccl_auto_gid, 1);
	assert_int_equal(inv.rdma[0].ports[0].nccl_legacy_gid, -1);
	assert_string_equal(inv.rdma[0].ports[0].gids[0].ndev, "");
	npf_inventory_clear(&inv);
}

static void real_verbs_degrades(void **state)
{
	struct npf_inventory inv = { 0 };
	int n;
	(void)state;

	/* On a machine without RDMA this is the empty list plus a note; on one
	 * with RDMA it must still succeed. */
	n = npf_rdma_collect(&inv, NULL);
	assert_true(n >= 0);
	assert_int_equal((size_t)n, inv.n_rdma);
	if (n == 0)
		assert_non_null(strstr(inv.rdma_note, "no RDMA devices"));
	npf_inventory_clear(&inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_hcas_through_verbs),
		cmocka_unit_test(open_failure_falls_back_to_sysfs),
		cmocka_unit_test(query_failures_fall_back),
		cmocka_unit_test(no_devices),
		cmocka_unit_test(list_error_is_returned),
		cmocka_unit_test(captured_tree_skips_verbs),
		cmocka_unit_test(ib_port_through_verbs),
		cmocka_unit_test(real_verbs_degrades),
	};
	return npf_run_tests(tests, NULL, NULL);
}
