// SPDX-License-Identifier: MIT
/* One path probe attempt on the wire: the peer's data listener for the path (asked for on
 * our one control connection to the peer, or given with its reverse request), the connect
 * to that ephemeral data port, the identity check, the bulk echo, kernel egress; after a
 * refused data connect, the path's own control connection (HELLO, OPEN_DATA) to tell why;
 * and the typed evidence of where a deadline found it. Calls no scheduler function. */
#include "tprobe_int.h"

#include <errno.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "candidates.h"
#include "loadrule.h"
#include "log.h"
#include "netlink.h"

static const struct fconn_ops ctl_ops;
static const struct fconn_ops data_ops;

/* Bulk bytes are a function of the offset and the token so that a stale or
 * crossed stream cannot pass for the echo of ours. Byte at offset o: ((o * 2654435761) mod 2^32 >>
 * 24) ^ token[o % 16], filled for buf[0..n) at offsets off.. incrementally (no multiply and modulo
 * per byte: every node of a job checking at once moves a few MB through here). */
static void pattern_fill(const struct tprobe *tp, size_t off, uint8_t *buf, size_t n)
{
	uint32_t x = (uint32_t)off * 2654435761u;
	size_t k = off % NPF_WIRE_TOKEN_LEN;

	for (size_t i = 0; i < n; i++) {
		buf[i] = (uint8_t)((x >> 24) ^ tp->dport.token[k]);
		x += 2654435761u;
		if (++k == NPF_WIRE_TOKEN_LEN)
			k = 0;
	}
}

/* Index of the first byte of buf[0..n) that is not pattern() at off.., or n. */
static size_t pattern_check(const struct tprobe *tp, size_t off, const uint8_t *buf, size_t n)
{
	uint32_t x = (uint32_t)off * 2654435761u;
	size_t k = off % NPF_WIRE_TOKEN_LEN;

	for (size_t i = 0; i < n; i++) {
		if (buf[i] != (uint8_t)((x >> 24) ^ tp->dport.token[k]))
			return i;
		x += 2654435761u;
		if (++k == NPF_WIRE_TOKEN_LEN)
			k = 0;
	}
	return n;
}

static void addr_txt(const struct npf_addr *a, char *buf, size_t sz)
{
	npf_addr_str(a, buf, sz);
}

/* Records the outcome, closes sockets and hands the probe to tp->ended (the scheduler's:
 * done() then runs from the loop, never from inside an I/O callback of this probe). */
__attribute__((format(printf, 3, 4))) void tpath_finish(struct tprobe *tp, enum npf_outcome o,
							const char *fmt, ...)
{
	va_list ap;

	if (tp->phase == TP_DONE)
		return;
	tp->phase = TP_DONE;
	tp->res.outcome = o;
	tp->res.t_end = npf_now(CLOCK_MONOTONIC);
	va_start(ap, fmt);
	vsnprintf(tp->res.detail, sizeof(tp->res.detail), fmt, ap);
	va_end(ap);
	fconn_close(&tp->ctl);
	fconn_close(&tp->data);
	free(tp->rxbuf);
	tp->rxbuf = NULL;
	tp->ended(tp);
}

static void bulk_recv(struct tprobe *tp);

/* True when a non-blocking connect on fd has completed by now. */
static bool connected_now(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int err = 0;
	socklen_t l = sizeof(err);

	return fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) &&
	       getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) == 0 && err == 0;
}

/* A phase that waited for the peer's answer on fd (control or data connection) reached its
 * deadline. TCP_INFO tells a lossy path from a slow daemon (lib/loadrule.h): the peer's
 * kernel acknowledges what reaches it whatever its daemon's load, so a request still
 * unacknowledged after retransmissions was lost on the way. Finishes the probe so and
 * returns true; false: the daemon was silent (the caller says so). */
static bool finish_lost(struct tprobe *tp, int fd, const char *phase, const char *a)
{
	struct tcp_info ti;
	socklen_t l = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0 || !ti.tcpi_unacked ||
	    !ti.tcpi_total_retrans)
		return false;
	tp->res.ev.unacked = ti.tcpi_unacked;
	tp->res.ev.retrans = ti.tcpi_total_retrans;
	tpath_finish(tp, NPF_OUT_TIMEOUT, NPF_DETAIL_LOST, phase, a, ti.tcpi_unacked,
		     ti.tcpi_total_retrans);
	return true;
}

