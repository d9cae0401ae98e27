// SPDX-License-Identifier: MIT
/* This node's environment for the chosen network: RDMA ports, GIDs, every published
 * variable. */
#include "decide.h"
#include "gid.h"
#include "ncclmatch.h"

#include <errno.h>
#include <stdlib.h>

/* ---- the environment ------------------------------------------------------------------ */

bool dec_var_wanted(const struct ctx *c, enum npf_var v)
{
	const struct npf_var_info *r = npf_var_info(v);

	if (!r)
		return false;
	switch (r->gate) {
	case NPF_GATE_ALWAYS:
		return true;
	case NPF_GATE_MASTER_ADDR:
		return c->pol->master_addr;
	case NPF_GATE_VARIABLES:
		break;
	}
	return c->pol->publish == 0 || (c->pol->publish & r->bit);
}

void dec_set_var(struct ctx *c, char **vals, enum npf_var v, const char *value)
{
	if (c->err || !dec_var_wanted(c, v))
		return;
	free(vals[v]);
	vals[v] = strdup(value);
	if (!vals[v])
		c->err = -ENOMEM;
}

void dec_drop_var(char **vals, enum npf_var v)
{
	free(vals[v]);
	vals[v] = NULL;
}

int dec_build_choices(struct ctx *c)
{
	const struct npf_check *chk = c->chk;
	const struct net *net = &c->nets[c->chosen];
	size_t nn = chk->n_nodes, ci = (size_t)net->ifc;

	c->out->nodes = calloc(nn, sizeof(*c->out->nodes));
	if (!c->out->nodes)
		return -ENOMEM;
	c->out->n_nodes = nn;
	for (size_t k = 0; k < nn; k++) {
		struct npf_node_choice *ch = &c->out->nodes[k];
		int li = k ? c->link_idx[ci * nn + k] : -1;

		copy_str(ch->node, sizeof(ch->node), chk->nodes[k].name);
		if (k == 0) {
			copy_str(ch->ifname, sizeof(ch->ifname), c->inv->ifaces[ci].name);
			ch->addr = ev_at(c, ci, (size_t)c->chosen)->addr;
			continue;
		}
		/* The peer's interface our probes reached on this network, else the first
		 * one it announced there. */
		if (li >= 0 && chk->links[li].peer_if[0] &&
		    in_net(&chk->links[li].peer_addr, net)) {
			copy_str(ch->ifname, sizeof(ch->ifname), chk->links[li].peer_if);
			ch->addr = chk->links[li].peer_addr;
			continue;
		}
		for (size_t j = 0; j < chk->nodes[k].n_cands; j++) {
			const struct npf_candidate *cd = &chk->nodes[k].cands[j];

			if (addr_valid(&cd->addr) && in_net(&cd->addr, net)) {
				copy_str(ch->ifname, sizeof(ch->ifname), cd->ifname);
				ch->addr = cd->addr;
				break;
			}
		}
	}
	return 0;
}

/* The index of the RoCE v2 GID that carries address a (::ffff:a.b.c.d for IPv4), -1. */
static int gid_of_addr(const struct npf_rdma_port *p, const struct npf_addr *a)
{
	uint8_t want[16] = { 0 };

	if (a->family == AF_INET) {
		want[10] = want[11] = 0xff;
		memcpy(want + 12, a->addr, 4);
	} else {
		memcpy(want, a->addr, 16);
	}
	for (size_t g = 0; g < p->n_gids; g++)
		if (p->gids[g].type == NPF_GID_ROCE_V2 && memcmp(p->gids[g].raw, want, 16) == 0)
			return p->gids[g].index;
	return -1;
}

