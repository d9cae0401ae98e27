// SPDX-License-Identifier: MIT
/* The coordinator of job checks (docs/decision.md §10, "Same evidence everywhere"): the
 * first node of a job's hostlist collects every node's ROW, decides once for the whole job
 * (npf_job_round_decide) and answers every participant with the same JOB_DECISION bytes.
 * One round per job id; rows from peers arrive through the probe engine (npf_probe_job_row_fn),
 * this node's own through jround_add_row() with a local callback. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "daemon.h"
#include "jobrows.h"
#include "log.h"
#include "probe.h"

#define JR_MAX_ROUNDS 64		 /* jobs coordinated at once (decided ones linger) */
#define JR_MAX_BYTES (32u << 20)	 /* row bytes held by all rounds: a hostile peer's
					  * rows cannot grow the daemon without bound */
#define JR_LINGER_US (120ull * 1000000)	 /* a decided round answers late rows this long */
#define JR_MARGIN_US (300ull * 1000)	 /* decide this long before the first waiter gives up */
#define JR_DEFAULT_WAIT_MS 10000	 /* a row that names no wait */
/* Open rounds one remote node may have opened: one key holder cannot fill the table with
 * made-up job ids (a node is in few jobs starting at once). */
#define JR_MAX_PER_PEER 8

struct jwaiter {
	uint64_t remote;   /* npf_probe_job_answer() id, 0 = local */
	jround_local_fn fn; /* local */
	void *ud;
};

/* A remote row that came before the hostlist (jround_add_row()). */
struct jpend {
	struct npf_msg_row *row; /* owned */
	struct jwaiter w;
};

struct jround {
	struct jround *next;
	struct npf_daemon *d;
	char job[NPF_WIRE_JOB_ID_LEN + 1];
	uint32_t n;
	struct npf_msg_row **rows; /* [n], owned */
	size_t n_rows, bytes;
	struct jwaiter *w;	   /* owned */
	size_t n_w;
	sd_event_source *timer;
	uint64_t deadline_us;	   /* CLOCK_MONOTONIC */
	bool decided;
	struct npf_msg_job_decision dec;
	/* The job's hostlist, from this node's own check of it (its row comes with it): a
	 * row is taken only from hostlist[index]. NULL until then; remote rows wait in pend. */
	char (*hostlist)[NPF_NAME_MAX];
	struct jpend *pend; /* owned, [n_pend] */
	size_t n_pend;
	char opener[NPF_NAME_MAX]; /* the remote node whose row opened the round, "" = us */
};

static size_t row_bytes(const struct npf_msg_row *r)
{
	return sizeof(*r) + r->n_nets * ((size_t)r->n_nodes + 1);
}

static void row_free(struct npf_msg_row *r)
{
	if (!r)
		return;
	npf_wire_row_clear(r);
	free(r);
}

static void drop_rows(struct jround *jr)
{
	for (size_t i = 0; jr->rows && i < jr->n; i++)
		row_free(jr->rows[i]);
	free(jr->rows);
	jr->rows = NULL;
	for (size_t i = 0; i < jr->n_pend; i++)
		row_free(jr->pend[i].row);
	free(jr->pend);
	jr->pend = NULL;
	jr->n_pend = 0;
	jr->d->jround_bytes -= jr->bytes;
	jr->bytes = 0;
}

static void round_free(struct jround *jr)
{
	struct npf_daemon *d = jr->d;

	for (struct jround **pp = &d->jrounds; *pp; pp = &(*pp)->next)
		if (*pp == jr) {
			*pp = jr->next;
			d->n_jrounds--;
			break;
		}
	drop_rows(jr);
	jr->timer = sd_event_source_disable_unref(jr->timer);
	npf_wire_job_decision_clear(&jr->dec);
	free(jr->w);
	free(jr->hostlist);
	free(jr);
}

static void answer(struct npf_daemon *d, const struct jwaiter *w,
		   const struct npf_msg_job_decision *dec)
{
	int r;

	if (w->fn) {
		w->fn(w->ud, dec);
		return;
	}
	r = npf_probe_job_answer(d->probe, w->remote, dec);
	if (r < 0 && r != -ENOENT)
		log_debug("job %.8s: answer lost: %s", dec->job, strerror(-r));
}

/* An answer for one participant only, when its row cannot join the round (the rows
 * disagree on the job's size, or the coordinator is out of room): unknown, which is
 * what the others reach without its row too. */
