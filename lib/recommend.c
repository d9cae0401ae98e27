// SPDX-License-Identifier: MIT
/* The decision: rank networks by node-independent facts, take the first one this node
 * proved in both directions with every peer (or, under a job check, the job's network if
 * this node proved it), and derive the environment from it. This file runs the stages
 * (evidence.c, rank.c, jobapply.c, publish.c, outcome.c) and owns the result's memory. */
#include "decide.h"
#include "gid.h"
#include "ncclmatch.h"

#include <errno.h>
#include <stdlib.h>

void dec_ctx_free(struct ctx *c)
{
	free(c->nets);
	free(c->ev);
	free(c->link_idx);
	free(c->path_off);
	free(c->path_idx);
	free(c->peer_fail);
	free(c->suspect);
}

int dec_ctx_prepare(struct ctx *c, const struct npf_inventory *inv, const struct npf_check *chk,
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
	if ((r = dec_mark_suspects(c)) < 0)
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
	r = dec_ctx_prepare(&c, inv, chk, pol, out);
	if (r < 0)
		goto out;

	/* The job check decided for every node: this one follows it (job_choose). Alone,
	 * the first network of the shared order that works here wins. */
	for (size_t n = 0; !c.pol->job && n < c.n_nets && c.chosen < 0; n++)
		if (c.nets[n].state == EST_WORKS)
			c.chosen = (int)n;
	if (c.pol->job) {
		dec_job_choose(&c);
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
		dec_job_failure(&c);
	} else if (out->verdict == NPF_VERDICT_FAIL) {
		dec_blame(&c);
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
	if ((r = dec_build_rejections(&c)) < 0)
		goto out;
	dec_predict_nccl_default(&c);
	dec_summarise(&c);
	if (c.pol->job)
		dec_job_summarise(&c);
	r = c.err;
out:
	dec_ctx_free(&c);
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
