// SPDX-License-Identifier: MIT
/* The probed side's control port: listeners on every candidate address and the control
 * connections they accept (HELLO, OPEN_DATA, REVERSE_REQ, ROW), their caps and shedding.
 * Data listeners are server_data.c's, reverse-probe jobs server_rev.c's. */
#include "server_int.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "candidates.h"
#include "log.h"

#define ACCEPT_PAUSE_USEC (500ull * 1000)
#define LINGER_USEC (1000ull * 1000)

struct plisten {
	struct npf_probe_ctx *ctx;
	struct npf_addr addr;
	int fd;
	sd_event_source *src, *pause;
	bool keep;
	LIST_ENTRY(plisten) link; /* ctx->listeners */
};

static void throttle(struct npf_probe_ctx *ctx);

static uint32_t per_peer_conns(const struct npf_probe_ctx *ctx)
{
	return ctx->max_conns / 4 > 16 ? ctx->max_conns / 4 : 16;
}

/* Connections from a (evicted ones, draining, count against PROBE_MAX_EVICTED instead). */
static uint32_t count_sconns(const struct npf_probe_ctx *ctx, const struct npf_addr *a,
			     bool preauth_only)
{
	uint32_t n = 0;

	for (const struct sconn *sc = LIST_FIRST(&ctx->sconns); sc; sc = LIST_NEXT(sc, link))
		if (!sc->evicted && (!preauth_only || !sc->authed) &&
		    npf_addr_equal(&sc->remote, a))
			n++;
	return n;
}

/* ---- inbound control connections ---- */

static void sconn_free(struct sconn *sc)
{
	struct npf_probe_ctx *ctx = sc->ctx;

	for (struct revjob *rj = LIST_FIRST(&ctx->revjobs), *nx; rj; rj = nx) {
		nx = LIST_NEXT(rj, link);
		if (rj->sc == sc)
			srv_revjob_free(rj);
	}
	/* Data listeners die with the connection that asked for them (a peer that
	 * hangs up cannot leave them behind); an accepted one finishes its echo. */
	dlisten_release(ctx, sc);
	if (sc->evicted)
		ctx->n_evicted--;
	else if (!sc->authed)
		ctx->n_preauth--;
	sc->timer = sd_event_source_disable_unref(sc->timer);
	fconn_close(&sc->c);
	LIST_REMOVE(sc, link);
	ctx->n_sconns--;
	free(sc->announced);
	free(sc);
	throttle(ctx);
}

/* Sheds a connection that has not said HELLO (its pre-auth time is up, or room is needed
 * for a newer one) politely: a "busy" ERROR, our FIN once it is out, and its input drained
 * until its FIN (fconn's closing mode), for LINGER_USEC at most. Closing with its bytes
 * unread would send a reset, which a legitimate prober must not mistake for the path's.
 * Past PROBE_MAX_EVICTED draining at once, the connection is closed at once. */
static void sconn_evict(struct sconn *sc, const char *msg)
{
	struct npf_probe_ctx *ctx = sc->ctx;

	if (sc->evicted)
		return;
	if (ctx->n_evicted >= PROBE_MAX_EVICTED) {
		sconn_free(sc);
		return;
	}
	sc->evicted = true;
	ctx->n_evicted++;
	ctx->n_preauth--;
	fconn_send_error(&sc->c, NPF_WERR_BUSY, msg);
	(void)sd_event_source_set_time_relative(sc->timer, LINGER_USEC);
	throttle(ctx);
}

static int sconn_timer(sd_event_source *s, uint64_t usec, void *ud)
{
	struct sconn *sc = ud;

	(void)s;
	(void)usec;
	if (!sc->authed && !sc->evicted)
		sconn_evict(sc, "no HELLO in time");
	else
		sconn_free(sc);
	return 0;
}

/* Answers a bad request with an ERROR frame, then lingers briefly so the peer
 * can read it instead of getting a reset. */
static int sconn_reject(struct sconn *sc, enum npf_wire_err code, const char *msg)
{
	fconn_send_error(&sc->c, code, msg);
	(void)sd_event_source_set_time_relative(sc->timer, LINGER_USEC);
	return 0;
}

