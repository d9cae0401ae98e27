// SPDX-License-Identifier: MIT
/* One check: resolve peers, HELLO each for its candidates, probe every candidate
 * forward and ask the peer to probe ours back, all against one absolute deadline. */
#include "internal.h"

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "candidates.h"
#include "links.h"
#include "loadrule.h"
#include "log.h"
#include "plan.h"

#define CHECK_MIN_TIMEOUT_MS 200u
#define CHECK_MAX_TIMEOUT_MS 600000u
#define CHECK_DEFAULT_TIMEOUT_MS 3000u
#define CHECK_MAX_ATTEMPTS 2		     /* a load-shaped failure is tried once more */
#define CHECK_RETRY_MIN_USEC (100ull * 1000) /* not worth a retry with less time left */
#define CHECK_MAX_SAMPLES 512		     /* loop lateness samples kept per check */

/* One forward path (one peer candidate) across its attempts. */
struct fwd_slot {
	struct tprobe *tp;	  /* running attempt, NULL when none */
	struct tprobe_result res; /* the last attempt's result, valid when have */
	bool have, recorded;
	uint8_t attempts;
};

struct loop_sample {
	uint64_t sched; /* when the tick was due */
	uint32_t late_us;
};

enum pp_state {
	PP_IDLE = 0, /* outside the plan */
	PP_RESOLVING,
	PP_CONNECTING,
	PP_HELLO,
	PP_PROBING,
	PP_DONE,
};

struct ppeer {
	struct pcheck *pc;
	int idx; /* into res->nodes */
	enum pp_state st;
	struct npf_addr addrs[PROBE_MAX_RESOLVED];
	size_t n_addrs, next_addr;
	uint8_t disc_round;  /* 0, or 1 once every address was tried and timed out */
	bool disc_timed_out; /* the last attempt ended by its timer, not by an answer */
	struct fconn c;
	sd_event_source *timer; /* per-attempt connect/HELLO deadline */
	char last_err[80];
	uint64_t t_disc, t_rev; /* discovery attempt started / reverse request sent */
	struct fwd_slot *fwd;
	size_t n_fwd, fwd_pending;
	bool rev_wait;
	uint8_t rev_attempts;
	uint32_t rev_id;
	size_t n_rev;
	struct npf_addr rev_addr[NPF_WIRE_MAX_TARGETS];
	char rev_if[NPF_WIRE_MAX_TARGETS][IFNAMSIZ];
};

struct pcheck {
	struct npf_probe_ctx *ctx;
	npf_probe_check_cb cb;
	void *ud;
	uint64_t t_start, disc_deadline, probe_deadline, hard_deadline;
	bool past_disc;
	struct npf_check *res;
	struct ppeer *peers; /* peers[i] describes res->nodes[i + 1] */
	size_t n_peers;
	size_t *resolve_map; /* resolver index -> peers index */
	struct resolver *resolver;
	sd_event_source *timer, *defer;
	struct npf_path *paths;
	size_t n_paths, cap_paths;
	sd_event_source *tick; /* loop lateness sampler */
	uint64_t tick_usec;
	struct loop_sample *samples;
	size_t n_samples;
	LIST_ENTRY(pcheck) link; /* ctx->checks */
};

static const struct fconn_ops disc_ops;

__attribute__((format(printf, 3, 4))) static void fmt(char *buf, size_t sz, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, sz, f, ap);
	va_end(ap);
}

static struct npf_node *node_of(struct ppeer *pp)
{
	return &pp->pc->res->nodes[pp->idx];
}

static struct npf_path *add_path(struct pcheck *pc)
{
	if (pc->n_paths == pc->cap_paths) {
		size_t ncap = pc->cap_paths ? pc->cap_paths * 2 : 32;
		struct npf_path *n = realloc(pc->paths, ncap * sizeof(*n));

		if (!n)
			return NULL;
		pc->paths = n;
		pc->cap_paths = ncap;
	}
	memset(&pc->paths[pc->n_paths], 0, sizeof(pc->paths[0]));
	return &pc->paths[pc->n_paths++];
}

static void schedule_finish(struct pcheck *pc)
{
	(void)sd_event_source_set_enabled(pc->defer, SD_EVENT_ONESHOT);
}

static void maybe_finish(struct pcheck *pc)
{
	for (size_t i = 0; i < pc->n_peers; i++)
		if (pc->peers[i].st != PP_DONE && pc->peers[i].st != PP_IDLE)
			return;
	schedule_finish(pc);
}

static void peer_close(struct ppeer *pp)
{
	fconn_close(&pp->c);
	pp->timer = sd_event_source_disable_unref(pp->timer);
}

static void peer_done(struct ppeer *pp)
{
	peer_close(pp);
	pp->st = PP_DONE;
	maybe_finish(pp->pc);
}

__attribute__((format(printf, 2, 3))) static void peer_fail(struct ppeer *pp, const char *f, ...)
{
	struct npf_node *n = node_of(pp);
	va_list ap;

	va_start(ap, f);
	vsnprintf(n->error, sizeof(n->error), f, ap);
	va_end(ap);
	n->available = false;
	peer_done(pp);
}

static void maybe_peer_done(struct ppeer *pp)
{
	if (pp->st == PP_PROBING && pp->fwd_pending == 0 && !pp->rev_wait)
		peer_done(pp);
}

/* ---- reverse results ---- */

static void rev_fill_missing(struct ppeer *pp, enum npf_outcome o, const char *detail)
{
	for (size_t i = 0; i < pp->n_rev; i++) {
		struct npf_path *ph = add_path(pp->pc);

		if (!ph)
			return;
		ph->peer = pp->idx;
		ph->dir = NPF_DIR_REVERSE;
		snprintf(ph->local_if, sizeof(ph->local_if), "%s", pp->rev_if[i]);
		ph->local_addr = pp->rev_addr[i];
		ph->outcome = o;
		fmt(ph->detail, sizeof(ph->detail), "%s", detail);
	}
	pp->rev_wait = false;
}

static uint32_t late_during(const struct pcheck *pc, uint64_t t0, uint64_t t1);

