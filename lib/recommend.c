// SPDX-License-Identifier: MIT
/* The decision: rank networks by node-independent facts, take the first one this node
 * proved in both directions with every peer, and derive the environment from it. */
#include "recommend.h"
#include "candidates.h"
#include "gid.h"
#include "ncclmatch.h"
#include "pairstate.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Peers may announce anything; bound what one check can make us hold. */
#define REC_NETS_MAX 1024
#define REC_VALUE_MAX 4096
#define PREFER_NONE 0xffffu

/* How one of our interfaces fares on one network. Higher is better. */
enum est {
	EST_ABSENT = 0, /* the interface holds no address on the network */
	EST_FAIL,       /* some probed peer failed in some direction */
	EST_UNKNOWN,    /* no failure, but some peer's evidence is missing */
	EST_WORKS,      /* ok both ways with every (probed) peer */
};

struct eval {
	enum est state;
	int peer; /* the deciding peer (first failure, else first unknown), -1 none */
	enum npf_outcome outcome;
	enum npf_direction dir;
	char detail[96];
	size_t n_ok, n_fail, n_unknown;
	struct npf_addr addr; /* our address on the network */
};

/* A network of the job: a prefix some node announced, with its ranking facts. */
struct net {
	struct npf_addr prefix; /* masked, prefixlen set */
	bool avoid;
	unsigned int prefer; /* strongest prefer pattern matched, PREFER_NONE */
	bool role;           /* a container bridge / overlay / VPN sits on it somewhere */
	bool rdma;           /* every announced interface on it is RDMA-backed */
	int64_t speed;       /* slowest announced speed, 0 when any is unknown */
	size_t n_members;
	/* local result */
	enum est state;
	int ifc; /* our best interface on it, -1 */
};

struct ctx {
	const struct npf_inventory *inv;
	const struct npf_check *chk;
	const struct npf_policy *pol;
	struct npf_recommendation *out;
	bool sparse;
	int version;
	size_t n_peers; /* peers in this node's evidence (all but those outside a sparse plan) */
	struct net *nets;
	size_t n_nets;
	bool nets_capped;
	struct eval *ev; /* n_ifaces x n_nets */
	int *link_idx;   /* n_ifaces x n_nodes: index into chk->links, -1 */
	size_t *path_off; /* n_nodes + 1: CSR of chk->paths by peer */
	size_t *path_idx;
	size_t *peer_fail; /* n_nodes: how many (interface, network) evaluations each peer broke */
	int chosen; /* index into nets, -1 */
	int err;
};

static const char *const var_names[NPF_VAR__COUNT] = {
	[NPF_VAR_NCCL_SOCKET_IFNAME] = "NCCL_SOCKET_IFNAME",
	[NPF_VAR_NCCL_SOCKET_FAMILY] = "NCCL_SOCKET_FAMILY",
	[NPF_VAR_NCCL_IB_HCA] = "NCCL_IB_HCA",
	[NPF_VAR_NCCL_IB_GID_INDEX] = "NCCL_IB_GID_INDEX",
	[NPF_VAR_NCCL_IB_ADDR_FAMILY] = "NCCL_IB_ADDR_FAMILY",
	[NPF_VAR_NCCL_IB_ADDR_RANGE] = "NCCL_IB_ADDR_RANGE",
	[NPF_VAR_GLOO_SOCKET_IFNAME] = "GLOO_SOCKET_IFNAME",
	[NPF_VAR_TP_SOCKET_IFNAME] = "TP_SOCKET_IFNAME",
	[NPF_VAR_UCX_NET_DEVICES] = "UCX_NET_DEVICES",
	[NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE] = "OMPI_MCA_btl_tcp_if_include",
	[NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE] = "OMPI_MCA_oob_tcp_if_include",
	[NPF_VAR_MASTER_ADDR] = "MASTER_ADDR",
};

/* The [publish] variables bit of each variable; MASTER_ADDR has its own switch. */
static const uint32_t var_bits[NPF_VAR__COUNT] = {
	[NPF_VAR_NCCL_SOCKET_IFNAME] = NPF_PUBVAR_NCCL_SOCKET_IFNAME,
	[NPF_VAR_NCCL_SOCKET_FAMILY] = NPF_PUBVAR_NCCL_SOCKET_FAMILY,
	[NPF_VAR_NCCL_IB_HCA] = NPF_PUBVAR_NCCL_IB_HCA,
	[NPF_VAR_NCCL_IB_GID_INDEX] = NPF_PUBVAR_NCCL_IB_GID_INDEX,
	[NPF_VAR_NCCL_IB_ADDR_FAMILY] = NPF_PUBVAR_NCCL_IB_ADDR_FAMILY,
	[NPF_VAR_NCCL_IB_ADDR_RANGE] = NPF_PUBVAR_NCCL_IB_ADDR_RANGE,
	[NPF_VAR_GLOO_SOCKET_IFNAME] = NPF_PUBVAR_GLOO_SOCKET_IFNAME,
	[NPF_VAR_TP_SOCKET_IFNAME] = NPF_PUBVAR_TP_SOCKET_IFNAME,
	[NPF_VAR_UCX_NET_DEVICES] = NPF_PUBVAR_UCX_NET_DEVICES,
	[NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE] = NPF_PUBVAR_OMPI_MCA_btl_tcp_if_include,
	[NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE] = NPF_PUBVAR_OMPI_MCA_oob_tcp_if_include,
	[NPF_VAR_MASTER_ADDR] = 0,
};

const char *npf_var_name(enum npf_var v)
{
	if ((unsigned int)v >= NPF_VAR__COUNT)
		return NULL;
	return var_names[v];
}

/* ---- small helpers ------------------------------------------------------------------ */

static void copy_str(char *dst, size_t dstsz, const char *src)
{
	snprintf(dst, dstsz, "%s", src ? src : "");
}

/* snprintf for human text where cutting a long line short is acceptable. */
static void bfmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void bfmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static const char *node_name(const struct ctx *c, int k)
{
	if (k < 0 || (size_t)k >= c->chk->n_nodes)
		return "?";
	return c->chk->nodes[k].name[0] ? c->chk->nodes[k].name : "?";
}

static unsigned int addr_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

static bool addr_valid(const struct npf_addr *a)
{
	return (a->family == AF_INET || a->family == AF_INET6) &&
	       a->prefixlen <= addr_bits(a->family);
}

/* Addresses that can name a network of the job: global enough for peers to reach. */
static bool addr_usable(const struct npf_addr *a)
{
	return addr_valid(a) && !npf_addr_is_local_only(a) &&
	       !(a->flags & (NPF_ADDR_TENTATIVE | NPF_ADDR_DADFAILED));
}

static void addr_mask(const struct npf_addr *a, unsigned int prefixlen, struct npf_addr *out)
{
	unsigned int full, rest;

	memset(out, 0, sizeof(*out));
	out->family = a->family;
	if (prefixlen > addr_bits(a->family))
		prefixlen = addr_bits(a->family);
	out->prefixlen = (uint8_t)prefixlen;
	full = prefixlen / 8;
	rest = prefixlen % 8;
	memcpy(out->addr, a->addr, full);
	if (rest)
		out->addr[full] = (uint8_t)(a->addr[full] & (0xff << (8 - rest)));
}

static bool in_net(const struct npf_addr *a, const struct net *n)
{
	return a->family == n->prefix.family &&
	       npf_addr_same_subnet(a, &n->prefix, n->prefix.prefixlen);
}

static void cidr_str(const struct npf_addr *prefix, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	npf_addr_str(prefix, ip, sizeof(ip));
	snprintf(buf, len, "%s/%u", ip, prefix->prefixlen);
}

static bool iface_is_loopback(const struct npf_iface *ifc)
{
	return ifc->kind == NPF_KIND_LOOPBACK || (ifc->flags & IFF_LOOPBACK) ||
	       strcmp(ifc->name, "lo") == 0;
}

static bool pat_match(const struct npf_pattern_list *l, const char *name, unsigned int *first)
{
	if (!l)
		return false;
	for (unsigned int i = 0; i < l->n && i < NPF_CONFIG_PATTERNS_MAX; i++) {
		if (l->pat[i][0] && fnmatch(l->pat[i], name, 0) == 0) {
			if (first)
				*first = i;
			return true;
		}
	}
	return false;
}