/* Microseconds from t0 to t1 (0 when either is unknown), capped at 600 s. */
static uint32_t span_us(uint64_t t0, uint64_t t1)
{
	uint64_t d = t0 && t1 > t0 ? t1 - t0 : 0;

	return (uint32_t)(d > 600000 * USEC_PER_MSEC ? 600000 * USEC_PER_MSEC : d);
}

/* The typed record of where the deadline found the probe (lib/loadrule.h npf_evidence): a
 * reverse result sends it, our own check judges it; the detail text only says it. */
static void deadline_evidence(struct tprobe *tp, enum tphase ph, bool connected)
{
	static const enum npf_phase phase_of[] = {
	    [TP_QUEUED] = NPF_PHASE_NONE,	  [TP_JOINED] = NPF_PHASE_NONE,
	    [TP_CTL_CONNECT] = NPF_PHASE_CONNECT, [TP_HELLO] = NPF_PHASE_HELLO,
	    [TP_OPEN_DATA] = NPF_PHASE_OPEN_DATA, [TP_DATA_CONNECT] = NPF_PHASE_DATA_CONNECT,
	    [TP_AUTH] = NPF_PHASE_DATA_AUTH,	  [TP_BULK] = NPF_PHASE_BULK,
	    [TP_DONE] = NPF_PHASE_NONE,
	};
	struct npf_evidence *e = &tp->res.ev;
	uint64_t now = npf_now(CLOCK_MONOTONIC);

	e->by_deadline = true;
	e->phase = phase_of[ph];
	e->connected = connected;
	e->bulk = tp->bulk;
	e->sent = tp->sent < tp->bulk ? (uint32_t)tp->sent : tp->bulk;
	e->echoed = tp->rcvd < tp->bulk ? (uint32_t)tp->rcvd : tp->bulk;
	if (ph == TP_CTL_CONNECT)
		e->phase_us = span_us(tp->t_ctl, now);
	if (ph == TP_DATA_CONNECT) {
		e->phase_us = span_us(tp->t0, now);
		e->ctl_us = span_us(tp->t_ctl, tp->t0);
	}
	if (ph == TP_BULK) {
		e->phase_us = span_us(tp->t_bulk, now);
		e->ctl_us = span_us(tp->t_ctl, tp->t_bulk);
	}
}

