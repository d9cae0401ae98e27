// SPDX-License-Identifier: MIT
/* Rows of a job check -> the job's pair-state matrix (one merge rule, symmetric). */
#include "jobrows.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int npf_job_id(const char *const *names, size_t n, char out[NPF_WIRE_JOB_ID_LEN + 1])
{
	return npf_job_id_tag(names, n, NULL, out);
}

int npf_job_id_tag(const char *const *names, size_t n, const char *job_tag,
		   char out[NPF_WIRE_JOB_ID_LEN + 1])
{
	crypto_generichash_state st;
	uint8_t h[NPF_WIRE_JOB_ID_LEN / 2];
	static const char tag[] = "npf-job-v1";
	static const uint8_t sep = 1; /* never in a node name: names and tag cannot collide */

	if (!names || n == 0)
		return -EINVAL;
	if (crypto_generichash_init(&st, NULL, 0, sizeof(h)) != 0)
		return -EINVAL;
	crypto_generichash_update(&st, (const uint8_t *)tag, sizeof(tag));
	for (size_t i = 0; i < n; i++) {
		if (!names[i])
			return -EINVAL;
		crypto_generichash_update(&st, (const uint8_t *)names[i], strlen(names[i]) + 1);
	}
	if (job_tag && job_tag[0]) {
		crypto_generichash_update(&st, &sep, 1);
		crypto_generichash_update(&st, (const uint8_t *)job_tag, strlen(job_tag) + 1);
	}
	crypto_generichash_final(&st, h, sizeof(h));
	sodium_bin2hex(out, NPF_WIRE_JOB_ID_LEN + 1, h, sizeof(h));
	return 0;
}

void npf_job_matrix_clear(struct npf_job_matrix *m)
{
	free(m->keys);
	free(m->nets);
	free(m->pairs);
	free(m->said);
	free(m->absent);
	memset(m, 0, sizeof(*m));
}

/* Node i's row's entry for network key, NULL when absent (no address there). */
static const struct npf_row_net *row_net(const struct npf_msg_row *r, const char *key)
{
	for (size_t k = 0; k < r->n_nets; k++)
		if (strcmp(r->nets[k].key, key) == 0)
			return &r->nets[k];
	return NULL;
}

/* Node i's view of its pair with j on a network, from its states there (NULL: no address
 * there, the node cannot use the network): '-', 'o', 'u' or 'f'. */
static char view(const char *states, size_t j)
{
	return states ? states[j] : 'f';
}

/* One row's own account of a pair, as a pair state. */
static uint8_t said(char c)
{
	switch (c) {
	case 'o':
		return NPF_PAIR_OK;
	case 'f':
		return NPF_PAIR_FAIL;
	case '-':
		return NPF_PAIR_OUTSIDE;
	default:
		return NPF_PAIR_UNKNOWN;
	}
}

/* The one merge rule (docs/decision.md §10): symmetric in a and b. */
static uint8_t merge(char a, char b)
{
	if (a == 'f' || b == 'f')
		return NPF_PAIR_FAIL;
	if (a == '-' && b == '-')
		return NPF_PAIR_OUTSIDE;
	if (a == '-')
		a = b;
	if (b == '-')
		b = a;
	return a == 'o' && b == 'o' ? NPF_PAIR_OK : NPF_PAIR_UNKNOWN;
}

/* A network key's prefix ("198.18.2.0/24") as lib/rank.c compares it; -EINVAL for text
 * that is no key (the codec refuses such rows before they get here). */
static int key_prefix(const char *key, struct npf_addr *out)
{
	char ip[NPF_WIRE_NET_KEY_MAX];
	const char *slash = strchr(key, '/');
	size_t len = slash ? (size_t)(slash - key) : 0;

	if (!slash || len >= sizeof(ip))
		return -EINVAL;
	memcpy(ip, key, len);
	ip[len] = '\0';
	if (npf_wire_addr_parse(ip, out) < 0)
		return -EINVAL;
	out->prefixlen = (uint8_t)atoi(slash + 1);
	return 0;
}

