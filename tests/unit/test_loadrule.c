// SPDX-License-Identifier: MIT
/* Unit tests for lib/loadrule: bulk sizing from the MTU, the job-sized budget, and the
 * load rule (which raw outcomes are discriminating, which are load-shaped). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "loadrule.h"

static void test_bulk_bytes(void **state)
{
	(void)state;
	/* 2 full-size frames, with the floor for Ethernet and other small MTUs. */
	assert_int_equal(npf_bulk_bytes(1500, 256u << 10), NPF_BULK_FLOOR);
	assert_int_equal(npf_bulk_bytes(9000, 256u << 10), 2u * 9000);
	assert_int_equal(npf_bulk_bytes(4092, 0), NPF_BULK_FLOOR);
	assert_int_equal(npf_bulk_bytes(65536, 0), 2u * 65536);
	/* The configured ceiling wins. */
	assert_int_equal(npf_bulk_bytes(9000, 17000), 17000);
	/* Unknown or absurd MTUs count as Ethernet. */
	assert_int_equal(npf_bulk_bytes(0, 256u << 10), NPF_BULK_FLOOR);
	assert_int_equal(npf_bulk_bytes(1000000, 256u << 10), NPF_BULK_FLOOR);
	/* Always above one full-size frame of any real MTU: a black hole cannot be missed. */
	for (uint32_t mtu = 1280; mtu <= 65536; mtu += 611)
		assert_true(npf_bulk_bytes(mtu, 0) > mtu);
}

static void test_budget(void **state)
{
	(void)state;
	assert_int_equal(npf_check_budget_ms(3000, 0), 3000);
	assert_int_equal(npf_check_budget_ms(3000, 8), 3000);
	assert_int_equal(npf_check_budget_ms(3000, 31), 3000 + 23 * NPF_BUDGET_PER_PEER_MS);
	assert_int_equal(npf_check_budget_ms(3000, 63), 3000 + 55 * NPF_BUDGET_PER_PEER_MS);
	/* Grows monotonically, capped; a configured base above the cap is kept. */
	for (uint32_t n = 1; n < 5000; n++)
		assert_true(npf_check_budget_ms(3000, n) >= npf_check_budget_ms(3000, n - 1));
	assert_int_equal(npf_check_budget_ms(3000, 100000), NPF_BUDGET_MAX_MS);
	assert_int_equal(npf_check_budget_ms(90000, 100000), 90000);
}

static enum npf_judgement judge(enum npf_outcome o, bool sibling_ok, uint32_t echoed,
				uint32_t late_ms)
{
	struct npf_attempt_facts f = {
	    .outcome = o,
	    .dir = NPF_DIR_FORWARD,
	    .ctl_answered = true,
	    .echoed = echoed,
	    .echo_known = true,
	    .sibling_ok = sibling_ok,
	    .loop_late_us = late_ms * 1000,
	    .window_us = 1500 * 1000,
	};
	const char *why = NULL;
	enum npf_judgement j = npf_attempt_judge(&f, &why);

	if (j == NPF_JUDGE_INCONCLUSIVE)
		assert_non_null(why);
	return j;
}

static void test_discriminating(void **state)
{
	static const enum npf_outcome always[] = {NPF_OUT_OK, NPF_OUT_WRONG_EGRESS,
						  NPF_OUT_WRONG_PEER, NPF_OUT_REFUSED,
						  NPF_OUT_UNREACHABLE};

	(void)state;
	/* Answers of the network itself stand, whatever the load. */
	for (size_t i = 0; i < sizeof(always) / sizeof(always[0]); i++) {
		assert_int_equal(judge(always[i], false, 0, 0), NPF_JUDGE_KEEP);
		assert_int_equal(judge(always[i], false, 0, 900), NPF_JUDGE_KEEP);
	}
}

