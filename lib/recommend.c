// SPDX-License-Identifier: MIT
/* The decision: rank networks by node-independent facts, take the first one this node
 * proved in both directions with every peer (or, under a job check, the job's network if
 * this node proved it), and derive the environment from it. This file runs the stages
 * (evidence.c, rank.c, publish.c, jobwide.c) and explains the outcome: rejections, NCCL's
 * default, whom to blame, the summary. */
#include "decide.h"
#include "jobrows.h"
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

static int build_rejections(struct ctx *c)
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

static void ctx_free(struct ctx *c)
{
	free(c->nets);
	free(c->ev);
	free(c->link_idx);
	free(c->path_off);
	free(c->path_idx);
	free(c->peer_fail);
	free(c->suspect);
}

/* ---- the job check's decision, applied here (docs/decision.md §10) ------------------- */

static bool job_names(const struct npf_job_view *job, const char *name)
{
	for (size_t s = 0; job->suspects && s < job->n_suspects; s++)
		if (job->suspects[s] && strcmp(job->suspects[s], name) == 0)
			return true;
	return false;
}

/* c->suspect from pol->job: the suspects among our peers. When this node is a suspect
 * itself, its whole evidence stands: it is what its own fail is made of. Returns 0 or
 * -ENOMEM. */
static int mark_suspects(struct ctx *c)
{
	const struct npf_job_view *job = c->pol->job;
	const struct npf_check *chk = c->chk;

	if (!job || job->n_suspects == 0 || job_names(job, chk->nodes[0].name))
		return 0;
	c->suspect = calloc(chk->n_nodes, sizeof(*c->suspect));
	if (!c->suspect)
		return -ENOMEM;
	for (size_t k = 1; k < chk->n_nodes; k++)
		c->suspect[k] = job_names(job, chk->nodes[k].name);
	return 0;
}

/* The network of the job decision named key (net.key, as in the job row), -1. A routed
 * key (rank.c net_key) names our own host link. */
static int job_net(const struct ctx *c, const char *key)
{
	for (size_t n = 0; key && key[0] && n < c->n_nets; n++)
		if (strcmp(c->nets[n].key, key) == 0)
			return (int)n;
	return -1;
}

/* What each role of the job decision makes of this node's verdict. A role that chooses
 * takes the job's network only where this node proved it: the coordinator decided from
 * the rows, and a network that does not work from here (a change since, a row that lied)
 * must not be published, nor may this node pick another one: unknown. */
static const struct job_rule {
	enum npf_verdict verdict;
	bool chooses; /* the verdict holds only if job->net works here */
} job_rules[] = {
    [NPF_JOB_ROLE_OK] = {NPF_VERDICT_OK, true},
    [NPF_JOB_ROLE_DEGRADED] = {NPF_VERDICT_DEGRADED, true},
    [NPF_JOB_ROLE_SUSPECT] = {NPF_VERDICT_FAIL, false},
    [NPF_JOB_ROLE_FAIL] = {NPF_VERDICT_FAIL, false},
    [NPF_JOB_ROLE_UNKNOWN] = {NPF_VERDICT_UNKNOWN, false},
};

static enum npf_job_role job_role(const struct ctx *c)
{
	unsigned int r = (unsigned int)c->pol->job->role;

	/* A role from a newer coordinator than this code: evidence we cannot read. */
	return r < sizeof(job_rules) / sizeof(job_rules[0]) ? (enum npf_job_role)r
							    : NPF_JOB_ROLE_UNKNOWN;
}

/* Sets out->verdict and c->chosen from the job decision. */
static void job_choose(struct ctx *c)
{
	const struct job_rule *rule = &job_rules[job_role(c)];
	int n = job_net(c, c->pol->job->net);

	c->out->verdict = rule->verdict;
	if (!rule->chooses)
		return;
	if (n >= 0 && c->nets[n].state == EST_WORKS && c->n_peers > 0)
		c->chosen = n;
	else
		c->out->verdict = NPF_VERDICT_UNKNOWN;
}

/* Whether some (interface, network) of ours failed: only then does the local blame()
 * have evidence to name; the job may fail on pairs this node is not part of. */
static bool any_local_fail(const struct ctx *c)
{
	for (size_t i = 0; i < c->inv->n_ifaces * c->n_nets; i++)
		if (c->ev[i].state == EST_FAIL)
			return true;
	return false;
}

/* The failure fields for a node outside the job's choice. A suspect names its interface
 * on the network it breaks (job->best) and its first failing peer there; with no failure
 * in its own evidence (the failing pairs were seen by the others), itself and not-probed:
 * the evidence is the job's, in the summary. A node whose job network does not work here
 * names its first failing, else missing, peer there. A job that fails names this node's
 * own culprit if it has one; an unknown job names nobody. */