/* The peer probed every target of one request at once: a failure there is discriminating
 * only when another target of the same batch worked, and not when the peer itself was
 * slow to answer us (its HELLO or its result took a quarter of the window). */
static const char *rev_inconclusive(const struct ppeer *pp, const struct npf_msg_reverse_result *rr,
				    size_t k)
{
	struct npf_attempt_facts f = {0};
	const struct npf_node *n = &pp->pc->res->nodes[pp->idx];
	const char *why = NULL;

	f.outcome = rr->results[k].outcome;
	f.dir = NPF_DIR_REVERSE;
	f.window_us =
	    (uint32_t)(pp->pc->probe_deadline > pp->t_rev ? pp->pc->probe_deadline - pp->t_rev : 0);
	f.loop_late_us = n->hello_rtt_us;
	/* The echo of a reverse bulk runs in our loop: our own lateness meanwhile counts too. */
	{
		uint32_t ours = late_during(pp->pc, pp->t_rev, npf_now(CLOCK_MONOTONIC));

		if (ours > f.loop_late_us)
			f.loop_late_us = ours;
		/* Load measured on both ends (our loop, the peer's discovery answer). */
		f.idle = npf_measured_idle(ours, n->hello_rtt_us);
	}
	/* A second reverse result: the peer's daemon answered us twice meanwhile. */
	f.final_attempt = pp->rev_attempts >= CHECK_MAX_ATTEMPTS;
	f.peer_answered = f.final_attempt;
	npf_attempt_facts_from_evidence(&f, &rr->results[k].ev);
	for (size_t j = 0; j < rr->n_results && !f.sibling_ok; j++)
		f.sibling_ok = j != k && rr->results[j].outcome == NPF_OUT_OK;
	if (npf_attempt_judge(&f, &why) == NPF_JUDGE_KEEP)
		return NULL;
	return npf_loop_was_late(f.loop_late_us, f.window_us) ? "the peer answered late"
							      : (why ? why : "load-shaped");
}

static int rev_send(struct ppeer *pp, uint64_t deadline);

/* Records a reverse result. Load-shaped failures are asked for once more while the budget
 * allows (the connection stays open for it). Returns true when a retry is on its way. */
static bool rev_record(struct ppeer *pp, const struct npf_msg_reverse_result *rr)
{
	uint64_t now = npf_now(CLOCK_MONOTONIC);
	bool may_retry = pp->rev_attempts < CHECK_MAX_ATTEMPTS &&
			 pp->pc->probe_deadline > now + CHECK_RETRY_MIN_USEC;
	size_t n_retry = 0;

	if (pp->t_rev && now > pp->t_rev)
		node_of(pp)->rev_ms = (uint32_t)((now - pp->t_rev) / USEC_PER_MSEC);
	for (size_t i = 0; i < pp->n_rev; i++) {
		const struct npf_rev_result *r = NULL;
		const char *inc = NULL;
		struct npf_path *ph;
		bool retry = false;

		for (size_t j = 0; j < rr->n_results; j++) {
			if (npf_addr_equal(&rr->results[j].addr, &pp->rev_addr[i])) {
				r = &rr->results[j];
				inc = rev_inconclusive(pp, rr, j);
			}
		}
		retry = r && inc && may_retry;
		if (retry) {
			/* Kept, compacted, for the second request. */
			pp->rev_addr[n_retry] = pp->rev_addr[i];
			memmove(pp->rev_if[n_retry], pp->rev_if[i], IFNAMSIZ);
			n_retry++;
			pp->pc->res->n_retried++;
			continue;
		}
		ph = add_path(pp->pc);
		if (!ph)
			break;
		ph->peer = pp->idx;
		ph->dir = NPF_DIR_REVERSE;
		snprintf(ph->local_if, sizeof(ph->local_if), "%s", pp->rev_if[i]);
		ph->local_addr = pp->rev_addr[i];
		if (!r) {
			ph->outcome = NPF_OUT_NOT_PROBED;
			fmt(ph->detail, sizeof(ph->detail), "missing from %s's reverse result",
			    node_of(pp)->name);
			continue;
		}
		ph->outcome = r->outcome;
		ph->rtt_us = r->rtt_us;
		snprintf(ph->peer_if, sizeof(ph->peer_if), "%s", r->egress);
		fmt(ph->detail, sizeof(ph->detail), "%s", r->detail);
		if (inc) {
			ph->outcome = NPF_OUT_NOT_PROBED;
			fmt(ph->detail, sizeof(ph->detail), "inconclusive %s (%s): %s",
			    npf_outcome_name(r->outcome), inc, r->detail);
			pp->pc->res->n_inconclusive++;
			node_of(pp)->n_inconclusive++;
		}
	}
	pp->n_rev = n_retry;
	if (n_retry && rev_send(pp, pp->pc->probe_deadline) == 0)
		return true;
	if (n_retry)
		rev_fill_missing(pp, NPF_OUT_NOT_PROBED,
				 "could not ask for the reverse probes again");
	pp->rev_wait = false;
	return false;
}

/* ---- forward probes ---- */

/* ---- load: our loop's lateness ---- */

static int tick_cb(sd_event_source *s, uint64_t usec, void *ud)
{
	struct pcheck *pc = ud;
	uint64_t now = npf_now(CLOCK_MONOTONIC);
	uint64_t late = now > usec ? now - usec : 0;

	if (late > UINT32_MAX)
		late = UINT32_MAX;
	pc->res->loop_samples++;
	if (late > pc->res->loop_late_max_us)
		pc->res->loop_late_max_us = (uint32_t)late;
	if (late >= 50 * USEC_PER_MSEC)
		pc->res->loop_late_50ms++;
	if (pc->n_samples < CHECK_MAX_SAMPLES) {
		pc->samples[pc->n_samples].sched = usec;
		pc->samples[pc->n_samples++].late_us = (uint32_t)late;
	}
	(void)sd_event_source_set_time(s, now + pc->tick_usec);
	return 0;
}

