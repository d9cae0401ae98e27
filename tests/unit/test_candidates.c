// SPDX-License-Identifier: MIT
/* Unit tests for candidate selection (lib/candidates) and its address predicates. */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "npf_test.h"

#include "candidates.h"
#include "wire.h"

#define UPRUN (IFF_UP | IFF_RUNNING)

static void add_iface(struct npf_inventory *inv, const char *name, int idx, unsigned int flags,
		      enum npf_kind kind)
{
	struct npf_iface *n = realloc(inv->ifaces, (inv->n_ifaces + 1) * sizeof(*n));

	assert_non_null(n);
	inv->ifaces = n;
	n = &inv->ifaces[inv->n_ifaces++];
	memset(n, 0, sizeof(*n));
	strcpy(n->name, name);
	n->ifindex = idx;
	n->flags = flags;
	n->kind = kind;
	n->mtu = 1500;
	n->speed_mbps = NPF_SPEED_UNKNOWN;
}

static void add_addr(struct npf_inventory *inv, const char *s, int prefix, uint32_t flags)
{
	struct npf_addr a;

	assert_int_equal(npf_wire_addr_parse(s, &a), 0);
	a.prefixlen = (uint8_t)prefix;
	a.flags = flags;
	assert_int_equal(npf_iface_add_addr(&inv->ifaces[inv->n_ifaces - 1], &a), 0);
}

static void build(struct npf_inventory *inv)
{
	memset(inv, 0, sizeof(*inv));
	add_iface(inv, "lo", 1, UPRUN | IFF_LOOPBACK, NPF_KIND_LOOPBACK);
	add_addr(inv, "127.0.0.1", 8, 0);
	add_addr(inv, "::1", 128, 0);
	add_iface(inv, "eth0", 2, UPRUN, NPF_KIND_PHYSICAL);
	add_addr(inv, "198.18.1.1", 24, 0);
	add_addr(inv, "fe80::1", 64, 0);
	add_addr(inv, "2001:db8:1::1", 64, 0);
	add_addr(inv, "2001:db8:1::bad", 64, NPF_ADDR_DADFAILED);
	add_iface(inv, "eth1", 3, IFF_UP, NPF_KIND_PHYSICAL); /* no carrier */
	add_addr(inv, "198.18.2.1", 24, 0);
	add_iface(inv, "eth2", 4, IFF_RUNNING, NPF_KIND_PHYSICAL); /* admin down */
	add_addr(inv, "198.18.3.1", 24, 0);
	add_iface(inv, "docker0", 5, UPRUN, NPF_KIND_BRIDGE);
	inv->ifaces[inv->n_ifaces - 1].roles = NPF_ROLE_CONTAINER_BRIDGE;
	add_addr(inv, "172.17.0.1", 16, 0);
	add_iface(inv, "ll0", 6, UPRUN, NPF_KIND_VETH); /* link-local only */
	add_addr(inv, "169.254.3.3", 16, 0);
	add_iface(inv, "ens1f0np0", 7, UPRUN, NPF_KIND_PHYSICAL);
	strcpy(inv->ifaces[inv->n_ifaces - 1].altnames[0], "enp65s0f0np0");
	inv->ifaces[inv->n_ifaces - 1].n_altnames = 1;
	inv->ifaces[inv->n_ifaces - 1].mtu = 9000;
	inv->ifaces[inv->n_ifaces - 1].speed_mbps = 200000;
	add_addr(inv, "198.18.4.1", 24, 0);

	inv->rdma = calloc(1, sizeof(*inv->rdma));
	assert_non_null(inv->rdma);
	inv->n_rdma = 1;
	strcpy(inv->rdma[0].name, "mlx5_0");
	inv->rdma[0].ports = calloc(2, sizeof(*inv->rdma[0].ports));
	assert_non_null(inv->rdma[0].ports);
	inv->rdma[0].n_ports = 2;
	inv->rdma[0].ports[0].port = 1;
	inv->rdma[0].ports[0].state = NPF_PORT_DOWN;
	strcpy(inv->rdma[0].ports[0].netdev, "eth9");
	inv->rdma[0].ports[1].port = 2;
	inv->rdma[0].ports[1].state = NPF_PORT_ACTIVE;
	inv->rdma[0].ports[1].link_layer = NPF_LL_ETHERNET;
	strcpy(inv->rdma[0].ports[1].netdev, "ens1f0np0");
	/* Its RoCE v2 GID of 198.18.4.1 at index 3 (a v1 entry with the same bytes at 2). */
	inv->rdma[0].ports[1].gids = calloc(2, sizeof(*inv->rdma[0].ports[1].gids));
	assert_non_null(inv->rdma[0].ports[1].gids);
	inv->rdma[0].ports[1].n_gids = 2;
	for (int g = 0; g < 2; g++) {
		struct npf_gid *e = &inv->rdma[0].ports[1].gids[g];

		e->index = 2 + g;
		e->type = g ? NPF_GID_ROCE_V2 : NPF_GID_IB_ROCE_V1;
		e->raw[10] = e->raw[11] = 0xff;
		e->raw[12] = 198;
		e->raw[13] = 18;
		e->raw[14] = 4;
		e->raw[15] = 1;
	}
}

