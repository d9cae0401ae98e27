// SPDX-License-Identifier: MIT
/* coord: the job coordinator's own cost for a large job (issue 20: "a coordinator fed 1024
 * recorded rows"), without the network. It writes N rows as the wire carries them (the JSON
 * of message ROW, one per node, a sparse plan: each node paired with its k nearest nodes
 * on a ring, both ways, as lib/plan's symmetric plan pairs them) and then does exactly
 * what the coordinator's daemon does with them (daemon/jobround.c): decode every row,
 * merge and decide (npf_job_round_decide), encode the one JOB_DECISION. Time and memory
 * are measured around that work alone: wall and CPU from the clock, the memory as the
 * growth of the peak resident set over the input's (VmHWM after /proc/self/clear_refs).
 *
 * Usage: coord [--nodes N] [--nets K] [--sparse-k K] [--dead I] [--rounds R]
 * Prints one JSON object per round and a summary object (bench/run collects them). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "jobcheck.h"
#include "jobrows.h"
#include "wire.h"

static double now_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* "VmHWM:" or "VmRSS:" of this process, KiB; -1 when /proc cannot say. */
static long status_kib(const char *field)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, strlen(field)) == 0)
			v = strtol(line + strlen(field), NULL, 10);
	fclose(f);
	return v;
}

/* Resets the peak resident set to the current one (Linux 4.0+); 0 or -errno. */
static int reset_hwm(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	int r = 0;

	if (!f)
		return -errno;
	if (fputs("5", f) < 0)
		r = -EIO;
	if (fclose(f) != 0)
		r = -errno;
	return r;
}

/* Ring distance between nodes a and b of n. */
static size_t ring_dist(size_t a, size_t b, size_t n)
{
	size_t d = a > b ? a - b : b - a;

	return d < n - d ? d : n - d;
}

/* Node i's row as the JSON text the wire carries. Network 0 is the fabric (RDMA, the best
 * quality), the others slower networks. Pairs within k/2 ring steps are probed ('o', or
 * 'f' with the dead node on the fabric), the rest are outside the plan ('-'). Returned
 * string owned by the caller (free). */
static char *row_text(size_t i, size_t n, size_t nets, size_t k, long dead)
{
	struct npf_msg_row row;
	json_t *j;
	char *s;

	memset(&row, 0, sizeof(row));
	snprintf(row.job, sizeof(row.job), "%032x", 0x5eed);
	snprintf(row.node, sizeof(row.node), "gpu%04zu", i + 1);
	row.instance = 1000 + i;
	row.index = (uint32_t)i;
	row.n_nodes = (uint32_t)n;
	row.wait_ms = 30000;
	row.n_nets = nets;
	for (size_t net = 0; net < nets; net++) {
		struct npf_row_net *x = &row.nets[net];

		snprintf(x->key, sizeof(x->key), "198.%u.0.0/16", (unsigned)(18 + net));
		x->rank = (int64_t)(nets - net) * 1000;
		x->quality = (int64_t)(nets - net) * 1000;
		x->states = malloc(n + 1);
		if (!x->states)
			return NULL;
		for (size_t p = 0; p < n; p++) {
			char c = '-';

			if (p == i)
				c = '.';
			else if (ring_dist(i, p, n) <= k / 2)
				c = (net == 0 && (long)p == dead) || (net == 0 && (long)i == dead) ? 'f' : 'o';
			x->states[p] = c;
		}
		x->states[n] = '\0';
	}
	j = npf_wire_row_to_json(&row);
	npf_wire_row_clear(&row);
	if (!j)
		return NULL;
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return s;
}