/* Our loop's worst lateness while [t0, t1] ran: a tick due in the window that fired
 * late, or one due before it that was still waiting when the window began. */
static uint32_t late_during(const struct pcheck *pc, uint64_t t0, uint64_t t1)
{
	uint32_t m = 0;

	for (size_t i = 0; i < pc->n_samples; i++) {
		const struct loop_sample *x = &pc->samples[i];

		if (x->sched <= t1 && x->sched + x->late_us >= t0 && x->late_us > m)
			m = x->late_us;
	}
	return m;
}

/* ---- forward probes ---- */

static void fwd_record(struct ppeer *pp, size_t i, const char *inconclusive)
{
	const struct npf_candidate *cand = &node_of(pp)->cands[i];
	struct fwd_slot *sl = &pp->fwd[i];
	const struct tprobe_result *r = &sl->res;
	struct npf_path *ph = add_path(pp->pc);

	sl->recorded = true;
	if (r->shared)
		pp->pc->res->n_shared++;
	if (!ph)
		return;
	ph->peer = pp->idx;
	ph->dir = NPF_DIR_FORWARD;
	snprintf(ph->local_if, sizeof(ph->local_if), "%s", r->egress);
	snprintf(ph->peer_if, sizeof(ph->peer_if), "%s", cand->ifname);
	ph->peer_addr = cand->addr;
	ph->rtt_us = r->rtt_us;
	if (inconclusive) {
		/* Load-shaped: missing evidence, never a failure (docs/decision.md). */
		ph->outcome = NPF_OUT_NOT_PROBED;
		fmt(ph->detail, sizeof(ph->detail), "inconclusive %s after %u tries (%s): %s",
		    npf_outcome_name(r->outcome), sl->attempts, inconclusive, r->detail);
		pp->pc->res->n_inconclusive++;
		node_of(pp)->n_inconclusive++;
		return;
	}
	ph->outcome = r->outcome;
	fmt(ph->detail, sizeof(ph->detail), "%s", r->detail);
}

static uint64_t attempt_deadline(const struct pcheck *pc, unsigned int attempt)
{
	uint64_t now = npf_now(CLOCK_MONOTONIC);

	if (attempt > 1 || pc->probe_deadline <= now)
		return pc->probe_deadline;
	/* The first try leaves room for a second one if load makes it inconclusive. */
	return now + (pc->probe_deadline - now) * 3 / 5;
}

static void fwd_done(struct tprobe *tp, void *ud);

static int fwd_attempt(struct ppeer *pp, size_t i)
{
	struct pcheck *pc = pp->pc;
	struct fwd_slot *sl = &pp->fwd[i];
	struct npf_node *n = node_of(pp);
	int r;

	sl->attempts++;
	sl->have = false;
	/* A first attempt may take an "ok" of this path that a peer's reverse request had
	 * us prove since this check began; a retry probes afresh. */
	r = tprobe_start_shared(pc->ctx, TPROBE_FOR_CHECK, &n->cands[i].addr, n->instance,
				pc->ctx->bulk_bytes, sl->attempts == 1 ? pc->t_start : 0,
				attempt_deadline(pc, sl->attempts), fwd_done, pp, &sl->tp);
	if (r < 0)
		return r;
	pp->fwd_pending++;
	return 0;
}

/* Judges every attempt of this peer that ended (all at once, so an attempt that timed
 * out can be compared with its siblings that were still running), records what is
 * conclusive and tries load-shaped ones again while the budget allows (final: never). */
static void fwd_judge(struct ppeer *pp, bool final)
{
	struct pcheck *pc = pp->pc;
	uint64_t now = npf_now(CLOCK_MONOTONIC);
	bool retry_ok = !final && pc->probe_deadline > now + CHECK_RETRY_MIN_USEC;
	const char *why[PROBE_MAX_FWD_PER_PEER];
	bool inc[PROBE_MAX_FWD_PER_PEER];

	for (size_t i = 0; i < pp->n_fwd; i++) {
		const struct fwd_slot *sl = &pp->fwd[i];
		struct npf_attempt_facts f = {0};
		uint64_t t1;

		inc[i] = false;
		why[i] = NULL;
		if (!sl->have || sl->recorded)
			continue;
		t1 = sl->res.t_end ? sl->res.t_end : now;
		f.outcome = sl->res.outcome;
		f.dir = NPF_DIR_FORWARD;
		f.ctl_answered = sl->res.ctl_answered;
		f.echoed = sl->res.echoed;
		f.echo_known = true;
		f.window_us = (uint32_t)(t1 > sl->res.t_begin ? t1 - sl->res.t_begin : 0);
		f.loop_late_us = late_during(pc, sl->res.t_begin, t1);
		f.idle = npf_measured_idle(f.loop_late_us, node_of(pp)->hello_rtt_us);
		npf_attempt_facts_from_evidence(&f, &sl->res.ev);
		f.echoed = sl->res.echoed;
		for (size_t j = 0; j < pp->n_fwd; j++) {
			const struct fwd_slot *o = &pp->fwd[j];

			if (j == i || !o->have)
				continue;
			f.sibling_ok |= o->res.outcome == NPF_OUT_OK && o->res.t_begin <= t1 &&
					o->res.t_end >= sl->res.t_begin;
			f.peer_answered |= o->res.ctl_answered;
		}
		f.final_attempt = sl->attempts >= CHECK_MAX_ATTEMPTS;
		if (npf_attempt_judge(&f, &why[i]) == NPF_JUDGE_INCONCLUSIVE) {
			inc[i] = true;
			if (npf_loop_was_late(f.loop_late_us, f.window_us))
				why[i] = "our loop was late";
		}
	}
	for (size_t i = 0; i < pp->n_fwd; i++) {
		struct fwd_slot *sl = &pp->fwd[i];

		if (!sl->have || sl->recorded)
			continue;
		if (!inc[i]) {
			fwd_record(pp, i, NULL);
			continue;
		}
		if (retry_ok && sl->attempts < CHECK_MAX_ATTEMPTS) {
			pc->res->n_retried++;
			if (fwd_attempt(pp, i) == 0)
				continue;
			sl->have = true;
		}
		fwd_record(pp, i, why[i] ? why[i] : "load-shaped");
	}
}

