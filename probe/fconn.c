// SPDX-License-Identifier: MIT
/* Framed, non-blocking TCP connections on sd-event: header + strict JSON frames in,
 * a capped output queue out, and a raw mode for bulk data. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

enum fa_state {
	FA_CLI_CHALLENGE, /* client: AUTH_HELLO sent, waiting for AUTH_CHALLENGE */
	FA_SRV_HELLO,	  /* server: waiting for AUTH_HELLO */
	FA_SRV_FINISH,	  /* server: AUTH_CHALLENGE sent, waiting for AUTH_FINISH */
	FA_DONE,	  /* every frame is tagged both ways */
};

struct fconn_auth {
	const struct npf_auth_keys *keys; /* borrowed from the context */
	const char *node;		  /* ours, borrowed */
	enum fa_state st;
	bool server;
	struct npf_auth_hello hello; /* the client's offer: half of the transcript */
	uint8_t srv_nonce[NPF_AUTH_NONCE_LEN];
	char srv_node[NPF_NAME_MAX];
	const struct npf_auth_key *key;
	struct npf_auth_session sess;
};

static void auth_free(struct fconn *c)
{
	if (!c->auth)
		return;
	sodium_memzero(c->auth, sizeof(*c->auth));
	free(c->auth);
	c->auth = NULL;
}

static struct fconn_auth *auth_new(const struct npf_auth_keys *keys, const char *node,
				   enum fa_state st)
{
	struct fconn_auth *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->keys = keys;
	a->node = node;
	a->st = st;
	a->server = st != FA_CLI_CHALLENGE;
	return a;
}

socklen_t fconn_sockaddr(const struct npf_addr *a, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, a->addr, 4);
		return sizeof(*sin);
	}
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, a->addr, 16);
		return sizeof(*sin6);
	}
	return 0;
}

