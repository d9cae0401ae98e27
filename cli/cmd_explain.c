// SPDX-License-Identifier: MIT
/* netpreflight explain: read a failed job's logs (files, plain/gzip/zstd, or stdin), diagnose
 * them (lib/explain.c, pure), then cross-check with the local daemon: what its check found for
 * the interface each rank bound, and the environment it publishes as the fix. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "api.h"
#include "cli.h"
#include "client.h"
#include "explain.h"
#include "hostlist.h"

#define XP_MAX_INPUT (512u * 1024 * 1024) /* decoded bytes over all inputs */
#define WAIT_MS 70000
#define DEFAULT_MAX_AGE_MS 300000u /* a check of these nodes up to 5 min old is evidence enough */

struct buf {
	char *p;
	size_t n, cap;
	bool cut; /* XP_MAX_INPUT reached */
};

static int buf_add(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (b->n + n > XP_MAX_INPUT) {
		n = XP_MAX_INPUT - b->n;
		b->cut = true;
	}
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		char *np;

		while (cap < b->n + n + 1)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

/* A gzip stream (possibly several members, possibly cut short: what was decoded is kept). */
static int add_gzip(struct buf *out, const unsigned char *in, size_t len, const char *name)
{
	unsigned char chunk[1 << 16];
	z_stream z = {0};
	int r = Z_OK;

	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)(uintptr_t)in;
	z.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	while (!out->cut) {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		r = inflate(&z, Z_NO_FLUSH);
		if (buf_add(out, chunk, sizeof(chunk) - z.avail_out) < 0) {
			inflateEnd(&z);
			return -ENOMEM;
		}
		if (r == Z_STREAM_END) {
			if (z.avail_in == 0)
				break;
			inflateReset(&z); /* next member */
			continue;
		}
		if (r != Z_OK)
			break;
		if (z.avail_in == 0 && z.avail_out != 0)
			break;
	}
	inflateEnd(&z);
	if (r != Z_STREAM_END && r != Z_OK)
		cli_err("%s: gzip data %s; using what was decoded", name,
			r == Z_BUF_ERROR ? "ends early" : "is damaged");
	else if (r == Z_OK)
		cli_err("%s: gzip data ends early; using what was decoded", name);
	return 0;
}

static int add_zstd(struct buf *out, const unsigned char *in, size_t len, const char *name)
{
	ZSTD_DStream *d = ZSTD_createDStream();
	unsigned char chunk[1 << 16];
	ZSTD_inBuffer ib = {in, len, 0};
	size_t r = 1;

	if (!d)
		return -ENOMEM;
	ZSTD_initDStream(d);
	while (!out->cut && (ib.pos < ib.size || r != 0)) {
		ZSTD_outBuffer ob = {chunk, sizeof(chunk), 0};

		r = ZSTD_decompressStream(d, &ob, &ib);
		if (ZSTD_isError(r)) {
			cli_err("%s: zstd data damaged (%s); using what was decoded", name,
				ZSTD_getErrorName(r));
			break;
		}
		if (buf_add(out, chunk, ob.pos) < 0) {
			ZSTD_freeDStream(d);
			return -ENOMEM;
		}
		if (ib.pos == ib.size && ob.pos < ob.size) {
			if (r != 0)
				cli_err("%s: zstd data ends early; using what was decoded", name);
			break;
		}
	}
	ZSTD_freeDStream(d);
	return 0;
}

static int read_all(FILE *f, struct buf *raw)
{
	char chunk[1 << 16];
	size_t n;

	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_add(raw, chunk, n) < 0)
			return -ENOMEM;
	return ferror(f) ? -EIO : 0;
}

