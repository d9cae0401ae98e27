/* SPDX-License-Identifier: MIT */
/* One check's private state, shared by the check's files only: check.c (start, deadlines,
 * completion), check_disc.c (discovery), check_paths.c (path probes and their results),
 * check_state.c (peer states, path rows, our loop's lateness). Arrows point down that list,
 * never up (tests/support/callcycles.py). */
#ifndef NPF_PROBE_CHECK_INT_H
#define NPF_PROBE_CHECK_INT_H

#include "internal.h"

#define CHECK_MIN_TIMEOUT_MS 200u
#define CHECK_MAX_TIMEOUT_MS 600000u
#define CHECK_MAX_ATTEMPTS 2		     /* a load-shaped failure is tried once more */
#define CHECK_RETRY_MIN_USEC (100ull * 1000) /* not worth a retry with less time left */
#define CHECK_MAX_SAMPLES 512		     /* loop lateness samples kept per check */

/* One forward path (one peer candidate) across its attempts. */
struct fwd_slot {
	struct tprobe *tp;	  /* running attempt, NULL when none */
	struct tprobe_result res; /* the last attempt's result, valid when have */
	bool have, recorded;
	uint8_t attempts;
};

struct loop_sample {
	uint64_t sched; /* when the tick was due */
	uint32_t late_us;
};

enum pp_state {
	PP_IDLE = 0, /* outside the plan */
	PP_RESOLVING,
	PP_CONNECTING,
	PP_HELLO,
	PP_PROBING,
	PP_DONE,
};

struct ppeer {
	struct pcheck *pc;
	int idx; /* into res->nodes */
	enum pp_state st;
	struct npf_addr addrs[PROBE_MAX_RESOLVED];
	size_t n_addrs, next_addr;
	uint8_t disc_round;  /* 0, or 1 once every address was tried and timed out */
	bool disc_timed_out; /* the last attempt ended by its timer, not by an answer */
	struct fconn c;
	sd_event_source *timer; /* per-attempt connect/HELLO deadline */
	char last_err[80];
	uint64_t t_disc, t_rev; /* discovery attempt started / reverse request sent */
	struct fwd_slot *fwd;
	size_t n_fwd, fwd_pending;
	bool rev_wait;
	uint8_t rev_attempts;
	uint32_t rev_id;
	size_t n_rev;
	struct npf_addr rev_addr[NPF_WIRE_MAX_TARGETS];
	char rev_if[NPF_WIRE_MAX_TARGETS][IFNAMSIZ];
	/* Protocol version 3: the discovery connection is the session every path's OPEN_DATA
	 * and the reverse request ride on. */
	char peer_node[NPF_NAME_MAX]; /* as the peer's HELLO_REPLY gave it */
	struct tprobe_session sess;
	struct npf_addr *peer_addrs; /* owned: the peer's candidates, sources of its reverse */
	size_t n_peer_addrs;	     /* probes to our data listeners (dlisten_req.allow) */
};

struct pcheck {
	struct npf_probe_ctx *ctx;
	npf_probe_check_cb cb;
	void *ud;
	uint64_t t_start, disc_deadline, probe_deadline, hard_deadline;
	bool past_disc;
	struct npf_check *res;
	struct ppeer *peers; /* peers[i] describes res->nodes[i + 1] */
	size_t n_peers;
	size_t *resolve_map; /* resolver index -> peers index */
	struct resolver *resolver;
	sd_event_source *timer, *defer;
	struct npf_path *paths;
	size_t n_paths, cap_paths;
	sd_event_source *tick; /* loop lateness sampler */
	uint64_t tick_usec;
	struct loop_sample *samples;
	size_t n_samples;
	LIST_ENTRY(pcheck) link; /* ctx->checks */
};

/* ---- check_state.c ---- */

/* snprintf() into a bounded text field (a detail, an error): a cut text is accepted. */
__attribute__((format(printf, 3, 4))) void chk_fmt(char *buf, size_t sz, const char *f, ...);
/* The result's node that pp describes. */
struct npf_node *chk_node(struct ppeer *pp);
/* A zeroed new path row, owned by pc (pc->paths), or NULL (out of memory: the row is dropped). */
struct npf_path *chk_add_path(struct pcheck *pc);
/* The check completes from the loop (its defer source). */
void chk_schedule_finish(struct pcheck *pc);
/* Closes pp's discovery connection and its attempt timer. */
void chk_peer_close(struct ppeer *pp);
/* pp ends unavailable with that error (completes the check when it was the last). */
__attribute__((format(printf, 2, 3))) void chk_peer_fail(struct ppeer *pp, const char *f, ...);
/* pp ends once its probes and its reverse request are all answered. */
void chk_maybe_peer_done(struct ppeer *pp);
/* The load sampler's timer: records how late our loop ran it. */
int chk_tick(sd_event_source *s, uint64_t usec, void *ud);
/* Our loop's worst lateness while [t0, t1] ran. */
uint32_t chk_late_during(const struct pcheck *pc, uint64_t t0, uint64_t t1);

/* ---- check_paths.c ---- */

/* pp's HELLO answered: probes every candidate forward and asks the peer to probe ours. */
void chk_start_probes(struct ppeer *pp);
/* Records a reverse result; true when a retry of its load-shaped failures is on its way. */
bool chk_rev_record(struct ppeer *pp, const struct npf_msg_reverse_result *rr);
/* Records every reverse target still unanswered with outcome o and detail. */
void chk_rev_fill_missing(struct ppeer *pp, enum npf_outcome o, const char *detail);
/* pp's session went away: forward probes still waiting for a data listener end now. */
void chk_session_lost(struct ppeer *pp);
/* Judges the forward attempts that ended; retries load-shaped ones unless final. */
void chk_fwd_judge(struct ppeer *pp, bool final);

/* ---- check_disc.c ---- */

/* The resolver's callback (resolve_fn) for the check's peer names. */
void chk_on_resolved(void *ud, size_t idx, int err, const struct npf_addr *addrs, size_t n);

#endif
