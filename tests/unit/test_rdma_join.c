// SPDX-License-Identifier: MIT
/* Tests for joining RDMA ports to netdevs: RoCE GID ndevs and IPoIB hardware addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gid.h"
#include "model.h"
#include "rdma_join.h"
#include "rdma_sysfs.h"

static int load(const char *name, struct npf_inventory *inv)
{
	char root[512];

	memset(inv, 0, sizeof(*inv));
	snprintf(root, sizeof(root), "%s/sysfs/%s", NPF_FIXTURES, name);
	return rdma_sysfs_read(root, inv);
}

static struct npf_iface *add_iface(struct npf_inventory *inv, int ifindex, const char *name,
				   uint16_t arphrd)
{
	struct npf_iface *n = realloc(inv->ifaces, (inv->n_ifaces + 1) * sizeof(*n));

	assert_non_null(n);
	inv->ifaces = n;
	n = &inv->ifaces[inv->n_ifaces++];
	memset(n, 0, sizeof(*n));
	n->ifindex = ifindex;
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->arphrd = arphrd;
	return n;
}

/* IPoIB hardware address: 4 bytes flags/QPN, then the GID. */
static void ipoib_mac(struct npf_iface *ifc, const uint8_t gid[16], uint8_t qpn_lo)
{
	ifc->mac[0] = 0x00;
	ifc->mac[1] = 0x00;
	ifc->mac[2] = 0x10;
	ifc->mac[3] = qpn_lo;
	memcpy(ifc->mac + 4, gid, 16);
	ifc->mac_len = 20;
}

static void roce_prefers_ipv4_v2_ndev(void **state)
{
	struct npf_inventory inv;
	(void)state;

	assert_int_equal(load("vlan-netdev", &inv), 1);
	add_iface(&inv, 2, "eth0", ARPHRD_ETHER);
	add_iface(&inv, 3, "docker0", ARPHRD_ETHER);
	add_iface(&inv, 4, "eth0.100", ARPHRD_ETHER);
	rdma_join_netdevs(&inv);
	assert_string_equal(inv.rdma[0].ports[0].netdev, "eth0");
	assert_true(npf_inventory_find_name(&inv, "eth0")->roles & NPF_ROLE_RDMA);
	/* The VLAN carries its own GIDs: it is an RDMA netdev too. */
	assert_true(npf_inventory_find_name(&inv, "eth0.100")->roles & NPF_ROLE_RDMA);
	assert_false(npf_inventory_find_name(&inv, "docker0")->roles & NPF_ROLE_RDMA);
	npf_inventory_clear(&inv);
}

static void roce_without_ifaces_and_fallbacks(void **state)
{
	struct npf_inventory inv;
	struct npf_rdma_port *p;
	(void)state;

	/* No ifaces known (captured tree): the netdev name still comes through. */
	assert_int_equal(load("two-hcas", &inv), 2);
	rdma_join_netdevs(&inv);
	assert_string_equal(inv.rdma[0].ports[0].netdev, "ens1f0np0");
	assert_string_equal(inv.rdma[1].ports[0].netdev, "ens1f1np1");
	npf_inventory_clear(&inv);

	/* No IPv4 RoCE v2 GID: the first GID with an ndev. */
	assert_int_equal(load("ipv6-only", &inv), 1);
	p = &inv.rdma[0].ports[0];
	snprintf(p->gids[0].ndev, sizeof(p->gids[0].ndev), "%s", "");
	rdma_join_netdevs(&inv);
	assert_string_equal(p->netdev, "eth2");
	npf_inventory_clear(&inv);

	/* An IPv4 v2 GID later in the table beats an earlier plain ndev. */
	assert_int_equal(load("container-gaps", &inv), 1);
	p = &inv.rdma[0].ports[0];
	snprintf(p->gids[0].ndev, sizeof(p->gids[0].ndev), "%s", "macvlan0");
	rdma_join_netdevs(&inv);
	assert_string_equal(p->netdev, "net1");
	npf_inventory_clear(&inv);
}

static void ipoib_match(void **state)
{
	struct npf_inventory inv;
	struct npf_iface *child, *ib0, *ib1, *eth;
	uint8_t other[16];
	(void)state;

	assert_int_equal(load("ib", &inv), 2);
	/* The P_Key child comes first and has the lower ifindex: the parent
	 * still names the port. */
	child = add_iface(&inv, 3, "ib0.8001", ARPHRD_INFINIBAND);
	ipoib_mac(child, inv.rdma[0].ports[0].gids[0].raw, 0x48);
	ib0 = add_iface(&inv, 5, "ib0", ARPHRD_INFINIBAND);
	ipoib_mac(ib0, inv.rdma[0].ports[0].gids[0].raw, 0x49);
	inv.ifaces[0].link = 5;
	memcpy(other, inv.rdma[0].ports[0].gids[0].raw, 16);
	other[15] ^= 0xff;
	ib1 = add_iface(&inv, 6, "ib1", ARPHRD_INFINIBAND);
	ipoib_mac(ib1, other, 0x50);
	/* Same bytes on an Ethernet device must not match. */
	eth = add_iface(&inv, 7, "eth7", ARPHRD_ETHER);
	ipoib_mac(eth, inv.rdma[1].ports[0].gids[0].raw, 0x51);
	rdma_join_netdevs(&inv);
	assert_string_equal(inv.rdma[0].ports[0].netdev, "ib0");
	assert_true(npf_inventory_find_name(&inv, "ib0")->roles & NPF_ROLE_RDMA);
	assert_true(npf_inventory_find_name(&inv, "ib0.8001")->roles & NPF_ROLE_RDMA);
	assert_false(npf_inventory_find_name(&inv, "ib1")->roles & NPF_ROLE_RDMA);
	assert_false(npf_inventory_find_name(&inv, "eth7")->roles & NPF_ROLE_RDMA);
	/* mlx5_1's GID matches nothing of the right type. */
	assert_string_equal(inv.rdma[1].ports[0].netdev, "");
	npf_inventory_clear(&inv);
}

/* The P_Key child holds the job's address and its parent none: the child is the port's
 * netdev (the address the probes tested lives there). */
static void ipoib_child_with_address(void **state)
{
	struct npf_inventory inv;
	struct npf_iface *child, *ib0;
	struct npf_addr a = { .family = AF_INET, .prefixlen = 24, .addr = { 198, 18, 6, 1 } };
	(void)state;

	assert_int_equal(load("ib", &inv), 2);
	ib0 = add_iface(&inv, 5, "ib0", ARPHRD_INFINIBAND);
	ipoib_mac(ib0, inv.rdma[0].ports[0].gids[0].raw, 0x49);
	child = add_iface(&inv, 6, "ib0.8001", ARPHRD_INFINIBAND);
	ipoib_mac(child, inv.rdma[0].ports[0].gids[0].raw, 0x48);
	child->link = 5;
	assert_int_equal(npf_iface_add_addr(child, &a), 0);
	rdma_join_netdevs(&inv);
	assert_string_equal(inv.rdma[0].ports[0].netdev, "ib0.8001");
	assert_true(rdma_join_is_ipoib_of(npf_inventory_find_name(&inv, "ib0"),
					  &inv.rdma[0].ports[0]));
	assert_true(rdma_join_is_ipoib_of(npf_inventory_find_name(&inv, "ib0.8001"),
					  &inv.rdma[0].ports[0]));
	npf_inventory_clear(&inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roce_prefers_ipv4_v2_ndev),
		cmocka_unit_test(roce_without_ifaces_and_fallbacks),
		cmocka_unit_test(ipoib_match),
		cmocka_unit_test(ipoib_child_with_address),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