static int send_or_drop(struct sconn *sc, uint16_t type, json_t *j)
{
	int r = fconn_send(&sc->c, type, j);

	json_decref(j);
	if (r < 0) {
		sconn_free(sc);
		return 1;
	}
	return 0;
}

/* The connection spoke (HELLO or ROW) after proving the key, if there is one: out of the
 * pre-auth caps, and counted for the key it used. */
static void sconn_authed(struct sconn *sc)
{
	struct npf_probe_ctx *ctx = sc->ctx;
	const struct npf_auth_key *k = fconn_auth_key(&sc->c);

	if (sc->authed)
		return;
	sc->authed = true;
	ctx->n_preauth--;
	if (k && k >= ctx->keys.k && k < ctx->keys.k + ctx->keys.n)
		ctx->n_key_sessions[k - ctx->keys.k]++;
	throttle(ctx);
}

static int on_hello(struct sconn *sc, json_t *j)
{
	struct npf_probe_ctx *ctx = sc->ctx;
	struct npf_msg_hello h;
	struct npf_msg_hello_reply rep;

	if (npf_wire_hello_from_json(j, &h) < 0)
		return sconn_reject(sc, NPF_WERR_BAD_REQUEST, "malformed HELLO");
	/* With a key, who the peer is was proven in the handshake: its HELLO must
	 * not claim another node. */
	if (fconn_auth_peer(&sc->c) && strcmp(fconn_auth_peer(&sc->c), h.node) != 0)
		return sconn_reject(sc, NPF_WERR_FORBIDDEN, "HELLO names another node");
	if (h.n_addrs) {
		sc->announced = malloc(h.n_addrs * sizeof(*sc->announced));
		if (!sc->announced)
			return sconn_reject(sc, NPF_WERR_BUSY, "out of memory");
		memcpy(sc->announced, h.addrs, h.n_addrs * sizeof(*sc->announced));
		sc->n_announced = h.n_addrs;
	}
	sc->announced_present = h.addrs_present;
	sc->hello = true;
	sconn_authed(sc);
	sc->peer_instance = h.instance;
	sc->t_hello = npf_now(CLOCK_MONOTONIC);
	snprintf(sc->peer_node, sizeof(sc->peer_node), "%s", h.node);
	/* Lists borrowed: the reply is serialised before the arrays can change. */
	npf_wire_hello_answer(&h, ctx->node, ctx->instance, ctx->cands, ctx->n_cands,
			      ctx->ifnames, ctx->n_ifnames, &rep);
	return send_or_drop(sc, NPF_MSG_HELLO_REPLY, npf_wire_hello_reply_to_json(&rep));
}

/* Our current candidate address a (a path a peer may ask a data listener for). */
static bool own_candidate(const struct npf_probe_ctx *ctx, const struct npf_addr *a)
{
	for (size_t i = 0; i < ctx->n_cands; i++)
		if (npf_addr_equal(&ctx->cands[i].addr, a))
			return true;
	return false;
}

/* One path's data listener, asked for on the prober's one control connection to us: on
 * the address it names (one of our candidates, or the one this connection reached). A
 * request we cannot serve is declined with port 0, for that path only (the connection
 * carries the prober's other paths). */
static int on_open_data(struct sconn *sc, json_t *j)
{
	struct npf_probe_ctx *ctx = sc->ctx;
	struct npf_msg_open_data od;
	struct npf_msg_open_data_reply rep = {0};
	struct dlisten_req rq = {
	    .local = &od.addr,
	    .remote = &sc->remote,
	    .allow = sc->announced,
	    .n_allow = sc->n_announced,
	    .lifetime_usec = PROBE_DATA_LIFETIME_USEC,
	    .sess = &sc->c,
	    .owner = sc,
	};

	if (npf_wire_open_data_from_json(j, &od) < 0)
		return sconn_reject(sc, NPF_WERR_BAD_REQUEST, "malformed OPEN_DATA");
	rep.id = od.id;
	rq.bulk = od.bytes;
	if ((npf_addr_equal(&od.addr, &sc->local) || own_candidate(ctx, &od.addr)) &&
	    sc->n_open_data < PROBE_MAX_OPEN_DATA_PER_CONN &&
	    dlisten_count(ctx, &sc->remote) < 2 * per_peer_conns(ctx)) {
		int r = dlisten_open(ctx, &rq, &rep.port, rep.token, rep.nonce, &rep.has_nonce);

		/* One the global cap turns away does not use up this connection's
		 * allowance. */
		if (r != -EBUSY)
			sc->n_open_data++;
		if (r < 0)
			rep.port = 0;
	}
	if (!rep.port) {
		memset(rep.token, 0, sizeof(rep.token));
		rep.has_nonce = false;
	}
	return send_or_drop(sc, NPF_MSG_OPEN_DATA_REPLY, npf_wire_open_data_reply_to_json(&rep));
}

