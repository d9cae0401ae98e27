// SPDX-License-Identifier: MIT
/* Tests for the RDMA sysfs content parsers and the tree reader on captured fixtures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gid.h"
#include "model.h"
#include "rdma_sysfs.h"
#include "rdma_topo.h"

#define S(lit) lit, sizeof(lit) - 1

static void fixture_root(const char *name, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%s/sysfs/%s", NPF_FIXTURES, name);
}

static int load(const char *name, struct npf_inventory *inv)
{
	char root[512];

	memset(inv, 0, sizeof(*inv));
	fixture_root(name, root, sizeof(root));
	return rdma_sysfs_read(root, inv);
}

static void assert_gid_text(const struct npf_gid *g, const char *text)
{
	uint8_t want[16];

	assert_non_null(g);
	assert_int_equal(inet_pton(AF_INET6, text, want), 1);
	assert_memory_equal(g->raw, want, 16);
}

/* ---- content parsers ---- */

static void parse_gid_forms(void **state)
{
	uint8_t raw[16], want[16];
	(void)state;

	assert_int_equal(rdma_parse_gid(S("fe80:0000:0000:0000:0e42:a1ff:fe65:8a2e\n"), raw), 0);
	inet_pton(AF_INET6, "fe80::e42:a1ff:fe65:8a2e", want);
	assert_memory_equal(raw, want, 16);
	assert_int_equal(rdma_parse_gid(S("  ::ffff:198.18.0.1 "), raw), 0);
	inet_pton(AF_INET6, "::ffff:198.18.0.1", want);
	assert_memory_equal(raw, want, 16);
	/* Malformed, empty, over-long, embedded NUL: never an output. */
	memset(raw, 0xaa, sizeof(raw));
	assert_int_equal(rdma_parse_gid(S("zzzz"), raw), -EINVAL);
	assert_int_equal(rdma_parse_gid(S("fe80::1::2"), raw), -EINVAL);
	assert_int_equal(rdma_parse_gid(S("fe80:0000:0000:0000:0e42:a1ff:fe65:8a2e:0000:0000"), raw),
			 -EINVAL);
	assert_int_equal(rdma_parse_gid(S("fe80::1\0junk"), raw), -EINVAL);
	assert_int_equal(rdma_parse_gid(S("\n"), raw), -ENODATA);
	assert_int_equal(rdma_parse_gid(NULL, 0, raw), -ENODATA);
	assert_int_equal(raw[0], 0xaa);
}

static void parse_states(void **state)
{
	enum npf_port_state st = NPF_PORT_NOP;
	int phys = -1;
	(void)state;

	assert_int_equal(rdma_parse_port_state(S("4: ACTIVE\n"), &st), 0);
	assert_int_equal(st, NPF_PORT_ACTIVE);
	assert_int_equal(rdma_parse_port_state(S("1: DOWN"), &st), 0);
	assert_int_equal(st, NPF_PORT_DOWN);
	assert_int_equal(rdma_parse_port_state(S("2"), &st), 0);
	assert_int_equal(st, NPF_PORT_INIT);
	assert_int_equal(rdma_parse_port_state(S("5: ACTIVE_DEFER"), &st), 0);
	assert_int_equal(st, NPF_PORT_ACTIVE_DEFER);
	assert_int_equal(rdma_parse_port_state(S("4: DOWN"), &st), -EINVAL); /* contradiction */
	assert_int_equal(rdma_parse_port_state(S("9: ACTIVE"), &st), -EINVAL);
	assert_int_equal(rdma_parse_port_state(S("ACTIVE"), &st), -EINVAL);
	assert_int_equal(rdma_parse_port_state(S("4 ACTIVE"), &st), -EINVAL);
	assert_int_equal(rdma_parse_port_state(S("999999999: ACTIVE"), &st), -EINVAL);
	assert_int_equal(rdma_parse_port_state(S(""), &st), -ENODATA);
	assert_int_equal(st, NPF_PORT_ACTIVE_DEFER);

	assert_int_equal(rdma_parse_phys_state(S("5: LinkUp\n"), &phys), 0);
	assert_int_equal(phys, 5);
	assert_int_equal(rdma_parse_phys_state(S("3: Disabled"), &phys), 0);
	assert_int_equal(phys, 3);
	assert_int_equal(rdma_parse_phys_state(S("99: Weird"), &phys), -EINVAL);
	assert_int_equal(rdma_parse_phys_state(S(": LinkUp"), &phys), -EINVAL);
	assert_int_equal(phys, 3);
	assert_string_equal(rdma_phys_state_name(5), "LinkUp");
	assert_string_equal(rdma_phys_state_name(42), "unknown");
	assert_string_equal(rdma_phys_state_name(-1), "unknown");
}

