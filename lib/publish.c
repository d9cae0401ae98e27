// SPDX-License-Identifier: MIT
/* This node's environment for the chosen network: the per-node rule of every published
 * variable (lib/pubvar.h), over the RDMA facts of hcas.c, then the job-wide stage. */
#include "consumer.h"
#include "decide.h"
#include "gid.h"
#include "ncclmatch.h"
#include "rdma_join.h"

#include <errno.h>
#include <stdlib.h>

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

/* ---- the per-node rules of the variable registry (lib/pubvar.h) --------------------------- */

/* The best-ranked other IPv4 network that works here and on which our interface's
 * primary address lies: where Open MPI can go when the chosen network is a secondary
 * subnet of our interface. -1: none. */
static int ompi_alt_net(const struct ctx *c)
{
	for (size_t n = 0; n < c->n_nets; n++) {
		const struct net *alt = &c->nets[n];
		const struct npf_addr *pri;

		if ((int)n == c->chosen || alt->state != EST_WORKS || alt->ifc < 0 ||
		    alt->prefix.family != AF_INET)
			continue;
		pri = dec_ompi_primary(&c->inv->ifaces[alt->ifc]);
		if (pri && in_net(pri, alt))
			return (int)n;
	}
	return -1;
}

struct pub {
	char *vals[NPF_VAR__COUNT];   /* the environment being built */
	char *pre[NPF_VAR__COUNT];    /* RDMA facts computed before the rules run */
	bool dropped[NPF_VAR__COUNT]; /* left out by its rule, with a note */
	int family;		      /* NCCL_SOCKET_FAMILY the rules assume: 0 or AF_INET6 */
	const struct npf_iface *ifc;  /* our interface on the chosen network */
	bool ompi_done;		      /* the Open MPI value was decided (one note for three) */
	const char *ompi_value;	      /* NULL: left out */
	char ompi_cidr[INET6_ADDRSTRLEN + 5]; /* the other network's CIDR (ompi_alt_net) */
};

typedef void (*rule_fn)(struct ctx *c, struct pub *p, enum npf_var v);

