/* SPDX-License-Identifier: MIT */
/* Probe protocol codec: 8-byte frame header plus strict JSON payloads (pure, no I/O). */
#ifndef NPF_WIRE_H
#define NPF_WIRE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "loadrule.h"
#include "model.h"

#define NPF_WIRE_VERSION 3
#define NPF_WIRE_HDR_LEN 8
#define NPF_WIRE_MAX_PAYLOAD 65536u
#define NPF_WIRE_TOKEN_LEN 16
#define NPF_WIRE_NONCE_LEN 16 /* a data listener's nonce (authenticated sessions) */
#define NPF_WIRE_MAC_LEN 32   /* DATA_AUTH_REPLY's MAC (authenticated sessions) */
#define NPF_WIRE_MAX_TARGETS 64   /* addresses per REVERSE_REQ */
#define NPF_WIRE_MAX_CANDS 128    /* candidates per HELLO_REPLY */
#define NPF_WIRE_MAX_IFNAMES 256  /* interface names per HELLO_REPLY */
#define NPF_WIRE_MIN_BULK 16384u  /* bulk bytes a probe must move each way (lib/loadrule.h floor) */
#define NPF_WIRE_MAX_BULK (16u << 20)
#define NPF_WIRE_MAX_TIMEOUT_MS 60000u
/* Data listeners bind port 0: the kernel picks from the ephemeral range, never a privileged
 * port; a reverse target naming one is served no probe (probe/server.c). */
#define NPF_WIRE_MIN_DATA_PORT 1024u
#define NPF_WIRE_MAX_ROW_NODES 2048u /* nodes of a job in one ROW */
#define NPF_WIRE_MAX_ROW_NETS 16u    /* networks in one ROW */
#define NPF_WIRE_JOB_ID_LEN 32       /* hex digits of a job id (lib/jobrows.h) */
#define NPF_WIRE_NET_KEY_MAX 52      /* INET6_ADDRSTRLEN + "/128" */
/* Control connections clamp their TCP MSS to this (probe/fconn.c): a 1280-byte IPv6
 * packet carries a segment, so a switch port with a smaller MTU than the NICs' cannot eat
 * the control exchange (docs/protocol.md, "MTU black holes"). */
#define NPF_WIRE_CTL_MSS 1200
/* Every frame of one path probe before its bulk phase (HELLO, OPEN_DATA, DATA_AUTH, their
 * replies, ERROR, the authentication frames with their tags) fits in one such segment:
 * per-peer facts (candidates, announced addresses) travel once, on the discovery
 * connection, never on a path's own. tests/unit/test_wire.c holds the codec to it. */
#define NPF_WIRE_PATH_FRAME_MAX 1200u

/* Frame types. Values are on the wire: append only, each with its row in lib/wire.c. */
enum npf_wire_type {
	NPF_MSG_HELLO = 1,
	NPF_MSG_HELLO_REPLY = 2,
	NPF_MSG_OPEN_DATA = 3,
	NPF_MSG_OPEN_DATA_REPLY = 4,
	NPF_MSG_DATA_AUTH = 5,
	NPF_MSG_DATA_AUTH_REPLY = 6,
	NPF_MSG_REVERSE_REQ = 7,
	NPF_MSG_REVERSE_RESULT = 8,
	NPF_MSG_ERROR = 9,
	/* 32..47: the job check exchange (docs/decision.md §10, docs/protocol.md). */
	NPF_MSG_ROW = 32,
	NPF_MSG_JOB_DECISION = 33,
	/* 48..63: the authentication handshake (lib/auth.h). */
	NPF_MSG_AUTH_HELLO = 48,
	NPF_MSG_AUTH_CHALLENGE = 49,
	NPF_MSG_AUTH_FINISH = 50,
};

/* The stage a connection is in, as a bit: a message row names the stages it may arrive in
 * (docs/protocol.md, "Messages"). */
