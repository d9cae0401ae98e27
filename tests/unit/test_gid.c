// SPDX-License-Identifier: MIT
/* Tests for the NCCL GID index prediction (ncclIbGetGidIndex model) and its warnings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "gid.h"
#include "model.h"
#include "rdma_sysfs.h"

#define V1 NPF_GID_IB_ROCE_V1
#define V2 NPF_GID_ROCE_V2

/* A hand-built RoCE port with room for a small table. */
struct tport {
	struct npf_rdma_port p;
	struct npf_gid g[16];
};

static void tport_init(struct tport *t, enum npf_link_layer ll, int tbl_len)
{
	memset(t, 0, sizeof(*t));
	t->p.port = 1;
	t->p.link_layer = ll;
	t->p.gid_tbl_len = tbl_len;
	t->p.gids = t->g;
}

static void add(struct tport *t, int idx, const char *text, enum npf_gid_type type)
{
	struct npf_gid *g = &t->g[t->p.n_gids++];

	g->index = idx;
	assert_int_equal(inet_pton(AF_INET6, text, g->raw), 1);
	g->type = type;
	gid_fill_ipv4(g);
}

static void mlx5_layout(struct tport *t, int base, const char *v4)
{
	add(t, base + 0, "fe80::e42:a1ff:fe65:8a2e", V1);
	add(t, base + 1, "fe80::e42:a1ff:fe65:8a2e", V2);
	add(t, base + 2, v4, V1);
	add(t, base + 3, v4, V2);
}

static int load(const char *name, struct npf_inventory *inv)
{
	char root[512];

	memset(inv, 0, sizeof(*inv));
	snprintf(root, sizeof(root), "%s/sysfs/%s", NPF_FIXTURES, name);
	return rdma_sysfs_read(root, inv);
}

static void usual_mlx5_layout(void **state)
{
	struct tport t;
	(void)state;

	tport_init(&t, NPF_LL_ETHERNET, 256);
	mlx5_layout(&t, 0, "::ffff:198.18.0.11");
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), 3);
	assert_int_equal(gid_nccl_legacy_index(&t.p), 0);
	/* First IPv4 RoCE v2 wins; a second one does not displace it. */
	add(&t, 9, "::ffff:198.18.0.12", V2);
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), 3);
}

static void family_change_takes_roce_v1(void **state)
{
	struct tport t;
	(void)state;

	/* Only a RoCE v1 IPv4 GID: the family switch takes it regardless of
	 * the wanted RoCE version, and nothing later is v2. */
	tport_init(&t, NPF_LL_ETHERNET, 4);
	add(&t, 0, "fe80::1:2:3:4", V1);
	add(&t, 1, "fe80::1:2:3:4", V2);
	add(&t, 2, "::ffff:198.18.7.1", V1);
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), 2);
	/* NCCL_IB_ROCE_VERSION_NUM=1 on the usual layout stops at the v1 entry. */
	tport_init(&t, NPF_LL_ETHERNET, 4);
	mlx5_layout(&t, 0, "::ffff:198.18.0.11");
	{
		struct gid_policy pol;

		gid_policy_init(&pol);
		assert_int_equal(gid_policy_set_roce_version(&pol, "1"), 0);
		assert_int_equal(gid_nccl_auto_index(&t.p, &pol), 2);
	}
}

static void family_change_takes_empty_slot(void **state)
{
	struct gid_policy pol;
	struct tport t;
	(void)state;

	/* With AF_INET6 wanted and an IPv4 GID at 0, an unpopulated slot (the
	 * zero GID, family AF_INET6) is a "family change" and wins without any
	 * validity check. That is why the table length matters. */
	gid_policy_init(&pol);
	assert_int_equal(gid_policy_set_family(&pol, "AF_INET6"), 0);
	tport_init(&t, NPF_LL_ETHERNET, 2);
	add(&t, 0, "::ffff:198.18.0.1", V2);
	assert_int_equal(gid_nccl_auto_index(&t.p, &pol), 1);
	/* A valid IPv6 RoCE v2 GID after it replaces the empty best. */
	tport_init(&t, NPF_LL_ETHERNET, 3);
	add(&t, 0, "::ffff:198.18.0.1", V2);
	add(&t, 2, "2001:db8::1", V2);
	assert_int_equal(gid_nccl_auto_index(&t.p, &pol), 2);
	/* gid_tbl_len unknown: the highest populated index bounds the scan. */
	tport_init(&t, NPF_LL_ETHERNET, 0);
	add(&t, 0, "::ffff:198.18.0.1", V2);
	assert_int_equal(gid_nccl_auto_index(&t.p, &pol), 0);
}

