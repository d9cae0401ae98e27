// SPDX-License-Identifier: MIT
/* A check's discovery: each peer's resolved addresses tried in turn, its daemon's HELLO
 * for its candidates, and the reverse exchange that rides on that connection. */
#include "check_int.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "candidates.h"
#include "log.h"

/* ---- discovery: connect to the peer's daemon and HELLO ---- */

static const struct fconn_ops disc_ops;

static void try_next(struct ppeer *pp);

static int attempt_timer(sd_event_source *s, uint64_t usec, void *ud)
{
	struct ppeer *pp = ud;

	(void)s;
	(void)usec;
	if (pp->st != PP_CONNECTING && pp->st != PP_HELLO)
		return 0;
	chk_fmt(pp->last_err, sizeof(pp->last_err), "%s",
		pp->st == PP_CONNECTING ? "connect timed out" : "no HELLO reply");
	pp->disc_timed_out = true;
	try_next(pp);
	return 0;
}

static void try_next(struct ppeer *pp)
{
	struct pcheck *pc = pp->pc;
	struct npf_node *n = chk_node(pp);

	chk_peer_close(pp);
	for (;;) {
		const struct npf_addr *a;
		uint64_t now = npf_now(CLOCK_MONOTONIC), slice;
		size_t left;
		char txt[INET6_ADDRSTRLEN];
		bool timed_out = pp->disc_timed_out;
		int r;

		pp->disc_timed_out = false;
		if (pp->next_addr >= pp->n_addrs) {
			/* Silence is what a starved peer produces too: one more round while
			 * the window allows; an answer (refused, unreachable) is final. */
			if (pp->disc_round || !timed_out || !pp->n_addrs ||
			    pc->disc_deadline < now + CHECK_RETRY_MIN_USEC)
				break;
			pp->disc_round = 1;
			pp->next_addr = 0;
			pc->res->n_retried++;
		}
		a = &pp->addrs[pp->next_addr++];
		left = pp->n_addrs - pp->next_addr + 1;
		if (now >= pc->disc_deadline)
			break;
		r = fconn_connect_ctl(&pp->c, pc->ctx, a, NPF_WIRE_MAX_PAYLOAD, &disc_ops, pp);
		if (r < 0) {
			chk_fmt(pp->last_err, sizeof(pp->last_err), "%s: %s",
				npf_addr_str(a, txt, sizeof(txt)), strerror(-r));
			continue;
		}
		(void)sd_event_source_set_priority(pp->c.io, PROBE_PRIO_CONTROL);
		/* Share what is left of the discovery window among the addresses left; the
		 * first round leaves 2/5 of it for a second one. */
		slice = (pc->disc_deadline - now) / left;
		if (!pp->disc_round)
			slice = slice * 3 / 5;
		pp->t_disc = now;
		if (sd_event_add_time(pc->ctx->event, &pp->timer, CLOCK_MONOTONIC, now + slice,
				      1000, attempt_timer, pp) < 0) {
			chk_peer_fail(pp, "out of timers");
			return;
		}
		pp->st = PP_CONNECTING;
		return;
	}
	chk_peer_fail(pp, "no daemon answering on %s (%s)", n->name,
		      pp->last_err[0] ? pp->last_err : "no usable address");
}

static bool addr_listed(const struct npf_addr *a, size_t n, const struct npf_addr *x)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].family == x->family && memcmp(a[i].addr, x->addr, sizeof(x->addr)) == 0)
			return true;
	return false;
}

static int disc_connected(struct fconn *c, int err)
{
	struct ppeer *pp = c->owner;
	struct pcheck *pc = pp->pc;
	const struct npf_node *self = &pc->res->nodes[0];
	struct npf_msg_hello h = {.instance = pc->ctx->instance, .want_candidates = true};
	json_t *j;
	int r;

	if (err) {
		chk_fmt(pp->last_err, sizeof(pp->last_err), "%s", strerror(-err));
		try_next(pp);
		return 0;
	}
	snprintf(h.node, sizeof(h.node), "%s", pc->ctx->node);
	/* Our reverse targets are our own candidates: announce exactly those, the
	 * peer probes nothing else for us (probe/server.c on_reverse_req). */
	h.addrs_present = true;
	for (size_t i = 0; i < self->n_cands && h.n_addrs < NPF_WIRE_MAX_CANDS; i++)
		if (!addr_listed(h.addrs, h.n_addrs, &self->cands[i].addr))
			h.addrs[h.n_addrs++] = self->cands[i].addr;
	j = npf_wire_hello_to_json(&h);
	r = fconn_send(c, NPF_MSG_HELLO, j);
	json_decref(j);
	if (r < 0) {
		chk_fmt(pp->last_err, sizeof(pp->last_err), "sending HELLO: %s", strerror(-r));
		try_next(pp);
		return 0;
	}
	pp->st = PP_HELLO;
	return 0;
}

