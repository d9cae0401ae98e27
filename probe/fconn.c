// SPDX-License-Identifier: MIT
/* Framed, non-blocking TCP connections on sd-event: header + strict JSON frames in,
 * a capped output queue out, and a raw mode for bulk data. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

uint64_t fconn_now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000ull;
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

enum npf_outcome fconn_errno_outcome(int err)
{
	switch (err) {
	case ECONNREFUSED:
	case ECONNRESET:
		return NPF_OUT_REFUSED;
	case ETIMEDOUT:
		return NPF_OUT_TIMEOUT;
	case EMFILE:
	case ENFILE:
	case ENOBUFS:
	case ENOMEM:
	case EAGAIN:
	case EADDRNOTAVAIL: /* connect() without bind: no ephemeral port left */
		/* Our own resources ran out: no evidence about the path either way. */
		return NPF_OUT_NOT_PROBED;
	default:
		/* ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL, EACCES/EPERM (local policy)... */
		return NPF_OUT_UNREACHABLE;
	}
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
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->in);
	c->in = NULL;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	c->in_len = c->hdr_len = 0;
}

static int set_events(struct fconn *c)
{
	uint32_t ev;

	if (!c->io)
		return 0;
	if (c->connecting)
		ev = EPOLLOUT;
	else
		ev = EPOLLIN | (c->out_off < c->out_len ? EPOLLOUT : 0);
	return sd_event_source_set_io_events(c->io, ev);
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
	}
	return r;
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

int fconn_connect(struct fconn *c, sd_event *e, const struct npf_addr *dst, uint16_t port,
		  uint32_t max_payload, const struct fconn_ops *ops, void *owner)
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
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;
		}
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		if (c->closing)
			(void)shutdown(c->fd, SHUT_WR);
	}
	return 0;
}

int fconn_send(struct fconn *c, uint16_t type, const json_t *payload)
{
	uint8_t *f;
	size_t len;
	int r;

	if (c->fd < 0 || c->closing)
		return -ENOTCONN;
	if (!payload)
		return -ENOMEM;
	r = npf_wire_frame(type, payload, &f, &len);
	if (r < 0)
		return r;
	r = queue(c, f, len);
	free(f);
	if (r < 0)
		return r;
	return set_events(c);
}

void fconn_send_error(struct fconn *c, enum npf_wire_err code, const char *msg)
{
	struct npf_msg_error m = { .code = code };
	json_t *j;
	uint8_t *f;
	size_t len;

	if (c->fd < 0 || c->closing)
		return;
	snprintf(m.message, sizeof(m.message), "%s", msg ? msg : "");
	j = npf_wire_error_to_json(&m);
	if (j && npf_wire_frame(NPF_MSG_ERROR, j, &f, &len) == 0) {
		(void)queue(c, f, len);
		free(f);
	}
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
	if (!c->io)
		return -ENOTCONN;
	return sd_event_source_set_io_events(c->io, events);
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
			r = npf_wire_hdr_decode(c->hdr, c->hdr_len, c->max_payload, &c->h);
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
		r = npf_wire_parse_json(c->in, c->in_len, &j);
		free(c->in);
		c->in = NULL;
		c->in_len = c->hdr_len = 0;
		if (r < 0)
			return protocol_error(c, r);
		frames++;
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