static size_t count_suspects(const struct npf_msg_job_decision *d)
{
	size_t c = 0;

	for (const char *p = d->nodes; p && *p; p++)
		c += *p == 's';
	return c;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'n' }, { "nets", required_argument, NULL, 'e' },
		{ "sparse-k", required_argument, NULL, 'k' }, { "dead", required_argument, NULL, 'd' },
		{ "rounds", required_argument, NULL, 'r' }, { NULL, 0, NULL, 0 },
	};
	size_t n = 1024, nets = 2, k = 4, rounds = 5;
	long dead = -1;
	double best_wall = 1e18, sum_wall = 0, best_decide = 1e18;
	long worst_kib = 0;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': n = strtoul(optarg, NULL, 10); break;
		case 'e': nets = strtoul(optarg, NULL, 10); break;
		case 'k': k = strtoul(optarg, NULL, 10); break;
		case 'd': dead = strtol(optarg, NULL, 10) - 1; break; /* 1-based on the line */
		case 'r': rounds = strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: coord [--nodes N] [--nets K] [--sparse-k K] "
					"[--dead I] [--rounds R]\n");
			return 2;
		}
	}
	if (n < 2 || n > NPF_WIRE_MAX_ROW_NODES || nets < 1 || nets > NPF_WIRE_MAX_ROW_NETS ||
	    k < 2 || rounds < 1) {
		fprintf(stderr, "coord: nodes 2..%u, nets 1..%u, sparse-k >= 2, rounds >= 1\n",
			NPF_WIRE_MAX_ROW_NODES, NPF_WIRE_MAX_ROW_NETS);
		return 2;
	}

	char **text = calloc(n, sizeof(*text));
	size_t in_bytes = 0;

	if (!text)
		return 1;
	for (size_t i = 0; i < n; i++) {
		text[i] = row_text(i, n, nets, k, dead);
		if (!text[i]) {
			fprintf(stderr, "coord: out of memory building row %zu\n", i);
			return 1;
		}
		in_bytes += strlen(text[i]);
	}

	for (size_t round = 0; round < rounds; round++) {
		struct npf_msg_row *rows = calloc(n, sizeof(*rows));
		const struct npf_msg_row **rp = calloc(n, sizeof(*rp));
		struct npf_msg_job_decision d;
		long base_kib, peak_kib;
		double w0, c0, w1, wall, cpu;
		size_t out_bytes = 0;
		char *out = NULL;
		int r = 0;

		if (!rows || !rp)
			return 1;
		base_kib = status_kib("VmRSS:");
		if (reset_hwm() < 0)
			base_kib = -1;
		w0 = now_ms(CLOCK_MONOTONIC);
		c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
		/* The coordinator's work: decode each ROW as it arrives, decide once, encode. */
		for (size_t i = 0; i < n && r == 0; i++) {
			json_error_t e;
			json_t *j = json_loads(text[i], 0, &e);

			r = j ? npf_wire_row_from_json(j, &rows[i]) : -EBADMSG;
			json_decref(j);
			rp[i] = &rows[i];
		}
		/* In the daemon the rows are decoded as they arrive, over the whole wait; what
		 * the last row delays is the merge, the decision and its encoding (decide_ms). */
		w1 = now_ms(CLOCK_MONOTONIC);
		if (r == 0)
			r = npf_job_round_decide(rp, n, false, &d);
		if (r == 0) {
			json_t *j = npf_wire_job_decision_to_json(&d);

			out = j ? json_dumps(j, JSON_COMPACT) : NULL;
			json_decref(j);
			out_bytes = out ? strlen(out) : 0;
		}
		wall = now_ms(CLOCK_MONOTONIC) - w0;
		cpu = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		peak_kib = status_kib("VmHWM:");
		if (r < 0) {
			fprintf(stderr, "coord: round %zu: %s\n", round + 1, strerror(-r));
			return 1;
		}
		printf("{\"round\":%zu,\"nodes\":%zu,\"nets\":%zu,\"sparse_k\":%zu,\"dead\":%ld,"
		       "\"verdict\":\"%s\",\"net\":\"%s\",\"suspects\":%zu,\"wall_ms\":%.2f,"
		       "\"cpu_ms\":%.2f,\"decode_ms\":%.2f,\"decide_ms\":%.2f,\"rows_bytes\":%zu,"
		       "\"decision_bytes\":%zu,\"mem_kib\":%ld}\n",
		       round + 1, n, nets, k, dead + 1, npf_job_verdict_name(d.verdict), d.net,
		       count_suspects(&d), wall, cpu, w1 - w0, wall - (w1 - w0),
		       in_bytes, out_bytes,
		       base_kib >= 0 && peak_kib >= 0 ? peak_kib - base_kib : -1L);
		if (wall < best_wall)
			best_wall = wall;
		if (wall - (w1 - w0) < best_decide)
			best_decide = wall - (w1 - w0);
		sum_wall += wall;
		if (base_kib >= 0 && peak_kib - base_kib > worst_kib)
			worst_kib = peak_kib - base_kib;
		free(out);
		npf_wire_job_decision_clear(&d);
		for (size_t i = 0; i < n; i++)
			npf_wire_row_clear(&rows[i]);
		free(rows);
		free(rp);
	}
	printf("{\"summary\":true,\"nodes\":%zu,\"rounds\":%zu,\"best_wall_ms\":%.2f,"
	       "\"mean_wall_ms\":%.2f,\"best_decide_ms\":%.2f,\"worst_mem_kib\":%ld}\n",
	       n, rounds, best_wall, sum_wall / rounds, best_decide, worst_kib);
	for (size_t i = 0; i < n; i++)
		free(text[i]);
	free(text);
	return 0;
}