static void fwd_done(struct tprobe *tp, void *ud)
{
	struct ppeer *pp = ud;

	for (size_t i = 0; i < pp->n_fwd; i++) {
		struct fwd_slot *sl = &pp->fwd[i];

		if (sl->tp != tp)
			continue;
		sl->res = *tprobe_result(tp);
		sl->have = true;
		tprobe_free(tp);
		sl->tp = NULL;
		pp->fwd_pending--;
		break;
	}
	if (pp->fwd_pending == 0)
		fwd_judge(pp, false);
	maybe_peer_done(pp);
}

/* Asks the peer to probe pp->rev_addr[0..n_rev) back, by deadline. Returns 0 or -errno. */
static int rev_send(struct ppeer *pp, uint64_t deadline)
{
	struct npf_probe_ctx *ctx = pp->pc->ctx;
	struct npf_msg_reverse_req *rq;
	uint64_t now = npf_now(CLOCK_MONOTONIC);
	json_t *j;
	int r;

	if (deadline <= now + USEC_PER_MSEC)
		return -ETIME;
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return -ENOMEM;
	rq->id = pp->rev_id = ++ctx->next_rev_id;
	rq->timeout_ms = (uint32_t)((deadline - now) / USEC_PER_MSEC);
	if (rq->timeout_ms > NPF_WIRE_MAX_TIMEOUT_MS)
		rq->timeout_ms = NPF_WIRE_MAX_TIMEOUT_MS;
	/* A ceiling: the peer sizes each probe from its egress MTU. */
	rq->bytes = ctx->bulk_bytes;
	pp->t_rev = now;
	pp->rev_attempts++;
	memcpy(rq->targets, pp->rev_addr, pp->n_rev * sizeof(pp->rev_addr[0]));
	rq->n_targets = pp->n_rev;
	j = npf_wire_reverse_req_to_json(rq);
	r = j ? fconn_send(&pp->c, NPF_MSG_REVERSE_REQ, j) : -ENOMEM;
	json_decref(j);
	free(rq);
	return r < 0 ? r : 0;
}

static void start_probes(struct ppeer *pp)
{
	struct pcheck *pc = pp->pc;
	struct npf_node *n = node_of(pp);
	const struct npf_node *self = &pc->res->nodes[0];
	uint64_t now = npf_now(CLOCK_MONOTONIC);

	pp->st = PP_PROBING;
	pp->fwd = calloc(n->n_cands + 1, sizeof(*pp->fwd));
	if (!pp->fwd) {
		peer_fail(pp, "out of memory");
		return;
	}
	/* fwd[] is indexed like cands[]; slots of probes not started stay NULL. */
	pp->n_fwd = n->n_cands < PROBE_MAX_FWD_PER_PEER ? n->n_cands : PROBE_MAX_FWD_PER_PEER;
	for (size_t i = 0; i < n->n_cands; i++) {
		/* One peer's announcement must not take every outbound slot. */
		if (i >= PROBE_MAX_FWD_PER_PEER || fwd_attempt(pp, i) < 0) {
			struct npf_path *ph = add_path(pc);

			if (!ph)
				continue;
			ph->peer = pp->idx;
			ph->dir = NPF_DIR_FORWARD;
			snprintf(ph->peer_if, sizeof(ph->peer_if), "%s", n->cands[i].ifname);
			ph->peer_addr = n->cands[i].addr;
			ph->outcome = NPF_OUT_NOT_PROBED;
			if (i >= PROBE_MAX_FWD_PER_PEER)
				fmt(ph->detail, sizeof(ph->detail),
				    "%s announced more than %d addresses", n->name,
				    PROBE_MAX_FWD_PER_PEER);
			else
				fmt(ph->detail, sizeof(ph->detail), "could not start the probe");
			if (i < pp->n_fwd)
				pp->fwd[i].recorded = true;
			continue;
		}
	}
	/* Reverse: the peer probes each of our candidate addresses and must find us. */
	pp->n_rev = 0;
	for (size_t i = 0; i < self->n_cands && pp->n_rev < NPF_WIRE_MAX_TARGETS; i++) {
		pp->rev_addr[pp->n_rev] = self->cands[i].addr;
		snprintf(pp->rev_if[pp->n_rev], IFNAMSIZ, "%s", self->cands[i].ifname);
		pp->n_rev++;
	}
	if (pp->n_rev && pc->probe_deadline > now + USEC_PER_MSEC) {
		pp->rev_wait = true;
		if (rev_send(pp, attempt_deadline(pc, 1)) < 0)
			rev_fill_missing(pp, NPF_OUT_NOT_PROBED,
					 "could not send the reverse request");
	} else if (pp->n_rev) {
		pp->rev_wait = true;
		rev_fill_missing(pp, NPF_OUT_NOT_PROBED, "no time left for reverse probes");
	}
	maybe_peer_done(pp);
}

/* ---- discovery: connect to the peer's daemon and HELLO ---- */

static void try_next(struct ppeer *pp);

static int attempt_timer(sd_event_source *s, uint64_t usec, void *ud)
{
	struct ppeer *pp = ud;

	(void)s;
	(void)usec;
	if (pp->st != PP_CONNECTING && pp->st != PP_HELLO)
		return 0;
	fmt(pp->last_err, sizeof(pp->last_err), "%s",
	    pp->st == PP_CONNECTING ? "connect timed out" : "no HELLO reply");
	pp->disc_timed_out = true;
	try_next(pp);
	return 0;
}