static void gid_text(const struct npf_rdma_port *p, int idx, char *buf, size_t len)
{
	const struct npf_gid *g = idx >= 0 ? gid_find(p, idx) : NULL;
	struct npf_addr a = { .family = AF_INET6 };
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
		dec_add_note(c, "NCCL_IB_HCA narrowed: %s:%d left out: %s", h->dev, h->port, h->why);
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
			if (refs[j].hca->published &&
			    refs[j].port->link_layer == NPF_LL_ETHERNET &&
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
		dec_add_note(c, "NCCL_IB_HCA narrowed: %s:%d left out: %s", h->dev, h->port, h->why);
	}
	snprintf(buf, sizeof(buf), "%d", k);
	dec_set_var(c, vals, NPF_VAR_NCCL_IB_GID_INDEX, buf);
}

/* The first working network our interface ifc holds, with our address on it; -1. */
static int iface_working_net(const struct ctx *c, size_t i, struct npf_addr *addr)
{
	for (size_t n = 0; n < c->n_nets; n++)
		if (ev_at(c, i, n)->state == EST_WORKS) {
			*addr = ev_at(c, i, n)->addr;
			return (int)n;
		}
	return -1;
}

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

static int build_hcas(struct ctx *c, char **vals)
{
	const struct npf_inventory *inv = c->inv;
	struct npf_recommendation *out = c->out;
	struct port_ref *refs;
	size_t total = 0, n = 0, count;
	char value[REC_VALUE_MAX];
	bool unpublished_active = false;

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
			const struct npf_iface *ifc;
			char ip[INET6_ADDRSTRLEN];

			copy_str(h->dev, sizeof(h->dev), inv->rdma[d].name);
			h->port = port->port;
			copy_str(h->netdev, sizeof(h->netdev), port->netdev);
			h->link_layer = port->link_layer;
			h->gid_index = h->auto_gid = -1;
			ref->dev = &inv->rdma[d];
			ref->port = port;
			ref->hca = h;
			ref->net = -1;
			/* NCCL itself keeps only ACTIVE ports of a known link layer. */
			if (port->state != NPF_PORT_ACTIVE) {
				snprintf(h->why, sizeof(h->why), "port state %s",
					 npf_port_state_name(port->state));
				continue;
			}
			if (port->link_layer != NPF_LL_INFINIBAND &&
			    port->link_layer != NPF_LL_ETHERNET) {
				snprintf(h->why, sizeof(h->why), "unknown link layer");
				continue;
			}
			unpublished_active = true;
			ifc = port->netdev[0] ? npf_inventory_find_name(inv, port->netdev) : NULL;
			if (!ifc) {
				snprintf(h->why, sizeof(h->why),
					 "no netdev to probe it through%s%s",
					 port->netdev[0] ? ": missing " : "", port->netdev);
				continue;
			}
			ref->net = iface_working_net(c, (size_t)(ifc - inv->ifaces), &ref->addr);
			if (ref->net < 0) {
				snprintf(h->why, sizeof(h->why),
					 "its netdev %s did not pass the probes", ifc->name);
				continue;
			}
			if (port->link_layer == NPF_LL_ETHERNET) {
				h->gid_index = gid_of_addr(port, &ref->addr);
				if (h->gid_index < 0) {
					snprintf(h->why, sizeof(h->why), "no RoCE v2 GID holds %s",
						 npf_addr_str(&ref->addr, ip, sizeof(ip)));
					continue;
				}
			} else {
				h->auto_gid = gid_nccl_auto_index(port, NULL);
			}
			h->published = true;
		}
	out->n_hcas = n;
	if (c->version >= NPF_NCCL_VERSION(2, 21, 5))
		gid_policy_dynamic(c, refs, n, vals);
	else
		gid_policy_legacy(c, refs, n, vals);
	free(refs);
	if (c->err)
		return c->err;

	if (!dec_hca_value(out, value, sizeof(value), &count) || count > NCCLMATCH_IB_MAX) {
		dec_add_note(c, "NCCL_IB_HCA left out: %zu ports exceed what NCCL reads (%d)", count,
			 NCCLMATCH_IB_MAX);
		return c->err;
	}
	if (count == 0) {
		if (unpublished_active)
			dec_add_note(c, "no RDMA port passed the probes; NCCL still uses every ACTIVE "
				    "port unless NCCL_IB_HCA or NCCL_IB_DISABLE=1 says otherwise");
		dec_drop_var(vals, NPF_VAR_NCCL_IB_GID_INDEX);
		return c->err;
	}
	/* Prove the value under NCCL's own grammar: exactly the published ports. */
	{
		struct ncclmatch_list l;

		if (ncclmatch_parse(value, NCCLMATCH_IB, &l) < 0) {
			dec_add_note(c, "NCCL_IB_HCA left out: '%s' does not parse as NCCL reads it",
				 value);
			return c->err;
		}
		for (size_t i = 0; i < out->n_hcas; i++)
			if (ncclmatch_hca(&l, out->hcas[i].dev, out->hcas[i].port) !=
			    out->hcas[i].published) {
				dec_add_note(c, "NCCL_IB_HCA left out: '%s' would %s %s:%d", value,
					 out->hcas[i].published ? "miss" : "also select",
					 out->hcas[i].dev, out->hcas[i].port);
				return c->err;
			}
	}
	dec_set_var(c, vals, NPF_VAR_NCCL_IB_HCA, value);
	return c->err;
}

