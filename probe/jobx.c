// SPDX-License-Identifier: MIT
/* The participant's side of the job check's row exchange (docs/decision.md §10): send this
 * node's ROW to the job's coordinator over one authenticated control connection and wait
 * on it for the JOB_DECISION. The coordinator's side is server.c on_row() and
 * npf_probe_job_answer(); what is decided lives in the daemon (daemon/jobround.c), not
 * here: this module only carries bytes, and owns nothing but its submissions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "internal.h"
#include "log.h"

struct npf_job_submit {
	struct npf_probe_ctx *ctx;
	LIST_ENTRY(npf_job_submit) link;
	char coordinator[NPF_NAME_MAX];
	char job[NPF_WIRE_JOB_ID_LEN + 1];
	uint32_t n_nodes;	 /* the job's size: a decision of another size is none */
	json_t *row;		 /* owned: the encoded ROW, sent on each connection tried */
	struct resolver *res;	 /* owned while resolving */
	struct npf_addr addrs[PROBE_MAX_RESOLVED];
	size_t n_addrs, next_addr;
	struct fconn c;
	bool sent;		 /* the ROW went out on c: no other address is tried */
	sd_event_source *timer;	 /* the wait's deadline */
	npf_probe_job_done_fn done;
	void *ud;
	char last_err[96];
};

static void submit_free(struct npf_job_submit *s)
{
	if (!s)
		return;
	LIST_REMOVE(s, link);
	if (s->res)
		resolve_cancel(s->res);
	fconn_close(&s->c);
	s->timer = sd_event_source_disable_unref(s->timer);
	json_decref(s->row);
	free(s);
}

/* Runs done once and frees s. Returns 1 (for fconn callbacks: c is gone). */
static int finish(struct npf_job_submit *s, const struct npf_msg_job_decision *d, int err)
{
	npf_probe_job_done_fn done = s->done;
	void *ud = s->ud;

	if (err < 0)
		log_debug("job %.8s: no decision from %s: %s (%s)", s->job, s->coordinator,
			  strerror(-err), s->last_err[0] ? s->last_err : "-");
	submit_free(s);
	done(ud, d, err);
	return 1;
}

static const struct fconn_ops submit_ops;

/* Connects to the next resolved address. Returns 0, or 1 when it finished s. */
static int try_next(struct npf_job_submit *s)
{
	while (s->next_addr < s->n_addrs) {
		const struct npf_addr *a = &s->addrs[s->next_addr++];
		int r;

		fconn_close(&s->c);
		r = fconn_connect_ctl(&s->c, s->ctx, a, NPF_WIRE_MAX_PAYLOAD, &submit_ops, s);
		if (r == 0)
			return 0;
		snprintf(s->last_err, sizeof(s->last_err), "connect: %s", strerror(-r));
	}
	return finish(s, NULL, -EHOSTUNREACH);
}

static int on_connected(struct fconn *c, int err)
{
	struct npf_job_submit *s = c->owner;
	int r;

	if (err < 0) {
		snprintf(s->last_err, sizeof(s->last_err), "connect: %s", strerror(-err));
		return try_next(s) ? 1 : 0;
	}
	r = fconn_send(c, NPF_MSG_ROW, s->row);
	if (r < 0)
		return finish(s, NULL, r);
	s->sent = true;
	return 0;
}

static int on_frame(struct fconn *c, uint16_t type, json_t *payload)
{
	struct npf_job_submit *s = c->owner;
	struct npf_msg_job_decision d;
	struct npf_msg_error e;
	int r;

	if (type == NPF_MSG_ERROR) {
		if (npf_wire_error_from_json(payload, &e) == 0)
			snprintf(s->last_err, sizeof(s->last_err), "%s: %.60s",
				 npf_wire_err_name(e.code), e.message);
		return finish(s, NULL, e.code == NPF_WERR_BUSY ? -EBUSY : -EPROTO);
	}
	if (type != NPF_MSG_JOB_DECISION) {
		snprintf(s->last_err, sizeof(s->last_err), "unexpected %s",
			 npf_wire_type_name(type));
		return finish(s, NULL, -EPROTO);
	}
	r = npf_wire_job_decision_from_json(payload, &d);
	if (r < 0) {
		snprintf(s->last_err, sizeof(s->last_err), "malformed JOB_DECISION");
		return finish(s, NULL, r == -ENOMEM ? r : -EPROTO);
	}
	/* An answer for another job is no answer (a confused or hostile coordinator). */
	if (strcmp(d.job, s->job) != 0 || d.n_nodes != s->n_nodes) {
		npf_wire_job_decision_clear(&d);
		snprintf(s->last_err, sizeof(s->last_err), "JOB_DECISION for another job");
		return finish(s, NULL, -EPROTO);
	}
	/* Only the job's coordinator decides: with a cluster key, the node that proved the
	 * key on this connection (the one our row went out on) must be the hostlist's first
	 * node, not another key holder answering in its place. */
	if (fconn_auth_peer(c) && strcmp(fconn_auth_peer(c), s->coordinator) != 0) {
		snprintf(s->last_err, sizeof(s->last_err),
			 "JOB_DECISION from %.40s, not the coordinator", fconn_auth_peer(c));
		npf_wire_job_decision_clear(&d);
		return finish(s, NULL, -EPROTO);
	}
	finish(s, &d, 0);
	npf_wire_job_decision_clear(&d);
	return 1;
}