static void drop(struct ctx *c, struct pub *p, enum npf_var v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Leaves v out with a structured note naming it and our interface. */
static void drop(struct ctx *c, struct pub *p, enum npf_var v, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	dec_drop_var(p->vals, v);
	p->dropped[v] = true;
	dec_note(c, NPF_NOTE_OMITTED, v, NULL, p->ifc->name, "%s", text);
}

/* True when a is one of our announced addresses on the chosen network, i.e. an address
 * the probes tested. */
static bool addr_passed(const struct ctx *c, const struct npf_iface *ifc, const struct npf_addr *a)
{
	const struct net *net = &c->nets[c->chosen];

	return ifc == &c->inv->ifaces[net->ifc] && in_net(a, net) && addr_usable(a) &&
	       dec_announced(c, ifc, a);
}

/* NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME: the chosen interface's name,
 * published only when the consumer's address model (the row's model column,
 * lib/consumer.h) lands on an address that passed the probes. */
static void rule_ifname(struct ctx *c, struct pub *p, enum npf_var v)
{
	const struct npf_var_info *vi = npf_var_info(v);
	const struct npf_inventory *inv = c->inv;
	const struct npf_iface *ifc = p->ifc;
	char value[IFNAMSIZ + 2], ip[INET6_ADDRSTRLEN], got_if[IFNAMSIZ] = "";
	struct npf_cmodel_query q = {.value = value, .nccl_version = c->version};
	struct npf_addr a;
	int r;

	if (!dec_var_wanted(c, v))
		return;
	if (vi->model == NPF_CM_NCCL_SOCKET) {
		struct ncclmatch_list l;

		snprintf(value, sizeof(value), "=%s", ifc->name);
		q.family = p->family;
		if (ncclmatch_parse(value, NCCLMATCH_SOCKET, &l) < 0) {
			drop(c, p, v, "%s left out: '%s' does not parse as NCCL reads it", vi->name,
			     value);
			return;
		}
		for (size_t i = 0; i < inv->n_ifaces; i++)
			if (ncclmatch_ifname(&l, inv->ifaces[i].name) != (&inv->ifaces[i] == ifc)) {
				drop(c, p, v, "%s left out: '%s' would %s %s under NCCL's grammar",
				     vi->name, value,
				     &inv->ifaces[i] == ifc ? "miss" : "also select",
				     inv->ifaces[i].name);
				return;
			}
	} else {
		snprintf(value, sizeof(value), "%s", ifc->name);
		/* PyTorch splits GLOO_SOCKET_IFNAME on ',' (one device per token). */
		if (vi->model == NPF_CM_GLOO && strchr(value, ',')) {
			drop(c, p, v, "%s left out: Gloo splits the name %s on ','", vi->name,
			     value);
			return;
		}
	}
	r = npf_cmodel_addr(vi->model, inv, &q, got_if, &a);
	if (r < 0) {
		if (vi->model == NPF_CM_TENSORPIPE)
			drop(c, p, v,
			     "%s left out: TensorPipe (%s) finds no UP, RUNNING address on %s and "
			     "would listen on 127.0.0.1",
			     vi->name, npf_cmodel_function(vi->model), ifc->name);
		else
			drop(c, p, v, "%s left out: %s (%s) would find no usable address on %s",
			     vi->name, npf_consumer_name(vi->consumer),
			     npf_cmodel_function(vi->model), ifc->name);
		return;
	}
	if (!addr_passed(c, npf_inventory_find_name(inv, got_if), &a)) {
		npf_addr_str(&a, ip, sizeof(ip));
		drop(c, p, v,
		     "%s left out: %s (%s) would bind %s, the first %saddress of %s, which is "
		     "not an address that passed on %s",
		     vi->name, npf_consumer_name(vi->consumer), npf_cmodel_function(vi->model), ip,
		     q.family == AF_INET6 ? "IPv6 " : "", got_if, c->out->cidr);
		dec_note(c, NPF_NOTE_CONSUMER_ADDRESS, v, NULL, got_if, "%s would use %s on %s",
			 npf_consumer_name(vi->consumer), ip, got_if);
		return;
	}
	dec_set_var(c, p->vals, v, value);
}

/* NCCL advertises IPv4 first (ncclFindInterfaces): an IPv6 choice needs the family
 * forced. Published with NCCL_SOCKET_IFNAME or not at all (the registry's "with"). */
static void rule_socket_family(struct ctx *c, struct pub *p, enum npf_var v)
{
	if (p->family == AF_INET6)
		dec_set_var(c, p->vals, v, "AF_INET6");
}

/* The RDMA variables come from the facts dec_build_hcas() computed (hcas.c). */
static void rule_rdma(struct ctx *c, struct pub *p, enum npf_var v)
{
	if (p->pre[v])
		dec_set_var(c, p->vals, v, p->pre[v]);
}

/* UCX_NET_DEVICES: the published RDMA ports (dev:port, exact names), else the chosen
 * netdev, whose address UCX's tcp transport takes by ucs_netif_get_addr. */
static void rule_ucx_devices(struct ctx *c, struct pub *p, enum npf_var v)
{
	const struct npf_var_info *vi = npf_var_info(v);
	struct npf_cmodel_query q = {.value = p->ifc->name};
	char value[REC_VALUE_MAX], ip[INET6_ADDRSTRLEN], got_if[IFNAMSIZ] = "";
	struct npf_addr a;
	size_t count;
	int r;

	if (!dec_var_wanted(c, v))
		return;
	if ((p->vals[NPF_VAR_NCCL_IB_HCA] ||
	     (!dec_var_wanted(c, NPF_VAR_NCCL_IB_HCA) && p->pre[NPF_VAR_NCCL_IB_HCA])) &&
	    dec_hca_value(c->out, value, sizeof(value), &count) && count) {
		dec_set_var(c, p->vals, v, value + 1);
		return;
	}
	r = npf_cmodel_addr(vi->model, c->inv, &q, got_if, &a);
	if (r < 0) {
		drop(c, p, v,
		     "%s left out: UCX (%s) finds no UP, RUNNING, non-link-local address on %s",
		     vi->name, npf_cmodel_function(vi->model), p->ifc->name);
		return;
	}
	if (!addr_passed(c, p->ifc, &a)) {
		drop(c, p, v,
		     "%s left out: UCX (%s) would bind %s on %s, which is not an address that "
		     "passed on %s",
		     vi->name, npf_cmodel_function(vi->model), npf_addr_str(&a, ip, sizeof(ip)),
		     p->ifc->name, c->out->cidr);
		return;
	}
	dec_set_var(c, p->vals, v, p->ifc->name);
}

/* OMPI_MCA_{btl,oob}_tcp_if_include and PRTE_MCA_prte_if_include (Open MPI 5's runtime
 * reads only the PRTE name: schizo/ompi translates OMPI_MCA_oob_* only with
 * --personality ompi, which mpirun does not pass). split_and_resolve (btl_tcp_component.c,
 * oob_tcp_component.c, prte_oob_split_and_resolve) takes names or IPv4 CIDRs: a CIDR holds
 * on every node and mpirun copies the launch node's value everywhere, so it is the value
 * of choice. Open MPI 4.1 and PRRTE reject IPv6 CIDRs ("invalid if_inexclude") and fall
 * back to every interface, so on an IPv6 network the name is the only form left, and a
 * name selects every address of the interface: one more address there is unverified
 * traffic, so the value is left out rather than published half-proven. */
#define OMPI_NOTE_VARS "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include, PRTE_MCA_prte_if_include"

static void ompi_decide(struct ctx *c, struct pub *p)
{
	const struct net *net = &c->nets[c->chosen];
	const struct npf_iface *ifc = p->ifc;
	const struct npf_addr *stray;
	char ip[INET6_ADDRSTRLEN];

	p->ompi_done = true;
	p->ompi_value = c->out->cidr;
	if (net->prefix.family != AF_INET6) {
		const struct npf_addr *pri = dec_ompi_primary(ifc);
		int alt;

		if (!pri || !in_net(pri, net)) {
			char pip[INET6_ADDRSTRLEN] = "no IPv4 address";

			if (pri)
				npf_addr_str(pri, pip, sizeof(pip));
			alt = ompi_alt_net(c);
			if (alt < 0) {
				p->ompi_value = NULL;
				dec_note(c, NPF_NOTE_OMITTED, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE,
					 NULL, ifc->name,
					 OMPI_NOTE_VARS " left out: Open MPI (if_posix_open, "
							"mca_btl_tcp_create) sees only the primary "
							"address of %s, %s, which is not on %s, and no "
							"other network works with Open MPI's addresses",
					 ifc->name, pip, c->out->cidr);
				return;
			}
			c->ompi_net = alt;
			cidr_str(&c->nets[alt].prefix, p->ompi_cidr, sizeof(p->ompi_cidr));
			p->ompi_value = p->ompi_cidr;
			dec_note(c, NPF_NOTE_CONSUMER_ADDRESS, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE,
				 NULL, ifc->name,
				 OMPI_NOTE_VARS " name %s (%s), which also passed: Open MPI "
						"(if_posix_open, mca_btl_tcp_create) sees only the "
						"primary address of %s, %s, which is not on %s",
				 p->ompi_cidr, c->inv->ifaces[c->nets[alt].ifc].name, ifc->name,
				 pip, c->out->cidr);
			return;
		}
		return;
	}
	p->ompi_value = NULL;
	if (strchr(ifc->name, ',')) {
		dec_note(
		    c, NPF_NOTE_OMITTED, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, NULL, ifc->name,
		    "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include, "
		    "PRTE_MCA_prte_if_include left out: Open MPI takes only IPv4 CIDRs, and it "
		    "splits the name %s on ','",
		    ifc->name);
		return;
	}
	stray = dec_ompi_stray(ifc->addrs, ifc->n_addrs, net);
	if (stray) {
		dec_note(
		    c, NPF_NOTE_OMITTED, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, NULL, ifc->name,
		    "OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include, "
		    "PRTE_MCA_prte_if_include left out: Open MPI takes only IPv4 CIDRs, and by "
		    "name (%s) it would also use %s, which is not on %s",
		    ifc->name, npf_addr_str(stray, ip, sizeof(ip)), c->out->cidr);
		return;
	}
	p->ompi_value = ifc->name;
}

static void rule_ompi(struct ctx *c, struct pub *p, enum npf_var v)
{
	if (!dec_var_wanted(c, v))
		return;
	if (!p->ompi_done)
		ompi_decide(c, p);
	if (p->ompi_value)
		dec_set_var(c, p->vals, v, p->ompi_value);
	else
		p->dropped[v] = true;
}

/* MASTER_ADDR: an IP literal of the job's first node on the chosen network (PyTorch's
 * rendezvous.py:_env_rendezvous_handler resolves it; a literal needs no DNS). */
static void rule_master_addr(struct ctx *c, struct pub *p, enum npf_var v)
{
	const struct npf_recommendation *out = c->out;
	const char *first = c->pol->first_node;
	char ip[INET6_ADDRSTRLEN];
	int k = -1;

	if (!dec_var_wanted(c, v))
		return;
	for (size_t i = 0; first && first[0] && i < c->chk->n_nodes; i++)
		if (strncmp(c->chk->nodes[i].name, first, NPF_NAME_MAX) == 0) {
			k = (int)i;
			break;
		}
	if (!first || !first[0])
		drop(c, p, v, "MASTER_ADDR left out: the job's first node is not known");
	else if (k < 0)
		drop(c, p, v, "MASTER_ADDR left out: %s is not part of this check", first);
	else if (!out->nodes[k].ifname[0])
		drop(c, p, v, "MASTER_ADDR left out: %s announced no address on %s", first,
		     out->cidr);
	else
		dec_set_var(c, p->vals, v, npf_addr_str(&out->nodes[k].addr, ip, sizeof(ip)));
}

/* NETPREFLIGHT_NODE: which node these values are for. The TaskProlog and SPANK plugin
 * replace our variables when an imported environment's marker names another node. */
static void rule_node(struct ctx *c, struct pub *p, enum npf_var v)
{
	if (c->chk->nodes[0].name[0])
		dec_set_var(c, p->vals, v, c->chk->nodes[0].name);
	else
		drop(c, p, v, "NETPREFLIGHT_NODE left out: this node has no name in the check");
}

static const rule_fn rules[NPF_VAR__COUNT] = {
#define NPF_VAR_RULE(id, nm, gt, cons, wi, rule, jwr, mdl, un) [NPF_VAR_##id] = rule,
    NPF_VAR_TABLE(NPF_VAR_RULE)
#undef NPF_VAR_RULE
};

/* Variables that travel together: when one was left out, so is its partner. */
static void travel_together(struct ctx *c, struct pub *p)
{
	for (int v = 0; v < NPF_VAR__COUNT; v++) {
		int w = npf_var_info((enum npf_var)v)->with;

		if (w < 0 || !p->vals[v] || p->vals[w] || !p->dropped[w])
			continue;
		drop(c, p, (enum npf_var)v,
		     "%s left out with %s: they are published together or not at all",
		     npf_var_name((enum npf_var)v), npf_var_name((enum npf_var)w));
	}
}

/* ---- putting it together ------------------------------------------------------------------ */

int dec_build_env(struct ctx *c)
{
	struct npf_recommendation *out = c->out;
	const struct net *net = &c->nets[c->chosen];
	bool had[NPF_VAR__COUNT];
	struct pub p;
	int r;

	memset(&p, 0, sizeof(p));
	p.ifc = &c->inv->ifaces[net->ifc];
	p.family = net->prefix.family == AF_INET6 && dec_var_wanted(c, NPF_VAR_NCCL_SOCKET_FAMILY)
		       ? AF_INET6
		       : 0;
	copy_str(out->node, sizeof(out->node), c->chk->nodes[0].name);
	if ((r = dec_build_hcas(c, p.pre)) < 0)
		goto out;
	/* One row of the registry at a time, in output order. */
	for (int v = 0; v < NPF_VAR__COUNT && !c->err; v++)
		rules[v](c, &p, (enum npf_var)v);
	/* A consumer whose interface variable its own rule left out is not steered. */
	for (int v = 0; v < NPF_VAR__COUNT; v++)
		if (p.dropped[v] && dec_steer_var(c, (enum npf_var)v))
			c->unsteered |= 1u << v;
	travel_together(c, &p);
	if (c->err) {
		r = c->err;
		goto out;
	}
	for (int v = 0; v < NPF_VAR__COUNT; v++)
		had[v] = p.vals[v] != NULL;
	if (c->pol->job_wide && (r = dec_job_wide(c, p.vals)) < 0)
		goto out;
	/* Job-wide may leave out one of a pair too. */
	for (int v = 0; v < NPF_VAR__COUNT; v++) {
		int w = npf_var_info((enum npf_var)v)->with;

		if (w >= 0 && p.vals[v] && !p.vals[w] && had[w])
			dec_drop_var(p.vals, (enum npf_var)v);
	}
	r = 0;
	for (int v = 0; v < NPF_VAR__COUNT; v++)
		if (p.vals[v])
			out->n_vars++;
	out->vars = calloc(out->n_vars ? out->n_vars : 1, sizeof(*out->vars));
	if (!out->vars) {
		r = -ENOMEM;
		goto out;
	}
	out->n_vars = 0;
	for (int v = 0; v < NPF_VAR__COUNT; v++)
		if (p.vals[v]) {
			copy_str(out->vars[out->n_vars].name, NPF_REC_NAME_MAX,
				 npf_var_name((enum npf_var)v));
			out->vars[out->n_vars++].value = p.vals[v];
			p.vals[v] = NULL;
		}
out:
	for (int v = 0; v < NPF_VAR__COUNT; v++) {
		free(p.vals[v]);
		free(p.pre[v]);
	}
	return r;
}
