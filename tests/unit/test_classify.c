// SPDX-License-Identifier: MIT
/* classify: the name/role table, link-local-only, virtual ports, evidence. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

/* model.h pulls <net/if.h>, which must precede <linux/if.h>. */
#include "classify.h"
#include "model.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if.h>
#include <linux/if_arp.h>


static struct npf_iface mk(int ifindex, const char *name, const char *kind)
{
	struct npf_iface ifc = { .ifindex = ifindex, .arphrd = ARPHRD_ETHER, .carrier = -1,
				 .speed_mbps = NPF_SPEED_UNKNOWN };

	snprintf(ifc.name, sizeof(ifc.name), "%s", name);
	snprintf(ifc.kind_str, sizeof(ifc.kind_str), "%s", kind);
	return ifc;
}

static void add_addr(struct npf_iface *ifc, const char *txt, uint8_t prefixlen)
{
	struct npf_addr a = { .prefixlen = prefixlen };

	a.family = strchr(txt, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(a.family, txt, a.addr), 1);
	assert_int_equal(npf_iface_add_addr(ifc, &a), 0);
}

static void role_table(void **state)
{
	static const struct {
		const char *name;
		const char *kind;
		uint32_t roles;
		const char *why; /* a piece the evidence must contain, NULL = none */
	} cases[] = {
		{ "docker0", "bridge", NPF_ROLE_CONTAINER_BRIDGE, "docker bridge" },
		{ "br-0123456789ab", "bridge", NPF_ROLE_CONTAINER_BRIDGE, "br-<12 hex>" },
		{ "br-lan", "bridge", 0, NULL },
		{ "br-0123456789a", "bridge", 0, NULL },   /* 11 hex */
		{ "br-0123456789AB", "bridge", 0, NULL },  /* docker uses lower case */
		{ "br-01234567890g", "bridge", 0, NULL },
		{ "cni0", "bridge", NPF_ROLE_CONTAINER_BRIDGE, "CNI" },
		{ "cnit", "bridge", 0, NULL },
		{ "podman0", "bridge", NPF_ROLE_CONTAINER_BRIDGE, "podman" },
		{ "virbr0", "bridge", NPF_ROLE_CONTAINER_BRIDGE, "libvirt" },
		{ "virbr0-nic", "tun", NPF_ROLE_CONTAINER_BRIDGE, "libvirt" },
		{ "lxcbr0", "bridge", NPF_ROLE_CONTAINER_BRIDGE, "LXC" },
		{ "flannel.1", "vxlan", NPF_ROLE_OVERLAY, "flannel" },
		{ "cali123", "veth", NPF_ROLE_OVERLAY, "Calico" },
		{ "cilium_host", "veth", NPF_ROLE_OVERLAY, "Cilium" },
		{ "vxlan.calico", "vxlan", NPF_ROLE_OVERLAY, "vxlan.calico" },
		{ "weave", "bridge", NPF_ROLE_OVERLAY, "Weave" },
		{ "weaver", "bridge", 0, NULL },
		{ "tailscale0", "tun", NPF_ROLE_VPN, "Tailscale" },
		{ "wg0", "wireguard", NPF_ROLE_VPN, "WireGuard" },
		{ "mesh0", "wireguard", NPF_ROLE_VPN, "WireGuard tunnel" },
		{ "zt0", "tun", NPF_ROLE_VPN, "ZeroTier" },
		{ "tun0", "tun", NPF_ROLE_VPN, "tunnel" },
		{ "eth0", "", 0, NULL },
		{ "ens1f0np0", "", 0, NULL },
		{ "bond0", "bond", 0, NULL },
		{ "ib0", "ipoib", 0, NULL },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct npf_iface ifc = mk(3, cases[i].name, cases[i].kind);

		/* A routable address keeps the address-based roles out of the way. */
		add_addr(&ifc, "198.18.5.1", 24);
		classify_iface(&ifc, NULL);
		if (ifc.roles != cases[i].roles)
			fail_msg("%s: roles 0x%x, want 0x%x (evidence: %s)", cases[i].name,
				 ifc.roles, cases[i].roles, ifc.evidence);
		if (cases[i].why && !strstr(ifc.evidence, cases[i].why))
			fail_msg("%s: evidence '%s' lacks '%s'", cases[i].name, ifc.evidence,
				 cases[i].why);
		npf_iface_clear(&ifc);
	}
}