static int on_error(struct fconn *c, int err)
{
	struct npf_job_submit *s = c->owner;

	snprintf(s->last_err, sizeof(s->last_err), "%s",
		 err ? strerror(err < 0 ? -err : err) : "closed before answering");
	/* Before the ROW went out another address may work; after, the coordinator had it
	 * and a second copy would only race the first. */
	if (!s->sent)
		return try_next(s) ? 1 : 0;
	return finish(s, NULL, err == -EKEYREJECTED ? -EKEYREJECTED : -ECONNRESET);
}

static const struct fconn_ops submit_ops = {
	.connected = on_connected,
	.frame = on_frame,
	.error = on_error,
};

static void on_resolved(void *ud, size_t idx, int err, const struct npf_addr *addrs, size_t n)
{
	struct npf_job_submit *s = ud;

	(void)idx;
	resolve_cancel(s->res);
	s->res = NULL;
	if (err || n == 0) {
		snprintf(s->last_err, sizeof(s->last_err), "cannot resolve %s", s->coordinator);
		finish(s, NULL, -EHOSTUNREACH);
		return;
	}
	s->n_addrs = n < PROBE_MAX_RESOLVED ? n : PROBE_MAX_RESOLVED;
	memcpy(s->addrs, addrs, s->n_addrs * sizeof(*addrs));
	try_next(s);
}

static int on_deadline(sd_event_source *src, uint64_t usec, void *ud)
{
	(void)src;
	(void)usec;
	finish(ud, NULL, -ETIMEDOUT);
	return 0;
}

/* Ownership: on success *out belongs to the engine's list until done runs or
 * npf_probe_job_cancel(); the row is copied (encoded). */
int npf_probe_job_submit(struct npf_probe_ctx *ctx, const char *coordinator,
			 const struct npf_msg_row *row, uint32_t wait_ms, npf_probe_job_done_fn done,
			 void *ud, struct npf_job_submit **out)
{
	struct npf_job_submit *s;
	const char *names[1];
	int r;

	if (!ctx || !coordinator || !row || !done || !out || !coordinator[0] ||
	    strlen(coordinator) >= NPF_NAME_MAX)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->c.fd = -1;
	s->done = done;
	s->ud = ud;
	snprintf(s->coordinator, sizeof(s->coordinator), "%s", coordinator);
	memcpy(s->job, row->job, sizeof(s->job));
	s->n_nodes = row->n_nodes;
	LIST_INSERT_HEAD(&ctx->submits, s, link);
	s->row = npf_wire_row_to_json(row);
	if (!s->row) {
		submit_free(s);
		return -ENOMEM;
	}
	r = sd_event_add_time_relative(ctx->event, &s->timer, CLOCK_MONOTONIC,
				       (uint64_t)(wait_ms ? wait_ms : 1) * USEC_PER_MSEC, 1000,
				       on_deadline, s);
	if (r < 0) {
		submit_free(s);
		return r;
	}
	names[0] = s->coordinator;
	r = resolve_start(ctx->event, names, 1, on_resolved, s, &s->res);
	if (r < 0) {
		submit_free(s);
		return r;
	}
	*out = s;
	return 0;
}

void npf_probe_job_cancel(struct npf_job_submit *s)
{
	submit_free(s);
}

void jobx_cancel_all(struct npf_probe_ctx *ctx)
{
	struct npf_job_submit *s, *next;

	for (s = LIST_FIRST(&ctx->submits); s; s = next) {
		next = LIST_NEXT(s, link);
		finish(s, NULL, -ECANCELED);
	}
}

void npf_probe_set_job_handler(struct npf_probe_ctx *ctx, npf_probe_job_row_fn fn)
{
	if (ctx)
		ctx->job_row = fn;
}