static void answer_alone(struct npf_daemon *d, const struct npf_msg_row *row,
			 const struct jwaiter *w, const char *why)
{
	struct npf_msg_job_decision dec = { .verdict = NPF_JOB_UNKNOWN, .n_nodes = row->n_nodes };
	char nodes[NPF_WIRE_MAX_ROW_NODES + 1];

	memset(nodes, '.', row->n_nodes);
	nodes[row->n_nodes] = '\0';
	dec.nodes = nodes;
	memcpy(dec.job, row->job, sizeof(dec.job));
	snprintf(dec.reason, sizeof(dec.reason), "the coordinator %s cannot take this row: %s",
		 d->node_name, why);
	log_warnx("job %.8s: row of %s refused: %s", row->job, row->node, why);
	answer(d, w, &dec);
}

/* Decides from the rows held now and answers everyone waiting. The rows go; the
 * decision stays for late rows until the linger ends. */
static void decide(struct jround *jr)
{
	struct npf_daemon *d = jr->d;
	bool degrade = d->cfg.publish.fallback == NPF_FALLBACK_DEGRADE;
	struct jwaiter *w;
	size_t n_w;
	int r;

	/* Rows still waiting for the hostlist are no evidence (our own row never came, so
	 * the verdict is unknown anyway), but their senders get the answer. */
	if (jr->n_pend) {
		struct jwaiter *nw = realloc(jr->w, (jr->n_w + jr->n_pend) * sizeof(*jr->w));

		if (nw) {
			jr->w = nw;
			for (size_t i = 0; i < jr->n_pend; i++)
				jr->w[jr->n_w++] = jr->pend[i].w;
			for (size_t i = 0; i < jr->n_pend; i++)
				row_free(jr->pend[i].row);
			jr->n_pend = 0;
		}
	}
	w = jr->w;
	n_w = jr->n_w;
	r = npf_job_round_decide((const struct npf_msg_row *const *)jr->rows, jr->n, degrade,
				 &jr->dec);
	if (r < 0) {
		log_errc(r, "job %.8s: no decision", jr->job);
		/* Out of memory: the waiters time out and say unknown on their side. */
		return;
	}
	/* No row placed (ours never came, the others waited for it): the decision names the
	 * round's job all the same, or its waiters would take it for another job's. */
	if (!jr->dec.job[0])
		memcpy(jr->dec.job, jr->job, sizeof(jr->dec.job));
	jr->decided = true;
	log_info("job %.8s: %s on %s, %zu of %u rows: %s", jr->job,
		 npf_job_verdict_name((enum npf_job_verdict)jr->dec.verdict),
		 jr->dec.net[0] ? jr->dec.net : "-", jr->n_rows, jr->n, jr->dec.reason);
	drop_rows(jr);
	jr->w = NULL;
	jr->n_w = 0;
	(void)sd_event_source_set_time(jr->timer, npf_now(CLOCK_MONOTONIC) + JR_LINGER_US);
	(void)sd_event_source_set_enabled(jr->timer, SD_EVENT_ONESHOT);
	for (size_t i = 0; i < n_w; i++)
		answer(d, &w[i], &jr->dec);
	free(w);
}

static int deadline(sd_event_source *s, uint64_t usec, void *ud)
{
	struct jround *jr = ud;

	(void)s;
	(void)usec;
	if (jr->decided)
		round_free(jr);
	else
		decide(jr);
	return 0;
}

static struct jround *find(struct npf_daemon *d, const char *job)
{
	for (struct jround *jr = d->jrounds; jr; jr = jr->next)
		if (strcmp(jr->job, job) == 0)
			return jr;
	return NULL;
}

/* Room for one more round: the oldest decided one goes. False when all are open. */
static bool make_room(struct npf_daemon *d)
{
	struct jround *victim = NULL;

	if (d->n_jrounds < JR_MAX_ROUNDS)
		return true;
	for (struct jround *jr = d->jrounds; jr; jr = jr->next)
		if (jr->decided)
			victim = jr; /* newest first: the last decided is the oldest */
	if (!victim)
		return false;
	round_free(victim);
	return true;
}