/* "(container bridge)"-style description of an interface for humans. */
static const char *iface_desc(const struct npf_iface *ifc)
{
	if (ifc->roles & NPF_ROLE_CONTAINER_BRIDGE)
		return "container bridge";
	if (ifc->roles & NPF_ROLE_OVERLAY)
		return "overlay";
	if (ifc->roles & NPF_ROLE_VPN)
		return "VPN";
	if (ifc->kind == NPF_KIND_IPOIB)
		return "IPoIB";
	if (ifc->roles & NPF_ROLE_RDMA)
		return "RoCE";
	return npf_kind_name(ifc->kind);
}

static void add_note(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_note(struct ctx *c, const char *fmt, ...)
{
	struct npf_recommendation *r = c->out;
	char **n;
	char *s;
	va_list ap;
	int len;

	if (c->err)
		return;
	va_start(ap, fmt);
	len = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (len < 0) {
		c->err = -ENOMEM;
		return;
	}
	n = realloc(r->notes, (r->n_notes + 1) * sizeof(*n));
	if (!n) {
		free(s);
		c->err = -ENOMEM;
		return;
	}
	n[r->n_notes++] = s;
	r->notes = n;
}

/* Appends ",tok" (or "tok" when buf is empty) to buf; false when it does not fit. */
static bool list_append(char *buf, size_t len, const char *tok)
{
	size_t used = strlen(buf);
	int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", tok);

	return n >= 0 && (size_t)n < len - used;
}

/* ---- evidence ------------------------------------------------------------------------ */

static int build_indexes(struct ctx *c)
{
	const struct npf_check *chk = c->chk;
	size_t nn = chk->n_nodes, ni = c->inv->n_ifaces;

	c->link_idx = malloc((ni ? ni : 1) * nn * sizeof(*c->link_idx));
	c->path_off = calloc(nn + 1, sizeof(*c->path_off));
	c->path_idx = malloc((chk->n_paths ? chk->n_paths : 1) * sizeof(*c->path_idx));
	c->peer_fail = calloc(nn, sizeof(*c->peer_fail));
	if (!c->link_idx || !c->path_off || !c->path_idx || !c->peer_fail)
		return -ENOMEM;
	for (size_t i = 0; i < ni * nn; i++)
		c->link_idx[i] = -1;
	for (size_t l = 0; l < chk->n_links; l++) {
		const struct npf_link *lk = &chk->links[l];
		const struct npf_iface *ifc;
		size_t at;

		if (lk->peer <= 0 || (size_t)lk->peer >= nn)
			continue;
		ifc = npf_inventory_find_name(c->inv, lk->ifname);
		if (!ifc)
			continue;
		at = (size_t)(ifc - c->inv->ifaces) * nn + (size_t)lk->peer;
		/* The first link for a pair wins; the summariser makes one. */
		if (c->link_idx[at] < 0)
			c->link_idx[at] = (int)l;
	}
	/* Paths bucketed by peer, so splitting a link per network stays linear. */
	for (size_t p = 0; p < chk->n_paths; p++)
		if (chk->paths[p].peer > 0 && (size_t)chk->paths[p].peer < nn)
			c->path_off[chk->paths[p].peer + 1]++;
	for (size_t k = 0; k < nn; k++)
		c->path_off[k + 1] += c->path_off[k];
	{
		size_t *fill = calloc(nn, sizeof(*fill));

		if (!fill)
			return -ENOMEM;
		for (size_t p = 0; p < chk->n_paths; p++) {
			int k = chk->paths[p].peer;

			if (k > 0 && (size_t)k < nn)
				c->path_idx[c->path_off[k] + fill[k]++] = p;
		}
		free(fill);
	}
	return 0;
}

static bool outcome_bad(enum npf_outcome o)
{
	return npf_outcome_failed(o);
}

/* An interface holding addresses on several networks gets one npf_link per peer; the
 * raw paths tell the networks apart, so a broken IPv4 network is not hidden behind a
 * working IPv6 one on the same interface. Returns false when no path covers it. */
static bool split_from_paths(const struct ctx *c, const struct npf_iface *ifc, const struct net *n,
			     int peer, enum npf_outcome *fwd, enum npf_outcome *rev, char *detail,
			     size_t dlen)
{
	const struct npf_check *chk = c->chk;
	enum npf_outcome f = NPF_OUT__COUNT, r = NPF_OUT__COUNT;
	const char *fd = "", *rd = "";

	for (size_t i = c->path_off[peer]; i < c->path_off[peer + 1]; i++) {
		const struct npf_path *p = &chk->paths[c->path_idx[i]];
		enum npf_outcome o = (unsigned int)p->outcome < NPF_OUT__COUNT ? p->outcome :
										NPF_OUT_UNREACHABLE;

		if (p->dir == NPF_DIR_FORWARD && in_net(&p->peer_addr, n)) {
			/* The kernel sent it out elsewhere: NCCL's traffic would too. */
			if (o == NPF_OUT_OK && strncmp(p->local_if, ifc->name, IFNAMSIZ) != 0)
				o = NPF_OUT_WRONG_EGRESS;
			if (o < f) {
				f = o;
				fd = p->detail;
			}
		} else if (p->dir == NPF_DIR_REVERSE && in_net(&p->local_addr, n)) {
			if (o < r) {
				r = o;
				rd = p->detail;
			}
		}
	}
	if (f == NPF_OUT__COUNT && r == NPF_OUT__COUNT)
		return false;
	*fwd = f == NPF_OUT__COUNT ? NPF_OUT_NOT_PROBED : f;
	*rev = r == NPF_OUT__COUNT ? NPF_OUT_NOT_PROBED : r;
	copy_str(detail, dlen, outcome_bad(*fwd) ? fd : rd);
	return true;
}

static size_t iface_net_count(const struct ctx *c, size_t i)
{
	size_t n = 0;

	for (size_t k = 0; k < c->n_nets; k++)
		if (c->ev[i * c->n_nets + k].state != EST_ABSENT)
			n++;
	return n;
}

/* In a sparse plan, a peer this node did not plan to probe (nor did it plan us: the plan
 * is symmetric, docs/protocol.md). */
static bool outside_plan(const struct ctx *c, const struct npf_node *nd)
{
	return c->sparse && !nd->probed;
}

/* Fills e for our interface i on network n against every peer. */
static void evaluate(struct ctx *c, size_t i, const struct net *n, struct eval *e)
{
	const struct npf_check *chk = c->chk;
	const struct npf_iface *ifc = &c->inv->ifaces[i];
	bool multi = iface_net_count(c, i) > 1;
	int first_unknown = -1;
	enum npf_outcome unk_out = NPF_OUT_NOT_PROBED;
	enum npf_direction unk_dir = NPF_DIR_FORWARD;
	char unk_detail[96] = "";

	e->peer = -1;
	e->outcome = NPF_OUT_OK;
	e->dir = NPF_DIR_FORWARD;
	e->detail[0] = '\0';
	e->n_ok = e->n_fail = e->n_unknown = 0;
	for (size_t k = 1; k < chk->n_nodes; k++) {
		const struct npf_node *nd = &chk->nodes[k];
		enum npf_outcome fwd = NPF_OUT_NOT_PROBED, rev = NPF_OUT_NOT_PROBED;
		char detail[96] = "";
		int li = c->link_idx[i * chk->n_nodes + k];
		bool have = false;
		struct npf_pair ps;

		if (!nd->available) {
			copy_str(detail, sizeof(detail), nd->error);
		} else if (multi && split_from_paths(c, ifc, n, (int)k, &fwd, &rev, detail,
						     sizeof(detail))) {
			have = true;
		} else if (li >= 0) {
			const struct npf_link *lk = &chk->links[li];

			have = true;
			fwd = lk->fwd;
			rev = lk->rev;
			copy_str(detail, sizeof(detail),
				 outcome_bad(fwd) || (!outcome_bad(rev) && fwd != NPF_OUT_OK) ?
					 lk->fwd_detail :
					 lk->rev_detail);
		}
		/* The one pair rule shared with lib/verdict. */
		ps = npf_pair_reduce(c->sparse, nd, have, fwd, rev);
		switch (ps.state) {
		case NPF_PAIR_OUTSIDE:
			break;
		case NPF_PAIR_OK:
			e->n_ok++;
			break;
		case NPF_PAIR_FAIL:
			c->peer_fail[k]++;
			if (e->n_fail++ == 0) {
				e->peer = (int)k;
				e->dir = ps.dir;
				e->outcome = ps.outcome;
				copy_str(e->detail, sizeof(e->detail), detail);
			}
			break;
		case NPF_PAIR_UNKNOWN:
			if (e->n_unknown++ == 0) {
				first_unknown = (int)k;
				unk_dir = ps.dir;
				unk_out = ps.outcome;
				copy_str(unk_detail, sizeof(unk_detail), detail);
			}
			break;
		}
	}
	if (e->n_fail) {
		e->state = EST_FAIL;
	} else if (e->n_unknown || e->n_ok == 0) {
		e->state = EST_UNKNOWN;
		e->peer = first_unknown;
		e->outcome = unk_out;
		e->dir = unk_dir;
		copy_str(e->detail, sizeof(e->detail),
			 first_unknown < 0 ? "no peer was probed on this network" : unk_detail);
	} else {
		e->state = EST_WORKS;
	}
}

/* ---- the network order ---------------------------------------------------------------- */

static int add_net(struct ctx *c, const struct npf_addr *a)
{
	struct npf_addr key;
	struct net *n;

	/* A /0 would contain every address and make "0.0.0.0/0" a network of the job. */
	if (!addr_usable(a) || a->prefixlen == 0)
		return 0;
	addr_mask(a, a->prefixlen, &key);
	for (size_t i = 0; i < c->n_nets; i++)
		if (c->nets[i].prefix.family == key.family &&
		    c->nets[i].prefix.prefixlen == key.prefixlen &&
		    memcmp(c->nets[i].prefix.addr, key.addr, sizeof(key.addr)) == 0)
			return 0;
	if (c->n_nets >= REC_NETS_MAX) {
		c->nets_capped = true;
		return 0;
	}
	n = realloc(c->nets, (c->n_nets + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->nets = n;
	memset(&n[c->n_nets], 0, sizeof(*n));
	n[c->n_nets].prefix = key;
	n[c->n_nets].prefer = PREFER_NONE;
	n[c->n_nets].ifc = -1;
	c->n_nets++;
	return 0;
}

static void rank_member(struct ctx *c, struct net *n, const char *ifname, uint32_t roles,
			bool rdma, int64_t speed)
{
	unsigned int idx;

	if (pat_match(c->pol->avoid, ifname, NULL))
		n->avoid = true;
	if (pat_match(c->pol->prefer, ifname, &idx) && idx < n->prefer)
		n->prefer = idx;
	if (roles & (NPF_ROLE_CONTAINER_BRIDGE | NPF_ROLE_OVERLAY | NPF_ROLE_VPN))
		n->role = true;
	if (n->n_members++ == 0) {
		n->rdma = rdma;
		n->speed = speed > 0 ? speed : 0;
	} else {
		n->rdma = n->rdma && rdma;
		if (speed <= 0 || speed < n->speed)
			n->speed = speed > 0 ? speed : 0;
	}
}

static bool cand_rdma(const struct npf_candidate *cd)
{
	return (cd->rdma_dev[0] && cd->rdma_active) || cd->kind == NPF_KIND_IPOIB;
}

static bool iface_rdma(const struct npf_inventory *inv, const struct npf_iface *ifc)
{
	if (ifc->kind == NPF_KIND_IPOIB)
		return true;
	for (size_t d = 0; d < inv->n_rdma; d++)
		for (size_t p = 0; p < inv->rdma[d].n_ports; p++)
			if (inv->rdma[d].ports[p].state == NPF_PORT_ACTIVE &&
			    strncmp(inv->rdma[d].ports[p].netdev, ifc->name, IFNAMSIZ) == 0)
				return true;
	return false;
}

/* The facts every node of the job shares: what each node announced in HELLO. Our own
 * inventory only stands in when our own announcement is missing from the check. */
static int build_nets(struct ctx *c)
{
	const struct npf_check *chk = c->chk;
	bool self_announced = chk->nodes[0].n_cands > 0;
	int r;

	for (size_t k = 0; k < chk->n_nodes; k++)
		for (size_t j = 0; j < chk->nodes[k].n_cands; j++)
			if ((r = add_net(c, &chk->nodes[k].cands[j].addr)) < 0)
				return r;
	if (!self_announced)
		for (size_t i = 0; i < c->inv->n_ifaces; i++)
			for (size_t a = 0; a < c->inv->ifaces[i].n_addrs; a++)
				if (!iface_is_loopback(&c->inv->ifaces[i]) &&
				    (r = add_net(c, &c->inv->ifaces[i].addrs[a])) < 0)
					return r;
	for (size_t n = 0; n < c->n_nets; n++) {
		struct net *net = &c->nets[n];

		for (size_t k = 0; k < chk->n_nodes; k++)
			for (size_t j = 0; j < chk->nodes[k].n_cands; j++) {
				const struct npf_candidate *cd = &chk->nodes[k].cands[j];

				if (addr_valid(&cd->addr) && in_net(&cd->addr, net))
					rank_member(c, net, cd->ifname, cd->roles, cand_rdma(cd),
						    cd->speed_mbps);
			}
		if (self_announced)
			continue;
		for (size_t i = 0; i < c->inv->n_ifaces; i++) {
			const struct npf_iface *ifc = &c->inv->ifaces[i];

			for (size_t a = 0; a < ifc->n_addrs; a++)
				if (addr_usable(&ifc->addrs[a]) && in_net(&ifc->addrs[a], net)) {
					rank_member(c, net, ifc->name, ifc->roles,
						    iface_rdma(c->inv, ifc), ifc->speed_mbps);
					break;
				}
		}
	}
	return 0;
}

/* The total order of networks (docs/decision.md): operator policy, then role, RDMA,
 * speed, family, and the prefix itself. Nothing local (names, ifindex) takes part, so
 * every node holding the same announcements sorts identically. */
static int net_cmp(const void *pa, const void *pb)
{
	const struct net *a = pa, *b = pb;
	int r;

	if (a->avoid != b->avoid)
		return a->avoid ? 1 : -1;
	if (a->prefer != b->prefer)
		return a->prefer < b->prefer ? -1 : 1;
	if (a->role != b->role)
		return a->role ? 1 : -1;
	if (a->rdma != b->rdma)
		return a->rdma ? -1 : 1;
	if (a->speed != b->speed)
		return a->speed > b->speed ? -1 : 1;
	if (a->prefix.family != b->prefix.family)
		return a->prefix.family == AF_INET ? -1 : 1;
	r = memcmp(a->prefix.addr, b->prefix.addr, sizeof(a->prefix.addr));
	if (r)
		return r;
	return (int)a->prefix.prefixlen - (int)b->prefix.prefixlen;
}

/* Which ranking key put a before b, for humans. */
static const char *net_cmp_reason(const struct net *a, const struct net *b)
{
	if (a->avoid != b->avoid)
		return "avoid= policy";
	if (a->prefer != b->prefer)
		return "prefer= policy";
	if (a->role != b->role)
		return "container bridge/overlay/VPN ranks last";
	if (a->rdma != b->rdma)
		return "RDMA-backed";
	if (a->speed != b->speed)
		return "link speed";
	if (a->prefix.family != b->prefix.family)
		return "IPv4 before IPv6";
	return "lower network prefix";
}

/* Among our interfaces on one network (two NICs in one subnet): a local choice. */
static int local_cmp(const struct ctx *c, size_t i, size_t j)
{
	const struct npf_iface *a = &c->inv->ifaces[i], *b = &c->inv->ifaces[j];
	unsigned int pa = PREFER_NONE, pb = PREFER_NONE;
	bool aa = pat_match(c->pol->avoid, a->name, NULL);
	bool ab = pat_match(c->pol->avoid, b->name, NULL);
	bool ra = iface_rdma(c->inv, a), rb = iface_rdma(c->inv, b);

	if (aa != ab)
		return aa ? 1 : -1;
	pat_match(c->pol->prefer, a->name, &pa);
	pat_match(c->pol->prefer, b->name, &pb);
	if (pa != pb)
		return pa < pb ? -1 : 1;
	if (ra != rb)
		return ra ? -1 : 1;
	if (a->speed_mbps != b->speed_mbps)
		return a->speed_mbps > b->speed_mbps ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Only what we announced was probed; an address we did not announce (excluded by
 * interfaces_exclude, or newer than the check) is not a candidate at all. */
static bool announced(const struct ctx *c, const struct npf_iface *ifc, const struct npf_addr *a)
{
	const struct npf_node *self = &c->chk->nodes[0];

	if (self->n_cands == 0)
		return true;
	for (size_t j = 0; j < self->n_cands; j++)
		if (strncmp(self->cands[j].ifname, ifc->name, IFNAMSIZ) == 0 &&
		    npf_addr_equal(&self->cands[j].addr, a))
			return true;
	return false;
}

static void evaluate_all(struct ctx *c)
{
	const struct npf_inventory *inv = c->inv;

	/* First mark which interface holds which network, so evaluate() knows which
	 * interfaces carry several and must split their links by path. An interface
	 * that is down or has no carrier holds none: it cannot carry the job. */
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		const struct npf_iface *ifc = &inv->ifaces[i];
		bool up = (ifc->flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING);

		for (size_t n = 0; n < c->n_nets; n++) {
			struct eval *e = &c->ev[i * c->n_nets + n];

			e->state = EST_ABSENT;
			if (iface_is_loopback(ifc) || !up)
				continue;
			for (size_t a = 0; a < ifc->n_addrs; a++)
				if (addr_usable(&ifc->addrs[a]) &&
				    in_net(&ifc->addrs[a], &c->nets[n]) &&
				    announced(c, ifc, &ifc->addrs[a])) {
					e->state = EST_UNKNOWN;
					e->addr = ifc->addrs[a];
					break;
				}
		}
	}
	for (size_t i = 0; i < inv->n_ifaces; i++)
		for (size_t n = 0; n < c->n_nets; n++) {
			struct eval *e = &c->ev[i * c->n_nets + n];

			if (e->state != EST_ABSENT)
				evaluate(c, i, &c->nets[n], e);
		}
	for (size_t n = 0; n < c->n_nets; n++) {
		struct net *net = &c->nets[n];

		net->state = EST_ABSENT;
		net->ifc = -1;
		for (size_t i = 0; i < inv->n_ifaces; i++) {
			enum est s = c->ev[i * c->n_nets + n].state;

			if (s == EST_ABSENT)
				continue;
			if (net->ifc < 0 || s > net->state ||
			    (s == net->state && local_cmp(c, i, (size_t)net->ifc) < 0)) {
				net->state = s;
				net->ifc = (int)i;
			}
		}
	}
}

static const struct eval *ev_at(const struct ctx *c, size_t i, size_t n)
{
	return &c->ev[i * c->n_nets + n];
}

/* "wrong-peer (forward) with node2: answered by node1" */
static void eval_text(const struct ctx *c, const struct eval *e, char *buf, size_t len)
{
	int n;

	if (e->peer < 0) {
		snprintf(buf, len, "%s", e->detail[0] ? e->detail : "no evidence");
		return;
	}
	n = snprintf(buf, len, "%s (%s) with %s", npf_outcome_name(e->outcome),
		     npf_direction_name(e->dir), node_name(c, e->peer));
	if (n >= 0 && (size_t)n < len && e->detail[0])
		snprintf(buf + n, len - (size_t)n, ": %s", e->detail);
}

/* The most telling evaluation of interface i: a working network, else the best-ranked
 * one it holds. Returns the network index or -1. */
static int iface_best_net(const struct ctx *c, size_t i)
{
	int best = -1;

	for (size_t n = 0; n < c->n_nets; n++) {
		enum est s = ev_at(c, i, n)->state;

		if (s == EST_ABSENT)
			continue;
		if (best < 0 || s > ev_at(c, i, (size_t)best)->state)
			best = (int)n;
	}
	return best;
}

/* ---- rejections, NCCL's default, failures ---------------------------------------------- */

static int add_rejection(struct ctx *c, const struct npf_iface *ifc, const char *reason, int peer,
			 enum npf_outcome o, enum npf_direction dir)
{
	struct npf_recommendation *r = c->out;
	struct npf_rejection *n = realloc(r->rejections, (r->n_rejections + 1) * sizeof(*n));
	struct npf_rejection *j;

	if (!n)
		return -ENOMEM;
	r->rejections = n;
	j = &n[r->n_rejections++];
	memset(j, 0, sizeof(*j));
	copy_str(j->ifname, sizeof(j->ifname), ifc->name);
	copy_str(j->reason, sizeof(j->reason), reason);
	j->peer = peer;
	if (peer >= 0)
		copy_str(j->peer_name, sizeof(j->peer_name), node_name(c, peer));
	j->outcome = o;
	j->dir = dir;
	return 0;
}

/* Why an interface holds no network of the job. */
static const char *no_net_reason(const struct ctx *c, const struct npf_iface *ifc)
{
	bool any = false, usable = false;

	for (size_t a = 0; a < ifc->n_addrs; a++) {
		any = any || addr_valid(&ifc->addrs[a]);
		usable = usable || addr_usable(&ifc->addrs[a]);
	}
	if (!(ifc->flags & IFF_UP))
		return "interface is down";
	if (!(ifc->flags & IFF_RUNNING))
		return "interface is not running (no carrier)";
	if (!any)
		return "no IP address";
	if (!usable)
		return "only loopback, link-local or tentative addresses";
	if (c->nets_capped)
		return "not evaluated: too many networks announced";
	return "not announced as a candidate (excluded by configuration, or newer than the check)";
}

/* "198.18.1.0/24: timeout (forward) with node3 (and 1 more peer); 2001:db8::/64: ..."
 * for every network interface i holds, best-ranked first. */
static void fail_text(const struct ctx *c, size_t i, char *buf, size_t len)
{
	char ev[160], cidr[INET6_ADDRSTRLEN + 5];
	size_t used = 0;

	buf[0] = '\0';
	for (size_t n = 0; n < c->n_nets && used + 1 < len; n++) {
		const struct eval *e = ev_at(c, i, n);
		int w;

		if (e->state == EST_ABSENT)
			continue;
		cidr_str(&c->nets[n].prefix, cidr, sizeof(cidr));
		eval_text(c, e, ev, sizeof(ev));
		if (e->state == EST_WORKS)
			snprintf(ev, sizeof(ev), "works");
		w = snprintf(buf + used, len - used, "%s%s: %s%s", used ? "; " : "", cidr,
			     e->state == EST_UNKNOWN ? "not verified: " : "", ev);
		if (w < 0)
			break;
		used += (size_t)w;
		if (used >= len)
			break;
		if (e->state == EST_FAIL && e->n_fail > 1) {
			w = snprintf(buf + used, len - used, " (and %zu more peer%s)",
				     e->n_fail - 1, e->n_fail > 2 ? "s" : "");
			if (w < 0)
				break;
			used += (size_t)w;
		}
	}
}

static int build_rejections(struct ctx *c)
{
	const struct npf_inventory *inv = c->inv;
	const struct net *ch = c->chosen >= 0 ? &c->nets[c->chosen] : NULL;
	char text[NPF_REC_REASON_MAX], ev[160], cidr[INET6_ADDRSTRLEN + 5];
	int r;

	for (size_t i = 0; i < inv->n_ifaces; i++) {
		const struct npf_iface *ifc = &inv->ifaces[i];
		int bn = iface_best_net(c, i);
		const struct eval *e;

		if (iface_is_loopback(ifc) || (ch && (size_t)ch->ifc == i))
			continue;
		if (bn < 0) {
			r = add_rejection(c, ifc, no_net_reason(c, ifc), -1, NPF_OUT_NOT_PROBED,
					  NPF_DIR_FORWARD);
			if (r < 0)
				return r;
			continue;
		}
		e = ev_at(c, i, (size_t)bn);
		cidr_str(&c->nets[bn].prefix, cidr, sizeof(cidr));
		eval_text(c, e, ev, sizeof(ev));
		if (e->state == EST_WORKS && ch && (size_t)bn == (size_t)c->chosen)
			bfmt(text, sizeof(text),
				 "works on %s, but %s holds the same network and ranks first here",
				 cidr, inv->ifaces[ch->ifc].name);
		else if (e->state == EST_WORKS && ch)
			bfmt(text, sizeof(text), "works on %s, but %s ranks higher (%s)", cidr,
				 inv->ifaces[ch->ifc].name,
				 net_cmp_reason(ch, &c->nets[bn]));
		else if (e->state == EST_WORKS)
			bfmt(text, sizeof(text), "works on %s", cidr);
		else
			fail_text(c, i, text, sizeof(text));
		r = add_rejection(c, ifc, text, e->state == EST_WORKS ? -1 : e->peer,
				  e->state == EST_WORKS ? NPF_OUT_OK : e->outcome, e->dir);
		if (r < 0)
			return r;
	}
	return 0;
}

static void predict_nccl_default(struct ctx *c)
{
	struct npf_recommendation *out = c->out;
	const struct npf_iface *ifc;
	char ip[INET6_ADDRSTRLEN], ev[160];
	size_t i;
	int n = -1;

	if (nccl_default_pick(c->inv, c->version, 0, &out->nccl_default) < 0) {
		snprintf(out->nccl_default_text, sizeof(out->nccl_default_text),
			 "NCCL's default would find no socket interface "
			 "(\"Bootstrap : no socket interface found\")");
		return;
	}
	out->nccl_default_found = true;
	ifc = npf_inventory_find_name(c->inv, out->nccl_default.ifname);
	npf_addr_str(&out->nccl_default.addr, ip, sizeof(ip));
	if (!ifc)
		return;
	i = (size_t)(ifc - c->inv->ifaces);
	for (size_t k = 0; k < c->n_nets; k++)
		if (ev_at(c, i, k)->state != EST_ABSENT &&
		    in_net(&out->nccl_default.addr, &c->nets[k])) {
			n = (int)k;
			break;
		}
	if (npf_addr_is_local_only(&out->nccl_default.addr)) {
		bfmt(out->nccl_default_text, sizeof(out->nccl_default_text),
		     "NCCL's default would use %s (%s, %s): a loopback or link-local address "
		     "other nodes cannot reach",
		     ifc->name, iface_desc(ifc), ip);
	} else if (n < 0) {
		bfmt(out->nccl_default_text, sizeof(out->nccl_default_text),
		     "NCCL's default would use %s (%s, %s): not probed", ifc->name, iface_desc(ifc),
		     ip);
	} else if (ev_at(c, i, (size_t)n)->state == EST_WORKS) {
		out->nccl_default_passed = true;
		bfmt(out->nccl_default_text, sizeof(out->nccl_default_text),
		     "NCCL's default would use %s (%s, %s), which passed%s", ifc->name,
		     iface_desc(ifc), ip,
		     c->chosen == n && (size_t)c->nets[n].ifc == i ? " (the choice here)" : "");
	} else {
		eval_text(c, ev_at(c, i, (size_t)n), ev, sizeof(ev));
		bfmt(out->nccl_default_text, sizeof(out->nccl_default_text),
		     "NCCL's default would use %s (%s, %s): %s%s", ifc->name, iface_desc(ifc), ip,
		     ev_at(c, i, (size_t)n)->state == EST_UNKNOWN ? "not verified: " : "", ev);
	}
}

/* Whom to blame when nothing works: a peer that breaks most of our interfaces, or
 * this node when every interface fails with every peer it was tested against. */
static void blame(struct ctx *c)
{
	struct npf_recommendation *out = c->out;
	const struct npf_check *chk = c->chk;
	const size_t *count = c->peer_fail;
	bool all_all = true, any = false;
	int worst = -1;

	out->fail_outcome = NPF_OUT_UNREACHABLE;
	out->fail_dir = NPF_DIR_FORWARD;
	for (size_t i = 0; i < c->inv->n_ifaces; i++)
		for (size_t n = 0; n < c->n_nets; n++) {
			const struct eval *e = ev_at(c, i, n);

			if (e->state != EST_FAIL)
				continue;
			any = true;
			if (e->n_ok > 0 || e->n_unknown > 0)
				all_all = false;
		}
	if (!any) {
		copy_str(out->fail_node, sizeof(out->fail_node), node_name(c, 0));
		return;
	}
	for (size_t k = 1; k < chk->n_nodes; k++)
		if (count[k] && (worst < 0 || count[k] > count[worst]))
			worst = (int)k;
	if (all_all && c->n_peers >= 2)
		copy_str(out->fail_node, sizeof(out->fail_node), node_name(c, 0));
	else
		copy_str(out->fail_node, sizeof(out->fail_node), node_name(c, worst));
	/* The evidence shown: the best-ranked network that fails with the suspect, else
	 * the best-ranked failing one. */
	for (int pass = 0; pass < 2 && !out->fail_ifname[0]; pass++)
		for (size_t n = 0; n < c->n_nets; n++) {
			const struct net *net = &c->nets[n];
			const struct eval *e;

			if (net->ifc < 0 || net->state != EST_FAIL)
				continue;
			e = ev_at(c, (size_t)net->ifc, n);
			if (pass == 0 && e->peer != worst)
				continue;
			copy_str(out->fail_ifname, sizeof(out->fail_ifname),
				 c->inv->ifaces[net->ifc].name);
			out->fail_outcome = e->outcome;
			out->fail_dir = e->dir;
			break;
		}
}

/* ---- the environment ------------------------------------------------------------------ */

static bool var_wanted(const struct ctx *c, enum npf_var v)
{
	if (v == NPF_VAR_MASTER_ADDR)
		return c->pol->master_addr;
	return c->pol->publish == 0 || (c->pol->publish & var_bits[v]);
}

static void set_var(struct ctx *c, char **vals, enum npf_var v, const char *value)
{
	if (c->err || !var_wanted(c, v))
		return;
	free(vals[v]);
	vals[v] = strdup(value);
	if (!vals[v])
		c->err = -ENOMEM;
}

static void drop_var(char **vals, enum npf_var v)
{
	free(vals[v]);
	vals[v] = NULL;
}

static int build_choices(struct ctx *c)
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
	if (any6 && var_wanted(c, NPF_VAR_NCCL_IB_ADDR_FAMILY)) {
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
		if (!used || !var_wanted(c, NPF_VAR_NCCL_IB_ADDR_RANGE))
			continue;
		if (c->nets[k].prefix.family == AF_INET6 &&
		    !var_wanted(c, NPF_VAR_NCCL_IB_ADDR_FAMILY))
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
		add_note(c, "NCCL_IB_HCA narrowed: %s:%d left out: %s", h->dev, h->port, h->why);
	}
	if (tries[best].family6)
		set_var(c, vals, NPF_VAR_NCCL_IB_ADDR_FAMILY, "AF_INET6");
	if (tries[best].range[0])
		set_var(c, vals, NPF_VAR_NCCL_IB_ADDR_RANGE, tries[best].range);
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
	if (!var_wanted(c, NPF_VAR_NCCL_IB_GID_INDEX))
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
		add_note(c, "NCCL_IB_HCA narrowed: %s:%d left out: %s", h->dev, h->port, h->why);
	}
	snprintf(buf, sizeof(buf), "%d", k);
	set_var(c, vals, NPF_VAR_NCCL_IB_GID_INDEX, buf);
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
static bool hca_value(const struct npf_recommendation *r, char *buf, size_t len, size_t *count)
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

	if (!hca_value(out, value, sizeof(value), &count) || count > NCCLMATCH_IB_MAX) {
		add_note(c, "NCCL_IB_HCA left out: %zu ports exceed what NCCL reads (%d)", count,
			 NCCLMATCH_IB_MAX);
		return c->err;
	}
	if (count == 0) {
		if (unpublished_active)
			add_note(c, "no RDMA port passed the probes; NCCL still uses every ACTIVE "
				    "port unless NCCL_IB_HCA or NCCL_IB_DISABLE=1 says otherwise");
		drop_var(vals, NPF_VAR_NCCL_IB_GID_INDEX);
		return c->err;
	}
	/* Prove the value under NCCL's own grammar: exactly the published ports. */
	{
		struct ncclmatch_list l;

		if (ncclmatch_parse(value, NCCLMATCH_IB, &l) < 0) {
			add_note(c, "NCCL_IB_HCA left out: '%s' does not parse as NCCL reads it",
				 value);
			return c->err;
		}
		for (size_t i = 0; i < out->n_hcas; i++)
			if (ncclmatch_hca(&l, out->hcas[i].dev, out->hcas[i].port) !=
			    out->hcas[i].published) {
				add_note(c, "NCCL_IB_HCA left out: '%s' would %s %s:%d", value,
					 out->hcas[i].published ? "miss" : "also select",
					 out->hcas[i].dev, out->hcas[i].port);
				return c->err;
			}
	}
	set_var(c, vals, NPF_VAR_NCCL_IB_HCA, value);
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
		add_note(c, "NCCL_SOCKET_IFNAME left out: '%s' does not parse as NCCL reads it",
			 value);
		return;
	}
	for (size_t i = 0; i < inv->n_ifaces; i++)
		if (ncclmatch_ifname(&l, inv->ifaces[i].name) != (&inv->ifaces[i] == ifc)) {
			add_note(c, "NCCL_SOCKET_IFNAME left out: '%s' would %s %s under NCCL's "
				    "grammar",
				 value, &inv->ifaces[i] == ifc ? "miss" : "also select",
				 inv->ifaces[i].name);
			return;
		}
	set_var(c, vals, NPF_VAR_NCCL_SOCKET_IFNAME, value);
	if (nccl_socket_pick(inv, c->version, family, value, &pick) < 0)
		add_note(c, "NCCL would find no usable address on %s (not running?)", ifc->name);
	else if (!in_net(&pick.addr, &c->nets[c->chosen]))
		add_note(c, "NCCL binds the first address of %s, %s, which is not on the chosen "
			    "network", ifc->name, npf_addr_str(&pick.addr, ip, sizeof(ip)));
}