void tpath_finish_by_phase(struct tprobe *tp)
{
	char a[INET6_ADDRSTRLEN];
	enum tphase ph = tp->phase;
	const struct npf_evidence *e = &tp->res.ev;

	addr_txt(&tp->target, a, sizeof(a));
	tp->res.by_deadline = true;
	if (ph == TP_JOINED && tp->leader) {
		/* Out of time while sharing another consumer's probe: its phase is ours. */
		struct tprobe *l = tp->leader;

		ph = l->phase;
		tp->sent = l->sent;
		tp->rcvd = l->rcvd;
		tp->bulk = l->bulk;
		tp->dport = l->dport;
		tp->t_ctl = l->t_ctl;
		tp->t_bulk = l->t_bulk;
		tp->t0 = l->t0;
		tp->res.ctl_answered = l->res.ctl_answered;
		tp->res.echoed = l->res.echoed;
		tp->res.bulk = l->res.bulk;
		snprintf(tp->res.egress, sizeof(tp->res.egress), "%s", l->res.egress);
	}
	/* The deadline's timer and the socket's answer can be pending in the same loop
	 * iteration when our loop runs late (every node of a job checking at once): ask the
	 * socket before calling the path silent. An answer that did come is our lateness. */
	if (ph == tp->phase && ph == TP_CTL_CONNECT && connected_now(tp->ctl.fd)) {
		deadline_evidence(tp, ph, true);
		tpath_finish(tp, NPF_OUT_TIMEOUT, NPF_DETAIL_LATE_CONNECT, a, tp->ctx->port);
		return;
	}
	if (ph == tp->phase && ph == TP_DATA_CONNECT && connected_now(tp->data.fd)) {
		deadline_evidence(tp, ph, true);
		tpath_finish(tp, NPF_OUT_TIMEOUT, NPF_DETAIL_LATE_DATA, a, tp->dport.port);
		return;
	}
	if (ph == tp->phase && ph == TP_BULK && tp->rxbuf) {
		bulk_recv(tp); /* what the echo brought meanwhile (it may finish the probe) */
		if (tp->phase != TP_BULK)
			return;
		if (tp->rcvd >= tp->bulk) {
			tp->res.by_deadline = false;
			fconn_abort(&tp->data);
			tpath_finish(tp, NPF_OUT_OK, "%s", "");
			return;
		}
	}
	deadline_evidence(tp, ph, false);
	switch (ph) {
	case TP_QUEUED:
		tpath_finish(tp, NPF_OUT_NOT_PROBED,
			     "not started before the deadline (%u probes running)",
			     tp->ctx->n_active_tprobes);
		break;
	case TP_CTL_CONNECT:
		tpath_finish(tp, NPF_OUT_TIMEOUT, NPF_DETAIL_CONNECT_T, a, tp->ctx->port,
			     e->phase_us / 1000);
		break;
	case TP_HELLO:
		if (!finish_lost(tp, ph == tp->phase ? tp->ctl.fd : -1, "HELLO", a))
			tpath_finish(tp, NPF_OUT_TIMEOUT, NPF_DETAIL_NO_HELLO, a);
		break;
	case TP_OPEN_DATA:
		/* Asked on the session (another connection, maybe another address): its
		 * silence is the daemon's (no TCP_INFO: nothing of the path was sent), which
		 * the load rule judges inconclusive and retries (a slow daemon). */
		if (!tp->legacy)
			tpath_finish(tp, NPF_OUT_TIMEOUT,
				     "no OPEN_DATA reply from %s for %s on the control connection",
				     tp->sess ? tp->sess->node : "the peer", a);
		else if (!finish_lost(tp, ph == tp->phase ? tp->ctl.fd : -1, "OPEN_DATA", a))
			tpath_finish(tp, NPF_OUT_TIMEOUT, NPF_DETAIL_NO_OPEN_DATA, a);
		break;
	case TP_DATA_CONNECT:
		tpath_finish(tp, NPF_OUT_TIMEOUT, NPF_DETAIL_DATA_SYN_T, a, tp->dport.port,
			     e->phase_us / 1000, e->ctl_us / 1000);
		break;
	case TP_AUTH:
		if (!finish_lost(tp, ph == tp->phase ? tp->data.fd : -1, "DATA_AUTH", a))
			tpath_finish(tp, NPF_OUT_TIMEOUT, NPF_DETAIL_NO_DATA_AUTH, a,
				     tp->dport.port);
		break;
	case TP_BULK:
		tpath_finish(tp, NPF_OUT_BULK_STALL, NPF_DETAIL_BULK_STALL_T, tp->sent, tp->bulk,
			     tp->rcvd, tp->bulk, e->phase_us / 1000, e->ctl_us / 1000);
		break;
	case TP_DONE:
		break;
	case TP_JOINED:
		tpath_finish(tp, NPF_OUT_NOT_PROBED, "shared probe of %s ended without a result",
			     a);
		break;
	}
}

/* An answer from the wrong daemon: ourselves (docker0 holds the same address on
 * every node) or a third node. */
static bool identity_ok(struct tprobe *tp, const char *node, uint64_t instance)
{
	if (instance == tp->ctx->instance) {
		tpath_finish(tp, NPF_OUT_WRONG_PEER, "answered by %s (this node)", tp->ctx->node);
		return false;
	}
	if (instance != tp->expect) {
		tpath_finish(tp, NPF_OUT_WRONG_PEER, "answered by %s", node);
		return false;
	}
	return true;
}

