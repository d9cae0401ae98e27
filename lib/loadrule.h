/* SPDX-License-Identifier: MIT */
/* Load is not failure: which raw probe outcomes are discriminating evidence of a broken
 * path, and which are what a starved machine produces (docs/decision.md, "Load is not
 * failure"). Also the size of a probe's bulk phase and the default check budget, both
 * functions of the job rather than constants. Pure. */
#ifndef NPF_LOADRULE_H
#define NPF_LOADRULE_H

#include <stdbool.h>
#include <stdint.h>

#include "check.h"

/* The bulk phase exists to catch paths that pass a handshake but drop full-size frames:
 * TCP delivers in order, so one lost full-size segment already holds back the whole echo
 * (the stall rule wants nothing echoed); two each way, with a floor for small MTUs, keep a
 * probe's bytes near a bare 16 KiB echo (issue 20: per-path cost near the floor). */
#define NPF_BULK_SEGMENTS 2u
#define NPF_BULK_FLOOR (16u << 10)

/* Bytes one bulk probe moves per direction over an egress of MTU mtu (0 = unknown:
 * the floor's worth of 1500-byte frames), never above cap (the [probe] bulk_bytes
 * ceiling; 0 = no ceiling). */
uint32_t npf_bulk_bytes(uint32_t mtu, uint32_t cap);

/* The default check budget for a job: base_ms (the [probe] timeout) for up to 8 probed
 * peers, plus per_peer_ms for every probed peer beyond 8, capped at 60 s. The formula is
 * documented in docs/config.md and docs/decision.md. */
#define NPF_BUDGET_FREE_PEERS 8u
#define NPF_BUDGET_PER_PEER_MS 70u
#define NPF_BUDGET_MAX_MS 60000u
uint32_t npf_check_budget_ms(uint32_t base_ms, uint32_t n_probed_peers);

/* What the engine knows about one attempt of one path when it ends. */
struct npf_attempt_facts {
	enum npf_outcome outcome; /* raw outcome of the attempt */
	enum npf_direction dir;
	bool ctl_answered;     /* the control exchange on this peer answered (HELLO) */
	uint32_t echoed;       /* bulk bytes echoed back (forward only) */
	bool echo_known;       /* echoed is meaningful (forward attempts) */
	bool sibling_ok;       /* another path to the same peer, overlapping in time,
				* ended ok */
	bool data_syn_lost;    /* timed out connecting to the data port that the peer's
				* daemon had just opened for us on the same address */
	bool peer_answered;    /* the peer's daemon answered a control exchange of another
				* path during this check */
	bool final_attempt;    /* the path was already tried again within the budget */
	bool daemon_silent;    /* timed out on a connection the path had carried (TCP
				* handshake done): the peer's daemon, not the path, was late */
	bool cut_short;	       /* a timeout whose phase the deadline cut short (its evidence
				* says how long it ran): no evidence, siblings or not */
	bool bulk_timed;       /* sent, bulk_us, ctl_us are known (a stall's evidence) */
	uint32_t sent;	       /* bulk bytes we managed to send */
	uint32_t bulk_us;      /* how long the bulk phase ran before it was given up */
	uint32_t ctl_us;       /* how long the control and data handshakes took before it */
	/* TCP_INFO of the connection a silent phase waited on (ours; a reverse result says
	 * the peer's end, in its evidence): our request stayed unacknowledged through
	 * retransmissions, i.e. the path lost it (the peer's kernel would have acknowledged
	 * it whatever its daemon's load). */
	bool path_lossy;
	uint32_t unacked;      /* segments unacknowledged at the deadline */
	uint32_t retrans;      /* retransmissions on the connection */
	/* Load measured, not presumed: our loop's worst lateness during the attempt stayed
	 * under NPF_IDLE_LATE_US and the peer's daemon answered its discovery HELLO within
	 * NPF_IDLE_RTT_US (npf_measured_idle()). On such a machine a timeout or a stall that
	 * ran its course is no starved CPU's doing. */
	bool idle;
	uint32_t loop_late_us; /* our loop's worst lateness during the attempt */
	uint32_t window_us;    /* the attempt's time window (start to deadline) */
};

enum npf_judgement {
	NPF_JUDGE_KEEP = 0,	/* the raw outcome stands (ok, or a discriminating failure) */
	NPF_JUDGE_INCONCLUSIVE, /* load-shaped: retry within the budget, else unknown */
};

/* Judges one attempt. When the answer is NPF_JUDGE_INCONCLUSIVE and why is not NULL,
 * *why is a static phrase naming the missing discrimination ("every path to the peer
 * timed out", ...). */
enum npf_judgement npf_attempt_judge(const struct npf_attempt_facts *f, const char **why);

/* Probe details: human text only, written by the prober (probe/tprobe_path.c) beside its typed
 * evidence (struct npf_evidence); nothing parses them. */