/* ---- Open MPI's interface selection ------------------------------------------------------- */

/* Would Open MPI's interface scan (opal/mca/if) list this address? Every IPv4 address of
 * an UP interface, link-local included; IPv6 only with global scope (not ::1, fe80::/10,
 * fec0::/10). */
static bool ompi_lists(const struct npf_addr *a)
{
	if (a->family == AF_INET)
		return true;
	if (a->family != AF_INET6 || npf_addr_is_local_only(a))
		return false;
	return !(a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0xc0) && a->addr[0] != 0xff;
}

/* An address Open MPI would use besides the chosen network when an interface is named:
 * if_include by name takes every address of it. Returns the first one, or NULL. */
static const struct npf_addr *ompi_stray(const struct npf_addr *addrs, size_t n,
					 const struct net *net)
{
	for (size_t i = 0; i < n; i++)
		if (addr_valid(&addrs[i]) && ompi_lists(&addrs[i]) && !in_net(&addrs[i], net))
			return &addrs[i];
	return NULL;
}

/* The same for a peer, from what it announced on ifname (the announcement leaves out
 * loopback and link-local addresses, so a peer's 169.254 address goes unseen). */
static const struct npf_addr *ompi_stray_peer(const struct npf_node *nd, const char *ifname,
					      const struct net *net)
{
	for (size_t j = 0; j < nd->n_cands; j++) {
		const struct npf_candidate *cd = &nd->cands[j];

		if (strncmp(cd->ifname, ifname, IFNAMSIZ) == 0 && ompi_stray(&cd->addr, 1, net))
			return &cd->addr;
	}
	return NULL;
}

