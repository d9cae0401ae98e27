// SPDX-License-Identifier: MIT
/* netpreflight check: ask the local daemon to probe a job's nodes, print the matrix, the
 * recommendation (with NCCL's default pick and the rejected interfaces) and the verdict. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "cli.h"
#include "client.h"
#include "hostlist.h"
#include "verdict.h"

#define DEFAULT_WAIT_MS 60000 /* daemon default timeout unknown here: its maximum */
#define WAIT_SLACK_MS 10000

static const struct npf_link *find_link(const struct npf_check *c, const char *ifname, int peer)
{
	for (size_t i = 0; i < c->n_links; i++)
		if (c->links[i].peer == peer && strcmp(c->links[i].ifname, ifname) == 0)
			return &c->links[i];
	return NULL;
}

static void fmt_dir(char *buf, size_t len, enum npf_outcome o, uint32_t rtt_us)
{
	if (o == NPF_OUT_OK && rtt_us)
		snprintf(buf, len, "ok %.1fms", rtt_us / 1000.0);
	else
		snprintf(buf, len, "%s", npf_outcome_name(o));
}

static void fmt_cell(char *buf, size_t len, const struct npf_check *c, const char *ifname, int peer)
{
	const struct npf_link *l = find_link(c, ifname, peer);
	char f[32], r[32];

	if (!c->nodes[peer].available) {
		snprintf(buf, len, "peer-unavailable");
		return;
	}
	if (!l) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_dir(f, sizeof(f), l->fwd, l->fwd_rtt_us);
	fmt_dir(r, sizeof(r), l->rev, l->rev_rtt_us);
	snprintf(buf, len, "%s/%s", f, r);
}

static void print_matrix(const struct npf_check *c, const struct npf_verdict_report *rep)
{
	size_t w0 = strlen("INTERFACE"), *w;
	char cell[80];

	printf("%s: %zu peer%s checked in %u ms (timeout %u ms)%s\n", c->nodes[0].name,
	       c->n_nodes - 1, c->n_nodes == 2 ? "" : "s", c->duration_ms, c->timeout_ms,
	       c->sparse ? ", sparse plan" : "");
	/* Load-shaped failures became missing evidence: say so, with the measure. */
	if (c->n_inconclusive || c->n_retried)
		printf("load: %u path%s inconclusive, %u retried, our loop up to %u ms late\n",
		       c->n_inconclusive, c->n_inconclusive == 1 ? "" : "s", c->n_retried,
		       c->loop_late_max_us / 1000);
	w = calloc(c->n_nodes, sizeof(*w));
	if (!w)
		return;
	for (size_t i = 0; i < rep->n_ifaces; i++)
		if (strlen(rep->ifaces[i].ifname) > w0)
			w0 = strlen(rep->ifaces[i].ifname);
	for (size_t p = 1; p < c->n_nodes; p++) {
		w[p] = strlen(c->nodes[p].name);
		for (size_t i = 0; i < rep->n_ifaces; i++) {
			fmt_cell(cell, sizeof(cell), c, rep->ifaces[i].ifname, (int)p);
			if (strlen(cell) > w[p])
				w[p] = strlen(cell);
		}
	}
	/* The last column is not padded: no trailing blanks. */
	printf("%-*s", (int)w0, "INTERFACE");
	for (size_t p = 1; p < c->n_nodes; p++)
		printf("  %-*s", p + 1 < c->n_nodes ? (int)w[p] : 0, c->nodes[p].name);
	printf("\n");
	for (size_t i = 0; i < rep->n_ifaces; i++) {
		printf("%-*s", c->n_nodes > 1 ? (int)w0 : 0, rep->ifaces[i].ifname);
		for (size_t p = 1; p < c->n_nodes; p++) {
			fmt_cell(cell, sizeof(cell), c, rep->ifaces[i].ifname, (int)p);
			printf("  %-*s", p + 1 < c->n_nodes ? (int)w[p] : 0, cell);
		}
		printf("\n");
	}
	printf("(cells: forward/reverse outcome and connect RTT)\n");
	free(w);
}

/* Details carry text a peer chose (its ERROR messages, its reverse results):
 * every control byte, newlines included, is shown as '?' so a peer cannot
 * move the cursor, recolour the terminal or forge a line. */
static void put_peer_text(const char *s)
{
	for (; s && *s; s++)
		putchar((unsigned char)*s < ' ' || (unsigned char)*s >= 0x7f ? '?' : *s);
}

