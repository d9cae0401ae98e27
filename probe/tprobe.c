// SPDX-License-Identifier: MIT
/* The path probe scheduler: active slots and the queue, one probe of a directed path shared
 * by its consumers (followers, recent "ok"s), the consumer's deadline and done(). The
 * phases on the wire are tprobe_path.c's. */
#include "tprobe_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"

static void enqueue(struct tprobe *tp);

const struct tprobe_result *tprobe_result(const struct tprobe *tp)
{
	return &tp->res;
}

const struct npf_addr *tprobe_target(const struct tprobe *tp)
{
	return &tp->target;
}

static void unqueue(struct tprobe *tp)
{
	if (!tp->queued)
		return;
	TAILQ_REMOVE(&tp->ctx->queue, tp, qlink);
	tp->queued = false;
}

static void release_slot(struct tprobe *tp)
{
	if (!tp->active)
		return;
	tp->active = false;
	tp->ctx->n_active_tprobes--;
}

/* Leaves the leader's list of followers. */
static void unjoin(struct tprobe *tp)
{
	if (!tp->leader)
		return;
	LIST_REMOVE(tp, flink);
	tp->leader = NULL;
}

/* Takes an active slot and runs the probe's phases (tprobe_path.c). */
static void run(struct tprobe *tp)
{
	tp->active = true;
	tp->ctx->n_active_tprobes++;
	tp->ctx->n_tprobes_started++;
	tpath_begin(tp);
}

/* The leader ended. An answer is every follower's answer; a leader that ran out of
 * time (its consumer's deadline, not theirs) leaves each follower to probe on its own. */
static void release_followers(struct tprobe *tp)
{
	while (!LIST_EMPTY(&tp->followers)) {
		struct tprobe *f = LIST_FIRST(&tp->followers);

		LIST_REMOVE(f, flink);
		f->leader = NULL;
		if (!tp->res.by_deadline) {
			struct tprobe_result keep = f->res;

			f->res = tp->res;
			f->res.t_begin = keep.t_begin;
			f->res.shared = true;
			f->phase = TP_QUEUED;
			tpath_finish(f, tp->res.outcome, "%s", tp->res.detail);
			continue;
		}
		f->phase = TP_QUEUED;
		if (f->ctx->n_active_tprobes < PROBE_MAX_ACTIVE_TPROBES)
			run(f);
		else
			enqueue(f);
	}
}

void tprobe_kick_queue(struct npf_probe_ctx *ctx)
{
	/* ended() kicks the queue, and a probe started here may finish at once:
	 * the outer loop carries on instead of recursing once per queued probe. */
	if (ctx->kicking)
		return;
	ctx->kicking = true;
	while (!ctx->shutting_down && !TAILQ_EMPTY(&ctx->queue) &&
	       ctx->n_active_tprobes < PROBE_MAX_ACTIVE_TPROBES) {
		struct tprobe *tp = TAILQ_FIRST(&ctx->queue);

		unqueue(tp);
		if (npf_now(CLOCK_MONOTONIC) >= tp->deadline) {
			tpath_finish_by_phase(tp);
			continue;
		}
		run(tp);
	}
	ctx->kicking = false;
}

/* Keeps this probe's "ok" for consumers that ask for the same path a moment later
 * (tprobe_start_shared). The ring overwrites the oldest entry: memory stays bounded
 * whatever peers do, and a lost entry only costs a probe. */
static void remember_ok(struct tprobe *tp)
{
	struct npf_probe_ctx *ctx = tp->ctx;
	struct tprobe_recent *e;

	if (!ctx->recent) {
		ctx->recent = calloc(PROBE_RECENT, sizeof(*ctx->recent));
		if (!ctx->recent)
			return;
	}
	/* One entry per path: replace the older result of it if there is one. */
	e = NULL;
	for (uint32_t i = 0; i < PROBE_RECENT && !e; i++)
		if (ctx->recent[i].res.t_end && ctx->recent[i].expect == tp->expect &&
		    npf_addr_equal(&ctx->recent[i].target, &tp->target))
			e = &ctx->recent[i];
	if (!e) {
		e = &ctx->recent[ctx->recent_next];
		ctx->recent_next = (ctx->recent_next + 1) % PROBE_RECENT;
	}
	e->target = tp->target;
	e->expect = tp->expect;
	e->bulk = tp->asked_bulk;
	e->res = tp->res;
	e->res.shared = false;
}

static const struct tprobe_recent *find_recent(const struct npf_probe_ctx *ctx,
					       const struct npf_addr *target, uint64_t expect,
					       uint32_t bulk, uint64_t not_before, uint64_t now)
{
	if (!ctx->recent || !not_before)
		return NULL;
	for (uint32_t i = 0; i < PROBE_RECENT; i++) {
		const struct tprobe_recent *e = &ctx->recent[i];

		if (e->res.t_end && e->res.outcome == NPF_OUT_OK && e->expect == expect &&
		    e->res.t_begin >= not_before && e->res.t_end + PROBE_RECENT_USEC > now &&
		    e->bulk >= bulk && npf_addr_equal(&e->target, target))
			return e;
	}
	return NULL;
}