static bool ompi_wanted(const struct ctx *c)
{
	return var_wanted(c, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE) ||
	       var_wanted(c, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE);
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
			add_note(c, "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include left "
				    "out: Open MPI takes only IPv4 CIDRs, and it splits the name %s "
				    "on ','",
				 ifc->name);
			return;
		}
		stray = ompi_stray(ifc->addrs, ifc->n_addrs, net);
		if (stray) {
			add_note(c, "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include left "
				    "out: Open MPI takes only IPv4 CIDRs, and by name (%s) it would "
				    "also use %s, which is not on %s",
				 ifc->name, npf_addr_str(stray, ip, sizeof(ip)), c->out->cidr);
			return;
		}
		value = ifc->name;
	}
	set_var(c, vals, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, value);
	set_var(c, vals, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE, value);
}

/* Job-wide, an interface name must be the same on every node and name nothing unverified
 * on any of them. */
static void ompi_job_wide(struct ctx *c, char **vals, bool same_name)
{
	const struct net *net = &c->nets[c->chosen];
	const struct npf_recommendation *out = c->out;
	char ip[INET6_ADDRSTRLEN];

	if (net->prefix.family != AF_INET6 ||
	    (!vals[NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE] &&
	     !vals[NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE]))
		return;
	if (!same_name) {
		add_note(c, "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include: no job-wide "
			    "value: Open MPI takes only IPv4 CIDRs and the nodes use different "
			    "interface names on %s (mpirun gives every node the launch node's value)",
			 out->cidr);
		goto drop;
	}
	for (size_t k = 1; k < c->chk->n_nodes; k++) {
		const struct npf_addr *stray =
			ompi_stray_peer(&c->chk->nodes[k], out->nodes[k].ifname, net);

		if (stray) {
			add_note(c, "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include: no "
				    "job-wide value: Open MPI takes only IPv4 CIDRs, and by name (%s) "
				    "it would also use %s on %s, which is not on %s",
				 out->nodes[k].ifname, npf_addr_str(stray, ip, sizeof(ip)),
				 node_name(c, (int)k), out->cidr);
			goto drop;
		}
	}
	return;
drop:
	drop_var(vals, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE);
	drop_var(vals, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE);
}

