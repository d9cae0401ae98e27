// SPDX-License-Identifier: MIT
/* Rows of a job check -> the job's pair-state matrix (one merge rule, symmetric). */
#include "jobrows.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

int npf_job_id(const char *const *names, size_t n, char out[NPF_WIRE_JOB_ID_LEN + 1])
{
	crypto_generichash_state st;
	uint8_t h[NPF_WIRE_JOB_ID_LEN / 2];
	static const char tag[] = "npf-job-v1";

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
	crypto_generichash_final(&st, h, sizeof(h));
	sodium_bin2hex(out, NPF_WIRE_JOB_ID_LEN + 1, h, sizeof(h));
	return 0;
}

void npf_job_matrix_clear(struct npf_job_matrix *m)
{
	free(m->keys);
	free(m->nets);
	free(m->pairs);
	memset(m, 0, sizeof(*m));
}

/* Node i's view of its pair with j on network key: '-', 'o', 'u' or 'f'. */
static char view(const struct npf_msg_row *r, const char *key, size_t j)
{
	for (size_t k = 0; k < r->n_nets; k++)
		if (strcmp(r->nets[k].key, key) == 0)
			return r->nets[k].states[j];
	return 'f'; /* no address there: the node cannot use the network */
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

static int net_cmp(const void *pa, const void *pb)
{
	const struct npf_row_net *a = *(const struct npf_row_net *const *)pa;
	const struct npf_row_net *b = *(const struct npf_row_net *const *)pb;

	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* The distinct networks of all rows into u[] (borrowed from the rows), each with the
 * lowest (rank, quality) any row gives it. Returns the count or -EPROTO (too many). */
static int collect(const struct npf_msg_row *const *rows, size_t n, const struct npf_row_net **u)
{
	size_t nu = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < rows[i]->n_nets; k++) {
			const struct npf_row_net *x = &rows[i]->nets[k];
			size_t q = 0;

			for (; q < nu; q++)
				if (strcmp(u[q]->key, x->key) == 0)
					break;
			if (q < nu) {
				/* One network, one place in the order: two views of it (a sparse
				 * plan shows each node other members) are combined by the lower
				 * key, the same whatever order the rows came in. */
				if (x->rank < u[q]->rank ||
				    (x->rank == u[q]->rank && x->quality < u[q]->quality))
					u[q] = x;
				continue;
			}
			if (nu == NPF_WIRE_MAX_ROW_NETS)
				return -EPROTO;
			u[nu++] = x;
		}
	qsort(u, nu, sizeof(*u), net_cmp);
	return (int)nu;
}

int npf_job_rows_merge(const struct npf_msg_row *const *rows, size_t n, struct npf_job_matrix *m)
{
	const struct npf_row_net *u[NPF_WIRE_MAX_ROW_NETS];
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
	if (!m->keys || !m->nets || !m->pairs) {
		npf_job_matrix_clear(m);
		return -ENOMEM;
	}
	for (size_t k = 0; k < (size_t)nu; k++) {
		memcpy(m->keys[k], u[k]->key, sizeof(m->keys[k]));
		m->nets[k].name = m->keys[k];
		m->nets[k].quality = u[k]->quality;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++)
				if (i != j)
					m->pairs[k * n * n + i * n + j] =
					    merge(view(rows[i], u[k]->key, j),
						  view(rows[j], u[k]->key, i));
	}
	return 0;
}