static void container_gaps(void **state)
{
	struct npf_inventory inv;
	const struct npf_rdma_port *p;
	(void)state;

	assert_int_equal(load("container-gaps", &inv), 1);
	gid_predict_inventory(&inv);
	p = &inv.rdma[0].ports[0];
	assert_int_equal(p->nccl_auto_gid, 7);
	assert_int_equal(p->nccl_legacy_gid, 0);
	/* Index 0 (what a pinned old NCCL uses) is not even populated here. */
	assert_int_equal(p->gid_warn, NPF_GIDW_LEGACY_EMPTY);
	npf_inventory_clear(&inv);
}

static void mlx5_fixture_warnings(void **state)
{
	struct npf_inventory inv;
	const struct npf_rdma_port *p;
	(void)state;

	assert_int_equal(load("mlx5-roce", &inv), 1);
	gid_predict_inventory(&inv);
	p = &inv.rdma[0].ports[0];
	assert_int_equal(p->nccl_auto_gid, 3);
	assert_int_equal(p->gid_warn, NPF_GIDW_LEGACY_LINK_LOCAL | NPF_GIDW_LEGACY_ROCE_V1);
	npf_inventory_clear(&inv);
}

static void ipv6_only(void **state)
{
	struct npf_inventory inv;
	struct npf_rdma_port *p;
	struct gid_policy pol;
	(void)state;

	assert_int_equal(load("ipv6-only", &inv), 1);
	gid_predict_inventory(&inv);
	p = &inv.rdma[0].ports[0];
	/* No IPv4-mapped GID: NCCL stays on 0, link-local RoCE v1, silently. */
	assert_int_equal(p->nccl_auto_gid, 0);
	assert_int_equal(p->gid_warn, NPF_GIDW_AUTO_LINK_LOCAL | NPF_GIDW_AUTO_ROCE_V1 |
					      NPF_GIDW_LEGACY_LINK_LOCAL |
					      NPF_GIDW_LEGACY_ROCE_V1 | NPF_GIDW_NO_IPV4_GID);
	/* NCCL_IB_ADDR_FAMILY=AF_INET6 fixes it. */
	gid_policy_init(&pol);
	assert_int_equal(gid_policy_set_family(&pol, "AF_INET6"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 3);
	/* An IPv6 range, whole words and a partial word. */
	assert_int_equal(gid_policy_set_range(&pol, "2001:db8:1::/48"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 3);
	assert_int_equal(gid_policy_set_range(&pol, "2001:db8::/40"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 3);
	assert_int_equal(gid_policy_set_range(&pol, "2001:db8:100::/40"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 0);
	assert_int_equal(gid_policy_set_range(&pol, "2001:db8:1:ff::/56"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 3);
	assert_int_equal(gid_policy_set_range(&pol, "2001:db9::/32"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 0);
	assert_int_equal(gid_policy_set_range(&pol, "2001:db8::/129"), -EINVAL);
	assert_false(pol.has_range);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 3);
	gid_predict_inventory_policy(&inv, &pol);
	assert_int_equal(p->nccl_auto_gid, 3);
	assert_int_equal(p->gid_warn & (NPF_GIDW_AUTO_LINK_LOCAL | NPF_GIDW_AUTO_ROCE_V1), 0);
	assert_int_equal(p->gid_warn & NPF_GIDW_NO_IPV4_GID, 0);
	npf_inventory_clear(&inv);
}

static void ipv4_range(void **state)
{
	struct npf_inventory inv;
	const struct npf_rdma_port *p;
	struct gid_policy pol;
	(void)state;

	assert_int_equal(load("vlan-netdev", &inv), 1);
	p = &inv.rdma[0].ports[0];
	gid_policy_init(&pol);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 3);
	/* The VLAN's subnet selects the VLAN netdev's GID. */
	assert_int_equal(gid_policy_set_range(&pol, "198.19.100.0/24"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 7);
	assert_int_equal(gid_policy_set_range(&pol, "198.19.100.1/32"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 7);
	assert_int_equal(gid_policy_set_range(&pol, "198.18.0.0/15"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 3);
	/* A subnet nobody is in: NCCL stays on 0. */
	assert_int_equal(gid_policy_set_range(&pol, "10.0.0.0/8"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 0);
	/* NCCL's own parsing quirks: a negative length matches nothing, a
	 * non-number is length 0 (everything), no '/' or a bad address or a
	 * length over 32 is ignored. */
	assert_int_equal(gid_policy_set_range(&pol, "198.19.100.0/-1"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 0);
	assert_int_equal(gid_policy_set_range(&pol, "198.19.100.0/x"), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 3);
	assert_int_equal(gid_policy_set_range(&pol, "198.19.100.0"), -EINVAL);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 3);
	assert_int_equal(gid_policy_set_range(&pol, "198.19.300.0/24"), -EINVAL);
	assert_int_equal(gid_policy_set_range(&pol, "198.19.100.0/33"), -EINVAL);
	assert_false(pol.has_range);
	assert_int_equal(gid_policy_set_range(&pol, NULL), 0);
	assert_int_equal(gid_nccl_auto_index(p, &pol), 3);
	npf_inventory_clear(&inv);
}

static void two_hcas_differ(void **state)
{
	struct npf_inventory inv;
	(void)state;

	assert_int_equal(load("two-hcas", &inv), 2);
	gid_predict_inventory(&inv);
	assert_int_equal(inv.rdma[0].ports[0].nccl_auto_gid, 3);
	assert_int_equal(inv.rdma[1].ports[0].nccl_auto_gid, 5);
	assert_int_equal(inv.rdma[0].ports[0].nccl_legacy_gid, 0);
	assert_int_equal(inv.rdma[1].ports[0].nccl_legacy_gid, 0);
	npf_inventory_clear(&inv);
}

static void ports_down_init(void **state)
{
	struct npf_inventory inv;
	(void)state;

	assert_int_equal(load("ports-down-init", &inv), 1);
	gid_predict_inventory(&inv);
	/* Prediction does not depend on the port state; the state is shown. */
	assert_int_equal(inv.rdma[0].ports[0].nccl_auto_gid, 0);
	assert_true(inv.rdma[0].ports[0].gid_warn & NPF_GIDW_NO_IPV4_GID);
	assert_int_equal(inv.rdma[0].ports[1].nccl_auto_gid, 3);
	assert_false(inv.rdma[0].ports[1].gid_warn & NPF_GIDW_NO_IPV4_GID);
	npf_inventory_clear(&inv);
}

static void infiniband_flid(void **state)
{
	struct npf_inventory inv;
	struct gid_policy pol;
	struct tport t;
	(void)state;

	assert_int_equal(load("ib", &inv), 2);
	gid_predict_inventory(&inv);
	/* mlx5_0 has a non-zero FLID in GID 1; mlx5_1 has no GID 1. */
	assert_int_equal(inv.rdma[0].ports[0].nccl_auto_gid, 1);
	assert_int_equal(inv.rdma[1].ports[0].nccl_auto_gid, 0);
	/* Old NCCL used no GRH on IB: no legacy index, no warnings. */
	assert_int_equal(inv.rdma[0].ports[0].nccl_legacy_gid, -1);
	assert_int_equal(inv.rdma[0].ports[0].gid_warn, 0);
	assert_int_equal(inv.rdma[1].ports[0].gid_warn, 0);
	gid_policy_init(&pol);
	pol.flid_index = 2;
	assert_int_equal(gid_nccl_auto_index(&inv.rdma[0].ports[0], &pol), 0);
	npf_inventory_clear(&inv);

	/* GID 1 present with FLID 0, and a table too short for index 1. */
	tport_init(&t, NPF_LL_INFINIBAND, 4);
	add(&t, 0, "fe80::1", V1);
	add(&t, 1, "fec0:0:0:1::1", V1);
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), 0);
	t.g[1].raw[5] = 1;
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), 1);
	t.p.gid_tbl_len = 1;
	t.p.n_gids = 1;
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), 0);
}

static void unknown_link_layer_and_types(void **state)
{
	struct tport t;
	(void)state;

	tport_init(&t, NPF_LL_UNKNOWN, 4);
	mlx5_layout(&t, 0, "::ffff:198.18.0.1");
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), -1);
	assert_int_equal(gid_nccl_legacy_index(&t.p), -1);

	/* An unreadable type on the candidate never matches the wanted version,
	 * but the family switch still takes it. */
	tport_init(&t, NPF_LL_ETHERNET, 4);
	add(&t, 0, "fe80::1", V1);
	add(&t, 1, "::ffff:198.18.0.1", NPF_GID_TYPE_UNKNOWN);
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), 1);
	add(&t, 2, "::ffff:198.18.0.1", V2);
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), 2);
	/* IPv4-mapped multicast counts as AF_INET, as in getGidAddrFamily. */
	tport_init(&t, NPF_LL_ETHERNET, 2);
	add(&t, 0, "fe80::1", V1);
	add(&t, 1, "ff0e::ffff:239.1.1.1", V2);
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), 1);
	assert_false(t.g[1].is_ipv4);
}