/* ---- job-wide values -------------------------------------------------------------------- */

#define TOK_MAX (NPF_NAME_MAX + 16)

struct tokset {
	char (*t)[TOK_MAX];
	size_t n;
};

static bool tok_has(const struct tokset *s, const char *tok)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->t[i], tok) == 0)
			return true;
	return false;
}

static int tok_add(struct tokset *s, const char *tok)
{
	char (*n)[TOK_MAX];

	if (!tok[0] || tok_has(s, tok))
		return 0;
	n = realloc(s->t, (s->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->t = n;
	copy_str(s->t[s->n++], TOK_MAX, tok);
	return 0;
}

static void tok_free_all(struct tokset *s, size_t n)
{
	if (!s)
		return;
	for (size_t i = 0; i < n; i++)
		free(s[i].t);
	free(s);
}

enum jw_kind {
	JW_EXACT,  /* Gloo, TensorPipe, UCX: plain exact names */
	JW_SOCKET, /* NCCL_SOCKET_IFNAME "=a,b" */
	JW_IB,     /* NCCL_IB_HCA "=dev:port,..." */
};

static bool jw_selects(const struct ncclmatch_list *l, enum jw_kind kind, const struct tokset *u,
		       const char *tok)
{
	char dev[TOK_MAX];
	char *colon;

	if (kind == JW_EXACT)
		return tok_has(u, tok);
	if (kind == JW_SOCKET)
		return ncclmatch_ifname(l, tok);
	copy_str(dev, sizeof(dev), tok);
	colon = strrchr(dev, ':');
	if (!colon)
		return ncclmatch_hca(l, dev, -1);
	*colon = '\0';
	return ncclmatch_hca(l, dev, atoi(colon + 1));
}

/* One value for every node: the union of what each node uses, accepted only when, on
 * every node, it selects exactly that node's own set among the names the node has. */
static void jw_exact(struct ctx *c, char **vals, enum npf_var v, enum jw_kind kind,
		     const struct tokset *sets, const struct tokset *known, size_t max)
{
	const char *name = var_names[v];
	struct tokset u = { 0 };
	char value[REC_VALUE_MAX];
	struct ncclmatch_list l;
	size_t nn = c->chk->n_nodes;

	if (c->err)
		return;
	drop_var(vals, v);
	for (size_t k = 0; k < nn; k++)
		for (size_t i = 0; i < sets[k].n; i++)
			if ((c->err = tok_add(&u, sets[k].t[i])) < 0)
				goto out;
	if (u.n == 0)
		goto out;
	if (u.n > max) {
		add_note(c, "%s: no job-wide value: %zu distinct names exceed the %zu NCCL reads",
			 name, u.n, max);
		goto out;
	}
	/* "=" makes every NCCL token an exact match; plain lists are exact by nature. */
	snprintf(value, sizeof(value), "%s", kind == JW_EXACT ? "" : "=");
	for (size_t i = 0, skip = strlen(value); i < u.n; i++)
		if (!list_append(value + skip, sizeof(value) - skip, u.t[i])) {
			add_note(c, "%s: no job-wide value: the list is too long", name);
			goto out;
		}
	if (kind != JW_EXACT &&
	    ncclmatch_parse(value, kind == JW_IB ? NCCLMATCH_IB : NCCLMATCH_SOCKET, &l) < 0) {
		add_note(c, "%s: no job-wide value: '%s' does not parse as NCCL reads it", name,
			 value);
		goto out;
	}
	for (size_t k = 0; k < nn; k++) {
		const char *node = node_name(c, (int)k);

		for (size_t i = 0; i < sets[k].n; i++)
			if (!tok_has(&known[k], sets[k].t[i]) ||
			    !jw_selects(&l, kind, &u, sets[k].t[i])) {
				add_note(c, "%s: no job-wide value: '%s' would miss %s on %s", name,
					 value, sets[k].t[i], node);
				goto out;
			}
		for (size_t i = 0; i < known[k].n; i++)
			if (!tok_has(&sets[k], known[k].t[i]) &&
			    jw_selects(&l, kind, &u, known[k].t[i])) {
				add_note(c,
					 "%s: no job-wide value: '%s' would also select %s on %s",
					 name, value, known[k].t[i], node);
				goto out;
			}
	}
	set_var(c, vals, v, value);
out:
	free(u.t);
}

static int node_known_names(const struct ctx *c, size_t k, struct tokset *s)
{
	const struct npf_node *nd = &c->chk->nodes[k];
	int r = 0;

	if (k == 0) {
		for (size_t i = 0; i < c->inv->n_ifaces && r == 0; i++)
			r = tok_add(s, c->inv->ifaces[i].name);
		return r;
	}
	for (size_t i = 0; i < nd->n_ifnames && r == 0; i++) {
		char name[IFNAMSIZ];

		memcpy(name, nd->ifnames[i], IFNAMSIZ);
		name[IFNAMSIZ - 1] = '\0';
		r = tok_add(s, name);
	}
	/* Older announcements without the full list: the candidates are all we know. */
	for (size_t j = 0; j < nd->n_cands && r == 0; j++)
		r = tok_add(s, nd->cands[j].ifname);
	return r;
}

static int node_rdma_sets(const struct ctx *c, size_t k, struct tokset *works, struct tokset *known)
{
	char tok[TOK_MAX];
	int r = 0;

	if (k == 0) {
		for (size_t i = 0; i < c->out->n_hcas && r == 0; i++) {
			snprintf(tok, sizeof(tok), "%s:%d", c->out->hcas[i].dev,
				 c->out->hcas[i].port);
			r = tok_add(known, tok);
			if (r == 0 && c->out->hcas[i].published)
				r = tok_add(works, tok);
		}
		return r;
	}
	for (size_t j = 0; j < c->chk->nodes[k].n_cands && r == 0; j++) {
		const struct npf_candidate *cd = &c->chk->nodes[k].cands[j];

		if (!cd->rdma_dev[0] || cd->rdma_port <= 0)
			continue;
		snprintf(tok, sizeof(tok), "%.*s:%d", NPF_NAME_MAX - 1, cd->rdma_dev,
			 cd->rdma_port);
		r = tok_add(known, tok);
		if (r || !cd->rdma_active || !addr_valid(&cd->addr))
			continue;
		/* A peer's port counts when it sits on a network that works here. */
		for (size_t n = 0; n < c->n_nets; n++)
			if (c->nets[n].state == EST_WORKS && in_net(&cd->addr, &c->nets[n])) {
				r = tok_add(works, tok);
				break;
			}
	}
	return r;
}

static int job_wide(struct ctx *c, char **vals)
{
	const struct npf_recommendation *out = c->out;
	size_t nn = c->chk->n_nodes;
	struct tokset *names = calloc(nn, sizeof(*names));
	struct tokset *chosen = calloc(nn, sizeof(*chosen));
	struct tokset *hw = calloc(nn, sizeof(*hw));
	struct tokset *hk = calloc(nn, sizeof(*hk));
	struct tokset *ucx = calloc(nn, sizeof(*ucx));
	struct tokset *uk = calloc(nn, sizeof(*uk));
	bool same_name = true;
	int r = -ENOMEM;

	if (!names || !chosen || !hw || !hk || !ucx || !uk)
		goto out;
	for (size_t k = 0; k < nn; k++) {
		if ((r = node_known_names(c, k, &names[k])) < 0 ||
		    (r = tok_add(&chosen[k], out->nodes[k].ifname)) < 0 ||
		    (r = node_rdma_sets(c, k, &hw[k], &hk[k])) < 0)
			goto out;
		for (size_t i = 0; i < hk[k].n && r == 0; i++)
			r = tok_add(&uk[k], hk[k].t[i]);
		for (size_t i = 0; i < names[k].n && r == 0; i++)
			r = tok_add(&uk[k], names[k].t[i]);
		for (size_t i = 0; i < hw[k].n && r == 0; i++)
			r = tok_add(&ucx[k], hw[k].t[i]);
		if (r == 0 && hw[k].n == 0)
			r = tok_add(&ucx[k], out->nodes[k].ifname);
		if (r < 0)
			goto out;
		same_name = same_name && strcmp(out->nodes[k].ifname, out->nodes[0].ifname) == 0;
	}
	r = 0;
	for (size_t k = 0; k < nn; k++)
		if (!out->nodes[k].ifname[0]) {
			add_note(c, "%s announced no address on %s: no job-wide interface names",
				 node_name(c, (int)k), out->cidr);
			drop_var(vals, NPF_VAR_NCCL_SOCKET_IFNAME);
			drop_var(vals, NPF_VAR_GLOO_SOCKET_IFNAME);
			drop_var(vals, NPF_VAR_TP_SOCKET_IFNAME);
			drop_var(vals, NPF_VAR_UCX_NET_DEVICES);
			drop_var(vals, NPF_VAR_NCCL_IB_HCA);
			/* On IPv6 Open MPI's value is a name too (ompi_if_include). */
			if (c->nets[c->chosen].prefix.family == AF_INET6) {
				drop_var(vals, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE);
				drop_var(vals, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE);
			}
			goto gid;
		}
	if (vals[NPF_VAR_NCCL_SOCKET_IFNAME])
		jw_exact(c, vals, NPF_VAR_NCCL_SOCKET_IFNAME, JW_SOCKET, chosen, names,
			 NCCLMATCH_SOCKET_MAX);
	if (var_wanted(c, NPF_VAR_NCCL_IB_HCA))
		jw_exact(c, vals, NPF_VAR_NCCL_IB_HCA, JW_IB, hw, hk, NCCLMATCH_IB_MAX);
	if (vals[NPF_VAR_UCX_NET_DEVICES])
		jw_exact(c, vals, NPF_VAR_UCX_NET_DEVICES, JW_EXACT, ucx, uk, SIZE_MAX);
	/* Gloo and TensorPipe take one exact name that must exist on the node. */
	if (!same_name) {
		if (vals[NPF_VAR_GLOO_SOCKET_IFNAME])
			add_note(c, "GLOO_SOCKET_IFNAME: no job-wide value: the nodes use "
				    "different interface names and Gloo needs one that exists on "
				    "each node");
		if (vals[NPF_VAR_TP_SOCKET_IFNAME])
			add_note(c, "TP_SOCKET_IFNAME: no job-wide value: the nodes use different "
				    "interface names and TensorPipe needs one that exists on each "
				    "node");
		drop_var(vals, NPF_VAR_GLOO_SOCKET_IFNAME);
		drop_var(vals, NPF_VAR_TP_SOCKET_IFNAME);
	}
	ompi_job_wide(c, vals, same_name);
gid:
	if (vals[NPF_VAR_NCCL_IB_GID_INDEX]) {
		add_note(c, "NCCL_IB_GID_INDEX: no job-wide value: GID indices are per node and "
			    "the peers' GID tables are not known here");
		drop_var(vals, NPF_VAR_NCCL_IB_GID_INDEX);
	}
	if (vals[NPF_VAR_NCCL_IB_ADDR_FAMILY] || vals[NPF_VAR_NCCL_IB_ADDR_RANGE])
		add_note(c, "NCCL_IB_ADDR_FAMILY/NCCL_IB_ADDR_RANGE follow from the chosen "
			    "network, but only this node's GID tables were checked");
	if (c->err)
		r = c->err;
out:
	tok_free_all(names, nn);
	tok_free_all(chosen, nn);
	tok_free_all(hw, nn);
	tok_free_all(hk, nn);
	tok_free_all(ucx, nn);
	tok_free_all(uk, nn);
	return r;
}

/* ---- putting it together ------------------------------------------------------------------ */

static int build_env(struct ctx *c)
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
		set_var(c, vals, NPF_VAR_NCCL_SOCKET_FAMILY, "AF_INET6");
	if (var_wanted(c, NPF_VAR_NCCL_SOCKET_IFNAME))
		socket_ifname(c, vals, vals[NPF_VAR_NCCL_SOCKET_FAMILY] ? family : 0);
	if ((r = build_hcas(c, vals)) < 0)
		goto out;
	set_var(c, vals, NPF_VAR_GLOO_SOCKET_IFNAME, ifc->name);
	set_var(c, vals, NPF_VAR_TP_SOCKET_IFNAME, ifc->name);
	if (vals[NPF_VAR_NCCL_IB_HCA] || (!var_wanted(c, NPF_VAR_NCCL_IB_HCA) && out->n_hcas)) {
		size_t count;

		if (hca_value(out, value, sizeof(value), &count) && count)
			set_var(c, vals, NPF_VAR_UCX_NET_DEVICES, value + 1);
	}
	if (!vals[NPF_VAR_UCX_NET_DEVICES])
		set_var(c, vals, NPF_VAR_UCX_NET_DEVICES, ifc->name);
	ompi_if_include(c, vals, ifc);
	if (var_wanted(c, NPF_VAR_MASTER_ADDR)) {
		const char *first = c->pol->first_node;
		int k = -1;

		for (size_t i = 0; first && first[0] && i < c->chk->n_nodes; i++)
			if (strncmp(c->chk->nodes[i].name, first, NPF_NAME_MAX) == 0) {
				k = (int)i;
				break;
			}
		if (!first || !first[0])
			add_note(c, "MASTER_ADDR left out: the job's first node is not known");
		else if (k < 0)
			add_note(c, "MASTER_ADDR left out: %s is not part of this check", first);
		else if (!out->nodes[k].ifname[0])
			add_note(c, "MASTER_ADDR left out: %s announced no address on %s", first,
				 out->cidr);
		else
			set_var(c, vals, NPF_VAR_MASTER_ADDR,
				npf_addr_str(&out->nodes[k].addr, ip, sizeof(ip)));
	}
	if (c->err) {
		r = c->err;
		goto out;
	}
	if (c->pol->job_wide && (r = job_wide(c, vals)) < 0)
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
			copy_str(out->vars[out->n_vars].name, NPF_REC_NAME_MAX, var_names[v]);
			out->vars[out->n_vars++].value = vals[v];
			vals[v] = NULL;
		}
out:
	for (int v = 0; v < NPF_VAR__COUNT; v++)
		free(vals[v]);
	return r;
}

