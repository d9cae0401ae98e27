// SPDX-License-Identifier: MIT
/* The probed side's reverse-probe jobs: a peer's REVERSE_REQ probed back to the addresses
 * it announced, within per-peer and global slots, answered with one REVERSE_RESULT. Calls
 * no other server file. */
#include "server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "log.h"

uint32_t srv_count_revjobs(const struct npf_probe_ctx *ctx, const struct npf_addr *a)
{
	uint32_t n = 0;

	for (const struct revjob *rj = LIST_FIRST(&ctx->revjobs); rj; rj = LIST_NEXT(rj, link))
		if (npf_addr_equal(&rj->remote, a))
			n++;
	return n;
}

/* ---- reverse jobs ---- */

void srv_revjob_free(struct revjob *rj)
{
	for (size_t i = 0; i < rj->n; i++) {
		if (rj->t[i].tp) {
			tprobe_free(rj->t[i].tp);
			rj->ctx->n_rev_active--;
		}
	}
	if (rj->sc)
		rj->sc->n_rev--;
	LIST_REMOVE(rj, link);
	rj->ctx->n_revjobs--;
	free(rj);
}

static void revjob_probe_done(struct tprobe *tp, void *ud)
{
	struct revjob *rj = ud;

	for (size_t i = 0; i < rj->n; i++) {
		const struct tprobe_result *r;
		struct npf_rev_result *o;

		if (rj->t[i].tp != tp)
			continue;
		r = tprobe_result(tp);
		o = &rj->t[i].res;
		o->addr = *tprobe_target(tp);
		o->outcome = r->outcome;
		o->rtt_us = r->rtt_us;
		snprintf(o->egress, sizeof(o->egress), "%s", r->egress);
		snprintf(o->detail, sizeof(o->detail), "%s", r->detail);
		o->ev = r->ev;
		tprobe_free(tp);
		rj->t[i].tp = NULL;
		rj->pending--;
		rj->ctx->n_rev_active--;
		break;
	}
	srv_rev_kick(rj->ctx);
}

/* Sends the result once every target has one, and frees the job. The wire struct holds
 * the protocol's 64 results: it lives only while the frame is encoded. */
static void revjob_complete(struct revjob *rj)
{
	struct npf_msg_reverse_result *res;
	json_t *j;

	if (rj->sc && fconn_is_open(&rj->sc->c)) {
		res = malloc(sizeof(*res));
		j = NULL;
		if (res) {
			res->id = rj->id;
			res->n_results = rj->n;
			for (size_t i = 0; i < rj->n; i++)
				res->results[i] = rj->t[i].res;
			j = npf_wire_reverse_result_to_json(res);
			free(res);
		}
		if (!j || fconn_send(&rj->sc->c, NPF_MSG_REVERSE_RESULT, j) < 0)
			log_debug("probe: cannot send REVERSE_RESULT to %s", rj->sc->peer_node);
		json_decref(j);
		/* Give the requester time to read it before the idle timer. */
		(void)sd_event_source_set_time_relative(rj->sc->timer, PROBE_SCONN_IDLE_USEC);
	}
	srv_revjob_free(rj);
}

/* Starts waiting reverse targets while reverse slots are free (at most
 * PROBE_MAX_REV_ACTIVE: the rest of the probe slots stay for this node's own
 * checks) and completes finished jobs. tprobe_start() never completes
 * synchronously, so nothing here runs revjob_probe_done(). */
static uint32_t rev_active_of(const struct npf_probe_ctx *ctx, const struct npf_addr *a)
{
	uint32_t n = 0;

	for (const struct revjob *rj = LIST_FIRST(&ctx->revjobs); rj; rj = LIST_NEXT(rj, link))
		if (npf_addr_equal(&rj->remote, a))
			n += (uint32_t)rj->pending;
	return n;
}

void srv_rev_kick(struct npf_probe_ctx *ctx)
{
	uint64_t now = npf_now(CLOCK_MONOTONIC);

	for (struct revjob *rj = LIST_FIRST(&ctx->revjobs), *nx; rj; rj = nx) {
		nx = LIST_NEXT(rj, link);
		/* One peer address cannot take every reverse slot: a requester that
		 * keeps 64 slow targets busy still leaves the other peers theirs. */
		while (rj->started < rj->n && ctx->n_rev_active < PROBE_MAX_REV_ACTIVE &&
		       rev_active_of(ctx, &rj->remote) < PROBE_MAX_REV_ACTIVE_PER_PEER) {
			size_t i = rj->started++;
			struct revtarget *t = &rj->t[i];
			struct npf_rev_result *o = &t->res;

			if (t->skip) {
				/* Never connected to: no probe slot, no packet. */
				o->outcome = NPF_OUT_NOT_PROBED;
				snprintf(o->detail, sizeof(o->detail), "%s", t->skip);
				continue;
			}
			/* Only the data listener the requester opened on its own announced
			 * address, and it must prove to be the requester; a refused one is
			 * asked again on that address's control port (tprobe_path.c). */
			if (now < rj->deadline &&
			    tprobe_start_via(ctx, TPROBE_FOR_PEER, &o->addr, rj->expect, rj->bytes,
					     rj->not_before, rj->deadline,
					     &(struct tprobe_via){.port = &t->port,
								  .t_asked = rj->t_asked},
					     revjob_probe_done, rj, &t->tp) == 0) {
				rj->pending++;
				ctx->n_rev_active++;
				continue;
			}
			o->outcome = NPF_OUT_NOT_PROBED;
			snprintf(o->detail, sizeof(o->detail), "%s",
				 now < rj->deadline
				     ? "could not start the probe"
				     : "reverse probe slots busy until the deadline");
		}
		if (rj->started == rj->n && !rj->pending)
			revjob_complete(rj);
	}
}
