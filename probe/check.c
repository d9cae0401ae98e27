// SPDX-License-Identifier: MIT
/* One check's start and end: the peers planned, the deadlines set, and completion (what is
 * still open turned into outcomes, the result summarised and handed over). A check resolves
 * peers, HELLOs each for its candidates (check_disc.c), probes every candidate forward and
 * asks the peer to probe ours back (check_paths.c), all against one absolute deadline. */
#include "check_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "links.h"
#include "log.h"
#include "plan.h"

/* Closes everything still open, turning unfinished work into outcomes. */
static void wrap_up(struct pcheck *pc)
{
	resolve_cancel(pc->resolver);
	pc->resolver = NULL;
	for (size_t i = 0; i < pc->n_peers; i++) {
		struct ppeer *pp = &pc->peers[i];
		struct npf_node *n = chk_node(pp);

		switch (pp->st) {
		case PP_RESOLVING:
			chk_fmt(n->error, sizeof(n->error), "name resolution of %s timed out",
				n->name);
			n->available = false;
			break;
		case PP_CONNECTING:
		case PP_HELLO:
			chk_fmt(n->error, sizeof(n->error), "no daemon answering on %s (%s)",
				n->name,
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
			chk_fwd_judge(pp, true);
			if (pp->rev_wait) {
				char d[96];

				/* The peer's daemon, not the path, was late: no evidence. */
				chk_fmt(d, sizeof(d),
					"inconclusive: no reverse result from %s in time", n->name);
				pc->res->n_inconclusive += (uint32_t)pp->n_rev;
				n->n_inconclusive += (uint32_t)pp->n_rev;
				chk_rev_fill_missing(pp, NPF_OUT_NOT_PROBED, d);
			}
			break;
		case PP_IDLE:
		case PP_DONE:
			break;
		}
		chk_peer_close(pp);
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
	for (size_t i = 0; pc->peers && i < pc->n_peers; i++) {
		/* wrap_up() released their listeners (chk_peer_close). */
		free(pc->peers[i].peer_addrs);
	}
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
			struct npf_node *n = chk_node(pp);

			if (pp->st == PP_RESOLVING)
				chk_peer_fail(pp, "name resolution of %s timed out", n->name);
			else if (pp->st == PP_CONNECTING || pp->st == PP_HELLO)
				chk_peer_fail(pp, "no daemon answering on %s (%s)", n->name,
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
		timeout_ms = ctx->default_timeout_ms;
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
		chk_fmt(n->error, sizeof(n->error),
			"not contacted: outside this node's probe plan");
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
			      1, chk_tick, pc);
	if (r < 0)
		goto err;
	(void)sd_event_source_set_enabled(pc->tick, SD_EVENT_ON);
	(void)sd_event_source_set_enabled(pc->defer, SD_EVENT_OFF);
	if (n_resolve) {
		r = resolve_start(ctx->event, resolve_names, n_resolve, chk_on_resolved, pc,
				  &pc->resolver);
		if (r < 0)
			goto err;
	} else {
		chk_schedule_finish(pc);
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