/* One input (path, or "-" for stdin) appended to out, decoded by its magic bytes. */
static int add_input(struct buf *out, const char *path)
{
	struct buf raw = {0};
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	int r;

	if (!f) {
		cli_err("%s: %s", path, strerror(errno));
		return -errno;
	}
	r = read_all(f, &raw);
	if (f != stdin)
		fclose(f);
	if (r < 0) {
		cli_err("%s: %s", path, strerror(-r));
		free(raw.p);
		return r;
	}
	if (raw.n >= 2 && (unsigned char)raw.p[0] == 0x1f && (unsigned char)raw.p[1] == 0x8b)
		r = add_gzip(out, (unsigned char *)raw.p, raw.n, path);
	else if (raw.n >= 4 && memcmp(raw.p, "\x28\xb5\x2f\xfd", 4) == 0)
		r = add_zstd(out, (unsigned char *)raw.p, raw.n, path);
	else
		r = buf_add(out, raw.p, raw.n);
	free(raw.p);
	/* Files are separate streams: a last line without newline must not join the next file. */
	if (r == 0 && out->n && out->p[out->n - 1] != '\n')
		r = buf_add(out, "\n", 1);
	return r;
}

/* ---- the cross-check ---- */

struct xcheck {
	bool asked, ok;	 /* a daemon was asked / answered with a check */
	char error[256]; /* why not */
	json_t *reply, *env_reply;
	const char *summary, *env_text;
	struct npf_xp_xcheck c; /* check and variables borrowed from the replies */
};

static const char *js(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static int ask(const char *sock, struct npf_api_request *req, json_t **reply, char *err,
	       size_t errlen)
{
	json_t *rq = npf_api_request_to_json(req);
	struct npf_api_error aerr;
	char msg[512];
	int r;

	if (!rq)
		return -ENOMEM;
	r = npf_client_request(sock, rq, reply, WAIT_MS);
	json_decref(rq);
	if (r < 0) {
		snprintf(err, errlen, "%s", npf_client_strerror(r, sock, msg, sizeof(msg)));
		return r;
	}
	r = npf_api_reply_status(*reply, &aerr);
	if (r < 0) {
		snprintf(err, errlen, "daemon: %s (%s)", aerr.message,
			 npf_api_errcode_name(aerr.code));
		json_decref(*reply);
		*reply = NULL;
	}
	return r;
}

/* The nodes to cross-check: --nodes, else the hosts the log names (valid node names only). */
static int pick_nodes(const char *nodes, const struct npf_xp_report *rep,
		      struct npf_api_request *req)
{
	if (nodes)
		return cli_hostlist_peers(nodes, req);
	if (rep->hostlist[0])
		return cli_hostlist_peers(rep->hostlist, req);
	req->peers = calloc(rep->n_procs ? rep->n_procs : 1, sizeof(*req->peers));
	if (!req->peers)
		return -ENOMEM;
	for (size_t i = 0; i < rep->n_procs && req->n_peers < NPF_API_MAX_PEERS; i++) {
		const char *h = rep->procs[i].host;
		bool dup = false;

		if (!npf_api_name_valid(h))
			continue;
		for (size_t k = 0; k < req->n_peers; k++)
			dup = dup || strcmp(req->peers[k], h) == 0;
		if (!dup)
			snprintf(req->peers[req->n_peers++], NPF_NAME_MAX, "%s", h);
	}
	return 0;
}

static void crosscheck(struct xcheck *x, const char *sock, const char *nodes, bool job_wide,
		       uint32_t max_age_ms, uint32_t timeout_ms, struct npf_xp_report *rep)
{
	struct npf_api_request req = {
	    .type = NPF_API_REQ_CHECK, .max_age_ms = max_age_ms, .timeout_ms = timeout_ms};
	json_t *vj;

	if (pick_nodes(nodes, rep, &req) < 0) {
		snprintf(x->error, sizeof(x->error), "bad node list");
		return;
	}
	if (req.n_peers < 2) {
		snprintf(x->error, sizeof(x->error),
			 "the log names no job nodes (give --nodes HOSTLIST)");
		npf_api_request_clear(&req);
		return;
	}
	x->asked = true;
	if (ask(sock, &req, &x->reply, x->error, sizeof(x->error)) < 0) {
		npf_api_request_clear(&req);
		return;
	}
	x->c.check = json_object_get(x->reply, "check");
	vj = json_object_get(x->c.check, "verdict");
	x->c.verdict = js(vj, "verdict");
	x->summary = js(vj, "summary");
	if (!json_is_object(x->c.check) || !x->c.verdict) {
		snprintf(x->error, sizeof(x->error), "malformed check in the daemon's reply");
		x->c.check = NULL;
		npf_api_request_clear(&req);
		return;
	}
	x->ok = true;
	/* The fix: the environment the daemon publishes for these nodes (from the check just
	 * made or cached: the env request answers from the same cache entry). */
	req.type = NPF_API_REQ_ENV;
	snprintf(req.format, sizeof(req.format), "shell");
	req.job_wide = job_wide;
	req.max_age_ms = max_age_ms;
	req.max_age_set = true;
	if (ask(sock, &req, &x->env_reply, x->error, sizeof(x->error)) == 0) {
		if (npf_verdict_name_publishes(js(x->env_reply, "verdict"))) {
			x->env_text = js(x->env_reply, "text");
			x->c.variables = json_object_get(x->env_reply, "variables");
		}
		x->error[0] = '\0';
	}
	npf_api_request_clear(&req);
	if (npf_xp_crosscheck(rep, &x->c) < 0) {
		snprintf(x->error, sizeof(x->error), "out of memory");
		x->ok = false;
	}
}

/* The published text without its '#' lines. */
static void put_assignments(FILE *f, const char *text, const char *indent)
{
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) + 1 : strlen(text);

		if (text[0] != '#' && n > 1) {
			fputs(indent, f);
			for (size_t i = 0; i < n; i++)
				fputc(((unsigned char)text[i] < ' ' && text[i] != '\n') ? '?'
											: text[i],
				      f);
		}
		text += n;
	}
}