static void job_failure(struct ctx *c)
{
	struct npf_recommendation *out = c->out;
	enum npf_job_role role = job_role(c);
	bool suspect = role == NPF_JOB_ROLE_SUSPECT;
	int n = job_net(c, suspect ? c->pol->job->best : c->pol->job->net);
	const struct eval *e;

	out->fail_outcome = NPF_OUT_NOT_PROBED;
	out->fail_dir = NPF_DIR_FORWARD;
	if (role == NPF_JOB_ROLE_FAIL && any_local_fail(c))
		blame(c);
	if (role == NPF_JOB_ROLE_FAIL || role == NPF_JOB_ROLE_UNKNOWN)
		return;
	if (suspect)
		copy_str(out->fail_node, sizeof(out->fail_node), node_name(c, 0));
	if (n < 0 || c->nets[n].ifc < 0)
		return;
	e = ev_at(c, (size_t)c->nets[n].ifc, (size_t)n);
	copy_str(out->fail_ifname, sizeof(out->fail_ifname), c->inv->ifaces[c->nets[n].ifc].name);
	if (e->peer >= 0 && (e->state == EST_FAIL || (!suspect && e->state == EST_UNKNOWN))) {
		copy_str(out->fail_node, sizeof(out->fail_node), node_name(c, e->peer));
		out->fail_outcome = e->outcome;
		out->fail_dir = e->dir;
	}
}

/* Our interface holding an address on network n although it is not a candidate there (down,
 * no carrier: a pulled cable), with why, so a suspect's reason names it ("ens1f0np0 (no
 * carrier)"); false when no interface of ours has an address there. */
static bool offline_iface_on(const struct ctx *c, int n, char *ifname, size_t ilen, char *why,
			     size_t wlen)
{
	const struct npf_addr *pfx;

	if (n < 0)
		return false;
	pfx = &c->nets[n].prefix;
	for (size_t i = 0; i < c->inv->n_ifaces; i++) {
		const struct npf_iface *ifc = &c->inv->ifaces[i];

		for (size_t a = 0; a < ifc->n_addrs; a++) {
			struct npf_addr m;

			if (ifc->addrs[a].family != pfx->family)
				continue;
			addr_mask(&ifc->addrs[a], pfx->prefixlen, &m);
			if (memcmp(m.addr, pfx->addr, sizeof(m.addr)) != 0)
				continue;
			copy_str(ifname, ilen, ifc->name);
			snprintf(why, wlen, "%s",
				 !(ifc->flags & IFF_UP)		 ? "(down)" :
				 ifc->carrier == 0 || !(ifc->flags & IFF_RUNNING) ? "(no carrier)" :
										    "(not a candidate)");
			return true;
		}
	}
	return false;
}

/* "node4 fails and is drained", "node3, node4 fail and are drained"; "" with none. */
static void suspects_text(const struct npf_job_view *job, char *buf, size_t len)
{
	size_t used = 0, named = 0;

	buf[0] = '\0';
	for (size_t s = 0; job->suspects && s < job->n_suspects && used < len; s++) {
		int w;

		if (!job->suspects[s])
			continue;
		w = snprintf(buf + used, len - used, "%s%s", named++ ? ", " : "", job->suspects[s]);
		if (w < 0)
			return;
		used += (size_t)w;
	}
	if (named && used < len)
		snprintf(buf + used, len - used,
			 named == 1 ? " fails and is drained" : " fail and are drained");
}