int fconn_from_sockaddr(const struct sockaddr_storage *ss, struct npf_addr *a, uint16_t *port)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		a->family = AF_INET;
		a->prefixlen = 32;
		memcpy(a->addr, &sin->sin_addr, 4);
		if (port)
			*port = ntohs(sin->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		a->family = AF_INET6;
		a->prefixlen = 128;
		memcpy(a->addr, &sin6->sin6_addr, 16);
		if (port)
			*port = ntohs(sin6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

bool fconn_is_open(const struct fconn *c)
{
	return c->fd >= 0;
}

bool fconn_is_protocol_error(int err)
{
	return err == -EBADMSG || err == -EMSGSIZE || err == -EPROTONOSUPPORT;
}

void fconn_close(struct fconn *c)
{
	c->io = sd_event_source_disable_unref(c->io);
	c->post = sd_event_source_disable_unref(c->post);
	c->blocked = false;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->in);
	c->in = NULL;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	c->in_len = c->hdr_len = 0;
	auth_free(c);
}

void fconn_abort(struct fconn *c)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	if (c->fd >= 0)
		(void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	fconn_close(c);
}

static int set_events(struct fconn *c)
{
	bool pending = c->out_off < c->out_len;
	uint32_t ev;

	if (!c->io)
		return 0;
	if (c->connecting) {
		ev = EPOLLOUT;
	} else {
		/* The defer source flushes on the next loop iteration; EPOLLOUT only
		 * waits for room once the socket was full. */
		if (pending && !c->blocked && c->post)
			(void)sd_event_source_set_enabled(c->post, SD_EVENT_ONESHOT);
		ev = EPOLLIN | (pending && (c->blocked || !c->post) ? EPOLLOUT : 0);
	}
	return sd_event_source_set_io_events(c->io, ev);
}

static int flush(struct fconn *c);

static int post_cb(sd_event_source *s, void *ud)
{
	struct fconn *c = ud;
	int r;

	(void)s;
	if (c->fd < 0 || c->connecting || c->raw || c->out_off >= c->out_len)
		return 0;
	r = flush(c);
	if (r < 0) {
		c->ops->error(c, r);
		return 0;
	}
	(void)set_events(c);
	return 0;
}

void fconn_set_priority(struct fconn *c, int64_t prio)
{
	if (c->io)
		(void)sd_event_source_set_priority(c->io, prio);
	if (c->post)
		(void)sd_event_source_set_priority(c->post, prio);
}

static int io_cb(sd_event_source *s, int fd, uint32_t revents, void *ud);

static int attach(struct fconn *c, sd_event *e, int fd, uint32_t max_payload,
		  const struct fconn_ops *ops, void *owner)
{
	int r;

	c->fd = fd;
	c->ops = ops;
	c->owner = owner;
	c->max_payload = max_payload > NPF_WIRE_MAX_PAYLOAD ? NPF_WIRE_MAX_PAYLOAD : max_payload;
	r = sd_event_add_io(e, &c->io, fd, c->connecting ? EPOLLOUT : EPOLLIN, io_cb, c);
	if (r < 0) {
		c->io = NULL;
		fconn_close(c);
		return r;
	}
	/* Without it output waits for EPOLLOUT, as it did before (set_events). */
	if (sd_event_add_defer(e, &c->post, post_cb, c) < 0)
		c->post = NULL;
	else
		(void)sd_event_source_set_enabled(c->post, SD_EVENT_OFF);
	return 0;
}

int fconn_adopt(struct fconn *c, sd_event *e, int fd, uint32_t max_payload,
		const struct fconn_ops *ops, void *owner)
{
	int one = 1;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	/* Control frames are tiny and latency-bound. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return attach(c, e, fd, max_payload, ops, owner);
}

void fconn_clamp_mss(int fd)
{
	int mss = NPF_WIRE_CTL_MSS;

	/* Best effort: a kernel that refuses leaves the route's MSS, as before. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss));
}

/* fconn_connect(), with the control connections' MSS clamp when ctl is set (before
 * connect(), so the SYN announces it and the peer's segments are clamped too). */
static int connect_to(struct fconn *c, sd_event *e, const struct npf_addr *dst, uint16_t port,
		      bool ctl, uint32_t max_payload, const struct fconn_ops *ops, void *owner)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, one = 1;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	sl = fconn_sockaddr(dst, port, &ss);
	if (!sl)
		return -EAFNOSUPPORT;
	fd = socket(dst->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (ctl)
		fconn_clamp_mss(fd);
	/* No bind(): the kernel picks the source and egress, exactly as for NCCL. */
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
		int err = -errno;

		close(fd);
		return err;
	}
	/* Even an immediate success is reported from the loop, never synchronously. */
	c->connecting = true;
	return attach(c, e, fd, max_payload, ops, owner);
}

int fconn_connect(struct fconn *c, sd_event *e, const struct npf_addr *dst, uint16_t port,
		  uint32_t max_payload, const struct fconn_ops *ops, void *owner)
{
	return connect_to(c, e, dst, port, false, max_payload, ops, owner);
}

static int queue(struct fconn *c, const uint8_t *buf, size_t len)
{
	size_t pending = c->out_len - c->out_off;
	uint8_t *n;

	if (pending + len > PROBE_MAX_OUTBUF)
		return -ENOBUFS;
	if (c->out_off) {
		memmove(c->out, c->out + c->out_off, pending);
		c->out_len = pending;
		c->out_off = 0;
	}
	n = realloc(c->out, c->out_len + len);
	if (!n)
		return -ENOMEM;
	memcpy(n + c->out_len, buf, len);
	c->out = n;
	c->out_len += len;
	return 0;
}

/* Returns 0 (maybe partially written) or -errno. */
static int flush(struct fconn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				c->blocked = true;
				break;
			}
			return -errno;
		}
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out_len) {
		c->blocked = false;
		c->out_off = c->out_len = 0;
		if (c->closing)
			(void)shutdown(c->fd, SHUT_WR);
	}
	return 0;
}

/* Frames and queues; once authenticated, with the tag behind the payload. */
static int queue_frame(struct fconn *c, uint16_t type, const json_t *payload)
{
	uint8_t *f, *g;
	size_t len;
	bool sealed = false;
	int r;

	r = npf_wire_frame(type, payload, &f, &len);
	if (r < 0)
		return r;
	if (c->auth && c->auth->st == FA_DONE) {
		if (len - NPF_WIRE_HDR_LEN + NPF_AUTH_TAG_LEN > NPF_WIRE_MAX_PAYLOAD) {
			free(f);
			return -EMSGSIZE;
		}
		g = realloc(f, len + NPF_AUTH_TAG_LEN);
		if (!g) {
			free(f);
			return -ENOMEM;
		}
		f = g;
		npf_wire_hdr_encode(f, type, (uint32_t)(len - NPF_WIRE_HDR_LEN + NPF_AUTH_TAG_LEN));
		npf_auth_seal(&c->auth->sess, f, len, f + len);
		len += NPF_AUTH_TAG_LEN;
		sealed = true;
	}
	r = queue(c, f, len);
	free(f);
	/* Only a frame that will leave uses up its sequence number. */
	if (r == 0 && sealed)
		npf_auth_sealed(&c->auth->sess);
	return r;
}

