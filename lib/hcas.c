// SPDX-License-Identifier: MIT
/* The RDMA facts stage: which of this node's RDMA ports the job's traffic may use, which GID
 * index each consumer gets, NCCL_IB_DISABLE when none qualifies (docs/decision.md §5 "RDMA:
 * which ports", §6). The per-node rules (publish.c) hand these values on. */
#include "decide.h"
#include "gid.h"
#include "ncclmatch.h"
#include "rdma_join.h"

#include <errno.h>
#include <stdlib.h>

static void gid_text(const struct npf_rdma_port *p, int idx, char *buf, size_t len)
{
	const struct npf_gid *g = idx >= 0 ? gid_find(p, idx) : NULL;
	struct npf_addr a = {.family = AF_INET6};
	char ip[INET6_ADDRSTRLEN];

	if (!g) {
		snprintf(buf, len, "%d (unpopulated)", idx);
		return;
	}
	memcpy(a.addr, g->raw, 16);
	snprintf(buf, len, "%d (%s, %s)", idx, npf_addr_str(&a, ip, sizeof(ip)),
		 npf_gid_type_name(g->type));
}

struct port_ref {
	const struct npf_rdma_dev *dev;
	const struct npf_rdma_port *port;
	struct npf_hca *hca;
	struct npf_addr addr; /* the probed address of its netdev */
	int net;
};

/* A candidate GID policy for NCCL >= 2.21.5 and the environment that produces it. */
struct gid_try {
	struct gid_policy gp;
	bool family6;
	char range[INET6_ADDRSTRLEN + 5];
	size_t hits;
};

static size_t gid_try_count(struct port_ref *refs, size_t n, struct gid_try *t)
{
	t->hits = 0;
	for (size_t i = 0; i < n; i++)
		if (refs[i].hca->published && refs[i].port->link_layer == NPF_LL_ETHERNET &&
		    gid_nccl_auto_index(refs[i].port, &t->gp) == refs[i].hca->gid_index)
			t->hits++;
	return t->hits;
}

/* NCCL >= 2.21.5 picks a GID per port on its own; set NCCL_IB_ADDR_FAMILY / _RANGE
 * only when that pick misses the RoCE v2 GID of the probed address, and verify the
 * setting with the same model of ncclIbGetGidIndex (lib/gid). */
static void gid_policy_dynamic(struct ctx *c, struct port_ref *refs, size_t n, char **vals)
{
	struct gid_try tries[1 + 1 + REC_NETS_MAX / 64];
	size_t nt = 0, roce = 0, best = 0;
	bool any6 = false;

	for (size_t i = 0; i < n; i++)
		if (refs[i].hca->published && refs[i].port->link_layer == NPF_LL_ETHERNET) {
			roce++;
			any6 = any6 || refs[i].addr.family == AF_INET6;
		}
	if (!roce)
		return;
	memset(tries, 0, sizeof(tries));
	gid_policy_init(&tries[nt++].gp);
	if (any6 && dec_var_wanted(c, NPF_VAR_NCCL_IB_ADDR_FAMILY)) {
		gid_policy_init(&tries[nt].gp);
		gid_policy_set_family(&tries[nt].gp, "AF_INET6");
		tries[nt++].family6 = true;
	}
	/* A range per network the RoCE ports were probed on, best-ranked first. */
	for (size_t k = 0; k < c->n_nets && nt < sizeof(tries) / sizeof(tries[0]); k++) {
		bool used = false;
		struct gid_try *t = &tries[nt];

		for (size_t i = 0; i < n; i++)
			used = used || (refs[i].hca->published && refs[i].net == (int)k &&
					refs[i].port->link_layer == NPF_LL_ETHERNET);
		if (!used || !dec_var_wanted(c, NPF_VAR_NCCL_IB_ADDR_RANGE))
			continue;
		if (c->nets[k].prefix.family == AF_INET6 &&
		    !dec_var_wanted(c, NPF_VAR_NCCL_IB_ADDR_FAMILY))
			continue;
		gid_policy_init(&t->gp);
		t->family6 = c->nets[k].prefix.family == AF_INET6;
		gid_policy_set_family(&t->gp, t->family6 ? "AF_INET6" : "AF_INET");
		cidr_str(&c->nets[k].prefix, t->range, sizeof(t->range));
		if (gid_policy_set_range(&t->gp, t->range) == 0)
			nt++;
	}
	for (size_t t = 0; t < nt; t++)
		if (gid_try_count(refs, n, &tries[t]) > tries[best].hits)
			best = t;
	for (size_t i = 0; i < n; i++) {
		struct npf_hca *h = refs[i].hca;
		char want[96], got[96];

		if (!h->published)
			continue;
		h->auto_gid = gid_nccl_auto_index(refs[i].port, &tries[best].gp);
		if (refs[i].port->link_layer != NPF_LL_ETHERNET || h->auto_gid == h->gid_index)
			continue;
		h->published = false;
		gid_text(refs[i].port, h->auto_gid, got, sizeof(got));
		gid_text(refs[i].port, h->gid_index, want, sizeof(want));
		bfmt(h->why, sizeof(h->why), "NCCL's GID auto-detection would use index %s, not %s",
		     got, want);
		/* dec_build_hcas() notes every port left out, with this why. */
	}
	if (tries[best].family6)
		dec_set_var(c, vals, NPF_VAR_NCCL_IB_ADDR_FAMILY, "AF_INET6");
	if (tries[best].range[0])
		dec_set_var(c, vals, NPF_VAR_NCCL_IB_ADDR_RANGE, tries[best].range);
}

