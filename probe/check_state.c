// SPDX-License-Identifier: MIT
/* A check's peer states, the path rows it records, and our loop's lateness while it runs
 * (the load sampler the load rule reads). Calls no other check file. */
#include "check_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 3, 4))) void chk_fmt(char *buf, size_t sz, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, sz, f, ap);
	va_end(ap);
}

struct npf_node *chk_node(struct ppeer *pp)
{
	return &pp->pc->res->nodes[pp->idx];
}

struct npf_path *chk_add_path(struct pcheck *pc)
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

void chk_schedule_finish(struct pcheck *pc)
{
	(void)sd_event_source_set_enabled(pc->defer, SD_EVENT_ONESHOT);
}

static void maybe_finish(struct pcheck *pc)
{
	for (size_t i = 0; i < pc->n_peers; i++)
		if (pc->peers[i].st != PP_DONE && pc->peers[i].st != PP_IDLE)
			return;
	chk_schedule_finish(pc);
}

void chk_peer_close(struct ppeer *pp)
{
	/* Our data listeners for its reverse probes go with the session they were announced
	 * on (one that is echoing finishes). */
	dlisten_release(pp->pc->ctx, pp);
	fconn_close(&pp->c);
	pp->timer = sd_event_source_disable_unref(pp->timer);
}

static void peer_done(struct ppeer *pp)
{
	chk_peer_close(pp);
	pp->st = PP_DONE;
	maybe_finish(pp->pc);
}

__attribute__((format(printf, 2, 3))) void chk_peer_fail(struct ppeer *pp, const char *f, ...)
{
	struct npf_node *n = chk_node(pp);
	va_list ap;

	va_start(ap, f);
	vsnprintf(n->error, sizeof(n->error), f, ap);
	va_end(ap);
	n->available = false;
	peer_done(pp);
}

void chk_maybe_peer_done(struct ppeer *pp)
{
	if (pp->st == PP_PROBING && pp->fwd_pending == 0 && !pp->rev_wait)
		peer_done(pp);
}

/* ---- load: our loop's lateness ---- */

int chk_tick(sd_event_source *s, uint64_t usec, void *ud)
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
uint32_t chk_late_during(const struct pcheck *pc, uint64_t t0, uint64_t t1)
{
	uint32_t m = 0;

	for (size_t i = 0; i < pc->n_samples; i++) {
		const struct loop_sample *x = &pc->samples[i];

		if (x->sched <= t1 && x->sched + x->late_us >= t0 && x->late_us > m)
			m = x->late_us;
	}
	return m;
}
