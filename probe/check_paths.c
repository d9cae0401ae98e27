// SPDX-License-Identifier: MIT
/* A check's path probes and their results: every candidate of a peer probed forward (a
 * load-shaped failure once more), the reverse request and its answer, each a path row. */
#include "check_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "loadrule.h"

/* ---- reverse results ---- */

/* A new path row for reverse target i (our address the peer probes), or NULL. */
static struct npf_path *rev_row(struct ppeer *pp, size_t i)
{
	struct npf_path *ph = chk_add_path(pp->pc);

	if (!ph)
		return NULL;
	ph->peer = pp->idx;
	ph->dir = NPF_DIR_REVERSE;
	snprintf(ph->local_if, sizeof(ph->local_if), "%s", pp->rev_if[i]);
	ph->local_addr = pp->rev_addr[i];
	return ph;
}

void chk_rev_fill_missing(struct ppeer *pp, enum npf_outcome o, const char *detail)
{
	for (size_t i = 0; i < pp->n_rev; i++) {
		struct npf_path *ph = rev_row(pp, i);

		if (!ph)
			return;
		ph->outcome = o;
		chk_fmt(ph->detail, sizeof(ph->detail), "%s", detail);
	}
	pp->rev_wait = false;
}

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
		uint32_t ours = chk_late_during(pp->pc, pp->t_rev, npf_now(CLOCK_MONOTONIC));

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
bool chk_rev_record(struct ppeer *pp, const struct npf_msg_reverse_result *rr)
{
	uint64_t now = npf_now(CLOCK_MONOTONIC);
	bool may_retry = pp->rev_attempts < CHECK_MAX_ATTEMPTS &&
			 pp->pc->probe_deadline > now + CHECK_RETRY_MIN_USEC;
	size_t n_retry = 0;

	if (pp->t_rev && now > pp->t_rev)
		chk_node(pp)->rev_ms = (uint32_t)((now - pp->t_rev) / USEC_PER_MSEC);
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
		ph = rev_row(pp, i);
		if (!ph)
			break;
		if (!r) {
			ph->outcome = NPF_OUT_NOT_PROBED;
			chk_fmt(ph->detail, sizeof(ph->detail), "missing from %s's reverse result",
				chk_node(pp)->name);
			continue;
		}
		ph->outcome = r->outcome;
		ph->rtt_us = r->rtt_us;
		snprintf(ph->peer_if, sizeof(ph->peer_if), "%s", r->egress);
		chk_fmt(ph->detail, sizeof(ph->detail), "%s", r->detail);
		if (inc) {
			ph->outcome = NPF_OUT_NOT_PROBED;
			chk_fmt(ph->detail, sizeof(ph->detail), "inconclusive %s (%s): %s",
				npf_outcome_name(r->outcome), inc, r->detail);
			pp->pc->res->n_inconclusive++;
			chk_node(pp)->n_inconclusive++;
		}
	}
	pp->n_rev = n_retry;
	if (n_retry && rev_send(pp, pp->pc->probe_deadline) == 0)
		return true;
	if (n_retry)
		chk_rev_fill_missing(pp, NPF_OUT_NOT_PROBED,
				     "could not ask for the reverse probes again");
	pp->rev_wait = false;
	return false;
}

/* ---- forward probes ---- */

static void fwd_record(struct ppeer *pp, size_t i, const char *inconclusive)
{
	const struct npf_candidate *cand = &chk_node(pp)->cands[i];
	struct fwd_slot *sl = &pp->fwd[i];
	const struct tprobe_result *r = &sl->res;
	struct npf_path *ph = chk_add_path(pp->pc);

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
		chk_fmt(ph->detail, sizeof(ph->detail), "inconclusive %s after %u tries (%s): %s",
			npf_outcome_name(r->outcome), sl->attempts, inconclusive, r->detail);
		pp->pc->res->n_inconclusive++;
		chk_node(pp)->n_inconclusive++;
		return;
	}
	ph->outcome = r->outcome;
	chk_fmt(ph->detail, sizeof(ph->detail), "%s", r->detail);
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
	struct npf_node *n = chk_node(pp);
	int r;

	sl->attempts++;
	sl->have = false;
	/* A first attempt may take an "ok" of this path that a peer's reverse request had
	 * us prove since this check began; a retry probes afresh. */
	r = tprobe_start_via(pc->ctx, TPROBE_FOR_CHECK, &n->cands[i].addr, n->instance,
			     pc->ctx->bulk_bytes, sl->attempts == 1 ? pc->t_start : 0,
			     attempt_deadline(pc, sl->attempts), &(struct tprobe_via){.sess = &pp->sess},
			     fwd_done, pp, &sl->tp);
	if (r < 0)
		return r;
	pp->fwd_pending++;
	return 0;
}

void chk_session_lost(struct ppeer *pp)
{
	for (size_t i = 0; i < pp->n_fwd; i++)
		if (pp->fwd[i].tp)
			tprobe_session_lost(pp->fwd[i].tp);
}

/* Judges every attempt of this peer that ended (all at once, so an attempt that timed
 * out can be compared with its siblings that were still running), records what is
 * conclusive and tries load-shaped ones again while the budget allows (final: never). */