static void peer_error(struct tprobe *tp, json_t *j)
{
	struct npf_msg_error e;

	if (npf_wire_error_from_json(j, &e) < 0) {
		tpath_finish(tp, NPF_OUT_WRONG_PEER, "malformed ERROR frame");
		return;
	}
	/* A busy peer ran out of slots, a peer of another protocol version cannot be
	 * asked: neither says anything about the path. */
	if (e.code == NPF_WERR_UNSUPPORTED_VERSION) {
		tpath_finish(tp, NPF_OUT_NOT_PROBED, NPF_DETAIL_OTHER_VERSION, e.message);
		return;
	}
	tpath_finish(tp, e.code == NPF_WERR_BUSY ? NPF_OUT_NOT_PROBED : NPF_OUT_REFUSED,
		     "peer error %s: %s", npf_wire_err_name(e.code), e.message);
}

int tprobe_port_from(struct tprobe_port *p, const struct fconn *sess, uint16_t port,
		     const uint8_t token[NPF_WIRE_TOKEN_LEN],
		     const uint8_t nonce[NPF_WIRE_NONCE_LEN], bool has_nonce, const char *node,
		     uint64_t instance)
{
	memset(p, 0, sizeof(*p));
	p->port = port;
	/* With a key the token is derived (never sent) from the listener's nonce: a listener
	 * without one is an older daemon's, which proves nothing on its data port. */
	if (fconn_auth_peer(sess) && !has_nonce)
		return -ENOKEY;
	if (has_nonce && fconn_data_token(sess, port, nonce, p->token) == 0 &&
	    fconn_data_reply_mac(sess, port, nonce, node, instance, p->mac) == 0) {
		p->has_mac = true;
		return 0;
	}
	memcpy(p->token, token, NPF_WIRE_TOKEN_LEN);
	return 0;
}

static void ctl_start(struct tprobe *tp);

/* Connects to the data listener p. A refused connect without a control connection of
 * the path's own is asked again on one (ctl_start): a port that is closed on the path, a
 * firewall that admits only the probe port, and another node holding the address all
 * refuse a data port, and only the path's HELLO tells them apart. */
static void data_start(struct tprobe *tp, const struct tprobe_port *p)
{
	char a[INET6_ADDRSTRLEN];
	int r;

	addr_txt(&tp->target, a, sizeof(a));
	tp->dport = *p;
	tp->phase = TP_DATA_CONNECT;
	tp->t0 = npf_now(CLOCK_MONOTONIC);
	r = fconn_connect(&tp->data, tp->ctx->event, &tp->target, p->port, 1024, &data_ops, tp);
	if (r == -ECONNREFUSED && !tp->legacy)
		ctl_start(tp);
	else if (r < 0)
		tpath_finish(tp, npf_conn_outcome(NPF_STAGE_CONNECT, -r),
			     "connect to data port %s:%u: %s", a, p->port, strerror(-r));
}

/* Asks for the path's data listener on our session to the peer. */
static void session_open(struct tprobe *tp)
{
	struct npf_msg_open_data od = {.bytes = tp->bulk, .addr = tp->target};
	json_t *j;
	int r;

	od.id = ++tp->sess->next_id;
	j = npf_wire_open_data_to_json(&od);
	r = fconn_send(tp->sess->c, NPF_MSG_OPEN_DATA, j);
	json_decref(j);
	if (r < 0) {
		tpath_finish(tp, NPF_OUT_NOT_PROBED, "asking %s for a data listener: %s",
			     tp->sess->node, strerror(-r));
		return;
	}
	tp->open_id = od.id;
	tp->phase = TP_OPEN_DATA;
}

bool tprobe_opened(struct tprobe *tp, const struct npf_msg_open_data_reply *r)
{
	struct tprobe_port p;
	char a[INET6_ADDRSTRLEN];

	if (tp->phase != TP_OPEN_DATA || tp->legacy || !tp->sess || r->id != tp->open_id)
		return false;
	addr_txt(&tp->target, a, sizeof(a));
	tp->res.ctl_answered = true;
	if (!r->port)
		tpath_finish(tp, NPF_OUT_NOT_PROBED, "%s declined a data listener on %s",
			     tp->sess->node, a);
	else if (tprobe_port_from(&p, tp->sess->c, r->port, r->token, r->nonce, r->has_nonce,
				  tp->sess->node, tp->expect) < 0)
		tpath_finish(tp, NPF_OUT_NOT_PROBED, "OPEN_DATA reply from %s without a nonce",
			     tp->sess->node);
	else
		data_start(tp, &p);
	return true;
}