/* Per-node NCCL_SOCKET_IFNAME: "=name", checked against our names and against the
 * model of NCCL's bootstrap pick. */
static void socket_ifname(struct ctx *c, char **vals, int family)
{
	const struct npf_inventory *inv = c->inv;
	const struct npf_iface *ifc = &inv->ifaces[c->nets[c->chosen].ifc];
	char value[IFNAMSIZ + 2];
	struct ncclmatch_list l;
	struct nccl_pick pick;
	char ip[INET6_ADDRSTRLEN];

	snprintf(value, sizeof(value), "=%s", ifc->name);
	if (ncclmatch_parse(value, NCCLMATCH_SOCKET, &l) < 0) {
		dec_add_note(c, "NCCL_SOCKET_IFNAME left out: '%s' does not parse as NCCL reads it",
			 value);
		return;
	}
	for (size_t i = 0; i < inv->n_ifaces; i++)
		if (ncclmatch_ifname(&l, inv->ifaces[i].name) != (&inv->ifaces[i] == ifc)) {
			dec_add_note(c, "NCCL_SOCKET_IFNAME left out: '%s' would %s %s under NCCL's "
				    "grammar",
				 value, &inv->ifaces[i] == ifc ? "miss" : "also select",
				 inv->ifaces[i].name);
			return;
		}
	dec_set_var(c, vals, NPF_VAR_NCCL_SOCKET_IFNAME, value);
	if (nccl_socket_pick(inv, c->version, family, value, &pick) < 0)
		dec_add_note(c, "NCCL would find no usable address on %s (not running?)", ifc->name);
	else if (!in_net(&pick.addr, &c->nets[c->chosen]))
		dec_add_note(c, "NCCL binds the first address of %s, %s, which is not on the chosen "
			    "network", ifc->name, npf_addr_str(&pick.addr, ip, sizeof(ip)));
}

/* ---- Open MPI's interface selection ------------------------------------------------------- */

/* Would Open MPI's interface scan (opal/mca/if) list this address? Every IPv4 address of
 * an UP interface, link-local included; IPv6 only with global scope (not ::1, fe80::/10,
 * fec0::/10). */
bool dec_ompi_lists(const struct npf_addr *a)
{
	if (a->family == AF_INET)
		return true;
	if (a->family != AF_INET6 || npf_addr_is_local_only(a))
		return false;
	return !(a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0xc0) && a->addr[0] != 0xff;
}

/* An address Open MPI would use besides the chosen network when an interface is named:
 * if_include by name takes every address of it. Returns the first one, or NULL. */
const struct npf_addr *dec_ompi_stray(const struct npf_addr *addrs, size_t n,
					 const struct net *net)
{
	for (size_t i = 0; i < n; i++)
		if (addr_valid(&addrs[i]) && dec_ompi_lists(&addrs[i]) && !in_net(&addrs[i], net))
			return &addrs[i];
	return NULL;
}