enum npf_wire_state {
	NPF_WST_HANDSHAKE = 1u << 0, /* the cluster-key handshake, before anything else */
	NPF_WST_OPEN = 1u << 1,	     /* a control connection before HELLO */
	NPF_WST_SESSION = 1u << 2,   /* a control connection after HELLO */
	NPF_WST_DATA = 1u << 3,	     /* a data connection before its DATA_AUTH_REPLY */
};

/* Who may send a message: the end that connected (a prober, a job participant) or the
 * daemon that accepted. */
enum npf_wire_role {
	NPF_WROLE_PROBER = 1u << 0,
	NPF_WROLE_DAEMON = 1u << 1,
};

/* One wire message, described once (lib/wire.c msgs[]): a new message is one row. The
 * codec takes the message's own struct (size bytes); clear (NULL: it owns nothing)
 * releases what from_json allocated. */
struct npf_wire_msg {
	uint16_t type;
	const char *name;
	size_t size;
	json_t *(*to_json)(const void *m);  /* new reference or NULL */
	int (*from_json)(json_t *j, void *m); /* 0 or -EBADMSG/-ENOMEM */
	void (*clear)(void *m);
	unsigned states; /* enum npf_wire_state bits */
	unsigned from;	 /* enum npf_wire_role bits */
};

/* The row of type, or NULL for a type no version of ours has sent. */
const struct npf_wire_msg *npf_wire_msg_find(uint16_t type);

/* Every row, for tests and docs: *n gets the count. */
const struct npf_wire_msg *npf_wire_msgs(size_t *n);

/* Whether a frame of type may arrive on a connection in state (one enum npf_wire_state bit)
 * from sender (one enum npf_wire_role bit). Returns 0, -EBADMSG for an unknown type,
 * -EPROTO for a known one out of its states or from the wrong end. */
int npf_wire_msg_allowed(uint16_t type, unsigned state, unsigned sender);

/* Protocol-level error codes carried in ERROR frames (never mixed with errno). */
enum npf_wire_err {
	NPF_WERR_BAD_REQUEST = 0,   /* "bad-request": malformed frame or payload */
	NPF_WERR_UNSUPPORTED_VERSION, /* "unsupported-version" */
	NPF_WERR_TOO_LARGE,         /* "too-large": payload over the maximum */
	NPF_WERR_BUSY,              /* "busy": a cap was reached, try later */
	NPF_WERR_FORBIDDEN,         /* "forbidden": request not allowed in this state */
	NPF_WERR_UNEXPECTED,        /* "unexpected": a valid message at the wrong time */
	NPF_WERR__COUNT
};

struct npf_wire_hdr {
	uint16_t version;
	uint16_t type;
	uint32_t length;
};

/* A bounds-checked reader over borrowed bytes. Getters return 0 or -EBADMSG
 * (not enough bytes left) and never move past the end. */
struct npf_cursor {
	const uint8_t *p;
	size_t len;
	size_t off;
};

void npf_cursor_init(struct npf_cursor *c, const void *p, size_t len);
int npf_cursor_get_u16(struct npf_cursor *c, uint16_t *v);
int npf_cursor_get_u32(struct npf_cursor *c, uint32_t *v);
size_t npf_cursor_left(const struct npf_cursor *c);

/* Decodes a header from the first bytes of buf. Returns 0 when the header is
 * complete and acceptable; -EAGAIN when fewer than 8 bytes are present;
 * -EPROTONOSUPPORT when the version is not ours (h is filled, so the caller can
 * answer with an error); -EMSGSIZE when length exceeds max_payload; -EBADMSG for
 * an unknown type. */
int npf_wire_hdr_decode(const uint8_t *buf, size_t len, uint32_t max_payload,
			struct npf_wire_hdr *h);

/* Writes an 8-byte big-endian header. */
void npf_wire_hdr_encode(uint8_t out[NPF_WIRE_HDR_LEN], uint16_t type, uint32_t length);

/* Serialises obj compactly behind a header. On success *out is a malloc'd
 * frame of *out_len bytes owned by the caller (free()). Does not steal obj.
 * Returns 0, -EMSGSIZE when the payload exceeds NPF_WIRE_MAX_PAYLOAD, -ENOMEM. */