void tprobe_session_lost(struct tprobe *tp)
{
	if (tp->phase == TP_OPEN_DATA && !tp->legacy)
		tpath_finish(tp, NPF_OUT_NOT_PROBED, "the control connection to %s was lost",
			     tp->sess->node);
}

void tpath_begin(struct tprobe *tp)
{
	struct npf_probe_ctx *ctx = tp->ctx;
	const struct npf_inventory *inv;
	const struct npf_iface *ifc = NULL;
	char a[INET6_ADDRSTRLEN], lif[IFNAMSIZ];
	int oif = 0, r;

	tp->phase = TP_CTL_CONNECT;
	/* A reverse target's handshakes began when its request came (tprobe_start_via). */
	if (!tp->given || !tp->t_ctl)
		tp->t_ctl = npf_now(CLOCK_MONOTONIC);
	addr_txt(&tp->target, a, sizeof(a));
	if (inventory_local_iface(ctx, &tp->target, lif)) {
		snprintf(tp->res.egress, sizeof(tp->res.egress), "%s", lif);
		tpath_finish(tp, NPF_OUT_WRONG_PEER, "%s is local to %s", a, ctx->node);
		return;
	}
	/* One kept netlink socket for every probe's lookup (a fresh one if it cannot open). */
	if (!ctx->routes)
		(void)nlsys_routes_open(&ctx->routes);
	r = ctx->routes ? nlsys_routes_get(ctx->routes, &tp->target, &oif)
			: nlsys_route_get(&tp->target, &oif);
	if (r < 0) {
		tpath_finish(tp, npf_conn_outcome(NPF_STAGE_CONNECT, -r), "no route to %s: %s", a,
			     strerror(-r));
		return;
	}
	inv = inventory_current(ctx);
	if (inv)
		ifc = npf_inventory_find_ifindex(inv, oif);
	/* A few full-size frames of the egress MTU: enough to meet a black hole. */
	tp->bulk = npf_bulk_bytes(ifc ? ifc->mtu : 0, tp->bulk);
	tp->res.bulk = tp->bulk;
	if (ifc)
		snprintf(tp->res.egress, sizeof(tp->res.egress), "%s", ifc->name);
	else if (!if_indextoname((unsigned int)oif, tp->res.egress))
		snprintf(tp->res.egress, sizeof(tp->res.egress), "if%d", oif);
	if ((ifc && (ifc->flags & IFF_LOOPBACK)) || strcmp(tp->res.egress, "lo") == 0) {
		tpath_finish(tp, NPF_OUT_WRONG_PEER, "%s is local to %s", a, ctx->node);
		return;
	}
	if (tp->given) {
		tp->res.ctl_answered = true; /* the requester asked: its daemon is there */
		data_start(tp, &tp->dport);
	} else if (tp->sess && !tp->legacy) {
		session_open(tp);
	} else {
		ctl_start(tp);
	}
}

/* The path's own control connection: no session to the peer, or a refused data port to
 * explain. Its phases are the whole exchange again (HELLO, OPEN_DATA, data port). */
static void ctl_start(struct tprobe *tp)
{
	char a[INET6_ADDRSTRLEN];
	int r;

	addr_txt(&tp->target, a, sizeof(a));
	fconn_close(&tp->data);
	tp->legacy = true;
	tp->phase = TP_CTL_CONNECT;
	tp->t_ctl = npf_now(CLOCK_MONOTONIC);
	r = fconn_connect_ctl(&tp->ctl, tp->ctx, &tp->target, NPF_WIRE_PATH_FRAME_MAX, &ctl_ops,
			      tp);
	if (r < 0) {
		tpath_finish(tp, npf_conn_outcome(NPF_STAGE_CONNECT, -r),
			     "connect to %s port %u: %s", a, tp->ctx->port, strerror(-r));
		return;
	}
}

/* ---- control connection ---- */