static void policy_parsing(void **state)
{
	struct gid_policy pol;
	(void)state;

	gid_policy_init(&pol);
	assert_int_equal(pol.family, AF_INET);
	assert_int_equal(pol.roce_version, 2);
	assert_int_equal(pol.flid_index, 1);
	assert_false(pol.has_range);
	assert_int_equal(gid_policy_set_family(&pol, "AF_INET6"), 0);
	assert_int_equal(pol.family, AF_INET6);
	assert_int_equal(gid_policy_set_family(&pol, "inet6"), -EINVAL);
	assert_int_equal(pol.family, AF_INET);
	assert_int_equal(gid_policy_set_family(&pol, ""), 0);
	assert_int_equal(pol.family, AF_INET);
	assert_int_equal(gid_policy_set_roce_version(&pol, "0x1"), 0);
	assert_int_equal(pol.roce_version, 1);
	assert_int_equal(gid_policy_set_roce_version(&pol, "two"), -EINVAL);
	assert_int_equal(gid_policy_set_roce_version(&pol, "2 "), -EINVAL);
	assert_int_equal(gid_policy_set_roce_version(&pol, "99999999999"), -EINVAL);
	assert_int_equal(pol.roce_version, 1);
}

/* UCX's automatic GID (uct_ib_device_select_gid): class order RoCE v2 IPv4, v2 IPv6,
 * v2 link-local, then v1 the same; the lowest index within a class; 0 when none. */