/* The summary under a job decision; the ok part is the local one (summarise()). */
static void job_summarise(struct ctx *c)
{
	const struct npf_job_view *job = c->pol->job;
	struct npf_recommendation *out = c->out;
	enum npf_job_role role = job_role(c);
	const char *reason = job->reason && job->reason[0] ? job->reason : "no reason given";
	char ev[160] = "", sus[160];
	size_t used = strlen(out->summary);
	int n;

	if (npf_verdict_publishes(out->verdict)) {
		suspects_text(job, sus, sizeof(sus));
		if (out->verdict == NPF_VERDICT_DEGRADED)
			bfmt(out->summary + used, sizeof(out->summary) - used,
			     "; the job moved from %s: %s",
			     job->best && job->best[0] ? job->best : "its best network", reason);
		else if (sus[0])
			bfmt(out->summary + used, sizeof(out->summary) - used, "; job check: %s",
			     sus);
		return;
	}
	if (role == NPF_JOB_ROLE_OK || role == NPF_JOB_ROLE_DEGRADED) {
		n = job_net(c, job->net);
		if (n < 0 || c->nets[n].ifc < 0)
			snprintf(ev, sizeof(ev), "no address of this node is on it");
		else
			dec_eval_text(c, ev_at(c, (size_t)c->nets[n].ifc, (size_t)n), ev,
				      sizeof(ev));
		bfmt(out->summary, sizeof(out->summary),
		     "unknown: the job's network %s does not work from here (%s%s%s)",
		     job->net && job->net[0] ? job->net : "(none)", out->fail_ifname,
		     out->fail_ifname[0] ? ": " : "", ev);
		return;
	}
	if (role != NPF_JOB_ROLE_SUSPECT) {
		bfmt(out->summary, sizeof(out->summary), "%s: job check: %s",
		     npf_verdict_name(out->verdict), reason);
		return;
	}
	n = job_net(c, job->best);
	if (n >= 0 && c->nets[n].ifc >= 0) {
		const struct eval *e = ev_at(c, (size_t)c->nets[n].ifc, (size_t)n);

		if (e->state == EST_FAIL)
			dec_eval_text(c, e, ev, sizeof(ev));
		else
			snprintf(ev, sizeof(ev), "shows no failure from here");
	} else if (!out->fail_ifname[0]) {
		/* No candidate of ours there: the interface that holds the address, and why
		 * it is not in use (a pulled cable is the common case). */
		(void)offline_iface_on(c, n, out->fail_ifname, sizeof(out->fail_ifname), ev,
				       sizeof(ev));
	}
	bfmt(out->summary, sizeof(out->summary),
	     "fail: this node breaks the job's network %s: %s%s%s; drain it (job check: %s)",
	     job->best && job->best[0] ? job->best : "(none)",
	     out->fail_ifname[0] ? out->fail_ifname : "no address of this node is on it",
	     ev[0] ? " " : "", ev, reason);
}

/* The evidence and the network order of a decision, shared by npf_recommend() and
 * npf_recommend_row(). Returns 0, -ENOMEM; c is released with ctx_free() either way. */
static int ctx_prepare(struct ctx *c, const struct npf_inventory *inv, const struct npf_check *chk,
		       const struct npf_policy *pol, struct npf_recommendation *out)
{
	static const struct npf_policy defaults = { 0 };
	int r;

	c->inv = inv;
	c->chk = chk;
	c->pol = pol ? pol : &defaults;
	c->out = out;
	c->sparse = chk->sparse || c->pol->sparse;
	c->version = c->pol->nccl_version > 0 ? c->pol->nccl_version : NPF_NCCL_VERSION_CURRENT;
	if ((r = mark_suspects(c)) < 0)
		return r;
	for (size_t k = 1; k < chk->n_nodes; k++)
		if ((chk->nodes[k].available || !dec_outside_plan(c, &chk->nodes[k])) &&
		    !(c->suspect && c->suspect[k]))
			c->n_peers++;
	c->chosen = -1;
	c->ompi_net = -1;
	c->fabric = -1;
	out->nccl_version = c->version;
	if ((r = dec_build_indexes(c)) < 0 || (r = dec_build_nets(c)) < 0)
		return r;
	if (c->n_nets > 1)
		qsort(c->nets, c->n_nets, sizeof(*c->nets), dec_net_cmp);
	c->ev = calloc((inv->n_ifaces ? inv->n_ifaces : 1) * (c->n_nets ? c->n_nets : 1),
		       sizeof(*c->ev));
	if (!c->ev)
		return -ENOMEM;
	dec_evaluate_all(c);
	dec_net_keys(c);
	return 0;
}