static bool announced(const struct sconn *sc, const struct npf_addr *a)
{
	for (size_t i = 0; i < sc->n_announced; i++)
		if (sc->announced[i].family == a->family &&
		    memcmp(sc->announced[i].addr, a->addr, sizeof(a->addr)) == 0)
			return true;
	return false;
}

static int on_reverse_req(struct sconn *sc, json_t *j)
{
	struct npf_probe_ctx *ctx = sc->ctx;
	struct npf_msg_reverse_req *rq;
	struct revjob *rj;
	size_t n;

	rq = malloc(sizeof(*rq));
	if (!rq)
		return sconn_reject(sc, NPF_WERR_BUSY, "out of memory");
	if (npf_wire_reverse_req_from_json(j, rq) < 0) {
		free(rq);
		return sconn_reject(sc, NPF_WERR_BAD_REQUEST, "malformed REVERSE_REQ");
	}
	if (sc->n_rev >= PROBE_MAX_REVJOBS_PER_CONN || ctx->n_revjobs >= PROBE_MAX_REVJOBS ||
	    srv_count_revjobs(ctx, &sc->remote) >= PROBE_MAX_REVJOBS_PER_PEER) {
		struct npf_msg_error e = {.code = NPF_WERR_BUSY};

		/* Not fatal for the connection: the requester records "busy". */
		snprintf(e.message, sizeof(e.message), "reverse request %u: too many running",
			 rq->id);
		free(rq);
		return send_or_drop(sc, NPF_MSG_ERROR, npf_wire_error_to_json(&e));
	}
	/* No more targets than we would probe on one peer in our own checks. */
	n = rq->n_targets < PROBE_MAX_FWD_PER_PEER ? rq->n_targets : PROBE_MAX_FWD_PER_PEER;
	rj = calloc(1, sizeof(*rj) + n * sizeof(rj->t[0]));
	if (!rj) {
		free(rq);
		return sconn_reject(sc, NPF_WERR_BUSY, "out of memory");
	}
	rj->ctx = ctx;
	rj->sc = sc;
	rj->remote = sc->remote;
	rj->id = rq->id;
	rj->n = n;
	rj->expect = sc->peer_instance;
	/* Our own check's "ok" of the same path, proven since the requester's check began,
	 * answers this request without a second probe (tprobe_start_shared). */
	rj->not_before = sc->t_hello;
	/* We send what we would send for our own probes, never more: a small
	 * request must not move a peer-chosen amount of data. */
	rj->bytes = rq->bytes < ctx->bulk_bytes ? rq->bytes : ctx->bulk_bytes;
	rj->deadline = npf_now(CLOCK_MONOTONIC) + (uint64_t)rq->timeout_ms * USEC_PER_MSEC;
	rj->t_asked = npf_now(CLOCK_MONOTONIC);
	for (size_t i = 0; i < rj->n; i++) {
		const struct npf_rev_target *t = &rq->targets[i];

		rj->t[i].res.addr = t->addr;
		/* Only the requester's own announced addresses are probed: anything else
		 * would let any HELLO sender aim this daemon at third parties. */
		if (!announced(sc, &t->addr))
			rj->t[i].skip =
			    sc->announced_present
				? "not announced by the requester"
				: "not announced by the requester (its HELLO lists no addresses)";
		/* A data listener's port is the kernel's ephemeral choice: a requester that
		 * names a privileged one is pointing us at a service (ssh, ...), not at
		 * its listener. */
		else if (t->port < NPF_WIRE_MIN_DATA_PORT)
			rj->t[i].skip = "reverse target port below 1024 (not a data listener)";
		/* The listener the requester opened there, proven on this session. */
		else if (tprobe_port_from(&rj->t[i].port, &sc->c, t->port, t->token, t->nonce,
					  t->has_nonce, sc->peer_node, sc->peer_instance) < 0)
			rj->t[i].skip = "reverse target without a nonce on an authenticated session";
	}
	free(rq);
	LIST_INSERT_HEAD(&ctx->revjobs, rj, link);
	ctx->n_revjobs++;
	sc->n_rev++;
	/* Keep the connection until the result is sent. */
	(void)sd_event_source_set_time(sc->timer, rj->deadline + PROBE_SCONN_IDLE_USEC);
	srv_rev_kick(ctx);
	return 0;
}

