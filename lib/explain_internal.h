/* SPDX-License-Identifier: MIT */
/* What the explain modules share and nothing else uses: the parse context, the evidence view
 * the rules read, a rule's finding, the rule row, and the helpers more than one module calls.
 *
 * The modules and their arrows (no cycles):
 *   explain.c (records, the passes) -> explain_procs.c (per-process table, story)
 *                                   -> explain_diagnose.c (rule table, report writer)
 *   explain_diagnose.c -> explain_rules_{bind,path,notnet}.c (pure tests) -> explain_evidence.c
 *   explain_json.c (report to JSON); logparse*.c (the line layer) under all of them. */
#ifndef NPF_EXPLAIN_INTERNAL_H
#define NPF_EXPLAIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "explain.h"

#define XP_HT_SIZE 8192 /* > 2 * NPF_XP_MAX_PROCS */

/* One run of npf_explain(): the report being built and what the passes keep on the side. */
struct xp_ctx {
	struct npf_xp_report *rep;
	struct npf_xp_line *lines; /* recognised lines, in input order */
	size_t n_lines, cap_lines;
	size_t procs_cap;
	int job;	/* the "job" pseudo-process for lines that name nobody, -1 none yet */
	size_t pending; /* index+1 of an Open MPI help-box line waiting for its host, 0 none */
	size_t pending_lineno;
	char box_host[64]; /* the "Local host:" of the Open MPI help box being read */
	size_t box_until;  /* its last line number */
	/* Lookups by host:pid and by rank (open addressing, index+1, 0 = empty): a log of 4096
	 * ranks interleaved must not cost a scan of every process per line. */
	int by_pid[XP_HT_SIZE], by_rank[XP_HT_SIZE];
	size_t kept[NPF_XL__COUNT]; /* lines kept per kind */
	unsigned cur_cont;	    /* continuation lines of the record being fed */
	/* Records being assembled (a line and the lines that continue it), one per writer. */
	struct pend {
		bool used, last_error;
		uint32_t stream;
		size_t lineno, len;
		unsigned n_cont;
		char buf[4096];
	} pend[4];
};

/* What the rules read: the per-process table and the kept lines, never written while the
 * rules run (the const is the proof). */
struct xp_evidence {
	const struct npf_xp_report *rep;
	const struct npf_xp_line *lines;
	size_t n_lines;
	int job; /* the "job" pseudo-process, -1 none */
};

/* What a rule found: the lines that show it, what it is about (borrowed from the evidence)
 * and one sentence. fix is "" when the row's fix applies as written. */
struct xp_finding {
	const struct npf_xp_line *lines[8];
	size_t n_lines;
	const char *ifname, *addr, *host;
	char summary[sizeof(((struct npf_xp_report *)0)->summary)];
	char fix[sizeof(((struct npf_xp_report *)0)->fix_hint)];
};

/* One root cause: a pure test over the evidence and what to do about it. */
struct xp_rule {
	enum npf_xp_cause cause;
	const char *name; /* stable (docs/explain.md) */
	int tier;
	bool (*test)(const struct xp_evidence *e, struct xp_finding *f);
	uint64_t evidence; /* the kinds of line the test cites, one bit per kind */
	const char *fix;
	unsigned compat; /* causes that commonly come with this one (bit per cause) */
};

/* Bounded copy of text that is already clean UTF-8: cuts before a character that does not fit. */
static inline void xp_cpy(char *dst, size_t len, const char *src)
{
	npf_xp_clean_text(dst, len, src ? src : "", src ? strlen(src) : 0);
}

/* snprintf() into a fixed buffer may cut inside a UTF-8 character: mend the end. */
static inline void xp_mend(char *s, size_t len)
{
	char tmp[512];

	npf_xp_clean_text(tmp, sizeof(tmp) < len ? sizeof(tmp) : len, s, strlen(s));
	memcpy(s, tmp, strlen(tmp) + 1);
}

static inline bool xp_is_connect_kind(enum npf_xp_kind k)
{
	return k == NPF_XL_CONNECT_FAIL || k == NPF_XL_CONNECT_RETRY || k == NPF_XL_OMPI_CONNECT ||
	       k == NPF_XL_GLOO_CONNECT || k == NPF_XL_STORE_FAIL;
}

