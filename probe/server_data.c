// SPDX-License-Identifier: MIT
/* Data listeners: one per path, on our address the path tests, echoing the bulk payload
 * for the one connection that proves the prober's token (any other source or a racer is
 * dropped). Opened for a peer's OPEN_DATA (probe/server.c) and, for the reverse probes of
 * our own checks, before our REVERSE_REQ (probe/check_paths.c). Calls no other file of
 * either. */
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

/* The echo's buffer: a bulk is a few full-size frames (lib/loadrule.h), and every data
 * listener of a whole job checking at once may be echoing: small, for peak RSS. */
#define ECHO_BUF (16u << 10)

uint32_t dlisten_count(const struct npf_probe_ctx *ctx, const struct npf_addr *a)
{
	uint32_t n = 0;

	for (const struct dlisten *dl = LIST_FIRST(&ctx->dlisteners); dl; dl = LIST_NEXT(dl, link))
		if (npf_addr_equal(&dl->remote, a))
			n++;
	return n;
}

/* Stops listening: after the prober proved the token nobody else gets in. */
static void dlisten_stop(struct dlisten *dl)
{
	dl->lsrc = sd_event_source_disable_unref(dl->lsrc);
	if (dl->lfd >= 0)
		close(dl->lfd);
	dl->lfd = -1;
}

void dlisten_free(struct dlisten *dl)
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

void dlisten_release(struct npf_probe_ctx *ctx, const void *owner)
{
	for (struct dlisten *dl = LIST_FIRST(&ctx->dlisteners), *nx; dl; dl = nx) {
		nx = LIST_NEXT(dl, link);
		if (dl->owner != owner)
			continue;
		dl->owner = NULL;
		dl->allow = NULL;
		dl->n_allow = 0;
		if (!dl->win)
			dlisten_free(dl);
	}
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
	ctx->n_data_won++;
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
 * (the prober sends DATA_AUTH as soon as it is connected, so one that waits is not it),
 * one from an unknown source first: such a one never pushes out a connection from the
 * asker's own addresses (NULL: it is not taken). */
static struct dconn *dconn_slot(struct dlisten *dl, bool known)
{
	struct dconn *old = NULL, *old_unknown = NULL;

	for (size_t i = 0; i < PROBE_DATA_PENDING; i++) {
		struct dconn *dc = &dl->pend[i];

		if (!fconn_is_open(&dc->c))
			return dc;
		if (!old || dc->seq < old->seq)
			old = dc;
		if (!dc->known && (!old_unknown || dc->seq < old_unknown->seq))
			old_unknown = dc;
	}
	if (old_unknown)
		old = old_unknown;
	else if (!known)
		return NULL;
	dl->ctx->n_data_impostors++;
	fconn_close(&old->c);
	return old;
}

/* The asker's control address or one it announced as its own: where its probe comes
 * from unless its kernel picks another source (a secondary address, an excluded port). */
static bool source_known(const struct dlisten *dl, const struct npf_addr *from)
{
	if (npf_addr_equal(from, &dl->remote))
		return true;
	for (size_t i = 0; i < dl->n_allow; i++)
		if (npf_addr_equal(from, &dl->allow[i]))
			return true;
	return false;
}

/* Accepts until a valid DATA_AUTH (data_frame): whoever connects first does not decide. A
 * connection from an unknown source waits only in a slot no known source needs. */
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
		bool known;
		int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0)
			return 0;
		known = fconn_from_sockaddr(&ss, &from, NULL) == 0 && source_known(dl, &from);
		dc = dconn_slot(dl, known);
		if (!dc) {
			dl->ctx->n_data_impostors++;
			close(cfd);
			continue;
		}
		dc->dl = dl;
		dc->seq = ++dl->n_accepted;
		dc->known = known;
		if (fconn_adopt(&dc->c, dl->ctx->event, cfd, 1024, &data_srv_ops, dc) < 0)
			continue; /* fconn_adopt closed it */
	}
	return 0;
}

int dlisten_open(struct npf_probe_ctx *ctx, const struct dlisten_req *rq, uint16_t *port,
		 uint8_t token[NPF_WIRE_TOKEN_LEN], uint8_t nonce[NPF_WIRE_NONCE_LEN],
		 bool *has_nonce)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct dlisten *dl;
	int r;

	/* Both sides' listeners share one cap: a peer's OPEN_DATAs and our reverse requests. */
	if (ctx->n_dlisteners >= PROBE_DLISTEN_FACTOR * ctx->max_conns)
		return -EBUSY;
	dl = calloc(1, sizeof(*dl));
	if (!dl)
		return -ENOMEM;
	dl->ctx = ctx;
	dl->owner = rq->owner;
	dl->remote = *rq->remote;
	dl->allow = rq->allow;
	dl->n_allow = rq->n_allow;
	dl->lfd = -1;
	for (size_t i = 0; i < PROBE_DATA_PENDING; i++)
		dl->pend[i].c.fd = -1;
	dl->bulk = rq->bulk;
	LIST_INSERT_HEAD(&ctx->dlisteners, dl, link);
	ctx->n_dlisteners++;
	randombytes_buf(dl->token, sizeof(dl->token));
	/* Exactly the path's address, ephemeral port: where NCCL/Gloo/MPI listen. */
	sl = fconn_sockaddr(rq->local, 0, &ss);
	dl->lfd = socket(rq->local->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (dl->lfd < 0 || bind(dl->lfd, (struct sockaddr *)&ss, sl) < 0 ||
	    listen(dl->lfd, PROBE_DATA_BACKLOG) < 0)
		goto fail;
	sl = sizeof(ss);
	if (getsockname(dl->lfd, (struct sockaddr *)&ss, &sl) < 0 ||
	    fconn_from_sockaddr(&ss, &(struct npf_addr){0}, port) < 0)
		goto fail;
	r = sd_event_add_io(ctx->event, &dl->lsrc, dl->lfd, EPOLLIN, dlisten_accept, dl);
	if (r < 0)
		goto fail;
	r = sd_event_add_time_relative(ctx->event, &dl->timer, CLOCK_MONOTONIC, rq->lifetime_usec,
				       1000, dlisten_timer, dl);
	if (r < 0)
		goto fail;
	/* Authenticated: both sides derive the token from the session and this listener's
	 * fresh nonce, so it never travels on the control connection and a token seen on
	 * the wire opens no later listener, even on the same port. */
	randombytes_buf(nonce, NPF_WIRE_NONCE_LEN);
	*has_nonce = false;
	if (fconn_data_token(rq->sess, *port, nonce, dl->token) == 0 &&
	    fconn_data_reply_mac(rq->sess, *port, nonce, ctx->node, ctx->instance,
				 dl->reply_mac) == 0) {
		memset(token, 0, NPF_WIRE_TOKEN_LEN);
		*has_nonce = dl->has_mac = true;
	} else {
		memcpy(token, dl->token, NPF_WIRE_TOKEN_LEN);
	}
	return 0;
fail:
	log_debug("probe: data listener failed: %s", strerror(errno));
	dlisten_free(dl);
	return -EIO;
}
