// SPDX-License-Identifier: MIT
/* The job check's decision applied here (docs/decision.md §10): the suspects, this node's
 * role (job_rules[]), the job's network, and the failure or summary that follows. */
#include "decide.h"
#include "jobcheck.h"

#include <errno.h>
#include <stdlib.h>

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
int dec_mark_suspects(struct ctx *c)
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

/* Whether this node's own evidence backs a decision that names it a suspect on the job's
 * best network: no candidate of ours there (no address, or one on an interface that is
 * down or has no carrier), or a failure from here. The coordinator blames a node only on
 * its own row (lib/jobcheck.c), so a decision that names this node without it is forged
 * (a key holder answering in the coordinator's name) or stale: issue 19. */
static bool suspect_backed(const struct ctx *c)
{
	int n = job_net(c, c->pol->job->best);

	return n < 0 || c->nets[n].ifc < 0 || c->nets[n].state == EST_FAIL;
}

/* The role the decision gives this node, as this node can stand behind it. */
static enum npf_job_role job_role(const struct ctx *c)
{
	unsigned int r = (unsigned int)c->pol->job->role;

	/* A role from a newer coordinator than this code: evidence we cannot read. */
	if (r >= sizeof(job_rules) / sizeof(job_rules[0]))
		return NPF_JOB_ROLE_UNKNOWN;
	/* Drained only on evidence that singles this node out, never on a decision alone. */
	if (r == NPF_JOB_ROLE_SUSPECT && !suspect_backed(c))
		return NPF_JOB_ROLE_UNKNOWN;
	return (enum npf_job_role)r;
}

/* Sets out->verdict and c->chosen from the job decision. */
void dec_job_choose(struct ctx *c)
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

/* Whether some (interface, network) of ours failed: only then does the local dec_blame()
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
void dec_job_failure(struct ctx *c)
{
	struct npf_recommendation *out = c->out;
	enum npf_job_role role = job_role(c);
	bool suspect = role == NPF_JOB_ROLE_SUSPECT;
	int n = job_net(c, suspect ? c->pol->job->best : c->pol->job->net);
	const struct eval *e;

	out->fail_outcome = NPF_OUT_NOT_PROBED;
	out->fail_dir = NPF_DIR_FORWARD;
	if (role == NPF_JOB_ROLE_FAIL && any_local_fail(c))
		dec_blame(c);
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

/* The summary under a job decision; the ok part is the local one (dec_summarise()). */
void dec_job_summarise(struct ctx *c)
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
	if (role == NPF_JOB_ROLE_UNKNOWN && c->pol->job->role == NPF_JOB_ROLE_SUSPECT) {
		bfmt(out->summary, sizeof(out->summary),
		     "unknown: the job's decision names this node a suspect on %s, but its own "
		     "evidence shows no failure there: not drained (a forged or stale decision; "
		     "job check: %s)",
		     job->best && job->best[0] ? job->best : "(none)", reason);
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
