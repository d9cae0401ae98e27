// SPDX-License-Identifier: MIT
/* Unit tests for the probe plan (lib/plan): full mesh, sparse symmetric coverage, bounds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npf_test.h"

#include "plan.h"

static char **names(size_t n)
{
	char **v = calloc(n, sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < n; i++) {
		v[i] = malloc(16);
		assert_non_null(v[i]);
		snprintf(v[i], 16, "gpu%04zu", i + 1);
	}
	return v;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void test_full_mesh(void **state)
{
	const char *const nodes[] = { "n1", "n2", "n3", "n2", "", "n4" };
	size_t *idx = NULL, n = 0;

	(void)state;
	assert_int_equal(npf_plan_count_peers("n1", nodes, 6), 3);
	assert_int_equal(npf_plan_peers("n1", nodes, 6, 64, 3, &idx, &n), 3);
	assert_int_equal(n, 3);
	assert_int_equal(idx[0], 1);
	assert_int_equal(idx[1], 2);
	assert_int_equal(idx[2], 5);
	free(idx);
	/* self not listed */
	assert_int_equal(npf_plan_peers("x", nodes, 6, 4, 3, &idx, &n), 4);
	free(idx);
	/* alone */
	assert_int_equal(npf_plan_peers("n1", nodes, 1, 64, 3, &idx, &n), 0);
	assert_null(idx);
	assert_int_equal(npf_plan_peers(NULL, nodes, 6, 64, 3, &idx, &n), -EINVAL);
	assert_int_equal(npf_plan_peers("", nodes, 6, 64, 3, &idx, &n), -EINVAL);
	assert_int_equal(npf_plan_peers("n1", NULL, 6, 64, 3, &idx, &n), -EINVAL);
}

/* Checks, for m nodes with the given k, the properties docs/protocol.md promises. */
static void check_sparse(size_t m, uint32_t k)
{
	char **v = names(m);
	bool *adj = calloc(m * m, sizeof(*adj));
	size_t *deg_in = calloc(m, sizeof(*deg_in));
	size_t *queue = calloc(m, sizeof(*queue));
	bool *seen = calloc(m, sizeof(*seen));
	size_t head = 0, tail = 0;

	assert_non_null(adj);
	assert_non_null(deg_in);
	assert_non_null(queue);
	assert_non_null(seen);
	for (size_t a = 0; a < m; a++) {
		size_t *idx = NULL, n = 0;
		int r = npf_plan_peers(v[a], (const char *const *)v, m, 8, k, &idx, &n);

		assert_true(r >= 0);
		/* per-node work O(k): ring neighbours + k offsets, both directions */
		assert_true(n <= 2 * (size_t)k + 2);
		assert_true(n >= (m >= 3 ? 2 : 1));
		for (size_t i = 0; i < n; i++) {
			assert_true(idx[i] < m);
			assert_true(idx[i] != a);
			if (i)
				assert_true(idx[i] > idx[i - 1]);
			adj[a * m + idx[i]] = true;
			deg_in[idx[i]]++;
		}
		free(idx);
	}
	for (size_t a = 0; a < m; a++) {
		/* symmetric: a probes b iff b probes a */
		for (size_t b = 0; b < m; b++)
			assert_int_equal(adj[a * m + b], adj[b * m + a]);
		/* covered from >= 2 distinct nodes, and in-degree bounded too */
		assert_true(deg_in[a] >= 2);
		assert_true(deg_in[a] <= 2 * (size_t)k + 2);
	}
	/* connected */
	seen[0] = true;
	queue[tail++] = 0;
	while (head < tail) {
		size_t a = queue[head++];

		for (size_t b = 0; b < m; b++) {
			if (adj[a * m + b] && !seen[b]) {
				seen[b] = true;
				queue[tail++] = b;
			}
		}
	}
	assert_int_equal(tail, m);
	free(adj);
	free(deg_in);
	free(queue);
	free(seen);
	free_names(v, m);
}

static void test_sparse(void **state)
{
	(void)state;
	check_sparse(11, 0); /* ring only */
	check_sparse(10, 3);
	check_sparse(65, 3);
	check_sparse(100, 1);
	check_sparse(257, 4);
	check_sparse(1000, 3);
	check_sparse(12, 50); /* k larger than there are offsets */
}

/* The same set in another order (another node's hostlist spelling) gives the same plan. */
static void test_deterministic(void **state)
{
	size_t m = 200;
	char **v = names(m);
	const char **rev = calloc(m, sizeof(*rev));
	size_t *a = NULL, *b = NULL, na, nb;

	(void)state;
	assert_non_null(rev);
	for (size_t i = 0; i < m; i++)
		rev[i] = v[m - 1 - i];
	for (size_t self = 0; self < m; self += 37) {
		assert_true(npf_plan_peers(v[self], (const char *const *)v, m, 64, 3, &a, &na) > 0);
		assert_true(npf_plan_peers(v[self], rev, m, 64, 3, &b, &nb) > 0);
		assert_int_equal(na, nb);
		for (size_t i = 0; i < na; i++) {
			bool found = false;

			for (size_t j = 0; j < nb; j++)
				if (strcmp(v[a[i]], rev[b[j]]) == 0)
					found = true;
			assert_true(found);
		}
		free(a);
		free(b);
	}
	free(rev);
	free_names(v, m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_mesh),
		cmocka_unit_test(test_sparse),
		cmocka_unit_test(test_deterministic),
	};

	return npf_run_tests(tests, NULL, NULL);
}