/* The same for a peer, from what it announced on ifname (the announcement leaves out
 * loopback and link-local addresses, so a peer's 169.254 address goes unseen). */
static const struct npf_addr *dec_ompi_stray_peer(const struct npf_node *nd, const char *ifname,
					      const struct net *net)
{
	for (size_t j = 0; j < nd->n_cands; j++) {
		const struct npf_candidate *cd = &nd->cands[j];

		if (strncmp(cd->ifname, ifname, IFNAMSIZ) == 0 && dec_ompi_stray(&cd->addr, 1, net))
			return &cd->addr;
	}
	return NULL;
}

static bool ompi_wanted(const struct ctx *c)
{
	return dec_var_wanted(c, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE) ||
	       dec_var_wanted(c, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE);
}

/* OMPI_MCA_{btl,oob}_tcp_if_include. mpirun copies the launch node's OMPI_MCA_* to every
 * node, so a CIDR, which holds everywhere, is the value of choice. But Open MPI 4.1 parses
 * only IPv4 CIDRs: an IPv6 one is rejected ("invalid if_inexclude") and the setting ignored,
 * so the job falls back to every interface and hangs on docker0 and friends. On an IPv6
 * network the interface name is the only form left, and a name selects every address of
 * the interface: one more address there (IPv4, or IPv6 on another prefix) is unverified
 * traffic, so the value is left out rather than published half-proven. */
static void ompi_if_include(struct ctx *c, char **vals, const struct npf_iface *ifc)
{
	const struct net *net = &c->nets[c->chosen];
	const struct npf_addr *stray;
	const char *value = c->out->cidr;
	char ip[INET6_ADDRSTRLEN];

	if (!ompi_wanted(c))
		return;
	if (net->prefix.family == AF_INET6) {
		if (strchr(ifc->name, ',')) {
			dec_add_note(c, "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include left "
				    "out: Open MPI takes only IPv4 CIDRs, and it splits the name %s "
				    "on ','",
				 ifc->name);
			return;
		}
		stray = dec_ompi_stray(ifc->addrs, ifc->n_addrs, net);
		if (stray) {
			dec_add_note(c, "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include left "
				    "out: Open MPI takes only IPv4 CIDRs, and by name (%s) it would "
				    "also use %s, which is not on %s",
				 ifc->name, npf_addr_str(stray, ip, sizeof(ip)), c->out->cidr);
			return;
		}
		value = ifc->name;
	}
	dec_set_var(c, vals, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, value);
	dec_set_var(c, vals, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE, value);
}

/* Job-wide, an interface name must be the same on every node and name nothing unverified
 * on any of them. */
void dec_ompi_job_wide(struct ctx *c, char **vals, bool same_name)
{
	const struct net *net = &c->nets[c->chosen];
	const struct npf_recommendation *out = c->out;
	char ip[INET6_ADDRSTRLEN];

	if (net->prefix.family != AF_INET6 ||
	    (!vals[NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE] &&
	     !vals[NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE]))
		return;
	if (!same_name) {
		dec_add_note(c, "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include: no job-wide "
			    "value: Open MPI takes only IPv4 CIDRs and the nodes use different "
			    "interface names on %s (mpirun gives every node the launch node's value)",
			 out->cidr);
		goto drop;
	}
	for (size_t k = 1; k < c->chk->n_nodes; k++) {
		const struct npf_addr *stray =
			dec_ompi_stray_peer(&c->chk->nodes[k], out->nodes[k].ifname, net);

		if (stray) {
			dec_add_note(c, "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include: no "
				    "job-wide value: Open MPI takes only IPv4 CIDRs, and by name (%s) "
				    "it would also use %s on %s, which is not on %s",
				 out->nodes[k].ifname, npf_addr_str(stray, ip, sizeof(ip)),
				 node_name(c, (int)k), out->cidr);
			goto drop;
		}
	}
	return;
drop:
	dec_drop_var(vals, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE);
	dec_drop_var(vals, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE);
}