void chk_fwd_judge(struct ppeer *pp, bool final)
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
		f.loop_late_us = chk_late_during(pc, sl->res.t_begin, t1);
		f.idle = npf_measured_idle(f.loop_late_us, chk_node(pp)->hello_rtt_us);
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
		chk_fwd_judge(pp, false);
	chk_maybe_peer_done(pp);
}

/* Opens our data listener on pp->rev_addr[i] for the peer's reverse probe, until deadline:
 * its probe of that address is then one data connection (protocol version 3). */
static int rev_listen(struct ppeer *pp, size_t i, uint64_t deadline, struct npf_rev_target *t)
{
	struct npf_probe_ctx *ctx = pp->pc->ctx;
	const struct npf_node *n = chk_node(pp);
	uint64_t now = npf_now(CLOCK_MONOTONIC);
	struct dlisten_req rq = {
	    .local = &pp->rev_addr[i],
	    .remote = &n->name_addr,
	    .allow = pp->peer_addrs,
	    .n_allow = pp->n_peer_addrs,
	    .bulk = ctx->bulk_bytes,
	    .lifetime_usec = (deadline > now ? deadline - now : 0) + PROBE_DATA_LIFETIME_USEC,
	    .sess = &pp->c,
	    .owner = pp,
	};

	t->addr = pp->rev_addr[i];
	return dlisten_open(ctx, &rq, &t->port, t->token, t->nonce, &t->has_nonce);
}

/* Asks the peer to probe pp->rev_addr[0..n_rev) back, by deadline, each on a data listener
 * of ours; a target we cannot open one for is recorded not-probed and left out. Returns 0
 * or -errno. */
static int rev_send(struct ppeer *pp, uint64_t deadline)
{
	struct npf_probe_ctx *ctx = pp->pc->ctx;
	struct npf_msg_reverse_req *rq;
	uint64_t now = npf_now(CLOCK_MONOTONIC);
	size_t kept = 0;
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
	for (size_t i = 0; i < pp->n_rev; i++) {
		struct npf_path *ph;

		r = rev_listen(pp, i, deadline, &rq->targets[rq->n_targets]);
		if (r == 0) {
			rq->n_targets++;
			/* Kept, compacted: the result is matched by address. */
			pp->rev_addr[kept] = pp->rev_addr[i];
			memmove(pp->rev_if[kept], pp->rev_if[i], IFNAMSIZ);
			kept++;
			continue;
		}
		ph = rev_row(pp, i);
		if (!ph)
			continue;
		ph->outcome = NPF_OUT_NOT_PROBED;
		chk_fmt(ph->detail, sizeof(ph->detail), "could not open a data listener: %s",
			strerror(-r));
	}
	pp->n_rev = kept;
	r = -ENOENT;
	if (rq->n_targets) {
		j = npf_wire_reverse_req_to_json(rq);
		r = fconn_send(&pp->c, NPF_MSG_REVERSE_REQ, j);
		json_decref(j);
	}
	free(rq);
	return r < 0 ? r : 0;
}

void chk_start_probes(struct ppeer *pp)
{
	struct pcheck *pc = pp->pc;
	struct npf_node *n = chk_node(pp);
	const struct npf_node *self = &pc->res->nodes[0];
	uint64_t now = npf_now(CLOCK_MONOTONIC);

	pp->st = PP_PROBING;
	pp->fwd = calloc(n->n_cands + 1, sizeof(*pp->fwd));
	if (!pp->fwd) {
		chk_peer_fail(pp, "out of memory");
		return;
	}
	/* fwd[] is indexed like cands[]; slots of probes not started stay NULL. */
	pp->n_fwd = n->n_cands < PROBE_MAX_FWD_PER_PEER ? n->n_cands : PROBE_MAX_FWD_PER_PEER;
	for (size_t i = 0; i < n->n_cands; i++) {
		/* One peer's announcement must not take every outbound slot. */
		if (i >= PROBE_MAX_FWD_PER_PEER || fwd_attempt(pp, i) < 0) {
			struct npf_path *ph = chk_add_path(pc);

			if (!ph)
				continue;
			ph->peer = pp->idx;
			ph->dir = NPF_DIR_FORWARD;
			snprintf(ph->peer_if, sizeof(ph->peer_if), "%s", n->cands[i].ifname);
			ph->peer_addr = n->cands[i].addr;
			ph->outcome = NPF_OUT_NOT_PROBED;
			if (i >= PROBE_MAX_FWD_PER_PEER)
				chk_fmt(ph->detail, sizeof(ph->detail),
					"%s announced more than %d addresses", n->name,
					PROBE_MAX_FWD_PER_PEER);
			else
				chk_fmt(ph->detail, sizeof(ph->detail),
					"could not start the probe");
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
			chk_rev_fill_missing(pp, NPF_OUT_NOT_PROBED,
					     "could not send the reverse request");
	} else if (pp->n_rev) {
		pp->rev_wait = true;
		chk_rev_fill_missing(pp, NPF_OUT_NOT_PROBED, "no time left for reverse probes");
	}
	chk_maybe_peer_done(pp);
}