/* A ROW of a job check for which this daemon is the coordinator (docs/decision.md §10).
 * The row goes to the daemon's job handler; the connection is kept while the sender waits
 * for the decision (its wait_ms), then answered with npf_probe_job_answer(). With a
 * cluster key the row must come from the node that proved the key. */
static int on_row(struct sconn *sc, json_t *j)
{
	struct npf_probe_ctx *ctx = sc->ctx;
	struct npf_msg_row *row;
	uint64_t wait;

	if (!ctx->job_row)
		return sconn_reject(sc, NPF_WERR_UNEXPECTED, "no job checks here");
	if (sc->job_wait)
		return sconn_reject(sc, NPF_WERR_UNEXPECTED, "one ROW per connection");
	row = calloc(1, sizeof(*row));
	if (!row)
		return sconn_reject(sc, NPF_WERR_BUSY, "out of memory");
	if (npf_wire_row_from_json(j, row) < 0) {
		free(row);
		return sconn_reject(sc, NPF_WERR_BAD_REQUEST, "malformed ROW");
	}
	if (fconn_auth_peer(&sc->c) && strcmp(fconn_auth_peer(&sc->c), row->node) != 0) {
		npf_wire_row_clear(row);
		free(row);
		return sconn_reject(sc, NPF_WERR_FORBIDDEN, "ROW for another node than the key's");
	}
	sconn_authed(sc);
	wait = row->wait_ms ? row->wait_ms : NPF_WIRE_MAX_TIMEOUT_MS;
	sc->job_wait = ++ctx->next_job_wait;
	(void)sd_event_source_set_time_relative(sc->timer, (wait + 1000) * USEC_PER_MSEC);
	/* The handler owns the row from here, and may answer at once. */
	ctx->job_row(ctx->userdata, row, sc->job_wait);
	return 0;
}

int npf_probe_job_answer(struct npf_probe_ctx *ctx, uint64_t waiter,
			 const struct npf_msg_job_decision *d)
{
	json_t *j;
	int r;

	if (!ctx || !waiter || !d)
		return -EINVAL;
	for (struct sconn *sc = LIST_FIRST(&ctx->sconns); sc; sc = LIST_NEXT(sc, link)) {
		if (sc->job_wait != waiter)
			continue;
		j = npf_wire_job_decision_to_json(d);
		if (!j)
			return -ENOMEM;
		r = fconn_send(&sc->c, NPF_MSG_JOB_DECISION, j);
		json_decref(j);
		sc->job_wait = 0;
		/* Never freed here: the handler may answer from inside on_row(). */
		if (r < 0) {
			(void)sd_event_source_set_time_relative(sc->timer, 1);
			return r;
		}
		/* The participant closes once it has read the answer. */
		(void)sd_event_source_set_time_relative(sc->timer, LINGER_USEC);
		return 0;
	}
	return -ENOENT;
}

/* What a daemon's control connection serves; where each may arrive is the message's row
 * in lib/wire.c (npf_wire_msg_allowed). */
static int (*const sconn_handlers[])(struct sconn *sc, json_t *j) = {
    [NPF_MSG_HELLO] = on_hello,
    [NPF_MSG_OPEN_DATA] = on_open_data,
    [NPF_MSG_REVERSE_REQ] = on_reverse_req,
    [NPF_MSG_ROW] = on_row,
};

