// SPDX-License-Identifier: MIT
/* Consumer address models (lib/consumer.c) on captured getifaddrs orders: for each
 * consumer, the address it binds for "interface X" on a node whose addresses came back in
 * this order (ip -o addr / getifaddrs, AF_PACKET entries left out). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "nccl_default.h"

/* One captured getifaddrs entry: "name flags address/prefix"; flags "UR" = UP+RUNNING,
 * "U" = UP without carrier. Entries come in the order getifaddrs returned them; the
 * inventory keeps each interface's addresses in that order, ifindex by first sight. */
struct cap {
	const char *name;
	const char *flags;
	const char *cidr;
};

static void load(struct npf_inventory *inv, const struct cap *c, size_t n)
{
	memset(inv, 0, sizeof(*inv));
	for (size_t i = 0; i < n; i++) {
		struct npf_iface *ifc = npf_inventory_find_name(inv, c[i].name);
		struct npf_addr a;
		char buf[64], *slash;

		if (!ifc) {
			struct npf_iface *m =
			    realloc(inv->ifaces, (inv->n_ifaces + 1) * sizeof(*m));

			assert_non_null(m);
			inv->ifaces = m;
			ifc = &m[inv->n_ifaces++];
			memset(ifc, 0, sizeof(*ifc));
			snprintf(ifc->name, sizeof(ifc->name), "%s", c[i].name);
			ifc->ifindex = (int)inv->n_ifaces;
			ifc->flags = IFF_UP | (strchr(c[i].flags, 'R') ? IFF_RUNNING : 0);
			if (strcmp(c[i].name, "lo") == 0)
				ifc->flags |= IFF_LOOPBACK;
		}
		memset(&a, 0, sizeof(a));
		snprintf(buf, sizeof(buf), "%s", c[i].cidr);
		slash = strchr(buf, '/');
		assert_non_null(slash);
		*slash = '\0';
		a.family = strchr(buf, ':') ? AF_INET6 : AF_INET;
		a.prefixlen = (uint8_t)atoi(slash + 1);
		assert_int_equal(inet_pton(a.family, buf, a.addr), 1);
		assert_int_equal(npf_iface_add_addr(ifc, &a), 0);
	}
}

static void expect(enum npf_cmodel m, const struct npf_inventory *inv, const char *value,
		   int family, int version, const char *want_if, const char *want_ip)
{
	struct npf_cmodel_query q = {.value = value, .family = family, .nccl_version = version};
	char ifname[IFNAMSIZ] = "", ip[INET6_ADDRSTRLEN];
	struct npf_addr a;
	int r = npf_cmodel_addr(m, inv, &q, ifname, &a);

	if (!want_ip) {
		if (r != -ENOENT)
			fail_msg("%s '%s': want no address, got %d %s", npf_cmodel_name(m), value,
				 r, r == 0 ? npf_addr_str(&a, ip, sizeof(ip)) : "");
		return;
	}
	if (r != 0)
		fail_msg("%s '%s': want %s, got %d", npf_cmodel_name(m), value, want_ip, r);
	assert_string_equal(ifname, want_if);
	assert_string_equal(npf_addr_str(&a, ip, sizeof(ip)), want_ip);
}

/* A secondary IPv4 subnet on eth0 (ip addr add 198.18.2.1/24 dev eth0 after the DHCP
 * address): every consumer that takes "the address of eth0" gets the primary. */
static void secondary_subnet(void **state)
{
	static const struct cap c[] = {
	    {"lo", "UR", "127.0.0.1/8"},
	    {"eth0", "UR", "10.0.0.5/24"},
	    {"eth0", "UR", "198.18.2.1/24"},
	    {"lo", "UR", "::1/128"},
	    {"eth0", "UR", "fe80::5054:ff:fe12:3456/64"},
	};
	struct npf_inventory inv;
	(void)state;

	load(&inv, c, sizeof(c) / sizeof(c[0]));
	expect(NPF_CM_NCCL_SOCKET, &inv, "=eth0", 0, 0, "eth0", "10.0.0.5");
	expect(NPF_CM_GLOO, &inv, "eth0", 0, 0, "eth0", "10.0.0.5");
	expect(NPF_CM_TENSORPIPE, &inv, "eth0", 0, 0, "eth0", "10.0.0.5");
	expect(NPF_CM_UCX_TCP, &inv, "eth0", 0, 0, "eth0", "10.0.0.5");
	/* NCCL_SOCKET_FAMILY=AF_INET6: the first IPv6 entry, link-local not filtered. */
	expect(NPF_CM_NCCL_SOCKET, &inv, "=eth0", AF_INET6, 0, "eth0", "fe80::5054:ff:fe12:3456");
	npf_inventory_clear(&inv);
}

/* A dual-stack NIC as the kernel dumps it: IPv4 first, then the global IPv6 and the
 * link-local one. */
static void dual_stack(void **state)
{
	static const struct cap c[] = {
	    {"lo", "UR", "127.0.0.1/8"},    {"ens1f0", "UR", "198.18.2.1/24"},
	    {"lo", "UR", "::1/128"},	    {"ens1f0", "UR", "2001:db8:2::1/64"},
	    {"ens1f0", "UR", "fe80::1/64"},
	};
	struct npf_inventory inv;
	(void)state;

	load(&inv, c, sizeof(c) / sizeof(c[0]));
	expect(NPF_CM_NCCL_SOCKET, &inv, "=ens1f0", 0, 0, "ens1f0", "198.18.2.1");
	expect(NPF_CM_NCCL_SOCKET, &inv, "=ens1f0", AF_INET6, 0, "ens1f0", "2001:db8:2::1");
	expect(NPF_CM_GLOO, &inv, "ens1f0", 0, 0, "ens1f0", "198.18.2.1");
	expect(NPF_CM_UCX_TCP, &inv, "ens1f0", 0, 0, "ens1f0", "198.18.2.1");
	npf_inventory_clear(&inv);
}

