// SPDX-License-Identifier: MIT
/* Probe plan: full mesh when small, symmetric ring + hashed offsets when large. */
#include "plan.h"

#include <errno.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A fixed key: the order must be the same on every node, not secret. */
static const uint8_t plan_key[crypto_shorthash_KEYBYTES] = "netpreflight-pl";

struct ring_ent {
	const char *name;
	size_t idx; /* into nodes[], SIZE_MAX for a self that is not listed */
	uint64_t key;
};

static uint64_t name_key(const char *name)
{
	uint8_t h[crypto_shorthash_BYTES];
	uint64_t v = 0;

	crypto_shorthash(h, (const unsigned char *)name, strlen(name), plan_key);
	for (size_t i = 0; i < sizeof(h); i++)
		v = v << 8 | h[i];
	return v;
}

static int ring_cmp(const void *a, const void *b)
{
	const struct ring_ent *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return strcmp(x->name, y->name);
}

struct name_ent {
	const char *name;
	size_t idx;
};

static int by_name_idx(const void *a, const void *b)
{
	const struct name_ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int idx_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorting instead of pairwise comparison: hostlists of 10k nodes stay cheap. */
int npf_plan_distinct(const char *self, const char *const *nodes, size_t n, size_t **idx_out,
		      size_t *n_out)
{
	struct name_ent *e;
	size_t *out, m = 0, k = 0;

	if (!idx_out || !n_out || (n && !nodes))
		return -EINVAL;
	*idx_out = NULL;
	*n_out = 0;
	e = calloc(n + 1, sizeof(*e));
	out = calloc(n + 1, sizeof(*out));
	if (!e || !out) {
		free(e);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (!nodes[i] || !*nodes[i] || (self && strcmp(nodes[i], self) == 0))
			continue;
		e[m++] = (struct name_ent){ .name = nodes[i], .idx = i };
	}
	qsort(e, m, sizeof(*e), by_name_idx);
	for (size_t i = 0; i < m; i++)
		if (i == 0 || strcmp(e[i].name, e[i - 1].name) != 0)
			out[k++] = e[i].idx;
	free(e);
	qsort(out, k, sizeof(*out), idx_cmp);
	*idx_out = out;
	*n_out = k;
	return (int)k;
}

size_t npf_plan_count_peers(const char *self, const char *const *nodes, size_t n)
{
	size_t *idx = NULL, k = 0;

	if (npf_plan_distinct(self, nodes, n, &idx, &k) < 0)
		return 0;
	free(idx);
	return k;
}

/* Offset j in [2, m/2]: from a hash of (m, j, attempt) so that every node with
 * the same peer count agrees, and distinct so that no edge is counted twice. */
static size_t pick_offsets(size_t m, uint32_t k, size_t *offs)
{
	size_t avail = m / 2 >= 2 ? m / 2 - 1 : 0; /* candidates 2..m/2 */
	size_t n = 0;

	if (k > avail)
		k = (uint32_t)avail;
	for (uint32_t j = 0; n < k; j++) {
		uint8_t in[16], h[crypto_shorthash_BYTES];
		uint64_t v = 0;
		size_t d;
		bool dup = false;

		/* Explicit byte order: nodes of any architecture must agree. */
		for (int i = 0; i < 8; i++)
			in[i] = (uint8_t)((uint64_t)m >> (56 - 8 * i));
		for (int i = 0; i < 4; i++)
			in[8 + i] = (uint8_t)(j >> (24 - 8 * i));
		memset(in + 12, 0, 4);
		crypto_shorthash(h, in, sizeof(in), plan_key);
		for (size_t i = 0; i < sizeof(h); i++)
			v = v << 8 | h[i];
		d = 2 + (size_t)(v % avail);
		/* Linear probing keeps the loop bounded: at most avail steps per offset. */
		for (size_t step = 0; step < avail; step++) {
			dup = false;
			for (size_t i = 0; i < n; i++)
				if (offs[i] == d)
					dup = true;
			if (!dup)
				break;
			d = d + 1 > m / 2 ? 2 : d + 1;
		}
		if (dup)
			break;
		offs[n++] = d;
	}
	return n;
}

int npf_plan_peers(const char *self, const char *const *nodes, size_t n, uint32_t full_mesh_max,
		   uint32_t k, size_t **idx_out, size_t *n_out)
{
	struct ring_ent *ring = NULL;
	size_t *out = NULL, *offs = NULL, *peer_idx = NULL;
	size_t m = 0, n_sel = 0, pos = 0, n_offs, peers = 0;
	int r;

	if (!self || !*self || (n && !nodes) || !idx_out || !n_out)
		return -EINVAL;
	if (sodium_init() < 0)
		return -EIO;
	*idx_out = NULL;
	*n_out = 0;
	r = npf_plan_distinct(self, nodes, n, &peer_idx, &peers);
	if (r < 0)
		return r;
	if (peers == 0) {
		free(peer_idx);
		return 0;
	}
	if (peers <= full_mesh_max) {
		*idx_out = peer_idx;
		*n_out = peers;
		return (int)peers;
	}
	r = -ENOMEM;
	out = calloc(peers, sizeof(*out));
	ring = calloc(peers + 1, sizeof(*ring));
	offs = calloc((size_t)k + 1, sizeof(*offs));
	if (!out || !ring || !offs)
		goto err;
	ring[m++] = (struct ring_ent){ .name = self, .idx = SIZE_MAX, .key = name_key(self) };
	for (size_t i = 0; i < peers; i++)
		ring[m++] = (struct ring_ent){ .name = nodes[peer_idx[i]], .idx = peer_idx[i],
					       .key = name_key(nodes[peer_idx[i]]) };
	qsort(ring, m, sizeof(*ring), ring_cmp);
	for (size_t i = 0; i < m; i++)
		if (ring[i].idx == SIZE_MAX)
			pos = i;
	offs[0] = 1;
	n_offs = 1 + pick_offsets(m, k, offs + 1);
	/* At most 2 * (k + 1) picks: a linear duplicate check is cheap. */
	for (size_t o = 0; o < n_offs; o++) {
		size_t cand[2] = { (pos + offs[o]) % m, (pos + m - offs[o]) % m };

		for (int s = 0; s < 2; s++) {
			size_t idx = ring[cand[s]].idx;
			bool dup = false;

			if (idx == SIZE_MAX)
				continue;
			for (size_t i = 0; i < n_sel; i++)
				if (out[i] == idx)
					dup = true;
			if (!dup)
				out[n_sel++] = idx;
		}
	}
	qsort(out, n_sel, sizeof(*out), idx_cmp);
	free(ring);
	free(offs);
	free(peer_idx);
	*idx_out = out;
	*n_out = n_sel;
	return (int)n_sel;
err:
	free(ring);
	free(offs);
	free(out);
	free(peer_idx);
	return r;
}