static void try_next(struct ppeer *pp)
{
	struct pcheck *pc = pp->pc;
	struct npf_node *n = node_of(pp);

	peer_close(pp);
	for (;;) {
		const struct npf_addr *a;
		uint64_t now = npf_now(CLOCK_MONOTONIC), slice;
		size_t left;
		char txt[INET6_ADDRSTRLEN];
		bool timed_out = pp->disc_timed_out;
		int r;

		pp->disc_timed_out = false;
		if (pp->next_addr >= pp->n_addrs) {
			/* Silence is what a starved peer produces too: one more round while
			 * the window allows; an answer (refused, unreachable) is final. */
			if (pp->disc_round || !timed_out || !pp->n_addrs ||
			    pc->disc_deadline < now + CHECK_RETRY_MIN_USEC)
				break;
			pp->disc_round = 1;
			pp->next_addr = 0;
			pc->res->n_retried++;
		}
		a = &pp->addrs[pp->next_addr++];
		left = pp->n_addrs - pp->next_addr + 1;
		if (now >= pc->disc_deadline)
			break;
		r = fconn_connect_ctl(&pp->c, pc->ctx, a, NPF_WIRE_MAX_PAYLOAD, &disc_ops, pp);
		if (r < 0) {
			fmt(pp->last_err, sizeof(pp->last_err), "%s: %s",
			    npf_addr_str(a, txt, sizeof(txt)), strerror(-r));
			continue;
		}
		(void)sd_event_source_set_priority(pp->c.io, PROBE_PRIO_CONTROL);
		/* Share what is left of the discovery window among the addresses left; the
		 * first round leaves 2/5 of it for a second one. */
		slice = (pc->disc_deadline - now) / left;
		if (!pp->disc_round)
			slice = slice * 3 / 5;
		pp->t_disc = now;
		if (sd_event_add_time(pc->ctx->event, &pp->timer, CLOCK_MONOTONIC, now + slice,
				      1000, attempt_timer, pp) < 0) {
			peer_fail(pp, "out of timers");
			return;
		}
		pp->st = PP_CONNECTING;
		return;
	}
	peer_fail(pp, "no daemon answering on %s (%s)", n->name,
		  pp->last_err[0] ? pp->last_err : "no usable address");
}

static bool addr_listed(const struct npf_addr *a, size_t n, const struct npf_addr *x)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].family == x->family && memcmp(a[i].addr, x->addr, sizeof(x->addr)) == 0)
			return true;
	return false;
}

static int disc_connected(struct fconn *c, int err)
{
	struct ppeer *pp = c->owner;
	struct pcheck *pc = pp->pc;
	const struct npf_node *self = &pc->res->nodes[0];
	struct npf_msg_hello h = {.instance = pc->ctx->instance, .want_candidates = true};
	json_t *j;
	int r;

	if (err) {
		fmt(pp->last_err, sizeof(pp->last_err), "%s", strerror(-err));
		try_next(pp);
		return 0;
	}
	snprintf(h.node, sizeof(h.node), "%s", pc->ctx->node);
	/* Our reverse targets are our own candidates: announce exactly those, the
	 * peer probes nothing else for us (probe/server.c on_reverse_req). */
	h.addrs_present = true;
	for (size_t i = 0; i < self->n_cands && h.n_addrs < NPF_WIRE_MAX_CANDS; i++)
		if (!addr_listed(h.addrs, h.n_addrs, &self->cands[i].addr))
			h.addrs[h.n_addrs++] = self->cands[i].addr;
	j = npf_wire_hello_to_json(&h);
	r = fconn_send(c, NPF_MSG_HELLO, j);
	json_decref(j);
	if (r < 0) {
		fmt(pp->last_err, sizeof(pp->last_err), "sending HELLO: %s", strerror(-r));
		try_next(pp);
		return 0;
	}
	pp->st = PP_HELLO;
	return 0;
}

/* The daemon that answers must be the node we asked for: the same name (case
 * does not matter in host names), or one of the two names is the other plus a
 * domain. A peer given as an address literal is identified by the address. */
static bool node_name_matches(const char *asked, const char *answered)
{
	struct npf_addr a;
	size_t la = strlen(asked), lb = strlen(answered);

	if (npf_wire_addr_parse(asked, &a) == 0)
		return true;
	if (la == lb)
		return strcasecmp(asked, answered) == 0;
	if (la > lb)
		return asked[lb] == '.' && strncasecmp(asked, answered, lb) == 0;
	return answered[la] == '.' && strncasecmp(asked, answered, la) == 0;
}

static void on_hello_reply(struct ppeer *pp, json_t *j)
{
	struct npf_node *n = node_of(pp);
	struct npf_msg_hello_reply hr;

	if (npf_wire_hello_reply_from_json(j, &hr) < 0 || !hr.lists) {
		npf_wire_hello_reply_clear(&hr);
		fmt(pp->last_err, sizeof(pp->last_err), "malformed HELLO reply");
		try_next(pp);
		return;
	}
	if (hr.instance == pp->pc->ctx->instance) {
		npf_wire_hello_reply_clear(&hr);
		peer_fail(pp, "%s resolves to this node", n->name);
		return;
	}
	if (!node_name_matches(n->name, hr.node)) {
		/* Another daemon (or something squatting the port) answered. */
		fmt(pp->last_err, sizeof(pp->last_err), "answered as node '%s'", hr.node);
		npf_wire_hello_reply_clear(&hr);
		try_next(pp);
		return;
	}
	pp->timer = sd_event_source_disable_unref(pp->timer);
	if (pp->t_disc) {
		uint64_t rtt = npf_now(CLOCK_MONOTONIC) - pp->t_disc;

		n->hello_rtt_us = rtt > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt;
		if (!n->hello_rtt_us)
			n->hello_rtt_us = 1;
	}
	n->available = true;
	n->error[0] = '\0';
	if (pp->next_addr > 0)
		n->name_addr = pp->addrs[pp->next_addr - 1]; /* what try_next() connected to */
	n->instance = hr.instance;
	n->cands = hr.cands;
	n->n_cands = hr.n_cands;
	n->ifnames = hr.ifnames;
	n->n_ifnames = hr.n_ifnames;
	start_probes(pp);
}

