/* SPDX-License-Identifier: MIT */
/* The decision: inventory + probe evidence + policy -> a verified per-node environment for
 * NCCL, Gloo, TensorPipe, UCX and Open MPI (rules, one-network argument: docs/decision.md). */
#ifndef NPF_RECOMMEND_H
#define NPF_RECOMMEND_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "config.h"
#include "model.h"
#include "nccl_default.h"
#include "pubvar.h"
#include "jobcheck.h"

/* The job decision this node applies (docs/decision.md §10): what the job check's
 * coordinator answered (wire JOB_DECISION), seen from this node. Borrowed. */
struct npf_job_view {
	enum npf_job_role role;		/* this node's role (lib/jobcheck.h) */
	const char *net;		/* the job's network key ("198.18.1.0/24"), "" none */
	const char *best;		/* the best network any pair reached, "" none: the one a
					 * suspect breaks */
	const char *const *suspects;	/* node names (hostlist order), drained by their own
					 * fail: their pairs do not count for the others */
	size_t n_suspects;
	const char *reason;		/* one line from the coordinator */
};

/* Operator policy ([publish] in lib/config.h). Pointers are borrowed for the duration of
 * npf_recommend(); a zeroed struct means: no patterns, current NCCL, every variable. */
struct npf_policy {
	const struct npf_pattern_list *prefer; /* globs, strongest first (networks, and among RDMA
						* ports); NULL = none */
	const struct npf_pattern_list *avoid;  /* an avoided network loses to all; also RDMA ports
						* (dev, dev:port) and their netdevs; NULL = none */
	const struct npf_pattern_list *rdma_fabric; /* IB ports without an IPoIB address that
						     * belong to the job's fabric (dev, dev:port
						     * globs); NULL/empty: all kept, untested */
	int nccl_version;   /* NPF_NCCL_VERSION(2, 21, 5) = 22105; <= 0 = current */
	uint32_t publish;   /* enum npf_pubvar bits (lib/config.h); 0 = all that apply */
	bool master_addr;   /* also publish MASTER_ADDR */
	const char *first_node; /* the job's first node in hostlist order (MASTER_ADDR's node);
				 * NULL or "" = unknown: MASTER_ADDR is then left out */
	bool job_wide;      /* publish only values that hold on every node of the job */
	bool sparse;        /* sparse semantics even if chk->sparse is false */
	/* The job check's decision, NULL: decide for this node alone. With it, the suspects'
	 * pairs are outside the evidence, and the verdict follows job->role: ok/degraded
	 * choose job->net (unknown when it does not work here), suspect and fail are
	 * fail, unknown is unknown; the summary says so. */
	const struct npf_job_view *job;
};

#define NPF_REC_NAME_MAX 40
#define NPF_REC_REASON_MAX 200

/* What a note is about (JSON "code"). */
enum npf_note_code {
	NPF_NOTE_OMITTED = 0,      /* a variable left out (var says which) */
	NPF_NOTE_NARROWED,         /* a list published with members left out (the HCA set) */
	NPF_NOTE_CONSUMER_ADDRESS, /* a consumer would bind an address that was not verified */
	NPF_NOTE_RDMA_DISABLED,    /* NCCL_IB_DISABLE=1 published: no ACTIVE port qualifies */
	NPF_NOTE_UNTESTED,         /* kept without a probe of its own (IB port without IPoIB) */
	NPF_NOTE_GID_VERSIONS,     /* which NCCL versions the GID settings hold for */
	NPF_NOTE_JOB_WIDE,         /* about the job-wide form of a value */
	NPF_NOTE_SPARSE,           /* a sparse plan: only probed peers were verified */
	NPF_NOTE_UNVERIFIED,       /* a better-ranked network was not fully probed */
	NPF_NOTE_CAPPED,           /* input beyond a bound was ignored */
	NPF_NOTE_CAVEAT,           /* anything else worth knowing */
	NPF_NOTE__COUNT
};

/* One note: structured for programs, text for humans (rendered by lib/envfmt). */
struct npf_note {
	enum npf_note_code code;
	int var;                 /* enum npf_var it is about, NPF_VAR_NONE */
	char node[NPF_NAME_MAX]; /* the node it is about, "" = this node / none */
	char ifname[IFNAMSIZ];   /* the interface or RDMA port ("mlx5_0:1"), "" none */
	char *text;              /* owned, one line */
};

/* "omitted", "narrowed", ...; "?" for an out-of-range value. */
const char *npf_note_code_name(enum npf_note_code c);

struct npf_envvar {
	char name[NPF_REC_NAME_MAX];
	char *value; /* owned, NUL-terminated */
};