static void print_human(const struct npf_xp_report *rep, const struct xcheck *x, bool verbose)
{
	char who[96];
	size_t i;
	const json_t *v;

	printf("cause: %s%s%s: %s\n", npf_xp_cause_name(rep->cause),
	       rep->ambiguous ? " (ambiguous)" : "",
	       x->c.cause_from_daemon ? " (from the daemon's check)" : "",
	       rep->summary[0] ? rep->summary : "no failure and no network cause in the log");
	if (rep->first_proc >= 0) {
		const struct npf_xp_proc *pr = &rep->procs[rep->first_proc];

		if (pr->rank < 0 && !pr->host[0] && pr->pid < 0)
			printf("first failure: line %zu (the line names no rank or host): ",
			       pr->first_error.lineno);
		else
			printf("first failure: %s, line %zu: ",
			       npf_xp_proc_label(rep, rep->first_proc, who, sizeof(who)),
			       pr->first_error.lineno);
		cli_put_clean(stdout, pr->first_error.text);
		fputc('\n', stdout);
		if (pr->primary && rep->n_secondary)
			printf(
			    "  %zu more process%s failed only because of it (timeouts, aborts)\n",
			    rep->n_secondary, rep->n_secondary == 1 ? "" : "es");
		else if (!pr->primary && rep->n_secondary > 1)
			printf("  %zu processes timed out or aborted; none logged a cause of its "
			       "own\n",
			       rep->n_secondary);
		if (rep->n_primary > 1)
			printf("  %zu processes logged a failure of their own\n", rep->n_primary);
	}
	if (x->ok) {
		json_array_foreach(x->c.findings, i, v)
		{
			fputs("daemon: ", stdout);
			cli_put_clean(stdout, json_string_value(v));
			fputc('\n', stdout);
		}
	}
	/* The published environment fixes the network; it is no fix for an OOM or an exception. */
	if (x->ok && x->env_text && rep->cause != NPF_XC_NONE && rep->cause != NPF_XC_NOT_NETWORK) {
		printf("fix: the environment the daemon publishes (netpreflight env):\n");
		put_assignments(stdout, x->env_text, "  ");
	} else if (x->ok && x->c.drain[0]) {
		printf("fix: drain %s (", x->c.drain);
		cli_put_clean(stdout, x->summary ? x->summary : "");
		printf(")\n");
	} else if (rep->fix_hint[0]) {
		printf("fix: %s\n", rep->fix_hint);
	}
	if (!x->ok)
		printf("note: evidence from the log alone%s%s%s\n", x->error[0] ? " (" : "",
		       x->error[0] ? x->error : "", x->error[0] ? ")" : "");
	if (rep->n_also) {
		fputs("also seen:", stdout);
		for (size_t k = 0; k < rep->n_also; k++)
			printf(" %s", npf_xp_cause_name(rep->also[k]));
		fputc('\n', stdout);
	}
	if (verbose || rep->n_evidence) {
		printf("evidence:\n");
		for (size_t k = 0; k < rep->n_evidence; k++) {
			printf("  %zu %s: ", rep->evidence[k].lineno,
			       npf_xp_proc_label(rep, rep->evidence[k].proc, who, sizeof(who)));
			cli_put_clean(stdout, rep->evidence[k].text);
			fputc('\n', stdout);
		}
	}
	if (verbose) {
		printf("%-18s %-10s %-14s %-28s %-8s %s\n", "PROCESS", "NCCL", "BOOTSTRAP",
		       "ADDRESS", "NET", "FIRST ERROR");
		for (size_t p = 0; p < rep->n_procs; p++) {
			const struct npf_xp_proc *pr = &rep->procs[p];

			if (npf_xp_proc_empty(pr))
				continue;
			printf("%-18s %-10s %-14s %-28s %-8s ",
			       npf_xp_proc_label(rep, (int)p, who, sizeof(who)),
			       pr->nccl_version[0] ? pr->nccl_version : "-",
			       pr->boot_if[0] ? pr->boot_if : (pr->oob_if[0] ? pr->oob_if : "-"),
			       pr->boot_addr[0] ? pr->boot_addr
						: (pr->oob_addr[0] ? pr->oob_addr : "-"),
			       pr->net[0] ? pr->net : "-");
			if (pr->has_error) {
				printf("%s%s ", pr->primary ? "" : "(consequence) ",
				       npf_xp_kind_name(pr->first_error.kind));
				cli_put_clean(stdout, pr->first_error.text);
			} else {
				fputs("-", stdout);
			}
			fputc('\n', stdout);
		}
	}
}