static int disc_frame(struct fconn *c, uint16_t type, json_t *j)
{
	struct ppeer *pp = c->owner;

	if (pp->st == PP_HELLO && type == NPF_MSG_HELLO_REPLY) {
		on_hello_reply(pp, j);
		return 0;
	}
	if (pp->st == PP_HELLO && type == NPF_MSG_ERROR) {
		struct npf_msg_error e;

		if (npf_wire_error_from_json(j, &e) == 0)
			fmt(pp->last_err, sizeof(pp->last_err), "%s: %s", npf_wire_err_name(e.code),
			    e.message);
		else
			fmt(pp->last_err, sizeof(pp->last_err), "malformed ERROR");
		if (e.code == NPF_WERR_UNSUPPORTED_VERSION) {
			/* Another address reaches the same daemon: unavailable (unknown), now. */
			peer_fail(pp, "the daemon on %s speaks " NPF_DETAIL_OTHER_VERSION,
				  node_of(pp)->name, e.message);
			return 0;
		}
		try_next(pp);
		return 0;
	}
	if (pp->st == PP_PROBING && pp->rev_wait && type == NPF_MSG_REVERSE_RESULT) {
		struct npf_msg_reverse_result *rr = malloc(sizeof(*rr));

		/* rev_record() may ask again for the inconclusive targets on this connection;
		 * it stays open either way (held until our forward probes end too). */
		if (rr && npf_wire_reverse_result_from_json(j, rr) == 0 && rr->id == pp->rev_id)
			(void)rev_record(pp, rr);
		else
			rev_fill_missing(pp, NPF_OUT_NOT_PROBED, "malformed reverse result");
		free(rr);
		/* Its loss says the daemon went away. */
		maybe_peer_done(pp);
		return 0;
	}
	if (pp->st == PP_PROBING && pp->rev_wait && type == NPF_MSG_ERROR) {
		struct npf_msg_error e;
		char d[96];

		if (npf_wire_error_from_json(j, &e) == 0)
			fmt(d, sizeof(d), "%s declined reverse probes: %s", node_of(pp)->name,
			    e.message);
		else
			fmt(d, sizeof(d), "%s declined reverse probes", node_of(pp)->name);
		rev_fill_missing(pp, NPF_OUT_NOT_PROBED, d);
		fconn_close(c);
		maybe_peer_done(pp);
		return 0;
	}
	/* Anything else is a protocol violation: stop listening to this peer. */
	if (pp->st == PP_PROBING) {
		if (pp->rev_wait)
			rev_fill_missing(pp, NPF_OUT_NOT_PROBED, "unexpected message from peer");
		fconn_close(c);
		maybe_peer_done(pp);
		return 0;
	}
	fmt(pp->last_err, sizeof(pp->last_err), "unexpected %s", npf_wire_type_name(type));
	try_next(pp);
	return 0;
}

static int disc_error(struct fconn *c, int err)
{
	struct ppeer *pp = c->owner;
	char d[96];

	if (pp->st == PP_PROBING) {
		struct npf_node *n = node_of(pp);
		bool involved = pp->rev_wait || pp->fwd_pending;

		fconn_close(c);
		if (pp->rev_wait) {
			fmt(d, sizeof(d), "connection to %s lost before its reverse result",
			    n->name);
			rev_fill_missing(pp, NPF_OUT_NOT_PROBED, d);
		}
		/* The daemon went away (killed, restarted with a new instance) while
		 * its paths were being probed: what it answered, and the refusals and
		 * wrong-peer answers that follow its death, are no evidence about the
		 * network. The peer counts as unavailable (unknown, never fail). */
		if (involved) {
			fmt(n->error, sizeof(n->error),
			    "the daemon on %s went away during the check (%s)", n->name,
			    err == 0 ? "connection closed" : strerror(-err));
			n->available = false;
		}
		maybe_peer_done(pp);
		return 0;
	}
	if (err == -EPROTONOSUPPORT) {
		char v[64];

		/* The header says which: a rolling upgrade's operator wants both numbers. */
		snprintf(v, sizeof(v), "version %u; this node speaks %u", c->h.version,
			 NPF_WIRE_VERSION);
		peer_fail(pp, "the daemon on %s speaks " NPF_DETAIL_OTHER_VERSION,
			  node_of(pp)->name, v);
		return 0;
	}
	fmt(pp->last_err, sizeof(pp->last_err), "%s",
	    err == 0 ? "connection closed" : strerror(-err));
	try_next(pp);
	return 0;
}

static int disc_raw(struct fconn *c, uint32_t revents)
{
	(void)revents;
	fconn_close(c);
	return 0;
}

static const struct fconn_ops disc_ops = {
    .connected = disc_connected,
    .frame = disc_frame,
    .error = disc_error,
    .raw = disc_raw,
};

static void on_resolved(void *ud, size_t idx, int err, const struct npf_addr *addrs, size_t n)
{
	struct pcheck *pc = ud;
	struct ppeer *pp = &pc->peers[pc->resolve_map[idx]];

	if (pp->st != PP_RESOLVING)
		return;
	if (err) {
		peer_fail(pp, "cannot resolve %s: %s", node_of(pp)->name, gai_strerror(err));
		return;
	}
	memcpy(pp->addrs, addrs, n * sizeof(addrs[0]));
	pp->n_addrs = n;
	try_next(pp);
}

/* ---- completion ---- */

