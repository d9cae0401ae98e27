// SPDX-License-Identifier: MIT
/* RDMA port <-> netdev join: RoCE from the GID table's ndevs, IB by IPoIB GID. */
#include "rdma_join.h"

#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>

/* IPoIB hardware address: 4 bytes (flags + QPN), then the port GID. */
#define IPOIB_HWADDR_LEN 20
#define IPOIB_GID_OFFSET 4

static void mark(struct npf_inventory *inv, const char *name)
{
	struct npf_iface *ifc;

	if (!name[0])
		return;
	ifc = npf_inventory_find_name(inv, name);
	if (ifc)
		ifc->roles |= NPF_ROLE_RDMA;
}

static void join_roce(struct npf_inventory *inv, struct npf_rdma_port *p)
{
	const char *pick = NULL, *first = NULL;

	for (size_t i = 0; i < p->n_gids; i++) {
		const struct npf_gid *g = &p->gids[i];

		if (!g->ndev[0])
			continue;
		if (!first)
			first = g->ndev;
		if (!pick && g->is_ipv4 && g->type == NPF_GID_ROCE_V2)
			pick = g->ndev;
		mark(inv, g->ndev);
	}
	if (!pick)
		pick = first;
	if (pick)
		snprintf(p->netdev, sizeof(p->netdev), "%s", pick);
	mark(inv, p->netdev);
}

static const struct npf_gid *gid0(const struct npf_rdma_port *p)
{
	for (size_t i = 0; i < p->n_gids; i++)
		if (p->gids[i].index == 0)
			return &p->gids[i];
	return NULL;
}

bool rdma_join_is_ipoib_of(const struct npf_iface *ifc, const struct npf_rdma_port *p)
{
	const struct npf_gid *g = gid0(p);

	return g && p->link_layer == NPF_LL_INFINIBAND && ifc->arphrd == ARPHRD_INFINIBAND &&
	       ifc->mac_len == IPOIB_HWADDR_LEN &&
	       memcmp(ifc->mac + IPOIB_GID_OFFSET, g->raw, 16) == 0;
}

/* An address peers can reach: the one a probe would have tested. */
static bool holds_address(const struct npf_iface *ifc)
{
	for (size_t a = 0; a < ifc->n_addrs; a++)
		if (!npf_addr_is_local_only(&ifc->addrs[a]))
			return true;
	return false;
}

static void join_ib(struct npf_inventory *inv, struct npf_rdma_port *p)
{
	const struct npf_iface *best = NULL;

	for (size_t i = 0; i < inv->n_ifaces; i++) {
		struct npf_iface *ifc = &inv->ifaces[i];
		bool a, b;

		if (!rdma_join_is_ipoib_of(ifc, p))
			continue;
		ifc->roles |= NPF_ROLE_RDMA;
		if (!best) {
			best = ifc;
			continue;
		}
		/* The netdev holding an address first (a P_Key child often holds the job's
		 * address while the parent holds none), then the parent, then the lowest
		 * ifindex. */
		a = holds_address(ifc);
		b = holds_address(best);
		if (a != b) {
			if (a)
				best = ifc;
			continue;
		}
		if ((best->link != 0 && ifc->link == 0) ||
		    ((best->link == 0) == (ifc->link == 0) && ifc->ifindex < best->ifindex))
			best = ifc;
	}
	if (best)
		snprintf(p->netdev, sizeof(p->netdev), "%s", best->name);
}

void rdma_join_netdevs(struct npf_inventory *inv)
{
	for (size_t d = 0; d < inv->n_rdma; d++) {
		for (size_t i = 0; i < inv->rdma[d].n_ports; i++) {
			struct npf_rdma_port *p = &inv->rdma[d].ports[i];

			if (p->link_layer == NPF_LL_ETHERNET)
				join_roce(inv, p);
			else if (p->link_layer == NPF_LL_INFINIBAND)
				join_ib(inv, p);
		}
	}
}