static void test_timeout(void **state)
{
	(void)state;
	/* A timeout while another path to the same peer worked at the same time: a fault. */
	assert_int_equal(judge(NPF_OUT_TIMEOUT, true, 0, 0), NPF_JUDGE_KEEP);
	assert_int_equal(judge(NPF_OUT_TIMEOUT, true, 0, 100), NPF_JUDGE_KEEP);
	/* Every path to the peer late: load-shaped. */
	assert_int_equal(judge(NPF_OUT_TIMEOUT, false, 0, 0), NPF_JUDGE_INCONCLUSIVE);
	{
		/* Silent again on its retry while the peer's daemon answered on another
		 * path: a fault (isolated port, SYNs dropped); not on the first try. */
		struct npf_attempt_facts f = {
		    .outcome = NPF_OUT_TIMEOUT, .peer_answered = true, .window_us = 1000000};

		assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
		f.final_attempt = true;
		assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);
		f.peer_answered = false;
		assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
		f.peer_answered = true;
		f.loop_late_us = 300000;
		assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	}
	/* Our own timers late (a quarter of the window, or 250 ms): load-shaped. */
	assert_int_equal(judge(NPF_OUT_TIMEOUT, true, 0, 375), NPF_JUDGE_INCONCLUSIVE);
	assert_int_equal(judge(NPF_OUT_TIMEOUT, true, 0, 260), NPF_JUDGE_INCONCLUSIVE);
}

static void test_bulk_stall(void **state)
{
	struct npf_attempt_facts f = {.outcome = NPF_OUT_BULK_STALL, .dir = NPF_DIR_REVERSE};

	(void)state;
	/* Nothing echoed past the first full-size frame, control answered: a black hole. */
	assert_int_equal(judge(NPF_OUT_BULK_STALL, false, 0, 0), NPF_JUDGE_KEEP);
	/* Some data came back: slow, not a black hole. */
	assert_int_equal(judge(NPF_OUT_BULK_STALL, false, 8192, 0), NPF_JUDGE_INCONCLUSIVE);
	assert_int_equal(judge(NPF_OUT_BULK_STALL, true, 8192, 0), NPF_JUDGE_INCONCLUSIVE);
	/* Our loop was starved meanwhile. */
	assert_int_equal(judge(NPF_OUT_BULK_STALL, false, 0, 600), NPF_JUDGE_INCONCLUSIVE);
	/* Reverse: measured by the peer; only the batch tells. */
	f.window_us = 1000000;
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	f.sibling_ok = true;
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);
	/* A control exchange that never answered proves nothing about frame sizes. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_BULK_STALL, .echo_known = true};
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
}

static void test_unknown_stays_unknown(void **state)
{
	struct npf_attempt_facts f = {.outcome = NPF_OUT__COUNT};
	const char *why = NULL;

	(void)state;
	assert_int_equal(judge(NPF_OUT_NOT_PROBED, false, 0, 0), NPF_JUDGE_KEEP);
	assert_int_equal(judge(NPF_OUT_PEER_UNAVAILABLE, false, 0, 0), NPF_JUDGE_KEEP);
	assert_int_equal(npf_attempt_judge(&f, &why), NPF_JUDGE_INCONCLUSIVE);
	assert_non_null(why);
	assert_false(npf_loop_was_late(0, 0));
	assert_true(npf_loop_was_late(250000, 0));
	assert_false(npf_loop_was_late(100000, 1000000));
	assert_true(npf_loop_was_late(250000, 1000000));
}

/* Evidence as the prober records it when its deadline finds a probe in phase ph after
 * phase_ms there and ctl_ms of handshakes before it (probe/tprobe_path.c deadline_evidence). */
static struct npf_evidence ev(enum npf_phase ph, uint32_t phase_ms, uint32_t ctl_ms)
{
	return (struct npf_evidence){.by_deadline = true,
				     .phase = ph,
				     .phase_us = phase_ms * 1000,
				     .ctl_us = ctl_ms * 1000};
}

