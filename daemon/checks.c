// SPDX-License-Identifier: MIT
/* Checks per peer set: start or join a probe run, decide (npf_recommend), cache the result
 * and its recommendation with their time, persist the last one, answer check/verdict/env. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "envfmt.h"
#include "fileio.h"
#include "jobrows.h"
#include "log.h"
#include "probe.h"
#include "recommend.h"

/* A participant waits for the job's decision up to its budget again plus this: nodes of
 * one job start within about a second of each other, and the slowest one's row comes at
 * the end of its own budget (docs/decision.md §10). */
#define DCHK_JOB_SLACK_MS 2000
/* The coordinator is told to answer this much before we give up on it: the row's trip
 * (connect, key exchange, a loaded peer) must not make us time out on a decision the
 * other nodes got. */
#define DCHK_JOB_GRACE_MS 1000

/* Cached env replies per format: "" and "json" (the same reply), then enum npf_envfmt + 1. */
#define DCHK_ENV_SLOTS (NPF_ENVFMT_NCCL_CONF + 2)

/* One peer set: the run in flight (if any) and the last result. */
struct dchk {
	struct dchk *next;
	struct npf_daemon *d;
	char *key;     /* npf_api_peers_key(): sorted, without this node */
	char **peers;  /* as first requested, handed to the engine */
	size_t n_peers;
	bool running;
	bool stale;    /* an involved interface changed during the run: do not cache */
	uint32_t timeout_ms;
	struct ctl_client *waiters;
	struct npf_check *result;
	/* The decision for result under the current config and inventory, with the job's
	 * first node = peers[0] and per-node (not job-wide) values. */
	struct npf_recommendation rec;
	bool have_rec;
	/* npf_check_to_json(result, &rec), encoded once per decision: every check and
	 * verdict reply and the state file are made around this text. */
	char *text;
	size_t text_len;
	/* env replies of rec (per-node values, first node peers[0]), encoded on first use,
	 * forgotten with rec. */
	struct npf_api_env_split env[DCHK_ENV_SLOTS];
	uint64_t done_mono_us, done_unix_ms;
	char summary[sizeof(((struct npf_recommendation *)0)->summary)];
	enum npf_verdict verdict;

	/* The job check (docs/decision.md §10): the run's tag ("" = this node decides
	 * alone), the job id its row carries, and what the coordinator answered. */
	char job_tag[NPF_API_JOB_MAX];
	bool job_settle; /* the job start's last try: its row says "settle" */
	char job_id[NPF_WIRE_JOB_ID_LEN + 1];
	bool job_pending;	       /* the row is out, the decision not yet in */
	struct npf_job_submit *job_sub; /* to a remote coordinator, while pending */
	bool have_job;		       /* job_dec or job_err holds the exchange's end */
	struct npf_msg_job_decision job_dec; /* owned; nodes NULL when job_err */
	int job_err;		       /* 0, or why no decision came (-ETIMEDOUT ...) */
	uid_t job_uid;		       /* who started the job check (DMN_MAX_JOBS_PER_UID) */
	/* The exchange's window: the probes and the wait for the other rows end within
	 * 2 * job_budget_ms + DCHK_JOB_SLACK_MS of start_mono_us. job_budget_ms is the
	 * caller's ceiling (max_timeout_ms, what the Prolog's budget leaves) when above the
	 * probe budget, so nodes whose checks start far apart still meet (job_window_ms()). */
	uint32_t job_budget_ms;
	uint64_t start_mono_us;
};

static void drop_env(struct dchk *e)
{
	for (size_t i = 0; i < DCHK_ENV_SLOTS; i++)
		npf_api_env_split_clear(&e->env[i]);
}

static void drop_result(struct dchk *e)
{
	drop_env(e);
	if (e->result) {
		npf_check_clear(e->result);
		free(e->result);
		e->result = NULL;
	}
	npf_recommendation_clear(&e->rec);
	e->have_rec = false;
	free(e->text);
	e->text = NULL;
	e->text_len = 0;
	npf_wire_job_decision_clear(&e->job_dec);
	e->have_job = false;
	e->job_err = 0;
}

