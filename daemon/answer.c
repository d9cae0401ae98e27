// SPDX-License-Identifier: MIT
/* Replies from a cached check: check and verdict (the cached text in a frame), env (the
 * cached decision's split reply per format, or a decision made now), and the waiters'. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dchk.h"

/* A copy of the cached text in a frame: no JSON work per query. */
void dchk_check_reply(struct ctl_client *c, const struct dchk *e, bool cached)
{
	char *frame = NULL;
	size_t len = 0;
	int r;

	r = npf_api_check_reply_frame(e->text, e->text_len, cached, dchk_age_ms(e), NPF_API_MAX_REPLY,
				      &frame, &len);
	ctl_reply_frame(c, r, frame, len);
}

/* The cache slot of an env format, or -1. */
static int env_slot(const char *format)
{
	int f;

	if (!format[0] || strcmp(format, "json") == 0)
		return 0;
	f = npf_envfmt_parse(format);
	return f >= 0 && f + 1 < DCHK_ENV_SLOTS ? f + 1 : -1;
}

/* The cached decision's env reply, encoded once per format and decision. Returns 0 when
 * it answered c. */
static int env_cached_reply(struct ctl_client *c, struct dchk *e, const char *format,
			    bool cached)
{
	int slot = env_slot(format), r = 0;
	char *frame = NULL;
	size_t len = 0;

	if (slot < 0)
		return -EINVAL;
	if (!e->env[slot].head)
		r = npf_api_env_split_make(&e->rec, format, &e->env[slot]);
	if (r < 0)
		return r;
	r = npf_api_env_split_frame(&e->env[slot], cached, dchk_age_ms(e), NPF_API_MAX_REPLY, &frame,
				    &len);
	ctl_reply_frame(c, r, frame, len);
	return 0;
}

/* The env reply for one client: the cached decision when it answers the same
 * question (per-node values; the same first node when MASTER_ADDR is published),
 * else a decision made now from the cached evidence. */
void dchk_env_reply(struct npf_daemon *d, struct ctl_client *c, struct dchk *e,
		      const char *first_node, bool job_wide, const char *format, bool cached)
{
	struct npf_recommendation rec = { 0 };
	struct npf_policy pol;
	struct npf_job_view view;
	const char **names = NULL;
	char reason[sizeof(e->job_dec.reason) + 96];
	int r = -EINVAL;

	if (e->have_rec && !job_wide &&
	    (!d->cfg.publish.master_addr || strcmp(first_node, e->peers[0]) == 0)) {
		if (env_cached_reply(c, e, format, cached) == 0)
			return;
		ctl_reply(c, npf_api_env_reply(&e->rec, format, cached, dchk_age_ms(e)));
		return;
	}
	policy_for(d, first_node, job_wide, &pol);
	/* The job's decision holds for every form of its env (job-wide values too). */
	if (e->have_job) {
		names = calloc(e->n_peers, sizeof(*names));
		if (names) {
			dchk_job_view(d, e, &view, names, reason, sizeof(reason));
			pol.job = &view;
		} else {
			r = -ENOMEM;
		}
	}
	if (d->inv && (!e->have_job || names))
		r = npf_recommend(d->inv, e->result, &pol, &rec);
	free(names);
	if (r < 0) {
		npf_recommendation_clear(&rec);
		ctl_reply(c, npf_api_reply_error(NPF_API_E_INTERNAL, "cannot decide: %s",
						 strerror(-r)));
		return;
	}
	ctl_reply(c, npf_api_env_reply(&rec, format, cached, dchk_age_ms(e)));
	npf_recommendation_clear(&rec);
}

/* What a waiting client asked for, answered from e. */
void dchk_waiter_reply(struct npf_daemon *d, struct dchk *e, struct ctl_client *c,
			 bool cached)
{
	if (c->want_env)
		dchk_env_reply(d, c, e, c->env_first_node, c->env_job_wide, c->env_format, cached);
	else
		dchk_check_reply(c, e, cached);
}

void dchk_fail_waiters(struct ctl_client *w, int err)
{
	struct ctl_client *next;

	for (; w; w = next) {
		next = w->wait_next;
		w->waiting = NULL;
		w->wait_next = NULL;
		ctl_reply(w, npf_api_reply_error(NPF_API_E_CHECK_FAILED,
						 "the probe engine failed: %s",
						 strerror(err < 0 ? -err : EIO)));
	}
}