static int print_json(const struct npf_xp_report *rep, const struct xcheck *x)
{
	json_t *doc = json_pack("{s:s, s:i}", "schema", "netpreflight.explain", "version", 1);
	json_t *body = npf_xp_report_to_json(rep), *xc;
	int r;

	if (!doc || !body || json_object_update(doc, body) < 0) {
		json_decref(doc);
		json_decref(body);
		return -ENOMEM;
	}
	json_decref(body);
	if (x->ok) {
		xc = json_pack("{s:s, s:O, s:s?, s:s?, s:O, s:b, s:b, s:b, s:s?, s:O?, s:s?}",
			       "self", js(x->c.check, "self") ? js(x->c.check, "self") : "",
			       "started_unix_ms", json_object_get(x->c.check, "started_unix_ms"),
			       "verdict", x->c.verdict, "summary", x->summary, "findings",
			       x->c.findings, "confirmed", x->c.confirmed, "cause_from_daemon",
			       x->c.cause_from_daemon, "env_differs", x->c.env_differs, "env_text",
			       x->env_text, "env", x->c.variables, "drain",
			       x->c.drain[0] ? x->c.drain : NULL);
		json_object_set_new(doc, "evidence_source", json_string("log+daemon"));
		json_object_set_new(doc, "cross_check", xc ? xc : json_null());
	} else {
		json_object_set_new(doc, "evidence_source", json_string("log"));
		json_object_set_new(doc, "cross_check", json_null());
		json_object_set_new(doc, "cross_check_error",
				    x->error[0] ? json_string(x->error) : json_null());
	}
	r = json_dumpf(doc, stdout, JSON_INDENT(2));
	json_decref(doc);
	fputc('\n', stdout);
	return r < 0 ? -EIO : 0;
}