#define NPF_DETAIL_BULK_STALL "bulk stalled: sent %zu/%u, received %zu/%u bytes"
#define NPF_DETAIL_BULK_STALL_T NPF_DETAIL_BULK_STALL " in %u ms (handshakes %u ms)"
#define NPF_DETAIL_DATA_SYN_T "connect to data port %s:%u timed out after %u ms (handshakes %u ms)"
#define NPF_DETAIL_CONNECT_T "connect to %s port %u timed out after %u ms"
#define NPF_DETAIL_NO_HELLO "no HELLO reply from %s"
#define NPF_DETAIL_NO_OPEN_DATA "no OPEN_DATA reply from %s"
#define NPF_DETAIL_NO_DATA_AUTH "no reply on data port %s:%u"
/* The peer speaks another probe protocol version (its ERROR, or a frame header of another
 * version): it cannot be asked, which is no evidence about the path (not-probed). */
#define NPF_DETAIL_OTHER_VERSION "another probe protocol version (%s)"
#define NPF_DETAIL_LOST "%s to %s lost: %u unacked, %u retransmits"
#define NPF_DETAIL_LATE_CONNECT "connected to %s port %u only at the deadline"
#define NPF_DETAIL_LATE_DATA "connected to data port %s:%u only at the deadline"

/* The phases of one path probe (docs/protocol.md, "One path probe"). */
enum npf_phase {
	NPF_PHASE_NONE = 0,	/* not started (queued) */
	NPF_PHASE_CONNECT,	/* the control connect */
	NPF_PHASE_HELLO,	/* waiting for HELLO_REPLY */
	NPF_PHASE_OPEN_DATA,	/* waiting for OPEN_DATA_REPLY */
	NPF_PHASE_DATA_CONNECT, /* the data connect */
	NPF_PHASE_DATA_AUTH,	/* waiting for DATA_AUTH_REPLY */
	NPF_PHASE_BULK,		/* the bulk echo */
	NPF_PHASE__COUNT
};

/* Names on the wire ("none", "connect", "hello", "open-data", "data-connect", "data-auth",
 * "bulk"); npf_phase_parse returns the phase or -EINVAL. */
const char *npf_phase_name(enum npf_phase p);
int npf_phase_parse(const char *s);

/* What the prober recorded about one attempt that its deadline ended (by_deadline; an
 * attempt the peer or the network answered has nothing to add to its outcome). A reverse
 * result carries it typed (REVERSE_RESULT "evidence", protocol version 2), our own probes
 * keep it beside their result: one record for both sides. */
struct npf_evidence {
	bool by_deadline;
	enum npf_phase phase; /* the phase the deadline found it in */
	bool connected;	      /* that phase's connection was up when the deadline was handled
			       * (our loop was late to see it) */
	uint32_t bulk;	      /* bulk bytes each way (0 before OPEN_DATA) */
	uint32_t sent;	      /* bulk bytes sent */
	uint32_t echoed;      /* bulk bytes echoed back */
	uint32_t phase_us;    /* how long the phase ran (connect, data connect, bulk; else 0) */
	uint32_t ctl_us;      /* the handshakes before it (data connect, bulk; else 0) */
	/* TCP_INFO of the connection a silent phase waited on: segments unacknowledged at the
	 * deadline and retransmissions (both 0 when the request was acknowledged). */
	uint32_t unacked;
	uint32_t retrans;
};

/* Fills what evidence e says about its attempt (f->outcome set by the caller): a stall's
 * echoed bytes and times, a silent daemon, a lost request, a lost data-port SYN, a phase
 * cut short. Evidence that does not fit the outcome leaves the facts unknown. */
void npf_attempt_facts_from_evidence(struct npf_attempt_facts *f, const struct npf_evidence *e);

/* A stall (or a lost data-port SYN) is proven only when its phase had this long and four
 * times what the handshakes before it took: a phase cut short by the deadline says
 * nothing, whatever a starved prober's timers make of it. */
#define NPF_STALL_MIN_US 100000u

/* How far a probe connection got when it ended. Only the network answers a SYN: a refusal
 * there (RST, ICMP) is the path's. Once the peer's kernel accepted, a reset or a close
 * before the daemon's first answer on the connection (HELLO_REPLY, DATA_AUTH_REPLY) is the
 * daemon shedding load (pre-auth eviction, caps, a restart) or a local user's
 * interference, never the path (issue 19). */
enum npf_conn_stage {
	NPF_STAGE_CONNECT = 0, /* the TCP handshake */
	NPF_STAGE_UNANSWERED,  /* connected; the daemon has not answered on it yet */
	NPF_STAGE_ANSWERED,    /* the daemon answered on this connection */
};

/* The outcome of a connection that ended at stage with err (a positive errno; 0 = EOF, the
 * peer closed). One row per case in lib/loadrule.c; anything else (ENETUNREACH,
 * EHOSTUNREACH, EACCES/EPERM of a local policy, ...) is unreachable. */
enum npf_outcome npf_conn_outcome(enum npf_conn_stage stage, int err);

/* Measured idleness (struct npf_attempt_facts.idle): our loop's worst lateness during the
 * attempt, the peer's discovery HELLO round trip (0 = not measured: never idle). */
#define NPF_IDLE_LATE_US 20000u
#define NPF_IDLE_RTT_US 50000u
bool npf_measured_idle(uint32_t loop_late_us, uint32_t peer_hello_rtt_us);

/* Our loop counts as late during an attempt when its worst timer lateness reached a
 * quarter of the attempt's window, or 250 ms. */
bool npf_loop_was_late(uint32_t loop_late_us, uint32_t window_us);

#endif