static int sconn_frame(struct fconn *c, uint16_t type, json_t *j)
{
	struct sconn *sc = c->owner;
	unsigned state = sc->hello ? NPF_WST_SESSION : NPF_WST_OPEN;
	int r = npf_wire_msg_allowed(type, state, NPF_WROLE_PROBER);

	/* Before HELLO the short pre-auth deadline stands, whatever arrives. */
	if (!sc->n_rev && sc->authed)
		(void)sd_event_source_set_time_relative(sc->timer, PROBE_SCONN_IDLE_USEC);
	/* A session message before HELLO is refused as before a login, the rest as untimely. */
	if (r == -EPROTO && state == NPF_WST_OPEN &&
	    npf_wire_msg_allowed(type, NPF_WST_SESSION, NPF_WROLE_PROBER) == 0)
		return sconn_reject(sc, NPF_WERR_FORBIDDEN, "HELLO first");
	if (r < 0 || type >= sizeof(sconn_handlers) / sizeof(sconn_handlers[0]) ||
	    !sconn_handlers[type])
		return sconn_reject(sc, NPF_WERR_UNEXPECTED, "unexpected message type");
	return sconn_handlers[type](sc, j);
}

static int sconn_error(struct fconn *c, int err)
{
	struct sconn *sc = c->owner;

	/* Linger after our ERROR frame so it is read, not reset; EOF ends it. */
	if (c->closing && fconn_is_protocol_error(err) && fconn_is_open(c)) {
		(void)sd_event_source_set_time_relative(sc->timer, LINGER_USEC);
		return 0;
	}
	sconn_free(sc);
	return 1;
}

/* Accepted connections never connect. */
static int sconn_connected(struct fconn *c, int err)
{
	(void)c;
	(void)err;
	return 0;
}

/* Never entered: control connections stay framed. */
static int sconn_raw(struct fconn *c, uint32_t revents)
{
	(void)revents;
	sconn_free(c->owner);
	return 1;
}

static const struct fconn_ops sconn_ops = {
    .connected = sconn_connected,
    .frame = sconn_frame,
    .error = sconn_error,
    .raw = sconn_raw,
};

/* ---- listeners ---- */

/* At max_conns we stop accepting rather than accept-and-close: simultaneous
 * checks of a whole job (every node's prolog at once) then wait in the kernel's
 * backlog for a few milliseconds instead of failing as "refused". */
static void throttle(struct npf_probe_ctx *ctx)
{
	/* Only connections that said HELLO count: idle unauthenticated ones have
	 * their own cap and are evicted, so they can never pause accept(). */
	bool pause = ctx->n_sconns - ctx->n_preauth - ctx->n_evicted >= ctx->max_conns;

	if (pause == ctx->accept_paused)
		return;
	ctx->accept_paused = pause;
	for (struct plisten *pl = LIST_FIRST(&ctx->listeners); pl; pl = LIST_NEXT(pl, link))
		if (!pl->pause)
			(void)sd_event_source_set_enabled(pl->src,
							  pause ? SD_EVENT_OFF : SD_EVENT_ON);
}

static int listen_pause_end(sd_event_source *s, uint64_t usec, void *ud)
{
	struct plisten *pl = ud;

	(void)usec;
	(void)s;
	pl->pause = sd_event_source_disable_unref(pl->pause);
	if (!pl->ctx->accept_paused)
		(void)sd_event_source_set_enabled(pl->src, SD_EVENT_ON);
	return 0;
}

/* Answers "busy" on a connection we will not serve, then closes it: the
 * prober then records not-probed, not a refused path. */
