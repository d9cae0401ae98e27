/* SPDX-License-Identifier: MIT */
/* Probe engine internals shared by the probe/ sources: framed connections, the path probe
 * primitive, the inbound server, the resolver, inventory lookups and the context. Each
 * module's own state sits in its private header (check_int.h, server_int.h, tprobe_int.h). */
#ifndef NPF_PROBE_INTERNAL_H
#define NPF_PROBE_INTERNAL_H

#include <jansson.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "auth.h"
#include "check.h"
#include "clock.h" /* npf_now(): probe/ times are CLOCK_MONOTONIC usec, read fresh (RTTs) */
#include "model.h"
#include "probe.h"
#include "wire.h"

#define PROBE_MAX_ACTIVE_TPROBES                                                                   \
	64			  /* outbound path probes at once, per context: more               \
				   * only adds timers and sockets a starved CPU cannot serve */
#define PROBE_MAX_FWD_PER_PEER 32 /* a peer announcing more gets the rest not-probed */
#define PROBE_MAX_REVJOBS 256	  /* reverse-probe requests held at once, per context */
#define PROBE_MAX_REVJOBS_PER_CONN 2
/* Data listeners one control connection may ask for over its life: every path of the peer
 * (PROBE_MAX_FWD_PER_PEER), each tried twice, with room for a second check on it. */
#define PROBE_MAX_OPEN_DATA_PER_CONN (4 * PROBE_MAX_FWD_PER_PEER)
#define PROBE_DLISTEN_FACTOR 4		 /* data listeners at once: this times max_conns */
#define PROBE_MAX_REV_ACTIVE 64		 /* reverse probes running at once: the rest is ours */
#define PROBE_MAX_REVJOBS_PER_PEER 8	 /* reverse requests held at once per peer address */
#define PROBE_MAX_REV_ACTIVE_PER_PEER 16 /* of those slots, what one peer address may hold */
#define PROBE_MAX_PREAUTH 64		 /* connections that have not said HELLO/authenticated */
#define PROBE_MAX_PREAUTH_PER_PEER 8
#define PROBE_PREAUTH_USEC (3ull * 1000000) /* HELLO (or AUTH) must come this fast */
/* Evicted pre-auth connections draining politely at once (beyond: closed at once). */
#define PROBE_MAX_EVICTED 64
/* A data listener accepts until a valid DATA_AUTH from the prober's address: at most this
 * many connections from that address wait for theirs (the oldest makes room); any other
 * source is closed at once. The backlog lets a burst of racers not crowd out the prober. */
#define PROBE_DATA_PENDING 4
#define PROBE_DATA_BACKLOG 16
/* A prober holds its discovery connection for the whole check (its loss means
 * the daemon went away), so idle authenticated connections live as long as the
 * longest check; per-peer caps bound what an idle peer can hold. */
#define PROBE_SCONN_IDLE_USEC ((NPF_WIRE_MAX_TIMEOUT_MS + 5000ull) * 1000)
#define PROBE_DATA_LIFETIME_USEC (10ull * 1000000)
#define PROBE_MAX_OUTBUF (256u << 10)
#define PROBE_MAX_RESOLVED 8 /* addresses kept per resolved name */
/* Event priorities (sd-event dispatches one pending source per iteration, the most
 * important first). When every node of a job checks at once the loop has more ready
 * sources than it can serve in time: the control plane (accepting, HELLOs, reverse
 * requests, discovery) goes before bulk data and echoes, so peers learn our candidates and
 * get their answers while the bytes wait, instead of timing out waiting for a HELLO reply
 * behind other peers' bulk transfers. */
#define PROBE_PRIO_CONTROL (-10)
/* Finished path probes whose "ok" another consumer may still take (see tprobe_start_for):
 * every node of a job checking at once asks each directed path twice (our check and the
 * peer's reverse request), usually not at the same moment. One entry per recent path. */
#define PROBE_RECENT 512
#define PROBE_RECENT_USEC (10ull * 1000000)

/* ---- fconn.c: a non-blocking socket carrying framed JSON messages ---- */

struct fconn;
struct fconn_auth;
struct nlsys_routes;

/* Callbacks return 0 to keep going or 1 when they destroyed the connection
 * (fconn_close() and/or freed its owner); fconn then touches nothing. */