static int ctl_connected(struct fconn *c, int err)
{
	struct tprobe *tp = c->owner;
	struct npf_msg_hello h;
	struct npf_msg_open_data od = {.id = 1, .bytes = tp->bulk, .addr = tp->target};
	char a[INET6_ADDRSTRLEN];
	json_t *j, *o;
	int r;

	addr_txt(&tp->target, a, sizeof(a));
	if (err) {
		tpath_finish(tp, npf_conn_outcome(NPF_STAGE_CONNECT, -err),
			     "connect to %s port %u: %s", a, tp->ctx->port, strerror(-err));
		return 0;
	}
	npf_wire_path_hello(tp->ctx->node, tp->ctx->instance, &h);
	j = npf_wire_hello_to_json(&h);
	r = fconn_send(c, NPF_MSG_HELLO, j);
	json_decref(j);
	if (r < 0) {
		tpath_finish(tp, NPF_OUT_NOT_PROBED, "sending HELLO: %s", strerror(-r));
		return 0;
	}
	/* OPEN_DATA goes right behind HELLO, in the same segment: the peer handles frames in
	 * order (HELLO first, as it requires), so this saves a round trip and a wakeup on
	 * both sides per path. Identity is still checked on the HELLO reply before the data
	 * port is used, and again on the data port itself. */
	o = npf_wire_open_data_to_json(&od);
	r = fconn_send(c, NPF_MSG_OPEN_DATA, o);
	json_decref(o);
	if (r < 0) {
		tpath_finish(tp, NPF_OUT_NOT_PROBED, "sending OPEN_DATA: %s", strerror(-r));
		return 0;
	}
	tp->phase = TP_HELLO;
	return 0;
}

static int ctl_frame(struct fconn *c, uint16_t type, json_t *j)
{
	struct tprobe *tp = c->owner;
	char a[INET6_ADDRSTRLEN];

	addr_txt(&tp->target, a, sizeof(a));
	if (type == NPF_MSG_ERROR) {
		peer_error(tp, j);
		return 0;
	}
	if (tp->phase == TP_HELLO && type == NPF_MSG_HELLO_REPLY) {
		struct npf_msg_hello_reply hr;

		if (npf_wire_hello_reply_from_json(j, &hr) < 0) {
			tpath_finish(tp, NPF_OUT_WRONG_PEER, "malformed HELLO reply from %s", a);
			return 0;
		}
		npf_wire_hello_reply_clear(&hr);
		if (!identity_ok(tp, hr.node, hr.instance))
			return 0;
		snprintf(tp->peer_node, sizeof(tp->peer_node), "%s", hr.node);
		tp->res.ctl_answered = true;
		/* OPEN_DATA went out with HELLO (ctl_connected): its reply comes next. */
		tp->phase = TP_OPEN_DATA;
		return 0;
	}
	if (tp->phase == TP_OPEN_DATA && type == NPF_MSG_OPEN_DATA_REPLY) {
		struct npf_msg_open_data_reply odr;
		struct tprobe_port p;

		if (npf_wire_open_data_reply_from_json(j, &odr) < 0 || odr.id != 1) {
			tpath_finish(tp, NPF_OUT_WRONG_PEER, "malformed OPEN_DATA reply from %s",
				     a);
			return 0;
		}
		if (!odr.port) {
			tpath_finish(tp, NPF_OUT_NOT_PROBED, "%s declined a data listener on %s",
				     tp->peer_node, a);
			return 0;
		}
		if (tprobe_port_from(&p, &tp->ctl, odr.port, odr.token, odr.nonce, odr.has_nonce,
				     tp->peer_node, tp->expect) < 0) {
			tpath_finish(tp, NPF_OUT_NOT_PROBED,
				     "OPEN_DATA reply from %s without a nonce", a);
			return 0;
		}
		/* The peer frees the data listener with this control connection:
		 * keep it until the data port has answered. */
		data_start(tp, &p);
		return 0;
	}
	tpath_finish(tp, NPF_OUT_WRONG_PEER, "unexpected %s from %s", npf_wire_type_name(type), a);
	return 0;
}