static void evidence_example(void **state)
{
	struct npf_iface ifc = mk(5, "br-0123456789ab", "bridge");
	(void)state;

	add_addr(&ifc, "172.18.0.1", 16);
	classify_iface(&ifc, NULL);
	assert_string_equal(ifc.evidence,
			    "kind=bridge; name matches docker user bridge br-<12 hex>");
	assert_int_equal(ifc.kind, NPF_KIND_BRIDGE);
	/* Idempotent: a second run gives the same answer, not a longer one. */
	classify_iface(&ifc, NULL);
	assert_string_equal(ifc.evidence,
			    "kind=bridge; name matches docker user bridge br-<12 hex>");
	npf_iface_clear(&ifc);
}

static void link_local_only(void **state)
{
	struct npf_iface ifc = mk(4, "enp65s0f1", "");
	(void)state;

	ifc.has_device = true;
	/* No address at all: not "link-local-only", just unaddressed. */
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.roles, 0);

	add_addr(&ifc, "169.254.3.1", 16);
	add_addr(&ifc, "fe80::1", 64);
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.roles, NPF_ROLE_LINK_LOCAL_ONLY);
	assert_int_equal(ifc.kind, NPF_KIND_PHYSICAL);
	assert_non_null(strstr(ifc.evidence, "only link-local"));

	/* 169.255.x is not link-local; fec0:: is not fe80::/10. */
	add_addr(&ifc, "169.255.0.1", 16);
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.roles, 0);
	npf_iface_clear(&ifc);

	ifc = mk(6, "eth1", "");
	add_addr(&ifc, "fec0::1", 64);
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.roles, 0);
	npf_iface_clear(&ifc);

	/* Loopback addresses are not link-local. */
	ifc = mk(1, "lo", "");
	ifc.arphrd = ARPHRD_LOOPBACK;
	add_addr(&ifc, "127.0.0.1", 8);
	add_addr(&ifc, "::1", 128);
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.kind, NPF_KIND_LOOPBACK);
	assert_int_equal(ifc.roles, 0);
	npf_iface_clear(&ifc);
}

static void virtual_ports(void **state)
{
	struct npf_inventory inv = { 0 };
	struct npf_iface *br, *port, *veth, *routed, *bond_slave, *vrf_slave;
	(void)state;

	inv.n_ifaces = 8;
	inv.ifaces = calloc(inv.n_ifaces, sizeof(*inv.ifaces));
	assert_non_null(inv.ifaces);
	inv.ifaces[0] = mk(2, "br0", "bridge");
	inv.ifaces[1] = mk(3, "eth1", "");
	inv.ifaces[2] = mk(4, "veth9", "veth");
	inv.ifaces[3] = mk(5, "veth10", "veth");
	inv.ifaces[4] = mk(6, "bond0", "bond");
	inv.ifaces[5] = mk(7, "eth2", "");
	inv.ifaces[6] = mk(8, "vrf-blue", "vrf");
	inv.ifaces[7] = mk(9, "eth3", "");
	br = &inv.ifaces[0];
	port = &inv.ifaces[1];
	veth = &inv.ifaces[2];
	routed = &inv.ifaces[3];
	bond_slave = &inv.ifaces[5];
	vrf_slave = &inv.ifaces[7];
	add_addr(br, "198.18.0.1", 24);
	port->master = 2;
	port->has_device = true;
	add_addr(veth, "fe80::9", 64);
	add_addr(routed, "198.18.7.1", 24);
	bond_slave->master = 6;
	vrf_slave->master = 8;
	add_addr(vrf_slave, "198.18.8.1", 24);

	classify_inventory(&inv);
	assert_int_equal(br->roles, 0);
	assert_int_equal(port->roles, NPF_ROLE_VIRTUAL_PORT);
	assert_int_equal(port->kind, NPF_KIND_PHYSICAL);
	assert_non_null(strstr(port->evidence, "enslaved to br0 (bridge)"));
	assert_non_null(strstr(port->evidence, "bridge port without routable address"));
	assert_int_equal(veth->roles, NPF_ROLE_VIRTUAL_PORT | NPF_ROLE_LINK_LOCAL_ONLY);
	/* A veth with a routable address is a real path (namespaces, containers). */
	assert_int_equal(routed->roles, 0);
	assert_int_equal(bond_slave->roles, NPF_ROLE_VIRTUAL_PORT);
	/* VRF members route with their own addresses. */
	assert_int_equal(vrf_slave->roles, 0);
	assert_non_null(strstr(vrf_slave->evidence, "enslaved to vrf-blue (vrf)"));

	/* A master we cannot see is named by index, and gives no role. */
	port->master = 77;
	classify_iface(port, &inv);
	assert_int_equal(port->roles, 0);
	assert_non_null(strstr(port->evidence, "enslaved to ifindex 77"));
	npf_inventory_clear(&inv);
}

