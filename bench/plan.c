// SPDX-License-Identifier: MIT
/* plan: the probe plan of every node of a job, as the daemons compute it (issue 20). Each
 * node's peers come from npf_plan_peers() over the job's other distinct names, exactly as
 * probe/check.c calls it, so bench/run can drive bench/mesh and the nc mesh over the paths
 * a sparse plan probes without re-implementing the ring.
 *
 * Input (stdin): the job's node names, one per line (the expanded hostlist).
 * Usage: plan [--full-mesh-max M] [--sparse-k K]   (the daemon's defaults: 64 and 4)
 * Output: one line "NODE PEER" per planned peer of each node (each directed pair once; the
 * plan is symmetric, so both directions of every probed pair appear). Exit 0, 2 on bad input
 * or arguments, 1 when the plan could not be computed. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

#define MAX_NODES 65536
#define NAME_MAX_LEN 64

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* One node's planned peers, printed. Same call sequence as the probe engine: the distinct
 * names other than self, then the plan over those. */
static int print_plan(const char *self, const char *const *all, size_t n, uint32_t full_mesh_max,
		      uint32_t k)
{
	size_t *distinct = NULL, *plan = NULL, n_distinct = 0, n_plan = 0;
	const char **names;
	int r;

	r = npf_plan_distinct(self, all, n, &distinct, &n_distinct);
	if (r < 0)
		return r;
	names = calloc(n_distinct + 1, sizeof(*names));
	if (!names) {
		free(distinct);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_distinct; i++)
		names[i] = all[distinct[i]];
	r = npf_plan_peers(self, names, n_distinct, full_mesh_max, k, &plan,
			   &n_plan);
	for (size_t i = 0; r >= 0 && i < n_plan; i++)
		printf("%s %s\n", self, names[plan[i]]);
	free(plan);
	free(names);
	free(distinct);
	return r < 0 ? r : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "full-mesh-max", required_argument, NULL, 'm' },
		{ "sparse-k", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t full_mesh_max = 64, k = 4;
	char line[256], **buf;
	size_t n = 0, *selves = NULL, n_selves = 0;
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((c == 'm' && parse_u32(optarg, 0, UINT32_MAX, &full_mesh_max) == 0) ||
		    (c == 'k' && parse_u32(optarg, 1, 1024, &k) == 0))
			continue;
		fprintf(stderr, "usage: plan [--full-mesh-max M] [--sparse-k K] < node names\n");
		return 2;
	}
	buf = calloc(MAX_NODES, sizeof(*buf));
	if (!buf)
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		size_t len = strcspn(line, " \t\r\n");

		if (len == 0)
			continue;
		if (len >= NAME_MAX_LEN || n == MAX_NODES) {
			fprintf(stderr, "plan: name too long or more than %d names\n", MAX_NODES);
			r = 2;
			break;
		}
		buf[n] = strndup(line, len);
		if (!buf[n]) {
			r = 1;
			break;
		}
		n++;
	}
	/* Each distinct name once: a repeated line is the same node. */
	if (r == 0 && npf_plan_distinct(NULL, (const char *const *)buf, n, &selves, &n_selves) < 0)
		r = 1;
	for (size_t i = 0; r == 0 && i < n_selves; i++) {
		const char *self = buf[selves[i]];
		int e = print_plan(self, (const char *const *)buf, n, full_mesh_max, k);

		if (e < 0) {
			fprintf(stderr, "plan: %s: %s\n", self, strerror(-e));
			r = 1;
		}
	}
	free(selves);
	for (size_t i = 0; i < n; i++)
		free(buf[i]);
	free(buf);
	return r;
}