/* Closes everything still open, turning unfinished work into outcomes. */
static void wrap_up(struct pcheck *pc)
{
	resolve_cancel(pc->resolver);
	pc->resolver = NULL;
	for (size_t i = 0; i < pc->n_peers; i++) {
		struct ppeer *pp = &pc->peers[i];
		struct npf_node *n = node_of(pp);

		switch (pp->st) {
		case PP_RESOLVING:
			fmt(n->error, sizeof(n->error), "name resolution of %s timed out", n->name);
			n->available = false;
			break;
		case PP_CONNECTING:
		case PP_HELLO:
			fmt(n->error, sizeof(n->error), "no daemon answering on %s (%s)", n->name,
			    pp->st == PP_CONNECTING ? "connect timed out" : "no HELLO reply");
			n->available = false;
			break;
		case PP_PROBING:
			for (size_t f = 0; f < pp->n_fwd; f++) {
				struct fwd_slot *sl = &pp->fwd[f];

				if (!sl->tp)
					continue;
				tprobe_abort(sl->tp);
				sl->res = *tprobe_result(sl->tp);
				sl->have = true;
				tprobe_free(sl->tp);
				sl->tp = NULL;
				pp->fwd_pending--;
			}
			fwd_judge(pp, true);
			if (pp->rev_wait) {
				char d[96];

				/* The peer's daemon, not the path, was late: no evidence. */
				fmt(d, sizeof(d), "inconclusive: no reverse result from %s in time",
				    n->name);
				pc->res->n_inconclusive += (uint32_t)pp->n_rev;
				n->n_inconclusive += (uint32_t)pp->n_rev;
				rev_fill_missing(pp, NPF_OUT_NOT_PROBED, d);
			}
			break;
		case PP_IDLE:
		case PP_DONE:
			break;
		}
		peer_close(pp);
		for (size_t f = 0; f < pp->n_fwd; f++)
			tprobe_free(pp->fwd[f].tp);
		free(pp->fwd);
		pp->fwd = NULL;
		pp->n_fwd = 0;
		pp->st = PP_DONE;
	}
	pc->timer = sd_event_source_disable_unref(pc->timer);
	pc->defer = sd_event_source_disable_unref(pc->defer);
	pc->tick = sd_event_source_disable_unref(pc->tick);
}

static void pcheck_free(struct pcheck *pc)
{
	LIST_REMOVE(pc, link);
	free(pc->peers);
	free(pc->resolve_map);
	free(pc->paths);
	free(pc->samples);
	if (pc->res) {
		npf_check_clear(pc->res);
		free(pc->res);
	}
	free(pc);
}

static void complete(struct pcheck *pc)
{
	npf_probe_check_cb cb = pc->cb;
	void *ud = pc->ud;
	struct npf_check *res;
	uint64_t el;

	wrap_up(pc);
	res = pc->res;
	pc->res = NULL;
	res->paths = pc->paths;
	res->n_paths = pc->n_paths;
	pc->paths = NULL;
	el = (npf_now(CLOCK_MONOTONIC) - pc->t_start) / USEC_PER_MSEC;
	res->duration_ms = el > UINT32_MAX ? UINT32_MAX : (uint32_t)el;
	if (npf_check_summarise(res) < 0) {
		pcheck_free(pc);
		npf_check_clear(res);
		free(res);
		cb(NULL, -ENOMEM, ud);
		return;
	}
	pcheck_free(pc);
	/* Last: the callback may free the context or start another check. */
	cb(res, 0, ud);
}

static int defer_cb(sd_event_source *s, void *ud)
{
	(void)s;
	complete(ud);
	return 0;
}