static void summarise(struct ctx *c)
{
	struct npf_recommendation *out = c->out;
	size_t used;
	int n;

	if (c->chk->n_nodes < 2) {
		snprintf(out->summary, sizeof(out->summary),
			 "unknown: no peers in the check, nothing was verified");
		return;
	}
	if (out->verdict == NPF_VERDICT_OK) {
		const struct eval *e = ev_at(c, (size_t)c->nets[c->chosen].ifc, (size_t)c->chosen);

		snprintf(out->summary, sizeof(out->summary),
			 "ok: %s (%s) works to and from %zu peer%s%s", out->ifname, out->cidr,
			 e->n_ok, e->n_ok == 1 ? "" : "s",
			 c->sparse ? " (sparse plan: the probed ones)" : "");
		return;
	}
	if (out->verdict == NPF_VERDICT_UNKNOWN) {
		char ev[160] = "";

		if (c->chosen >= 0)
			eval_text(c, ev_at(c, (size_t)c->nets[c->chosen].ifc, (size_t)c->chosen),
				  ev, sizeof(ev));
		snprintf(out->summary, sizeof(out->summary), "unknown: %s%s%s%s",
			 out->have_choice ? out->ifname : "evidence incomplete",
			 out->have_choice ? " (" : "", out->have_choice ? out->cidr : "",
			 out->have_choice ? ") is the best candidate but not verified: " : "");
		used = strlen(out->summary);
		snprintf(out->summary + used, sizeof(out->summary) - used, "%s", ev);
		return;
	}
	n = snprintf(out->summary, sizeof(out->summary),
		     "fail: no interface of %s works to and from every peer (suspect: %s)",
		     node_name(c, 0), out->fail_node);
	used = n > 0 && (size_t)n < sizeof(out->summary) ? (size_t)n : sizeof(out->summary) - 1;
	for (size_t i = 0; i < out->n_rejections; i++) {
		const struct npf_rejection *j = &out->rejections[i];

		n = snprintf(out->summary + used, sizeof(out->summary) - used, "%s %s: %s",
			     i ? ";" : ":", j->ifname, j->reason);
		if (n < 0 || (size_t)n >= sizeof(out->summary) - used)
			break;
		used += (size_t)n;
	}
}