/* A bulk phase that ran phase_ms: sent and echoed of bulk bytes. */
static struct npf_evidence stall(uint32_t sent, uint32_t echoed, uint32_t bulk, uint32_t phase_ms,
				 uint32_t ctl_ms)
{
	struct npf_evidence e = ev(NPF_PHASE_BULK, phase_ms, ctl_ms);

	e.sent = sent;
	e.echoed = echoed;
	e.bulk = bulk;
	return e;
}

/* A silent phase whose request TCP_INFO found unacked after retrans retransmissions. */
static struct npf_evidence lost(enum npf_phase ph, uint32_t unacked, uint32_t retrans)
{
	struct npf_evidence e = ev(ph, 0, 0);

	e.unacked = unacked;
	e.retrans = retrans;
	return e;
}

/* A connect that had completed when the deadline was handled: our loop was late. */
static struct npf_evidence late(enum npf_phase ph)
{
	struct npf_evidence e = ev(ph, 0, 0);

	e.connected = true;
	return e;
}

static void facts(struct npf_attempt_facts *f, struct npf_evidence e)
{
	npf_attempt_facts_from_evidence(f, &e);
}

static void test_from_evidence(void **state)
{
	struct npf_attempt_facts f = {.outcome = NPF_OUT_BULK_STALL, .dir = NPF_DIR_REVERSE};
	struct npf_evidence e;

	(void)state;
	facts(&f, stall(72000, 0, 72000, 1000, 5));
	assert_true(f.echo_known && f.ctl_answered && f.bulk_timed);
	assert_int_equal(f.echoed, 0);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_BULK_STALL};
	facts(&f, stall(72000, 9000, 72000, 1000, 5));
	assert_int_equal(f.echoed, 9000);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* Evidence that does not fit its outcome (or lies about sizes) proves nothing. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_BULK_STALL};
	facts(&f, stall(72000, 72001, 72000, 1000, 5));
	assert_false(f.echo_known);
	facts(&f, stall(72001, 0, 72000, 1000, 5));
	assert_false(f.echo_known);
	facts(&f, ev(NPF_PHASE_HELLO, 1000, 5)); /* a stall outside the bulk phase */
	assert_false(f.echo_known);
	e = stall(72000, 0, 72000, 1000, 5);
	e.by_deadline = false; /* an answer, not a deadline: nothing to add */
	npf_attempt_facts_from_evidence(&f, &e);
	npf_attempt_facts_from_evidence(&f, NULL);
	assert_false(f.echo_known);
	/* A lost SYN to the data port the peer's daemon just opened: a firewall, not load. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_TIMEOUT, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_DATA_CONNECT, 800, 4));
	assert_true(f.data_syn_lost);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);
	f.loop_late_us = 400000;
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_TIMEOUT};
	facts(&f, ev(NPF_PHASE_CONNECT, 900, 0));
	assert_false(f.data_syn_lost);
	/* Every phase has its name on the wire, and only those names parse. */
	for (int p = 0; p < NPF_PHASE__COUNT; p++)
		assert_int_equal(npf_phase_parse(npf_phase_name((enum npf_phase)p)), p);
	assert_int_equal(npf_phase_parse("BULK"), -EINVAL);
	assert_int_equal(npf_phase_parse(NULL), -EINVAL);
	assert_string_equal(npf_phase_name(NPF_PHASE__COUNT), "unknown");
}

/* Every node of a job checking at once on few cores: phases the deadline cut short and
 * daemons that answered late are load, whatever the raw outcome (issue 11). */
/* Issue 18: a reply lost on one path while the same daemon answers others is evidence, not
 * load. TCP_INFO says which: a request the peer's kernel never acknowledged, through
 * retransmissions, was lost by the path (a loaded daemon's kernel still acknowledges it); a
 * request acknowledged and not answered is a slow daemon. */