/* NCCL <= 2.20 uses one NCCL_IB_GID_INDEX (default 0) on every RoCE port: publish it
 * when the chosen ports agree, else keep the ports of the most common index. */
static void gid_policy_legacy(struct ctx *c, struct port_ref *refs, size_t n, char **vals)
{
	int k = -1;
	size_t best = 0, roce = 0;
	char buf[16];

	for (size_t i = 0; i < n; i++) {
		size_t cnt = 0;
		int idx;

		if (!refs[i].hca->published || refs[i].port->link_layer != NPF_LL_ETHERNET)
			continue;
		roce++;
		idx = refs[i].hca->gid_index;
		for (size_t j = 0; j < n; j++)
			if (refs[j].hca->published && refs[j].port->link_layer == NPF_LL_ETHERNET &&
			    refs[j].hca->gid_index == idx)
				cnt++;
		if (cnt > best || (cnt == best && idx < k)) {
			best = cnt;
			k = idx;
		}
	}
	if (!roce)
		return;
	/* Without NCCL_IB_GID_INDEX NCCL stays on its default. */
	if (!dec_var_wanted(c, NPF_VAR_NCCL_IB_GID_INDEX))
		k = 0;
	for (size_t i = 0; i < n; i++) {
		struct npf_hca *h = refs[i].hca;

		if (!h->published || refs[i].port->link_layer != NPF_LL_ETHERNET)
			continue;
		h->auto_gid = k;
		if (h->gid_index == k)
			continue;
		h->published = false;
		snprintf(h->why, sizeof(h->why),
			 "its RoCE v2 GID of the probed address is index %d, but NCCL < 2.21.5 "
			 "uses one index (%d) for every port",
			 h->gid_index, k);
		/* dec_build_hcas() notes every port left out, with this why. */
	}
	snprintf(buf, sizeof(buf), "%d", k);
	dec_set_var(c, vals, NPF_VAR_NCCL_IB_GID_INDEX, buf);
}

static void set_pre(struct ctx *c, char **pre, enum npf_var v, const char *value)
{
	if (c->err)
		return;
	free(pre[v]);
	pre[v] = strdup(value);
	if (!pre[v])
		c->err = -ENOMEM;
}

static void clear_gid_vars(char **pre)
{
	dec_drop_var(pre, NPF_VAR_NCCL_IB_GID_INDEX);
	dec_drop_var(pre, NPF_VAR_UCX_IB_GID_INDEX);
	dec_drop_var(pre, NPF_VAR_NCCL_IB_ADDR_FAMILY);
	dec_drop_var(pre, NPF_VAR_NCCL_IB_ADDR_RANGE);
}

/* UCX when the published RoCE ports need different indices: UCX_IB_GID_INDEX is one
 * value for every device of the process (the IB md's GID_INDEX, applied per port in
 * uct_ib_iface_init_roce_gid_info), so no value steers it; say whether UCX's own pick
 * (uct_ib_device_select_gid, modelled by gid_ucx_auto_index) is right anyway. */