int npf_recommend(const struct npf_inventory *inv, const struct npf_check *chk,
		  const struct npf_policy *pol, struct npf_recommendation *out)
{
	static const struct npf_policy defaults = { 0 };
	struct ctx c = { 0 };
	int r;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->fail_outcome = NPF_OUT_OK;
	if (!inv || !chk || chk->n_nodes == 0 || !chk->nodes)
		return -EINVAL;
	c.inv = inv;
	c.chk = chk;
	c.pol = pol ? pol : &defaults;
	c.out = out;
	c.sparse = chk->sparse || c.pol->sparse;
	c.version = c.pol->nccl_version > 0 ? c.pol->nccl_version : NPF_NCCL_VERSION_CURRENT;
	for (size_t k = 1; k < chk->n_nodes; k++)
		if (chk->nodes[k].available || !outside_plan(&c, &chk->nodes[k]))
			c.n_peers++;
	c.chosen = -1;
	out->nccl_version = c.version;

	if ((r = build_indexes(&c)) < 0 || (r = build_nets(&c)) < 0)
		goto out;
	if (c.n_nets > 1)
		qsort(c.nets, c.n_nets, sizeof(*c.nets), net_cmp);
	c.ev = calloc((inv->n_ifaces ? inv->n_ifaces : 1) * (c.n_nets ? c.n_nets : 1),
		      sizeof(*c.ev));
	if (!c.ev) {
		r = -ENOMEM;
		goto out;
	}
	evaluate_all(&c);

	/* The first network of the shared order that works here wins. */
	for (size_t n = 0; n < c.n_nets && c.chosen < 0; n++)
		if (c.nets[n].state == EST_WORKS)
			c.chosen = (int)n;
	if (c.chosen >= 0 && c.n_peers > 0) {
		out->verdict = NPF_VERDICT_OK;
	} else {
		c.chosen = -1;
		/* Unknown beats fail while some network has no failure yet. */
		for (size_t n = 0; n < c.n_nets && c.chosen < 0; n++)
			if (c.nets[n].state == EST_UNKNOWN || c.nets[n].state == EST_WORKS)
				c.chosen = (int)n;
		out->verdict = c.chosen >= 0 || c.n_peers == 0 ? NPF_VERDICT_UNKNOWN :
								  NPF_VERDICT_FAIL;
	}
	if (c.chosen >= 0) {
		const struct net *net = &c.nets[c.chosen];

		out->have_choice = true;
		copy_str(out->ifname, sizeof(out->ifname), inv->ifaces[net->ifc].name);
		out->addr = ev_at(&c, (size_t)net->ifc, (size_t)c.chosen)->addr;
		out->network = net->prefix;
		cidr_str(&net->prefix, out->cidr, sizeof(out->cidr));
		if ((r = build_choices(&c)) < 0)
			goto out;
	}
	if (out->verdict == NPF_VERDICT_OK) {
		for (size_t n = 0; n < (size_t)c.chosen; n++)
			if (c.nets[n].state == EST_UNKNOWN) {
				char cidr[INET6_ADDRSTRLEN + 5];

				cidr_str(&c.nets[n].prefix, cidr, sizeof(cidr));
				add_note(&c, "%s ranks higher but was not fully probed", cidr);
			}
		if ((r = build_env(&c)) < 0)
			goto out;
	} else if (out->verdict == NPF_VERDICT_FAIL) {
		blame(&c);
	} else if (c.chosen >= 0) {
		const struct eval *e = ev_at(&c, (size_t)c.nets[c.chosen].ifc, (size_t)c.chosen);

		if (e->peer >= 0)
			copy_str(out->fail_node, sizeof(out->fail_node), node_name(&c, e->peer));
		copy_str(out->fail_ifname, sizeof(out->fail_ifname), out->ifname);
		out->fail_outcome = e->outcome;
		out->fail_dir = e->dir;
	}
	if (c.sparse)
		add_note(&c, "sparse plan: only probed peers were verified from this node");
	if (c.nets_capped)
		add_note(&c, "more than %d networks were announced; the rest were ignored",
			 REC_NETS_MAX);
	if ((r = build_rejections(&c)) < 0)
		goto out;
	predict_nccl_default(&c);
	summarise(&c);
	r = c.err;
out:
	free(c.nets);
	free(c.ev);
	free(c.link_idx);
	free(c.path_off);
	free(c.path_idx);
	free(c.peer_fail);
	return r;
}

void npf_recommendation_clear(struct npf_recommendation *rec)
{
	if (!rec)
		return;
	for (size_t i = 0; i < rec->n_vars; i++)
		free(rec->vars[i].value);
	free(rec->vars);
	for (size_t i = 0; i < rec->n_notes; i++)
		free(rec->notes[i]);
	free(rec->notes);
	free(rec->rejections);
	free(rec->nodes);
	free(rec->hcas);
	memset(rec, 0, sizeof(*rec));
}

const char *npf_recommendation_get(const struct npf_recommendation *rec, enum npf_var v)
{
	const char *name = npf_var_name(v);

	if (!rec || !name)
		return NULL;
	for (size_t i = 0; i < rec->n_vars; i++)
		if (strcmp(rec->vars[i].name, name) == 0)
			return rec->vars[i].value;
	return NULL;
}