/* Open rounds that node opened (a remote row started them, none decided yet). */
static size_t opened_by(struct npf_daemon *d, const char *node)
{
	size_t k = 0;

	for (struct jround *jr = d->jrounds; jr; jr = jr->next)
		if (!jr->decided && strcmp(jr->opener, node) == 0)
			k++;
	return k;
}

static struct jround *round_new(struct npf_daemon *d, const struct npf_msg_row *row, bool remote)
{
	struct jround *jr;

	if (!make_room(d))
		return NULL;
	jr = calloc(1, sizeof(*jr));
	if (!jr)
		return NULL;
	jr->rows = calloc(row->n_nodes, sizeof(*jr->rows));
	if (!jr->rows ||
	    sd_event_add_time(d->event, &jr->timer, CLOCK_MONOTONIC, UINT64_MAX, 10000, deadline,
			      jr) < 0) {
		free(jr->rows);
		free(jr);
		return NULL;
	}
	jr->d = d;
	jr->n = row->n_nodes;
	jr->deadline_us = UINT64_MAX;
	memcpy(jr->job, row->job, sizeof(jr->job));
	if (remote)
		snprintf(jr->opener, sizeof(jr->opener), "%s", row->node);
	jr->next = d->jrounds;
	d->jrounds = jr;
	d->n_jrounds++;
	return jr;
}

/* Decide before the first waiter gives up (row's wait), whoever is missing by then. */
static void arm_deadline(struct jround *jr, const struct npf_msg_row *row)
{
	uint64_t wait_us = (uint64_t)(row->wait_ms ? row->wait_ms : JR_DEFAULT_WAIT_MS) * 1000;
	uint64_t until =
	    npf_now(CLOCK_MONOTONIC) + (wait_us > 2 * JR_MARGIN_US ? wait_us - JR_MARGIN_US : wait_us / 2);

	if (until < jr->deadline_us) {
		jr->deadline_us = until;
		(void)sd_event_source_set_time(jr->timer, until);
		(void)sd_event_source_set_enabled(jr->timer, SD_EVENT_ONESHOT);
	}
}

static void hold_bytes(struct jround *jr, size_t bytes, bool add)
{
	jr->bytes = add ? jr->bytes + bytes : jr->bytes - bytes;
	jr->d->jround_bytes = add ? jr->d->jround_bytes + bytes : jr->d->jround_bytes - bytes;
}

/* Puts row (held, its bytes counted) at its index once the hostlist is known. One node,
 * one index: a row is taken only from the node the job's hostlist names at its index (with
 * a cluster key that is the node that proved the key, server.c on_row()), so no node can
 * speak for another. Takes row. */
static void place(struct jround *jr, struct npf_msg_row *row, const struct jwaiter *w)
{
	struct npf_daemon *d = jr->d;
	struct jwaiter *nw;
	char why[160];

	if (strcmp(jr->hostlist[row->index], row->node) != 0) {
		snprintf(why, sizeof(why), "index %u of the job is %s, not %s", row->index,
			 jr->hostlist[row->index], row->node);
		answer_alone(d, row, w, why);
		goto refuse;
	}
	/* Our own row comes from our own check, never over the network under our name. */
	if (w->remote && strcmp(row->node, d->node_name) == 0) {
		answer_alone(d, row, w, "the coordinator's own row comes from its own check");
		goto refuse;
	}
	if (jr->n_w >= 2 * (size_t)jr->n + 8) {
		answer_alone(d, row, w, "too many waiters");
		goto refuse;
	}
	nw = realloc(jr->w, (jr->n_w + 1) * sizeof(*jr->w));
	if (!nw) {
		answer_alone(d, row, w, "out of memory");
		goto refuse;
	}
	jr->w = nw;
	jr->w[jr->n_w++] = *w;
	/* A node that sends again (a second check with the same tag) replaces its row. */
	if (jr->rows[row->index]) {
		hold_bytes(jr, row_bytes(jr->rows[row->index]), false);
		row_free(jr->rows[row->index]);
		jr->n_rows--;
	}
	jr->rows[row->index] = row;
	jr->n_rows++;
	return;
refuse:
	hold_bytes(jr, row_bytes(row), false);
	row_free(row);
}