/* The daemon that answers must be the node we asked for: the same name (case
 * does not matter in host names), or one of the two names is the other plus a
 * domain. A peer given as an address literal is identified by the address. */
static bool node_name_matches(const char *asked, const char *answered)
{
	struct npf_addr a;
	size_t la = strlen(asked), lb = strlen(answered);

	if (npf_wire_addr_parse(asked, &a) == 0)
		return true;
	if (la == lb)
		return strcasecmp(asked, answered) == 0;
	if (la > lb)
		return asked[lb] == '.' && strncasecmp(asked, answered, lb) == 0;
	return answered[la] == '.' && strncasecmp(asked, answered, la) == 0;
}

static void on_hello_reply(struct ppeer *pp, json_t *j)
{
	struct npf_node *n = chk_node(pp);
	struct npf_msg_hello_reply hr;

	if (npf_wire_hello_reply_from_json(j, &hr) < 0 || !hr.lists) {
		npf_wire_hello_reply_clear(&hr);
		chk_fmt(pp->last_err, sizeof(pp->last_err), "malformed HELLO reply");
		try_next(pp);
		return;
	}
	if (hr.instance == pp->pc->ctx->instance) {
		npf_wire_hello_reply_clear(&hr);
		chk_peer_fail(pp, "%s resolves to this node", n->name);
		return;
	}
	if (!node_name_matches(n->name, hr.node)) {
		/* Another daemon (or something squatting the port) answered. */
		chk_fmt(pp->last_err, sizeof(pp->last_err), "answered as node '%s'", hr.node);
		npf_wire_hello_reply_clear(&hr);
		try_next(pp);
		return;
	}
	pp->timer = sd_event_source_disable_unref(pp->timer);
	if (pp->t_disc) {
		uint64_t rtt = npf_now(CLOCK_MONOTONIC) - pp->t_disc;

		n->hello_rtt_us = rtt > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt;
		if (!n->hello_rtt_us)
			n->hello_rtt_us = 1;
	}
	n->available = true;
	n->error[0] = '\0';
	if (pp->next_addr > 0)
		n->name_addr = pp->addrs[pp->next_addr - 1]; /* what try_next() connected to */
	n->instance = hr.instance;
	snprintf(pp->peer_node, sizeof(pp->peer_node), "%s", hr.node);
	pp->sess.c = &pp->c;
	pp->sess.node = pp->peer_node;
	free(pp->peer_addrs);
	pp->n_peer_addrs = 0;
	pp->peer_addrs = calloc(hr.n_cands + 1, sizeof(*pp->peer_addrs));
	for (size_t i = 0; pp->peer_addrs && i < hr.n_cands; i++)
		pp->peer_addrs[pp->n_peer_addrs++] = hr.cands[i].addr;
	n->cands = hr.cands;
	n->n_cands = hr.n_cands;
	n->ifnames = hr.ifnames;
	n->n_ifnames = hr.n_ifnames;
	chk_start_probes(pp);
}