static void ucx_auto_index(void **state)
{
	struct tport t;
	(void)state;

	tport_init(&t, NPF_LL_ETHERNET, 256);
	assert_int_equal(gid_ucx_auto_index(&t.p), 0); /* empty table: UCX's fallback */
	add(&t, 0, "fe80::e42:a1ff:fe65:8a2e", V1);
	assert_int_equal(gid_ucx_auto_index(&t.p), 0); /* v1 link-local, the last class */
	add(&t, 1, "fe80::e42:a1ff:fe65:8a2e", V2);
	assert_int_equal(gid_ucx_auto_index(&t.p), 1); /* v2 link-local beats any v1 */
	add(&t, 6, "2001:db8::11", V2);
	assert_int_equal(gid_ucx_auto_index(&t.p), 6); /* v2 global IPv6 beats link-local */
	add(&t, 9, "::ffff:198.18.0.12", V2);
	add(&t, 7, "::ffff:198.18.0.11", V2);
	assert_int_equal(gid_ucx_auto_index(&t.p), 7); /* v2 IPv4, lowest index */
	add(&t, 2, "::ffff:198.18.0.11", V1);
	assert_int_equal(gid_ucx_auto_index(&t.p), 7); /* v1 IPv4 does not beat v2 */
	/* NCCL's scan, by contrast, takes the first IPv4 v2 in table order too. */
	assert_int_equal(gid_nccl_auto_index(&t.p, NULL), 7);
}