int npf_job_net_order(int64_t rank_a, const char *key_a, int64_t rank_b, const char *key_b)
{
	struct npf_addr a, b;
	int r;

	if (rank_a != rank_b)
		return rank_a > rank_b ? -1 : 1;
	if (key_prefix(key_a, &a) < 0 || key_prefix(key_b, &b) < 0)
		return strcmp(key_a, key_b);
	r = memcmp(a.addr, b.addr, sizeof(a.addr));
	if (r)
		return r < 0 ? -1 : 1;
	if (a.prefixlen != b.prefixlen)
		return a.prefixlen < b.prefixlen ? -1 : 1;
	return strcmp(key_a, key_b);
}

static int net_cmp(const void *pa, const void *pb)
{
	const struct npf_row_net *a = *(const struct npf_row_net *const *)pa;
	const struct npf_row_net *b = *(const struct npf_row_net *const *)pb;

	return npf_job_net_order(a->rank, a->key, b->rank, b->key);
}

/* The distinct networks of all rows into u[] (borrowed from the rows). Each takes the
 * coordinator's (rows[0], the hostlist's first node) rank and quality: its own policy and
 * the candidates it knows, never a participant's, so no row can move the job to a worse
 * network. A network the coordinator has no address on takes the lowest (rank, quality)
 * any row gives it: it can be chosen only by blaming the coordinator, and a lower key only
 * keeps that from happening. Returns the count or -EPROTO (too many). */
static int collect(const struct npf_msg_row *const *rows, size_t n, const struct npf_row_net **u)
{
	size_t nu = 0, from_first = 0; /* u[0..from_first) come from rows[0] */

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < rows[i]->n_nets; k++) {
			const struct npf_row_net *x = &rows[i]->nets[k];
			size_t q = 0;

			for (; q < nu; q++)
				if (strcmp(u[q]->key, x->key) == 0)
					break;
			if (q < nu) {
				/* Two views of one network: the same whatever order the rows
				 * came in. */
				if (q >= from_first &&
				    (x->rank < u[q]->rank ||
				     (x->rank == u[q]->rank && x->quality < u[q]->quality)))
					u[q] = x;
				continue;
			}
			if (nu == NPF_WIRE_MAX_ROW_NETS)
				return -EPROTO;
			u[nu++] = x;
			if (i == 0)
				from_first = nu;
		}
	qsort(u, nu, sizeof(*u), net_cmp);
	return (int)nu;
}

int npf_job_rows_merge(const struct npf_msg_row *const *rows, size_t n, struct npf_job_matrix *m)
{
	const struct npf_row_net *u[NPF_WIRE_MAX_ROW_NETS];
	const char **st;
	int nu;

	memset(m, 0, sizeof(*m));
	if (!rows || n < 2 || n > NPF_WIRE_MAX_ROW_NODES)
		return -EPROTO;
	for (size_t i = 0; i < n; i++)
		if (!rows[i])
			return -ENODATA;
	for (size_t i = 0; i < n; i++)
		if (rows[i]->n_nodes != n || rows[i]->index != i ||
		    strcmp(rows[i]->job, rows[0]->job) != 0 ||
		    rows[i]->n_nets > NPF_WIRE_MAX_ROW_NETS)
			return -EPROTO;
	nu = collect(rows, n, u);
	if (nu < 0)
		return nu;
	m->n_nodes = n;
	m->n_nets = (size_t)nu;
	m->keys = calloc(nu ? (size_t)nu : 1, sizeof(*m->keys));
	m->nets = calloc(nu ? (size_t)nu : 1, sizeof(*m->nets));
	m->pairs = calloc(nu ? (size_t)nu * n * n : 1, 1);
	m->said = calloc(nu ? (size_t)nu * n * n : 1, 1);
	m->absent = calloc(nu ? (size_t)nu * n : 1, sizeof(*m->absent));
	/* Each row's states on the network being merged, looked up once per row and network:
	 * the loop below then reads bytes only. */
	st = malloc(n * sizeof(*st));
	if (!m->keys || !m->nets || !m->pairs || !m->said || !m->absent || !st) {
		free(st);
		npf_job_matrix_clear(m);
		return -ENOMEM;
	}
	for (size_t k = 0; k < (size_t)nu; k++) {
		uint8_t *said_k = m->said + k * n * n, *pairs_k = m->pairs + k * n * n;

		memcpy(m->keys[k], u[k]->key, sizeof(m->keys[k]));
		m->nets[k].name = m->keys[k];
		m->nets[k].quality = u[k]->quality;
		for (size_t i = 0; i < n; i++) {
			const struct npf_row_net *x = row_net(rows[i], u[k]->key);

			st[i] = x ? x->states : NULL;
			m->absent[k * n + i] = !x;
		}
		/* The matrices start all outside (calloc, NPF_PAIR_OUTSIDE = 0), which is what
		 * two '-' make: only the pairs a row holds are written, each row read in order,
		 * so a sparse plan costs one pass over the rows and O(n * k) merges. */
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++) {
				char a = view(st[i], j);

				if (a == '-' || j == i)
					continue;
				said_k[i * n + j] = said(a);
				pairs_k[i * n + j] = pairs_k[j * n + i] = merge(a, view(st[j], i));
			}
	}
	free(st);
	return 0;
}