/* ---- putting it together ------------------------------------------------------------------ */

int dec_build_env(struct ctx *c)
{
	struct npf_recommendation *out = c->out;
	const struct net *net = &c->nets[c->chosen];
	const struct npf_iface *ifc = &c->inv->ifaces[net->ifc];
	char *vals[NPF_VAR__COUNT] = { 0 };
	char ip[INET6_ADDRSTRLEN], value[REC_VALUE_MAX];
	int family = net->prefix.family == AF_INET6 ? AF_INET6 : 0;
	int r;

	/* NCCL advertises IPv4 first; an IPv6 choice needs the family forced. */
	if (family == AF_INET6)
		dec_set_var(c, vals, NPF_VAR_NCCL_SOCKET_FAMILY, "AF_INET6");
	if (dec_var_wanted(c, NPF_VAR_NCCL_SOCKET_IFNAME))
		socket_ifname(c, vals, vals[NPF_VAR_NCCL_SOCKET_FAMILY] ? family : 0);
	if ((r = build_hcas(c, vals)) < 0)
		goto out;
	dec_set_var(c, vals, NPF_VAR_GLOO_SOCKET_IFNAME, ifc->name);
	dec_set_var(c, vals, NPF_VAR_TP_SOCKET_IFNAME, ifc->name);
	if (vals[NPF_VAR_NCCL_IB_HCA] || (!dec_var_wanted(c, NPF_VAR_NCCL_IB_HCA) && out->n_hcas)) {
		size_t count;

		if (dec_hca_value(out, value, sizeof(value), &count) && count)
			dec_set_var(c, vals, NPF_VAR_UCX_NET_DEVICES, value + 1);
	}
	if (!vals[NPF_VAR_UCX_NET_DEVICES])
		dec_set_var(c, vals, NPF_VAR_UCX_NET_DEVICES, ifc->name);
	ompi_if_include(c, vals, ifc);
	if (dec_var_wanted(c, NPF_VAR_MASTER_ADDR)) {
		const char *first = c->pol->first_node;
		int k = -1;

		for (size_t i = 0; first && first[0] && i < c->chk->n_nodes; i++)
			if (strncmp(c->chk->nodes[i].name, first, NPF_NAME_MAX) == 0) {
				k = (int)i;
				break;
			}
		if (!first || !first[0])
			dec_add_note(c, "MASTER_ADDR left out: the job's first node is not known");
		else if (k < 0)
			dec_add_note(c, "MASTER_ADDR left out: %s is not part of this check", first);
		else if (!out->nodes[k].ifname[0])
			dec_add_note(c, "MASTER_ADDR left out: %s announced no address on %s", first,
				 out->cidr);
		else
			dec_set_var(c, vals, NPF_VAR_MASTER_ADDR,
				npf_addr_str(&out->nodes[k].addr, ip, sizeof(ip)));
	}
	if (c->err) {
		r = c->err;
		goto out;
	}
	if (c->pol->job_wide && (r = dec_job_wide(c, vals)) < 0)
		goto out;
	r = 0;
	for (int v = 0; v < NPF_VAR__COUNT; v++)
		if (vals[v])
			out->n_vars++;
	out->vars = calloc(out->n_vars ? out->n_vars : 1, sizeof(*out->vars));
	if (!out->vars) {
		r = -ENOMEM;
		goto out;
	}
	out->n_vars = 0;
	for (int v = 0; v < NPF_VAR__COUNT; v++)
		if (vals[v]) {
			copy_str(out->vars[out->n_vars].name, NPF_REC_NAME_MAX, npf_var_name((enum npf_var)v));
			out->vars[out->n_vars++].value = vals[v];
			vals[v] = NULL;
		}
out:
	for (int v = 0; v < NPF_VAR__COUNT; v++)
		free(vals[v]);
	return r;
}