static int ctl_error(struct fconn *c, int err)
{
	struct tprobe *tp = c->owner;
	char a[INET6_ADDRSTRLEN], why[48 + INET6_ADDRSTRLEN];
	/* Until HELLO_REPLY the daemon has not answered: a reset or a close then is its
	 * pre-auth eviction or caps under the load of a whole job, not the path. */
	enum npf_conn_stage st = tp->phase <= TP_HELLO ? NPF_STAGE_UNANSWERED : NPF_STAGE_ANSWERED;

	addr_txt(&tp->target, a, sizeof(a));
	/* A path's frames fit NPF_WIRE_PATH_FRAME_MAX in every version that has the cap: a
	 * bigger one, like another header version, is a protocol mismatch, no evidence. */
	if (err == -EMSGSIZE)
		snprintf(why, sizeof(why), "a frame over %u bytes from %s", NPF_WIRE_PATH_FRAME_MAX,
			 a);
	else
		snprintf(why, sizeof(why), "version %u from %s; ours %u", c->h.version, a,
			 NPF_WIRE_VERSION);
	if (err == -EPROTONOSUPPORT || err == -EMSGSIZE)
		tpath_finish(tp, NPF_OUT_NOT_PROBED, NPF_DETAIL_OTHER_VERSION, why);
	else if (c->closing)
		tpath_finish(tp, NPF_OUT_WRONG_PEER, "protocol error from %s", a);
	else if (err == 0)
		tpath_finish(tp, npf_conn_outcome(st, 0), "%s closed the control connection", a);
	else
		tpath_finish(tp, npf_conn_outcome(st, -err), "control connection to %s: %s", a,
			     strerror(-err));
	return 0;
}

static int no_raw(struct fconn *c, uint32_t revents)
{
	(void)revents;
	fconn_close(c);
	return 0;
}

static const struct fconn_ops ctl_ops = {
    .connected = ctl_connected,
    .frame = ctl_frame,
    .error = ctl_error,
    .raw = no_raw,
};

/* ---- data connection ---- */

static int data_connected(struct fconn *c, int err)
{
	struct tprobe *tp = c->owner;
	struct npf_msg_data_auth da;
	char a[INET6_ADDRSTRLEN];
	json_t *j;
	int r;

	addr_txt(&tp->target, a, sizeof(a));
	if (err == -ECONNREFUSED && !tp->legacy) {
		ctl_start(tp);
		return 0;
	}
	if (err) {
		tpath_finish(tp, npf_conn_outcome(NPF_STAGE_CONNECT, -err), "data port %s:%u: %s",
			     a, tp->dport.port, strerror(-err));
		return 0;
	}
	tp->res.rtt_us = (uint32_t)(npf_now(CLOCK_MONOTONIC) - tp->t0);
	if (!tp->res.rtt_us)
		tp->res.rtt_us = 1;
	memcpy(da.token, tp->dport.token, sizeof(da.token));
	j = npf_wire_data_auth_to_json(&da);
	r = fconn_send(c, NPF_MSG_DATA_AUTH, j);
	json_decref(j);
	if (r < 0) {
		tpath_finish(tp, NPF_OUT_NOT_PROBED, "sending DATA_AUTH: %s", strerror(-r));
		return 0;
	}
	tp->phase = TP_AUTH;
	return 0;
}

static int data_frame(struct fconn *c, uint16_t type, json_t *j)
{
	struct tprobe *tp = c->owner;
	struct npf_msg_data_auth_reply ar;

	if (type == NPF_MSG_ERROR) {
		peer_error(tp, j);
		return 0;
	}
	if (tp->phase != TP_AUTH || type != NPF_MSG_DATA_AUTH_REPLY ||
	    npf_wire_data_auth_reply_from_json(j, &ar) < 0) {
		tpath_finish(tp, NPF_OUT_WRONG_PEER, "unexpected %s on the data port",
			     npf_wire_type_name(type));
		return 0;
	}
	if (!identity_ok(tp, ar.node, ar.instance))
		return 0;
	/* With a key the data port proves it is the daemon we authenticated on the
	 * control connection that announced it. An answer without the proof is no
	 * evidence either way, as any unauthenticated answer. */
	if (tp->dport.has_mac &&
	    (!ar.has_mac || sodium_memcmp(tp->dport.mac, ar.mac, sizeof(ar.mac)) != 0)) {
		tpath_finish(tp, NPF_OUT_NOT_PROBED,
			     "unauthenticated DATA_AUTH_REPLY on the data port");
		return 0;
	}
	tp->rxbuf = malloc(TP_RXBUF);
	if (!tp->rxbuf) {
		tpath_finish(tp, NPF_OUT_NOT_PROBED, "out of memory");
		return 0;
	}
	/* Both replies on it were read; the peer only waits for our close. */
	fconn_abort(&tp->ctl);
	tp->phase = TP_BULK;
	tp->t_bulk = npf_now(CLOCK_MONOTONIC);
	(void)fconn_set_raw(c, EPOLLIN | EPOLLOUT);
	return 0;
}