int npf_wire_frame(uint16_t type, const json_t *obj, uint8_t **out, size_t *out_len);

/* Parses a payload as one strict JSON object (duplicate keys rejected, no
 * trailing bytes, no NUL bytes). On success *out is a new reference owned by the
 * caller (json_decref). Returns 0 or -EBADMSG. */
int npf_wire_parse_json(const uint8_t *payload, size_t len, json_t **out);

/* Messages. Every *_from_json rejects missing or unknown keys and wrong types
 * with -EBADMSG; every *_to_json returns a new reference (caller decrefs) or
 * NULL on allocation failure. */

struct npf_msg_hello {
	char node[NPF_NAME_MAX];
	uint64_t instance;    /* never 0 */
	bool want_candidates; /* discovery asks for them; per-path identity does not */
	/* The requester's own candidate addresses ("addrs", optional): the only
	 * targets the receiver will probe for its REVERSE_REQs on this connection.
	 * Absent (a HELLO without the key) means no reverse work at all. */
	bool addrs_present;
	struct npf_addr addrs[NPF_WIRE_MAX_CANDS]; /* distinct, family and addr only */
	size_t n_addrs;
};

struct npf_msg_hello_reply {
	char node[NPF_NAME_MAX];
	uint64_t instance;
	uint32_t proto;                  /* highest protocol version spoken */
	struct npf_candidate *cands;     /* owned; NULL when not asked */
	size_t n_cands;
	char (*ifnames)[IFNAMSIZ];       /* owned */
	size_t n_ifnames;
	bool lists; /* candidates/ifnames present (sent even when empty) */
	/* Candidates carry "gid_index" (optional per candidate). Only sent to a
	 * requester whose HELLO had "addrs": a daemon that old rejects unknown keys. */
	bool gids;
};

/* Since version 3 a prober asks for every path's data listener on its one control
 * connection to the peer: addr names the peer's own address to listen on (the path's), id
 * matches the reply (several are in flight). */
struct npf_msg_open_data {
	uint32_t id;
	uint32_t bytes; /* bulk payload each way, NPF_WIRE_MIN_BULK..NPF_WIRE_MAX_BULK */
	struct npf_addr addr;
};

struct npf_msg_open_data_reply {
	uint32_t id;
	uint16_t port; /* 0: declined (not its address, a cap, no socket): no evidence */
	uint8_t token[NPF_WIRE_TOKEN_LEN]; /* zero with a cluster key: both sides derive it */
	/* With a cluster key: the listener's random nonce, which the token and the reply's
	 * MAC are derived with (lib/auth.h); absent without one. */
	uint8_t nonce[NPF_WIRE_NONCE_LEN];
	bool has_nonce;
};

struct npf_msg_data_auth {
	uint8_t token[NPF_WIRE_TOKEN_LEN];
};

struct npf_msg_data_auth_reply {
	char node[NPF_NAME_MAX];
	uint64_t instance;
	uint8_t mac[NPF_WIRE_MAC_LEN]; /* with a cluster key (has_mac): npf_auth_data_reply_mac */
	bool has_mac;
};

/* One reverse target (version 3): the requester's address and the data listener it
 * opened there for this request, so the peer's probe of it is one data connection. */
struct npf_rev_target {
	struct npf_addr addr;
	uint16_t port;                     /* 1..65535 */
	uint8_t token[NPF_WIRE_TOKEN_LEN]; /* zero with a cluster key: both sides derive it */
	uint8_t nonce[NPF_WIRE_NONCE_LEN]; /* with a cluster key (has_nonce) */
	bool has_nonce;
};

struct npf_msg_reverse_req {
	uint32_t id;
	uint32_t timeout_ms; /* 1..NPF_WIRE_MAX_TIMEOUT_MS */
	uint32_t bytes;      /* as in OPEN_DATA: a ceiling */
	struct npf_rev_target targets[NPF_WIRE_MAX_TARGETS];
	size_t n_targets;    /* 1..NPF_WIRE_MAX_TARGETS, all distinct addresses */
};