struct npf_job_input npf_job_matrix_input(const struct npf_job_matrix *m, bool degrade)
{
	return (struct npf_job_input){.n_nodes = m->n_nodes,
				      .n_nets = m->n_nets,
				      .nets = m->nets,
				      .pairs = m->pairs,
				      .said = m->said,
				      .absent = m->absent,
				      .degrade = degrade};
}

/* The evidence against suspect s on network k: the first peer its own row fails with. */
static const char *first_fail_peer(const struct npf_job_matrix *m, size_t k, size_t s,
				   const struct npf_msg_row *const *rows)
{
	for (size_t j = 0; j < m->n_nodes; j++)
		if (j != s &&
		    m->said[k * m->n_nodes * m->n_nodes + s * m->n_nodes + j] == NPF_PAIR_FAIL)
			return rows[j]->node;
	return "?";
}

int npf_job_round_decide(const struct npf_msg_row *const *rows, size_t n, bool degrade,
			 struct npf_msg_job_decision *out)
{
	struct npf_job_matrix m;
	struct npf_job_decision d;
	struct npf_job_input in;
	const char **names;
	size_t off, missing = 0;
	int r;

	if (!out || !rows || n < 1 || n > NPF_WIRE_MAX_ROW_NODES)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->verdict = NPF_JOB_UNKNOWN;
	out->n_nodes = (uint32_t)n;
	out->nodes = malloc(n + 1);
	if (!out->nodes)
		return -ENOMEM;
	memset(out->nodes, '.', n);
	out->nodes[n] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (rows[i]) {
			out->n_rows++;
			if (out->job[0] == '\0')
				memcpy(out->job, rows[i]->job, sizeof(out->job));
			continue;
		}
		out->nodes[i] = 'm';
		missing++;
	}
	/* A partial matrix differs from node to node: no network from it, for anyone. */
	if (missing) {
		snprintf(out->reason, sizeof(out->reason),
			 "no row from %zu of %zu nodes by the deadline: the job's evidence is "
			 "incomplete",
			 missing, n);
		return 0;
	}
	r = npf_job_rows_merge(rows, n, &m);
	if (r == -ENOMEM)
		goto nomem;
	if (r < 0) {
		snprintf(out->reason, sizeof(out->reason), "the rows do not describe one job (%s)",
			 strerror(-r));
		return 0;
	}
	names = malloc(n * sizeof(*names));
	if (!names) {
		npf_job_matrix_clear(&m);
		goto nomem;
	}
	for (size_t i = 0; i < n; i++)
		names[i] = rows[i]->node;
	in = npf_job_matrix_input(&m, degrade);
	in.names = names;
	/* A job start's last try (issue 18): one row saying so settles it, for everyone. */
	for (size_t i = 0; i < n; i++)
		in.settle = in.settle || rows[i]->settle;
	r = npf_job_decide(&in, &d);
	free(names);
	if (r < 0) {
		npf_job_matrix_clear(&m);
		goto nomem;
	}
	out->verdict = (uint8_t)d.verdict;
	if (d.net >= 0)
		snprintf(out->net, sizeof(out->net), "%s", m.keys[d.net]);
	if (d.best >= 0)
		snprintf(out->best, sizeof(out->best), "%s", m.keys[d.best]);
	for (size_t i = 0; i < n; i++)
		if (d.suspect[i])
			out->nodes[i] = 's';
	/* The reason: the decision's line, then each suspect with its own evidence on the
	 * network it breaks. Names are the rows' own (every row is here). */
	off = (size_t)snprintf(out->reason, sizeof(out->reason), "%s", d.reason);
	for (size_t i = 0; i < n && d.best >= 0 && off < sizeof(out->reason); i++) {
		size_t k = (size_t)(d.net >= 0 ? d.net : d.best);

		if (!d.suspect[i])
			continue;
		if (d.why[i] == NPF_BLAME_CORROBORATED)
			off += (size_t)snprintf(out->reason + off, sizeof(out->reason) - off,
						"; %s fails %s with %s and another peer that works "
						"with it (its own row)",
						rows[i]->node, m.keys[k],
						first_fail_peer(&m, k, i, rows));
		else
			off += (size_t)snprintf(out->reason + off, sizeof(out->reason) - off,
						"; %s on %s: %s", rows[i]->node, m.keys[k],
						npf_job_blame_text((enum npf_job_blame)d.why[i]));
	}
	npf_job_decision_clear(&d);
	npf_job_matrix_clear(&m);
	return 0;
