// SPDX-License-Identifier: MIT
/* Open MPI's job-wide values (NPF_JW_OMPI, docs/decision.md §7): on IPv4 a prefix that
 * holds every node's primary address and selects nothing else, on IPv6 one interface name
 * the same on every node; else the rows leave the job-wide environment. */
#include "decide.h"

#include <errno.h>
#include <stdlib.h>

/* dec_ompi_stray() (ompi.c) for a peer, from what it announced on ifname (the announcement
 * leaves out loopback and link-local addresses, so a peer's 169.254 address goes unseen). */
static const struct npf_addr *ompi_stray_peer(const struct npf_node *nd, const char *ifname,
					      const struct net *net)
{
	for (size_t j = 0; j < nd->n_cands; j++) {
		const struct npf_candidate *cd = &nd->cands[j];

		if (strncmp(cd->ifname, ifname, IFNAMSIZ) == 0 && dec_ompi_stray(&cd->addr, 1, net))
			return &cd->addr;
	}
	return NULL;
}

#define OMPI_VARS                                                                                  \
	"OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include, PRTE_MCA_prte_if_include"

static void ompi_drop(char **vals)
{
	dec_drop_var(vals, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE);
	dec_drop_var(vals, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE);
	dec_drop_var(vals, NPF_VAR_PRTE_MCA_PRTE_IF_INCLUDE);
}

static void ompi_set(struct ctx *c, char **vals, const char *value)
{
	static const enum npf_var vs[] = {NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE,
					  NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE,
					  NPF_VAR_PRTE_MCA_PRTE_IF_INCLUDE};

	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++)
		if (vals[vs[i]])
			dec_set_var(c, vals, vs[i], value);
}

/* The address node k uses on the chosen network: its choice, else the address our
 * probes reached it on through our chosen interface (a routed /31 host link has the
 * peer on another prefix). False when neither is known. */
static bool node_addr(const struct ctx *c, size_t k, struct npf_addr *a)
{
	const struct npf_recommendation *out = c->out;
	size_t nn = c->chk->n_nodes, ci = (size_t)c->nets[c->chosen].ifc;
	int li = k ? c->link_idx[ci * nn + k] : -1;

	if (out->nodes[k].ifname[0]) {
		*a = out->nodes[k].addr;
		return true;
	}
	if (li >= 0 && c->chk->links[li].fwd == NPF_OUT_OK &&
	    addr_valid(&c->chk->links[li].peer_addr)) {
		*a = c->chk->links[li].peer_addr;
		return true;
	}
	return false;
}

/* The interface node k uses on the chosen network: its choice, else the one our probes
 * reached through our chosen interface; "" unknown. */
static const char *node_ifname(const struct ctx *c, size_t k)
{
	size_t nn = c->chk->n_nodes, ci = (size_t)c->nets[c->chosen].ifc;
	int li = k ? c->link_idx[ci * nn + k] : -1;

	if (c->out->nodes[k].ifname[0])
		return c->out->nodes[k].ifname;
	return li >= 0 ? c->chk->links[li].peer_if : "";
}

/* Some node's announced address off the job's interfaces inside prefix: an Open MPI
 * CIDR would select that interface there too. */
static const struct npf_addr *cidr_strays(const struct ctx *c, const struct net *cover,
					  size_t *node)
{
	for (size_t k = 0; k < c->chk->n_nodes; k++) {
		const struct npf_node *nd = &c->chk->nodes[k];
		const char *use = node_ifname(c, k);

		for (size_t j = 0; j < nd->n_cands; j++)
			if (addr_valid(&nd->cands[j].addr) && in_net(&nd->cands[j].addr, cover) &&
			    strncmp(nd->cands[j].ifname, use, IFNAMSIZ) != 0) {
				*node = k;
				return &nd->cands[j].addr;
			}
	}
	return NULL;
}

/* The chosen interface's name is the same on every node, and on none of them does it hold
 * an address Open MPI would use besides the one the job uses there. */
