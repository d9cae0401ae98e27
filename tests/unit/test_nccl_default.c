// SPDX-License-Identifier: MIT
/* NCCL's bootstrap interface choice per version: list order, RUNNING, virbr, address order. */
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

#include "nccl_default.h"

#define V2_20_5 NPF_NCCL_VERSION(2, 20, 5)
#define V2_27_7 NPF_NCCL_VERSION(2, 27, 7)
#define V2_28_3 NPF_NCCL_VERSION(2, 28, 3)

static struct npf_iface *add_if(struct npf_inventory *inv, const char *name, unsigned int flags)
{
	struct npf_iface *n = realloc(inv->ifaces, (inv->n_ifaces + 1) * sizeof(*n));
	struct npf_iface *ifc;

	assert_non_null(n);
	inv->ifaces = n;
	ifc = &n[inv->n_ifaces++];
	memset(ifc, 0, sizeof(*ifc));
	strcpy(ifc->name, name);
	ifc->ifindex = (int)inv->n_ifaces;
	ifc->flags = flags;
	return ifc;
}

static void add_ip(struct npf_iface *ifc, const char *ip)
{
	struct npf_addr a = { 0 };

	a.family = strchr(ip, ':') ? AF_INET6 : AF_INET;
	a.prefixlen = a.family == AF_INET ? 24 : 64;
	assert_int_equal(inet_pton(a.family, ip, a.addr), 1);
	assert_int_equal(npf_iface_add_addr(ifc, &a), 0);
}

#define RUN (IFF_UP | IFF_RUNNING)

static void expect_pick(const struct npf_inventory *inv, int version, int family, const char *env,
			const char *ifname, const char *ip, enum nccl_stage stage)
{
	struct nccl_pick p;
	char buf[INET6_ADDRSTRLEN];

	assert_int_equal(nccl_socket_pick(inv, version, family, env, &p), 0);
	assert_string_equal(p.ifname, ifname);
	assert_string_equal(npf_addr_str(&p.addr, buf, sizeof(buf)), ip);
	assert_int_equal(p.stage, stage);
}

/* An IPoIB netdev with only its link-local address still wins the "ib" stage. */
static void ib_prefix_first(void **state)
{
	struct npf_inventory inv = { 0 };
	(void)state;

	add_ip(add_if(&inv, "lo", RUN | IFF_LOOPBACK), "127.0.0.1");
	add_ip(add_if(&inv, "eth0", RUN), "198.18.1.1");
	add_ip(add_if(&inv, "ibp12s0", RUN), "fe80::1");
	expect_pick(&inv, 0, 0, NULL, "ibp12s0", "fe80::1", NCCL_STAGE_IB);
	expect_pick(&inv, V2_20_5, 0, NULL, "ibp12s0", "fe80::1", NCCL_STAGE_IB);
	npf_inventory_clear(&inv);
}

static void docker_excluded(void **state)
{
	struct npf_inventory inv = { 0 };
	struct nccl_pick p;
	(void)state;

	add_ip(add_if(&inv, "lo", RUN | IFF_LOOPBACK), "127.0.0.1");
	add_ip(add_if(&inv, "docker0", RUN), "172.17.0.1");
	add_ip(add_if(&inv, "br-5c2f8e1a9b07", RUN), "172.18.0.1");
	add_ip(add_if(&inv, "eth0", RUN), "198.18.1.1");
	/* docker0 is excluded, a docker user bridge is not: it comes first. */
	expect_pick(&inv, 0, 0, NULL, "br-5c2f8e1a9b07", "172.18.0.1", NCCL_STAGE_NOT_DOCKER);
	assert_int_equal(nccl_default_pick(&inv, 0, 0, &p), 0);
	assert_string_equal(p.list, "^docker,lo,virbr");
	assert_int_equal(nccl_default_pick(&inv, V2_27_7, 0, &p), 0);
	assert_string_equal(p.list, "^docker,lo");
	npf_inventory_clear(&inv);
}

static void docker_then_lo(void **state)
{
	struct npf_inventory inv = { 0 };
	(void)state;

	add_ip(add_if(&inv, "lo", RUN | IFF_LOOPBACK), "127.0.0.1");
	add_ip(add_if(&inv, "docker0", RUN), "172.17.0.1");
	expect_pick(&inv, 0, 0, NULL, "docker0", "172.17.0.1", NCCL_STAGE_DOCKER);
	inv.ifaces[1].n_addrs = 0;
	expect_pick(&inv, 0, 0, NULL, "lo", "127.0.0.1", NCCL_STAGE_LO);
	npf_inventory_clear(&inv);
}

/* virbr joined the exclusions and became last resort in 2.28.3. */
static void virbr_by_version(void **state)
{
	struct npf_inventory inv = { 0 };
	(void)state;

	add_ip(add_if(&inv, "lo", RUN | IFF_LOOPBACK), "127.0.0.1");
	add_ip(add_if(&inv, "virbr0", RUN), "192.168.122.1");
	add_ip(add_if(&inv, "eth0", RUN), "198.18.1.1");
	expect_pick(&inv, V2_27_7, 0, NULL, "virbr0", "192.168.122.1", NCCL_STAGE_NOT_DOCKER);
	expect_pick(&inv, V2_28_3, 0, NULL, "eth0", "198.18.1.1", NCCL_STAGE_NOT_DOCKER);
	inv.ifaces[2].n_addrs = 0;
	expect_pick(&inv, V2_27_7, 0, NULL, "virbr0", "192.168.122.1", NCCL_STAGE_NOT_DOCKER);
	expect_pick(&inv, V2_28_3, 0, NULL, "lo", "127.0.0.1", NCCL_STAGE_LO);
	inv.ifaces[0].n_addrs = 0;
	expect_pick(&inv, V2_28_3, 0, NULL, "virbr0", "192.168.122.1", NCCL_STAGE_VIRBR);
	npf_inventory_clear(&inv);
}

