// SPDX-License-Identifier: MIT
/* A check's decision: the recommendation (npf_recommend) under the running policy and the
 * job's decision, and the check JSON around it (job row, job object), encoded once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dchk.h"
#include "jobrow.h"
#include "jobrows.h"
#include "log.h"

void dchk_drop_env(struct dchk *e)
{
	for (size_t i = 0; i < DCHK_ENV_SLOTS; i++)
		npf_api_env_split_clear(&e->env[i]);
}

/* This node's row of the job's pair-state matrix (wire ROW, docs/decision.md §10), in the
 * check JSON as "job_row" when the request's hostlist names this node: the evidence the
 * job check exchanges, shown before the daemon exchanges it. A row that cannot be made is
 * left out (logged at debug level): it is not part of this node's own verdict. */
static void add_job_row(const struct npf_daemon *d, const struct dchk *e,
			const struct npf_policy *pol, json_t *json)
{
	struct npf_policy raw = *pol;
	struct npf_msg_row row;
	json_t *j;
	int r = -EINVAL;

	/* The row is the evidence itself, before any job decision is applied to it. */
	raw.job = NULL;
	if (d->inv)
		r = npf_recommend_row(d->inv, e->result, &raw, (const char *const *)e->peers,
				      e->n_peers, d->instance, &row);
	if (r < 0) {
		log_debug("no job row for %s: %s", e->key, strerror(-r));
		return;
	}
	j = npf_wire_row_to_json(&row);
	npf_wire_row_clear(&row);
	if (j && json_object_set_new(json, "job_row", j) < 0)
		log_debug("no job row for %s: out of memory", e->key);
}

/* This node's index in e's hostlist, or n_peers. */
static size_t self_index(const struct npf_daemon *d, const struct dchk *e)
{
	for (size_t i = 0; i < e->n_peers; i++)
		if (strcmp(e->peers[i], d->node_name) == 0)
			return i;
	return e->n_peers;
}

/* The job's decision as this node applies it (npf_policy.job). names (n_peers slots) and
 * reason are the caller's buffers the view borrows. An exchange that ended without a
 * decision, or one that does not fit our hostlist, is unknown: never a network. */
void dchk_job_view(const struct npf_daemon *d, const struct dchk *e, struct npf_job_view *v,
		     const char **names, char *reason, size_t rlen)
{
	const struct npf_msg_job_decision *jd = &e->job_dec;
	size_t self = self_index(d, e);

	memset(v, 0, sizeof(*v));
	v->role = NPF_JOB_ROLE_UNKNOWN;
	v->net = v->best = "";
	v->suspects = names;
	v->reason = reason;
	if (e->job_err || !jd->nodes) {
		snprintf(reason, rlen, "no decision from the job's coordinator %s: %s",
			 e->peers[0], e->job_err ? strerror(-e->job_err) : "none");
		return;
	}
	if (jd->n_nodes != e->n_peers || self >= e->n_peers) {
		snprintf(reason, rlen, "the coordinator %s answered for %u nodes, the job has %zu",
			 e->peers[0], jd->n_nodes, e->n_peers);
		return;
	}
	v->role = npf_job_role_of(jd, self);
	v->net = jd->net;
	v->best = jd->best;
	for (size_t i = 0; i < e->n_peers; i++)
		if (jd->nodes[i] == 's')
			names[v->n_suspects++] = e->peers[i];
	snprintf(reason, rlen, "%s", jd->reason);
}

/* The "job" object of the check JSON (docs/json.md): what the exchange decided. */
static void add_job(const struct dchk *e, const struct npf_job_view *v, json_t *json)
{
	const struct npf_msg_job_decision *jd = &e->job_dec;
	json_t *o, *sus = json_array(), *miss = json_array();

	for (size_t i = 0; sus && miss && jd->nodes && i < e->n_peers && i < jd->n_nodes; i++) {
		if (jd->nodes[i] == 's')
			json_array_append_new(sus, json_string(e->peers[i]));
		else if (jd->nodes[i] == 'm')
			json_array_append_new(miss, json_string(e->peers[i]));
	}
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o*, s:o*, s:I, s:I, s:s}", "tag",
		      e->job_tag, "id", e->job_id, "coordinator", e->peers[0], "role",
		      npf_job_role_name(v->role), "verdict",
		      jd->nodes ? npf_job_verdict_name((enum npf_job_verdict)jd->verdict) :
				  "unknown",
		      "net", v->net, "best", v->best, "suspects", sus, "missing", miss, "rows",
		      (json_int_t)(jd->nodes ? jd->n_rows : 0), "nodes", (json_int_t)e->n_peers,
		      "reason", v->reason);
	if (!o || json_object_set_new(json, "job", o) < 0)
		log_debug("no job object for %s: out of memory", e->key);
}

/* (Re)computes e's recommendation and its encoded JSON from e->result (the one place the
 * cached text is made, so a re-decision replaces it). The verdict of a check is the
 * recommendation's; without one (out of memory) it is unknown. Returns 0, or -ENOMEM or
 * -EMSGSIZE (e keeps its previous text then). */
int dchk_decide(struct npf_daemon *d, struct dchk *e)
{
	struct npf_policy pol;
	struct npf_job_view view;
	const char **names = NULL;
	char reason[sizeof(e->job_dec.reason) + 96];
	json_t *json;
	char *text = NULL;
	size_t len = 0;
	int r = -EINVAL, er;

	dchk_drop_env(e);
	npf_recommendation_clear(&e->rec);
	e->have_rec = false;
	policy_for(d, e->peers[0], false, &pol);
	if (e->have_job) {
		names = calloc(e->n_peers, sizeof(*names));
		if (!names)
			return -ENOMEM;
		dchk_job_view(d, e, &view, names, reason, sizeof(reason));
		pol.job = &view;
	}
	if (d->inv)
		r = npf_recommend(d->inv, e->result, &pol, &e->rec);
	if (r < 0) {
		npf_recommendation_clear(&e->rec);
		log_errc(r, "no recommendation for %s", e->key);
	} else {
		e->have_rec = true;
	}
	json = npf_check_to_json(e->result, e->have_rec ? &e->rec : NULL);
	if (!json) {
		free(names);
		return -ENOMEM;
	}
	add_job_row(d, e, &pol, json);
	if (e->have_job)
		add_job(e, &view, json);
	free(names);
	/* The reply carries the check inside an envelope, within the same cap. */
	er = npf_api_json_text(json, NPF_API_MAX_REPLY - 128, &text, &len);
	json_decref(json);
	if (er < 0)
		return er;
	free(e->text);
	e->text = text;
	e->text_len = len;
	if (e->have_rec) {
		e->verdict = e->rec.verdict;
		snprintf(e->summary, sizeof(e->summary), "%s", e->rec.summary);
	} else {
		e->verdict = NPF_VERDICT_UNKNOWN;
		snprintf(e->summary, sizeof(e->summary), "unknown: no decision (%s)",
			 strerror(-r));
	}
	return 0;
}
