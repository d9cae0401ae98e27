// SPDX-License-Identifier: MIT
/* netpreflight env: the verified environment for a job's nodes, as shell, TaskProlog,
 * nccl.conf or JSON, from the daemon's cached verdict when fresh, else after a check. */
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

#define DEFAULT_WAIT_MS 60000 /* daemon default timeout unknown here: its maximum */
#define WAIT_SLACK_MS 10000

/* The rendered text without its '#' comment lines: stdout carries only what a shell,
 * slurmstepd or NCCL reads; the comments' content goes to stderr in human form. */
static void print_assignments(const char *text)
{
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) + 1 : strlen(text);

		if (text[0] != '#' && n > 1)
			fwrite(text, 1, n, stdout);
		text += n;
	}
}

static int print_json(const json_t *reply, bool job_wide)
{
	const json_t *rec = json_object_get(reply, "recommendation");
	json_t *doc;
	int r;

	if (!json_is_object(rec)) {
		cli_err("malformed env reply (no recommendation)");
		return -EPROTO;
	}
	doc = json_pack("{s:s, s:i, s:O, s:O, s:b}", "schema", "netpreflight.env", "version",
			NPF_API_VERSION, "cached", json_object_get(reply, "cached"), "age_ms",
			json_object_get(reply, "age_ms"), "job_wide", job_wide);
	if (!doc || json_object_update(doc, (json_t *)(uintptr_t)rec) < 0) {
		json_decref(doc);
		cli_err("cannot build JSON");
		return -ENOMEM;
	}
	r = json_dumpf(doc, stdout, JSON_INDENT(2));
	json_decref(doc);
	if (r < 0)
		return -EIO;
	fputc('\n', stdout);
	return 0;
}

static void usage(FILE *f)
{
	cli_usage(f, "env");
}

int cmd_env(int argc, char **argv, const struct cli_global *g)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },
		{ "job-wide", no_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "max-age", required_argument, NULL, 'a' },
		{ "cached", no_argument, NULL, 'c' },
		{ "job", required_argument, NULL, 'J' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct npf_api_request req = { .type = NPF_API_REQ_ENV };
	struct cli_progress prog = { 0 };
	struct npf_api_error aerr;
	const char *nodes = NULL, *format = g->json ? "json" : "shell", *verdict, *summary;
	json_t *rq = NULL, *reply = NULL, *rec;
	char msg[512];
	int c, r, rc = CLI_EXIT_ERROR;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:f:wt:a:cJ:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			nodes = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'w':
			req.job_wide = true;
			break;
		case 't':
			if (cli_parse_seconds(optarg, &req.timeout_ms) < 0) {
				cli_err("--timeout '%s': seconds between %.1f and %u", optarg,
					NPF_API_TIMEOUT_MIN_MS / 1000.0, NPF_API_TIMEOUT_MAX_MS / 1000);
				return CLI_EXIT_ERROR;
			}
			break;
		case 'a':
			/* 0 is allowed here: "never from the cache". */
			if (strcmp(optarg, "0") != 0 &&
			    cli_parse_seconds(optarg, &req.max_age_ms) < 0) {
				cli_err("--max-age '%s': 0, or seconds between %.1f and %u", optarg,
					NPF_API_TIMEOUT_MIN_MS / 1000.0, NPF_API_TIMEOUT_MAX_MS / 1000);
				return CLI_EXIT_ERROR;
			}
			req.max_age_set = true;
			break;
		case 'c':
			req.cached = true;
			break;
		case 'J':
			/* The job check of `check --job`, its decision as an environment: every
			 * node of the job asks at once with the same tag (docs/run.md). */
			if (cli_set_job(optarg, &req) < 0)
				return CLI_EXIT_ERROR;
			break;
		case 'j':
			format = "json";
			break;
		case 'h':
			usage(stdout);
			return CLI_EXIT_OK;
		default:
			usage(stderr);
			return CLI_EXIT_ERROR;
		}
	}
	if (!nodes || optind < argc) {
		usage(stderr);
		return CLI_EXIT_ERROR;
	}
	if (strcmp(format, "json") != 0 && strcmp(format, "shell") != 0 &&
	    strcmp(format, "taskprolog") != 0 && strcmp(format, "nccl-conf") != 0) {
		cli_err("--format '%s': one of shell, taskprolog, nccl-conf, json", format);
		return CLI_EXIT_ERROR;
	}
	snprintf(req.format, sizeof(req.format), "%s", format);
	/* A job check always probes (a cached answer is no job decision), unless asked. */
	if (req.job[0] && !req.max_age_set && !req.cached)
		req.max_age_set = true;
	if (cli_hostlist_peers(nodes, &req) < 0)
		return CLI_EXIT_ERROR;
	prog.n_nodes = req.n_peers;
	rq = npf_api_request_to_json(&req);
	if (!rq) {
		cli_err("out of memory");
		goto out;
	}
	r = npf_client_request_progress(g->socket_path, rq, &reply,
					req.job[0] ? cli_check_wait_ms(req.timeout_ms, 0, true) :
						     (int)(req.timeout_ms ? req.timeout_ms :
									    DEFAULT_WAIT_MS) +
							     WAIT_SLACK_MS,
					!req.cached && isatty(STDERR_FILENO) ? cli_show_progress : NULL,
					&prog);
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
	verdict = json_string_value(json_object_get(reply, "verdict"));
	summary = json_string_value(json_object_get(reply, "summary"));
	rec = json_object_get(reply, "recommendation");
	if (cli_verdict_exit(verdict) == CLI_EXIT_ERROR || !json_is_object(rec)) {
		cli_err("malformed env reply");
		goto out;
	}
	if (strcmp(format, "json") == 0) {
		if (print_json(reply, req.job_wide) < 0)
			goto out;
	} else {
		const json_t *omitted = json_object_get(reply, "omitted");

		if (!json_is_string(json_object_get(reply, "text"))) {
			cli_err("malformed env reply (no text)");
			goto out;
		}
		/* Humans read stderr; stdout stays eval-able (and empty unless ok). */
		cli_print_recommendation(stderr, rec,
					 (long long)json_array_size(json_object_get(rec, "nodes")) -
						 1,
					 -1);
		if (json_integer_value(omitted) > 0)
			fprintf(stderr, "note: %lld variable(s) left out: not expressible in %s\n",
				(long long)json_integer_value(omitted), format);
		fputs(cli_verdict_line(verdict), stderr);
		cli_put_clean(stderr, summary ? summary : verdict);
		fputc('\n', stderr);
		if (npf_verdict_name_publishes(verdict))
			print_assignments(json_string_value(json_object_get(reply, "text")));
	}
	if (fflush(stdout) != 0) {
		cli_err("cannot write the output");
		goto out;
	}
	rc = cli_verdict_exit(verdict);
out:
	npf_api_request_clear(&req);
	json_decref(rq);
	json_decref(reply);
	return rc;
}
