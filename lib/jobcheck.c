// SPDX-License-Identifier: MIT
/* The job decision from the job's pair-state matrix: blame a minority, on its own evidence,
 * instead of degrading. */
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

/* Scratch of one decision, n_nodes entries each. */
struct scratch {
	size_t *comp; /* union-find parent, then each node's component of working pairs */
	size_t *seen; /* per component: the stamp of the last node that failed with it */
	size_t stamp;
	uint8_t *why; /* enum npf_job_blame per node on the network being viewed */
};

static size_t find_root(size_t *parent, size_t i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

/* The components of network k's working pairs: two nodes in one component work with each
 * other, directly or through others. An ok pair needs both rows to say ok, so no single
 * row can join two components. With skip (s->why, the suspects), only pairs between two
 * nodes that are not suspects count: what joins the nodes the job keeps. */
static void components(const struct npf_job_input *in, size_t k, struct scratch *s, bool skip)
{
	size_t n = in->n_nodes;

	for (size_t i = 0; i < n; i++)
		s->comp[i] = i;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *row = in->pairs + k * n * n + i * n;

		if (skip && s->why[i])
			continue;
		for (size_t j = i + 1; j < n; j++)
			if (row[j] == NPF_PAIR_OK && !(skip && s->why[j])) {
				size_t a = find_root(s->comp, i), b = find_root(s->comp, j);

				if (a != b)
					s->comp[a > b ? a : b] = a > b ? b : a;
			}
	}
	for (size_t i = 0; i < n; i++)
		s->comp[i] = find_root(s->comp, i);
}

/* The nodes that are not suspects form more than one component of working pairs on k: some
 * of them were never verified with each other, not even through others. A full mesh cannot
 * get here without a failing or unknown pair between them; a sparse plan can (suspects that
 * cut its ring in two), and then k is no more proven than an unknown pair makes it. */
static bool split(const struct npf_job_input *in, size_t k, struct scratch *s)
{
	size_t root = SIZE_MAX;

	components(in, k, s, true);
	for (size_t i = 0; i < in->n_nodes; i++) {
		if (s->why[i])
			continue;
		if (root == SIZE_MAX)
			root = s->comp[i];
		else if (s->comp[i] != root)
			return true;
	}
	return false;
}

static bool blame_local(const struct npf_job_input *in, size_t k, size_t x, struct scratch *s)
{
	(void)s;
	return in->absent && in->absent[k * in->n_nodes + x];
}

/* x's own row says it fails with two distinct peers of one component. A failure that only
 * the peer reports does not count: it may be that peer's lie. */
static bool blame_corroborated(const struct npf_job_input *in, size_t k, size_t x,
			       struct scratch *s)
{
	size_t n = in->n_nodes;
	const uint8_t *pairs = in->pairs + k * n * n + x * n;
	const uint8_t *said = in->said ? in->said + k * n * n + x * n : pairs;

	s->stamp++;
	for (size_t j = 0; j < n; j++) {
		size_t c;

		if (j == x || said[j] != NPF_PAIR_FAIL || pairs[j] != NPF_PAIR_FAIL)
			continue;
		c = s->comp[j];
		if (s->seen[c] == s->stamp)
			return true;
		s->seen[c] = s->stamp;
	}
	return false;
}

/* The blame table (docs/decision.md §10): first row that holds makes x a suspect on a
 * network. Every row reads x's own row only; a new kind of evidence is one more row. */
static const struct blame_row {
	enum npf_job_blame why;
	bool (*holds)(const struct npf_job_input *in, size_t k, size_t x, struct scratch *s);
	const char *text;
} blame_rows[] = {
    {NPF_BLAME_LOCAL, blame_local,
     "has no usable address (its own row: no address, port down or no carrier)"},
    {NPF_BLAME_CORROBORATED, blame_corroborated,
     "fails with two peers that work with each other (its own row)"},
};

const char *npf_job_blame_text(enum npf_job_blame why)
{
	for (size_t i = 0; i < sizeof(blame_rows) / sizeof(blame_rows[0]); i++)
		if (blame_rows[i].why == why)
			return blame_rows[i].text;
	return "is not a suspect";
}

/* What a network looks like for the whole job, each node judged on its own evidence. */
struct netview {
	bool all_ok; /* every pair ok */
	bool any_ok;
	size_t n_suspects;  /* s->why[] != NPF_BLAME_NONE */
	bool unknown_left;  /* an unknown pair between two non-suspects, or no chain of
			     * working pairs between two of them (split()) */
	int pair_a, pair_b; /* the first failing pair between two non-suspects, -1 none */
};