static void test_lossy_path_vs_slow_daemon(void **state)
{
	const struct npf_evidence not_lost[] = {
	    lost(NPF_PHASE_HELLO, 0, 3),	/* all acknowledged */
	    lost(NPF_PHASE_HELLO, 2, 0),	/* not resent yet */
	    lost(NPF_PHASE_CONNECT, 2, 3),	/* no request was sent: a SYN */
	    lost(NPF_PHASE_DATA_CONNECT, 2, 3), /* likewise */
	    ev(NPF_PHASE_HELLO, 0, 0),		/* acknowledged, unanswered */
	};
	struct npf_attempt_facts f;
	const char *why;

	(void)state;
	/* Lost on this path while a sibling path to the same daemon worked: a fault. */
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_TIMEOUT, .sibling_ok = true, .window_us = 1000000};
	facts(&f, lost(NPF_PHASE_HELLO, 2, 3));
	assert_true(f.path_lossy);
	assert_false(f.daemon_silent);
	assert_int_equal(f.unacked, 2);
	assert_int_equal(f.retrans, 3);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);
	/* The daemon answered on another path (its control exchange), none ok yet: a fault. */
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_TIMEOUT, .peer_answered = true, .window_us = 1000000};
	facts(&f, lost(NPF_PHASE_DATA_AUTH, 1, 1));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);
	/* Nothing else of that daemon answered: it may have gone away, no evidence. */
	f.peer_answered = false;
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* Our loop late: the retransmissions may be its own starvation's. */
	f.peer_answered = true;
	f.loop_late_us = 300000;
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* Acknowledged but unanswered, a sibling ok: the daemon was slow, never a failure. */
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_TIMEOUT, .sibling_ok = true, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_OPEN_DATA, 0, 0));
	why = NULL;
	assert_int_equal(npf_attempt_judge(&f, &why), NPF_JUDGE_INCONCLUSIVE);
	assert_non_null(why);
	assert_non_null(strstr(why, "slow daemon"));
	/* Only a silent phase's unacknowledged, retransmitted request counts; a lost request
	 * never makes another outcome evidence. */
	for (size_t i = 0; i < sizeof(not_lost) / sizeof(not_lost[0]); i++) {
		f = (struct npf_attempt_facts){.outcome = NPF_OUT_TIMEOUT, .sibling_ok = true};
		npf_attempt_facts_from_evidence(&f, &not_lost[i]);
		assert_false(f.path_lossy);
	}
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_BULK_STALL, .sibling_ok = true};
	facts(&f, lost(NPF_PHASE_HELLO, 2, 3));
	assert_false(f.path_lossy);
}

/* Issue 18: load is measured, not presumed. With our loop on time (under 20 ms late) and the
 * peer's daemon answering its discovery HELLO fast, a timeout or a stall that ran its course
 * is evidence even without a sibling; a silent daemon or a phase cut short never is. */
static void test_measured_load(void **state)
{
	struct npf_attempt_facts f;

	(void)state;
	assert_true(npf_measured_idle(0, 300));
	assert_true(npf_measured_idle(NPF_IDLE_LATE_US - 1, NPF_IDLE_RTT_US - 1));
	assert_false(npf_measured_idle(NPF_IDLE_LATE_US, 300));
	assert_false(npf_measured_idle(0, NPF_IDLE_RTT_US));
	assert_false(npf_measured_idle(0, 0)); /* not measured: never idle */
	/* A SYN that went unanswered for 900 ms, no sibling, nothing answered: evidence only
	 * where load was measured absent. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_TIMEOUT, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_CONNECT, 900, 0));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	f.idle = true;
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);
	/* Idle, but the phase was cut short, or the daemon was silent: still nothing. */
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_TIMEOUT, .idle = true, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_CONNECT, 20, 0));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_TIMEOUT, .idle = true, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_HELLO, 0, 0));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* "idle" with our loop late after all (the fact and the lateness disagree): late wins. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_TIMEOUT,
				       .idle = true,
				       .loop_late_us = 300000,
				       .window_us = 1000000};
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* A reverse stall (the peer's measurement) with no sibling in its batch: evidence when
	 * idle and the bulk ran its course with nothing back; not when cut short. */
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_BULK_STALL, .dir = NPF_DIR_REVERSE, .window_us = 2000000};
	facts(&f, stall(72000, 0, 72000, 900, 5));
	f.echo_known = false; /* as a reverse requester knows it */
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	f.idle = true;
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_BULK_STALL, .dir = NPF_DIR_REVERSE, .idle = true};
	facts(&f, stall(72000, 0, 72000, 30, 5));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* A forward stall that moved part of the echo stays inconclusive, idle or not. */
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_BULK_STALL, .idle = true, .window_us = 2000000};
	facts(&f, stall(72000, 9000, 72000, 900, 5));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
}