/* Runs done() of every ended probe, oldest first (a done() may free other probes: they
 * leave the queue in tprobe_free). */
static int done_cb(sd_event_source *s, void *ud)
{
	struct npf_probe_ctx *ctx = ud;
	struct tprobe *tp;

	(void)s;
	while ((tp = TAILQ_FIRST(&ctx->doneq))) {
		TAILQ_REMOVE(&ctx->doneq, tp, dlink);
		tp->done_queued = false;
		tp->done(tp, tp->ud);
	}
	return 0;
}

/* done() runs from the loop, never from inside an I/O callback of the probe. */
static void schedule_done(struct tprobe *tp)
{
	struct npf_probe_ctx *ctx = tp->ctx;

	if (!ctx->done_defer &&
	    sd_event_add_defer(ctx->event, &ctx->done_defer, done_cb, ctx) < 0) {
		/* No source to run it from: the probe's own timer, due now, runs done(). */
		if (tp->timer) {
			(void)sd_event_source_set_time(tp->timer, 1);
			(void)sd_event_source_set_enabled(tp->timer, SD_EVENT_ONESHOT);
		}
		return;
	}
	if (tp->timer)
		(void)sd_event_source_set_enabled(tp->timer, SD_EVENT_OFF);
	if (!tp->done_queued) {
		TAILQ_INSERT_TAIL(&ctx->doneq, tp, dlink);
		tp->done_queued = true;
	}
	(void)sd_event_source_set_enabled(ctx->done_defer, SD_EVENT_ONESHOT);
}

static void unschedule_done(struct tprobe *tp)
{
	if (!tp->done_queued)
		return;
	TAILQ_REMOVE(&tp->ctx->doneq, tp, dlink);
	tp->done_queued = false;
}

static int timer_cb(sd_event_source *s, uint64_t usec, void *ud)
{
	struct tprobe *tp = ud;

	(void)s;
	(void)usec;
	/* The deadline: the phase's outcome, and ended() queues done(). A probe that ended
	 * already is here only when no defer source could be made: done() now. */
	if (tp->phase != TP_DONE) {
		tpath_finish_by_phase(tp);
		return 0;
	}
	(void)sd_event_source_set_enabled(tp->timer, SD_EVENT_OFF);
	tp->done(tp, tp->ud);
	return 0;
}

/* tp->ended: the probe finished (tpath_finish). Frees its slot and queue place, has done()
 * run from the loop, answers or releases its followers, starts queued probes, and keeps an
 * "ok" of its own for consumers that ask for the same path a moment later. */
static void ended(struct tprobe *tp)
{
	unqueue(tp);
	release_slot(tp);
	unjoin(tp);
	schedule_done(tp);
	release_followers(tp);
	tprobe_kick_queue(tp->ctx);
	if (tp->remember)
		remember_ok(tp);
}

static void enqueue(struct tprobe *tp)
{
	tp->queued = true;
	TAILQ_INSERT_TAIL(&tp->ctx->queue, tp, qlink);
}

/* A running probe of the same directed path, to join (never a follower itself). */
static struct tprobe *find_leader(struct npf_probe_ctx *ctx, const struct npf_addr *target,
				  uint64_t expect)
{
	for (struct tprobe *l = LIST_FIRST(&ctx->tprobes); l; l = LIST_NEXT(l, llink))
		if (l->phase != TP_DONE && l->phase != TP_JOINED && l->expect == expect &&
		    npf_addr_equal(&l->target, target))
			return l;
	return NULL;
}

void npf_probe_get_stats(const struct npf_probe_ctx *ctx, struct npf_probe_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->started = ctx->n_tprobes_started;
	out->joined = ctx->n_tprobes_joined;
	out->n_keys = ctx->keys.n;
	for (size_t i = 0; i < ctx->keys.n && i < NPF_AUTH_MAX_KEYS; i++) {
		memcpy(out->key_ids[i], ctx->keys.k[i].id, NPF_AUTH_ID_LEN);
		out->key_sessions[i] = ctx->n_key_sessions[i];
	}
	out->data_impostors = ctx->n_data_impostors;
	out->ctl_accepted = ctx->n_ctl_accepted;
	out->data_won = ctx->n_data_won;
}

int tprobe_start(struct npf_probe_ctx *ctx, const struct npf_addr *target, uint64_t expect,
		 uint32_t bulk, uint64_t deadline_usec, tprobe_done_fn done, void *ud,
		 struct tprobe **out)
{
	return tprobe_start_for(ctx, TPROBE_FOR_PEER, target, expect, bulk, deadline_usec, done, ud,
				out);
}

