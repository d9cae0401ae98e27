/* SPDX-License-Identifier: MIT */
/* Internal to the decision (lib/recommend.c, evidence.c, rank.c, publish.c, jobwide.c,
 * hcas.c, outcome.c, jobapply.c, jobwide_ompi.c, note.c, varset.c, rails.c, ompi.c):
 * the working state of one npf_recommend() call and the helpers its stages share. Not an
 * API: nothing outside those files includes it. */
#ifndef NPF_DECIDE_H
#define NPF_DECIDE_H

#include "candidates.h"
#include "pairstate.h"
#include "recommend.h"

#include <arpa/inet.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* Peers may announce anything; bound what one check can make us hold. */
#define REC_NETS_MAX 1024
#define REC_VALUE_MAX 4096
#define PREFER_NONE 0xffffu

/* How one of our interfaces fares on one network. Higher is better. */
enum est {
	EST_ABSENT = 0, /* the interface holds no address on the network */
	EST_FAIL,	/* some probed peer failed in some direction */
	EST_UNKNOWN,	/* no failure, but some peer's evidence is missing */
	EST_WORKS,	/* ok both ways with every (probed) peer */
};

struct eval {
	enum est state;
	int peer; /* the deciding peer (first failure, else first unknown), -1 none */
	enum npf_outcome outcome;
	enum npf_direction dir;
	char detail[96];
	size_t n_ok, n_fail, n_unknown;
	struct npf_addr addr; /* our address on the network */
};

/* A network of the job: a prefix some node announced, with its ranking facts. */
struct net {
	struct npf_addr prefix; /* masked, prefixlen set */
	bool avoid;
	unsigned int prefer; /* strongest prefer pattern matched, PREFER_NONE */
	bool role;	     /* a container bridge / overlay / VPN sits on it somewhere */
	bool rdma;	     /* every announced interface on it is RDMA-backed */
	int64_t speed;	     /* slowest announced speed, 0 when any is unknown */
	bool mgmt;	     /* the management network: some node's name resolves into it
			      * (npf_node.name_addr) */
	uint32_t unsteer;    /* enum npf_var bits: published interface variables whose
			      * consumer cannot be steered to it on some node holding it
			      * (rank.c steer_bits); 0: every consumer binds an address on it */
	size_t n_members;
	/* The network's name in the job check (the row's key): its CIDR, or for a routed host
	 * link (a /31 or /30 of ours alone, the peers reached through it on theirs) the
	 * prefix covering our address and the peer addresses our links there reached, the
	 * same on every node (rank.c dec_net_keys). */
	char key[INET6_ADDRSTRLEN + 5];
	/* local result */
	enum est state;
	int ifc; /* our best interface on it, -1 */
};

struct ctx {
	const struct npf_inventory *inv;
	const struct npf_check *chk;
	const struct npf_policy *pol;
	struct npf_recommendation *out;
	bool sparse;
	int version;
	size_t n_peers; /* peers in this node's evidence (all but those outside a sparse plan) */
	struct net *nets;
	size_t n_nets;
	bool nets_capped;
	struct eval *ev;  /* n_ifaces x n_nets */
	int *link_idx;	  /* n_ifaces x n_nodes: index into chk->links, -1 */
	size_t *path_off; /* n_nodes + 1: CSR of chk->paths by peer */
	size_t *path_idx;
	size_t *peer_fail; /* n_nodes: how many (interface, network) evaluations each peer broke */
	bool *suspect;	   /* n_nodes: the job check's suspects (pol->job), outside the evidence:
			    * they are drained by their own fail, so their pairs decide nothing
			    * for the others; NULL without a job view */
	int chosen;	   /* index into nets, -1 */
	int ompi_net;	   /* the network Open MPI's values name when it cannot use the chosen
			    * one (a secondary subnet, publish.c ompi_decide), -1: the chosen */
	int fabric;	   /* the RDMA network the ports follow (dec_is_rail), -1 none */
	uint32_t unsteered; /* enum npf_var bits of consumers that no variable steers to the
			     * chosen network here: their rule left them out (publish.c) */
	int err;
};

/* ---- shared helpers ---- */

/* ---- small helpers ------------------------------------------------------------------ */

static inline void copy_str(char *dst, size_t dstsz, const char *src)
{
	snprintf(dst, dstsz, "%s", src ? src : "");
}