static void test_cut_short(void **state)
{
	struct npf_attempt_facts f;

	(void)state;
	/* A stall after a full second of bulk, handshakes 5 ms: a black hole. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_BULK_STALL, .window_us = 2000000};
	facts(&f, stall(72000, 0, 72000, 1000, 5));
	assert_true(f.bulk_timed);
	assert_int_equal(f.sent, 72000);
	assert_int_equal(f.bulk_us, 1000000);
	assert_int_equal(f.ctl_us, 5000);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);
	/* The same numbers after 20 ms of bulk: cut short by the deadline. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_BULK_STALL, .window_us = 2000000};
	facts(&f, stall(72000, 0, 72000, 20, 5));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* Long enough, but the handshakes before it took longer than a quarter of it. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_BULK_STALL, .window_us = 2000000};
	facts(&f, stall(72000, 0, 72000, 300, 200));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* Nothing was even sent: the prober never got to run. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_BULK_STALL, .window_us = 2000000};
	facts(&f, stall(0, 0, 72000, 1000, 5));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);

	/* A timeout on a connection the path carried: the daemon was late, never a failure,
	 * even with a sibling that worked. */
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_TIMEOUT, .sibling_ok = true, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_HELLO, 0, 0));
	assert_true(f.daemon_silent);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_TIMEOUT, .sibling_ok = true};
	facts(&f, ev(NPF_PHASE_DATA_AUTH, 0, 0));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* Connected, but seen only at the deadline: our own loop was late. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_TIMEOUT, .sibling_ok = true};
	facts(&f, late(NPF_PHASE_CONNECT));
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_TIMEOUT, .data_syn_lost = false};
	facts(&f, late(NPF_PHASE_DATA_CONNECT));
	assert_false(f.data_syn_lost);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* A SYN that was not even answered stays discriminating with a sibling. */
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_TIMEOUT, .sibling_ok = true, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_CONNECT, 900, 0));
	assert_false(f.daemon_silent);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);

	/* Cut short by the deadline: no evidence even with a sibling that worked. */
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_TIMEOUT, .sibling_ok = true, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_CONNECT, 20, 0));
	assert_true(f.cut_short);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	f = (struct npf_attempt_facts){
	    .outcome = NPF_OUT_TIMEOUT, .sibling_ok = true, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_DATA_CONNECT, 110, 916));
	assert_true(f.cut_short);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
	/* A lost data-port SYN: discriminating after a real wait, not after 10 ms. */
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_TIMEOUT, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_DATA_CONNECT, 800, 4));
	assert_true(f.data_syn_lost);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_KEEP);
	f = (struct npf_attempt_facts){.outcome = NPF_OUT_TIMEOUT, .window_us = 1000000};
	facts(&f, ev(NPF_PHASE_DATA_CONNECT, 10, 4));
	assert_false(f.data_syn_lost);
	assert_int_equal(npf_attempt_judge(&f, NULL), NPF_JUDGE_INCONCLUSIVE);
}