static void foreign_roles_survive(void **state)
{
	struct npf_iface ifc = mk(3, "ib0", "ipoib");
	(void)state;

	/* The RDMA join sets NPF_ROLE_RDMA; reclassifying must not drop it. */
	ifc.roles = NPF_ROLE_RDMA | NPF_ROLE_VPN;
	add_addr(&ifc, "198.18.9.1", 24);
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.roles, NPF_ROLE_RDMA);
	assert_int_equal(ifc.kind, NPF_KIND_IPOIB);
	npf_iface_clear(&ifc);
}

static void evidence_is_bounded(void **state)
{
	struct npf_inventory inv = { 0 };
	struct npf_iface *slave;
	(void)state;

	inv.n_ifaces = 2;
	inv.ifaces = calloc(2, sizeof(*inv.ifaces));
	assert_non_null(inv.ifaces);
	inv.ifaces[0] = mk(2, "docker_gwbridge", "a-kind-name-of-23-chars");
	inv.ifaces[1] = mk(3, "cali0123456789a", "a-kind-name-of-23-chars");
	slave = &inv.ifaces[1];
	slave->master = 2;
	slave->has_device = true;
	add_addr(slave, "fe80::1", 64);
	classify_inventory(&inv);
	assert_true(strnlen(slave->evidence, sizeof(slave->evidence)) < sizeof(slave->evidence));
	assert_true(slave->roles & NPF_ROLE_OVERLAY);
	assert_true(slave->roles & NPF_ROLE_LINK_LOCAL_ONLY);
	assert_int_equal(slave->kind, NPF_KIND_OTHER);
	npf_inventory_clear(&inv);
}

static void role_names(void **state)
{
	char buf[128];
	(void)state;

	assert_string_equal(classify_role_name(NPF_ROLE_CONTAINER_BRIDGE), "container-bridge");
	assert_string_equal(classify_role_name(NPF_ROLE_LINK_LOCAL_ONLY), "link-local-only");
	assert_string_equal(classify_role_name((enum npf_role)(1u << 20)), "unknown");
	assert_int_equal(classify_roles_str(NPF_ROLE_VPN | NPF_ROLE_VIRTUAL_PORT, ",", buf,
					    sizeof(buf)),
			 2);
	assert_string_equal(buf, "vpn,virtual-port");
	assert_int_equal(classify_roles_str(0, ",", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* Truncation keeps the buffer terminated and counts only whole names. */
	assert_int_equal(classify_roles_str(NPF_ROLE_VPN | NPF_ROLE_OVERLAY, ",", buf, 10), 1);
	assert_string_equal(buf, "overlay");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(role_table),
		cmocka_unit_test(evidence_example),
		cmocka_unit_test(link_local_only),
		cmocka_unit_test(virtual_ports),
		cmocka_unit_test(foreign_roles_survive),
		cmocka_unit_test(evidence_is_bounded),
		cmocka_unit_test(role_names),
	};

	return npf_run_tests(tests, NULL, NULL);
}