static void usage(FILE *f)
{
	cli_usage(f, "explain");
}

int cmd_explain(int argc, char **argv, const struct cli_global *g)
{
	static const struct option opts[] = {
	    {"nodes", required_argument, NULL, 'n'},
	    {"no-daemon", no_argument, NULL, 'D'},
	    {"max-age", required_argument, NULL, 'a'},
	    {"timeout", required_argument, NULL, 't'},
	    {"node-env", no_argument, NULL, 'N'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct npf_xp_report rep = {0};
	struct xcheck x = {0};
	struct buf in = {0};
	const char *nodes = NULL;
	bool json = g->json, daemon = true, verbose = false, job_wide = true;
	uint32_t max_age_ms = DEFAULT_MAX_AGE_MS, timeout_ms = 0;
	int c, rc = CLI_EXIT_ERROR;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:Da:t:Nvh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			nodes = optarg;
			break;
		case 'D':
			daemon = false;
			break;
		case 'a':
			if (strcmp(optarg, "0") == 0)
				max_age_ms = 0;
			else if (cli_parse_seconds(optarg, &max_age_ms) < 0) {
				cli_err("--max-age '%s': 0, or seconds between %.1f and %u", optarg,
					NPF_API_TIMEOUT_MIN_MS / 1000.0,
					NPF_API_TIMEOUT_MAX_MS / 1000);
				return CLI_EXIT_ERROR;
			}
			break;
		case 't':
			if (cli_parse_seconds(optarg, &timeout_ms) < 0) {
				cli_err("--timeout '%s': seconds between %.1f and %u", optarg,
					NPF_API_TIMEOUT_MIN_MS / 1000.0,
					NPF_API_TIMEOUT_MAX_MS / 1000);
				return CLI_EXIT_ERROR;
			}
			break;
		case 'N':
			job_wide = false;
			break;
		case 'v':
			verbose = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_EXIT_OK;
		default:
			usage(stderr);
			return CLI_EXIT_ERROR;
		}
	}
	if (optind == argc) {
		if (add_input(&in, "-") < 0)
			goto out;
	}
	for (int i = optind; i < argc; i++)
		if (add_input(&in, argv[i]) < 0)
			goto out;
	if (in.cut)
		cli_err("input over %u MiB: the rest is not read", XP_MAX_INPUT >> 20);
	if (npf_explain(in.p ? in.p : "", in.n, &rep) < 0) {
		cli_err("out of memory");
		goto out;
	}
	if (daemon) {
		crosscheck(&x, g->socket_path, nodes, job_wide, max_age_ms, timeout_ms, &rep);
	} else
		snprintf(x.error, sizeof(x.error), "--no-daemon");
	if (json ? print_json(&rep, &x) < 0 : (print_human(&rep, &x, verbose), false)) {
		cli_err("cannot print JSON");
		goto out;
	}
	if (fflush(stdout) != 0) {
		cli_err("cannot write the output");
		goto out;
	}
	/* 0 only for a network cause: a failure that is not the network's is no finding here. */
	rc = rep.cause == NPF_XC_NONE || rep.cause == NPF_XC_UNKNOWN ||
		     rep.cause == NPF_XC_NOT_NETWORK
		 ? CLI_EXIT_FAIL
		 : CLI_EXIT_OK;
out:
	npf_xp_xcheck_clear(&x.c);
	json_decref(x.reply);
	json_decref(x.env_reply);
	npf_xp_report_clear(&rep);
	free(in.p);
	return rc;
}