/* Cites a line (NULL: nothing to cite). */
static inline void xp_cite(struct xp_finding *f, const struct npf_xp_line *l)
{
	if (l && f->n_lines < sizeof(f->lines) / sizeof(f->lines[0]))
		f->lines[f->n_lines++] = l;
}

static inline void xp_about(struct xp_finding *f, const char *ifname, const char *addr,
			    const char *host)
{
	f->ifname = ifname;
	f->addr = addr;
	f->host = host;
}

/* The host of a process, NULL for a line that names none. */
static inline const char *xp_host_of(const struct xp_evidence *e, int proc)
{
	return proc >= 0 ? e->rep->procs[proc].host : NULL;
}

/* s, or dflt when s is NULL or "". */
static inline const char *xp_or_else(const char *s, const char *dflt)
{
	return s && s[0] ? s : dflt;
}

/* ---- explain_procs.c: the per-process table ---- */

/* A record, already parsed into p (its message points into the record's text). Returns 0 or
 * -ENOMEM. */
int xp_feed_parsed(struct xp_ctx *c, struct npf_xp_parsed *pp, size_t lineno);
/* The input ended: a help box still waiting for its host is charged to "job". */
void xp_flush_box(struct xp_ctx *c);
/* Who failed first, and how many failed as a cause or as a consequence. */
void xp_story(struct xp_ctx *c);

/* ---- explain_diagnose.c: the rule table and the report writer ---- */

/* Runs the rule table over the evidence and writes the cause into c->rep. */
void xp_diagnose(struct xp_ctx *c);
/* The rule table, in precedence order (for the tests); *n rows. Borrowed, static. */
const struct xp_rule *xp_rule_table(size_t *n);

/* ---- explain_evidence.c: what the rules read (all pure) ---- */

bool xp_is_loopback(const char *a);
bool xp_is_link_local(const char *a);
/* The address without an IPv4-mapped prefix ("::ffff:10.0.0.1" -> "10.0.0.1"). */
const char *xp_unmapped(const char *a);
bool xp_is_docker_bridge_net(const char *a);
bool xp_is_bridge_default(const char *a);
/* What an address no host has is ("a netmask"), or NULL for a plausible one (or a name). */
const char *xp_impossible_addr(const char *a);
bool xp_looks_ipv4(const char *a);
bool xp_looks_hostname(const char *n);
/* The first kept line of a kind (for proc, or any when proc < -1) whose text holds needle. */
const struct npf_xp_line *xp_line_of(const struct xp_evidence *e, enum npf_xp_kind k, int proc,
				     const char *needle);
const char *xp_env_of(const struct npf_xp_proc *pr, const char *name);
const char *xp_env_any(const struct xp_evidence *e, const char *name, int *who);
void xp_bound(const struct npf_xp_proc *pr, const char **ifn, const char **addr,
	      enum npf_xp_kind *kind);
const struct npf_xp_line *xp_first_failure_line(const struct xp_evidence *e);
bool xp_any_bound(const struct xp_evidence *e);
const char *xp_host_of_addr(const struct xp_evidence *e, const char *addr);
bool xp_plausible_peer(const struct xp_evidence *e, const char *a);
bool xp_all_bound_plausible(const struct xp_evidence *e);

/* ---- the rule tests (one per row of the table): true when the cause is shown, with f filled.
 * Pure: they only read e. ---- */

/* explain_rules_bind.c */
bool xp_test_comm_id(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_gloo_hostname(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_names_differ(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_ifname_missing(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_prefix(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_loopback(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_link_local(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_same_address(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_bridge(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_env_differs(const struct xp_evidence *e, struct xp_finding *f);
/* explain_rules_path.c */
bool xp_test_bad_address(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_refused(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_silent(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_mtu(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_gid_forced(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_gid(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_ib_mtu(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_ib_fallback(const struct xp_evidence *e, struct xp_finding *f);
/* explain_rules_notnet.c */
bool xp_test_not_network_first(const struct xp_evidence *e, struct xp_finding *f);
bool xp_test_not_network_any(const struct xp_evidence *e, struct xp_finding *f);

#endif