static bool ompi_name_everywhere(const struct ctx *c)
{
	const struct npf_iface *ifc = &c->inv->ifaces[c->nets[c->chosen].ifc];
	struct npf_addr a;

	if (strchr(ifc->name, ','))
		return false;
	for (size_t i = 0; i < ifc->n_addrs; i++)
		if (addr_valid(&ifc->addrs[i]) && dec_ompi_lists(&ifc->addrs[i]) &&
		    !npf_addr_equal(&ifc->addrs[i], &c->out->addr))
			return false;
	for (size_t k = 1; k < c->chk->n_nodes; k++) {
		const struct npf_node *nd = &c->chk->nodes[k];

		if (strcmp(node_ifname(c, k), ifc->name) != 0 || !node_addr(c, k, &a))
			return false;
		for (size_t j = 0; j < nd->n_cands; j++)
			if (strncmp(nd->cands[j].ifname, ifc->name, IFNAMSIZ) == 0 &&
			    dec_ompi_lists(&nd->cands[j].addr) && !npf_addr_equal(&nd->cands[j].addr, &a))
				return false;
	}
	return true;
}

/* Open MPI sees only an interface's primary IPv4 address (the first one a node announced:
 * ompi.c dec_ompi_primary). chosen: every node's address on the chosen network (the one
 * the CIDR or the cover must match) is the primary one of its interface. Else, for
 * another network n: every node holds an interface whose primary address lies on n.
 * *at: the first node where it does not hold. Nodes whose address is unknown here are
 * left to the caller's own checks. */
static bool ompi_primary_everywhere(const struct ctx *c, const struct net *n, bool chosen,
				    size_t *at)
{
	for (size_t k = 1; k < c->chk->n_nodes; k++) {
		const struct npf_node *nd = &c->chk->nodes[k];
		const struct npf_addr *pri;
		struct npf_addr a;
		bool ok = false;

		if (chosen) {
			if (!node_addr(c, k, &a) || a.family != AF_INET)
				continue;
			pri = dec_ompi_cand_primary(nd, node_ifname(c, k));
			ok = !pri || npf_addr_equal(pri, &a); /* no candidate list: nothing known */
		} else {
			if (dec_outside_plan(c, nd))
				continue;
			for (size_t j = 0; j < nd->n_cands && !ok; j++) {
				if (nd->cands[j].addr.family != AF_INET ||
				    !in_net(&nd->cands[j].addr, n))
					continue;
				pri = dec_ompi_cand_primary(nd, nd->cands[j].ifname);
				ok = pri && in_net(pri, n);
			}
		}
		if (!ok) {
			*at = k;
			return false;
		}
	}
	return true;
}

/* Open MPI job-wide (mpirun copies the launch node's values to every node): the value
 * must match an address on every node. IPv4: the chosen CIDR when it holds every node's
 * address, else the prefix covering them all (routed /31 host links: one prefix per
 * node) when it selects nothing else on any node; IPv6 (a name): the same name on every
 * node, naming nothing unverified on any of them. */