static void ucx_gid_note(struct ctx *c, struct port_ref *refs, size_t n)
{
	char port[NPF_NAME_MAX + 16] = "";
	int got = -1, want = -1;

	if (!dec_var_wanted(c, NPF_VAR_UCX_IB_GID_INDEX))
		return;
	for (size_t i = 0; i < n && !port[0]; i++) {
		const struct npf_hca *h = refs[i].hca;
		int u;

		if (!h->published || refs[i].port->link_layer != NPF_LL_ETHERNET)
			continue;
		u = gid_ucx_auto_index(refs[i].port);
		if (u == h->gid_index)
			continue;
		snprintf(port, sizeof(port), "%s:%d", h->dev, h->port);
		got = u;
		want = h->gid_index;
	}
	if (!port[0])
		dec_note(c, NPF_NOTE_GID_VERSIONS, NPF_VAR_UCX_IB_GID_INDEX, NULL, NULL,
			 "UCX_IB_GID_INDEX left out: the published ports need different GID "
			 "indices and UCX takes one for every device; UCX's own choice "
			 "(uct_ib_device_select_gid: lowest RoCE v2 IPv4 GID) is already the "
			 "probed address's GID on every published port");
	else
		dec_note(c, NPF_NOTE_GID_VERSIONS, NPF_VAR_UCX_IB_GID_INDEX, NULL, port,
			 "UCX_IB_GID_INDEX left out: the published ports need different GID "
			 "indices and UCX takes one for every device; UCX's own choice "
			 "(uct_ib_device_select_gid) would use index %d on %s, not %d: UCX "
			 "traffic there may fail (UCX >= 1.18: UCX_IB_ROCE_SUBNETS=%s selects "
			 "by subnet instead)",
			 got, port, want, c->out->cidr);
}

/* GID for every NCCL. When every published RoCE port's GID of the probed address has the
 * same index, NCCL_IB_GID_INDEX = that index is right for old NCCL (one index, default 0)
 * and new (ncclIbGetGidIndex honours an explicit index before auto-detection), and
 * UCX_IB_GID_INDEX (uct_ib_device_select_gid: an explicit index is used as is) steers UCX
 * the same way. Otherwise the per-version rules stay, and a note says which NCCL versions
 * the environment holds for. */
static void gid_decide(struct ctx *c, struct port_ref *refs, size_t n, char **pre)
{
	int k = -1;
	bool same = true, any = false;
	char buf[16];

	for (size_t i = 0; i < n; i++) {
		if (!refs[i].hca->published || refs[i].port->link_layer != NPF_LL_ETHERNET)
			continue;
		if (any && refs[i].hca->gid_index != k)
			same = false;
		k = refs[i].hca->gid_index;
		any = true;
	}
	if (!any)
		return;
	if (same && k >= 0 && dec_var_wanted(c, NPF_VAR_NCCL_IB_GID_INDEX)) {
		for (size_t i = 0; i < n; i++)
			if (refs[i].hca->published && refs[i].port->link_layer == NPF_LL_ETHERNET)
				refs[i].hca->auto_gid = k;
		snprintf(buf, sizeof(buf), "%d", k);
		set_pre(c, pre, NPF_VAR_NCCL_IB_GID_INDEX, buf);
		set_pre(c, pre, NPF_VAR_UCX_IB_GID_INDEX, buf);
		dec_note(c, NPF_NOTE_GID_VERSIONS, NPF_VAR_NCCL_IB_GID_INDEX, NULL, NULL,
			 "NCCL_IB_GID_INDEX=%d: every published RoCE port carries the probed "
			 "address at GID index %d, so it holds for every NCCL version "
			 "(and UCX_IB_GID_INDEX for UCX)",
			 k, k);
		return;
	}
	if (c->version >= NPF_NCCL_VERSION(2, 21, 5)) {
		gid_policy_dynamic(c, refs, n, pre);
		dec_note(c, NPF_NOTE_GID_VERSIONS, NPF_VAR_NCCL_IB_GID_INDEX, NULL, NULL,
			 "the RoCE GID settings hold for NCCL >= 2.21.5 only: the published "
			 "ports need different GID indices, and older NCCL uses one index "
			 "(default 0) on every port");
		ucx_gid_note(c, refs, n);
	} else {
		gid_policy_legacy(c, refs, n, pre);
		snprintf(buf, sizeof(buf), "%s",
			 pre[NPF_VAR_NCCL_IB_GID_INDEX] ? pre[NPF_VAR_NCCL_IB_GID_INDEX] : "");
		if (buf[0])
			set_pre(c, pre, NPF_VAR_UCX_IB_GID_INDEX, buf);
		dec_note(c, NPF_NOTE_GID_VERSIONS, NPF_VAR_NCCL_IB_GID_INDEX, NULL, NULL,
			 "the RoCE ports need different GID indices: NCCL_IB_HCA keeps those of "
			 "the one index NCCL < 2.21.5 uses, which holds for every NCCL version");
	}
}