/* The GID of an address: the RoCE v2 entry, never the v1 one with the same bytes. */
static void index_of_addr(void **state)
{
	struct tport t;
	struct npf_addr a = {0};
	(void)state;

	tport_init(&t, NPF_LL_ETHERNET, 256);
	mlx5_layout(&t, 4, "::ffff:198.18.0.11");
	add(&t, 9, "2001:db8::11", V2);
	a.family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, "198.18.0.11", a.addr), 1);
	assert_int_equal(gid_index_of_addr(&t.p, &a), 7);
	assert_int_equal(inet_pton(AF_INET, "198.18.0.12", a.addr), 1);
	assert_int_equal(gid_index_of_addr(&t.p, &a), -1);
	a.family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::11", a.addr), 1);
	assert_int_equal(gid_index_of_addr(&t.p, &a), 9);
	a.family = 0;
	assert_int_equal(gid_index_of_addr(&t.p, &a), -1);
}

static void helpers(void **state)
{
	uint8_t raw[16];
	char buf[GID_STR_LEN];
	struct npf_gid g = { 0 };
	(void)state;

	inet_pton(AF_INET6, "fe80::e42:a1ff:fe65:8a2e", raw);
	assert_string_equal(gid_format(raw, buf, sizeof(buf)),
			    "fe80:0000:0000:0000:0e42:a1ff:fe65:8a2e");
	assert_true(gid_is_link_local(raw));
	inet_pton(AF_INET6, "fe80:0:0:1::1", raw);
	assert_false(gid_is_link_local(raw)); /* only fe80::/64, as NCCL */
	inet_pton(AF_INET6, "::ffff:198.18.0.1", g.raw);
	gid_fill_ipv4(&g);
	assert_true(g.is_ipv4);
	assert_memory_equal(g.ipv4, ((uint8_t[]){ 198, 18, 0, 1 }), 4);
	assert_string_equal(gid_warn_name(NPF_GIDW_AUTO_LINK_LOCAL), "auto-link-local");
	assert_string_equal(gid_warn_name(NPF_GIDW_LEGACY_EMPTY), "legacy-empty");
	assert_string_equal(gid_warn_name(1u << 30), "unknown");
	assert_true(strlen(gid_warn_text(NPF_GIDW_NO_IPV4_GID)) > 10);
	assert_string_equal(gid_warn_text(3), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(usual_mlx5_layout),
		cmocka_unit_test(family_change_takes_roce_v1),
		cmocka_unit_test(family_change_takes_empty_slot),
		cmocka_unit_test(container_gaps),
		cmocka_unit_test(mlx5_fixture_warnings),
		cmocka_unit_test(ipv6_only),
		cmocka_unit_test(ipv4_range),
		cmocka_unit_test(two_hcas_differ),
		cmocka_unit_test(ports_down_init),
		cmocka_unit_test(infiniband_flid),
		cmocka_unit_test(unknown_link_layer_and_types),
		cmocka_unit_test(policy_parsing),
		cmocka_unit_test(helpers),
		cmocka_unit_test(ucx_auto_index),
		cmocka_unit_test(index_of_addr),
	};
	return npf_run_tests(tests, NULL, NULL);
}