struct npf_rev_result {
	struct npf_addr addr;    /* the requester's address that was probed */
	enum npf_outcome outcome;
	uint32_t rtt_us;
	char egress[IFNAMSIZ];   /* prober's kernel egress, "" if unknown */
	char detail[96];         /* human text only: nothing parses it */
	struct npf_evidence ev;  /* what the requester judges ("evidence") */
};

struct npf_msg_reverse_result {
	uint32_t id;
	struct npf_rev_result results[NPF_WIRE_MAX_TARGETS];
	size_t n_results;
};

struct npf_msg_error {
	enum npf_wire_err code;
	char message[128];
};

json_t *npf_wire_hello_to_json(const struct npf_msg_hello *m);
int npf_wire_hello_from_json(json_t *j, struct npf_msg_hello *m);

/* The HELLO of one path probe (probe/tprobe_path.c): identity only. Per-peer facts (our
 * addresses, the peer's candidates) travel on the discovery connection, once per peer, so
 * the path's frames stay within NPF_WIRE_PATH_FRAME_MAX. */
void npf_wire_path_hello(const char *node, uint64_t instance, struct npf_msg_hello *h);

/* The daemon's answer to HELLO h (probe/server.c): the lists only when h asks for them
 * (discovery), borrowed from cands/ifnames (they must outlive rep's serialisation; rep owns
 * nothing: never npf_wire_hello_reply_clear() it). */
void npf_wire_hello_answer(const struct npf_msg_hello *h, const char *node, uint64_t instance,
			   struct npf_candidate *cands, size_t n_cands,
			   char (*ifnames)[IFNAMSIZ], size_t n_ifnames,
			   struct npf_msg_hello_reply *rep);

json_t *npf_wire_hello_reply_to_json(const struct npf_msg_hello_reply *m);
/* On success m owns cands/ifnames: release with npf_wire_hello_reply_clear(). On
 * failure nothing is left allocated. */
int npf_wire_hello_reply_from_json(json_t *j, struct npf_msg_hello_reply *m);
void npf_wire_hello_reply_clear(struct npf_msg_hello_reply *m);

json_t *npf_wire_open_data_to_json(const struct npf_msg_open_data *m);
int npf_wire_open_data_from_json(json_t *j, struct npf_msg_open_data *m);

json_t *npf_wire_open_data_reply_to_json(const struct npf_msg_open_data_reply *m);
int npf_wire_open_data_reply_from_json(json_t *j, struct npf_msg_open_data_reply *m);

json_t *npf_wire_data_auth_to_json(const struct npf_msg_data_auth *m);
int npf_wire_data_auth_from_json(json_t *j, struct npf_msg_data_auth *m);

json_t *npf_wire_data_auth_reply_to_json(const struct npf_msg_data_auth_reply *m);
int npf_wire_data_auth_reply_from_json(json_t *j, struct npf_msg_data_auth_reply *m);

json_t *npf_wire_reverse_req_to_json(const struct npf_msg_reverse_req *m);
int npf_wire_reverse_req_from_json(json_t *j, struct npf_msg_reverse_req *m);

json_t *npf_wire_reverse_result_to_json(const struct npf_msg_reverse_result *m);
int npf_wire_reverse_result_from_json(json_t *j, struct npf_msg_reverse_result *m);

/* ROW: one node's row of the job's pair-state matrix (docs/decision.md §10). States are
 * one character per job node, in the job's hostlist order (the job id binds that order):
 * 'o' ok, 'f' fail, 'u' unknown, '-' outside (a sparse plan left the pair out), and '.'
 * exactly at the sender's own index. A network the sender has no address on is absent. */
struct npf_row_net {
	char key[NPF_WIRE_NET_KEY_MAX]; /* "198.18.1.0/24": address/prefix, canonical text */
	int64_t rank;                   /* the sender's rank key, higher is better */
	int64_t quality;                /* the quality key only (lib/jobcheck.h) */
	char *states;                   /* owned, n_nodes characters plus NUL */
};