int fconn_send(struct fconn *c, uint16_t type, const json_t *payload)
{
	int r;

	if (c->fd < 0 || c->closing)
		return -ENOTCONN;
	if (!payload)
		return -ENOMEM;
	r = queue_frame(c, type, payload);
	if (r < 0)
		return r;
	return set_events(c);
}

void fconn_send_error(struct fconn *c, enum npf_wire_err code, const char *msg)
{
	struct npf_msg_error m = {.code = code};
	json_t *j;

	if (c->fd < 0 || c->closing)
		return;
	snprintf(m.message, sizeof(m.message), "%s", msg ? msg : "");
	j = npf_wire_error_to_json(&m);
	/* Between the client's AUTH_FINISH and our check of it, the client already seals
	 * its frames and expects ours sealed: an untagged ERROR would read as a forgery.
	 * Only the FIN says it then (a close before any answer: no evidence either way). */
	if (j && !(c->auth && c->auth->server && c->auth->st == FA_SRV_FINISH))
		(void)queue_frame(c, NPF_MSG_ERROR, j);
	json_decref(j);
	c->closing = true;
	c->raw = false;
	free(c->in);
	c->in = NULL;
	c->in_len = c->hdr_len = 0;
	if (flush(c) == 0)
		(void)set_events(c);
}

int fconn_set_raw(struct fconn *c, uint32_t events)
{
	c->raw = true;
	if (c->post)
		(void)sd_event_source_set_enabled(c->post, SD_EVENT_OFF);
	if (!c->io)
		return -ENOTCONN;
	return sd_event_source_set_io_events(c->io, events);
}

/* Refuses the handshake (or a frame whose tag is wrong) and ends as a protocol
 * error: the owner lingers so the ERROR is read, then closes. */
static int auth_refuse(struct fconn *c, const char *msg)
{
	fconn_send_error(c, NPF_WERR_FORBIDDEN, msg);
	return c->ops->error(c, -EBADMSG);
}

/* Client side failed: the owner learns it as a failed connect. */
static int auth_client_fail(struct fconn *c)
{
	fconn_close(c);
	return c->ops->connected(c, -EKEYREJECTED);
}

static int auth_send(struct fconn *c, uint16_t type, json_t *j)
{
	int r = j ? queue_frame(c, type, j) : -ENOMEM;

	json_decref(j);
	if (r == 0)
		r = set_events(c);
	return r;
}

/* One handshake frame; returns like an ops callback. */
static int auth_frame(struct fconn *c, uint16_t type, json_t *j)
{
	struct fconn_auth *a = c->auth;

	switch (a->st) {
	case FA_CLI_CHALLENGE: {
		struct npf_auth_challenge ch;
		struct npf_auth_finish fin;

		if (type != NPF_MSG_AUTH_CHALLENGE || npf_auth_challenge_from_json(j, &ch) < 0)
			return auth_client_fail(c);
		a->key = npf_auth_find(a->keys, ch.id);
		if (!a->key ||
		    npf_auth_proof_check(a->key, &a->hello, ch.node, ch.nonce, true, ch.mac) < 0)
			return auth_client_fail(c);
		npf_auth_proof(a->key, &a->hello, ch.node, ch.nonce, false, fin.mac);
		if (auth_send(c, NPF_MSG_AUTH_FINISH, npf_auth_finish_to_json(&fin)) < 0)
			return auth_client_fail(c);
		snprintf(a->srv_node, sizeof(a->srv_node), "%s", ch.node);
		npf_auth_session_init(&a->sess, a->key, &a->hello, ch.node, ch.nonce, true);
		a->st = FA_DONE;
		return c->ops->connected(c, 0);
	}
	case FA_SRV_HELLO: {
		struct npf_auth_challenge ch = {0};

		if (type != NPF_MSG_AUTH_HELLO)
			return auth_refuse(c, "authentication required");
		if (npf_auth_hello_from_json(j, &a->hello) < 0)
			return auth_refuse(c, "malformed AUTH_HELLO");
		a->key = npf_auth_choose(a->keys, &a->hello);
		if (!a->key)
			return auth_refuse(c, "no common cluster key");
		randombytes_buf(a->srv_nonce, sizeof(a->srv_nonce));
		snprintf(a->srv_node, sizeof(a->srv_node), "%s", a->node);
		snprintf(ch.node, sizeof(ch.node), "%s", a->node);
		memcpy(ch.id, a->key->id, sizeof(ch.id));
		memcpy(ch.nonce, a->srv_nonce, sizeof(ch.nonce));
		npf_auth_proof(a->key, &a->hello, a->srv_node, a->srv_nonce, true, ch.mac);
		if (auth_send(c, NPF_MSG_AUTH_CHALLENGE, npf_auth_challenge_to_json(&ch)) < 0)
			return c->ops->error(c, -ENOBUFS);
		a->st = FA_SRV_FINISH;
		return 0;
	}
	case FA_SRV_FINISH: {
		struct npf_auth_finish fin;

		if (type != NPF_MSG_AUTH_FINISH || npf_auth_finish_from_json(j, &fin) < 0 ||
		    npf_auth_proof_check(a->key, &a->hello, a->srv_node, a->srv_nonce, false,
					 fin.mac) < 0)
			return auth_refuse(c, "authentication failed");
		npf_auth_session_init(&a->sess, a->key, &a->hello, a->srv_node, a->srv_nonce,
				      false);
		a->st = FA_DONE;
		return 0;
	}
	case FA_DONE:
		break;
	}
	return c->ops->frame(c, type, j);
}