static int data_error(struct fconn *c, int err)
{
	struct tprobe *tp = c->owner;

	/* Framed only until DATA_AUTH_REPLY: the daemon has not answered on this connection,
	 * so a close or a reset is its listener's caps, never the path. */
	if (err == -EPROTONOSUPPORT)
		tpath_finish(tp, NPF_OUT_NOT_PROBED, NPF_DETAIL_OTHER_VERSION, "the data port");
	else if (c->closing)
		tpath_finish(tp, NPF_OUT_WRONG_PEER, "protocol error on the data port");
	else if (err == 0)
		tpath_finish(tp, npf_conn_outcome(NPF_STAGE_UNANSWERED, 0),
			     "data connection closed by the peer before its reply");
	else
		tpath_finish(tp, npf_conn_outcome(NPF_STAGE_UNANSWERED, -err),
			     "data connection: %s", strerror(-err));
	return 0;
}

static void bulk_send(struct tprobe *tp)
{
	uint8_t chunk[TP_TXCHUNK];

	while (tp->sent < tp->bulk) {
		size_t n = tp->bulk - tp->sent;
		ssize_t w;

		if (n > sizeof(chunk))
			n = sizeof(chunk);
		pattern_fill(tp, tp->sent, chunk, n);
		w = send(tp->data.fd, chunk, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			tpath_finish(tp, NPF_OUT_BULK_STALL, "bulk send after %zu bytes: %s",
				     tp->sent, strerror(errno));
			return;
		}
		tp->sent += (size_t)w;
	}
}

static void bulk_recv(struct tprobe *tp)
{
	while (tp->rcvd < tp->bulk) {
		size_t want = tp->bulk - tp->rcvd;
		ssize_t n;

		if (want > TP_RXBUF)
			want = TP_RXBUF;
		n = recv(tp->data.fd, tp->rxbuf, want, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			tpath_finish(tp, NPF_OUT_BULK_STALL, "bulk receive after %zu bytes: %s",
				     tp->rcvd, strerror(errno));
			return;
		}
		if (n == 0) {
			tpath_finish(tp, NPF_OUT_BULK_STALL,
				     "peer closed after echoing %zu/%u bytes", tp->rcvd, tp->bulk);
			return;
		}
		{
			size_t bad = pattern_check(tp, tp->rcvd, tp->rxbuf, (size_t)n);

			if (bad < (size_t)n) {
				tpath_finish(tp, NPF_OUT_BULK_STALL, "echo corrupted at byte %zu",
					     tp->rcvd + bad);
				return;
			}
		}
		tp->rcvd += (size_t)n;
		tp->res.echoed = (uint32_t)tp->rcvd;
	}
}

static int data_raw(struct fconn *c, uint32_t revents)
{
	struct tprobe *tp = c->owner;

	if (revents & EPOLLOUT)
		bulk_send(tp);
	if (tp->phase == TP_BULK && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		bulk_recv(tp);
	if (tp->phase != TP_BULK)
		return 0;
	if (tp->rcvd >= tp->bulk) {
		/* The whole echo was read and the peer sends nothing more. */
		fconn_abort(&tp->data);
		tp->remember = true;
		tpath_finish(tp, NPF_OUT_OK, "%s", "");
		return 0;
	}
	(void)sd_event_source_set_io_events(c->io, EPOLLIN | (tp->sent < tp->bulk ? EPOLLOUT : 0));
	return 0;
}

static const struct fconn_ops data_ops = {
    .connected = data_connected,
    .frame = data_frame,
    .error = data_error,
    .raw = data_raw,
};