void dec_ompi_job_wide(struct ctx *c, char **vals, bool same_name)
{
	const struct net *net = &c->nets[c->chosen];
	const struct npf_recommendation *out = c->out;
	char ip[INET6_ADDRSTRLEN], cidr[INET6_ADDRSTRLEN + 5];
	struct npf_addr a0, a;
	unsigned int bits;
	struct net cover;
	const struct npf_addr *stray;
	size_t at = 0;

	if (!vals[NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE] &&
	    !vals[NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE] && !vals[NPF_VAR_PRTE_MCA_PRTE_IF_INCLUDE])
		return;
	if (c->ompi_net >= 0) {
		/* Open MPI goes to another network here (our interface on the chosen one has
		 * its primary address elsewhere): its CIDR holds job-wide when every node's
		 * interface on it has its primary address there too. */
		if (!ompi_primary_everywhere(c, &c->nets[c->ompi_net], false, &at)) {
			dec_note(c, NPF_NOTE_JOB_WIDE, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE,
				 node_name(c, (int)at), NULL,
				 OMPI_VARS ": no job-wide value: %s has no interface on %s whose "
					   "primary address (all Open MPI sees) is there",
				 node_name(c, (int)at), vals[NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE]);
			goto drop;
		}
		return;
	}
	if (net->prefix.family != AF_INET6 && !ompi_primary_everywhere(c, net, true, &at)) {
		dec_note(c, NPF_NOTE_JOB_WIDE, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE,
			 node_name(c, (int)at), NULL,
			 OMPI_VARS ": no job-wide value: on %s the primary address of the interface "
				   "on %s (all Open MPI sees of it) is elsewhere",
			 node_name(c, (int)at), out->cidr);
		goto drop;
	}
	if (net->prefix.family == AF_INET6)
		goto by_name;
	bits = net->prefix.prefixlen;
	a0 = out->addr;
	for (size_t k = 1; k < c->chk->n_nodes; k++) {
		if (dec_outside_plan(c, &c->chk->nodes[k]) && !out->nodes[k].ifname[0])
			continue;
		if (!node_addr(c, k, &a) || a.family != AF_INET) {
			dec_note(c, NPF_NOTE_JOB_WIDE, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE,
				 node_name(c, (int)k), NULL,
				 OMPI_VARS ": no job-wide value: the address %s uses on %s is not "
					   "known here",
				 node_name(c, (int)k), out->cidr);
			goto drop;
		}
		bits = addr_common_bits(&a0, &a, bits);
	}
	if (bits == net->prefix.prefixlen)
		return;
	memset(&cover, 0, sizeof(cover));
	addr_mask(&a0, bits, &cover.prefix);
	cidr_str(&cover.prefix, cidr, sizeof(cidr));
	if (bits < 8) {
		dec_note(c, NPF_NOTE_JOB_WIDE, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, NULL, NULL,
			 OMPI_VARS ": no job-wide value: the nodes' addresses share no prefix "
				   "longer than /%u (per-node prefixes such as %s match nothing on "
				   "other nodes)",
			 bits, out->cidr);
		goto by_name4;
	}
	stray = cidr_strays(c, &cover, &at);
	if (stray) {
		dec_note(c, NPF_NOTE_JOB_WIDE, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE,
			 node_name(c, (int)at), NULL,
			 OMPI_VARS ": no job-wide CIDR: %s, the prefix covering every node's "
				   "address, also holds %s on %s",
			 cidr, npf_addr_str(stray, ip, sizeof(ip)), node_name(c, (int)at));
		goto by_name4;
	}
	dec_note(c, NPF_NOTE_JOB_WIDE, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, NULL, NULL,
		 OMPI_VARS ": %s covers every node's address (the per-node prefix %s matches "
			   "nothing on other nodes)",
		 cidr, out->cidr);
	ompi_set(c, vals, cidr);
	return;
by_name4:
	/* No CIDR: the interface name, when it is the same on every node and names no
	 * other address Open MPI would use on any of them. */
	if (ompi_name_everywhere(c)) {
		dec_note(c, NPF_NOTE_JOB_WIDE, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, NULL, NULL,
			 OMPI_VARS ": the interface name %s instead (the same on every node, no "
				   "other address on it)",
			 c->inv->ifaces[net->ifc].name);
		ompi_set(c, vals, c->inv->ifaces[net->ifc].name);
		return;
	}
	goto drop;
by_name:
	if (!same_name) {
		dec_note(c, NPF_NOTE_JOB_WIDE, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, NULL, NULL,
			 OMPI_VARS ": no job-wide value: Open MPI takes only IPv4 CIDRs and the "
				   "nodes use different interface names on %s (mpirun gives every "
				   "node the launch node's value)",
			 out->cidr);
		goto drop;
	}
	for (size_t k = 1; k < c->chk->n_nodes; k++) {
		stray = ompi_stray_peer(&c->chk->nodes[k], out->nodes[k].ifname, net);
		if (stray) {
			dec_note(c, NPF_NOTE_JOB_WIDE, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE,
				 node_name(c, (int)k), out->nodes[k].ifname,
				 OMPI_VARS ": no job-wide value: Open MPI takes only IPv4 CIDRs, "
					   "and by name (%s) it would also use %s on %s, which is "
					   "not on %s",
				 out->nodes[k].ifname, npf_addr_str(stray, ip, sizeof(ip)),
				 node_name(c, (int)k), out->cidr);
			goto drop;
		}
	}
	return;
drop:
	ompi_drop(vals);
}