int tprobe_start_for(struct npf_probe_ctx *ctx, enum tprobe_origin origin,
		     const struct npf_addr *target, uint64_t expect, uint32_t bulk,
		     uint64_t deadline_usec, tprobe_done_fn done, void *ud, struct tprobe **out)
{
	return tprobe_start_shared(ctx, origin, target, expect, bulk, 0, deadline_usec, done, ud,
				   out);
}

int tprobe_start_shared(struct npf_probe_ctx *ctx, enum tprobe_origin origin,
			const struct npf_addr *target, uint64_t expect, uint32_t bulk,
			uint64_t not_before_usec, uint64_t deadline_usec, tprobe_done_fn done,
			void *ud, struct tprobe **out)
{
	return tprobe_start_via(ctx, origin, target, expect, bulk, not_before_usec,
				deadline_usec, NULL, done, ud, out);
}

int tprobe_start_via(struct npf_probe_ctx *ctx, enum tprobe_origin origin,
		     const struct npf_addr *target, uint64_t expect, uint32_t bulk,
		     uint64_t not_before_usec, uint64_t deadline_usec, const struct tprobe_via *via,
		     tprobe_done_fn done, void *ud, struct tprobe **out)
{
	struct tprobe *tp = calloc(1, sizeof(*tp));
	struct tprobe *leader;
	const struct tprobe_recent *rec;
	uint64_t now = npf_now(CLOCK_MONOTONIC);
	int r;

	if (!tp)
		return -ENOMEM;
	tp->origin = origin;
	tp->res.t_begin = now;
	tp->ctx = ctx;
	tp->target = *target;
	tp->expect = expect;
	tp->bulk = bulk;
	tp->asked_bulk = bulk;
	tp->deadline = deadline_usec;
	tp->done = done;
	tp->ud = ud;
	tp->ctl.fd = tp->data.fd = -1;
	tp->phase = TP_QUEUED;
	tp->ended = ended;
	if (via && via->port) {
		tp->given = true;
		tp->dport = *via->port;
		tp->t_ctl = via->t_asked;
	} else if (via && via->sess) {
		tp->sess = via->sess;
	} else {
		tp->legacy = true;
	}
	r = sd_event_add_time(ctx->event, &tp->timer, CLOCK_MONOTONIC, deadline_usec, 1000,
			      timer_cb, tp);
	if (r < 0) {
		free(tp);
		return r;
	}
	/* Looked up before tp joins ctx->tprobes: a probe never leads itself. Only a probe
	 * running now is shared, never a finished one: a result from before a change (a
	 * firewall rule, a repair) must not answer a check that began after it. */
	leader = find_leader(ctx, target, expect);
	rec = leader ? NULL : find_recent(ctx, target, expect, bulk, not_before_usec, now);
	LIST_INSERT_HEAD(&ctx->tprobes, tp, llink);
	if (rec) {
		/* Already proven during the consumer's check: done runs from the loop with
		 * that answer (its own times, so sibling comparisons stay honest). */
		ctx->n_tprobes_joined++;
		tp->res = rec->res;
		tp->res.shared = true;
		tp->phase = TP_DONE;
		schedule_done(tp);
	} else if (leader) {
		ctx->n_tprobes_joined++;
		tp->phase = TP_JOINED;
		tp->leader = leader;
		LIST_INSERT_HEAD(&leader->followers, tp, flink);
	} else if (ctx->n_active_tprobes < PROBE_MAX_ACTIVE_TPROBES) {
		run(tp);
	} else {
		enqueue(tp);
	}
	*out = tp;
	return 0;
}

void tprobe_abort(struct tprobe *tp)
{
	if (!tp)
		return;
	if (tp->phase != TP_DONE)
		tpath_finish_by_phase(tp);
	if (tp->timer)
		(void)sd_event_source_set_enabled(tp->timer, SD_EVENT_OFF);
	unschedule_done(tp);
}

void tprobe_free(struct tprobe *tp)
{
	struct npf_probe_ctx *ctx;

	if (!tp)
		return;
	ctx = tp->ctx;
	tp->timer = sd_event_source_disable_unref(tp->timer);
	unschedule_done(tp);
	if (tp->phase != TP_DONE) {
		tp->phase = TP_DONE;
		tp->res.by_deadline = true; /* followers probe on their own */
		fconn_close(&tp->ctl);
		fconn_close(&tp->data);
		unqueue(tp);
		release_slot(tp);
		unjoin(tp);
		release_followers(tp);
		tprobe_kick_queue(ctx);
	}
	LIST_REMOVE(tp, llink);
	free(tp->rxbuf);
	free(tp);
}