static void parse_link_layer_and_types(void **state)
{
	enum npf_link_layer ll = NPF_LL_UNKNOWN;
	enum npf_gid_type t = NPF_GID_TYPE_UNKNOWN;
	(void)state;

	assert_int_equal(rdma_parse_link_layer(S("InfiniBand\n"), &ll), 0);
	assert_int_equal(ll, NPF_LL_INFINIBAND);
	assert_int_equal(rdma_parse_link_layer(S("Ethernet\n"), &ll), 0);
	assert_int_equal(ll, NPF_LL_ETHERNET);
	assert_int_equal(rdma_parse_link_layer(S("Omni-Path"), &ll), 0);
	assert_int_equal(ll, NPF_LL_UNKNOWN);
	assert_int_equal(rdma_parse_link_layer(S("Eth\x01"), &ll), -EINVAL);

	assert_int_equal(rdma_parse_gid_type(S("IB/RoCE v1\n"), &t), 0);
	assert_int_equal(t, NPF_GID_IB_ROCE_V1);
	assert_int_equal(rdma_parse_gid_type(S("RoCE v1"), &t), 0);
	assert_int_equal(t, NPF_GID_IB_ROCE_V1);
	assert_int_equal(rdma_parse_gid_type(S("RoCE v2\n"), &t), 0);
	assert_int_equal(t, NPF_GID_ROCE_V2);
	assert_int_equal(rdma_parse_gid_type(S("RoCE v3"), &t), 0);
	assert_int_equal(t, NPF_GID_TYPE_UNKNOWN);
	/* Empty is how a capture shows the EINVAL of an unpopulated slot. */
	assert_int_equal(rdma_parse_gid_type(S(""), &t), -ENODATA);
	assert_int_equal(rdma_parse_gid_type(S(" \n"), &t), -ENODATA);
}

static void parse_rate(void **state)
{
	char out[48];
	int sp = 0, wd = 0;
	(void)state;

	assert_int_equal(rdma_parse_rate(S("100 Gb/sec (4X EDR)\n"), out, sizeof(out), &sp, &wd), 0);
	assert_string_equal(out, "100 Gb/sec (4X EDR)");
	assert_int_equal(sp, RDMA_SPEED_EDR);
	assert_int_equal(wd, RDMA_WIDTH_4X);
	assert_int_equal(rdma_parse_rate(S("56 Gb/sec (4X FDR)"), out, sizeof(out), &sp, &wd), 0);
	assert_int_equal(sp, RDMA_SPEED_FDR);
	assert_int_equal(rdma_parse_rate(S("40 Gb/sec (4X FDR10)"), out, sizeof(out), &sp, &wd), 0);
	assert_int_equal(sp, RDMA_SPEED_FDR10);
	assert_int_equal(rdma_parse_rate(S("2.5 Gb/sec (1X SDR)"), out, sizeof(out), &sp, &wd), 0);
	assert_int_equal(sp, RDMA_SPEED_SDR);
	assert_int_equal(wd, RDMA_WIDTH_1X);
	assert_int_equal(rdma_parse_rate(S("800 Gb/sec (4X XDR)"), out, sizeof(out), &sp, &wd), 0);
	assert_int_equal(sp, RDMA_SPEED_XDR);
	assert_int_equal(rdma_parse_rate(S("fast"), out, sizeof(out), &sp, &wd), 0);
	assert_string_equal(out, "fast");
	assert_int_equal(sp, -1);
	assert_int_equal(wd, -1);
	assert_int_equal(rdma_parse_rate(S("10 Gb/sec (3X QDR)"), out, sizeof(out), &sp, &wd), 0);
	assert_int_equal(wd, -1);
	assert_int_equal(sp, RDMA_SPEED_QDR);
	/* Truncated copy, still terminated. */
	assert_int_equal(rdma_parse_rate(S("100 Gb/sec (4X EDR)"), out, 4, &sp, &wd), 0);
	assert_string_equal(out, "100");
	assert_int_equal(rdma_parse_rate(S(""), out, sizeof(out), &sp, &wd), -ENODATA);
}