/* How a connection ended, scenario by scenario (issue 19): only the network's answer to a
 * SYN refuses a path; a daemon that accepted and then shed the connection (pre-auth
 * eviction, a cap, a local user who raced the prober to its data port) is no evidence. */
static void test_conn_outcome(void **state)
{
	static const struct {
		enum npf_conn_stage stage;
		int err;
		enum npf_outcome want;
	} cases[] = {
	    /* A firewall's reject, or nothing listening: the path's answer. */
	    {NPF_STAGE_CONNECT, ECONNREFUSED, NPF_OUT_REFUSED},
	    {NPF_STAGE_CONNECT, ECONNRESET, NPF_OUT_REFUSED},
	    {NPF_STAGE_CONNECT, ETIMEDOUT, NPF_OUT_TIMEOUT},
	    {NPF_STAGE_CONNECT, ENETUNREACH, NPF_OUT_UNREACHABLE},
	    {NPF_STAGE_CONNECT, EHOSTUNREACH, NPF_OUT_UNREACHABLE},
	    {NPF_STAGE_CONNECT, EACCES, NPF_OUT_UNREACHABLE},
	    /* Our own resources, or a peer without the key: nothing about the path. */
	    {NPF_STAGE_CONNECT, EMFILE, NPF_OUT_NOT_PROBED},
	    {NPF_STAGE_CONNECT, EADDRNOTAVAIL, NPF_OUT_NOT_PROBED},
	    {NPF_STAGE_CONNECT, EKEYREJECTED, NPF_OUT_NOT_PROBED},
	    /* Accepted, then reset or closed before HELLO_REPLY / DATA_AUTH_REPLY: an eviction,
	     * never refused. */
	    {NPF_STAGE_UNANSWERED, ECONNRESET, NPF_OUT_NOT_PROBED},
	    {NPF_STAGE_UNANSWERED, 0, NPF_OUT_NOT_PROBED},
	    {NPF_STAGE_UNANSWERED, ETIMEDOUT, NPF_OUT_TIMEOUT},
	    {NPF_STAGE_UNANSWERED, ENOBUFS, NPF_OUT_NOT_PROBED},
	    /* After the daemon's answer a reset mid-exchange stays a refusal; a close is the
	     * daemon going away. */
	    {NPF_STAGE_ANSWERED, ECONNRESET, NPF_OUT_REFUSED},
	    {NPF_STAGE_ANSWERED, 0, NPF_OUT_NOT_PROBED},
	    {NPF_STAGE_ANSWERED, EHOSTUNREACH, NPF_OUT_UNREACHABLE},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum npf_outcome got = npf_conn_outcome(cases[i].stage, cases[i].err);

		if (got != cases[i].want)
			fail_msg("case %zu (stage %d, errno %d): outcome %d, want %d", i,
				 (int)cases[i].stage, cases[i].err, (int)got, (int)cases[i].want);
	}
	/* Whatever the errno, nothing before the daemon's answer is a refusal. */
	for (int e = 0; e < 200; e++)
		assert_int_not_equal(npf_conn_outcome(NPF_STAGE_UNANSWERED, e), NPF_OUT_REFUSED);
	/* A stage outside the enum matches no row. */
	assert_int_equal(npf_conn_outcome((enum npf_conn_stage)7, ECONNREFUSED),
			 NPF_OUT_UNREACHABLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bulk_bytes),	   cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_discriminating), cmocka_unit_test(test_timeout),
	    cmocka_unit_test(test_bulk_stall),	   cmocka_unit_test(test_unknown_stays_unknown),
	    cmocka_unit_test(test_from_evidence),	   cmocka_unit_test(test_cut_short),
	    cmocka_unit_test(test_lossy_path_vs_slow_daemon),
	    cmocka_unit_test(test_measured_load),
	    cmocka_unit_test(test_conn_outcome),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
