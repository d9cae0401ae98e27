// SPDX-License-Identifier: MIT
/* Checks per peer set: the cache of results, starting or joining a probe run and the job
 * exchange that ends it, and the requests (check, env, verdict) that look them up. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dchk.h"
#include "jobrow.h"
#include "jobrows.h"
#include "log.h"
#include "probe.h"

static void drop_result(struct dchk *e)
{
	dchk_drop_env(e);
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
	LIST_REMOVE(e, link);
	d->n_checks--;
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
	struct dchk *e;

	LIST_FOREACH(e, &d->checks, link)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

static bool expired(const struct npf_daemon *d, const struct dchk *e)
{
	return e->result && dchk_age_ms(e) > d->cfg.probe.cache_ttl_ms;
}

void dchk_expire(struct npf_daemon *d)
{
	struct dchk *e = LIST_FIRST(&d->checks), *next;

	for (; e; e = next) {
		next = LIST_NEXT(e, link);
		if (!e->running && (expired(d, e) || !e->result))
			entry_free(d, e);
	}
}

/* Makes room for one more entry; false when every slot is busy running. */
static bool evict_one(struct npf_daemon *d)
{
	struct dchk *oldest = NULL, *e;

	dchk_expire(d);
	if (d->n_checks < DMN_MAX_CACHED)
		return true;
	LIST_FOREACH(e, &d->checks, link)
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
	LIST_INSERT_HEAD(&d->checks, e, link);
	d->n_checks++;
	return e;
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

	r = dchk_decide(d, e);
	if (r < 0) {
		log_errc(r, "check of %s: cannot encode the result", e->key);
		dchk_fail_waiters(w, r);
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
		dchk_waiter_reply(d, e, w, false);
	}
	/* After the replies went out: the state file (and its fsync) does not delay them. */
	dchk_write_state(d, e);
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
	uint64_t elapsed = (npf_now(CLOCK_MONOTONIC) - e->start_mono_us) / 1000;
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
		dchk_fail_waiters(w, err);
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
	e->done_mono_us = npf_now(CLOCK_MONOTONIC);
	e->done_unix_ms = npf_now(CLOCK_REALTIME) / USEC_PER_MSEC;
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
	const struct dchk *e;
	size_t k = 0;

	LIST_FOREACH(e, &d->checks, link)
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
	e->start_mono_us = npf_now(CLOCK_MONOTONIC);
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

/* The answer when key (e, if any) has no current result. */
static void no_result(struct ctl_client *c, const char *key, const struct dchk *e)
{
	ctl_reply(c, npf_api_reply_error(NPF_API_E_NO_VERDICT, "no current result for %.120s%s",
					 key, e && e->running ? " (a check is running)" : ""));
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
	if (e && e->result && req->max_age_ms && !expired(d, e) && dchk_age_ms(e) <= req->max_age_ms) {
		free(key);
		dchk_check_reply(c, e, true);
		return;
	}
	start_or_join(d, c, req, key, e);
}

bool dchk_env_cached(struct npf_daemon *d, struct ctl_client *c,
		     const struct npf_api_request *req)
{
	struct dchk *e;
	bool fresh;
	char *key;

	if (!d->ready || !d->probe) {
		ctl_reply(c, npf_api_reply_error(NPF_API_E_NOT_READY, "no inventory yet"));
		return true;
	}
	/* Before any lookup: applying a pending change may drop cached results. */
	snap_settle(d);
	key = request_key(d, c, req);
	if (!key)
		return true;
	dchk_expire(d);
	e = find(d, key);
	/* Fresh: younger than cache_ttl (entries past it are gone), and than max_age_ms
	 * when the client gave one (0: never fresh, always probe). */
	fresh = e && e->result &&
		(!req->max_age_set || (req->max_age_ms && dchk_age_ms(e) <= req->max_age_ms));
	if (fresh) {
		free(key);
		dchk_env_reply(d, c, e, req->peers[0], req->job_wide, req->format, true);
		return true;
	}
	if (req->cached) {
		no_result(c, key, e);
		free(key);
		return true;
	}
	free(key);
	return false;
}

void dchk_env_start(struct npf_daemon *d, struct ctl_client *c,
		    const struct npf_api_request *req)
{
	char *key = request_key(d, c, req);

	if (!key)
		return;
	c->want_env = true;
	c->env_job_wide = req->job_wide;
	snprintf(c->env_format, sizeof(c->env_format), "%s", req->format);
	snprintf(c->env_first_node, sizeof(c->env_first_node), "%s", req->peers[0]);
	start_or_join(d, c, req, key, find(d, key));
}

void dchk_redecide(struct npf_daemon *d)
{
	struct dchk *e;
	bool any = false;

	LIST_FOREACH(e, &d->checks, link) {
		if (!e->result)
			continue;
		any = true;
		int r = dchk_decide(d, e);

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
	char *key = request_key(d, c, req);

	if (!key)
		return;
	dchk_expire(d);
	e = find(d, key);
	if (!e || !e->result)
		no_result(c, key, e);
	else
		dchk_check_reply(c, e, true);
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
	struct dchk *e = LIST_FIRST(&d->checks), *next;

	for (; e; e = next) {
		next = LIST_NEXT(e, link);
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
	struct dchk *e;

	dchk_expire(d);
	LIST_FOREACH(e, &d->checks, link) {
		if (!arr)
			break;
		json_t *o;
		size_t n_wait = 0;

		for (struct ctl_client *w = e->waiters; w; w = w->wait_next)
			n_wait++;
		if (e->result)
			o = json_pack("{s:s, s:b, s:I, s:s, s:s, s:I, s:I, s:I}", "peers", e->key,
				      "running", e->running, "waiters", (json_int_t)n_wait,
				      "verdict", npf_verdict_name(e->verdict), "summary", e->summary,
				      "finished_unix_ms", (json_int_t)e->done_unix_ms, "age_ms",
				      (json_int_t)dchk_age_ms(e), "duration_ms",
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
	while (!LIST_EMPTY(&d->checks))
		entry_free(d, LIST_FIRST(&d->checks));
}

void dchk_publish_metrics(struct npf_daemon *d)
{
	const struct dchk *last = NULL, *e;

	LIST_FOREACH(e, &d->checks, link)
		if (e->result && (!last || e->done_mono_us > last->done_mono_us))
			last = e;
	metrics_from_probe(d);
	metrics_publish(d->cfg.metrics.textfile_dir, last ? last->result : NULL,
			last && last->have_rec ? &last->rec : NULL, &d->metrics);
}