static void ib_disable(struct ctx *c, char **pre);

/* The "=dev:port,..." value of the published ports; false when it does not fit. */
bool dec_hca_value(const struct npf_recommendation *r, char *buf, size_t len, size_t *count)
{
	char tok[NPF_NAME_MAX + 16];

	snprintf(buf, len, "=");
	*count = 0;
	for (size_t i = 0; i < r->n_hcas; i++) {
		if (!r->hcas[i].published)
			continue;
		snprintf(tok, sizeof(tok), "%s:%d", r->hcas[i].dev, r->hcas[i].port);
		(*count)++;
		if (!list_append(buf + 1, len - 1, tok))
			return false;
	}
	return true;
}


/* Where netdev ifc stands on the job's networks: works on the chosen network or a rail
 * (returns the network, *addr the probed address), else -1 with *held the best-ranked
 * network it holds (-1 none). */
static int port_netdev_net(const struct ctx *c, size_t i, bool cfg, struct npf_addr *addr,
			   int *held)
{
	*held = -1;
	for (size_t n = 0; n < c->n_nets; n++) {
		const struct eval *e = ev_at(c, i, n);

		if (e->state == EST_ABSENT)
			continue;
		if (*held < 0)
			*held = (int)n;
		if (e->state == EST_WORKS && dec_rail_net(c, n, cfg)) {
			*addr = e->addr;
			return (int)n;
		}
	}
	return -1;
}

static bool port_avoided(const struct ctx *c, const struct npf_rdma_dev *d,
			 const struct npf_rdma_port *p, const char *netdev)
{
	char tok[NPF_NAME_MAX + 16];
	const char *chosen_if = c->inv->ifaces[c->nets[c->chosen].ifc].name;

	snprintf(tok, sizeof(tok), "%s:%d", d->name, p->port);
	if (pat_match(c->pol->avoid, d->name, NULL) || pat_match(c->pol->avoid, tok, NULL))
		return true;
	/* An avoided netdev that still carries the job's sockets was chosen anyway:
	 * avoid= has already had its say there. */
	return netdev[0] && strcmp(netdev, chosen_if) != 0 &&
	       pat_match(c->pol->avoid, netdev, NULL);
}

static unsigned int port_prefer(const struct ctx *c, const struct npf_hca *h)
{
	char tok[NPF_NAME_MAX + 16];
	unsigned int best = PREFER_NONE, i;

	snprintf(tok, sizeof(tok), "%s:%d", h->dev, h->port);
	if (pat_match(c->pol->prefer, h->dev, &i) && i < best)
		best = i;
	if (pat_match(c->pol->prefer, tok, &i) && i < best)
		best = i;
	if (h->netdev[0] && pat_match(c->pol->prefer, h->netdev, &i) && i < best)
		best = i;
	return best;
}

/* The netdevs a port can be reached through: RoCE, every GID's ndev (a VLAN carries its
 * own GIDs); IB, every IPoIB netdev of its GID (P_Key children included). Calls fn for
 * each inventory index until it returns true. */
static int port_each_netdev(const struct ctx *c, const struct npf_rdma_port *p,
			    bool (*fn)(const struct ctx *c, size_t i, void *arg), void *arg)
{
	const struct npf_inventory *inv = c->inv;
	const struct npf_iface *ifc;

	if (p->netdev[0] && (ifc = npf_inventory_find_name(inv, p->netdev)) &&
	    fn(c, (size_t)(ifc - inv->ifaces), arg))
		return (int)(ifc - inv->ifaces);
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		bool mine = false;

		if (strcmp(inv->ifaces[i].name, p->netdev) == 0)
			continue;
		if (p->link_layer == NPF_LL_INFINIBAND)
			mine = rdma_join_is_ipoib_of(&inv->ifaces[i], p);
		else
			for (size_t g = 0; g < p->n_gids && !mine; g++)
				mine = strncmp(p->gids[g].ndev, inv->ifaces[i].name, IFNAMSIZ) == 0;
		if (mine && fn(c, i, arg))
			return (int)i;
	}
	return -1;
}

