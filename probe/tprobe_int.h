/* SPDX-License-Identifier: MIT */
/* A path probe's private state, shared by tprobe.c (the scheduler: slots, the queue,
 * probes shared between consumers, recent results) and tprobe_path.c (one attempt's
 * phases on the wire). tprobe.c calls tprobe_path.c; the path reports its end through
 * tp->ended, never by name (tests/support/callcycles.py). */
#ifndef NPF_PROBE_TPROBE_INT_H
#define NPF_PROBE_TPROBE_INT_H

#include "internal.h"

/* The echo is checked as it comes, in chunks: a bulk is a few full-size frames, and 64
 * probes may be reading at once (peak RSS). */
#define TP_RXBUF (16u << 10)
#define TP_TXCHUNK (16u << 10)

enum tphase {
	TP_QUEUED = 0,
	TP_CTL_CONNECT,
	TP_HELLO,
	TP_OPEN_DATA,
	TP_DATA_CONNECT,
	TP_AUTH,
	TP_BULK,
	TP_DONE,
	TP_JOINED, /* waiting for the leader's result (same path, another consumer) */
};

struct tprobe {
	struct npf_probe_ctx *ctx;
	struct npf_addr target;
	uint64_t expect;
	uint32_t bulk;
	uint32_t asked_bulk; /* the consumer's ceiling (bulk becomes the MTU-sized amount) */
	uint64_t deadline;
	enum tphase phase;
	struct fconn ctl, data;
	sd_event_source *timer;
	struct tprobe_port dport; /* the listener in use: given, or from an OPEN_DATA reply */
	struct tprobe_session *sess; /* our session to the peer (borrowed), or NULL */
	bool given;		     /* dport came with the request (a reverse target) */
	bool legacy;		     /* its own control connection: no session, or the fallback */
	uint32_t open_id;	     /* its OPEN_DATA on sess, while TP_OPEN_DATA */
	char peer_node[NPF_NAME_MAX]; /* legacy: who the path's HELLO_REPLY said it is */
	uint64_t t0;
	uint64_t t_ctl, t_bulk; /* control connect began / bulk phase began (0: not yet) */
	size_t sent, rcvd;
	uint8_t *rxbuf;
	struct tprobe_result res;
	tprobe_done_fn done;
	void *ud;
	/* The scheduler's (tprobe.c), run by tpath_finish(): slots, followers, the queue. */
	void (*ended)(struct tprobe *tp);
	bool remember; /* ended ok by its own full echo: kept for sharing (remember_ok) */
	bool active;   /* counted in ctx->n_active_tprobes */
	bool queued;   /* in ctx->queue */
	bool done_queued;	   /* in ctx->doneq: done() runs from the loop */
	TAILQ_ENTRY(tprobe) qlink; /* ctx->queue */
	TAILQ_ENTRY(tprobe) dlink; /* ctx->doneq */
	enum tprobe_origin origin;
	struct tprobe *leader;	       /* TP_JOINED: the probe we wait for */
	LIST_HEAD(, tprobe) followers; /* probes waiting for us */
	LIST_ENTRY(tprobe) flink;      /* leader->followers, while leader is set */
	LIST_ENTRY(tprobe) llink;      /* ctx->tprobes */
};

/* A finished probe's "ok", for consumers whose check began before it did. */
struct tprobe_recent {
	struct npf_addr target;
	uint64_t expect;
	uint32_t bulk; /* the ceiling it was asked with */
	struct tprobe_result res;
};

/* ---- tprobe_path.c ---- */

/* Runs the phases from the control connect on (the slot is taken). Never completes
 * synchronously with an answer; ends, at the latest by the deadline, in tpath_finish(). */
void tpath_begin(struct tprobe *tp);
/* Records the outcome (detail from fmt), closes the sockets and runs tp->ended; once. */
__attribute__((format(printf, 3, 4))) void tpath_finish(struct tprobe *tp, enum npf_outcome o,
							const char *fmt, ...);
/* Finishes with the outcome of the phase the deadline (or an abort) found it in. */
void tpath_finish_by_phase(struct tprobe *tp);

#endif