nomem:
	npf_wire_job_decision_clear(out);
	return -ENOMEM;
}

enum npf_job_role npf_job_role_of(const struct npf_msg_job_decision *d, size_t self)
{
	bool suspect = d && d->nodes && self < d->n_nodes && d->nodes[self] == 's';

	if (!d || !d->nodes || self >= d->n_nodes)
		return NPF_JOB_ROLE_UNKNOWN;
	switch ((enum npf_job_verdict)d->verdict) {
	case NPF_JOB_OK:
		return suspect ? NPF_JOB_ROLE_SUSPECT : NPF_JOB_ROLE_OK;
	case NPF_JOB_DEGRADED:
		return NPF_JOB_ROLE_DEGRADED;
	case NPF_JOB_FAIL:
		return suspect ? NPF_JOB_ROLE_SUSPECT : NPF_JOB_ROLE_FAIL;
	case NPF_JOB_UNKNOWN:
		break;
	}
	return NPF_JOB_ROLE_UNKNOWN;
}

int npf_job_answer(const struct npf_msg_row *const *rows, const char *const *hostlist, size_t n,
		   size_t self, bool degrade, struct npf_job_answer *out)
{
	struct npf_msg_job_decision d;
	int r;

	if (!out || !rows || !hostlist || self >= n)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->role = NPF_JOB_ROLE_UNKNOWN;
	r = npf_job_round_decide(rows, n, degrade, &d);
	if (r < 0)
		return r;
	out->role = npf_job_role_of(&d, self);
	snprintf(out->net, sizeof(out->net), "%s", d.net);
	for (size_t i = 0; i < n; i++) {
		if (d.nodes[i] == 's')
			out->n_suspects++;
		/* The first missing row by name: the coordinator has no names for it. */
		if (d.nodes[i] == 'm' && !out->reason[0])
			snprintf(out->reason, sizeof(out->reason),
				 "no row from %s: the job's evidence is incomplete", hostlist[i]);
	}
	if (!out->reason[0])
		snprintf(out->reason, sizeof(out->reason), "%s", d.reason);
	npf_wire_job_decision_clear(&d);
	return 0;
}