/* Takes row. hostlist: the job's, with this node's own row (remote == 0), else NULL. */
void jround_add_row(struct npf_daemon *d, struct npf_msg_row *row, uint64_t remote,
		    jround_local_fn fn, void *ud, const char *const *hostlist)
{
	struct jwaiter w = {.remote = remote, .fn = fn, .ud = ud};
	struct jround *jr = find(d, row->job);
	size_t bytes = row_bytes(row);

	if (jr && jr->n != row->n_nodes) {
		answer_alone(d, row, &w, "another row of this job counts a different number of nodes");
		goto out;
	}
	if (jr && jr->decided) {
		/* Late: the same bytes the others got. */
		answer(d, &w, &jr->dec);
		goto out;
	}
	if (!remote && (!hostlist || strcmp(hostlist[row->index], row->node) != 0)) {
		answer_alone(d, row, &w, "our own row without the job's hostlist");
		goto out;
	}
	if (d->jround_bytes + bytes > JR_MAX_BYTES) {
		answer_alone(d, row, &w, "too many rows held");
		goto out;
	}
	if (!jr && remote && opened_by(d, row->node) >= JR_MAX_PER_PEER) {
		answer_alone(d, row, &w, "too many open job checks from this node");
		goto out;
	}
	if (!jr)
		jr = round_new(d, row, remote != 0);
	if (!jr) {
		answer_alone(d, row, &w, "too many jobs at once");
		goto out;
	}
	hold_bytes(jr, bytes, true);
	arm_deadline(jr, row);
	if (remote && !jr->hostlist) {
		/* Before our own check of the job ends we cannot tell whose index this is:
		 * the row waits, so that no early row can take another node's place. */
		struct jpend *np;

		if (jr->n_pend >= 2 * (size_t)jr->n + 8 ||
		    !(np = realloc(jr->pend, (jr->n_pend + 1) * sizeof(*jr->pend)))) {
			hold_bytes(jr, bytes, false);
			answer_alone(d, row, &w, "too many rows before the coordinator's own");
			goto out;
		}
		jr->pend = np;
		jr->pend[jr->n_pend].row = row;
		jr->pend[jr->n_pend++].w = w;
		return;
	}
	if (!remote && !jr->hostlist) {
		jr->hostlist = calloc(jr->n, sizeof(*jr->hostlist));
		if (!jr->hostlist) {
			hold_bytes(jr, bytes, false);
			answer_alone(d, row, &w, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < jr->n; i++)
			snprintf(jr->hostlist[i], sizeof(jr->hostlist[i]), "%s", hostlist[i]);
	}
	place(jr, row, &w);
	row = NULL;
	for (size_t i = 0; i < jr->n_pend; i++)
		place(jr, jr->pend[i].row, &jr->pend[i].w);
	free(jr->pend);
	jr->pend = NULL;
	jr->n_pend = 0;
	if (jr->n_rows == jr->n)
		decide(jr);
	return;
out:
	row_free(row);
}

void jround_forget_local(struct npf_daemon *d, void *ud)
{
	for (struct jround *jr = d->jrounds; jr; jr = jr->next)
		for (size_t i = 0; i < jr->n_w; i++)
			if (!jr->w[i].remote && jr->w[i].ud == ud) {
				jr->w[i] = jr->w[--jr->n_w];
				i--;
			}
}

void jround_on_remote_row(void *userdata, struct npf_msg_row *row, uint64_t waiter)
{
	jround_add_row(userdata, row, waiter, NULL, NULL, NULL);
}

json_t *jround_status_json(struct npf_daemon *d)
{
	json_t *arr = json_array();
	usec_t now = npf_now(CLOCK_MONOTONIC);

	for (struct jround *jr = d->jrounds; arr && jr; jr = jr->next) {
		json_t *o = json_pack(
		    "{s:s, s:I, s:I, s:I, s:s, s:s, s:I}", "id", jr->job, "nodes", (json_int_t)jr->n,
		    "rows", (json_int_t)(jr->decided ? jr->dec.n_rows : jr->n_rows), "waiting",
		    (json_int_t)jr->n_w, "state", jr->decided ? "decided" : "collecting", "verdict",
		    jr->decided ? npf_job_verdict_name((enum npf_job_verdict)jr->dec.verdict) : "",
		    "deadline_in_ms",
		    (json_int_t)(!jr->decided && jr->deadline_us != UINT64_MAX && jr->deadline_us > now
					 ? (jr->deadline_us - now) / 1000
					 : 0));

		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

void jround_free_all(struct npf_daemon *d)
{
	while (d->jrounds)
		round_free(d->jrounds);
}
