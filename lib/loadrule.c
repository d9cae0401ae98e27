// SPDX-License-Identifier: MIT
/* Load is not failure: one table says which raw outcomes are discriminating. */
#include "loadrule.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

uint32_t npf_bulk_bytes(uint32_t mtu, uint32_t cap)
{
	uint64_t b;

	/* Frames below IPv6's minimum MTU do not exist on a GPU fabric; an unknown or
	 * absurd MTU falls back to Ethernet's. */
	if (mtu < 1280 || mtu > 65536)
		mtu = 1500;
	b = (uint64_t)NPF_BULK_SEGMENTS * mtu;
	if (b < NPF_BULK_FLOOR)
		b = NPF_BULK_FLOOR;
	if (cap && b > cap)
		b = cap;
	return (uint32_t)b;
}

uint32_t npf_check_budget_ms(uint32_t base_ms, uint32_t n_probed_peers)
{
	uint64_t t = base_ms;

	if (n_probed_peers > NPF_BUDGET_FREE_PEERS)
		t += (uint64_t)(n_probed_peers - NPF_BUDGET_FREE_PEERS) * NPF_BUDGET_PER_PEER_MS;
	if (t > NPF_BUDGET_MAX_MS)
		t = base_ms > NPF_BUDGET_MAX_MS ? base_ms : NPF_BUDGET_MAX_MS;
	return (uint32_t)t;
}

bool npf_loop_was_late(uint32_t loop_late_us, uint32_t window_us)
{
	return loop_late_us >= 250000u || (window_us && loop_late_us >= window_us / 4);
}

bool npf_measured_idle(uint32_t loop_late_us, uint32_t peer_hello_rtt_us)
{
	return loop_late_us < NPF_IDLE_LATE_US && peer_hello_rtt_us &&
	       peer_hello_rtt_us < NPF_IDLE_RTT_US;
}

/* What a condition of a rule asks of the facts. */
enum cond {
	C_ALWAYS = 0,	/* nothing: the row applies to every attempt with its outcome */
	C_STALL_PROVEN, /* bulk: nothing came back past the first full-size frame while the
			 * control exchange answered, and our loop kept time */
	C_PATH_LOSSY,	/* a silent phase whose request the peer's kernel never acknowledged
			 * (TCP_INFO: unacked after retransmissions) while the same daemon
			 * answered on another path, and our loop kept time */
	C_DAEMON_SLOW,	/* a timeout on a connection the path had carried (TCP handshake
			 * done, request not lost): the daemon, not the path, was late */
	C_CUT_SHORT,	/* a timeout whose phase the deadline cut short */
	C_IDLE,		/* load measured on both ends and found absent (facts.idle); for a
			 * stall, also a bulk phase that ran its course (not cut short) */
	C_SIBLING_OK,	/* another path to the peer, probed at the same time, worked, or the
			 * peer's daemon answered on this very address and only the data
			 * port's SYN was lost, or the path stayed silent on its retry while
			 * the peer's daemon answered elsewhere; and our loop kept time */
};

struct rule {
	enum npf_outcome outcome;
	enum cond cond;
	enum npf_judgement judgement;
	const char *why; /* for an inconclusive row: the missing discrimination */
};

/* One row per case, read in order: the first row of the attempt's outcome whose condition
 * holds judges it. Refusals, wrong peers, unreachables and egress mismatches are answers
 * from the network itself and cannot be produced by a slow CPU; a timeout or a stalled bulk
 * can, unless something seen at the same time rules load out. A lost request is told from
 * a slow daemon by what the kernel knows (TCP_INFO): a loaded daemon's kernel still
 * acknowledges what arrives, a lossy path does not deliver it. */