struct fconn_ops {
	/* Outbound only: err is 0 or -errno from SO_ERROR. */
	int (*connected)(struct fconn *c, int err);
	/* A complete, strictly parsed frame; payload is borrowed for the call. */
	int (*frame)(struct fconn *c, uint16_t type, json_t *payload);
	/* EOF (err 0), socket error or a protocol error (-EBADMSG, -EMSGSIZE,
	 * -EPROTONOSUPPORT). After a protocol error c->closing is set: an ERROR
	 * frame is queued, and the owner may return 0 to let it drain (input is
	 * discarded; error runs again with 0 at EOF, so the owner's timer must
	 * bound the wait) or close at once and return 1. */
	int (*error)(struct fconn *c, int err);
	/* Raw mode (bulk data): the socket is ready for revents. */
	int (*raw)(struct fconn *c, uint32_t revents);
};

struct fconn {
	int fd;
	sd_event_source *io;
	const struct fconn_ops *ops;
	void *owner;
	bool connecting;
	bool raw;
	bool closing; /* ERROR queued: flush, SHUT_WR, discard input until EOF */
	uint32_t max_payload;
	uint8_t hdr[NPF_WIRE_HDR_LEN];
	size_t hdr_len;
	struct npf_wire_hdr h;
	uint8_t *in; /* payload buffer, h.length bytes once the header is known */
	size_t in_len;
	uint8_t *out;
	size_t out_len, out_off;
	struct fconn_auth *auth; /* owned; NULL without a cluster key */
	/* Output goes out from a one-shot defer source on the next loop iteration (every
	 * frame queued meanwhile in one send, and no epoll_ctl): EPOLLOUT only after the
	 * socket was full (blocked), or when no defer source could be made. */
	sd_event_source *post;
	bool blocked;
};

/* Makes a struct fconn for an accepted fd (takes ownership of fd). Returns 0 or -errno
 * (fd closed on failure). Free resources with fconn_close(). */
int fconn_adopt(struct fconn *c, sd_event *e, int fd, uint32_t max_payload,
		const struct fconn_ops *ops, void *owner);

/* Starts a non-blocking connect without a source bind (the kernel routes, as NCCL
 * does). ops->connected runs from the loop. Returns 0 or the connect error as
 * -errno (nothing left to close then). */
int fconn_connect(struct fconn *c, sd_event *e, const struct npf_addr *dst, uint16_t port,
		  uint32_t max_payload, const struct fconn_ops *ops, void *owner);

/* Clamps the TCP MSS of a control socket to NPF_WIRE_CTL_MSS (a listener passes it on to
 * the connections it accepts): no control segment is larger than a 1280-byte IPv6 packet,
 * so a switch port whose MTU is smaller than the NICs' (an MTU black hole) cannot eat the
 * control exchange, whatever its frames hold, and the path reaches the bulk phase that
 * exists to find that hole. Data connections are never clamped. */
void fconn_clamp_mss(int fd);

/* Connects to a daemon's control port (ctx->port), MSS clamped. With a cluster key the
 * handshake runs first and ops->connected sees 0 only once both sides proved the
 * key; a peer that cannot gets -EKEYREJECTED. Returns as fconn_connect(). */
int fconn_connect_ctl(struct fconn *c, struct npf_probe_ctx *ctx, const struct npf_addr *dst,
		      uint32_t max_payload, const struct fconn_ops *ops, void *owner);

/* Server side of the handshake on an adopted connection: until a client proves
 * the key nothing reaches ops->frame, and anything else than the handshake gets
 * a "forbidden" ERROR. keys and node are borrowed (they outlive c). Returns 0 or
 * -ENOMEM. */
int fconn_auth_server(struct fconn *c, const struct npf_auth_keys *keys, const char *node);

/* The peer's node name as proven by the handshake, or NULL (no key, or not yet). */
const char *fconn_auth_peer(const struct fconn *c);

/* The key the handshake settled on (borrowed: an element of the keys given to
 * fconn_auth_server/fconn_connect_ctl), or NULL (no key, or not yet). */
const struct npf_auth_key *fconn_auth_key(const struct fconn *c);

/* The data-port token derived from this connection's session and the listener's
 * nonce. Returns 0, or -ENOKEY when the connection is not authenticated (the token
 * then travels in OPEN_DATA_REPLY as before). */