static void put_paren(const char *pre, const char *s)
{
	fputs(pre, stdout);
	if (s[0]) {
		fputs(" (", stdout);
		put_peer_text(s);
		fputs(")", stdout);
	}
}

/* Why each failing cell failed, from the probe details. */
static void print_details(const struct npf_check *c)
{
	bool head = false;

	for (size_t p = 1; p < c->n_nodes; p++) {
		if (c->nodes[p].available)
			continue;
		if (!head)
			printf("failures:\n");
		head = true;
		printf("  ");
		put_peer_text(c->nodes[p].name);
		printf(": peer-unavailable%s", c->nodes[p].error[0] ? ": " : "");
		put_peer_text(c->nodes[p].error);
		printf("\n");
	}
	for (size_t i = 0; i < c->n_links; i++) {
		const struct npf_link *l = &c->links[i];

		if ((l->fwd == NPF_OUT_OK && l->rev == NPF_OUT_OK) || l->peer <= 0 ||
		    (size_t)l->peer >= c->n_nodes || !c->nodes[l->peer].available)
			continue;
		if (!head)
			printf("failures:\n");
		head = true;
		printf("  ");
		put_peer_text(l->ifname);
		printf(" -> ");
		put_peer_text(c->nodes[l->peer].name);
		printf(":");
		if (l->fwd != NPF_OUT_OK) {
			printf(" fwd ");
			put_paren(npf_outcome_name(l->fwd), l->fwd_detail);
		}
		if (l->rev != NPF_OUT_OK) {
			printf("%s rev ", l->fwd != NPF_OUT_OK ? ";" : "");
			put_paren(npf_outcome_name(l->rev), l->rev_detail);
		}
		printf("\n");
	}
}

int cli_check_request(const char *nodes, uint32_t timeout_ms, uint32_t max_timeout_ms,
		      const char *job, bool settle, json_t **out, size_t *n_nodes)
{
	struct npf_api_request req = { .type = NPF_API_REQ_CHECK,
				       .timeout_ms = timeout_ms,
				       .max_timeout_ms = max_timeout_ms,
				       .settle = settle };
	int r;

	if (job && cli_set_job(job, &req) < 0)
		return -EINVAL;
	if (!job && settle) {
		cli_err("--settle needs --job");
		return -EINVAL;
	}
	r = cli_hostlist_peers(nodes, &req);
	if (r < 0)
		return r;
	*n_nodes = req.n_peers;
	*out = npf_api_request_to_json(&req);
	npf_api_request_clear(&req);
	return *out ? 0 : -ENOMEM;
}

int cli_check_wait_ms(uint32_t timeout_ms, uint32_t max_timeout_ms, bool job)
{
	uint32_t budget = timeout_ms ? timeout_ms : max_timeout_ms ? max_timeout_ms : DEFAULT_WAIT_MS;

	/* A job check waits for the others' rows after its own probes: up to its budget
	 * again (docs/decision.md §10). */
	return (int)(budget + WAIT_SLACK_MS) * (job ? 2 : 1);
}

/* One line for a job check (docs/json.md "job"): who decided, from how many rows, and what,
 * e.g. "job 1234 (node1, 4/4 rows): ok on 198.18.1.0/24, suspects node4; this node: ok". */
static void print_job(const json_t *job)
{
	const json_t *sus = json_object_get(job, "suspects"), *v;
	size_t i;

	if (!json_is_object(job))
		return;
	fputs("job ", stdout);
	cli_put_clean(stdout, json_string_value(json_object_get(job, "tag")));
	fputs(" (", stdout);
	cli_put_clean(stdout, json_string_value(json_object_get(job, "coordinator")));
	printf(", %lld/%lld rows): ", (long long)json_integer_value(json_object_get(job, "rows")),
	       (long long)json_integer_value(json_object_get(job, "nodes")));
	cli_put_clean(stdout, json_string_value(json_object_get(job, "verdict")));
	if (json_string_length(json_object_get(job, "net"))) {
		fputs(" on ", stdout);
		cli_put_clean(stdout, json_string_value(json_object_get(job, "net")));
	}
	json_array_foreach (sus, i, v) {
		fputs(i ? ", " : ", suspects ", stdout);
		cli_put_clean(stdout, json_string_value(v));
	}
	fputs("; this node: ", stdout);
	cli_put_clean(stdout, json_string_value(json_object_get(job, "role")));
	fputc('\n', stdout);
}

static void usage(void)
{
	cli_usage(stderr, "check");
}