static int auth_client_start(struct fconn *c)
{
	struct fconn_auth *a = c->auth;

	snprintf(a->hello.node, sizeof(a->hello.node), "%s", a->node);
	for (size_t i = 0; i < a->keys->n; i++)
		memcpy(a->hello.ids[i], a->keys->k[i].id, NPF_AUTH_ID_LEN);
	a->hello.n_ids = a->keys->n;
	randombytes_buf(a->hello.nonce, sizeof(a->hello.nonce));
	return auth_send(c, NPF_MSG_AUTH_HELLO, npf_auth_hello_to_json(&a->hello));
}

int fconn_connect_ctl(struct fconn *c, struct npf_probe_ctx *ctx, const struct npf_addr *dst,
		      uint32_t max_payload, const struct fconn_ops *ops, void *owner)
{
	int r = connect_to(c, ctx->event, dst, ctx->port, true, max_payload, ops, owner);

	if (r < 0 || !ctx->keys.n)
		return r;
	c->auth = auth_new(&ctx->keys, ctx->node, FA_CLI_CHALLENGE);
	if (!c->auth) {
		fconn_close(c);
		return -ENOMEM;
	}
	return 0;
}

int fconn_auth_server(struct fconn *c, const struct npf_auth_keys *keys, const char *node)
{
	c->auth = auth_new(keys, node, FA_SRV_HELLO);
	return c->auth ? 0 : -ENOMEM;
}

const struct npf_auth_key *fconn_auth_key(const struct fconn *c)
{
	return c->auth && c->auth->st == FA_DONE ? c->auth->key : NULL;
}

const char *fconn_auth_peer(const struct fconn *c)
{
	if (!c->auth || c->auth->st != FA_DONE)
		return NULL;
	return c->auth->server ? c->auth->hello.node : c->auth->srv_node;
}

int fconn_data_token(const struct fconn *c, uint16_t port, const uint8_t nonce[NPF_WIRE_NONCE_LEN],
		     uint8_t token[NPF_WIRE_TOKEN_LEN])
{
	if (!c->auth || c->auth->st != FA_DONE)
		return -ENOKEY;
	npf_auth_data_token(&c->auth->sess, port, nonce, token);
	return 0;
}

int fconn_data_reply_mac(const struct fconn *c, uint16_t port,
			 const uint8_t nonce[NPF_WIRE_NONCE_LEN], const char *node,
			 uint64_t instance, uint8_t mac[NPF_WIRE_MAC_LEN])
{
	if (!c->auth || c->auth->st != FA_DONE)
		return -ENOKEY;
	npf_auth_data_reply_mac(&c->auth->sess, port, nonce, node, instance, mac);
	return 0;
}

static int protocol_error(struct fconn *c, int err)
{
	enum npf_wire_err code = NPF_WERR_BAD_REQUEST;
	const char *msg = "malformed frame";

	if (err == -EPROTONOSUPPORT) {
		code = NPF_WERR_UNSUPPORTED_VERSION;
		msg = "unsupported protocol version";
	} else if (err == -EMSGSIZE) {
		code = NPF_WERR_TOO_LARGE;
		msg = "frame too large";
	}
	fconn_send_error(c, code, msg);
	return c->ops->error(c, err);
}

/* Per wakeup, one connection reads at most this much: a peer streaming bytes
 * cannot keep the loop (and every other connection) waiting. The sources are
 * level-triggered, so what is left wakes us again on the next iteration. */