int fconn_data_token(const struct fconn *c, uint16_t port, const uint8_t nonce[NPF_WIRE_NONCE_LEN],
		     uint8_t token[NPF_WIRE_TOKEN_LEN]);

/* The MAC a DATA_AUTH_REPLY (node, instance) on that listener carries, from this
 * connection's session. Returns 0, or -ENOKEY when not authenticated. */
int fconn_data_reply_mac(const struct fconn *c, uint16_t port,
			 const uint8_t nonce[NPF_WIRE_NONCE_LEN], const char *node, uint64_t instance,
			 uint8_t mac[NPF_WIRE_MAC_LEN]);

/* Sets the priority of c's event sources (sd-event: lower runs first). */
void fconn_set_priority(struct fconn *c, int64_t prio);

/* Queues one frame. Returns 0, -ENOBUFS (output cap) or -ENOMEM/-EMSGSIZE. */
int fconn_send(struct fconn *c, uint16_t type, const json_t *payload);

/* Queues an ERROR frame and enters closing mode (see ops->error). */
void fconn_send_error(struct fconn *c, enum npf_wire_err code, const char *msg);

/* Switches to raw mode: ops->raw gets revents; events selects EPOLLIN/EPOLLOUT. */
int fconn_set_raw(struct fconn *c, uint32_t events);

/* Removes the event source and closes the socket; idempotent. */
void fconn_close(struct fconn *c);

/* fconn_close() with a reset instead of a FIN (SO_LINGER 0): for a connection whose
 * exchange is complete on both sides (everything the peer sent was read), so nothing can
 * be lost; it saves the closing handshake and the TIME_WAIT socket per probe connection,
 * thousands of them when a whole job checks at once. */
void fconn_abort(struct fconn *c);

bool fconn_is_open(const struct fconn *c);

/* True for the errors ops->error reports right after queueing an ERROR frame
 * (-EBADMSG, -EMSGSIZE, -EPROTONOSUPPORT); EOF and socket errors are not. */
bool fconn_is_protocol_error(int err);

/* sockaddr helpers. fconn_sockaddr returns the length to pass to bind/connect. */
socklen_t fconn_sockaddr(const struct npf_addr *a, uint16_t port, struct sockaddr_storage *ss);
int fconn_from_sockaddr(const struct sockaddr_storage *ss, struct npf_addr *a, uint16_t *port);

/* ---- tprobe.c (+ tprobe_path.c): probe_path(target, expected instance) ---- */

struct tprobe;
struct tprobe_recent;
typedef void (*tprobe_done_fn)(struct tprobe *tp, void *ud);

struct tprobe_result {
	enum npf_outcome outcome;
	uint32_t rtt_us;
	char egress[IFNAMSIZ]; /* kernel egress, or our interface holding a local target */
	char detail[96];
	/* What the load rule (lib/loadrule.h) needs to know about the attempt. */
	uint64_t t_begin, t_end; /* CLOCK_MONOTONIC usec: started (or queued), ended */
	uint32_t bulk;		 /* bulk bytes per direction this attempt moved or tried */
	uint32_t echoed;	 /* bulk bytes echoed back */
	bool ctl_answered;	 /* the peer's control port answered HELLO */
	bool by_deadline;	 /* ended by its deadline or an abort, not by an answer */
	bool shared;		 /* the result of a probe of the same path by another
				  * consumer (a reverse request or our own check) */
	struct npf_evidence ev;	 /* where its deadline found it (lib/loadrule.h) */
};

/* A peer's data listener for one path: where the data connection goes and what it proves. */
struct tprobe_port {
	uint16_t port;
	uint8_t token[NPF_WIRE_TOKEN_LEN];
	uint8_t mac[NPF_WIRE_MAC_LEN]; /* the DATA_AUTH_REPLY MAC to expect (has_mac) */
	bool has_mac;
};

/* Fills p for a listener announced on the control connection sess (its port, and its
 * token or the nonce it is derived from) whose DATA_AUTH_REPLY must come from node,
 * instance. Returns 0, or -ENOKEY when sess is authenticated but no nonce came (a listener
 * that cannot prove anything: no evidence). */