static void entry_free(struct npf_daemon *d, struct dchk *e)
{
	for (struct dchk **pp = &d->checks; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			d->n_checks--;
			break;
		}
	npf_probe_job_cancel(e->job_sub);
	e->job_sub = NULL;
	jround_forget_local(d, e);
	drop_result(e);
	for (size_t i = 0; i < e->n_peers; i++)
		free(e->peers[i]);
	free(e->peers);
	free(e->key);
	free(e);
}

static struct dchk *find(struct npf_daemon *d, const char *key)
{
	for (struct dchk *e = d->checks; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

static uint64_t age_ms(const struct dchk *e)
{
	return (dmn_now_mono_us() - e->done_mono_us) / 1000;
}

static bool expired(const struct npf_daemon *d, const struct dchk *e)
{
	return e->result && age_ms(e) > d->cfg.probe.cache_ttl_ms;
}

void dchk_expire(struct npf_daemon *d)
{
	struct dchk *e = d->checks, *next;

	for (; e; e = next) {
		next = e->next;
		if (!e->running && (expired(d, e) || !e->result))
			entry_free(d, e);
	}
}

/* Makes room for one more entry; false when every slot is busy running. */
static bool evict_one(struct npf_daemon *d)
{
	struct dchk *oldest = NULL;

	dchk_expire(d);
	if (d->n_checks < DMN_MAX_CACHED)
		return true;
	for (struct dchk *e = d->checks; e; e = e->next)
		if (!e->running && (!oldest || e->done_mono_us < oldest->done_mono_us))
			oldest = e;
	if (!oldest)
		return false;
	entry_free(d, oldest);
	return true;
}

static struct dchk *entry_new(struct npf_daemon *d, char *key, const struct npf_api_request *req)
{
	struct dchk *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->peers = calloc(req->n_peers, sizeof(*e->peers));
	if (!e->peers) {
		free(e);
		return NULL;
	}
	for (size_t i = 0; i < req->n_peers; i++) {
		e->peers[i] = strdup(req->peers[i]);
		if (!e->peers[i]) {
			for (size_t k = 0; k < i; k++)
				free(e->peers[k]);
			free(e->peers);
			free(e);
			return NULL;
		}
	}
	e->n_peers = req->n_peers;
	e->d = d;
	e->key = key;
	e->next = d->checks;
	d->checks = e;
	d->n_checks++;
	return e;
}

/* A copy of the cached text in a frame: no JSON work per query. */
static void check_reply(struct ctl_client *c, const struct dchk *e, bool cached)
{
	char *frame = NULL;
	size_t len = 0;
	int r;

	r = npf_api_check_reply_frame(e->text, e->text_len, cached, age_ms(e), NPF_API_MAX_REPLY,
				      &frame, &len);
	ctl_reply_frame(c, r, frame, len);
}

/* Atomic replacement so a reader never sees half a file. The document is written compact with
 * one write(): jansson's fd dumper made one write(2) per token (tens of thousands for a
 * large check); readers (the CLI, jq) pretty-print. */
static void write_state(struct npf_daemon *d, const struct dchk *e)
{
	const char *dir = d->cfg.daemon.state_dir;
	char path[NPF_CONFIG_PATH_MAX + 32];
	static const char mid[] = ",\"check\":";
	char *head = NULL, *buf = NULL;
	size_t hlen = 0, len;
	json_t *doc;
	int r;

	if (!dir[0] || !e->text)
		return;
	snprintf(path, sizeof(path), "%s/last-check.json", dir);
	r = dmn_mkdir_p(dir, 0755);
	if (r < 0) {
		log_errc(r, "state dir %s (last check not saved)", dir);
		return;
	}
	/* The small envelope is encoded here; the check is the cached text, spliced in
	 * before the envelope's closing brace. */
	doc = json_pack("{s:i, s:s, s:s, s:I}", "version", NPF_API_VERSION, "node", d->node_name,
			"peers", e->key, "written_unix_ms", (json_int_t)dmn_now_unix_ms());
	r = doc ? npf_api_json_text(doc, NPF_API_MAX_REPLY, &head, &hlen) : -ENOMEM;
	json_decref(doc);
	if (r < 0 || hlen < 2 || head[hlen - 1] != '}') {
		log_errc(r < 0 ? r : -EPROTO, "%s (last check not saved)", path);
		free(head);
		return;
	}
	hlen--;
	len = hlen + sizeof(mid) - 1 + e->text_len + 2;
	buf = malloc(len);
	if (!buf) {
		log_errc(-ENOMEM, "%s (last check not saved)", path);
		free(head);
		return;
	}
	memcpy(buf, head, hlen);
	memcpy(buf + hlen, mid, sizeof(mid) - 1);
	memcpy(buf + hlen + sizeof(mid) - 1, e->text, e->text_len);
	memcpy(buf + len - 2, "}\n", 2);
	free(head);
	/* After a crash the file is the old or the new one, never empty. */
	r = npf_atomic_write(dir, "last-check.json", buf, len, 0644);
	if (r < 0)
		log_errc(r, "%s (last check not saved)", path);
	free(buf);
}

/* The [publish] policy of the running config. first_node is borrowed. */
static void policy_for(const struct npf_daemon *d, const char *first_node, bool job_wide,
		       struct npf_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->prefer = &d->cfg.publish.prefer;
	pol->avoid = &d->cfg.publish.avoid;
	pol->rdma_fabric = &d->cfg.publish.rdma_fabric;
	pol->nccl_version = d->cfg.publish.nccl_version;
	pol->publish = d->cfg.publish.variables;
	pol->master_addr = d->cfg.publish.master_addr;
	pol->first_node = first_node;
	pol->job_wide = job_wide;
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
static void job_view(const struct npf_daemon *d, const struct dchk *e, struct npf_job_view *v,
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
static int decide(struct npf_daemon *d, struct dchk *e)
{
	struct npf_policy pol;
	struct npf_job_view view;
	const char **names = NULL;
	char reason[sizeof(e->job_dec.reason) + 96];
	json_t *json;
	char *text = NULL;
	size_t len = 0;
	int r = -EINVAL, er;

	drop_env(e);
	npf_recommendation_clear(&e->rec);
	e->have_rec = false;
	policy_for(d, e->peers[0], false, &pol);
	if (e->have_job) {
		names = calloc(e->n_peers, sizeof(*names));
		if (!names)
			return -ENOMEM;
		job_view(d, e, &view, names, reason, sizeof(reason));
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

/* The cache slot of an env format, or -1. */
static int env_slot(const char *format)
{
	int f;

	if (!format[0] || strcmp(format, "json") == 0)
		return 0;
	f = npf_envfmt_parse(format);
	return f >= 0 && f + 1 < DCHK_ENV_SLOTS ? f + 1 : -1;
}

/* The cached decision's env reply, encoded once per format and decision. Returns 0 when
 * it answered c. */
static int env_cached_reply(struct ctl_client *c, struct dchk *e, const char *format,
			    bool cached)
{
	int slot = env_slot(format), r = 0;
	char *frame = NULL;
	size_t len = 0;

	if (slot < 0)
		return -EINVAL;
	if (!e->env[slot].head)
		r = npf_api_env_split_make(&e->rec, format, &e->env[slot]);
	if (r < 0)
		return r;
	r = npf_api_env_split_frame(&e->env[slot], cached, age_ms(e), NPF_API_MAX_REPLY, &frame,
				    &len);
	ctl_reply_frame(c, r, frame, len);
	return 0;
}

/* The env reply for one client: the cached decision when it answers the same
 * question (per-node values; the same first node when MASTER_ADDR is published),
 * else a decision made now from the cached evidence. */
static void env_reply(struct npf_daemon *d, struct ctl_client *c, struct dchk *e,
		      const char *first_node, bool job_wide, const char *format, bool cached)
{
	struct npf_recommendation rec = { 0 };
	struct npf_policy pol;
	struct npf_job_view view;
	const char **names = NULL;
	char reason[sizeof(e->job_dec.reason) + 96];
	int r = -EINVAL;

	if (e->have_rec && !job_wide &&
	    (!d->cfg.publish.master_addr || strcmp(first_node, e->peers[0]) == 0)) {
		if (env_cached_reply(c, e, format, cached) == 0)
			return;
		ctl_reply(c, npf_api_env_reply(&e->rec, format, cached, age_ms(e)));
		return;
	}
	policy_for(d, first_node, job_wide, &pol);
	/* The job's decision holds for every form of its env (job-wide values too). */
	if (e->have_job) {
		names = calloc(e->n_peers, sizeof(*names));
		if (names) {
			job_view(d, e, &view, names, reason, sizeof(reason));
			pol.job = &view;
		} else {
			r = -ENOMEM;
		}
	}
	if (d->inv && (!e->have_job || names))
		r = npf_recommend(d->inv, e->result, &pol, &rec);
	free(names);
	if (r < 0) {
		npf_recommendation_clear(&rec);
		ctl_reply(c, npf_api_reply_error(NPF_API_E_INTERNAL, "cannot decide: %s",
						 strerror(-r)));
		return;
	}
	ctl_reply(c, npf_api_env_reply(&rec, format, cached, age_ms(e)));
	npf_recommendation_clear(&rec);
}

/* What a waiting client asked for, answered from e. */
static void waiter_reply(struct npf_daemon *d, struct dchk *e, struct ctl_client *c,
			 bool cached)
{
	if (c->want_env)
		env_reply(d, c, e, c->env_first_node, c->env_job_wide, c->env_format, cached);
	else
		check_reply(c, e, cached);
}

static void fail_waiters(struct ctl_client *w, int err)
{
	struct ctl_client *next;

	for (; w; w = next) {
		next = w->wait_next;
		w->waiting = NULL;
		w->wait_next = NULL;
		ctl_reply(w, npf_api_reply_error(NPF_API_E_CHECK_FAILED,
						 "the probe engine failed: %s",
						 strerror(err < 0 ? -err : EIO)));
	}
}
/* What the probe engine counts (per cluster key, data-port impostors), into the counters
 * before publishing. */
static void metrics_from_probe(struct npf_daemon *d)
{
	struct npf_probe_stats st;

	if (!d->probe)
		return;
	npf_probe_get_stats(d->probe, &st);
	d->metrics.n_keys = st.n_keys;
	memcpy(d->metrics.key_ids, st.key_ids, sizeof(d->metrics.key_ids));
	memcpy(d->metrics.key_sessions, st.key_sessions, sizeof(d->metrics.key_sessions));
	d->metrics.probe_reported = true;
	d->metrics.data_impostors = st.data_impostors;
}


/* After the run (and the job's exchange): decide, answer every waiter, record. w is the
 * waiters' list, taken from e. */
static void complete(struct npf_daemon *d, struct dchk *e, struct ctl_client *w)
{
	struct ctl_client *next;
	int r;

	r = decide(d, e);
	if (r < 0) {
		log_errc(r, "check of %s: cannot encode the result", e->key);
		fail_waiters(w, r);
		entry_free(d, e);
		return;
	}
	log_info("check %s: %s (%u ms)", e->key, e->summary, e->result->duration_ms);
	if ((unsigned)e->verdict < sizeof(d->metrics.checks) / sizeof(d->metrics.checks[0]))
		d->metrics.checks[e->verdict]++;
	metrics_from_probe(d);
	metrics_publish(d->cfg.metrics.textfile_dir, e->result, e->have_rec ? &e->rec : NULL,
			&d->metrics);
	snprintf(d->last_summary, sizeof(d->last_summary), "%.*s",
		 (int)sizeof(d->last_summary) - 1, e->summary);
	for (; w; w = next) {
		next = w->wait_next;
		w->waiting = NULL;
		w->wait_next = NULL;
		waiter_reply(d, e, w, false);
	}
	/* After the replies went out: the state file (and its fsync) does not delay them. */
	write_state(d, e);
	/* What was measured was answered; it is not kept as the node's current truth. */
	if (e->stale)
		drop_result(e);
	dmn_notify_status(d);
}

/* The exchange ended (dec borrowed, NULL with err): the run is over now. */
static void job_done(struct dchk *e, const struct npf_msg_job_decision *dec, int err)
{
	struct npf_daemon *d = e->d;
	struct ctl_client *w = e->waiters;

	e->job_sub = NULL;
	if (!e->job_pending)
		return;
	e->job_pending = false;
	e->have_job = true;
	e->job_err = err;
	if (dec) {
		e->job_dec = *dec;
		e->job_dec.nodes = strdup(dec->nodes);
		if (!e->job_dec.nodes)
			e->job_err = -ENOMEM;
	}
	e->running = false;
	d->n_running--;
	e->waiters = NULL;
	complete(d, e, w);
}

static void job_local_done(void *ud, const struct npf_msg_job_decision *dec)
{
	job_done(ud, dec, 0);
}

static void job_remote_done(void *ud, const struct npf_msg_job_decision *dec, int err)
{
	job_done(ud, dec, err);
}

/* How long after its start a job check may run: its probes, then the wait for the other
 * nodes' rows, up to the budget again (docs/decision.md §10, "When it decides"). */
static uint32_t job_window_ms(const struct dchk *e)
{
	uint64_t w = 2 * (uint64_t)e->job_budget_ms + DCHK_JOB_SLACK_MS;

	return w < UINT32_MAX / 2 ? (uint32_t)w : UINT32_MAX / 2;
}

/* The wait for the decision, from now: what is left of the window, so a node whose probes
 * ended early waits for the nodes that started late (their Prologs started later). At least
 * the slack; at most what the wire carries. */
static uint32_t job_wait_ms(const struct dchk *e)
{
	uint64_t elapsed = (dmn_now_mono_us() - e->start_mono_us) / 1000;
	uint64_t window = job_window_ms(e);
	uint64_t wait = window > elapsed + DCHK_JOB_SLACK_MS ? window - elapsed : DCHK_JOB_SLACK_MS;

	return wait < NPF_WIRE_MAX_TIMEOUT_MS ? (uint32_t)wait : NPF_WIRE_MAX_TIMEOUT_MS;
}

/* Sends this node's row to the job's coordinator (ourselves when we are the hostlist's
 * first node). Returns 0 when the run now waits for the decision, or -errno (the
 * caller decides without one: unknown). */
static int job_submit(struct npf_daemon *d, struct dchk *e)
{
	struct npf_policy pol;
	struct npf_msg_row *row;
	uint32_t wait;
	int r = -EINVAL;

	row = calloc(1, sizeof(*row));
	if (!row)
		return -ENOMEM;
	policy_for(d, e->peers[0], false, &pol);
	if (d->inv)
		r = npf_recommend_row(d->inv, e->result, &pol, (const char *const *)e->peers,
				      e->n_peers, d->instance, row);
	if (r == 0)
		r = npf_job_id_tag((const char *const *)e->peers, e->n_peers, e->job_tag, row->job);
	if (r < 0) {
		free(row);
		return r;
	}
	memcpy(e->job_id, row->job, sizeof(e->job_id));
	/* We wait `wait`; the coordinator is asked to answer a grace earlier. */
	wait = job_wait_ms(e);
	row->wait_ms = wait - DCHK_JOB_GRACE_MS;
	row->settle = e->job_settle;
	e->job_pending = true;
	if (strcmp(e->peers[0], d->node_name) == 0) {
		/* May answer at once (a decided round, or the last row): job_done then runs
		 * inside, and the run is complete when this returns. */
		jround_add_row(d, row, 0, job_local_done, e, (const char *const *)e->peers);
		return 0;
	}
	r = npf_probe_job_submit(d->probe, e->peers[0], row, wait, job_remote_done, e,
				 &e->job_sub);
	npf_wire_row_clear(row);
	free(row);
	if (r < 0)
		e->job_pending = false;
	return r;
}

static void on_check_done(struct npf_check *result, int err, void *userdata)
{
	struct dchk *e = userdata;
	struct npf_daemon *d = e->d;
	struct ctl_client *w = e->waiters;
	int r;

	if (err >= 0 && (!result || result->n_nodes == 0))
		err = -EIO;
	if (err < 0) {
		e->running = false;
		d->n_running--;
		e->waiters = NULL;
		if (err != -ECANCELED) {
			log_errc(err, "check of %s failed", e->key);
			d->metrics.check_errors++;
		}
		fail_waiters(w, err);
		if (result) {
			npf_check_clear(result);
			free(result);
		}
		if (!e->result)
			entry_free(d, e);
		dchk_publish_metrics(d);
		return;
	}
	drop_result(e);
	e->result = result;
	e->done_mono_us = dmn_now_mono_us();
	e->done_unix_ms = dmn_now_unix_ms();
	if (e->job_tag[0]) {
		/* A job check: the run ends when the coordinator has answered. */
		r = job_submit(d, e);
		if (r == 0)
			return;
		log_errc(r, "check of %s: job %s: no row sent", e->key, e->job_tag);
		e->have_job = true;
		e->job_err = r;
	}
	e->running = false;
	d->n_running--;
	e->waiters = NULL;
	complete(d, e, w);
}

static void add_waiter(struct dchk *e, struct ctl_client *c)
{
	c->waiting = e;
	c->wait_next = e->waiters;
	e->waiters = c;
	/* A job check waits for the others' rows too (job_submit's wait). */
	ctl_wait(c, e->job_tag[0] ? job_window_ms(e) : e->timeout_ms);
}

/* Job checks running for uid: each holds a round at the job's coordinator until it is
 * answered, so one user with many tags cannot take the rounds of everyone's jobs. */
static size_t jobs_of(const struct npf_daemon *d, uid_t uid)
{
	size_t k = 0;

	for (const struct dchk *e = d->checks; e; e = e->next)
		if (e->running && e->job_tag[0] && e->job_uid == uid)
			k++;
	return k;
}

/* The exchange's budget (struct dchk): the caller's ceiling when it names one above the
 * probe budget (the Prolog passes what its budget leaves), else the probe budget. */
static void job_set_budget(struct dchk *e, const struct npf_api_request *req)
{
	e->job_budget_ms = e->timeout_ms;
	if (req->job[0] && req->max_timeout_ms > e->job_budget_ms)
		e->job_budget_ms = req->max_timeout_ms;
}

/* Starts a run for req's peer set, or joins the one in flight, and parks c on it.
 * Takes key. Always ends in a ctl_reply() or a parked client. */
static void start_or_join(struct npf_daemon *d, struct ctl_client *c,
			  const struct npf_api_request *req, char *key, struct dchk *e)
{
	int r;

	if (e && e->running) {
		/* Same peer set already in flight: share its result (a tagged request makes
		 * a run that has not ended a job check: its row goes out at the end). */
		free(key);
		if (req->job[0] && !e->job_tag[0] && !e->job_pending) {
			snprintf(e->job_tag, sizeof(e->job_tag), "%s", req->job);
			e->job_settle = req->settle;
			job_set_budget(e, req);
		}
		add_waiter(e, c);
		return;
	}
	if (d->n_running >= DMN_MAX_RUNNING) {
		free(key);
		ctl_reply(c, npf_api_reply_error(NPF_API_E_BUSY, "%u checks already running",
						 d->n_running));
		return;
	}
	if (req->job[0] && c->uid != 0 && jobs_of(d, c->uid) >= DMN_MAX_JOBS_PER_UID) {
		free(key);
		ctl_reply(c, npf_api_reply_error(NPF_API_E_BUSY,
						 "uid %u already has a job check running",
						 (unsigned)c->uid));
		return;
	}
	if (e) {
		free(key);
	} else {
		if (!evict_one(d)) {
			free(key);
			ctl_reply(c, npf_api_reply_error(NPF_API_E_BUSY, "result cache full"));
			return;
		}
		e = entry_new(d, key, req);
		if (!e) {
			free(key);
			ctl_reply(c, NULL);
			return;
		}
	}
	snprintf(e->job_tag, sizeof(e->job_tag), "%s", req->job);
	e->job_settle = req->settle;
	e->job_id[0] = '\0';
	e->job_uid = c->uid;
	/* No budget asked for: the configured one, grown with the job (docs/config.md). */
	e->timeout_ms = req->timeout_ms ? req->timeout_ms :
					  npf_probe_check_budget(d->probe,
								 (const char *const *)e->peers,
								 e->n_peers, d->cfg.probe.timeout_ms);
	if (!req->timeout_ms && req->max_timeout_ms && e->timeout_ms > req->max_timeout_ms)
		e->timeout_ms = req->max_timeout_ms;
	e->start_mono_us = dmn_now_mono_us();
	job_set_budget(e, req);
	r = npf_probe_check_start(d->probe, (const char *const *)e->peers, e->n_peers,
				  e->timeout_ms, on_check_done, e);
	if (r < 0) {
		ctl_reply(c, npf_api_reply_error(NPF_API_E_CHECK_FAILED,
						 "cannot start the check: %s", strerror(-r)));
		if (!e->result)
			entry_free(d, e);
		return;
	}
	e->running = true;
	e->stale = false;
	d->n_running++;
	log_info("check %s started for uid %u (timeout %u ms)", e->key, (unsigned)c->uid,
		 e->timeout_ms);
	add_waiter(e, c);
}

/* The peer set's key, or NULL after replying with the error. */
static char *request_key(struct npf_daemon *d, struct ctl_client *c,
			 const struct npf_api_request *req)
{
	char *key = NULL;
	int r;

	r = npf_api_peers_key((const char(*)[NPF_NAME_MAX])req->peers, req->n_peers, d->node_name,
			      &key);
	if (r < 0) {
		ctl_reply(c, r == -EINVAL ?
				     npf_api_reply_error(NPF_API_E_BAD_REQUEST,
							 "no peers besides this node (%s)",
							 d->node_name) :
				     NULL);
		return NULL;
	}
	return key;
}

void dchk_check(struct npf_daemon *d, struct ctl_client *c, const struct npf_api_request *req)
{
	struct dchk *e;
	char *key;

	c->want_env = false;
	if (!d->ready || !d->probe) {
		ctl_reply(c, npf_api_reply_error(NPF_API_E_NOT_READY, "no inventory yet"));
		return;
	}
	/* Before any lookup: applying a pending change may drop cached results. */
	snap_settle(d);
	key = request_key(d, c, req);
	if (!key)
		return;
	e = find(d, key);
	if (e && e->result && req->max_age_ms && !expired(d, e) && age_ms(e) <= req->max_age_ms) {
		free(key);
		check_reply(c, e, true);
		return;
	}
	start_or_join(d, c, req, key, e);
}

void dchk_env(struct npf_daemon *d, struct ctl_client *c, const struct npf_api_request *req)
{
	const char *lit;
	struct dchk *e;
	bool fresh;
	char *key;

	if (!d->ready || !d->probe) {
		ctl_reply(c, npf_api_reply_error(NPF_API_E_NOT_READY, "no inventory yet"));
		return;
	}
	/* Before any lookup: applying a pending change may drop cached results. */
	snap_settle(d);
	key = request_key(d, c, req);
	if (!key)
		return;
	dchk_expire(d);
	e = find(d, key);
	/* Fresh: younger than cache_ttl (entries past it are gone), and than max_age_ms
	 * when the client gave one (0: never fresh, always probe). */
	fresh = e && e->result &&
		(!req->max_age_set || (req->max_age_ms && age_ms(e) <= req->max_age_ms));
	if (fresh) {
		free(key);
		env_reply(d, c, e, req->peers[0], req->job_wide, req->format, true);
		return;
	}
	if (req->cached) {
		ctl_reply(c, npf_api_reply_error(NPF_API_E_NO_VERDICT,
						 "no current result for %.120s%s", key,
						 e && e->running ? " (a check is running)" : ""));
		free(key);
		return;
	}
	if (!ctl_may_probe(d, c)) {
		free(key);
		ctl_reply(c, npf_api_reply_error(NPF_API_E_FORBIDDEN,
						 "nothing cached for these peers and uid %u may not "
						 "start probes (allowed: root, the daemon's user, "
						 "group '%s')",
						 (unsigned)c->uid, d->cfg.daemon.check_group));
		return;
	}
	if ((lit = ctl_literal_peer(c, req))) {
		free(key);
		ctl_reply(c, npf_api_reply_error(NPF_API_E_FORBIDDEN, LITERAL_PEER_MSG, lit,
						 (unsigned)c->uid));
		return;
	}
	c->want_env = true;
	c->env_job_wide = req->job_wide;
	snprintf(c->env_format, sizeof(c->env_format), "%s", req->format);
	snprintf(c->env_first_node, sizeof(c->env_first_node), "%s", req->peers[0]);
	start_or_join(d, c, req, key, e);
}

void dchk_redecide(struct npf_daemon *d)
{
	bool any = false;

	for (struct dchk *e = d->checks; e; e = e->next) {
		if (!e->result)
			continue;
		any = true;
		int r = decide(d, e);

		if (r < 0)
			log_errc(r, "re-deciding %s: keeping the previous answer", e->key);
	}
	/* The published recommendation follows the new decision. */
	if (any)
		dchk_publish_metrics(d);
}

void dchk_verdict(struct npf_daemon *d, struct ctl_client *c, const struct npf_api_request *req)
{
	struct dchk *e;
	char *key = NULL;
	int err;

	err = npf_api_peers_key((const char(*)[NPF_NAME_MAX])req->peers, req->n_peers,
				d->node_name, &key);
	if (err < 0) {
		ctl_reply(c, err == -EINVAL ? npf_api_reply_error(NPF_API_E_BAD_REQUEST,
								  "no peers besides this node (%s)",
								  d->node_name) :
					      NULL);
		return;
	}
	dchk_expire(d);
	e = find(d, key);
	if (!e || !e->result)
		ctl_reply(c, npf_api_reply_error(NPF_API_E_NO_VERDICT,
						 "no current result for %.120s%s", key,
						 e && e->running ? " (a check is running)" : ""));
	else
		check_reply(c, e, true);
	free(key);
}

static bool names_has(const char (*names)[IFNAMSIZ], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* Does the result rest on any of these interfaces of ours? */
static bool involves(const struct npf_check *c, const char (*names)[IFNAMSIZ], size_t n)
{
	if (c->n_nodes == 0)
		return false;
	for (size_t i = 0; i < c->nodes[0].n_ifnames; i++)
		if (names_has(names, n, c->nodes[0].ifnames[i]))
			return true;
	for (size_t i = 0; i < c->nodes[0].n_cands; i++)
		if (names_has(names, n, c->nodes[0].cands[i].ifname))
			return true;
	for (size_t i = 0; i < c->n_links; i++)
		if (names_has(names, n, c->links[i].ifname))
			return true;
	for (size_t i = 0; i < c->n_paths; i++)
		if (names_has(names, n, c->paths[i].local_if))
			return true;
	return false;
}

void dchk_invalidate(struct npf_daemon *d, const char (*names)[IFNAMSIZ], size_t n)
{
	struct dchk *e = d->checks, *next;

	for (; e; e = next) {
		next = e->next;
		if (e->running) {
			/* What is being measured may straddle the change. */
			e->stale = true;
			if (e->result && involves(e->result, names, n))
				drop_result(e);
			continue;
		}
		if (e->result && involves(e->result, names, n)) {
			log_info("cached result for %s dropped: an involved interface changed",
				 e->key);
			entry_free(d, e);
		}
	}
	/* The rest still holds as evidence, but the decision also reads the inventory
	 * (NCCL's default pick, the names a value must not select): decide again. */
	dchk_redecide(d);
}

void dchk_client_gone(struct npf_daemon *d, struct ctl_client *c)
{
	struct dchk *e = c->waiting;

	(void)d;
	if (!e)
		return;
	for (struct ctl_client **pp = &e->waiters; *pp; pp = &(*pp)->wait_next)
		if (*pp == c) {
			*pp = c->wait_next;
			break;
		}
	c->waiting = NULL;
	c->wait_next = NULL;
}

json_t *dchk_status_json(struct npf_daemon *d)
{
	json_t *arr = json_array();

	dchk_expire(d);
	for (struct dchk *e = d->checks; arr && e; e = e->next) {
		json_t *o;
		size_t n_wait = 0;

		for (struct ctl_client *w = e->waiters; w; w = w->wait_next)
			n_wait++;
		if (e->result)
			o = json_pack("{s:s, s:b, s:I, s:s, s:s, s:I, s:I, s:I}", "peers", e->key,
				      "running", e->running, "waiters", (json_int_t)n_wait,
				      "verdict", npf_verdict_name(e->verdict), "summary", e->summary,
				      "finished_unix_ms", (json_int_t)e->done_unix_ms, "age_ms",
				      (json_int_t)age_ms(e), "duration_ms",
				      (json_int_t)e->result->duration_ms);
		else
			o = json_pack("{s:s, s:b, s:I, s:n}", "peers", e->key, "running", e->running,
				      "waiters", (json_int_t)n_wait, "verdict");
		if (json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

void dchk_free_all(struct npf_daemon *d)
{
	while (d->checks)
		entry_free(d, d->checks);
}

void dchk_publish_metrics(struct npf_daemon *d)
{
	const struct dchk *last = NULL;

	for (const struct dchk *e = d->checks; e; e = e->next)
		if (e->result && (!last || e->done_mono_us > last->done_mono_us))
			last = e;
	metrics_from_probe(d);
	metrics_publish(d->cfg.metrics.textfile_dir, last ? last->result : NULL,
			last && last->have_rec ? &last->rec : NULL, &d->metrics);
}