static int disc_frame(struct fconn *c, uint16_t type, json_t *j)
{
	struct ppeer *pp = c->owner;

	if (pp->st == PP_HELLO && type == NPF_MSG_HELLO_REPLY) {
		on_hello_reply(pp, j);
		return 0;
	}
	if (pp->st == PP_HELLO && type == NPF_MSG_ERROR) {
		struct npf_msg_error e;

		if (npf_wire_error_from_json(j, &e) == 0)
			chk_fmt(pp->last_err, sizeof(pp->last_err), "%s: %s",
				npf_wire_err_name(e.code), e.message);
		else
			chk_fmt(pp->last_err, sizeof(pp->last_err), "malformed ERROR");
		if (e.code == NPF_WERR_UNSUPPORTED_VERSION) {
			/* Another address reaches the same daemon: unavailable (unknown), now. */
			chk_peer_fail(pp, "the daemon on %s speaks " NPF_DETAIL_OTHER_VERSION,
				      chk_node(pp)->name, e.message);
			return 0;
		}
		try_next(pp);
		return 0;
	}
	if (pp->st == PP_PROBING && type == NPF_MSG_OPEN_DATA_REPLY) {
		struct npf_msg_open_data_reply odr;

		/* A path's data listener (tprobe_path.c asked); a reply for a probe that
		 * ended meanwhile finds no taker and its listener dies with this session. */
		if (npf_wire_open_data_reply_from_json(j, &odr) < 0) {
			if (pp->rev_wait)
				chk_rev_fill_missing(pp, NPF_OUT_NOT_PROBED,
						     "malformed OPEN_DATA reply from peer");
			chk_session_lost(pp);
			fconn_close(c);
			chk_maybe_peer_done(pp);
			return 0;
		}
		for (size_t i = 0; i < pp->n_fwd; i++)
			if (pp->fwd[i].tp && tprobe_opened(pp->fwd[i].tp, &odr))
				break;
		return 0;
	}
	if (pp->st == PP_PROBING && pp->rev_wait && type == NPF_MSG_REVERSE_RESULT) {
		struct npf_msg_reverse_result *rr = malloc(sizeof(*rr));

		/* chk_rev_record() may ask again for the inconclusive targets on this connection;
		 * it stays open either way (held until our forward probes end too). */
		if (rr && npf_wire_reverse_result_from_json(j, rr) == 0 && rr->id == pp->rev_id)
			(void)chk_rev_record(pp, rr);
		else
			chk_rev_fill_missing(pp, NPF_OUT_NOT_PROBED, "malformed reverse result");
		free(rr);
		/* Its loss says the daemon went away. */
		chk_maybe_peer_done(pp);
		return 0;
	}
	if (pp->st == PP_PROBING && pp->rev_wait && type == NPF_MSG_ERROR) {
		struct npf_msg_error e;
		char d[96];

		if (npf_wire_error_from_json(j, &e) == 0)
			chk_fmt(d, sizeof(d), "%s declined reverse probes: %s", chk_node(pp)->name,
				e.message);
		else
			chk_fmt(d, sizeof(d), "%s declined reverse probes", chk_node(pp)->name);
		chk_rev_fill_missing(pp, NPF_OUT_NOT_PROBED, d);
		chk_session_lost(pp);
		fconn_close(c);
		chk_maybe_peer_done(pp);
		return 0;
	}
	/* Anything else is a protocol violation: stop listening to this peer. */
	if (pp->st == PP_PROBING) {
		if (pp->rev_wait)
			chk_rev_fill_missing(pp, NPF_OUT_NOT_PROBED,
					     "unexpected message from peer");
		chk_session_lost(pp);
		fconn_close(c);
		chk_maybe_peer_done(pp);
		return 0;
	}
	chk_fmt(pp->last_err, sizeof(pp->last_err), "unexpected %s", npf_wire_type_name(type));
	try_next(pp);
	return 0;
}

static int disc_error(struct fconn *c, int err)
{
	struct ppeer *pp = c->owner;
	char d[96];

	if (pp->st == PP_PROBING) {
		struct npf_node *n = chk_node(pp);
		bool involved = pp->rev_wait || pp->fwd_pending;

		chk_session_lost(pp);
		fconn_close(c);
		if (pp->rev_wait) {
			chk_fmt(d, sizeof(d), "connection to %s lost before its reverse result",
				n->name);
			chk_rev_fill_missing(pp, NPF_OUT_NOT_PROBED, d);
		}
		/* The daemon went away (killed, restarted with a new instance) while
		 * its paths were being probed: what it answered, and the refusals and
		 * wrong-peer answers that follow its death, are no evidence about the
		 * network. The peer counts as unavailable (unknown, never fail). */
		if (involved) {
			chk_fmt(n->error, sizeof(n->error),
				"the daemon on %s went away during the check (%s)", n->name,
				err == 0 ? "connection closed" : strerror(-err));
			n->available = false;
		}
		chk_maybe_peer_done(pp);
		return 0;
	}
	if (err == -EPROTONOSUPPORT) {
		char v[64];

		/* The header says which: a rolling upgrade's operator wants both numbers. */
		snprintf(v, sizeof(v), "version %u; this node speaks %u", c->h.version,
			 NPF_WIRE_VERSION);
		chk_peer_fail(pp, "the daemon on %s speaks " NPF_DETAIL_OTHER_VERSION,
			      chk_node(pp)->name, v);
		return 0;
	}
	chk_fmt(pp->last_err, sizeof(pp->last_err), "%s",
		err == 0 ? "connection closed" : strerror(-err));
	try_next(pp);
	return 0;
}

static int disc_raw(struct fconn *c, uint32_t revents)
{
	(void)revents;
	fconn_close(c);
	return 0;
}

static const struct fconn_ops disc_ops = {
    .connected = disc_connected,
    .frame = disc_frame,
    .error = disc_error,
    .raw = disc_raw,
};

void chk_on_resolved(void *ud, size_t idx, int err, const struct npf_addr *addrs, size_t n)
{
	struct pcheck *pc = ud;
	struct ppeer *pp = &pc->peers[pc->resolve_map[idx]];

	if (pp->st != PP_RESOLVING)
		return;
	if (err) {
		chk_peer_fail(pp, "cannot resolve %s: %s", chk_node(pp)->name, gai_strerror(err));
		return;
	}
	memcpy(pp->addrs, addrs, n * sizeof(addrs[0]));
	pp->n_addrs = n;
	try_next(pp);
}