int tprobe_port_from(struct tprobe_port *p, const struct fconn *sess, uint16_t port,
		     const uint8_t token[NPF_WIRE_TOKEN_LEN],
		     const uint8_t nonce[NPF_WIRE_NONCE_LEN], bool has_nonce, const char *node,
		     uint64_t instance);

/* The prober's one control connection to a peer (protocol version 3): it carries the
 * OPEN_DATA of every path to that peer, so a path costs only its own data connection. */
struct tprobe_session {
	struct fconn *c;  /* borrowed: the owner's; a closed one fails the OPEN_DATA */
	const char *node; /* the peer daemon's name, as its HELLO_REPLY gave it (borrowed) */
	uint32_t next_id;
};

/* How a probe gets the peer's data listener. Neither set: its own control connection to
 * the target (the path's HELLO, then OPEN_DATA), as every probe does after a refused data
 * connect, to tell a dead port from a firewall or another node answering. */
struct tprobe_via {
	struct tprobe_session *sess;	/* ask on this session (our check's forward probes) */
	const struct tprobe_port *port; /* or this listener (a peer's reverse request) */
	uint64_t t_asked; /* with port: when the request came (its handshakes began) */
};

/* Who asks for a probe: a running probe is shared between consumers of one job check (the
 * same directed path probed once). */
enum tprobe_origin {
	TPROBE_FOR_PEER = 0, /* a reverse request of a peer */
	TPROBE_FOR_CHECK,    /* one of our own checks */
};

/* Starts probing target (control port ctx->port, then the data port the peer
 * opens) expecting the daemon instance `expect`. Never completes synchronously:
 * done runs from the loop exactly once, at the latest at deadline_usec
 * (CLOCK_MONOTONIC), unless tprobe_free() comes first. On success *out is owned
 * by the caller (tprobe_free, also allowed inside done). Returns 0 or -ENOMEM. */
int tprobe_start(struct npf_probe_ctx *ctx, const struct npf_addr *target, uint64_t expect,
		 uint32_t bulk, uint64_t deadline_usec, tprobe_done_fn done, void *ud,
		 struct tprobe **out);

/* tprobe_start() for a given consumer. bulk is a ceiling: the attempt moves
 * npf_bulk_bytes(egress MTU, bulk). A probe of the same (target, expect) already running
 * for another consumer is joined instead of started again (tprobe_result() then says
 * shared); if that probe ends by its own deadline, the joiner probes on its own.
 * tprobe_start() is TPROBE_FOR_PEER. */
int tprobe_start_for(struct npf_probe_ctx *ctx, enum tprobe_origin origin,
		     const struct npf_addr *target, uint64_t expect, uint32_t bulk,
		     uint64_t deadline_usec, tprobe_done_fn done, void *ud, struct tprobe **out);

/* tprobe_start_for() that may also take the "ok" of a probe of the same path that already
 * ended, if that probe began at or after not_before_usec (CLOCK_MONOTONIC): the moment the
 * consumer's check began (our check's start, or the HELLO of the peer asking for a reverse
 * probe, which its check sends first). Such a probe ran entirely inside the consumer's
 * check, so its answer is evidence of this check, never a stale one from before a change.
 * Only "ok" is taken: a failure or an inconclusive attempt is probed again (a retry must
 * see a fresh attempt). not_before_usec 0 = never take a finished result. */
int tprobe_start_shared(struct npf_probe_ctx *ctx, enum tprobe_origin origin,
			const struct npf_addr *target, uint64_t expect, uint32_t bulk,
			uint64_t not_before_usec, uint64_t deadline_usec, tprobe_done_fn done,
			void *ud, struct tprobe **out);

/* tprobe_start_shared() that reaches the data port as via says (copied; via->sess must
 * outlive the probe's OPEN_DATA phase, via NULL: its own control connection). */
int tprobe_start_via(struct npf_probe_ctx *ctx, enum tprobe_origin origin,
		     const struct npf_addr *target, uint64_t expect, uint32_t bulk,
		     uint64_t not_before_usec, uint64_t deadline_usec, const struct tprobe_via *via,
		     tprobe_done_fn done, void *ud, struct tprobe **out);

/* The session's answer to an OPEN_DATA: true when it was tp's (tp then connects to the
 * data port, or ends not-probed when the peer declined), false when tp asked for no such
 * id (a reply for a probe that ended: ignored). */
