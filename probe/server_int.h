/* SPDX-License-Identifier: MIT */
/* The probed side's private state, shared by its files only: server.c (control listeners
 * and the connections they accept), server_data.c (data listeners and their echo),
 * server_rev.c (reverse probes run for a peer). server.c calls the other two; they call
 * neither it nor each other (tests/support/callcycles.py). */
#ifndef NPF_PROBE_SERVER_INT_H
#define NPF_PROBE_SERVER_INT_H

#include "internal.h"

struct sconn {
	struct npf_probe_ctx *ctx;
	struct fconn c;
	sd_event_source *timer;
	struct npf_addr local;	/* the address the peer connected to */
	struct npf_addr remote; /* the peer's address: per-peer caps count by it */
	bool hello;
	bool authed;  /* HELLO seen (and, with a key, authenticated): out of n_preauth */
	bool evicted; /* shed before HELLO: draining (n_evicted, out of n_preauth) */
	uint64_t peer_instance;
	uint64_t t_hello; /* when its HELLO came: the requester's check began before */
	char peer_node[NPF_NAME_MAX];
	uint32_t n_open_data; /* over the connection's life */
	uint32_t n_rev;	      /* reverse jobs running */
	/* The addresses the peer's HELLO announced as its own (owned, NULL when it
	 * announced none): the only ones its REVERSE_REQs may have probed, so a
	 * peer cannot point this daemon at third parties (issue 12). */
	struct npf_addr *announced;
	size_t n_announced;
	bool announced_present; /* its HELLO carried the list (an old peer's does not) */
	/* A job check participant waiting on this connection for the JOB_DECISION (its ROW
	 * went to the daemon's job handler): npf_probe_job_answer() finds it by this id,
	 * 0 = none. */
	uint64_t job_wait;
	LIST_ENTRY(sconn) link; /* ctx->sconns, newest first */
};

/* A connection to a data listener. Before a valid DATA_AUTH it is only a candidate: a
 * local user who saw the listener in /proc/net/tcp may have connected first. */
struct dconn {
	struct dlisten *dl;
	struct fconn c; /* fd -1: a free slot */
	uint64_t seq;	/* accept order: the oldest makes room */
	bool known;	/* from the asker's address or one it announced */
};

struct dlisten {
	struct npf_probe_ctx *ctx;
	const void *owner;	/* who asked (dlisten_release); NULL once it let go */
	struct npf_addr remote; /* the asker's address: a data connection may come from it */
	/* And from these, the asker's own addresses (borrowed from the owner, which releases
	 * the listener before it frees them; NULL once the owner let go). */
	const struct npf_addr *allow;
	size_t n_allow;
	int lfd;
	sd_event_source *lsrc, *timer;
	struct dconn pend[PROBE_DATA_PENDING];
	struct dconn *win; /* the connection that proved the token (echoes); NULL before */
	uint64_t n_accepted;
	uint8_t token[NPF_WIRE_TOKEN_LEN];
	/* With a cluster key: DATA_AUTH_REPLY's MAC, computed from the asking connection's
	 * session when the listener opened (the reply's contents are known then). */
	uint8_t reply_mac[NPF_WIRE_MAC_LEN];
	bool has_mac;
	uint32_t bulk; /* a ceiling: the prober resets the connection once its echo is back */
	size_t rcvd, sent;
	size_t extra; /* reply bytes sent ahead of the echo */
	uint8_t *buf;
	size_t buf_len;
	LIST_ENTRY(dlisten) link; /* ctx->dlisteners */
};

/* One target of a reverse job. */
struct revtarget {
	struct tprobe *tp;	 /* running, or NULL */
	struct tprobe_port port; /* the requester's listener on it */
	const char *skip;	 /* static reason it is not probed, or NULL */
	struct npf_rev_result res;
};

/* Sized for its targets (a job of a whole cluster holds one per peer at once: fixed
 * arrays of the protocol's 64 targets were most of a daemon's peak memory). */
struct revjob {
	struct npf_probe_ctx *ctx;
	struct sconn *sc;
	struct npf_addr remote;
	uint32_t id; /* the request's */
	uint64_t expect, deadline;
	uint64_t t_asked; /* when the request came (the handshakes before a probe's data connect) */
	uint64_t not_before; /* the requester's HELLO: its check had begun */
	uint32_t bytes;
	size_t n, started, pending; /* targets, started so far, still running */
	LIST_ENTRY(revjob) link;    /* ctx->revjobs */
	struct revtarget t[];	    /* n */
};

/* ---- server_rev.c ---- */

/* Stops the job's probes and frees it, without an answer. */
void srv_revjob_free(struct revjob *rj);
/* Starts waiting reverse targets while slots are free and answers finished jobs. */
void srv_rev_kick(struct npf_probe_ctx *ctx);
/* Reverse jobs held for requester address a. */
uint32_t srv_count_revjobs(const struct npf_probe_ctx *ctx, const struct npf_addr *a);

#endif