static void view(const struct npf_job_input *in, size_t k, struct scratch *s, struct netview *v)
{
	size_t n = in->n_nodes;

	memset(v, 0, sizeof(*v));
	v->all_ok = true;
	v->pair_a = v->pair_b = -1;
	components(in, k, s, false);
	for (size_t x = 0; x < n; x++) {
		s->why[x] = NPF_BLAME_NONE;
		for (size_t r = 0; r < sizeof(blame_rows) / sizeof(blame_rows[0]); r++)
			if (blame_rows[r].holds(in, k, x, s)) {
				s->why[x] = (uint8_t)blame_rows[r].why;
				v->n_suspects++;
				break;
			}
	}
	for (size_t i = 0; i < n; i++) {
		const uint8_t *row = in->pairs + k * n * n + i * n;

		for (size_t j = i + 1; j < n; j++) {
			uint8_t st = row[j];
			bool others = !s->why[i] && !s->why[j];

			if (st == NPF_PAIR_OUTSIDE)
				continue;
			if (st != NPF_PAIR_OK)
				v->all_ok = false;
			else
				v->any_ok = true;
			if (others && st == NPF_PAIR_UNKNOWN)
				v->unknown_left = true;
			if (others && st == NPF_PAIR_FAIL && v->pair_a < 0) {
				v->pair_a = (int)i;
				v->pair_b = (int)j;
			}
		}
	}
	/* Every pair the plan holds works, yet the job's nodes are not one network on it:
	 * evidence missing, as for an unknown pair (docs/decision.md §10, sparse plans). */
	if (!v->unknown_left && v->pair_a < 0 && split(in, k, s)) {
		v->all_ok = false;
		v->unknown_left = true;
	}
}

static int64_t quality_of(const struct npf_job_input *in, int k)
{
	return k < 0 ? INT64_MIN : in->nets[k].quality;
}

static const char *node_name(const struct npf_job_input *in, size_t i, char *buf, size_t len)
{
	if (in->names && in->names[i])
		return in->names[i];
	snprintf(buf, len, "#%zu", i);
	return buf;
}

static const char *net_name(const struct npf_job_input *in, int k)
{
	return k >= 0 && in->nets[k].name ? in->nets[k].name : "?";
}