static void refuse_busy(int fd, const char *msg)
{
	struct npf_msg_error e = {.code = NPF_WERR_BUSY};
	json_t *j;
	uint8_t *f;
	size_t len;

	snprintf(e.message, sizeof(e.message), "%s", msg);
	j = npf_wire_error_to_json(&e);
	if (j && npf_wire_frame(NPF_MSG_ERROR, j, &f, &len) == 0) {
		(void)!send(fd, f, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		free(f);
	}
	json_decref(j);
	close(fd);
}

/* Keeps unauthenticated connections under their caps by evicting the oldest one
 * of the address holding the most (this one's own when it is over its share):
 * a flood of idle connections pushes out only itself. */
static void make_preauth_room(struct npf_probe_ctx *ctx, const struct npf_addr *from)
{
	struct sconn *victim = NULL;
	uint32_t best = 0;

	if (count_sconns(ctx, from, true) >= PROBE_MAX_PREAUTH_PER_PEER) {
		for (struct sconn *sc = LIST_FIRST(&ctx->sconns); sc; sc = LIST_NEXT(sc, link))
			if (!sc->authed && !sc->evicted && npf_addr_equal(&sc->remote, from))
				victim = sc; /* the list is newest first: the last is the oldest */
	} else if (ctx->n_preauth >= PROBE_MAX_PREAUTH) {
		for (struct sconn *sc = LIST_FIRST(&ctx->sconns); sc; sc = LIST_NEXT(sc, link)) {
			uint32_t n;

			if (sc->authed || sc->evicted)
				continue;
			n = count_sconns(ctx, &sc->remote, true);
			if (n >= best) {
				best = n;
				victim = sc;
			}
		}
	}
	if (victim)
		sconn_evict(victim, "too many unauthenticated connections");
}

static int listen_accept(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	struct plisten *pl = ud;
	struct npf_probe_ctx *ctx = pl->ctx;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct sconn *sc;
	int cfd;

	(void)revents;
	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			/* Out of descriptors: stop accepting for a while instead of spinning. */
			(void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
			if (!pl->pause)
				(void)sd_event_add_time_relative(ctx->event, &pl->pause,
								 CLOCK_MONOTONIC, ACCEPT_PAUSE_USEC,
								 1000, listen_pause_end, pl);
		}
		return 0;
	}
	ctx->n_ctl_accepted++;
	sc = calloc(1, sizeof(*sc));
	if (!sc) {
		close(cfd);
		return 0;
	}
	sc->ctx = ctx;
	if (getsockname(cfd, (struct sockaddr *)&ss, &sl) < 0 ||
	    fconn_from_sockaddr(&ss, &sc->local, NULL) < 0) {
		close(cfd);
		free(sc);
		return 0;
	}
	sl = sizeof(ss);
	if (getpeername(cfd, (struct sockaddr *)&ss, &sl) < 0 ||
	    fconn_from_sockaddr(&ss, &sc->remote, NULL) < 0) {
		close(cfd);
		free(sc);
		return 0;
	}
	if (count_sconns(ctx, &sc->remote, false) >= per_peer_conns(ctx)) {
		refuse_busy(cfd, "too many connections from this address");
		free(sc);
		return 0;
	}
	make_preauth_room(ctx, &sc->remote);
	if (fconn_adopt(&sc->c, ctx->event, cfd, NPF_WIRE_MAX_PAYLOAD, &sconn_ops, sc) < 0) {
		free(sc);
		return 0;
	}
	(void)sd_event_source_set_priority(sc->c.io, PROBE_PRIO_CONTROL);
	if (ctx->keys.n && fconn_auth_server(&sc->c, &ctx->keys, ctx->node) < 0) {
		fconn_close(&sc->c);
		free(sc);
		return 0;
	}
	if (sd_event_add_time_relative(ctx->event, &sc->timer, CLOCK_MONOTONIC, PROBE_PREAUTH_USEC,
				       1000, sconn_timer, sc) < 0) {
		fconn_close(&sc->c);
		free(sc);
		return 0;
	}
	LIST_INSERT_HEAD(&ctx->sconns, sc, link);
	ctx->n_sconns++;
	ctx->n_preauth++;
	throttle(ctx);
	return 0;
}

static void plisten_free(struct plisten *pl)
{
	pl->src = sd_event_source_disable_unref(pl->src);
	pl->pause = sd_event_source_disable_unref(pl->pause);
	if (pl->fd >= 0)
		close(pl->fd);
	free(pl);
}