#define FCONN_READ_BUDGET (64u << 10)
#define FCONN_FRAME_BUDGET 32u

/* Discards input while closing; reports EOF to the owner. */
static int drain(struct fconn *c)
{
	uint8_t buf[4096];

	for (size_t got = 0; got < FCONN_READ_BUDGET;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0)
			got += (size_t)n;
		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return c->ops->error(c, n == 0 ? 0 : -errno);
	}
	return 0;
}

/* Reads exactly as much as the current frame needs, so raw bytes that follow a
 * frame stay in the socket for the raw handler. */
static int read_frames(struct fconn *c)
{
	size_t got = 0, frames = 0;

	while (got < FCONN_READ_BUDGET && frames < FCONN_FRAME_BUDGET) {
		ssize_t n;
		json_t *j = NULL;
		int r;

		if (c->hdr_len < NPF_WIRE_HDR_LEN) {
			n = recv(c->fd, c->hdr + c->hdr_len, NPF_WIRE_HDR_LEN - c->hdr_len,
				 MSG_DONTWAIT);
		} else {
			n = recv(c->fd, c->in + c->in_len, c->h.length - c->in_len, MSG_DONTWAIT);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return c->ops->error(c, -errno);
		}
		if (n == 0)
			return c->ops->error(c, c->hdr_len || c->in_len ? -EBADMSG : 0);
		got += (size_t)n;
		if (c->hdr_len < NPF_WIRE_HDR_LEN) {
			c->hdr_len += (size_t)n;
			if (c->hdr_len < NPF_WIRE_HDR_LEN)
				continue;
			r = npf_wire_hdr_decode(c->hdr, c->hdr_len,
						c->max_payload + (c->auth ? NPF_AUTH_TAG_LEN : 0),
						&c->h);
			if (r < 0)
				return protocol_error(c, r);
			if (c->h.length == 0)
				return protocol_error(c, -EBADMSG);
			c->in = malloc(c->h.length);
			if (!c->in)
				return c->ops->error(c, -ENOMEM);
			c->in_len = 0;
			continue;
		}
		c->in_len += (size_t)n;
		if (c->in_len < c->h.length)
			continue;
		if (c->auth && c->auth->st == FA_DONE) {
			size_t jl = 0;

			/* The tag first: nothing unauthenticated reaches the JSON parser. */
			r = npf_auth_open(&c->auth->sess, c->hdr, c->in, c->in_len, &jl);
			if (r == 0)
				r = npf_wire_parse_json(c->in, jl, &j);
			else
				r = -EKEYREJECTED;
		} else {
			r = npf_wire_parse_json(c->in, c->in_len, &j);
		}
		free(c->in);
		c->in = NULL;
		c->in_len = c->hdr_len = 0;
		if (r == -EKEYREJECTED && c->auth->server)
			return auth_refuse(c, "frame authentication failed");
		if (r == -EKEYREJECTED) {
			/* A prober never takes an untagged or forged frame for the daemon's
			 * answer: nothing it says counts (not-probed), it is no protocol error
			 * of the daemon's (wrong-peer, conclusive). */
			fconn_close(c);
			return c->ops->error(c, -EKEYREJECTED);
		}
		if (r < 0)
			return protocol_error(c, r);
		frames++;
		if (c->auth && c->auth->st != FA_DONE)
			r = auth_frame(c, c->h.type, j);
		else
			r = c->ops->frame(c, c->h.type, j);
		json_decref(j);
		if (r)
			return 1;
		if (c->raw || c->closing || c->fd < 0)
			return 0;
	}
	return 0;
}

static int io_cb(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	struct fconn *c = ud;
	int r;

	(void)s;
	(void)fd;
	if (c->connecting) {
		int err = 0;
		socklen_t l = sizeof(err);

		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
			err = errno;
		/* A spurious wakeup with no error and not yet writable: keep waiting. */
		if (!err && !(revents & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return 0;
		c->connecting = false;
		if (!err)
			(void)set_events(c);
		if (!err && c->auth) {
			/* ops->connected waits for the handshake. */
			if (auth_client_start(c) < 0)
				auth_client_fail(c);
			return 0;
		}
		c->ops->connected(c, -err);
		return 0;
	}
	if (c->raw) {
		c->ops->raw(c, revents);
		return 0;
	}
	if (revents & EPOLLOUT) {
		r = flush(c);
		if (r < 0) {
			c->ops->error(c, r);
			return 0;
		}
		(void)set_events(c);
	}
	if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		if (c->closing)
			drain(c);
		else
			read_frames(c);
	}
	return 0;
}