/* The suspects by name when the input has names, else by hostlist position ("#3", 0-based). */
static void name_suspects(const struct npf_job_input *in, const struct npf_job_decision *d,
			  size_t n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off + 8 < len; i++) {
		char num[24];
		int w;

		if (!d->suspect[i])
			continue;
		w = snprintf(buf + off, len - off, "%s%s", off ? "," : "",
			     node_name(in, i, num, sizeof(num)));
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/* The pair the job left a better network for, appended to the reason: the operator's
 * alert, with nobody drained for it. */
static void name_pair(const struct npf_job_input *in, struct npf_job_decision *d)
{
	size_t off = strlen(d->reason);
	char a[24], b[24];

	if (d->pair_net < 0 || off >= sizeof(d->reason))
		return;
	snprintf(d->reason + off, sizeof(d->reason) - off,
		 "; %s fails between %s and %s, which either end could explain (nobody drained)",
		 net_name(in, d->pair_net), node_name(in, (size_t)d->pair_a, a, sizeof(a)),
		 node_name(in, (size_t)d->pair_b, b, sizeof(b)));
}

static void set_suspects(struct npf_job_decision *d, const struct scratch *s, size_t n,
			 size_t count)
{
	for (size_t i = 0; i < n; i++) {
		d->suspect[i] = s->why[i] != NPF_BLAME_NONE;
		d->why[i] = s->why[i];
	}
	d->n_suspects = count;
}

int npf_job_decide(const struct npf_job_input *in, struct npf_job_decision *out)
{
	struct scratch s = {0};
	size_t n;
	int w = -1;
	int64_t skipped_q = INT64_MIN; /* best quality passed over because of failures */
	char who[96];
	int r = -ENOMEM;

	if (!in || !out || !in->n_nodes || (in->n_nets && (!in->nets || !in->pairs)))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	n = in->n_nodes;
	out->net = out->best = -1;
	out->pair_net = out->pair_a = out->pair_b = -1;
	out->suspect = calloc(n, sizeof(*out->suspect));
	out->why = calloc(n, sizeof(*out->why));
	s.comp = calloc(n, sizeof(*s.comp));
	s.seen = calloc(n, sizeof(*s.seen));
	s.why = calloc(n, sizeof(*s.why));
	if (!out->suspect || !out->why || !s.comp || !s.seen || !s.why)
		goto done;
	r = 0;
	for (size_t k = 0; k < in->n_nets && w < 0; k++) {
		struct netview v;

		view(in, k, &s, &v);
		if (v.all_ok)
			w = (int)k;
	}
	for (size_t k = 0; k < in->n_nets; k++) {
		struct netview v;

		view(in, k, &s, &v);
		if (out->best < 0 && (v.any_ok || v.all_ok))
			out->best = (int)k;
		if ((int)k == w) {
			out->net = w;
			out->verdict =
			    skipped_q > quality_of(in, w) ? NPF_JOB_DEGRADED : NPF_JOB_OK;
			snprintf(out->reason, sizeof(out->reason), "%s works for every pair%s",
				 net_name(in, w),
				 out->verdict == NPF_JOB_DEGRADED ? ", a better network does not"
								  : "");
			if (out->verdict == NPF_JOB_DEGRADED)
				name_pair(in, out);
			goto done;
		}
		if (v.pair_a >= 0) {
			/* Either end could explain this pair: nobody is blamed, the job
			 * moves on, and the pair is named for the operator. */
			if (v.any_ok && in->nets[k].quality > quality_of(in, w) &&
			    out->pair_net < 0) {
				out->pair_net = (int)k;
				out->pair_a = v.pair_a;
				out->pair_b = v.pair_b;
			}
			if (v.any_ok && in->nets[k].quality > skipped_q)
				skipped_q = in->nets[k].quality;
			continue;
		}
		if (v.unknown_left && in->settle && w >= 0) {
			/* The job's last try: what was verified beats nothing (issue 18). */
			out->net = w;
			out->verdict = NPF_JOB_DEGRADED;
			snprintf(out->reason, sizeof(out->reason),
				 "a better network could not be verified (evidence missing on %s): "
				 "%s works for every pair",
				 net_name(in, (int)k), net_name(in, w));
			goto done;
		}
		if (v.unknown_left) {
			/* The better network might work: never decide past missing evidence. */
			out->net = (int)k;
			out->verdict = NPF_JOB_UNKNOWN;
			snprintf(
			    out->reason, sizeof(out->reason),
			    "evidence missing on %s, ranked before the network chosen otherwise",
			    net_name(in, (int)k));
			goto done;
		}
		if (v.any_ok && v.n_suspects * 2 < n && in->nets[k].quality > quality_of(in, w)) {
			if (in->degrade && w >= 0) {
				skipped_q = in->nets[k].quality > skipped_q ? in->nets[k].quality
									    : skipped_q;
				continue;
			}
			set_suspects(out, &s, n, v.n_suspects);
			out->net = (int)k;
			out->verdict = NPF_JOB_OK;
			name_suspects(in, out, n, who, sizeof(who));
			snprintf(out->reason, sizeof(out->reason),
				 "%s works for every pair without %s", net_name(in, (int)k), who);
			goto done;
		}
		if (v.any_ok && in->nets[k].quality > skipped_q)
			skipped_q = in->nets[k].quality;
	}
	/* No network works for the job: fail, naming the suspects of the best network when
	 * they are a minority. */
	out->verdict = NPF_JOB_FAIL;
	if (out->best >= 0) {
		struct netview v;

		view(in, (size_t)out->best, &s, &v);
		if (v.n_suspects * 2 < n)
			set_suspects(out, &s, n, v.n_suspects);
	}
	snprintf(out->reason, sizeof(out->reason), "no network works for every pair");
	name_pair(in, out);
done:
	free(s.comp);
	free(s.seen);
	free(s.why);
	if (r < 0)
		npf_job_decision_clear(out);
	return r;
}

void npf_job_decision_clear(struct npf_job_decision *d)
{
	if (!d)
		return;
	free(d->suspect);
	free(d->why);
	memset(d, 0, sizeof(*d));
	d->net = d->best = -1;
	d->pair_net = d->pair_a = d->pair_b = -1;
}

const char *npf_job_role_name(enum npf_job_role r)
{
	static const char *const names[] = {
	    [NPF_JOB_ROLE_OK] = "ok",		[NPF_JOB_ROLE_DEGRADED] = "degraded",
	    [NPF_JOB_ROLE_SUSPECT] = "suspect", [NPF_JOB_ROLE_FAIL] = "fail",
	    [NPF_JOB_ROLE_UNKNOWN] = "unknown",
	};

	return (unsigned int)r < sizeof(names) / sizeof(names[0]) ? names[r] : "unknown";
}