bool tprobe_opened(struct tprobe *tp, const struct npf_msg_open_data_reply *r);

/* The session tp asked on went away: a probe still waiting for its OPEN_DATA reply ends
 * not-probed now (done runs from the loop); any other phase goes on. */
void tprobe_session_lost(struct tprobe *tp);

/* Stops at once with the outcome of the phase it is in (e.g. timeout while
 * connecting, bulk-stall while moving data). done does NOT run. */
void tprobe_abort(struct tprobe *tp);

const struct tprobe_result *tprobe_result(const struct tprobe *tp);
const struct npf_addr *tprobe_target(const struct tprobe *tp);

/* Closes sockets and timers and frees; NULL-safe. */
void tprobe_free(struct tprobe *tp);

/* Starts queued probes when the active count drops. */
void tprobe_kick_queue(struct npf_probe_ctx *ctx);

/* ---- server_data.c: data listeners (ours for a peer's probe of one of our addresses) ---- */

struct dlisten;

/* What a data listener is opened for: one path's data connection from the asker. */
struct dlisten_req {
	const struct npf_addr *local;  /* our address to listen on (the path's) */
	const struct npf_addr *remote; /* the asker's address (its control connection's) */
	const struct npf_addr *allow;  /* more sources its probe may come from: the asker's own */
	size_t n_allow;		       /* addresses, borrowed until dlisten_release(owner) */
	uint32_t bulk;		       /* echo at most this much */
	uint64_t lifetime_usec;
	const struct fconn *sess; /* the asker's control connection: token and MAC derivation */
	const void *owner;
};

/* Opens a data listener on rq->local, an ephemeral port (where NCCL, Gloo and Open MPI
 * listen), and fills the port and the token the asker must prove (or, on an authenticated
 * session, the nonce both sides derive it from: then the token is zeros and *has_nonce is
 * set). The listener belongs to ctx->dlisteners; it ends after its echo, at its lifetime,
 * or with dlisten_release(owner) unless it is echoing. Returns 0, -EBUSY (PROBE_DLISTEN_FACTOR x
 * max_conns listeners at once), -ENOMEM or -EIO. */
int dlisten_open(struct npf_probe_ctx *ctx, const struct dlisten_req *rq, uint16_t *port,
		 uint8_t token[NPF_WIRE_TOKEN_LEN], uint8_t nonce[NPF_WIRE_NONCE_LEN],
		 bool *has_nonce);
/* Frees owner's listeners that have no prober yet; the others finish their echo alone. */
void dlisten_release(struct npf_probe_ctx *ctx, const void *owner);
/* Closes the listener and its connections and frees it. */
void dlisten_free(struct dlisten *dl);
/* Data listeners held for asker address a. */
uint32_t dlisten_count(const struct npf_probe_ctx *ctx, const struct npf_addr *a);

/* ---- resolve.c: getaddrinfo off the loop thread ---- */

struct resolver;
/* err is 0 or an EAI_* code; addrs borrowed for the call. */
typedef void (*resolve_fn)(void *ud, size_t idx, int err, const struct npf_addr *addrs,
			   size_t n_addrs);

/* Resolves names[0..n) on worker threads; fn runs on the loop for each name.
 * On success *out is owned by the caller: resolve_cancel() it (no more callbacks
 * after that, also when called from inside fn). Returns 0 or -errno. */
int resolve_start(sd_event *e, const char *const *names, size_t n, resolve_fn fn, void *ud,
		  struct resolver **out);
void resolve_cancel(struct resolver *r);

/* ---- server.c (+ server_data.c, server_rev.c): listeners and inbound connections ---- */

struct plisten;
struct sconn;
struct dlisten;
struct revjob;

/* Reconciles listeners with ctx->cands: opens missing ones, closes stale ones.
 * Returns the number of listeners or -errno. */
int server_sync_listeners(struct npf_probe_ctx *ctx);

/* Closes every listener, connection, data listener and reverse job. */
void server_shutdown(struct npf_probe_ctx *ctx);

/* ---- jobx.c: the participant's side of the row exchange ---- */

/* Ends every submission of ctx (their done runs with -ECANCELED). */
void jobx_cancel_all(struct npf_probe_ctx *ctx);

/* ---- check.c (+ check_disc.c, check_paths.c, check_state.c) ---- */