struct netdev_probe {
	struct npf_addr addr;
	int net;      /* the working network found, -1 */
	int held;     /* the best network some netdev holds, -1 */
	int held_ifc; /* ... and that netdev */
	bool any;     /* some netdev exists */
	bool cfg;     /* the port is in [publish] rdma_fabric */
};

static bool probe_netdev(const struct ctx *c, size_t i, void *arg)
{
	struct netdev_probe *np = arg;
	int held;

	np->any = true;
	np->net = port_netdev_net(c, i, np->cfg, &np->addr, &held);
	if (held >= 0 && (np->held < 0 || held < np->held)) {
		np->held = held;
		np->held_ifc = (int)i;
	}
	return np->net >= 0;
}

static bool rdma_fabric_set(const struct ctx *c)
{
	return c->pol->rdma_fabric && c->pol->rdma_fabric->n > 0;
}

/* Decides one ACTIVE port of a known link layer: published (with its netdev and GID) or
 * left out with why. Returns true when kept without a probe of its own (IB, no IP). */
static bool judge_port(struct ctx *c, struct port_ref *ref)
{
	const struct npf_rdma_port *port = ref->port;
	struct npf_hca *h = ref->hca;
	struct netdev_probe np = {.net = -1, .held = -1, .held_ifc = -1};
	char ip[INET6_ADDRSTRLEN], cidr[INET6_ADDRSTRLEN + 5], tok[NPF_NAME_MAX + 16];
	int i;

	snprintf(tok, sizeof(tok), "%s:%d", h->dev, h->port);
	np.cfg = rdma_fabric_set(c) && (pat_match(c->pol->rdma_fabric, h->dev, NULL) ||
					pat_match(c->pol->rdma_fabric, tok, NULL));
	i = port_each_netdev(c, port, probe_netdev, &np);

	if (i >= 0)
		copy_str(h->netdev, sizeof(h->netdev), c->inv->ifaces[i].name);
	if (port_avoided(c, ref->dev, port, h->netdev)) {
		snprintf(h->why, sizeof(h->why), "avoid= policy");
		return false;
	}
	/* Where GPUs are present, rails are the NICs NCCL's topology pairs with a GPU: each
	 * GPU's closest ones (src/graph/topo.cc ncclTopoGetLocal, lib/rdma_topo.h). */
	if (c->inv->n_gpus && !ref->dev->gpu_rail && !np.cfg) {
		bfmt(h->why, sizeof(h->why),
		     "no GPU is paired with it: NCCL's topology gives each of the %zu GPUs "
		     "its closest NICs (PCIe locality), and %s is none's; rdma_fabric= "
		     "names it to use it",
		     c->inv->n_gpus, h->dev);
		return false;
	}
	if (i >= 0) {
		ref->net = np.net;
		ref->addr = np.addr;
		if (port->link_layer == NPF_LL_ETHERNET) {
			h->gid_index = gid_index_of_addr(port, &ref->addr);
			if (h->gid_index < 0) {
				snprintf(h->why, sizeof(h->why), "no RoCE v2 GID holds %s",
					 npf_addr_str(&ref->addr, ip, sizeof(ip)));
				return false;
			}
		} else {
			h->auto_gid = gid_nccl_auto_index(port, NULL);
		}
		h->published = true;
		return false;
	}
	if (np.held >= 0) {
		const struct eval *e = ev_at(c, (size_t)np.held_ifc, (size_t)np.held);
		char ev[160];

		copy_str(h->netdev, sizeof(h->netdev), c->inv->ifaces[np.held_ifc].name);
		cidr_str(&c->nets[np.held].prefix, cidr, sizeof(cidr));
		if (dec_rail_net(c, (size_t)np.held, np.cfg) || e->state != EST_WORKS) {
			dec_eval_text(c, e, ev, sizeof(ev));
			bfmt(h->why, sizeof(h->why),
			     "its netdev %s did not pass the probes on %s: %s", h->netdev, cidr,
			     ev);
		} else if (c->nets[np.held].mgmt) {
			bfmt(h->why, sizeof(h->why),
			     "its netdev %s is on the management network %s (node names resolve "
			     "to it, or the default route leaves by it), not a rail unless "
			     "rdma_fabric= names it",
			     h->netdev, cidr);
		} else {
			bfmt(h->why, sizeof(h->why),
			     "its netdev %s is on %s, not on the chosen network %s", h->netdev,
			     cidr, c->out->cidr);
		}
		return false;
	}
	if (port->link_layer == NPF_LL_INFINIBAND) {
		/* IB RDMA needs no IP: with no IPoIB address there is nothing to probe, and
		 * nothing that says the port is elsewhere. The operator's rdma_fabric=
		 * says which ports are the job's; without it they are kept, untested. */
		if (rdma_fabric_set(c) && !np.cfg) {
			snprintf(h->why, sizeof(h->why),
				 "no IPoIB address to probe and not in rdma_fabric=");
			return false;
		}
		h->auto_gid = gid_nccl_auto_index(port, NULL);
		h->published = true;
		return true;
	}
	if (np.any)
		snprintf(h->why, sizeof(h->why), "its netdev %s holds no address of the job's networks",
			 h->netdev[0] ? h->netdev : port->netdev);
	else
		snprintf(h->why, sizeof(h->why), "no netdev to probe it through%s%s",
			 port->netdev[0] ? ": missing " : "", port->netdev);
	return false;
}