struct npf_msg_row {
	char job[NPF_WIRE_JOB_ID_LEN + 1]; /* lower-case hex */
	char node[NPF_NAME_MAX];
	uint64_t instance; /* never 0 */
	uint32_t index;    /* the sender's index in the hostlist, < n_nodes */
	uint32_t n_nodes;  /* 2..NPF_WIRE_MAX_ROW_NODES */
	struct npf_row_net nets[NPF_WIRE_MAX_ROW_NETS];
	size_t n_nets; /* 0..NPF_WIRE_MAX_ROW_NETS, keys distinct */
	/* How long the sender waits for the JOB_DECISION after sending (the rest of its
	 * budget plus the exchange's): the coordinator decides before the first waiter gives
	 * up. 0 (absent) = the coordinator's own default. <= NPF_WIRE_MAX_TIMEOUT_MS. */
	uint32_t wait_ms;
	/* "settle" (optional, only ever true): the sender's last try of this job start (its
	 * Prolog retried an unknown job check): the coordinator lets an unknown better network
	 * give way to a verified one (lib/jobcheck.h settle). */
	bool settle;
};

json_t *npf_wire_row_to_json(const struct npf_msg_row *m);
/* On success m owns each net's states: release with npf_wire_row_clear(). On failure
 * nothing is left allocated. */
int npf_wire_row_from_json(json_t *j, struct npf_msg_row *m);
void npf_wire_row_clear(struct npf_msg_row *m);

/* JOB_DECISION: the coordinator's answer to the rows of one job check, the same bytes for
 * every node of the job (docs/decision.md §10). nodes[i] says what node i is in the
 * decision: 's' a suspect (fails, drained), 'm' no row from it (then the verdict is
 * unknown), '.' otherwise. */
struct npf_msg_job_decision {
	char job[NPF_WIRE_JOB_ID_LEN + 1];
	uint32_t n_nodes;		/* 1..NPF_WIRE_MAX_ROW_NODES */
	uint8_t verdict;		/* enum npf_job_verdict (lib/jobcheck.h) */
	char net[NPF_WIRE_NET_KEY_MAX];	/* the job's network, "" none */
	char best[NPF_WIRE_NET_KEY_MAX]; /* the best network any pair reached, "" none */
	char *nodes;			/* owned, n_nodes characters plus NUL */
	uint32_t n_rows;		/* rows the coordinator held */
	char reason[320];		/* one line */
};

json_t *npf_wire_job_decision_to_json(const struct npf_msg_job_decision *m);
/* On success m owns nodes: release with npf_wire_job_decision_clear(). */
int npf_wire_job_decision_from_json(json_t *j, struct npf_msg_job_decision *m);
void npf_wire_job_decision_clear(struct npf_msg_job_decision *m);

/* "198.18.1.0/24"-style network keys: a canonical address, '/', a prefix that fits the
 * family. */
bool npf_wire_net_key_valid(const char *s);

json_t *npf_wire_error_to_json(const struct npf_msg_error *m);
int npf_wire_error_from_json(json_t *j, struct npf_msg_error *m);

/* Stable names ("bad-request", ...); never NULL. */
const char *npf_wire_err_name(enum npf_wire_err e);
const char *npf_wire_type_name(uint16_t type);

/* Address text helpers: "198.18.0.1" / "2001:db8::1" <-> npf_addr (family and
 * addr only). Return 0 or -EINVAL. */
int npf_wire_addr_parse(const char *s, struct npf_addr *out);

/* Node names on the wire: 1..NPF_NAME_MAX-1 printable ASCII, no spaces. Inline so that
 * lib/auth.c needs nothing of wire.c, whose registry uses auth.c's codecs (no cycle between
 * the two files). */
static inline bool npf_wire_name_valid(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strnlen(s, NPF_NAME_MAX);
	if (n == 0 || n >= NPF_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f)
			return false;
	return true;
}

#endif