/* snprintf for human text where cutting a long line short is acceptable. */
static inline void bfmt(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline void bfmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static inline const char *node_name(const struct ctx *c, int k)
{
	if (k < 0 || (size_t)k >= c->chk->n_nodes)
		return "?";
	return c->chk->nodes[k].name[0] ? c->chk->nodes[k].name : "?";
}

static inline unsigned int addr_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

static inline bool addr_valid(const struct npf_addr *a)
{
	return (a->family == AF_INET || a->family == AF_INET6) &&
	       a->prefixlen <= addr_bits(a->family);
}

/* Addresses that can name a network of the job: global enough for peers to reach. */
static inline bool addr_usable(const struct npf_addr *a)
{
	return addr_valid(a) && !npf_addr_is_local_only(a) &&
	       !(a->flags & (NPF_ADDR_TENTATIVE | NPF_ADDR_DADFAILED));
}

static inline void addr_mask(const struct npf_addr *a, unsigned int prefixlen, struct npf_addr *out)
{
	unsigned int full, rest;

	memset(out, 0, sizeof(*out));
	out->family = a->family;
	if (prefixlen > addr_bits(a->family))
		prefixlen = addr_bits(a->family);
	out->prefixlen = (uint8_t)prefixlen;
	full = prefixlen / 8;
	rest = prefixlen % 8;
	memcpy(out->addr, a->addr, full);
	if (rest)
		out->addr[full] = (uint8_t)(a->addr[full] & (0xff << (8 - rest)));
}

/* How many leading bits a and b share, at most max. */
static inline unsigned int addr_common_bits(const struct npf_addr *a, const struct npf_addr *b,
					    unsigned int max)
{
	unsigned int n = 0;

	while (n < max && ((a->addr[n / 8] ^ b->addr[n / 8]) & (0x80 >> (n % 8))) == 0)
		n++;
	return n;
}

static inline bool in_net(const struct npf_addr *a, const struct net *n)
{
	return a->family == n->prefix.family &&
	       npf_addr_same_subnet(a, &n->prefix, n->prefix.prefixlen);
}

static inline void cidr_str(const struct npf_addr *prefix, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	npf_addr_str(prefix, ip, sizeof(ip));
	snprintf(buf, len, "%s/%u", ip, prefix->prefixlen);
}

static inline bool iface_is_loopback(const struct npf_iface *ifc)
{
	return ifc->kind == NPF_KIND_LOOPBACK || (ifc->flags & IFF_LOOPBACK) ||
	       strcmp(ifc->name, "lo") == 0;
}

static inline bool pat_match(const struct npf_pattern_list *l, const char *name,
			     unsigned int *first)
{
	if (!l)
		return false;
	for (unsigned int i = 0; i < l->n && i < NPF_CONFIG_PATTERNS_MAX; i++) {
		if (l->pat[i][0] && fnmatch(l->pat[i], name, 0) == 0) {
			if (first)
				*first = i;
			return true;
		}
	}
	return false;
}

/* Appends ",tok" (or "tok" when buf is empty) to buf; false when it does not fit. */
static inline bool list_append(char *buf, size_t len, const char *tok)
{
	size_t used = strlen(buf);
	int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", tok);

	return n >= 0 && (size_t)n < len - used;
}

static inline const struct eval *ev_at(const struct ctx *c, size_t i, size_t n)
{
	return &c->ev[i * c->n_nets + n];
}

/* ---- stages (each file's header comment says what it owns) ---------------------------- */

/* note.c: the recommendation's notes */
/* A caveat note (code NPF_NOTE_CAVEAT, about no variable). */
void dec_add_note(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A structured note; node and ifname may be NULL. Sets c->err on allocation failure. */
void dec_note(struct ctx *c, enum npf_note_code code, int var, const char *node, const char *ifname,
	      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* varset.c: the variable set being built (vals[NPF_VAR__COUNT], owned strings) */
bool dec_var_wanted(const struct ctx *c, enum npf_var v);
/* Replaces vals[v] with a copy of value when the policy publishes v; c->err on ENOMEM. */
void dec_set_var(struct ctx *c, char **vals, enum npf_var v, const char *value);
void dec_drop_var(char **vals, enum npf_var v);

/* rails.c: the RDMA fabric and its rails */
/* The RDMA network the ports follow (index into nets), -1 none. Needs c->chosen. */
int dec_fabric_net(const struct ctx *c);
/* Network n carries the job's RDMA traffic (rail_rows[]); cfg: the port is named by
 * [publish] rdma_fabric. Needs c->fabric. */
bool dec_rail_net(const struct ctx *c, size_t n, bool cfg);
/* Network n is the chosen one, or a rail of the RDMA fabric (the chosen network when it
 * is RDMA, else the best-ranked RDMA network if it works): RDMA-backed and equal to it on
 * every quality row of the ranking (one subnet per rail). */
bool dec_is_rail(const struct ctx *c, size_t n);

/* ompi.c: what Open MPI sees of an interface */
bool dec_ompi_lists(const struct npf_addr *a);
/* The interface's primary IPv4 address (the one Open MPI uses), NULL: none. */
const struct npf_addr *dec_ompi_primary(const struct npf_iface *ifc);
/* The first IPv4 address of the announced candidates of ifname (NULL: none): what Open
 * MPI sees of that interface (dec_ompi_primary). */
const struct npf_addr *dec_ompi_cand_primary(const struct npf_node *nd, const char *ifname);
const struct npf_addr *dec_ompi_stray(const struct npf_addr *addrs, size_t n,
				      const struct net *net);

/* outcome.c: the decision explained */
/* "container bridge"-style description of an interface for humans. */
const char *dec_iface_desc(const struct npf_iface *ifc);
/* One rejection per interface of ours that was not chosen. 0 or -ENOMEM. */
int dec_build_rejections(struct ctx *c);
/* What NCCL would use without our variables, as a note. */
void dec_predict_nccl_default(struct ctx *c);
/* Whom to blame when nothing works: a peer that breaks most of our interfaces, or this node
 * when every interface fails with every peer it was tested against. */
void dec_blame(struct ctx *c);
/* The one-line summary of a local decision. */
void dec_summarise(struct ctx *c);

/* jobapply.c: the job check's decision applied here (needs pol->job) */
/* c->suspect from pol->job: the suspects among our peers. 0 or -ENOMEM. */
int dec_mark_suspects(struct ctx *c);
/* Sets out->verdict and c->chosen from the job decision (this node's role, job_rules[]). */
void dec_job_choose(struct ctx *c);
/* The failure fields for a node outside the job's choice (or of a failed job). */
void dec_job_failure(struct ctx *c);
/* The summary under a job decision. */
void dec_job_summarise(struct ctx *c);

/* recommend.c: runs the stages, owns the recommendation */

/* evidence.c: the probe results, reduced per (our interface, network) */
int dec_build_indexes(struct ctx *c);
bool dec_outside_plan(const struct ctx *c, const struct npf_node *nd);
void dec_evaluate_all(struct ctx *c);
void dec_eval_text(const struct ctx *c, const struct eval *e, char *buf, size_t len);
int dec_iface_best_net(const struct ctx *c, size_t i);
/* Our interface i holds addresses on more than one network of the job (its links are then
 * split per network from the paths). */
bool dec_iface_multi(const struct ctx *c, size_t i);
/* The pair (our interface i on network n, peer k >= 1) through lib/pairstate, with the
 * deciding detail in detail[dlen]: the one evaluation the local decision and the job row
 * (npf_recommend_row) share. A suspect of the job check is outside. multi =
 * dec_iface_multi(c, i). */
struct npf_pair dec_pair(const struct ctx *c, size_t i, const struct net *n, bool multi, size_t k,
			 char *detail, size_t dlen);
/* Whether our address a on ifc was announced (and so probed). */
bool dec_announced(const struct ctx *c, const struct npf_iface *ifc, const struct npf_addr *a);

/* rank.c: the networks of the job and their order */
int dec_build_nets(struct ctx *c);
int dec_net_cmp(const void *pa, const void *pb);
const char *dec_net_cmp_reason(const struct net *a, const struct net *b);
/* Only the quality rows (policy, steer, role, RDMA, speed, management): < 0 when a is
 * strictly better. */
int dec_net_quality_cmp(const struct net *a, const struct net *b);
/* A network's keys in a job row (lib/jobrows), generated from the ranking table: each row
 * with a key packs its fact in its width of bits, in table order; quality holds the
 * quality rows, rank adds the family (IPv4 first); npf_job_net_order() then compares the
 * prefix bytes, so the job orders networks as the local ranking does (test_jobrows
 * test_order_agrees). */
void dec_net_row_keys(const struct net *n, int64_t *rank, int64_t *quality);
/* How many bits the rank key uses (< 63 so it stays a positive int64_t). */
unsigned int dec_net_key_bits(void);
int dec_local_cmp(const struct ctx *c, size_t n, size_t i, size_t j);
/* Fills every network's key (after dec_evaluate_all: it needs our interface there). */
void dec_net_keys(struct ctx *c);
bool dec_iface_rdma(const struct npf_inventory *inv, const struct npf_iface *ifc);
/* v names an interface for a consumer with an address model (lib/consumer.h), and the
 * policy publishes it: naming the interface steers that consumer to a network. */
bool dec_steer_var(const struct ctx *c, enum npf_var v);
/* "NCCL, Gloo" for the consumers of the variables in bits (enum npf_var). */
void dec_consumers_text(uint32_t bits, char *buf, size_t len);

/* hcas.c: the RDMA facts (ports, GIDs) */
/* Fills c->out->hcas, c->fabric and the RDMA variables' values in pre[NPF_VAR__COUNT]
 * (owned strings, freed by the caller). 0 or -errno. */
int dec_build_hcas(struct ctx *c, char **pre);
/* NCCL_IB_HCA's value for the published ports of r, their count in *count. */
bool dec_hca_value(const struct npf_recommendation *r, char *buf, size_t len, size_t *count);

/* publish.c: this node's environment */
int dec_build_choices(struct ctx *c);
int dec_build_env(struct ctx *c);

/* jobwide.c: values that hold on every node of the job */
int dec_job_wide(struct ctx *c, char **vals);
/* jobwide_ompi.c: the Open MPI rows' job-wide values, all three together in vals;
 * same_name: every node's interface on the chosen network has the same name. */
void dec_ompi_job_wide(struct ctx *c, char **vals, bool same_name);

/* The evidence and the network order of a decision, shared by npf_recommend() and
 * npf_recommend_row() (lib/jobrow.c). Returns 0, -ENOMEM; c is released with
 * dec_ctx_free() either way. */
int dec_ctx_prepare(struct ctx *c, const struct npf_inventory *inv, const struct npf_check *chk,
		    const struct npf_policy *pol, struct npf_recommendation *out);
void dec_ctx_free(struct ctx *c);

#endif