/* RDMA facts for the variables: which ports, which GID settings, IB on or off. Writes
 * NCCL_IB_HCA, NCCL_IB_DISABLE and the GID variables into pre. */
int dec_build_hcas(struct ctx *c, char **pre)
{
	const struct npf_inventory *inv = c->inv;
	struct npf_recommendation *out = c->out;
	struct port_ref *refs;
	size_t total = 0, n = 0, count, active = 0;
	char value[REC_VALUE_MAX], tok[NPF_NAME_MAX + 16];
	unsigned int best_pref = PREFER_NONE;

	c->fabric = dec_fabric_net(c);
	for (size_t d = 0; d < inv->n_rdma; d++)
		total += inv->rdma[d].n_ports;
	if (!total)
		return 0;
	out->hcas = calloc(total, sizeof(*out->hcas));
	refs = calloc(total, sizeof(*refs));
	if (!out->hcas || !refs) {
		free(refs);
		return -ENOMEM;
	}
	for (size_t d = 0; d < inv->n_rdma; d++)
		for (size_t p = 0; p < inv->rdma[d].n_ports; p++) {
			const struct npf_rdma_port *port = &inv->rdma[d].ports[p];
			struct npf_hca *h = &out->hcas[n];
			struct port_ref *ref = &refs[n++];

			copy_str(h->dev, sizeof(h->dev), inv->rdma[d].name);
			h->port = port->port;
			copy_str(h->netdev, sizeof(h->netdev), port->netdev);
			h->link_layer = port->link_layer;
			h->gid_index = h->auto_gid = -1;
			ref->dev = &inv->rdma[d];
			ref->port = port;
			ref->hca = h;
			ref->net = -1;
			/* NCCL itself keeps only ACTIVE ports of a known link layer
			 * (ncclIbInitDevices). */
			if (port->state != NPF_PORT_ACTIVE) {
				h->nccl_skip = NPF_HCA_INACTIVE;
				snprintf(h->why, sizeof(h->why), "port state %s",
					 npf_port_state_name(port->state));
				continue;
			}
			if (port->link_layer != NPF_LL_INFINIBAND &&
			    port->link_layer != NPF_LL_ETHERNET) {
				h->nccl_skip = NPF_HCA_LINK_UNKNOWN;
				snprintf(h->why, sizeof(h->why), "unknown link layer");
				continue;
			}
			active++;
			if (judge_port(c, ref)) {
				snprintf(tok, sizeof(tok), "%s:%d", h->dev, h->port);
				dec_note(
				    c, NPF_NOTE_UNTESTED, NPF_VAR_NCCL_IB_HCA, NULL, tok,
				    "NCCL_IB_HCA keeps %s untested: an InfiniBand port without "
				    "an IPoIB address (%s)",
				    tok,
				    rdma_fabric_set(c) ? "in rdma_fabric="
						       : "set [publish] rdma_fabric to name "
							 "the job's fabric");
			}
		}
	out->n_hcas = n;
	/* prefer= among the ports: the strongest matching pattern keeps only its ports. */
	for (size_t i = 0; i < n; i++)
		if (out->hcas[i].published && port_prefer(c, &out->hcas[i]) < best_pref)
			best_pref = port_prefer(c, &out->hcas[i]);
	for (size_t i = 0; best_pref != PREFER_NONE && i < n; i++)
		if (out->hcas[i].published && port_prefer(c, &out->hcas[i]) != best_pref) {
			out->hcas[i].published = false;
			snprintf(out->hcas[i].why, sizeof(out->hcas[i].why),
				 "prefer= policy keeps other ports");
		}
	gid_decide(c, refs, n, pre);
	free(refs);
	if (c->err)
		return c->err;
	if (!dec_hca_value(out, value, sizeof(value), &count) || count > NCCLMATCH_IB_MAX) {
		dec_note(c, NPF_NOTE_OMITTED, NPF_VAR_NCCL_IB_HCA, NULL, NULL,
			 "NCCL_IB_HCA left out: %zu ports exceed what NCCL reads (%d)", count,
			 NCCLMATCH_IB_MAX);
		return c->err;
	}
	if (count == 0) {
		clear_gid_vars(pre);
		if (active)
			ib_disable(c, pre);
		return c->err;
	}
	/* Prove the value under NCCL's own grammar: exactly the published ports. */
	{
		struct ncclmatch_list l;

		if (ncclmatch_parse(value, NCCLMATCH_IB, &l) < 0) {
			dec_note(c, NPF_NOTE_OMITTED, NPF_VAR_NCCL_IB_HCA, NULL, NULL,
				 "NCCL_IB_HCA left out: '%s' does not parse as NCCL reads it",
				 value);
			return c->err;
		}
		for (size_t i = 0; i < out->n_hcas; i++)
			if (ncclmatch_hca(&l, out->hcas[i].dev, out->hcas[i].port) !=
			    out->hcas[i].published) {
				dec_note(c, NPF_NOTE_OMITTED, NPF_VAR_NCCL_IB_HCA, NULL, NULL,
					 "NCCL_IB_HCA left out: '%s' would %s %s:%d", value,
					 out->hcas[i].published ? "miss" : "also select",
					 out->hcas[i].dev, out->hcas[i].port);
				return c->err;
			}
	}
	for (size_t i = 0; i < out->n_hcas; i++)
		if (!out->hcas[i].published && out->hcas[i].why[0] &&
		    out->hcas[i].nccl_skip == NPF_HCA_OPENED)
			dec_note(c, NPF_NOTE_NARROWED, NPF_VAR_NCCL_IB_HCA, NULL,
				 out->hcas[i].netdev, "NCCL_IB_HCA narrowed: %s:%d left out: %s",
				 out->hcas[i].dev, out->hcas[i].port, out->hcas[i].why);
	set_pre(c, pre, NPF_VAR_NCCL_IB_HCA, value);
	return c->err;
}

