// SPDX-License-Identifier: MIT
/* Checks per peer set: start or join a probe run, cache the result with its time, persist the last one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "probe.h"
#include "verdict.h"

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
	json_t *json;  /* npf_check_to_json(result) */
	uint64_t done_mono_us, done_unix_ms;
	char summary[256];
	enum npf_verdict verdict;
};

static void drop_result(struct dchk *e)
{
	if (e->result) {
		npf_check_clear(e->result);
		free(e->result);
		e->result = NULL;
	}
	json_decref(e->json);
	e->json = NULL;
}

static void entry_free(struct npf_daemon *d, struct dchk *e)
{
	for (struct dchk **pp = &d->checks; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			d->n_checks--;
			break;
		}
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

static json_t *check_reply(const struct dchk *e, bool cached)
{
	json_t *r = npf_api_reply_new();

	if (r && (json_object_set(r, "check", e->json) < 0 ||
		  json_object_set_new(r, "cached", json_boolean(cached)) < 0 ||
		  json_object_set_new(r, "age_ms", json_integer((json_int_t)age_ms(e))) < 0)) {
		json_decref(r);
		return NULL;
	}
	return r;
}

/* tmp + rename so a reader never sees half a file. */
static void write_state(struct npf_daemon *d, const struct dchk *e)
{
	const char *dir = d->cfg.daemon.state_dir;
	char path[NPF_CONFIG_PATH_MAX + 32], tmp[NPF_CONFIG_PATH_MAX + 48];
	json_t *doc;
	int fd, r;

	if (!dir[0])
		return;
	snprintf(path, sizeof(path), "%s/last-check.json", dir);
	snprintf(tmp, sizeof(tmp), "%s/.last-check.json.%d", dir, (int)getpid());
	r = dmn_mkdir_p(dir, 0755);
	if (r < 0) {
		log_errc(r, "state dir %s (last check not saved)", dir);
		return;
	}
	doc = json_pack("{s:i, s:s, s:s, s:I, s:O}", "version", NPF_API_VERSION, "node",
			d->node_name, "peers", e->key, "written_unix_ms",
			(json_int_t)dmn_now_unix_ms(), "check", e->json);
	if (!doc)
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		log_warn("%s (last check not saved)", tmp);
		json_decref(doc);
		return;
	}
	r = json_dumpfd(doc, fd, JSON_INDENT(2)) == 0 && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
	if (close(fd) < 0)
		r = 0;
	if (!r || rename(tmp, path) < 0) {
		log_warn("%s (last check not saved)", path);
		unlink(tmp);
	}
	json_decref(doc);
}

static void summarise(struct dchk *e)
{
	struct npf_verdict_report rep;

	if (npf_verdict_compute(e->result, &rep) < 0) {
		snprintf(e->summary, sizeof(e->summary), "(out of memory)");
		e->verdict = NPF_VERDICT_UNKNOWN;
		return;
	}
	npf_verdict_format(&rep, e->result, e->summary, sizeof(e->summary));
	e->verdict = rep.verdict;
	npf_verdict_report_clear(&rep);
}

static void on_check_done(struct npf_check *result, int err, void *userdata)
{
	struct dchk *e = userdata;
	struct npf_daemon *d = e->d;
	struct ctl_client *w = e->waiters, *next;
	json_t *json = NULL;

	e->running = false;
	d->n_running--;
	e->waiters = NULL;
	if (err >= 0 && result) {
		json = npf_check_to_json(result);
		if (!json)
			err = -ENOMEM;
	}
	if (err < 0 || !result) {
		if (err != -ECANCELED)
			log_errc(err, "check of %s failed", e->key);
		for (; w; w = next) {
			next = w->wait_next;
			w->waiting = NULL;
			w->wait_next = NULL;
			ctl_reply(w, npf_api_reply_error(NPF_API_E_CHECK_FAILED,
							 "the probe engine failed: %s",
							 strerror(err < 0 ? -err : EIO)));
		}
		if (result) {
			npf_check_clear(result);
			free(result);
		}
		if (!e->result)
			entry_free(d, e);
		return;
	}
	drop_result(e);
	e->result = result;
	e->json = json;
	e->done_mono_us = dmn_now_mono_us();
	e->done_unix_ms = dmn_now_unix_ms();
	summarise(e);
	log_info("check %s: %s (%u ms)", e->key, e->summary, result->duration_ms);
	snprintf(d->last_summary, sizeof(d->last_summary), "%s", e->summary);
	write_state(d, e);
	for (; w; w = next) {
		next = w->wait_next;
		w->waiting = NULL;
		w->wait_next = NULL;
		ctl_reply(w, check_reply(e, false));
	}
	/* What was measured was answered; it is not kept as the node's current truth. */
	if (e->stale)
		drop_result(e);
	dmn_notify_status(d);
}

static void add_waiter(struct dchk *e, struct ctl_client *c)
{
	c->waiting = e;
	c->wait_next = e->waiters;
	e->waiters = c;
	ctl_wait(c, e->timeout_ms);
}

void dchk_check(struct npf_daemon *d, struct ctl_client *c, const struct npf_api_request *req)
{
	struct dchk *e;
	char *key = NULL;
	int r;

	if (!d->ready || !d->probe) {
		ctl_reply(c, npf_api_reply_error(NPF_API_E_NOT_READY, "no inventory yet"));
		return;
	}
	r = npf_api_peers_key((const char(*)[NPF_NAME_MAX])req->peers, req->n_peers, d->node_name,
			      &key);
	if (r < 0) {
		ctl_reply(c, r == -EINVAL ?
				     npf_api_reply_error(NPF_API_E_BAD_REQUEST,
							 "no peers besides this node (%s)",
							 d->node_name) :
				     NULL);
		return;
	}
	e = find(d, key);
	if (e && e->result && req->max_age_ms && !expired(d, e) && age_ms(e) <= req->max_age_ms) {
		free(key);
		ctl_reply(c, check_reply(e, true));
		return;
	}
	if (e && e->running) {
		/* Same peer set already in flight: share its result. */
		free(key);
		add_waiter(e, c);
		return;
	}
	if (d->n_running >= DMN_MAX_RUNNING) {
		free(key);
		ctl_reply(c, npf_api_reply_error(NPF_API_E_BUSY, "%u checks already running",
						 d->n_running));
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
	e->timeout_ms = req->timeout_ms ? req->timeout_ms : d->cfg.probe.timeout_ms;
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

json_t *dchk_verdict(struct npf_daemon *d, const struct npf_api_request *req)
{
	struct dchk *e;
	char *key = NULL;
	json_t *r;
	int err;

	err = npf_api_peers_key((const char(*)[NPF_NAME_MAX])req->peers, req->n_peers,
				d->node_name, &key);
	if (err < 0)
		return err == -EINVAL ? npf_api_reply_error(NPF_API_E_BAD_REQUEST,
							    "no peers besides this node (%s)",
							    d->node_name) :
					NULL;
	dchk_expire(d);
	e = find(d, key);
	if (!e || !e->result)
		r = npf_api_reply_error(NPF_API_E_NO_VERDICT,
					"no current result for %.120s%s", key,
					e && e->running ? " (a check is running)" : "");
	else
		r = check_reply(e, true);
	free(key);
	return r;
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