int cmd_check(int argc, char **argv, const struct cli_global *g)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "max-timeout", required_argument, NULL, 'T' },
		{ "job", required_argument, NULL, 'J' },
		{ "settle", no_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_progress prog = { 0 };
	struct npf_verdict_report rep = { 0 };
	struct npf_check chk = { 0 };
	struct npf_api_error aerr;
	const char *nodes = NULL, *job = NULL, *verdict, *summary;
	bool json = g->json, settle = false;
	json_t *req = NULL, *reply = NULL, *cj, *vj;
	uint32_t timeout_ms = 0, max_timeout_ms = 0;
	char msg[512];
	int c, r, rc = CLI_EXIT_ERROR;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:t:T:J:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			nodes = optarg;
			break;
		case 't':
			if (cli_parse_seconds(optarg, &timeout_ms) < 0) {
				cli_err("--timeout '%s': seconds between %.1f and %u", optarg,
					NPF_API_TIMEOUT_MIN_MS / 1000.0, NPF_API_TIMEOUT_MAX_MS / 1000);
				return CLI_EXIT_ERROR;
			}
			break;
		case 'T':
			/* A ceiling on the daemon's job-sized default (a Prolog's time left). */
			if (cli_parse_seconds(optarg, &max_timeout_ms) < 0) {
				cli_err("--max-timeout '%s': seconds between %.1f and %u", optarg,
					NPF_API_TIMEOUT_MIN_MS / 1000.0, NPF_API_TIMEOUT_MAX_MS / 1000);
				return CLI_EXIT_ERROR;
			}
			break;
		case 'J':
			/* Every node of one job start checks with the same tag and the nodes
			 * decide once, together (docs/decision.md §10). */
			job = optarg;
			break;
		case 'S':
			/* The job start's last try: an unknown better network gives way to a
			 * verified one, degraded (the Prolog's retry, docs/slurm.md). */
			settle = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage();
			return CLI_EXIT_OK;
		default:
			usage();
			return CLI_EXIT_ERROR;
		}
	}
	if (!nodes || optind < argc) {
		usage();
		return CLI_EXIT_ERROR;
	}
	if (cli_check_request(nodes, timeout_ms, max_timeout_ms, job, settle, &req, &prog.n_nodes) < 0)
		return CLI_EXIT_ERROR;
	prog.timeout_ms = timeout_ms;
	r = npf_client_request_progress(g->socket_path, req, &reply,
					cli_check_wait_ms(timeout_ms, max_timeout_ms, job != NULL),
					isatty(STDERR_FILENO) ? cli_show_progress : NULL, &prog);
	if (prog.shown)
		fprintf(stderr, "\r\033[K");
	if (r < 0) {
		cli_err("%s", npf_client_strerror(r, g->socket_path, msg, sizeof(msg)));
		goto out;
	}
	r = npf_api_reply_status(reply, &aerr);
	if (r < 0) {
		cli_daemon_err(&aerr);
		goto out;
	}
	cj = json_object_get(reply, "check");
	vj = json_object_get(cj, "verdict");
	verdict = json_string_value(json_object_get(vj, "verdict"));
	summary = json_string_value(json_object_get(vj, "summary"));
	if (npf_check_from_json(cj, &chk) < 0 || npf_verdict_compute(&chk, &rep) < 0 ||
	    cli_verdict_exit(verdict) == CLI_EXIT_ERROR) {
		cli_err("malformed check in the daemon's reply");
		goto out;
	}
	if (json) {
		/* The check object under the CLI's schema/version header (docs/json.md). */
		json_t *doc = json_pack("{s:s, s:i}", "schema", "netpreflight.check", "version",
					NPF_API_VERSION);

		if (!doc || json_object_update(doc, cj) < 0 ||
		    json_dumpf(doc, stdout, JSON_INDENT(2)) < 0) {
			json_decref(doc);
			cli_err("cannot print JSON");
			goto out;
		}
		json_decref(doc);
		fputc('\n', stdout);
	} else {
		print_matrix(&chk, &rep);
		print_details(&chk);
		cli_print_recommendation(stdout, json_object_get(cj, "recommendation"),
					 (long long)chk.n_nodes - 1, chk.duration_ms);
		print_job(json_object_get(cj, "job"));
		fputs("verdict: ", stdout);
		cli_put_clean(stdout, summary ? summary : verdict);
		fputc('\n', stdout);
	}
	rc = cli_verdict_exit(verdict);
out:
	npf_verdict_report_clear(&rep);
	npf_check_clear(&chk);
	json_decref(reply);
	json_decref(req);
	return rc;
}