/* One line per interface of this node that was not chosen, with its evidence. */
struct npf_rejection {
	char ifname[IFNAMSIZ];
	char reason[NPF_REC_REASON_MAX]; /* "198.18.2.0/24: wrong-peer (forward) with node2" */
	int peer;                        /* index into chk->nodes of the deciding peer, -1 none */
	char peer_name[NPF_NAME_MAX];
	enum npf_outcome outcome;        /* NPF_OUT_OK: it works but ranked lower;
					  * NPF_OUT_NOT_PROBED: never a candidate or not probed */
	enum npf_direction dir;
};

/* What every node of the job is inferred to use (nodes[0] = this node). */
struct npf_node_choice {
	char node[NPF_NAME_MAX];
	char ifname[IFNAMSIZ]; /* "" when the node announced no address on the network */
	struct npf_addr addr;
};

/* Whether NCCL's IB transport opens the port at all (ncclIbInitDevices keeps only ACTIVE
 * ports of a known link layer): a port it skips itself needs no narrowing note, and an
 * inactive one is no reason for NCCL_IB_DISABLE. The typed side of why. */
enum npf_hca_skip {
	NPF_HCA_OPENED = 0,   /* NCCL opens it: the decision judges it */
	NPF_HCA_INACTIVE,     /* port state not ACTIVE */
	NPF_HCA_LINK_UNKNOWN, /* neither InfiniBand nor Ethernet */
};

/* An RDMA port we publish (or left out, with why). */
struct npf_hca {
	char dev[NPF_NAME_MAX];
	int port;
	char netdev[IFNAMSIZ];
	enum npf_link_layer link_layer;
	int gid_index; /* the RoCE v2 GID of the probed address, -1 none/IB */
	int auto_gid;  /* NCCL's pick under the published settings, -1 n/a */
	bool published;
	enum npf_hca_skip nccl_skip;
	char why[NPF_REC_REASON_MAX]; /* for ports left out: human text, never parsed */
};

struct npf_recommendation {
	enum npf_verdict verdict;
	char summary[512]; /* one line: "ok: ens1f0 198.18.2.0/24 works to and from 3 peers" */

	/* The choice (provisional when verdict is unknown; empty when nothing was eligible). */
	bool have_choice;
	char ifname[IFNAMSIZ];   /* this node's interface */
	struct npf_addr addr;    /* its address on the chosen network */
	struct npf_addr network; /* masked prefix; prefixlen set */
	char cidr[INET6_ADDRSTRLEN + 5];
	struct npf_node_choice *nodes; /* owned; every node's inferred interface on the network */
	size_t n_nodes;
	struct npf_hca *hcas; /* owned; RDMA ports considered */
	size_t n_hcas;

	/* Published only when verdict is ok. */
	struct npf_envvar *vars; /* owned, in enum npf_var order */
	size_t n_vars;
	struct npf_note *notes; /* owned: omitted variables, narrowing, caveats */
	size_t n_notes;
	struct npf_rejection *rejections; /* owned, inventory order */
	size_t n_rejections;

	/* What NCCL would do with no settings on this node. */
	bool nccl_default_found;
	struct nccl_pick nccl_default; /* .list is a static string */
	bool nccl_default_passed;
	char nccl_default_text[NPF_REC_REASON_MAX + 96];

	/* The failure, for verdict fail (or unknown): the node to blame and its evidence. */
	char fail_node[NPF_NAME_MAX];
	char fail_ifname[IFNAMSIZ];
	enum npf_outcome fail_outcome;
	enum npf_direction fail_dir;
	int nccl_version; /* the version the decision modelled */
	char node[NPF_NAME_MAX]; /* this node (chk->nodes[0]): NETPREFLIGHT_NODE's value */
};

/* Decides for nodes[0] of chk. Pure: a function of its arguments only (pol may be NULL:
 * defaults). out is overwritten; on success and on failure the caller releases it with
 * npf_recommendation_clear(). Returns 0 (the verdict is in out->verdict), -EINVAL for
 * missing arguments or a check without nodes, or -ENOMEM. */
int npf_recommend(const struct npf_inventory *inv, const struct npf_check *chk,
		  const struct npf_policy *pol, struct npf_recommendation *out);

/* Frees everything rec owns and zeroes it; safe on a zeroed struct. */
void npf_recommendation_clear(struct npf_recommendation *rec);

/* The published value of v, or NULL (borrowed from rec). */
const char *npf_recommendation_get(const struct npf_recommendation *rec, enum npf_var v);

#endif
