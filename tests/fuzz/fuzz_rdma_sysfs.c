// SPDX-License-Identifier: MIT
/* Fuzzes the RDMA sysfs content parsers (input = fields split by 0xff) and the GID predictor. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "gid.h"
#include "model.h"
#include "rdma_sysfs.h"
#include "rdma_topo.h"

#define MAX_GIDS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Oracles: a violated invariant aborts, which is what the fuzzer reports. */
static void check(int cond)
{
	if (!cond)
		abort();
}

static void gid_field(const char *p, size_t n, struct npf_rdma_port *port)
{
	uint8_t raw[16], back[16];
	char txt[GID_STR_LEN];

	if (rdma_parse_gid(p, n, raw) != 0)
		return;
	/* What we print must read back identically. */
	gid_format(raw, txt, sizeof(txt));
	check(rdma_parse_gid(txt, strlen(txt), back) == 0);
	check(memcmp(raw, back, 16) == 0);
	if (port->n_gids < MAX_GIDS) {
		struct npf_gid *g = &port->gids[port->n_gids];

		memset(g, 0, sizeof(*g));
		g->index = (int)port->n_gids * 2; /* leave gaps, as containers do */
		memcpy(g->raw, raw, 16);
		g->type = NPF_GID_ROCE_V2;
		gid_fill_ipv4(g);
		port->n_gids++;
	}
}

static void field(unsigned kind, const char *p, size_t n, struct npf_rdma_port *port)
{
	enum npf_port_state st;
	enum npf_link_layer ll;
	enum npf_gid_type t;
	char buf[48], ndev[IFNAMSIZ], node_type[16];
	uint64_t guid, back;
	int v, sp, wd;

	switch (kind % 9) {
	case 0:
		gid_field(p, n, port);
		break;
	case 1:
		if (rdma_parse_port_state(p, n, &st) == 0)
			check(st >= NPF_PORT_NOP && st <= NPF_PORT_ACTIVE_DEFER);
		break;
	case 2:
		if (rdma_parse_phys_state(p, n, &v) == 0)
			check(v >= 0 && v <= 15 && rdma_phys_state_name(v) != NULL);
		break;
	case 3:
		if (rdma_parse_link_layer(p, n, &ll) == 0)
			port->link_layer = ll;
		break;
	case 4:
		if (rdma_parse_rate(p, n, buf, sizeof(buf), &sp, &wd) == 0) {
			check(strlen(buf) < sizeof(buf));
			if (sp > 0 && wd > 0) {
				check(rdma_format_rate(sp, wd, buf, sizeof(buf)) == 0);
				check(rdma_parse_rate(buf, strlen(buf), buf, sizeof(buf), &v,
						      &wd) == 0 &&
				      v == sp);
			}
		}
		break;
	case 5:
		if (rdma_parse_gid_type(p, n, &t) == 0 && port->n_gids)
			port->gids[port->n_gids - 1].type = t;
		break;
	case 6:
		if (rdma_parse_node_guid(p, n, &guid) == 0) {
			snprintf(buf, sizeof(buf), "%04x:%04x:%04x:%04x",
				 (unsigned)(guid >> 48) & 0xffff, (unsigned)(guid >> 32) & 0xffff,
				 (unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff);
			check(rdma_parse_node_guid(buf, strlen(buf), &back) == 0 && back == guid);
		}
		break;
	case 7:
		if (rdma_parse_node_type(p, n, node_type, sizeof(node_type)) == 0)
			check(strlen(node_type) < sizeof(node_type));
		break;
	case 8:
		if (rdma_parse_ndev(p, n, ndev) == 0)
			check(strlen(ndev) > 0 && strlen(ndev) < IFNAMSIZ && !strchr(ndev, '/'));
		break;
	}
}

/* The PCI paths of a GPU and a device (sysfs link targets): the first two fields. The path
 * type is symmetric, and a lone device at a known distance is its GPU's rail. */
static void pci_paths(const uint8_t *data, size_t size)
{
	char a[256] = "", b[256] = "";
	const uint8_t *sep = memchr(data, 0xff, size);
	size_t na = sep ? (size_t)(sep - data) : size, nb = sep ? size - na - 1 : 0;
	struct npf_rdma_dev dev;
	struct npf_inventory inv = { .rdma = &dev, .n_rdma = 1 };
	const char *gpus[1] = { a };
	enum rdma_pci_path t;

	memcpy(a, data, na < sizeof(a) - 1 ? na : sizeof(a) - 1);
	if (sep)
		memcpy(b, sep + 1, nb < sizeof(b) - 1 ? nb : sizeof(b) - 1);
	t = rdma_pci_path(a, b);
	check(t <= RDMA_PATH_UNKNOWN && t == rdma_pci_path(b, a));
	memset(&dev, 0, sizeof(dev));
	snprintf(dev.pci, sizeof(dev.pci), "%s", b);
	rdma_topo_rails(&inv, gpus, 1);
	check(inv.n_gpus == 1);
	if (rdma_pci_path(a, dev.pci) != RDMA_PATH_UNKNOWN || !dev.pci[0])
		check(dev.gpu_rail);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npf_gid gids[MAX_GIDS];
	struct npf_rdma_port port = { .gids = gids, .link_layer = NPF_LL_ETHERNET };
	const char *p = (const char *)data;
	size_t left = size;
	struct gid_policy pol;
	int idx;

	pci_paths(data, size);
	for (unsigned kind = 0; kind < 4096; kind++) {
		const char *sep = memchr(p, 0xff, left);
		size_t n = sep ? (size_t)(sep - p) : left;

		field(kind, p, n, &port);
		if (!sep)
			break;
		p = sep + 1;
		left -= n + 1;
	}
	/* The predictor must stay inside the table whatever the GIDs are. */
	port.gid_tbl_len = (int)(port.n_gids * 2) + (int)(size % 3);
	gid_policy_init(&pol);
	idx = gid_nccl_auto_index(&port, &pol);
	if (port.link_layer == NPF_LL_UNKNOWN)
		check(idx == -1);
	else
		check(idx >= 0 && (idx == 0 || idx < port.gid_tbl_len));
	gid_policy_set_family(&pol, "AF_INET6");
	gid_policy_set_range(&pol, size % 2 ? "2001:db8::/33" : "2001:db8::/-1");
	idx = gid_nccl_auto_index(&port, &pol);
	check(idx == -1 || idx == 0 || idx < port.gid_tbl_len);
	return 0;
}