struct pcheck;
/* Aborts a check; its callback runs with -ECANCELED before this returns. */
void check_cancel(struct pcheck *pc);

/* ---- inventory.c: lookups in the daemon's current inventory ---- */

/* Current inventory or NULL (borrowed, valid until the next loop return). */
const struct npf_inventory *inventory_current(struct npf_probe_ctx *ctx);

/* Our interface holding address a ("" when none). */
bool inventory_local_iface(struct npf_probe_ctx *ctx, const struct npf_addr *a,
			   char ifname[IFNAMSIZ]);

/* Builds candidates + all interface names from the current inventory. On
 * success *cands and *ifnames are malloc'd and owned by the caller (free()). */
int inventory_candidates(struct npf_probe_ctx *ctx, struct npf_candidate **cands, size_t *n_cands,
			 char (**ifnames)[IFNAMSIZ], size_t *n_ifnames);

/* ---- ctx.c: the context (created, refreshed and freed by the daemon) ---- */

struct npf_probe_ctx {
	sd_event *event;
	uint16_t port;
	char node[NPF_NAME_MAX];
	uint64_t instance;
	npf_probe_inventory_fn inventory;
	void (*listen_changed)(void *userdata);
	void *userdata;
	/* 0 in npf_probe_params: the [probe] defaults of lib/config's key table (one source). */
	uint32_t max_conns, full_mesh_max, sparse_k, bulk_bytes;
	uint32_t default_timeout_ms; /* a check started with timeout 0 */
	char **exclude;
	size_t n_exclude;

	struct npf_auth_keys keys;   /* cluster keys; n == 0: unauthenticated mode */
	struct npf_candidate *cands; /* owned: from the last refresh */
	size_t n_cands;
	char (*ifnames)[IFNAMSIZ]; /* owned */
	size_t n_ifnames;

	LIST_HEAD(, plisten) listeners;
	LIST_HEAD(, sconn) sconns;
	uint32_t n_sconns;
	char listen_error[160]; /* first candidate whose listener failed, "" = all bound */
	sd_event_source *listen_retry;
	uint32_t n_preauth;    /* sconns still before HELLO/authentication (in n_sconns) */
	uint32_t n_evicted;    /* sconns evicted, draining before they close (in n_sconns) */
	uint64_t n_data_impostors; /* data-port connections dropped before a valid DATA_AUTH */
	uint64_t n_ctl_accepted, n_data_won; /* see npf_probe_stats */
	uint64_t n_key_sessions[NPF_AUTH_MAX_KEYS]; /* per keys.k[i]: see npf_probe_stats */
	uint32_t n_rev_active; /* reverse-job probes started (<= PROBE_MAX_REV_ACTIVE) */
	bool accept_paused;    /* at max_conns: new connections wait in the backlog */
	LIST_HEAD(, dlisten) dlisteners;
	uint32_t n_dlisteners;
	LIST_HEAD(, revjob) revjobs;
	uint32_t n_revjobs;
	LIST_HEAD(, pcheck) checks;

	TAILQ_HEAD(, tprobe) queue;		/* waiting for an active slot, oldest first */
	/* Ended probes whose done() runs next from one defer source (a timer per probe set
	 * to fire now cost a timerfd re-arm each, hundreds per job start). */
	TAILQ_HEAD(, tprobe) doneq;
	sd_event_source *done_defer;
	LIST_HEAD(, tprobe) tprobes;		/* every live tprobe (for joining) */
	struct tprobe_recent *recent;		/* owned: PROBE_RECENT slots, NULL until used */
	uint32_t recent_next;			/* next slot to overwrite (ring) */
	uint64_t n_tprobes_started, n_tprobes_joined; /* for tests and bench */
	uint32_t n_active_tprobes;
	uint32_t next_rev_id;
	/* Job checks (probe/jobx.c, server.c on_row): where ROWs go, and the waiter ids. */
	npf_probe_job_row_fn job_row;
	uint64_t next_job_wait;
	LIST_HEAD(, npf_job_submit) submits; /* jobx.c's, in flight */
	struct nlsys_routes *routes; /* owned: the route lookups' netlink socket (lazily) */
	bool kicking;	    /* inside tprobe_kick_queue(): no nested runs */
	bool shutting_down; /* no queued probe starts during teardown */
};

#endif