/* IPv6 only, link-local listed before the global address (SLAAC still running when the
 * global one arrived): NCCL and Gloo bind fe80::, UCX skips it. */
static void v6_link_local_first(void **state)
{
	static const struct cap c[] = {
	    {"lo", "UR", "::1/128"},
	    {"ens1f0", "UR", "fe80::1/64"},
	    {"ens1f0", "UR", "2001:db8:2::1/64"},
	};
	struct npf_inventory inv;
	(void)state;

	load(&inv, c, sizeof(c) / sizeof(c[0]));
	expect(NPF_CM_NCCL_SOCKET, &inv, "=ens1f0", AF_INET6, 0, "ens1f0", "fe80::1");
	expect(NPF_CM_GLOO, &inv, "ens1f0", 0, 0, "ens1f0", "fe80::1");
	expect(NPF_CM_UCX_TCP, &inv, "ens1f0", 0, 0, "ens1f0", "2001:db8:2::1");
	npf_inventory_clear(&inv);
}

/* No carrier: Gloo takes the address anyway (no flag check), TensorPipe and UCX do not
 * (uv_interface_addresses / ucs_netif_get_addr want UP+RUNNING), NCCL >= 2.28.3 skips
 * it and older NCCL does not. A missing name: nothing, for every consumer. */
static void flags_and_missing(void **state)
{
	static const struct cap c[] = {
	    {"eth0", "UR", "198.18.1.1/24"},
	    {"ens1f0", "U", "198.18.2.1/24"},
	};
	struct npf_inventory inv;
	(void)state;

	load(&inv, c, sizeof(c) / sizeof(c[0]));
	expect(NPF_CM_GLOO, &inv, "ens1f0", 0, 0, "ens1f0", "198.18.2.1");
	expect(NPF_CM_TENSORPIPE, &inv, "ens1f0", 0, 0, NULL, NULL);
	expect(NPF_CM_UCX_TCP, &inv, "ens1f0", 0, 0, NULL, NULL);
	expect(NPF_CM_NCCL_SOCKET, &inv, "=ens1f0", 0, 0, NULL, NULL);
	expect(NPF_CM_NCCL_SOCKET, &inv, "=ens1f0", 0, NPF_NCCL_VERSION(2, 27, 7), "ens1f0",
	       "198.18.2.1");
	expect(NPF_CM_TENSORPIPE, &inv, "ib0", 0, 0, NULL, NULL);
	expect(NPF_CM_GLOO, &inv, "ib0", 0, 0, NULL, NULL);
	/* NCCL's prefix grammar: "ens" without '=' selects ens1f0 (here not RUNNING) on
	 * old NCCL. */
	expect(NPF_CM_NCCL_SOCKET, &inv, "ens", 0, NPF_NCCL_VERSION(2, 20, 5), "ens1f0",
	       "198.18.2.1");
	{
		struct npf_cmodel_query q = {.value = "eth0"};
		struct npf_addr a;

		assert_int_equal(npf_cmodel_addr(NPF_CM_OMPI, &inv, &q, NULL, &a), -EINVAL);
		assert_int_equal(npf_cmodel_addr(NPF_CM__COUNT, &inv, &q, NULL, &a), -EINVAL);
	}
	assert_string_equal(npf_cmodel_function(NPF_CM_GLOO), "lookupAddrForIface");
	npf_inventory_clear(&inv);
}

/* The registry: every row has a name, rows with a config bit resolve through the config's
 * names, and the node marker is always on. */
static void registry_rows(void **state)
{
	(void)state;
	for (int v = 0; v < NPF_VAR__COUNT; v++) {
		const struct npf_var_info *r = npf_var_info((enum npf_var)v);

		assert_non_null(r);
		assert_non_null(r->name);
		assert_int_equal(npf_var_parse(r->name), v);
		if (r->gate == NPF_GATE_VARIABLES)
			assert_string_equal(npf_pubvar_name((enum npf_pubvar)r->bit), r->name);
		/* The bits come from the rows: one per switchable row, all of them in "all",
		 * none for the others (their names are no [publish] variables entry). */
		if (r->gate == NPF_GATE_VARIABLES) {
			assert_int_equal(r->bit, 1u << v);
			assert_int_equal(npf_pubvar_parse(r->name), (int)r->bit);
			assert_true(NPF_PUBVAR__ALL & r->bit);
		} else {
			assert_int_equal(r->bit, 0);
			assert_int_equal(npf_pubvar_parse(r->name), -EINVAL);
		}
		if (r->with >= 0)
			assert_int_equal(npf_var_info((enum npf_var)r->with)->with, v);
	}
	for (unsigned int b = 0; b < 32; b++)
		if (NPF_PUBVAR__ALL & (1u << b))
			assert_non_null(npf_pubvar_name((enum npf_pubvar)(1u << b)));
	assert_int_equal(npf_var_info(NPF_VAR_NETPREFLIGHT_NODE)->gate, NPF_GATE_ALWAYS);
	assert_int_equal(npf_var_info(NPF_VAR_PRTE_MCA_PRTE_IF_INCLUDE)->consumer,
			 NPF_CONSUMER_PRRTE);
	assert_null(npf_var_info(NPF_VAR__COUNT));
	assert_int_equal(npf_var_parse("NOPE"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(secondary_subnet),	   cmocka_unit_test(dual_stack),
	    cmocka_unit_test(v6_link_local_first), cmocka_unit_test(flags_and_missing),
	    cmocka_unit_test(registry_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
