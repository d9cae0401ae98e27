// SPDX-License-Identifier: MIT
/* Human rendering of a daemon's answer shared by check, env and explain: the verdict line
 * and exit code, the recommendation report, the progress line. */
#include <jansson.h>
#include <stdio.h>

#include "cli.h"
#include "verdict.h"

#define PROGRESS_AFTER_MS 500

void cli_show_progress(uint32_t elapsed_ms, void *userdata)
{
	struct cli_progress *p = userdata;

	if (elapsed_ms < PROGRESS_AFTER_MS)
		return;
	if (p->timeout_ms)
		fprintf(stderr, "\rchecking %zu node%s... %.1fs of %.1fs ", p->n_nodes,
			p->n_nodes == 1 ? "" : "s", elapsed_ms / 1000.0, p->timeout_ms / 1000.0);
	else
		fprintf(stderr, "\rchecking %zu node%s... %.1fs ", p->n_nodes,
			p->n_nodes == 1 ? "" : "s", elapsed_ms / 1000.0);
	fflush(stderr);
	p->shown = true;
}

/* What the CLI makes of each verdict: one row each. degraded is ok on a worse network
 * than the job's best, chosen by the whole job alike (docs/decision.md §10): its
 * environment is as good as ok's, so it exits 0, and the human line says it. */
static const struct {
	int exit;
	const char *line; /* the prefix of the human verdict line on stderr (env) */
} verdicts[NPF_VERDICT__COUNT] = {
	[NPF_VERDICT_OK] = { CLI_EXIT_OK, "netpreflight: " },
	[NPF_VERDICT_DEGRADED] = { CLI_EXIT_OK, "netpreflight: DEGRADED: " },
	[NPF_VERDICT_FAIL] = { CLI_EXIT_FAIL, "netpreflight: NOT OK: " },
	[NPF_VERDICT_UNKNOWN] = { CLI_EXIT_UNKNOWN, "netpreflight: NOT OK: " },
};

int cli_verdict_exit(const char *verdict)
{
	int v = npf_verdict_parse(verdict);

	return v < 0 ? CLI_EXIT_ERROR : verdicts[v].exit;
}

const char *cli_verdict_line(const char *verdict)
{
	int v = npf_verdict_parse(verdict);

	return v < 0 ? verdicts[NPF_VERDICT_UNKNOWN].line : verdicts[v].line;
}

void cli_put_clean(FILE *f, const char *s)
{
	for (; s && *s; s++)
		fputc(((unsigned char)*s < ' ' && *s != '\n') || *s == 0x7f ? '?' : *s, f);
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

void cli_print_recommendation(FILE *f, const json_t *rec, long long n_peers,
			      long long duration_ms)
{
	const json_t *def = json_object_get(rec, "nccl_default"), *choice, *v;
	const char *verdict = jstr(rec, "verdict");
	size_t i;

	if (!json_is_object(rec))
		return;
	if (jstr(def, "text") && jstr(def, "text")[0]) {
		cli_put_clean(f, jstr(def, "text"));
		fputc('\n', f);
	}
	choice = json_object_get(rec, "choice");
	if (json_is_object(choice)) {
		bool verified = json_is_true(json_object_get(choice, "verified")) &&
				npf_verdict_name_publishes(verdict);

		fputs(verified ? "using " : "provisional choice (not verified): ", f);
		cli_put_clean(f, jstr(choice, "ifname"));
		fputs(" (", f);
		cli_put_clean(f, jstr(choice, "address"));
		fputs(" on ", f);
		cli_put_clean(f, jstr(choice, "network"));
		fputc(')', f);
		if (verified && n_peers >= 0)
			fprintf(f, ", verified to %lld peer%s", n_peers, n_peers == 1 ? "" : "s");
		if (verified && duration_ms >= 0)
			fprintf(f, " in %lld ms", duration_ms);
		fputc('\n', f);
	}
	json_array_foreach (json_object_get(rec, "rejected"), i, v) {
		fputs("not chosen: ", f);
		cli_put_clean(f, jstr(v, "ifname"));
		fputs(": ", f);
		cli_put_clean(f, jstr(v, "reason"));
		fputc('\n', f);
	}
	json_array_foreach (json_object_get(rec, "notes"), i, v) {
		fputs("note: ", f);
		cli_put_clean(f, json_string_value(v));
		fputc('\n', f);
	}
}
