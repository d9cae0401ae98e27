/* SPDX-License-Identifier: MIT */
/* The checks' own types, shared by the files of one peer set's life: checks.c (cache and
 * runs), decision.c (the recommendation and its cached text), answer.c (replies from a
 * cached check), state.c (the last check on disk). Not for other daemon modules. */
#ifndef NPF_DAEMON_DCHK_H
#define NPF_DAEMON_DCHK_H

#include <string.h>

#include "clock.h"
#include "daemon.h"
#include "envfmt.h"
#include "recommend.h"

/* A participant waits for the job's decision up to its budget again plus this: nodes of
 * one job start within about a second of each other, and the slowest one's row comes at
 * the end of its own budget (docs/decision.md §10). */
#define DCHK_JOB_SLACK_MS 2000
/* The coordinator is told to answer this much before we give up on it: the row's trip
 * (connect, key exchange, a loaded peer) must not make us time out on a decision the
 * other nodes got. */
#define DCHK_JOB_GRACE_MS 1000

/* Cached env replies per format: "" and "json" (the same reply), then enum npf_envfmt + 1. */
#define DCHK_ENV_SLOTS (NPF_ENVFMT_NCCL_CONF + 2)

/* One peer set: the run in flight (if any) and the last result. */
struct dchk {
	LIST_ENTRY(dchk) link; /* npf_daemon.checks */
	struct npf_daemon *d;
	char *key;     /* npf_api_peers_key(): sorted, without this node */
	char **peers;  /* as first requested, handed to the engine */
	size_t n_peers;
	bool running;
	bool stale;    /* an involved interface changed during the run: do not cache */
	uint32_t timeout_ms;
	struct ctl_client *waiters;
	struct npf_check *result;
	/* The decision for result under the current config and inventory, with the job's
	 * first node = peers[0] and per-node (not job-wide) values. */
	struct npf_recommendation rec;
	bool have_rec;
	/* npf_check_to_json(result, &rec), encoded once per decision: every check and
	 * verdict reply and the state file are made around this text. */
	char *text;
	size_t text_len;
	/* env replies of rec (per-node values, first node peers[0]), encoded on first use,
	 * forgotten with rec. */
	struct npf_api_env_split env[DCHK_ENV_SLOTS];
	uint64_t done_mono_us, done_unix_ms;
	char summary[sizeof(((struct npf_recommendation *)0)->summary)];
	enum npf_verdict verdict;

	/* The job check (docs/decision.md §10): the run's tag ("" = this node decides
	 * alone), the job id its row carries, and what the coordinator answered. */
	char job_tag[NPF_API_JOB_MAX];
	bool job_settle; /* the job start's last try: its row says "settle" */
	char job_id[NPF_WIRE_JOB_ID_LEN + 1];
	bool job_pending;	       /* the row is out, the decision not yet in */
	struct npf_job_submit *job_sub; /* to a remote coordinator, while pending */
	bool have_job;		       /* job_dec or job_err holds the exchange's end */
	struct npf_msg_job_decision job_dec; /* owned; nodes NULL when job_err */
	int job_err;		       /* 0, or why no decision came (-ETIMEDOUT ...) */
	uid_t job_uid;		       /* who started the job check (DMN_MAX_JOBS_PER_UID) */
	/* The exchange's window: the probes and the wait for the other rows end within
	 * 2 * job_budget_ms + DCHK_JOB_SLACK_MS of start_mono_us. job_budget_ms is the
	 * caller's ceiling (max_timeout_ms, what the Prolog's budget leaves) when above the
	 * probe budget, so nodes whose checks start far apart still meet (job_window_ms()). */
	uint32_t job_budget_ms;
	uint64_t start_mono_us;
};

/* How old e's result is. */
static inline uint64_t dchk_age_ms(const struct dchk *e)
{
	return (npf_now(CLOCK_MONOTONIC) - e->done_mono_us) / USEC_PER_MSEC;
}

/* The [publish] policy of the running config. first_node is borrowed. Inline here, as
 * the decision, the answers and the job row all start from it. */
static inline void policy_for(const struct npf_daemon *d, const char *first_node, bool job_wide,
		       struct npf_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->prefer = &d->cfg.publish.prefer;
	pol->avoid = &d->cfg.publish.avoid;
	pol->rdma_fabric = &d->cfg.publish.rdma_fabric;
	pol->nccl_version = d->cfg.publish.nccl_version;
	pol->publish = d->cfg.publish.variables;
	pol->master_addr = d->cfg.publish.master_addr;
	pol->first_node = first_node;
	pol->job_wide = job_wide;
}

/* decision.c */
/* Forgets e's encoded env replies (they belong to e->rec). */
void dchk_drop_env(struct dchk *e);
/* The job's decision as this node applies it (npf_policy.job). names (n_peers slots) and
 * reason are the caller's buffers the view borrows. */
void dchk_job_view(const struct npf_daemon *d, const struct dchk *e, struct npf_job_view *v,
		   const char **names, char *reason, size_t rlen);
/* (Re)computes e's recommendation and its encoded JSON from e->result. Returns 0, or
 * -ENOMEM or -EMSGSIZE (e keeps its previous text then). */
int dchk_decide(struct npf_daemon *d, struct dchk *e);

/* answer.c: every reply ends in exactly one ctl_reply()/ctl_reply_frame() */
/* A check or verdict reply: the cached text in a frame. */
void dchk_check_reply(struct ctl_client *c, const struct dchk *e, bool cached);
/* The env reply for c from e (first_node borrowed). */
void dchk_env_reply(struct npf_daemon *d, struct ctl_client *c, struct dchk *e,
		    const char *first_node, bool job_wide, const char *format, bool cached);
/* What a waiting client asked for (check or env), answered from e. */
void dchk_waiter_reply(struct npf_daemon *d, struct dchk *e, struct ctl_client *c, bool cached);
/* Answers every waiter of list w with the engine's error err. */
void dchk_fail_waiters(struct ctl_client *w, int err);

/* state.c */
/* Writes e as [daemon] state_dir/last-check.json (no-op without a state_dir); failures
 * are logged, never fatal. */
void dchk_write_state(struct npf_daemon *d, const struct dchk *e);

#endif
