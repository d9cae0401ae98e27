// SPDX-License-Identifier: MIT
/* The probed side: control listeners on every candidate address, inbound control
 * connections (HELLO, OPEN_DATA, REVERSE_REQ), data listeners that echo the bulk payload
 * for the one connection that proves the prober's token, and reverse-probe jobs run on
 * behalf of a peer. */
#include "internal.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "candidates.h"
#include "log.h"

#define ECHO_BUF (64u << 10)
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
};

struct dlisten {
	struct npf_probe_ctx *ctx;
	struct sconn *sc;	/* the control connection that asked; NULL once it is gone */
	struct npf_addr remote; /* the prober: the only source a data connection may have */
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
	uint32_t bulk;
	size_t rcvd, sent;
	size_t extra; /* reply bytes sent ahead of the echo */
	uint8_t *buf;
	size_t buf_len;
	LIST_ENTRY(dlisten) link; /* ctx->dlisteners */
};

struct revjob {
	struct npf_probe_ctx *ctx;
	struct sconn *sc;
	struct npf_addr remote;
	struct npf_msg_reverse_result res;
	struct tprobe *tp[NPF_WIRE_MAX_TARGETS];
	struct npf_addr targets[NPF_WIRE_MAX_TARGETS];
	const char *skip[NPF_WIRE_MAX_TARGETS]; /* static reason a target is not probed, or NULL */
	uint64_t expect, deadline;
	uint64_t not_before; /* the requester's HELLO: its check had begun */
	uint32_t bytes;
	size_t n, started, pending; /* targets, started so far, still running */
	LIST_ENTRY(revjob) link;    /* ctx->revjobs */
};

static void throttle(struct npf_probe_ctx *ctx);
static void dlisten_free(struct dlisten *dl);
static void rev_kick(struct npf_probe_ctx *ctx);

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

static uint32_t count_dlisteners(const struct npf_probe_ctx *ctx, const struct npf_addr *a)
{
	uint32_t n = 0;

	for (const struct dlisten *dl = LIST_FIRST(&ctx->dlisteners); dl; dl = LIST_NEXT(dl, link))
		if (npf_addr_equal(&dl->remote, a))
			n++;
	return n;
}

static uint32_t count_revjobs(const struct npf_probe_ctx *ctx, const struct npf_addr *a)
{
	uint32_t n = 0;

	for (const struct revjob *rj = LIST_FIRST(&ctx->revjobs); rj; rj = LIST_NEXT(rj, link))
		if (npf_addr_equal(&rj->remote, a))
			n++;
	return n;
}

/* ---- reverse jobs ---- */