static void format_rate_round_trip(void **state)
{
	static const int speeds[] = { RDMA_SPEED_SDR, RDMA_SPEED_DDR,	RDMA_SPEED_QDR,
				      RDMA_SPEED_FDR10, RDMA_SPEED_FDR, RDMA_SPEED_EDR,
				      RDMA_SPEED_HDR, RDMA_SPEED_NDR,	RDMA_SPEED_XDR };
	static const int widths[] = { RDMA_WIDTH_1X, RDMA_WIDTH_2X, RDMA_WIDTH_4X, RDMA_WIDTH_8X,
				      RDMA_WIDTH_12X };
	char buf[48];
	(void)state;

	assert_int_equal(rdma_format_rate(RDMA_SPEED_EDR, RDMA_WIDTH_4X, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "100 Gb/sec (4X EDR)");
	assert_int_equal(rdma_format_rate(RDMA_SPEED_SDR, RDMA_WIDTH_1X, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2.5 Gb/sec (1X SDR)");
	assert_int_equal(rdma_format_rate(3, RDMA_WIDTH_1X, buf, sizeof(buf)), -EINVAL);
	assert_string_equal(buf, "");
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++) {
		for (size_t j = 0; j < sizeof(widths) / sizeof(widths[0]); j++) {
			int sp, wd;

			assert_int_equal(rdma_format_rate(speeds[i], widths[j], buf, sizeof(buf)), 0);
			assert_int_equal(rdma_parse_rate(buf, strlen(buf), buf, sizeof(buf), &sp,
							 &wd),
					 0);
			assert_int_equal(sp, speeds[i]);
			assert_int_equal(wd, widths[j]);
		}
	}
}

static void parse_guid_type_ndev(void **state)
{
	uint64_t guid = 0;
	char type[16], ndev[IFNAMSIZ];
	(void)state;

	assert_int_equal(rdma_parse_node_guid(S("0c42:a103:0065:8a2e\n"), &guid), 0);
	assert_true(guid == 0x0c42a10300658a2eull);
	assert_int_equal(rdma_parse_node_guid(S("c42:a103:65:8a2e"), &guid), 0);
	assert_true(guid == 0x0c42a10300658a2eull);
	assert_int_equal(rdma_parse_node_guid(S("not-a-guid"), &guid), -EINVAL);
	assert_int_equal(rdma_parse_node_guid(S("0c42:a103:0065"), &guid), -EINVAL);
	assert_int_equal(rdma_parse_node_guid(S("0c42:a103:0065:8a2e:0000"), &guid), -EINVAL);
	assert_int_equal(rdma_parse_node_guid(S("00c42:a103:0065:8a2e"), &guid), -EINVAL);
	assert_true(guid == 0x0c42a10300658a2eull);

	assert_int_equal(rdma_parse_node_type(S("1: CA\n"), type, sizeof(type)), 0);
	assert_string_equal(type, "CA");
	assert_int_equal(rdma_parse_node_type(S("4"), type, sizeof(type)), 0);
	assert_string_equal(type, "RNIC");
	assert_int_equal(rdma_parse_node_type(S("1: a-very-long-node-type-label"), type, 8), 0);
	assert_string_equal(type, "a-very-");
	assert_int_equal(rdma_parse_node_type(S("garbage"), type, sizeof(type)), -EINVAL);

	assert_int_equal(rdma_parse_ndev(S("enp65s0f0np0\n"), ndev), 0);
	assert_string_equal(ndev, "enp65s0f0np0");
	assert_int_equal(rdma_parse_ndev(S("bad/name"), ndev), -EINVAL);
	assert_int_equal(rdma_parse_ndev(S("a:b"), ndev), -EINVAL);
	assert_int_equal(rdma_parse_ndev(S(".."), ndev), -EINVAL);
	assert_int_equal(rdma_parse_ndev(S("sixteen-chars-xx"), ndev), -EINVAL);
	assert_int_equal(rdma_parse_ndev(S(""), ndev), -ENODATA);
	assert_string_equal(ndev, "enp65s0f0np0");
}

/* ---- tree reader on fixtures ---- */

static void read_mlx5_roce(void **state)
{
	struct npf_inventory inv;
	const struct npf_rdma_port *p;
	(void)state;

	assert_int_equal(load("mlx5-roce", &inv), 1);
	assert_int_equal(inv.n_rdma, 1);
	assert_string_equal(inv.rdma[0].name, "mlx5_0");
	assert_true(inv.rdma[0].node_guid == 0x0c42a10300658a2eull);
	assert_string_equal(inv.rdma[0].node_type, "CA");
	assert_int_equal(inv.rdma[0].n_ports, 1);
	p = &inv.rdma[0].ports[0];
	assert_int_equal(p->port, 1);
	assert_int_equal(p->state, NPF_PORT_ACTIVE);
	assert_int_equal(p->phys_state, 5);
	assert_int_equal(p->link_layer, NPF_LL_ETHERNET);
	assert_string_equal(p->rate, "100 Gb/sec (4X EDR)");
	assert_int_equal(p->active_speed, RDMA_SPEED_EDR);
	assert_int_equal(p->active_width, RDMA_WIDTH_4X);
	assert_int_equal(p->gid_tbl_len, 8);
	/* Slots 4-7 are zero GIDs with empty or missing types: not listed. */
	assert_int_equal(p->n_gids, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(p->gids[i].index, i);
		assert_string_equal(p->gids[i].ndev, "enp65s0f0np0");
	}
	assert_gid_text(&p->gids[0], "fe80::e42:a1ff:fe65:8a2e");
	assert_int_equal(p->gids[0].type, NPF_GID_IB_ROCE_V1);
	assert_int_equal(p->gids[1].type, NPF_GID_ROCE_V2);
	assert_false(p->gids[1].is_ipv4);
	assert_gid_text(&p->gids[3], "::ffff:198.18.0.11");
	assert_int_equal(p->gids[3].type, NPF_GID_ROCE_V2);
	assert_true(p->gids[3].is_ipv4);
	assert_memory_equal(p->gids[3].ipv4, ((uint8_t[]){ 198, 18, 0, 11 }), 4);
	assert_int_equal(p->gids[2].type, NPF_GID_IB_ROCE_V1);
	/* The reader leaves prediction to gid_predict_inventory. */
	assert_int_equal(p->nccl_auto_gid, -1);
	assert_int_equal(p->netdev[0], '\0');
	assert_int_equal(inv.rdma_note[0], '\0');
	npf_inventory_clear(&inv);
}

static void read_container_gaps(void **state)
{
	struct npf_inventory inv;
	const struct npf_rdma_port *p;
	(void)state;

	assert_int_equal(load("container-gaps", &inv), 1);
	p = &inv.rdma[0].ports[0];
	assert_int_equal(p->gid_tbl_len, 8);
	assert_int_equal(p->n_gids, 4);
	assert_null(gid_find(p, 0));
	assert_null(gid_find(p, 3));
	assert_non_null(gid_find(p, 4));
	assert_gid_text(gid_find(p, 7), "::ffff:198.18.1.7");
	assert_int_equal(gid_find(p, 7)->type, NPF_GID_ROCE_V2);
	assert_string_equal(gid_find(p, 7)->ndev, "net1");
	npf_inventory_clear(&inv);
}

static void read_ib(void **state)
{
	struct npf_inventory inv;
	const struct npf_rdma_port *p;
	(void)state;

	assert_int_equal(load("ib", &inv), 2);
	assert_string_equal(inv.rdma[0].name, "mlx5_0");
	assert_string_equal(inv.rdma[1].name, "mlx5_1");
	p = &inv.rdma[0].ports[0];
	assert_int_equal(p->link_layer, NPF_LL_INFINIBAND);
	assert_int_equal(p->active_speed, RDMA_SPEED_HDR);
	assert_int_equal(p->n_gids, 2);
	assert_gid_text(gid_find(p, 1), "fec0:0:7:1:b83f:d203:a1:1");
	assert_string_equal(gid_find(p, 0)->ndev, "");
	/* No gid_attrs/types at all: IB GIDs are kept as IB/RoCE v1. */
	p = &inv.rdma[1].ports[0];
	assert_int_equal(p->state, NPF_PORT_INIT);
	assert_int_equal(p->n_gids, 1);
	assert_int_equal(p->gids[0].type, NPF_GID_IB_ROCE_V1);
	npf_inventory_clear(&inv);
}

static void read_ports_down_init(void **state)
{
	struct npf_inventory inv;
	const struct npf_rdma_dev *d;
	(void)state;

	assert_int_equal(load("ports-down-init", &inv), 1);
	d = &inv.rdma[0];
	assert_string_equal(d->node_type, "RNIC");
	assert_int_equal(d->n_ports, 2);
	assert_int_equal(d->ports[0].port, 1);
	assert_int_equal(d->ports[0].state, NPF_PORT_DOWN);
	assert_int_equal(d->ports[0].phys_state, 3);
	assert_int_equal(d->ports[0].n_gids, 2);
	assert_int_equal(d->ports[1].port, 2);
	assert_int_equal(d->ports[1].state, NPF_PORT_INIT);
	assert_int_equal(d->ports[1].phys_state, 2);
	assert_int_equal(d->ports[1].active_width, RDMA_WIDTH_1X);
	assert_int_equal(d->ports[1].n_gids, 4);
	npf_inventory_clear(&inv);
}

static void read_vlan_and_two_hcas(void **state)
{
	struct npf_inventory inv;
	const struct npf_rdma_port *p;
	(void)state;

	assert_int_equal(load("vlan-netdev", &inv), 1);
	p = &inv.rdma[0].ports[0];
	assert_int_equal(p->n_gids, 8);
	assert_string_equal(gid_find(p, 3)->ndev, "eth0");
	assert_string_equal(gid_find(p, 7)->ndev, "eth0.100");
	assert_gid_text(gid_find(p, 7), "::ffff:198.19.100.1");
	npf_inventory_clear(&inv);

	assert_int_equal(load("two-hcas", &inv), 2);
	assert_int_equal(inv.rdma[0].ports[0].n_gids, 4);
	assert_int_equal(inv.rdma[1].ports[0].n_gids, 4);
	assert_int_equal(inv.rdma[1].ports[0].gid_tbl_len, 6);
	assert_non_null(gid_find(&inv.rdma[1].ports[0], 5));
	npf_inventory_clear(&inv);
}

static void read_appends(void **state)
{
	struct npf_inventory inv;
	char root[512];
	(void)state;

	assert_int_equal(load("mlx5-roce", &inv), 1);
	fixture_root("two-hcas", root, sizeof(root));
	assert_int_equal(rdma_sysfs_read(root, &inv), 2);
	assert_int_equal(inv.n_rdma, 3);
	assert_string_equal(inv.rdma[0].name, "mlx5_0");
	assert_true(inv.rdma[1].node_guid == 0x0c42a10300658a60ull);
	npf_inventory_clear(&inv);
}

static void read_junk(void **state)
{
	struct npf_inventory inv;
	const struct npf_rdma_dev *d;
	const struct npf_rdma_port *p;
	(void)state;

	/* stray_file and .hidden are skipped; a device without ports/ stays. */
	assert_int_equal(load("junk", &inv), 2);
	d = &inv.rdma[0];
	assert_string_equal(d->name, "mlx5_9");
	assert_true(d->node_guid == 0);
	assert_string_equal(d->node_type, "");
	/* "abc", "0" and "01" are not ports. */
	assert_int_equal(d->n_ports, 1);
	p = &d->ports[0];
	assert_int_equal(p->state, NPF_PORT_NOP);
	assert_int_equal(p->phys_state, -1);
	assert_string_equal(p->rate, "fast");
	assert_int_equal(p->active_speed, -1);
	/* gids/x and gids/007 are not slots; 0-4 are. */
	assert_int_equal(p->gid_tbl_len, 5);
	assert_non_null(gid_find(p, 0));
	assert_null(gid_find(p, 1));     /* "zzzz" */
	assert_non_null(gid_find(p, 2)); /* bad ndev name: kept, ndev empty */
	assert_string_equal(gid_find(p, 2)->ndev, "");
	assert_int_equal(gid_find(p, 3)->type, NPF_GID_TYPE_UNKNOWN);
	assert_null(gid_find(p, 4)); /* longer than any attribute */
	assert_string_equal(inv.rdma[1].name, "rxe_noports");
	assert_int_equal(inv.rdma[1].n_ports, 0);
	npf_inventory_clear(&inv);
}

/* PCIe locality as NCCL's path types order it (lib/rdma_topo.h). */
static void pci_path_types(void **state)
{
	static const char sw[] = "pci0000:00/0000:00:01.0/0000:01:00.0";
	char gpu[128], nic[128], deep[160];
	(void)state;

	snprintf(gpu, sizeof(gpu), "%s/0000:02:08.0/0000:05:00.0", sw);
	snprintf(nic, sizeof(nic), "%s/0000:02:10.0/0000:06:00.0", sw);
	/* Two switches deep under one root port: several bridges, no host bridge. */
	snprintf(deep, sizeof(deep), "%s/0000:02:08.0/0000:03:00.0/0000:04:00.0/0000:05:00.0", sw);
	assert_int_equal(rdma_pci_path(gpu, nic), RDMA_PATH_PIX);
	assert_int_equal(rdma_pci_path(deep, nic), RDMA_PATH_PXB);
	assert_int_equal(rdma_pci_path("pci0000:00/0000:00:01.0/0000:05:00.0",
				       "pci0000:00/0000:00:03.0/0000:21:00.0"),
			 RDMA_PATH_PHB);
	assert_int_equal(rdma_pci_path("pci0000:00/0000:00:01.0/0000:05:00.0",
				       "pci0000:80/0000:80:01.0/0000:81:00.0"),
			 RDMA_PATH_SYS);
	assert_int_equal(rdma_pci_path("", nic), RDMA_PATH_UNKNOWN);
	assert_int_equal(rdma_pci_path("devices/x", nic), RDMA_PATH_UNKNOWN);
	assert_int_equal(rdma_pci_path(NULL, nic), RDMA_PATH_UNKNOWN);
}

/* gpu-rails: two NVIDIA GPUs (an NVIDIA audio function and another vendor's 3D controller
 * are not GPUs), each with the NIC on its PCIe switch as its closest; mlx5_2 on a root
 * port of its own is nobody's. A tree without bus/pci has no GPUs. */
static void read_gpu_topology(void **state)
{
	struct npf_inventory inv = { 0 };
	char root[512];
	(void)state;

	fixture_root("gpu-rails", root, sizeof(root));
	assert_int_equal(rdma_sysfs_read(root, &inv), 3);
	assert_int_equal(rdma_sysfs_read_topology(root, &inv), 2);
	assert_int_equal(inv.n_gpus, 2);
	assert_string_equal(inv.rdma[0].name, "mlx5_0");
	assert_string_equal(inv.rdma[0].pci,
			    "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:06:00.0");
	assert_true(inv.rdma[0].gpu_rail);
	assert_true(inv.rdma[1].gpu_rail);
	assert_string_equal(inv.rdma[2].pci, "pci0000:00/0000:00:03.0/0000:21:00.0");
	assert_false(inv.rdma[2].gpu_rail);
	npf_inventory_clear(&inv);

	fixture_root("mlx5-roce", root, sizeof(root));
	assert_true(rdma_sysfs_read(root, &inv) > 0);
	assert_int_equal(rdma_sysfs_read_topology(root, &inv), 0);
	assert_int_equal(inv.n_gpus, 0);
	assert_string_equal(inv.rdma[0].pci, "");
	assert_true(inv.rdma[0].gpu_rail);
	npf_inventory_clear(&inv);
	assert_true(rdma_sysfs_read_topology("/nonexistent-npf-root", &inv) < 0);
}

static void read_no_rdma_stack(void **state)
{
	struct npf_inventory inv = { 0 };
	char root[512];
	(void)state;

	/* A tree without class/infiniband: no devices, a note, success. */
	snprintf(root, sizeof(root), "%s/sysfs", NPF_FIXTURES);
	assert_int_equal(rdma_sysfs_read(root, &inv), 0);
	assert_int_equal(inv.n_rdma, 0);
	assert_non_null(strstr(inv.rdma_note, "no RDMA devices"));
	npf_inventory_clear(&inv);
	/* A root that does not exist is the caller's mistake. */
	assert_int_equal(rdma_sysfs_read("/nonexistent/npf-rdma-root", &inv), -ENOENT);
	assert_int_equal(inv.n_rdma, 0);
}

static void read_one_device(void **state)
{
	struct npf_rdma_dev dev;
	char root[512];
	(void)state;

	fixture_root("two-hcas", root, sizeof(root));
	assert_int_equal(rdma_sysfs_read_dev(root, "mlx5_1", &dev), 0);
	assert_string_equal(dev.name, "mlx5_1");
	assert_int_equal(dev.n_ports, 1);
	npf_rdma_dev_clear(&dev);
	assert_int_equal(rdma_sysfs_read_dev(root, "mlx5_7", &dev), -ENOENT);
	assert_int_equal(rdma_sysfs_read_dev(root, "../two-hcas", &dev), -EINVAL);
	assert_int_equal(rdma_sysfs_read_dev(root, NULL, &dev), -EINVAL);
}

/* ---- trees built at run time: things git cannot carry ---- */

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int rm_tree(const char *root)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void fifo_does_not_hang(void **state)
{
	char root[] = "/tmp/npf-rdma-XXXXXX", path[256];
	struct npf_inventory inv = { 0 };
	(void)state;

	assert_non_null(mkdtemp(root));
	put(root, "class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
	put(root, "class/infiniband/mlx5_0/ports/1/gids/0", "::ffff:198.18.0.1\n");
	put(root, "class/infiniband/mlx5_0/ports/1/gid_attrs/types/0", "RoCE v2\n");
	/* A FIFO where sysfs has a file: opened non-blocking and refused. */
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0/ports/1/state", root);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", root);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(rdma_sysfs_read(root, &inv), 1);
	assert_int_equal(inv.rdma[0].ports[0].state, NPF_PORT_NOP);
	assert_int_equal(inv.rdma[0].ports[0].n_gids, 1);
	assert_string_equal(inv.rdma[0].ports[0].gids[0].ndev, "");
	npf_inventory_clear(&inv);
	assert_int_equal(rm_tree(root), 0);
}

static void gid_table_is_capped(void **state)
{
	char root[] = "/tmp/npf-rdma-XXXXXX", rel[128];
	struct npf_inventory inv = { 0 };
	(void)state;

	assert_non_null(mkdtemp(root));
	put(root, "class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
	snprintf(rel, sizeof(rel), "class/infiniband/mlx5_0/ports/1/gids/%d", RDMA_SYSFS_MAX_GIDS);
	put(root, rel, "::ffff:198.18.0.1\n");
	put(root, "class/infiniband/mlx5_0/ports/1/gids/2", "::ffff:198.18.0.2\n");
	put(root, "class/infiniband/mlx5_0/ports/1/gid_attrs/types/2", "RoCE v2\n");
	snprintf(rel, sizeof(rel), "class/infiniband/mlx5_0/ports/%d/state",
		 RDMA_SYSFS_MAX_PORTS + 1);
	put(root, rel, "4: ACTIVE\n");
	assert_int_equal(rdma_sysfs_read(root, &inv), 1);
	assert_int_equal(inv.rdma[0].n_ports, 1);
	assert_int_equal(inv.rdma[0].ports[0].gid_tbl_len, 3);
	assert_int_equal(inv.rdma[0].ports[0].n_gids, 1);
	npf_inventory_clear(&inv);
	/* An empty class/infiniband is "no devices" too. */
	assert_int_equal(rm_tree(root), 0);
	assert_non_null(mkdtemp(strcpy(root, "/tmp/npf-rdma-XXXXXX")));
	snprintf(rel, sizeof(rel), "%s/class", root);
	assert_int_equal(mkdir(rel, 0755), 0);
	snprintf(rel, sizeof(rel), "%s/class/infiniband", root);
	assert_int_equal(mkdir(rel, 0755), 0);
	assert_int_equal(rdma_sysfs_read(root, &inv), 0);
	assert_non_null(strstr(inv.rdma_note, "empty"));
	npf_inventory_clear(&inv);
	assert_int_equal(rm_tree(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_gid_forms),
		cmocka_unit_test(parse_states),
		cmocka_unit_test(parse_link_layer_and_types),
		cmocka_unit_test(parse_rate),
		cmocka_unit_test(format_rate_round_trip),
		cmocka_unit_test(parse_guid_type_ndev),
		cmocka_unit_test(read_mlx5_roce),
		cmocka_unit_test(read_container_gaps),
		cmocka_unit_test(read_ib),
		cmocka_unit_test(read_ports_down_init),
		cmocka_unit_test(read_vlan_and_two_hcas),
		cmocka_unit_test(read_appends),
		cmocka_unit_test(read_junk),
		cmocka_unit_test(pci_path_types),
		cmocka_unit_test(read_gpu_topology),
		cmocka_unit_test(read_no_rdma_stack),
		cmocka_unit_test(read_one_device),
		cmocka_unit_test(fifo_does_not_hang),
		cmocka_unit_test(gid_table_is_capped),
	};
	return npf_run_tests(tests, NULL, NULL);
}
