/* SPDX-License-Identifier: MIT */
/* Results of a preflight check: who the peers are, what each probe saw, and the
 * per-interface summary that the recommendation consumes. */
#ifndef NPF_CHECK_H
#define NPF_CHECK_H

#include "model.h"

/* One outcome per path. Order matters: lower is better when summarising. */
enum npf_outcome {
	NPF_OUT_OK = 0,
	NPF_OUT_WRONG_EGRESS,     /* connected, but the kernel sent it out another interface */
	NPF_OUT_BULK_STALL,       /* handshake passed, bulk payload did not (MTU black hole) */
	NPF_OUT_WRONG_PEER,       /* answered by ourselves or a third node */
	NPF_OUT_REFUSED,          /* RST: firewall reject or nothing listening */
	NPF_OUT_TIMEOUT,          /* no answer within the probe timeout */
	NPF_OUT_UNREACHABLE,      /* no route, ENETUNREACH, EHOSTUNREACH, no peer address here */
	NPF_OUT_PEER_UNAVAILABLE, /* no daemon answering on that node */
	NPF_OUT_NOT_PROBED,       /* outside the (sparse) plan or not attempted */
	NPF_OUT__COUNT
};

enum npf_direction {
	NPF_DIR_FORWARD = 0, /* this node connected to the peer */
	NPF_DIR_REVERSE = 1, /* the peer connected back to this node */
};

enum npf_verdict {
	NPF_VERDICT_UNKNOWN = 0, /* evidence incomplete (peers not answering); never "ok" */
	NPF_VERDICT_OK,
	NPF_VERDICT_FAIL,
	NPF_VERDICT_DEGRADED, /* ok, but the job moved to a strictly worse network than its
			       * best (docs/decision.md §10): the env is published as for ok */
	NPF_VERDICT__COUNT
};

/* ok and degraded publish an environment; fail and unknown do not. */
bool npf_verdict_publishes(enum npf_verdict v);

/* A candidate interface of a node as announced in HELLO (one entry per address). */
struct npf_candidate {
	char ifname[IFNAMSIZ];
	struct npf_addr addr;
	enum npf_kind kind;
	uint32_t roles;
	uint32_t mtu;
	int64_t speed_mbps;
	char rdma_dev[NPF_NAME_MAX]; /* verbs device behind this netdev, "" if none */
	int rdma_port;               /* 1-based, 0 if none */
	enum npf_link_layer rdma_ll;
	bool rdma_active;            /* port ACTIVE */
	/* RoCE: the index of the port's RoCE v2 GID carrying this address (lib/gid
	 * gid_index_of_addr), so a job-wide decision can see every node's index.
	 * Not known (no GID, IB, or a peer that did not announce it) when !has_gid. */
	bool has_gid;
	uint16_t gid_index;
};

struct npf_node {
	char name[NPF_NAME_MAX]; /* as in the hostlist */
	uint64_t instance;       /* random id of the daemon instance, 0 if unknown */
	bool available;          /* its daemon answered */
	char error[96];          /* why not, when !available */
	struct npf_candidate *cands; /* owned */
	size_t n_cands;
	char (*ifnames)[IFNAMSIZ]; /* owned: every interface name on the node (for NCCL matching) */
	size_t n_ifnames;
	bool probed;             /* in this node's probe plan (always false for nodes[0]) */
	struct npf_addr name_addr; /* the address its name resolved to that answered HELLO:
				    * the management network (docs/decision.md, rails);
				    * family 0 when unknown (nodes[0], no answer) */
	/* Responsiveness of the peer's daemon, so a load-shaped result shows why. */
	uint32_t hello_rtt_us;   /* discovery: connect + HELLO round trip, 0 if none */
	uint32_t rev_ms;         /* reverse request to its result, 0 if none */
	uint32_t n_inconclusive; /* its paths whose failure was load-shaped (now not-probed) */
};

/* One raw probe. */
struct npf_path {
	int peer;                   /* index into check->nodes (never 0 = self) */
	enum npf_direction dir;
	char local_if[IFNAMSIZ];    /* FORWARD: kernel egress; REVERSE: our interface probed */
	struct npf_addr local_addr; /* REVERSE: our address the peer connected to */
	char peer_if[IFNAMSIZ];     /* FORWARD: the peer interface targeted */
	struct npf_addr peer_addr;  /* FORWARD: the peer address targeted */
	enum npf_outcome outcome;
	uint32_t rtt_us;            /* connect RTT, 0 if none */
	char detail[96];            /* "answered by node1", "EHOSTUNREACH", ... */
};

/* Summary per (local interface, peer): what the recommendation reads. */
struct npf_link {
	char ifname[IFNAMSIZ]; /* our interface */
	int peer;              /* index into check->nodes */
	enum npf_outcome fwd;  /* best forward outcome on this interface toward the peer */
	enum npf_outcome rev;  /* best reverse outcome: peer -> our address on this interface */
	uint32_t fwd_rtt_us, rev_rtt_us;
	char peer_if[IFNAMSIZ]; /* the peer's interface on the same network, "" if none */
	struct npf_addr peer_addr;
	char fwd_detail[96], rev_detail[96];
};

struct npf_check {
	uint64_t started_unix_ms;
	uint32_t duration_ms;
	uint32_t timeout_ms;
	bool sparse;               /* sparse plan: not every pair probed */
	struct npf_node *nodes;    /* owned; nodes[0] is this node */
	size_t n_nodes;
	struct npf_path *paths;    /* owned */
	size_t n_paths;
	struct npf_link *links;    /* owned */
	size_t n_links;
	/* Load seen while checking (docs/json.md "load"): our loop's timer lateness and
	 * what the probe engine did about load-shaped evidence. */
	uint32_t tick_us;          /* lateness sampling period, 0 = not sampled */
	uint32_t loop_samples;     /* samples taken */
	uint32_t loop_late_max_us; /* worst lateness of our loop */
	uint32_t loop_late_50ms;   /* samples at least 50 ms late */
	uint32_t n_inconclusive;   /* paths whose failure was load-shaped: not-probed now */
	uint32_t n_retried;        /* path attempts repeated within the budget */
	uint32_t n_shared;         /* path results shared with another consumer of the job */
};

/* Frees everything a check owns and zeroes it; safe on a zeroed struct. */
void npf_check_clear(struct npf_check *c);

/* Frees a node's arrays; the node itself is caller's. */
void npf_node_clear(struct npf_node *n);

/* Stable lower-case names ("ok", "wrong-peer", ...) and their inverse.
 * npf_outcome_parse returns the enum or -EINVAL. */
const char *npf_outcome_name(enum npf_outcome o);
int npf_outcome_parse(const char *s);
const char *npf_verdict_name(enum npf_verdict v);
/* The inverse of npf_verdict_name ("ok", "degraded", "fail", "unknown"): the enum, or
 * -EINVAL for anything else (NULL included). The one parser of verdict names that the
 * CLI, the Slurm plugin and explain share, so a new verdict reaches them all. */
int npf_verdict_parse(const char *s);
/* npf_verdict_publishes() of a verdict name; false for a name npf_verdict_parse refuses. */
bool npf_verdict_name_publishes(const char *s);
const char *npf_direction_name(enum npf_direction d);

#endif
