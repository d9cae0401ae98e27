// SPDX-License-Identifier: MIT
/* The job decision from the job's pair-state matrix: blame a minority instead of degrading. */
#include "jobcheck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[] = {
    [NPF_JOB_OK] = "ok",
    [NPF_JOB_DEGRADED] = "degraded",
    [NPF_JOB_FAIL] = "fail",
    [NPF_JOB_UNKNOWN] = "unknown",
};

const char *npf_job_verdict_name(enum npf_job_verdict v)
{
	return (unsigned int)v < sizeof(verdict_names) / sizeof(verdict_names[0]) ? verdict_names[v]
										  : "unknown";
}

static uint8_t pair_at(const struct npf_job_input *in, size_t k, size_t i, size_t j)
{
	size_t n = in->n_nodes;

	return in->pairs[k * n * n + i * n + j];
}

/* What a network looks like for the whole job, once its failing pairs are covered. */
struct netview {
	bool all_ok; /* every pair ok */
	bool any_ok;
	size_t n_cover;	   /* nodes in the greedy cover of the failing pairs */
	bool unknown_left; /* an unknown pair among the nodes outside the cover */
};

/* Greedy, deterministic cover of the failing pairs of network k into cover[] (zeroed by
 * the caller): the node in most failing pairs first, ties to the later node. deg is
 * scratch of n_nodes entries. */
static void view(const struct npf_job_input *in, size_t k, bool *cover, size_t *deg,
		 struct netview *v)
{
	size_t n = in->n_nodes;

	memset(v, 0, sizeof(*v));
	v->all_ok = true;
	for (size_t i = 0; i < n; i++) {
		deg[i] = 0;
		for (size_t j = 0; j < n; j++) {
			uint8_t s;

			if (j == i)
				continue;
			s = pair_at(in, k, i, j);
			if (s == NPF_PAIR_OUTSIDE)
				continue;
			if (s != NPF_PAIR_OK)
				v->all_ok = false;
			else
				v->any_ok = true;
			if (s == NPF_PAIR_FAIL)
				deg[i]++;
		}
	}
	for (;;) {
		size_t best = n, max = 0;

		for (size_t i = 0; i < n; i++) {
			if (!cover[i] && deg[i] >= max && deg[i] > 0) {
				max = deg[i];
				best = i;
			}
		}
		if (best == n)
			break;
		cover[best] = true;
		v->n_cover++;
		for (size_t j = 0; j < n; j++)
			if (j != best && !cover[j] && pair_at(in, k, best, j) == NPF_PAIR_FAIL)
				deg[j]--;
		deg[best] = 0;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (!cover[i] && !cover[j] && pair_at(in, k, i, j) == NPF_PAIR_UNKNOWN)
				v->unknown_left = true;
}

static int64_t quality_of(const struct npf_job_input *in, int k)
{
	return k < 0 ? INT64_MIN : in->nets[k].quality;
}

/* The suspects by name when the input has names, else by hostlist position ("#3", 0-based). */
static void name_suspects(const struct npf_job_input *in, const struct npf_job_decision *d,
			  size_t n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off + 8 < len; i++) {
		int w;

		if (!d->suspect[i])
			continue;
		if (in->names && in->names[i])
			w = snprintf(buf + off, len - off, "%s%s", off ? "," : "", in->names[i]);
		else
			w = snprintf(buf + off, len - off, "%s#%zu", off ? "," : "", i);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

int npf_job_decide(const struct npf_job_input *in, struct npf_job_decision *out)
{
	size_t n, *deg = NULL;
	bool *cover = NULL;
	int w = -1;
	int64_t skipped_q = INT64_MIN; /* best quality passed over because of failures */
	char who[96];
	int r = -ENOMEM;

	if (!in || !out || !in->n_nodes || (in->n_nets && (!in->nets || !in->pairs)))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	n = in->n_nodes;
	out->net = out->best = -1;
	out->suspect = calloc(n, sizeof(*out->suspect));
	cover = calloc(n, sizeof(*cover));
	deg = calloc(n, sizeof(*deg));
	if (!out->suspect || !cover || !deg)
		goto done;
	r = 0;
	for (size_t k = 0; k < in->n_nets && w < 0; k++) {
		struct netview v;

		memset(cover, 0, n * sizeof(*cover));
		view(in, k, cover, deg, &v);
		if (v.all_ok)
			w = (int)k;
	}
	for (size_t k = 0; k < in->n_nets; k++) {
		struct netview v;

		memset(cover, 0, n * sizeof(*cover));
		view(in, k, cover, deg, &v);
		if (out->best < 0 && (v.any_ok || v.all_ok))
			out->best = (int)k;
		if ((int)k == w) {
			out->net = w;
			out->verdict =
			    skipped_q > quality_of(in, w) ? NPF_JOB_DEGRADED : NPF_JOB_OK;
			snprintf(out->reason, sizeof(out->reason), "%s works for every pair%s",
				 in->nets[k].name ? in->nets[k].name : "?",
				 out->verdict == NPF_JOB_DEGRADED ? ", a better network does not"
								  : "");
			goto done;
		}
		if (v.unknown_left && in->settle && w >= 0) {
			/* The last try: what was verified beats nothing (issue 18). */
			out->net = w;
			out->verdict = NPF_JOB_DEGRADED;
			snprintf(out->reason, sizeof(out->reason),
				 "a better network could not be verified (evidence missing on %s): "
				 "%s works for every pair",
				 in->nets[k].name ? in->nets[k].name : "?",
				 in->nets[w].name ? in->nets[w].name : "?");
			goto done;
		}
		if (v.unknown_left) {
			/* The better network might work: never decide past missing evidence. */
			out->net = (int)k;
			out->verdict = NPF_JOB_UNKNOWN;
			snprintf(
			    out->reason, sizeof(out->reason),
			    "evidence missing on %s, ranked before the network chosen otherwise",
			    in->nets[k].name ? in->nets[k].name : "?");
			goto done;
		}
		if (v.any_ok && v.n_cover * 2 < n && in->nets[k].quality > quality_of(in, w)) {
			if (in->degrade && w >= 0) {
				skipped_q = in->nets[k].quality > skipped_q ? in->nets[k].quality
									    : skipped_q;
				continue;
			}
			memcpy(out->suspect, cover, n * sizeof(*cover));
			out->n_suspects = v.n_cover;
			out->net = (int)k;
			out->verdict = NPF_JOB_OK;
			name_suspects(in, out, n, who, sizeof(who));
			snprintf(out->reason, sizeof(out->reason),
				 "%s works for every pair without %s", in->nets[k].name ? in->nets[k].name : "?",
				 who);
			goto done;
		}
		if (v.any_ok && in->nets[k].quality > skipped_q)
			skipped_q = in->nets[k].quality;
	}
	/* No network works for the job: fail, naming a minority that explains the best
	 * network's failures when there is one. */
	out->verdict = NPF_JOB_FAIL;
	if (out->best >= 0) {
		struct netview v;

		memset(cover, 0, n * sizeof(*cover));
		view(in, (size_t)out->best, cover, deg, &v);
		if (v.n_cover * 2 < n) {
			memcpy(out->suspect, cover, n * sizeof(*cover));
			out->n_suspects = v.n_cover;
		}
	}
	snprintf(out->reason, sizeof(out->reason), "no network works for every pair");
done:
	free(cover);
	free(deg);
	if (r < 0)
		npf_job_decision_clear(out);
	return r;
}

void npf_job_decision_clear(struct npf_job_decision *d)
{
	if (!d)
		return;
	free(d->suspect);
	memset(d, 0, sizeof(*d));
	d->net = d->best = -1;
}