static int plisten_open(struct npf_probe_ctx *ctx, const struct npf_addr *a, struct plisten **out)
{
	struct sockaddr_storage ss;
	socklen_t sl = fconn_sockaddr(a, ctx->port, &ss);
	struct plisten *pl;
	int one = 1, r;

	if (!sl)
		return -EAFNOSUPPORT;
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	pl->ctx = ctx;
	pl->addr = *a;
	pl->fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (pl->fd < 0)
		goto err;
	(void)setsockopt(pl->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* A tentative IPv6 address (DAD running) is still ours a moment later. */
	(void)setsockopt(pl->fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
	if (a->family == AF_INET6)
		(void)setsockopt(pl->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* Accepted control connections inherit it: the SYN-ACK announces it to a peer of any
	 * version, and our replies are cut to it. */
	fconn_clamp_mss(pl->fd);
	if (bind(pl->fd, (struct sockaddr *)&ss, sl) < 0 || listen(pl->fd, SOMAXCONN) < 0)
		goto err;
	r = sd_event_add_io(ctx->event, &pl->src, pl->fd, EPOLLIN, listen_accept, pl);
	if (r < 0) {
		errno = -r;
		goto err;
	}
	(void)sd_event_source_set_priority(pl->src, PROBE_PRIO_CONTROL);
	if (ctx->accept_paused)
		(void)sd_event_source_set_enabled(pl->src, SD_EVENT_OFF);
	*out = pl;
	return 0;
err:
	r = -errno;
	plisten_free(pl);
	return r;
}

int server_sync_listeners(struct npf_probe_ctx *ctx)
{
	int n = 0;

	for (struct plisten *pl = LIST_FIRST(&ctx->listeners); pl; pl = LIST_NEXT(pl, link))
		pl->keep = false;
	ctx->listen_error[0] = '\0';
	for (size_t i = 0; i < ctx->n_cands; i++) {
		const struct npf_addr *a = &ctx->cands[i].addr;
		struct plisten *pl = NULL, *found = NULL;
		int r;

		for (struct plisten *it = LIST_FIRST(&ctx->listeners); it; it = LIST_NEXT(it, link))
			if (npf_addr_equal(&it->addr, a))
				found = it;
		if (found) {
			found->keep = true;
			continue;
		}
		r = plisten_open(ctx, a, &pl);
		if (r < 0) {
			char txt[INET6_ADDRSTRLEN];

			log_warnx("probe: cannot listen on %s port %u: %s; not announcing it",
				  npf_addr_str(a, txt, sizeof(txt)), ctx->port, strerror(-r));
			if (!ctx->listen_error[0])
				snprintf(ctx->listen_error, sizeof(ctx->listen_error),
					 "%s port %u: %s", txt, ctx->port, strerror(-r));
			/* Whatever holds the port there (a local user who bound it
			 * first) must not answer as us: the address is not announced. */
			ctx->cands[i].addr.family = AF_UNSPEC;
			continue;
		}
		if (!pl)
			continue;
		pl->keep = true;
		LIST_INSERT_HEAD(&ctx->listeners, pl, link);
	}
	{
		size_t k = 0;

		for (size_t i = 0; i < ctx->n_cands; i++)
			if (ctx->cands[i].addr.family != AF_UNSPEC)
				ctx->cands[k++] = ctx->cands[i];
		ctx->n_cands = k;
	}
	for (struct plisten *pl = LIST_FIRST(&ctx->listeners), *nx; pl; pl = nx) {
		nx = LIST_NEXT(pl, link);
		if (pl->keep) {
			n++;
			continue;
		}
		LIST_REMOVE(pl, link);
		plisten_free(pl);
	}
	return n;
}

void server_shutdown(struct npf_probe_ctx *ctx)
{
	while (!LIST_EMPTY(&ctx->listeners)) {
		struct plisten *pl = LIST_FIRST(&ctx->listeners);

		LIST_REMOVE(pl, link);
		plisten_free(pl);
	}
	while (!LIST_EMPTY(&ctx->revjobs))
		srv_revjob_free(LIST_FIRST(&ctx->revjobs));
	while (!LIST_EMPTY(&ctx->sconns))
		sconn_free(LIST_FIRST(&ctx->sconns));
	while (!LIST_EMPTY(&ctx->dlisteners))
		dlisten_free(LIST_FIRST(&ctx->dlisteners));
}