static void test_select(void **state)
{
	struct npf_inventory inv;
	struct npf_candidate *c = NULL;
	size_t n = 0;
	char buf[64];

	(void)state;
	build(&inv);
	assert_int_equal(npf_candidates_from_inventory(&inv, NULL, 0, &c, &n), 4);
	assert_int_equal(n, 4);
	assert_string_equal(c[0].ifname, "eth0");
	assert_string_equal(npf_addr_str(&c[0].addr, buf, sizeof(buf)), "198.18.1.1");
	assert_int_equal(c[0].addr.prefixlen, 24);
	assert_string_equal(c[1].ifname, "eth0");
	assert_string_equal(npf_addr_str(&c[1].addr, buf, sizeof(buf)), "2001:db8:1::1");
	assert_string_equal(c[2].ifname, "docker0");
	assert_int_equal(c[2].kind, NPF_KIND_BRIDGE);
	assert_int_equal(c[2].roles, NPF_ROLE_CONTAINER_BRIDGE);
	assert_string_equal(c[2].rdma_dev, "");
	assert_int_equal(c[2].rdma_port, 0);
	assert_string_equal(c[3].ifname, "ens1f0np0");
	assert_int_equal(c[3].mtu, 9000);
	assert_true(c[3].speed_mbps == 200000);
	assert_string_equal(c[3].rdma_dev, "mlx5_0");
	assert_int_equal(c[3].rdma_port, 2);
	assert_int_equal(c[3].rdma_ll, NPF_LL_ETHERNET);
	assert_true(c[3].rdma_active);
	/* The GID index of its address travels in the announcement (issue 10). */
	assert_true(c[3].has_gid);
	assert_int_equal(c[3].gid_index, 3);
	assert_false(c[0].has_gid);
	free(c);
	npf_inventory_clear(&inv);
}

static void test_exclude(void **state)
{
	static const char *const ex1[] = { "docker*", "" };
	static const char *const ex2[] = { "enp65s0*" }; /* altname */
	static const char *const ex3[] = { "*" };
	struct npf_inventory inv;
	struct npf_candidate *c = NULL;
	size_t n = 0;

	(void)state;
	build(&inv);
	assert_int_equal(npf_candidates_from_inventory(&inv, ex1, 2, &c, &n), 3);
	for (size_t i = 0; i < n; i++)
		assert_string_not_equal(c[i].ifname, "docker0");
	free(c);
	assert_int_equal(npf_candidates_from_inventory(&inv, ex2, 1, &c, &n), 3);
	for (size_t i = 0; i < n; i++)
		assert_string_not_equal(c[i].ifname, "ens1f0np0");
	free(c);
	c = NULL;
	assert_int_equal(npf_candidates_from_inventory(&inv, ex3, 1, &c, &n), 0);
	assert_int_equal(n, 0);
	free(c);
	assert_int_equal(npf_candidates_from_inventory(&inv, NULL, 1, &c, &n), -EINVAL);
	assert_int_equal(npf_candidates_from_inventory(NULL, NULL, 0, &c, &n), -EINVAL);
	npf_inventory_clear(&inv);

	/* An empty inventory has no candidates. */
	assert_int_equal(npf_candidates_from_inventory(&inv, NULL, 0, &c, &n), 0);
	free(c);
}

static void test_subnet(void **state)
{
	struct npf_addr a, b;

	(void)state;
	npf_wire_addr_parse("198.18.3.1", &a);
	npf_wire_addr_parse("198.18.3.200", &b);
	assert_true(npf_addr_same_subnet(&a, &b, 24));
	assert_false(npf_addr_same_subnet(&a, &b, 25));
	assert_true(npf_addr_same_subnet(&a, &b, 0));
	assert_false(npf_addr_same_subnet(&a, &b, 32));
	assert_false(npf_addr_equal(&a, &b));
	npf_wire_addr_parse("198.18.2.1", &b);
	assert_true(npf_addr_same_subnet(&a, &b, 23));
	assert_false(npf_addr_same_subnet(&a, &b, 24));
	npf_wire_addr_parse("2001:db8::1", &b);
	assert_false(npf_addr_same_subnet(&a, &b, 0)); /* families differ */
	npf_wire_addr_parse("2001:db8::ffff", &a);
	assert_true(npf_addr_same_subnet(&a, &b, 112));
	assert_false(npf_addr_same_subnet(&a, &b, 113));
	assert_false(npf_addr_same_subnet(&a, &b, 200)); /* clamped to 128: they differ */
	assert_true(npf_addr_same_subnet(&a, &a, 200));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_exclude),
		cmocka_unit_test(test_subnet),
	};

	return npf_run_tests(tests, NULL, NULL);
}