static int check_timer(sd_event_source *s, uint64_t usec, void *ud)
{
	struct pcheck *pc = ud;

	(void)usec;
	if (!pc->past_disc) {
		/* Peers still silent after the discovery window cannot be probed in time. */
		pc->past_disc = true;
		for (size_t i = 0; i < pc->n_peers; i++) {
			struct ppeer *pp = &pc->peers[i];
			struct npf_node *n = node_of(pp);

			if (pp->st == PP_RESOLVING)
				peer_fail(pp, "name resolution of %s timed out", n->name);
			else if (pp->st == PP_CONNECTING || pp->st == PP_HELLO)
				peer_fail(pp, "no daemon answering on %s (%s)", n->name,
					  pp->st == PP_CONNECTING ? "connect timed out"
								  : "no HELLO reply");
		}
		(void)sd_event_source_set_time(s, pc->hard_deadline);
		(void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
		return 0;
	}
	complete(pc);
	return 0;
}

void check_cancel(struct pcheck *pc)
{
	npf_probe_check_cb cb = pc->cb;
	void *ud = pc->ud;

	wrap_up(pc);
	pcheck_free(pc);
	cb(NULL, -ECANCELED, ud);
}

/* Deadlines inside the check: discovery gets the first half of the probe
 * window, probes end one margin before the end, the reverse results have one
 * more margin to come back, and completion is immediate after that. */
static void set_deadlines(struct pcheck *pc, uint32_t timeout_ms)
{
	uint64_t t = (uint64_t)timeout_ms * USEC_PER_MSEC;
	uint64_t margin = t / 10;

	if (margin < 50 * USEC_PER_MSEC)
		margin = 50 * USEC_PER_MSEC;
	if (margin > 500 * USEC_PER_MSEC)
		margin = 500 * USEC_PER_MSEC;
	pc->t_start = npf_now(CLOCK_MONOTONIC);
	pc->hard_deadline = pc->t_start + t - margin;
	pc->probe_deadline = pc->hard_deadline - margin;
	pc->disc_deadline = pc->t_start + (pc->probe_deadline - pc->t_start) / 2;
}

static int setup_self(struct pcheck *pc)
{
	struct npf_probe_ctx *ctx = pc->ctx;
	struct npf_node *self = &pc->res->nodes[0];
	int r;

	snprintf(self->name, sizeof(self->name), "%s", ctx->node);
	self->instance = ctx->instance;
	self->available = true;
	r = inventory_candidates(ctx, &self->cands, &self->n_cands, &self->ifnames,
				 &self->n_ifnames);
	return r < 0 ? r : 0;
}

uint32_t npf_probe_check_budget(const struct npf_probe_ctx *ctx, const char *const *peers,
				size_t n_peers, uint32_t base_ms)
{
	size_t *distinct = NULL, *plan = NULL, n_distinct = 0, n_plan = 0;
	const char **names;
	uint32_t t = base_ms;

	if (!ctx || (n_peers && !peers))
		return base_ms;
	if (npf_plan_distinct(ctx->node, peers, n_peers, &distinct, &n_distinct) < 0)
		return base_ms;
	names = calloc(n_distinct + 1, sizeof(*names));
	if (names) {
		for (size_t i = 0; i < n_distinct; i++)
			names[i] = peers[distinct[i]];
		if (npf_plan_peers(ctx->node, names, n_distinct, ctx->full_mesh_max, ctx->sparse_k,
				   &plan, &n_plan) >= 0)
			t = npf_check_budget_ms(base_ms, (uint32_t)n_plan);
	}
	free(plan);
	free(names);
	free(distinct);
	return t;
}

int npf_probe_check_start(struct npf_probe_ctx *ctx, const char *const *peers, size_t n_peers,
			  uint32_t timeout_ms, npf_probe_check_cb cb, void *userdata)
{
	struct pcheck *pc;
	const char **names = NULL;
	size_t n_names = 0, *plan = NULL, n_plan = 0, n_resolve = 0;
	const char **resolve_names = NULL;
	int r = -ENOMEM;

	if (!ctx || !cb || (n_peers && !peers))
		return -EINVAL;
	if (timeout_ms == 0)
		timeout_ms = CHECK_DEFAULT_TIMEOUT_MS;
	if (timeout_ms < CHECK_MIN_TIMEOUT_MS || timeout_ms > CHECK_MAX_TIMEOUT_MS)
		return -EINVAL;
	for (size_t i = 0; i < n_peers; i++)
		if (!npf_wire_name_valid(peers[i]))
			return -EINVAL;
	pc = calloc(1, sizeof(*pc));
	names = calloc(n_peers + 1, sizeof(*names));
	if (!pc || !names)
		goto err;
	pc->ctx = ctx;
	pc->cb = cb;
	pc->ud = userdata;
	r = npf_plan_distinct(ctx->node, peers, n_peers, &plan, &n_names);
	if (r < 0)
		goto err;
	for (size_t i = 0; i < n_names; i++)
		names[i] = peers[plan[i]];
	free(plan);
	plan = NULL;
	r = -ENOMEM;
	pc->res = calloc(1, sizeof(*pc->res));
	pc->peers = calloc(n_names + 1, sizeof(*pc->peers));
	pc->resolve_map = calloc(n_names + 1, sizeof(*pc->resolve_map));
	resolve_names = calloc(n_names + 1, sizeof(*resolve_names));
	if (!pc->res || !pc->peers || !pc->resolve_map || !resolve_names)
		goto err;
	pc->res->nodes = calloc(n_names + 1, sizeof(*pc->res->nodes));
	if (!pc->res->nodes)
		goto err;
	pc->res->n_nodes = n_names + 1;
	pc->res->timeout_ms = timeout_ms;
	pc->res->started_unix_ms = npf_now(CLOCK_REALTIME) / USEC_PER_MSEC;
	pc->n_peers = n_names;
	r = setup_self(pc);
	if (r < 0)
		goto err;
	r = npf_plan_peers(ctx->node, names, n_names, ctx->full_mesh_max, ctx->sparse_k, &plan,
			   &n_plan);
	if (r < 0)
		goto err;
	pc->res->sparse = n_plan < n_names;
	for (size_t i = 0; i < n_names; i++) {
		struct ppeer *pp = &pc->peers[i];
		struct npf_node *n = &pc->res->nodes[i + 1];

		pp->pc = pc;
		pp->idx = (int)(i + 1);
		pp->c.fd = -1;
		snprintf(n->name, sizeof(n->name), "%s", names[i]);
		fmt(n->error, sizeof(n->error), "not contacted: outside this node's probe plan");
	}
	for (size_t i = 0; i < n_plan; i++) {
		struct ppeer *pp = &pc->peers[plan[i]];

		pp->st = PP_RESOLVING;
		pc->res->nodes[pp->idx].probed = true;
		pc->res->nodes[pp->idx].error[0] = '\0';
		pc->resolve_map[n_resolve] = plan[i];
		resolve_names[n_resolve++] = names[plan[i]];
	}
	set_deadlines(pc, timeout_ms);
	r = sd_event_add_time(ctx->event, &pc->timer, CLOCK_MONOTONIC, pc->disc_deadline, 1000,
			      check_timer, pc);
	if (r < 0)
		goto err;
	r = sd_event_add_defer(ctx->event, &pc->defer, defer_cb, pc);
	if (r < 0)
		goto err;
	/* Our own timers' lateness is the measure of our load: sample it through the check
	 * (about 256 samples, every 10..100 ms). */
	pc->tick_usec = (uint64_t)timeout_ms * USEC_PER_MSEC / 256;
	if (pc->tick_usec < 10 * USEC_PER_MSEC)
		pc->tick_usec = 10 * USEC_PER_MSEC;
	if (pc->tick_usec > 100 * USEC_PER_MSEC)
		pc->tick_usec = 100 * USEC_PER_MSEC;
	pc->res->tick_us = (uint32_t)pc->tick_usec;
	pc->samples = calloc(CHECK_MAX_SAMPLES, sizeof(*pc->samples));
	r = -ENOMEM;
	if (!pc->samples)
		goto err;
	r = sd_event_add_time(ctx->event, &pc->tick, CLOCK_MONOTONIC, pc->t_start + pc->tick_usec,
			      1, tick_cb, pc);
	if (r < 0)
		goto err;
	(void)sd_event_source_set_enabled(pc->tick, SD_EVENT_ON);
	(void)sd_event_source_set_enabled(pc->defer, SD_EVENT_OFF);
	if (n_resolve) {
		r = resolve_start(ctx->event, resolve_names, n_resolve, on_resolved, pc,
				  &pc->resolver);
		if (r < 0)
			goto err;
	} else {
		schedule_finish(pc);
	}
	LIST_INSERT_HEAD(&ctx->checks, pc, link);
	log_debug("probe: check of %zu peers (%zu planned, timeout %u ms)", n_names, n_plan,
		  timeout_ms);
	free(plan);
	free(names);
	free(resolve_names);
	return 0;
err:
	if (pc) {
		pc->timer = sd_event_source_disable_unref(pc->timer);
		pc->defer = sd_event_source_disable_unref(pc->defer);
		pc->tick = sd_event_source_disable_unref(pc->tick);
		free(pc->samples);
		free(pc->peers);
		free(pc->resolve_map);
		if (pc->res) {
			npf_check_clear(pc->res);
			free(pc->res);
		}
		free(pc);
	}
	free(plan);
	free(names);
	free(resolve_names);
	return r;
}