int npf_recommend(const struct npf_inventory *inv, const struct npf_check *chk,
		  const struct npf_policy *pol, struct npf_recommendation *out)
{
	struct ctx c = { 0 };
	int r;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->fail_outcome = NPF_OUT_OK;
	if (!inv || !chk || chk->n_nodes == 0 || !chk->nodes)
		return -EINVAL;
	r = ctx_prepare(&c, inv, chk, pol, out);
	if (r < 0)
		goto out;

	/* The job check decided for every node: this one follows it (job_choose). Alone,
	 * the first network of the shared order that works here wins. */
	for (size_t n = 0; !c.pol->job && n < c.n_nets && c.chosen < 0; n++)
		if (c.nets[n].state == EST_WORKS)
			c.chosen = (int)n;
	if (c.pol->job) {
		job_choose(&c);
	} else if (c.chosen >= 0 && c.n_peers > 0) {
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
		if ((r = dec_build_choices(&c)) < 0)
			goto out;
	}
	if (npf_verdict_publishes(out->verdict)) {
		for (size_t n = 0; n < (size_t)c.chosen; n++)
			if (c.nets[n].state == EST_UNKNOWN) {
				char cidr[INET6_ADDRSTRLEN + 5];

				cidr_str(&c.nets[n].prefix, cidr, sizeof(cidr));
				dec_note(&c, NPF_NOTE_UNVERIFIED, NPF_VAR_NONE, NULL, NULL,
					 "%s ranks higher but was not fully probed", cidr);
			}
		if ((r = dec_build_env(&c)) < 0)
			goto out;
		/* The network ranking put every network all consumers can be steered to
		 * first (rank.c, by_steer): a consumer left out here has no verified network
		 * at all, and its default is unverified (docs/decision.md, "Consumers"). */
		if (c.unsteered && out->verdict == NPF_VERDICT_OK)
			out->verdict = NPF_VERDICT_DEGRADED;
	} else if (c.pol->job) {
		job_failure(&c);
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
		dec_note(&c, NPF_NOTE_SPARSE, NPF_VAR_NONE, NULL, NULL,
			 "sparse plan: only probed peers were verified from this node");
	if (c.nets_capped)
		dec_note(&c, NPF_NOTE_CAPPED, NPF_VAR_NONE, NULL, NULL,
			 "more than %d networks were announced; the rest were ignored",
			 REC_NETS_MAX);
	if ((r = build_rejections(&c)) < 0)
		goto out;
	predict_nccl_default(&c);
	summarise(&c);
	if (c.pol->job)
		job_summarise(&c);
	r = c.err;
out:
	ctx_free(&c);
	return r;
}

static char pair_char(enum npf_pair_state s)
{
	switch (s) {
	case NPF_PAIR_OK: return 'o';
	case NPF_PAIR_FAIL: return 'f';
	case NPF_PAIR_OUTSIDE: return '-';
	case NPF_PAIR_UNKNOWN: break;
	}
	return 'u';
}

int npf_recommend_row(const struct npf_inventory *inv, const struct npf_check *chk,
		      const struct npf_policy *pol, const char *const *hostlist, size_t n,
		      uint64_t instance, struct npf_msg_row *out)
{
	struct npf_recommendation scratch = { 0 };
	struct ctx c = { 0 };
	size_t self = n;
	int *at = NULL, r;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!inv || !chk || chk->n_nodes == 0 || !chk->nodes || !hostlist || n < 2 ||
	    n > NPF_WIRE_MAX_ROW_NODES || !instance)
		return -EINVAL;
	for (size_t j = 0; j < n; j++)
		if (hostlist[j] && strcmp(hostlist[j], chk->nodes[0].name) == 0)
			self = j;
	if (self == n || npf_job_id(hostlist, n, out->job) < 0)
		return -EINVAL;
	at = malloc(n * sizeof(*at));
	if (!at)
		return -ENOMEM;
	/* Hostlist position -> index in chk->nodes (-1: not in this node's evidence). */
	for (size_t j = 0; j < n; j++) {
		at[j] = -1;
		for (size_t k = 1; k < chk->n_nodes && j != self; k++)
			if (strcmp(chk->nodes[k].name, hostlist[j]) == 0)
				at[j] = (int)k;
	}
	r = ctx_prepare(&c, inv, chk, pol, &scratch);
	if (r < 0)
		goto out;
	copy_str(out->node, sizeof(out->node), chk->nodes[0].name);
	out->instance = instance;
	out->index = (uint32_t)self;
	out->n_nodes = (uint32_t)n;
	for (size_t k = 0; k < c.n_nets && out->n_nets < NPF_WIRE_MAX_ROW_NETS; k++) {
		const struct net *net = &c.nets[k];
		struct npf_row_net *x = &out->nets[out->n_nets];
		bool multi;

		/* No address of ours there: absent from the row, fail for the job. */
		if (net->ifc < 0)
			continue;
		x->states = malloc(n + 1);
		if (!x->states) {
			r = -ENOMEM;
			goto out;
		}
		out->n_nets++;
		copy_str(x->key, sizeof(x->key), net->key);
		dec_net_row_keys(net, &x->rank, &x->quality);
		multi = dec_iface_multi(&c, (size_t)net->ifc);
		for (size_t j = 0; j < n; j++) {
			char detail[96];

			if (j == self)
				x->states[j] = '.';
			else if (at[j] < 0)
				x->states[j] = c.sparse ? '-' : 'u';
			else
				x->states[j] = pair_char(dec_pair(&c, (size_t)net->ifc, net, multi,
								  (size_t)at[j], detail, sizeof(detail))
								 .state);
		}
		x->states[n] = '\0';
	}
out:
	ctx_free(&c);
	npf_recommendation_clear(&scratch);
	free(at);
	if (r < 0)
		npf_wire_row_clear(out);
	return r < 0 ? r : 0;
}

void npf_recommendation_clear(struct npf_recommendation *rec)
{
	if (!rec)
		return;
	for (size_t i = 0; i < rec->n_vars; i++)
		free(rec->vars[i].value);
	free(rec->vars);
	for (size_t i = 0; i < rec->n_notes; i++)
		free(rec->notes[i].text);
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