static const struct rule rules[] = {
    {NPF_OUT_OK, C_ALWAYS, NPF_JUDGE_KEEP, NULL},
    {NPF_OUT_WRONG_EGRESS, C_ALWAYS, NPF_JUDGE_KEEP, NULL},
    {NPF_OUT_BULK_STALL, C_STALL_PROVEN, NPF_JUDGE_KEEP, NULL},
    {NPF_OUT_BULK_STALL, C_IDLE, NPF_JUDGE_KEEP, NULL},
    {NPF_OUT_BULK_STALL, C_ALWAYS, NPF_JUDGE_INCONCLUSIVE,
     "bulk moved data or our loop was late: slow, not a black hole"},
    {NPF_OUT_WRONG_PEER, C_ALWAYS, NPF_JUDGE_KEEP, NULL},
    {NPF_OUT_REFUSED, C_ALWAYS, NPF_JUDGE_KEEP, NULL},
    {NPF_OUT_TIMEOUT, C_PATH_LOSSY, NPF_JUDGE_KEEP, NULL},
    {NPF_OUT_TIMEOUT, C_DAEMON_SLOW, NPF_JUDGE_INCONCLUSIVE,
     "the peer's kernel took our request and its daemon did not answer: a slow daemon"},
    {NPF_OUT_TIMEOUT, C_CUT_SHORT, NPF_JUDGE_INCONCLUSIVE,
     "the deadline cut the phase short"},
    {NPF_OUT_TIMEOUT, C_SIBLING_OK, NPF_JUDGE_KEEP, NULL},
    {NPF_OUT_TIMEOUT, C_IDLE, NPF_JUDGE_KEEP, NULL},
    {NPF_OUT_TIMEOUT, C_ALWAYS, NPF_JUDGE_INCONCLUSIVE,
     "no other path to the peer worked meanwhile, and load was not measured absent"},
    {NPF_OUT_UNREACHABLE, C_ALWAYS, NPF_JUDGE_KEEP, NULL},
    {NPF_OUT_PEER_UNAVAILABLE, C_ALWAYS, NPF_JUDGE_KEEP, NULL}, /* already unknown evidence */
    {NPF_OUT_NOT_PROBED, C_ALWAYS, NPF_JUDGE_KEEP, NULL},	 /* already unknown evidence */
};

static bool holds(enum cond c, const struct npf_attempt_facts *f)
{
	bool late = npf_loop_was_late(f->loop_late_us, f->window_us);

	switch (c) {
	case C_ALWAYS:
		return true;
	case C_STALL_PROVEN:
		/* Reverse stalls are measured by the peer: only the batch tells them apart. */
		if (!f->echo_known)
			return f->sibling_ok && !late;
		/* A black hole swallows frames that were sent, for as long as one waits; a
		 * phase that sent nothing, or that the deadline cut short, is a starved
		 * prober or echoer (every node of a job checking at once on few cores). */
		if (f->bulk_timed && (f->sent == 0 || f->bulk_us < NPF_STALL_MIN_US ||
				      (uint64_t)f->bulk_us < 4ull * f->ctl_us))
			return false;
		return f->ctl_answered && f->echoed == 0 && !late;
	case C_IDLE:
		if (!f->idle || late)
			return false;
		/* A stall must have run its course, and nothing came back. */
		if (f->outcome == NPF_OUT_BULK_STALL)
			return f->bulk_timed && f->sent > 0 && f->bulk_us >= NPF_STALL_MIN_US &&
			       (uint64_t)f->bulk_us >= 4ull * f->ctl_us &&
			       (!f->echo_known || f->echoed == 0);
		return true;
	case C_PATH_LOSSY:
		return f->path_lossy && (f->sibling_ok || f->peer_answered) && !late;
	case C_DAEMON_SLOW:
		return f->daemon_silent;
	case C_CUT_SHORT:
		return f->cut_short;
	case C_SIBLING_OK:
		return (f->sibling_ok || f->data_syn_lost ||
			(f->final_attempt && f->peer_answered)) &&
		       !late;
	}
	return false;
}

/* Stages a row of conn_rules applies to. */
#define AT_CONNECT (1u << NPF_STAGE_CONNECT)
#define AT_UNANSWERED (1u << NPF_STAGE_UNANSWERED)
#define AT_ANSWERED (1u << NPF_STAGE_ANSWERED)
#define AT_ANY (AT_CONNECT | AT_UNANSWERED | AT_ANSWERED)

struct conn_rule {
	unsigned int stages;
	int err; /* positive errno, 0 = EOF */
	enum npf_outcome outcome;
};

/* One row per way a probe connection ends; the first matching row wins. */
static const struct conn_rule conn_rules[] = {
    /* The SYN was answered with a reset: a firewall's reject or nothing listening. */
    {AT_CONNECT, ECONNREFUSED, NPF_OUT_REFUSED},
    {AT_CONNECT, ECONNRESET, NPF_OUT_REFUSED},
    /* Accepted, then reset or closed before the daemon said a word: it shed the
     * connection (eviction, a cap, a restart) or a local user raced us; no evidence. */
    {AT_UNANSWERED, ECONNRESET, NPF_OUT_NOT_PROBED},
    {AT_UNANSWERED, 0, NPF_OUT_NOT_PROBED},
    /* The daemon answered and then reset the connection mid-exchange. */
    {AT_ANSWERED, ECONNRESET, NPF_OUT_REFUSED},
    /* A close without a word after its answer: the daemon went away, not the path. */
    {AT_ANSWERED, 0, NPF_OUT_NOT_PROBED},
    {AT_ANY, ETIMEDOUT, NPF_OUT_TIMEOUT},
    /* Our own resources ran out: no evidence about the path either way. */
    {AT_ANY, EMFILE, NPF_OUT_NOT_PROBED},
    {AT_ANY, ENFILE, NPF_OUT_NOT_PROBED},
    {AT_ANY, ENOBUFS, NPF_OUT_NOT_PROBED},
    {AT_ANY, ENOMEM, NPF_OUT_NOT_PROBED},
    {AT_ANY, EAGAIN, NPF_OUT_NOT_PROBED},
    /* connect() without bind: no ephemeral port left. */
    {AT_ANY, EADDRNOTAVAIL, NPF_OUT_NOT_PROBED},
    /* No proof of the cluster key: nothing the peer says counts. */
    {AT_ANY, EKEYREJECTED, NPF_OUT_NOT_PROBED},
};

