// SPDX-License-Identifier: MIT
/* A healthy N-node check as one node's sparse probe plan leaves it. */
#include "sparse_check.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "plan.h"

static void node_addr(size_t i, struct npf_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->prefixlen = 16;
	a->addr[0] = 198;
	a->addr[1] = 18;
	a->addr[2] = (uint8_t)(i / 256);
	a->addr[3] = (uint8_t)(i % 256);
}

static int add_cand(struct npf_node *nd, size_t i)
{
	nd->cands = calloc(1, sizeof(*nd->cands));
	nd->ifnames = calloc(1, sizeof(*nd->ifnames));
	if (!nd->cands || !nd->ifnames)
		return -ENOMEM;
	nd->n_cands = nd->n_ifnames = 1;
	snprintf(nd->cands[0].ifname, IFNAMSIZ, "ens1f0");
	snprintf(nd->ifnames[0], IFNAMSIZ, "ens1f0");
	node_addr(i, &nd->cands[0].addr);
	nd->cands[0].kind = NPF_KIND_PHYSICAL;
	nd->cands[0].speed_mbps = 100000;
	return 0;
}

static int add_inventory(struct npf_inventory *inv)
{
	struct npf_iface *ifc = calloc(1, sizeof(*ifc));
	struct npf_addr a;

	if (!ifc)
		return -ENOMEM;
	inv->ifaces = ifc;
	inv->n_ifaces = 1;
	snprintf(ifc->name, sizeof(ifc->name), "ens1f0");
	ifc->ifindex = 2;
	ifc->flags = IFF_UP | IFF_RUNNING;
	ifc->kind = NPF_KIND_PHYSICAL;
	ifc->speed_mbps = 100000;
	node_addr(1, &a);
	return npf_iface_add_addr(ifc, &a);
}

int sparse_check_build(size_t n, uint32_t full_mesh_max, struct npf_check *chk,
		       struct npf_inventory *inv, size_t *n_planned)
{
	const char **names = NULL;
	char(*buf)[NPF_NAME_MAX] = NULL;
	size_t *plan = NULL, n_plan = 0;
	int r = -ENOMEM;

	memset(chk, 0, sizeof(*chk));
	if (inv)
		memset(inv, 0, sizeof(*inv));
	if (n < 2)
		return -EINVAL;
	names = calloc(n - 1, sizeof(*names));
	buf = calloc(n, sizeof(*buf));
	chk->nodes = calloc(n, sizeof(*chk->nodes));
	chk->links = calloc(n - 1, sizeof(*chk->links));
	if (!names || !buf || !chk->nodes || !chk->links)
		goto out;
	chk->n_nodes = n;
	chk->n_links = n - 1;
	chk->timeout_ms = 3000;
	for (size_t i = 0; i < n; i++) {
		snprintf(buf[i], NPF_NAME_MAX, "node%zu", i + 1);
		snprintf(chk->nodes[i].name, NPF_NAME_MAX, "%s", buf[i]);
		if (i)
			names[i - 1] = buf[i];
	}
	r = npf_plan_peers(buf[0], names, n - 1, full_mesh_max, 4, &plan, &n_plan);
	if (r < 0)
		goto out;
	chk->sparse = n_plan < n - 1;
	r = add_cand(&chk->nodes[0], 1);
	for (size_t p = 1; p < n && r == 0; p++) {
		struct npf_link *l = &chk->links[p - 1];

		snprintf(l->ifname, IFNAMSIZ, "ens1f0");
		l->peer = (int)p;
		l->fwd = l->rev = NPF_OUT_NOT_PROBED;
		snprintf(chk->nodes[p].error, sizeof(chk->nodes[p].error),
			 "not contacted: outside this node's probe plan");
	}
	for (size_t j = 0; j < n_plan && r == 0; j++) {
		size_t p = plan[j] + 1; /* plan indexes names[], which starts at node2 */
		struct npf_node *nd = &chk->nodes[p];
		struct npf_link *l = &chk->links[p - 1];

		nd->available = nd->probed = true;
		nd->error[0] = '\0';
		r = add_cand(nd, p + 1);
		l->fwd = l->rev = NPF_OUT_OK;
		l->fwd_rtt_us = l->rev_rtt_us = 100;
		snprintf(l->peer_if, IFNAMSIZ, "ens1f0");
		node_addr(p + 1, &l->peer_addr);
	}
	if (r == 0 && inv)
		r = add_inventory(inv);
	if (r == 0 && n_planned)
		*n_planned = n_plan;
out:
	free(plan);
	free(names);
	free(buf);
	return r;
}
