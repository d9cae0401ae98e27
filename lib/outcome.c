// SPDX-License-Identifier: MIT
/* The decision explained: the rejection of each of our interfaces, what NCCL's default would
 * pick, whom to blame for a failure, the one-line summary. Reads the decided ctx, writes
 * only the recommendation's explanation. */
#include "decide.h"
#include "gid.h"
#include "ncclmatch.h"

#include <errno.h>
#include <stdlib.h>

/* "(container bridge)"-style description of an interface for humans. */
const char *dec_iface_desc(const struct npf_iface *ifc)
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
		dec_eval_text(c, e, ev, sizeof(ev));
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

int dec_build_rejections(struct ctx *c)
{
	const struct npf_inventory *inv = c->inv;
	const struct net *ch = c->chosen >= 0 ? &c->nets[c->chosen] : NULL;
	char text[NPF_REC_REASON_MAX], ev[160], cidr[INET6_ADDRSTRLEN + 5];
	int r;

	for (size_t i = 0; i < inv->n_ifaces; i++) {
		const struct npf_iface *ifc = &inv->ifaces[i];
		int bn = dec_iface_best_net(c, i);
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
		dec_eval_text(c, e, ev, sizeof(ev));
		if (e->state == EST_WORKS && ch && (size_t)bn == (size_t)c->chosen)
			bfmt(text, sizeof(text),
				 "works on %s, but %s holds the same network and ranks first here",
				 cidr, inv->ifaces[ch->ifc].name);
		else if (e->state == EST_WORKS && ch && bn < c->chosen)
			/* Only a job decision puts the choice below a network that works
			 * here: the others' evidence moved the job (docs/decision.md §10). */
			bfmt(text, sizeof(text), "works on %s, but the job check chose %s (%s)", cidr,
			     c->out->cidr, inv->ifaces[ch->ifc].name);
		else if (e->state == EST_WORKS && ch)
			bfmt(text, sizeof(text), "works on %s, but %s ranks higher (%s)", cidr,
				 inv->ifaces[ch->ifc].name,
				 dec_net_cmp_reason(ch, &c->nets[bn]));
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

void dec_predict_nccl_default(struct ctx *c)
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
		     ifc->name, dec_iface_desc(ifc), ip);
	} else if (n < 0) {
		bfmt(out->nccl_default_text, sizeof(out->nccl_default_text),
		     "NCCL's default would use %s (%s, %s): not probed", ifc->name, dec_iface_desc(ifc),
		     ip);
	} else if (ev_at(c, i, (size_t)n)->state == EST_WORKS) {
		out->nccl_default_passed = true;
		bfmt(out->nccl_default_text, sizeof(out->nccl_default_text),
		     "NCCL's default would use %s (%s, %s), which passed%s", ifc->name,
		     dec_iface_desc(ifc), ip,
		     c->chosen == n && (size_t)c->nets[n].ifc == i ? " (the choice here)" : "");
	} else {
		dec_eval_text(c, ev_at(c, i, (size_t)n), ev, sizeof(ev));
		bfmt(out->nccl_default_text, sizeof(out->nccl_default_text),
		     "NCCL's default would use %s (%s, %s): %s%s", ifc->name, dec_iface_desc(ifc), ip,
		     ev_at(c, i, (size_t)n)->state == EST_UNKNOWN ? "not verified: " : "", ev);
	}
}

/* Whom to blame when nothing works: a peer that breaks most of our interfaces, or
 * this node when every interface fails with every peer it was tested against. */
void dec_blame(struct ctx *c)
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

void dec_summarise(struct ctx *c)
{
	struct npf_recommendation *out = c->out;
	size_t used;
	int n;

	if (c->chk->n_nodes < 2) {
		snprintf(out->summary, sizeof(out->summary),
			 "unknown: no peers in the check, nothing was verified");
		return;
	}
	if (npf_verdict_publishes(out->verdict)) {
		const struct eval *e = ev_at(c, (size_t)c->nets[c->chosen].ifc, (size_t)c->chosen);

		char who[96];

		n = snprintf(out->summary, sizeof(out->summary),
			     "%s: %s (%s) works to and from %zu peer%s%s",
			     npf_verdict_name(out->verdict), out->ifname, out->cidr, e->n_ok,
			     e->n_ok == 1 ? "" : "s",
			     c->sparse ? " (sparse plan: the probed ones)" : "");
		used = n > 0 && (size_t)n < sizeof(out->summary) ? (size_t)n
								  : sizeof(out->summary) - 1;
		dec_consumers_text(c->unsteered, who, sizeof(who));
		if (c->unsteered)
			bfmt(out->summary + used, sizeof(out->summary) - used,
			     ", but %s cannot be steered to it and no verified network works "
			     "for them (the notes say why)",
			     who);
		return;
	}
	if (out->verdict == NPF_VERDICT_UNKNOWN) {
		char ev[160] = "";

		if (c->chosen >= 0)
			dec_eval_text(c, ev_at(c, (size_t)c->nets[c->chosen].ifc, (size_t)c->chosen),
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