/* No ACTIVE port qualifies: without a word NCCL's IB transport would open every ACTIVE
 * port (ncclIbInitDevices), the failed ones included. */
static void ib_disable(struct ctx *c, char **pre)
{
	char why[NPF_REC_REASON_MAX * 2] = "";

	for (size_t i = 0; i < c->out->n_hcas; i++) {
		const struct npf_hca *h = &c->out->hcas[i];
		char one[NPF_REC_REASON_MAX + NPF_NAME_MAX + 16];

		if (!h->why[0] || h->nccl_skip == NPF_HCA_INACTIVE)
			continue;
		snprintf(one, sizeof(one), "%s:%d: %s", h->dev, h->port, h->why);
		if (!list_append(why, sizeof(why), one))
			break;
	}
	if (!dec_var_wanted(c, NPF_VAR_NCCL_IB_DISABLE)) {
		dec_note(c, NPF_NOTE_OMITTED, NPF_VAR_NCCL_IB_DISABLE, NULL, NULL,
			 "no RDMA port passed the probes; NCCL still uses every ACTIVE port "
			 "unless NCCL_IB_HCA or NCCL_IB_DISABLE=1 says otherwise (%s)",
			 why);
		return;
	}
	set_pre(c, pre, NPF_VAR_NCCL_IB_DISABLE, "1");
	dec_note(c, NPF_NOTE_RDMA_DISABLED, NPF_VAR_NCCL_IB_DISABLE, NULL, NULL,
		 "NCCL_IB_DISABLE=1: no RDMA port passed the probes on the chosen network, and "
		 "NCCL would otherwise use every ACTIVE port (%s)",
		 why);
}