/* IFF_RUNNING is required only from 2.28.3 (NVIDIA/nccl#1798). */
static void running_by_version(void **state)
{
	struct npf_inventory inv = { 0 };
	(void)state;

	add_ip(add_if(&inv, "lo", RUN | IFF_LOOPBACK), "127.0.0.1");
	add_ip(add_if(&inv, "eth0", IFF_UP), "198.18.1.1");
	add_ip(add_if(&inv, "eth1", RUN), "198.18.2.1");
	expect_pick(&inv, V2_27_7, 0, NULL, "eth0", "198.18.1.1", NCCL_STAGE_NOT_DOCKER);
	expect_pick(&inv, V2_28_3, 0, NULL, "eth1", "198.18.2.1", NCCL_STAGE_NOT_DOCKER);
	expect_pick(&inv, 0, 0, NULL, "eth1", "198.18.2.1", NCCL_STAGE_NOT_DOCKER);
	npf_inventory_clear(&inv);
}

/* getifaddrs lists every IPv4 address before any IPv6 one, across interfaces. */
static void ipv4_before_ipv6(void **state)
{
	struct npf_inventory inv = { 0 };
	struct npf_iface *e0, *lo;
	(void)state;

	lo = add_if(&inv, "lo", RUN | IFF_LOOPBACK);
	add_ip(lo, "127.0.0.1");
	add_ip(lo, "::1");
	e0 = add_if(&inv, "eth0", RUN);
	add_ip(e0, "2001:db8:1::1");
	add_ip(e0, "fe80::1");
	add_ip(add_if(&inv, "eth1", RUN), "198.18.2.1");
	expect_pick(&inv, 0, 0, NULL, "eth1", "198.18.2.1", NCCL_STAGE_NOT_DOCKER);
	expect_pick(&inv, 0, AF_INET6, NULL, "eth0", "2001:db8:1::1", NCCL_STAGE_NOT_DOCKER);
	/* An IPv6 "lo" only pass: ::1 is skipped, nothing is left. */
	{
		struct nccl_pick p;

		assert_int_equal(nccl_socket_pick(&inv, 0, AF_INET6, "=lo", &p), -ENOENT);
	}
	npf_inventory_clear(&inv);
}

static void link_local_not_skipped(void **state)
{
	struct npf_inventory inv = { 0 };
	(void)state;

	add_ip(add_if(&inv, "lo", RUN | IFF_LOOPBACK), "127.0.0.1");
	add_ip(add_if(&inv, "enp1s0f1", RUN), "fe80::2");
	add_ip(add_if(&inv, "eth0", RUN), "169.254.3.1");
	/* 169.254/16 is IPv4, so it comes before the fe80 address. */
	expect_pick(&inv, 0, 0, NULL, "eth0", "169.254.3.1", NCCL_STAGE_NOT_DOCKER);
	expect_pick(&inv, 0, AF_INET6, NULL, "enp1s0f1", "fe80::2", NCCL_STAGE_NOT_DOCKER);
	npf_inventory_clear(&inv);
}

static void user_values(void **state)
{
	struct npf_inventory inv = { 0 };
	struct nccl_pick p;
	(void)state;

	add_ip(add_if(&inv, "lo", RUN | IFF_LOOPBACK), "127.0.0.1");
	add_ip(add_if(&inv, "eth0", RUN), "198.18.1.1");
	add_ip(add_if(&inv, "docker0", RUN), "172.17.0.1");
	add_ip(add_if(&inv, "eth1", RUN), "198.18.2.1");
	add_ip(add_if(&inv, "eth10", RUN), "198.18.3.1");
	expect_pick(&inv, 0, 0, "=eth1", "eth1", "198.18.2.1", NCCL_STAGE_USER);
	expect_pick(&inv, 0, 0, "=eth10", "eth10", "198.18.3.1", NCCL_STAGE_USER);
	/* The list order is not a priority: dump order decides. */
	expect_pick(&inv, 0, 0, "=eth1,eth0", "eth0", "198.18.1.1", NCCL_STAGE_USER);
	/* A user exclusion list replaces the defaults: lo wins. */
	expect_pick(&inv, 0, 0, "^docker0", "lo", "127.0.0.1", NCCL_STAGE_USER);
	/* No fallback when a set value matches nothing. */
	assert_int_equal(nccl_socket_pick(&inv, 0, 0, "=eth7", &p), -ENOENT);
	/* Length <= 1: ignored, auto-selection runs. */
	expect_pick(&inv, 0, 0, "^", "eth0", "198.18.1.1", NCCL_STAGE_NOT_DOCKER);
	npf_inventory_clear(&inv);
}

static void nothing_found(void **state)
{
	struct npf_inventory inv = { 0 };
	struct nccl_pick p;
	(void)state;

	add_if(&inv, "eth0", RUN);
	assert_int_equal(nccl_default_pick(&inv, 0, 0, &p), -ENOENT);
	assert_int_equal(nccl_default_pick(NULL, 0, 0, &p), -EINVAL);
	assert_int_equal(nccl_default_pick(&inv, 0, 99, &p), -EINVAL);
	npf_inventory_clear(&inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ib_prefix_first),    cmocka_unit_test(docker_excluded),
		cmocka_unit_test(docker_then_lo),     cmocka_unit_test(virbr_by_version),
		cmocka_unit_test(running_by_version), cmocka_unit_test(ipv4_before_ipv6),
		cmocka_unit_test(link_local_not_skipped), cmocka_unit_test(user_values),
		cmocka_unit_test(nothing_found),
	};

	return npf_run_tests(tests, NULL, NULL);
}