static void revjob_free(struct revjob *rj)
{
	for (size_t i = 0; i < rj->n; i++) {
		if (rj->tp[i]) {
			tprobe_free(rj->tp[i]);
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

		if (rj->tp[i] != tp)
			continue;
		r = tprobe_result(tp);
		o = &rj->res.results[i];
		o->addr = *tprobe_target(tp);
		o->outcome = r->outcome;
		o->rtt_us = r->rtt_us;
		snprintf(o->egress, sizeof(o->egress), "%s", r->egress);
		snprintf(o->detail, sizeof(o->detail), "%s", r->detail);
		o->ev = r->ev;
		tprobe_free(tp);
		rj->tp[i] = NULL;
		rj->pending--;
		rj->ctx->n_rev_active--;
		break;
	}
	rev_kick(rj->ctx);
}

/* Sends the result once every target has one, and frees the job. */
static void revjob_complete(struct revjob *rj)
{
	json_t *j;

	rj->res.n_results = rj->n;
	if (rj->sc && fconn_is_open(&rj->sc->c)) {
		j = npf_wire_reverse_result_to_json(&rj->res);
		if (fconn_send(&rj->sc->c, NPF_MSG_REVERSE_RESULT, j) < 0)
			log_debug("probe: cannot send REVERSE_RESULT to %s", rj->sc->peer_node);
		json_decref(j);
		/* Give the requester time to read it before the idle timer. */
		(void)sd_event_source_set_time_relative(rj->sc->timer, PROBE_SCONN_IDLE_USEC);
	}
	revjob_free(rj);
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

static void rev_kick(struct npf_probe_ctx *ctx)
{
	uint64_t now = npf_now(CLOCK_MONOTONIC);

	for (struct revjob *rj = LIST_FIRST(&ctx->revjobs), *nx; rj; rj = nx) {
		nx = LIST_NEXT(rj, link);
		/* One peer address cannot take every reverse slot: a requester that
		 * keeps 64 slow targets busy still leaves the other peers theirs. */
		while (rj->started < rj->n && ctx->n_rev_active < PROBE_MAX_REV_ACTIVE &&
		       rev_active_of(ctx, &rj->remote) < PROBE_MAX_REV_ACTIVE_PER_PEER) {
			size_t i = rj->started++;
			struct npf_rev_result *o = &rj->res.results[i];

			o->addr = rj->targets[i];
			if (rj->skip[i]) {
				/* Never connected to: no probe slot, no packet. */
				o->outcome = NPF_OUT_NOT_PROBED;
				snprintf(o->detail, sizeof(o->detail), "%s", rj->skip[i]);
				continue;
			}
			/* Only other daemons' control ports (tprobe uses ctx->port), and the
			 * data port only after that daemon proved to be the requester. */
			if (now < rj->deadline &&
			    tprobe_start_shared(ctx, TPROBE_FOR_PEER, &rj->targets[i], rj->expect,
						rj->bytes, rj->not_before, rj->deadline,
						revjob_probe_done, rj, &rj->tp[i]) == 0) {
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

/* ---- inbound control connections ---- */

static void sconn_free(struct sconn *sc)
{
	struct npf_probe_ctx *ctx = sc->ctx;

	for (struct revjob *rj = LIST_FIRST(&ctx->revjobs), *nx; rj; rj = nx) {
		nx = LIST_NEXT(rj, link);
		if (rj->sc == sc)
			revjob_free(rj);
	}
	/* Data listeners die with the connection that asked for them (a peer that
	 * hangs up cannot leave them behind); an accepted one finishes its echo. */
	for (struct dlisten *dl = LIST_FIRST(&ctx->dlisteners), *nx; dl; dl = nx) {
		nx = LIST_NEXT(dl, link);
		if (dl->sc != sc)
			continue;
		dl->sc = NULL;
		if (!dl->win)
			dlisten_free(dl);
	}
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

/* Stops listening: after the prober proved the token nobody else gets in. */
static void dlisten_stop(struct dlisten *dl)
{
	dl->lsrc = sd_event_source_disable_unref(dl->lsrc);
	if (dl->lfd >= 0)
		close(dl->lfd);
	dl->lfd = -1;
}

static void dlisten_free(struct dlisten *dl)
{
	dlisten_stop(dl);
	dl->timer = sd_event_source_disable_unref(dl->timer);
	for (size_t i = 0; i < PROBE_DATA_PENDING; i++)
		fconn_close(&dl->pend[i].c);
	free(dl->buf);
	LIST_REMOVE(dl, link);
	dl->ctx->n_dlisteners--;
	free(dl);
}

static int dlisten_timer(sd_event_source *s, uint64_t usec, void *ud)
{
	(void)s;
	(void)usec;
	dlisten_free(ud);
	return 0;
}

static void echo_update(struct dlisten *dl)
{
	uint32_t ev = 0;

	if (dl->buf_len < ECHO_BUF && dl->rcvd < dl->bulk)
		ev |= EPOLLIN;
	if (dl->buf_len)
		ev |= EPOLLOUT;
	(void)sd_event_source_set_io_events(dl->win->c.io, ev);
}

static int echo_raw(struct fconn *c, uint32_t revents)
{
	struct dlisten *dl = ((struct dconn *)c->owner)->dl;

	if ((revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) && dl->rcvd < dl->bulk &&
	    dl->buf_len < ECHO_BUF) {
		size_t want = ECHO_BUF - dl->buf_len;
		ssize_t n;

		if (want > dl->bulk - dl->rcvd)
			want = dl->bulk - dl->rcvd;
		n = recv(c->fd, dl->buf + dl->buf_len, want, MSG_DONTWAIT);
		if (n == 0 ||
		    (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			dlisten_free(dl);
			return 1;
		}
		if (n > 0) {
			dl->buf_len += (size_t)n;
			dl->rcvd += (size_t)n;
		}
	} else if ((revents & (EPOLLHUP | EPOLLERR)) && !(revents & EPOLLOUT)) {
		dlisten_free(dl);
		return 1;
	}
	if (dl->buf_len) {
		ssize_t w = send(c->fd, dl->buf, dl->buf_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			dlisten_free(dl);
			return 1;
		}
		if (w > 0) {
			memmove(dl->buf, dl->buf + w, dl->buf_len - (size_t)w);
			dl->buf_len -= (size_t)w;
			dl->sent += (size_t)w;
		}
	}
	if (dl->sent >= dl->bulk + dl->extra) {
		/* Everything was read, so closing sends FIN, not RST. */
		dlisten_free(dl);
		return 1;
	}
	echo_update(dl);
	return 0;
}

/* Drops a data connection that did not prove the token, without a word: the listener
 * keeps waiting for the prober's. */
static int dconn_drop(struct dconn *dc)
{
	dc->dl->ctx->n_data_impostors++;
	fconn_close(&dc->c);
	return 1;
}

static int data_frame(struct fconn *c, uint16_t type, json_t *j)
{
	struct dconn *dc = c->owner;
	struct dlisten *dl = dc->dl;
	struct npf_probe_ctx *ctx = dl->ctx;
	struct npf_msg_data_auth da;
	struct npf_msg_data_auth_reply rep = {.instance = ctx->instance};
	json_t *o;
	int r;

	if (npf_wire_msg_allowed(type, NPF_WST_DATA, NPF_WROLE_PROBER) < 0 ||
	    npf_wire_data_auth_from_json(j, &da) < 0 ||
	    sodium_memcmp(da.token, dl->token, sizeof(da.token)) != 0)
		return dconn_drop(dc);
	/* The prober: nobody else gets in, and the other candidates go. */
	dl->win = dc;
	dlisten_stop(dl);
	for (size_t i = 0; i < PROBE_DATA_PENDING; i++)
		if (&dl->pend[i] != dc && fconn_is_open(&dl->pend[i].c)) {
			ctx->n_data_impostors++;
			fconn_close(&dl->pend[i].c);
		}
	snprintf(rep.node, sizeof(rep.node), "%s", ctx->node);
	rep.has_mac = dl->has_mac;
	memcpy(rep.mac, dl->reply_mac, sizeof(rep.mac));
	o = npf_wire_data_auth_reply_to_json(&rep);
	r = fconn_send(c, NPF_MSG_DATA_AUTH_REPLY, o);
	json_decref(o);
	dl->buf = malloc(ECHO_BUF);
	if (r < 0 || !dl->buf || c->out_len - c->out_off > ECHO_BUF) {
		dlisten_free(dl);
		return 1;
	}
	/* Raw mode ends fconn's own flushing: the queued reply moves to the head of
	 * the echo buffer so it still goes out before any echoed byte. */
	dl->buf_len = c->out_len - c->out_off;
	memcpy(dl->buf, c->out + c->out_off, dl->buf_len);
	dl->extra = dl->buf_len;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	(void)fconn_set_raw(c, EPOLLIN | EPOLLOUT);
	return 0;
}

static int data_error(struct fconn *c, int err)
{
	struct dconn *dc = c->owner;

	(void)err;
	/* Framed only before DATA_AUTH: a candidate that hangs up or sends garbage goes
	 * alone; the listener still waits for the prober. */
	return dconn_drop(dc);
}

static int data_connected(struct fconn *c, int err)
{
	(void)c;
	(void)err;
	return 0;
}

static const struct fconn_ops data_srv_ops = {
    .connected = data_connected,
    .frame = data_frame,
    .error = data_error,
    .raw = echo_raw,
};

/* A free slot for a data connection; when all are taken the oldest candidate makes room
 * (the prober sends DATA_AUTH as soon as it is connected, so one that waits is not it). */
static struct dconn *dconn_slot(struct dlisten *dl)
{
	struct dconn *old = NULL;

	for (size_t i = 0; i < PROBE_DATA_PENDING; i++) {
		struct dconn *dc = &dl->pend[i];

		if (!fconn_is_open(&dc->c))
			return dc;
		if (!old || dc->seq < old->seq)
			old = dc;
	}
	dl->ctx->n_data_impostors++;
	fconn_close(&old->c);
	return old;
}

/* Accepts until a valid DATA_AUTH (data_frame): whoever connects first does not decide. A
 * connection from another address than the prober's is closed at once, unread. */
static int dlisten_accept(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	struct dlisten *dl = ud;

	(void)s;
	(void)revents;
	for (int k = 0; k < PROBE_DATA_BACKLOG && dl->lfd >= 0; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct npf_addr from;
		struct dconn *dc;
		int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0)
			return 0;
		if (fconn_from_sockaddr(&ss, &from, NULL) < 0 ||
		    !npf_addr_equal(&from, &dl->remote)) {
			dl->ctx->n_data_impostors++;
			close(cfd);
			continue;
		}
		dc = dconn_slot(dl);
		dc->dl = dl;
		dc->seq = ++dl->n_accepted;
		if (fconn_adopt(&dc->c, dl->ctx->event, cfd, 1024, &data_srv_ops, dc) < 0)
			continue; /* fconn_adopt closed it */
	}
	return 0;
}

static int on_open_data(struct sconn *sc, json_t *j)
{
	struct npf_probe_ctx *ctx = sc->ctx;
	struct npf_msg_open_data od;
	struct npf_msg_open_data_reply rep = {0};
	struct sockaddr_storage ss;
	socklen_t sl;
	struct dlisten *dl;
	int r;

	if (npf_wire_open_data_from_json(j, &od) < 0)
		return sconn_reject(sc, NPF_WERR_BAD_REQUEST, "malformed OPEN_DATA");
	if (sc->n_open_data >= PROBE_MAX_OPEN_DATA_PER_CONN ||
	    ctx->n_dlisteners >= PROBE_DLISTEN_FACTOR * ctx->max_conns ||
	    count_dlisteners(ctx, &sc->remote) >= 2 * per_peer_conns(ctx))
		return sconn_reject(sc, NPF_WERR_BUSY, "too many data listeners");
	dl = calloc(1, sizeof(*dl));
	if (!dl)
		return sconn_reject(sc, NPF_WERR_BUSY, "out of memory");
	dl->ctx = ctx;
	dl->sc = sc;
	dl->remote = sc->remote;
	dl->lfd = -1;
	for (size_t i = 0; i < PROBE_DATA_PENDING; i++)
		dl->pend[i].c.fd = -1;
	dl->bulk = od.bytes;
	LIST_INSERT_HEAD(&ctx->dlisteners, dl, link);
	ctx->n_dlisteners++;
	sc->n_open_data++;
	randombytes_buf(dl->token, sizeof(dl->token));
	/* Exactly the probed address, ephemeral port: where NCCL/Gloo/MPI listen. */
	sl = fconn_sockaddr(&sc->local, 0, &ss);
	dl->lfd = socket(sc->local.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (dl->lfd < 0 || bind(dl->lfd, (struct sockaddr *)&ss, sl) < 0 ||
	    listen(dl->lfd, PROBE_DATA_BACKLOG) < 0)
		goto fail;
	sl = sizeof(ss);
	if (getsockname(dl->lfd, (struct sockaddr *)&ss, &sl) < 0 ||
	    fconn_from_sockaddr(&ss, &(struct npf_addr){0}, &rep.port) < 0)
		goto fail;
	r = sd_event_add_io(ctx->event, &dl->lsrc, dl->lfd, EPOLLIN, dlisten_accept, dl);
	if (r < 0)
		goto fail;
	r = sd_event_add_time_relative(ctx->event, &dl->timer, CLOCK_MONOTONIC,
				       PROBE_DATA_LIFETIME_USEC, 1000, dlisten_timer, dl);
	if (r < 0)
		goto fail;
	/* Authenticated: both sides derive the token from the session and this listener's
	 * fresh nonce, so it never travels on the control connection and a token seen on
	 * the wire opens no later listener, even on the same port. */
	randombytes_buf(rep.nonce, sizeof(rep.nonce));
	if (fconn_data_token(&sc->c, rep.port, rep.nonce, dl->token) == 0 &&
	    fconn_data_reply_mac(&sc->c, rep.port, rep.nonce, ctx->node, ctx->instance,
				 dl->reply_mac) == 0) {
		memset(rep.token, 0, sizeof(rep.token));
		rep.has_nonce = dl->has_mac = true;
	} else {
		memcpy(rep.token, dl->token, sizeof(rep.token));
	}
	return send_or_drop(sc, NPF_MSG_OPEN_DATA_REPLY, npf_wire_open_data_reply_to_json(&rep));
fail:
	log_debug("probe: data listener for %s failed: %s", sc->peer_node, strerror(errno));
	dlisten_free(dl);
	return sconn_reject(sc, NPF_WERR_BUSY, "cannot open a data listener");
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

	rq = malloc(sizeof(*rq));
	if (!rq)
		return sconn_reject(sc, NPF_WERR_BUSY, "out of memory");
	if (npf_wire_reverse_req_from_json(j, rq) < 0) {
		free(rq);
		return sconn_reject(sc, NPF_WERR_BAD_REQUEST, "malformed REVERSE_REQ");
	}
	if (sc->n_rev >= PROBE_MAX_REVJOBS_PER_CONN || ctx->n_revjobs >= PROBE_MAX_REVJOBS ||
	    count_revjobs(ctx, &sc->remote) >= PROBE_MAX_REVJOBS_PER_PEER) {
		struct npf_msg_error e = {.code = NPF_WERR_BUSY};

		/* Not fatal for the connection: the requester records "busy". */
		snprintf(e.message, sizeof(e.message), "reverse request %u: too many running",
			 rq->id);
		free(rq);
		return send_or_drop(sc, NPF_MSG_ERROR, npf_wire_error_to_json(&e));
	}
	rj = calloc(1, sizeof(*rj));
	if (!rj) {
		free(rq);
		return sconn_reject(sc, NPF_WERR_BUSY, "out of memory");
	}
	rj->ctx = ctx;
	rj->sc = sc;
	rj->remote = sc->remote;
	rj->res.id = rq->id;
	rj->expect = sc->peer_instance;
	/* Our own check's "ok" of the same path, proven since the requester's check began,
	 * answers this request without a second probe (tprobe_start_shared). */
	rj->not_before = sc->t_hello;
	/* We send what we would send for our own probes, never more: a small
	 * request must not move a peer-chosen amount of data. */
	rj->bytes = rq->bytes < ctx->bulk_bytes ? rq->bytes : ctx->bulk_bytes;
	rj->deadline = npf_now(CLOCK_MONOTONIC) + (uint64_t)rq->timeout_ms * USEC_PER_MSEC;
	/* No more targets than we would probe on one peer in our own checks. */
	rj->n = rq->n_targets < PROBE_MAX_FWD_PER_PEER ? rq->n_targets : PROBE_MAX_FWD_PER_PEER;
	memcpy(rj->targets, rq->targets, rj->n * sizeof(rj->targets[0]));
	free(rq);
	/* Only the requester's own announced addresses are probed: anything else
	 * would let any HELLO sender aim this daemon at third parties. */
	for (size_t i = 0; i < rj->n; i++)
		if (!announced(sc, &rj->targets[i]))
			rj->skip[i] =
			    sc->announced_present
				? "not announced by the requester"
				: "not announced by the requester (its HELLO lists no addresses)";
	LIST_INSERT_HEAD(&ctx->revjobs, rj, link);
	ctx->n_revjobs++;
	sc->n_rev++;
	/* Keep the connection until the result is sent. */
	(void)sd_event_source_set_time(sc->timer, rj->deadline + PROBE_SCONN_IDLE_USEC);
	rev_kick(ctx);
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

static const struct fconn_ops sconn_ops = {
    .connected = data_connected,
    .frame = sconn_frame,
    .error = sconn_error,
    .raw = echo_raw, /* never entered: control connections stay framed */
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
		revjob_free(LIST_FIRST(&ctx->revjobs));
	while (!LIST_EMPTY(&ctx->sconns))
		sconn_free(LIST_FIRST(&ctx->sconns));
	while (!LIST_EMPTY(&ctx->dlisteners))
		dlisten_free(LIST_FIRST(&ctx->dlisteners));
}