enum npf_outcome npf_conn_outcome(enum npf_conn_stage stage, int err)
{
	unsigned int at = stage <= NPF_STAGE_ANSWERED ? 1u << stage : 0;

	for (size_t i = 0; i < sizeof(conn_rules) / sizeof(conn_rules[0]); i++)
		if ((conn_rules[i].stages & at) && conn_rules[i].err == err)
			return conn_rules[i].outcome;
	/* ENETUNREACH, EHOSTUNREACH, EACCES/EPERM (local policy)... */
	return NPF_OUT_UNREACHABLE;
}

/* The phases of one path probe, by their names on the wire (REVERSE_RESULT "evidence"). */
static const char *const phase_names[NPF_PHASE__COUNT] = {
    [NPF_PHASE_NONE] = "none",		 [NPF_PHASE_CONNECT] = "connect",
    [NPF_PHASE_HELLO] = "hello",		 [NPF_PHASE_OPEN_DATA] = "open-data",
    [NPF_PHASE_DATA_CONNECT] = "data-connect", [NPF_PHASE_DATA_AUTH] = "data-auth",
    [NPF_PHASE_BULK] = "bulk",
};

const char *npf_phase_name(enum npf_phase p)
{
	return (unsigned)p < NPF_PHASE__COUNT ? phase_names[p] : "unknown";
}

int npf_phase_parse(const char *s)
{
	for (int i = 0; s && i < NPF_PHASE__COUNT; i++)
		if (strcmp(s, phase_names[i]) == 0)
			return i;
	return -EINVAL;
}

/* The phases that wait for the peer's daemon on a connection that was made. */
static bool phase_waits_daemon(enum npf_phase p)
{
	return p == NPF_PHASE_HELLO || p == NPF_PHASE_OPEN_DATA || p == NPF_PHASE_DATA_AUTH;
}

void npf_attempt_facts_from_evidence(struct npf_attempt_facts *f, const struct npf_evidence *e)
{
	/* Only a deadline's record says where the attempt was stuck; an answer says itself. */
	if (!e || !e->by_deadline)
		return;
	/* A stall is only reported from the bulk phase: the control exchange answered. */
	if (f->outcome == NPF_OUT_BULK_STALL && e->phase == NPF_PHASE_BULK &&
	    e->sent <= e->bulk && e->echoed <= e->bulk) {
		f->ctl_answered = true;
		f->echo_known = true;
		f->echoed = e->echoed;
		f->bulk_timed = true;
		f->sent = e->sent;
		f->bulk_us = e->phase_us;
		f->ctl_us = e->ctl_us;
	}
	if (f->outcome != NPF_OUT_TIMEOUT)
		return;
	if (phase_waits_daemon(e->phase) && e->unacked > 0 && e->retrans > 0) {
		/* The peer's kernel never acknowledged the request: the path lost it. */
		f->path_lossy = true;
		f->unacked = e->unacked;
		f->retrans = e->retrans;
	} else if (phase_waits_daemon(e->phase) || e->connected) {
		f->daemon_silent = true; /* the connection was made (late or not): the daemon */
	} else if (e->phase == NPF_PHASE_DATA_CONNECT) {
		/* A lost SYN to the data port is proven only when the phase had its time. */
		f->data_syn_lost =
		    e->phase_us >= NPF_STALL_MIN_US && e->phase_us >= 4ull * e->ctl_us;
		f->cut_short = !f->data_syn_lost;
	} else if (e->phase == NPF_PHASE_CONNECT) {
		/* A probe that began just before its deadline, after waiting in the queue, did
		 * not wait for a SYN. */
		f->cut_short = e->phase_us < NPF_STALL_MIN_US;
	}
}

enum npf_judgement npf_attempt_judge(const struct npf_attempt_facts *f, const char **why)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i].outcome != f->outcome || !holds(rules[i].cond, f))
			continue;
		if (why && rules[i].judgement == NPF_JUDGE_INCONCLUSIVE)
			*why = rules[i].why;
		return rules[i].judgement;
	}
	/* An outcome outside the table is not evidence of anything. */
	if (why)
		*why = "unknown outcome";
	return NPF_JUDGE_INCONCLUSIVE;
}
