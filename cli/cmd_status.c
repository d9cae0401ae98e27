// SPDX-License-Identifier: MIT
/* netpreflight status: the daemon's version, uptime, inventory summary and recent checks. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "cli.h"
#include "client.h"

#define STATUS_TIMEOUT_MS 5000

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "?";
}

static long long num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static void fmt_age(char *buf, size_t len, long long s)
{
	if (s < 120)
		snprintf(buf, len, "%llds", s);
	else if (s < 7200)
		snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
	else if (s < 2 * 86400)
		snprintf(buf, len, "%lldh%02lldm", s / 3600, s / 60 % 60);
	else
		snprintf(buf, len, "%lldd%02lldh", s / 86400, s / 3600 % 24);
}

/* The job checks this node coordinates, one line each. */
static void print_jobs(const json_t *jobs)
{
	const json_t *v;
	size_t i;

	json_array_foreach (jobs, i, v) {
		if (i == 0)
			printf("jobs coordinated:\n");
		printf("  %.8s: %lld/%lld rows, %s%s%s\n", str(v, "id"), num(v, "rows"),
		       num(v, "nodes"), str(v, "state"), str(v, "verdict")[0] ? ", " : "",
		       str(v, "verdict"));
	}
}

static void print_human(const json_t *reply)
{
	const json_t *d = json_object_get(reply, "daemon"), *inv = json_object_get(reply, "inventory");
	const json_t *checks = json_object_get(reply, "checks"), *v;
	char age[32];
	size_t i;

	fmt_age(age, sizeof(age), num(d, "uptime_s"));
	printf("netpreflightd %s on %s (pid %lld), up %s\n", str(d, "version"), str(d, "node"),
	       num(d, "pid"), age);
	printf("  socket %s, probe port %lld, default check timeout %lld ms, %lld client%s\n",
	       str(d, "socket"), num(d, "probe_port"), num(d, "default_timeout_ms"),
	       num(d, "clients"), num(d, "clients") == 1 ? "" : "s");
	if (json_is_object(inv)) {
		printf("inventory: %lld interfaces (%lld up, %lld running), %lld addresses, "
		       "%lld RDMA devices\n",
		       num(inv, "interfaces"), num(inv, "up"), num(inv, "running"),
		       num(inv, "addresses"), num(inv, "rdma_devices"));
		printf("  candidates:");
		json_array_foreach (json_object_get(inv, "candidates"), i, v)
			printf("%s%s", i ? ", " : " ", json_string_value(v));
		if (json_array_size(json_object_get(inv, "candidates")) == 0)
			printf(" none");
		printf("\n");
		if (str(inv, "rdma_note")[0] && strcmp(str(inv, "rdma_note"), "?") != 0)
			printf("  rdma: %s\n", str(inv, "rdma_note"));
	} else {
		printf("inventory: not built yet\n");
	}
	print_jobs(json_object_get(reply, "jobs"));
	if (json_array_size(checks) == 0) {
		printf("checks: none cached\n");
		return;
	}
	printf("checks:\n");
	json_array_foreach (checks, i, v) {
		if (json_is_null(json_object_get(v, "verdict")) ||
		    !json_object_get(v, "verdict")) {
			printf("  %s: %s\n", str(v, "peers"),
			       json_is_true(json_object_get(v, "running")) ? "running" : "no result");
			continue;
		}
		fmt_age(age, sizeof(age), num(v, "age_ms") / 1000);
		printf("  %s: %s, %s ago, %lld ms%s\n    %s\n", str(v, "peers"), str(v, "verdict"),
		       age, num(v, "duration_ms"),
		       json_is_true(json_object_get(v, "running")) ? " (re-check running)" : "",
		       str(v, "summary"));
	}
}

int cmd_status(int argc, char **argv, const struct cli_global *g)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct npf_api_request req = { .type = NPF_API_REQ_STATUS };
	struct npf_api_error aerr;
	json_t *rq, *reply = NULL;
	bool json = g->json;
	char msg[512];
	int c, r, rc = CLI_EXIT_ERROR;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
			continue;
		}
		cli_usage(c == 'h' ? stdout : stderr, "status");
		return c == 'h' ? CLI_EXIT_OK : CLI_EXIT_ERROR;
	}
	if (optind < argc) {
		cli_err("status takes no arguments");
		return CLI_EXIT_ERROR;
	}
	rq = npf_api_request_to_json(&req);
	if (!rq)
		return CLI_EXIT_ERROR;
	r = npf_client_request(g->socket_path, rq, &reply, STATUS_TIMEOUT_MS);
	if (r < 0) {
		cli_err("%s", npf_client_strerror(r, g->socket_path, msg, sizeof(msg)));
		goto out;
	}
	r = npf_api_reply_status(reply, &aerr);
	if (r < 0) {
		cli_daemon_err(&aerr);
		goto out;
	}
	if (json) {
		json_t *doc = json_pack("{s:s, s:i, s:O, s:O, s:O, s:O*}", "schema",
					"netpreflight.status", "version", NPF_API_VERSION, "daemon",
					json_object_get(reply, "daemon"), "inventory",
					json_object_get(reply, "inventory"), "checks",
					json_object_get(reply, "checks"), "jobs",
					json_object_get(reply, "jobs"));

		if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) < 0) {
			json_decref(doc);
			cli_err("malformed status reply");
			goto out;
		}
		json_decref(doc);
		fputc('\n', stdout);
	} else {
		print_human(reply);
	}
	rc = CLI_EXIT_OK;
out:
	json_decref(rq);
	json_decref(reply);
	return rc;
}
