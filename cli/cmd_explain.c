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
	json_t *check;	 /* the check object (borrowed from reply) */
	json_t *reply, *env_reply;
	const char *verdict, *summary, *env_text;
	json_t *findings;  /* array of strings */
	json_t *variables; /* env reply "variables" (ok only), borrowed */
	char drain[64];
	bool confirmed;
	bool env_differs;
	bool cause_from_daemon; /* the log alone was not enough: the check's outcome decided */
};

static const char *js(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* "198.18.1.1/24" == "198.18.1.1" */
static bool same_ip(const char *withprefix, const char *ip)
{
	size_t n = strlen(ip);

	return withprefix && ip && n && strncmp(withprefix, ip, n) == 0 &&
	       (withprefix[n] == '/' || withprefix[n] == '\0');
}

/* Nodes of the check whose candidates hold addr; names joined into out. Returns the count. */
static int nodes_with_addr(const json_t *check, const char *addr, char *out, size_t len,
			   char *ifname, size_t iflen)
{
	const json_t *n, *c;
	size_t i, k;
	int cnt = 0;

	out[0] = '\0';
	json_array_foreach(json_object_get(check, "nodes"), i, n) json_array_foreach(
	    json_object_get(n, "candidates"), k, c) if (same_ip(js(c, "address"), addr))
	{
		size_t o = strlen(out);

		snprintf(out + o, len - o, "%s%s", cnt ? ", " : "", js(n, "name"));
		if (ifname && js(c, "ifname"))
			snprintf(ifname, iflen, "%s", js(c, "ifname"));
		cnt++;
		break;
	}
	return cnt;
}

static void finding(struct xcheck *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void finding(struct xcheck *x, const char *fmt, ...)
{
	char raw[512], line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* Names and details come from peers' daemons and from the log: text, UTF-8, for JSON. */
	npf_xp_clean_text(line, sizeof(line), raw, strlen(raw));
	json_array_append_new(x->findings, json_string(line));
}

/* What the check says of one of our interfaces ("wrong-peer with node2 (...)"). */
static const json_t *iface_verdict(const json_t *check, const char *ifname)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(check, "verdict"), "interfaces"), i,
			   v) if (js(v, "ifname") && strcmp(js(v, "ifname"), ifname) == 0) return v;
	return NULL;
}

/* What the check found for this node's interface ifname. Returns true when it fails. */
static bool describe_iface(struct xcheck *x, const char *who, const char *ifname, const char *addr,
			   const char *when)
{
	const json_t *v = iface_verdict(x->check, ifname), *f;
	long long peers =
	    json_integer_value(json_object_get(json_object_get(x->check, "verdict"), "peers"));

	if (!v) {
		finding(x,
			"%s bound %s %s; the check at %s did not probe it (not a candidate: "
			"down, loopback, link-local or excluded)",
			who, ifname, addr, when);
		return true;
	}
	f = json_object_get(v, "failure");
	if (json_is_true(json_object_get(v, "works"))) {
		finding(x, "%s bound %s %s; the check at %s found it working to all %lld peers",
			who, ifname, addr, when, peers);
		return false;
	}
	finding(
	    x, "%s bound %s %s; the check at %s found it %s with %s%s%s (%lld of %lld peers ok)",
	    who, ifname, addr, when, js(f, "outcome") ? js(f, "outcome") : "failing",
	    js(f, "peer") ? js(f, "peer") : "a peer",
	    js(f, "detail") && *js(f, "detail") ? ": " : "", js(f, "detail") ? js(f, "detail") : "",
	    (long long)json_integer_value(json_object_get(v, "ok_peers")), peers);
	return true;
}

/* What this node's probes of a peer's address found. Returns true when a direction failed. */
static bool describe_peer(struct xcheck *x, const char *who, const char *node, const char *ifname,
			  const char *addr, const char *when)
{
	const json_t *l;
	size_t i;

	json_array_foreach(json_object_get(x->check, "links"), i, l)
	{
		const char *fw = js(l, "fwd"), *rv = js(l, "rev");

		if (!js(l, "peer") || strcmp(js(l, "peer"), node) != 0 ||
		    !same_ip(js(l, "peer_addr"), addr))
			continue;
		finding(
		    x,
		    "%s bound %s %s on %s; the check at %s from %s: to it %s%s%s, from it %s%s%s",
		    who, ifname, addr, node, when, js(l, "ifname") ? js(l, "ifname") : "?",
		    fw ? fw : "?", js(l, "fwd_detail") && *js(l, "fwd_detail") ? ": " : "",
		    js(l, "fwd_detail") ? js(l, "fwd_detail") : "", rv ? rv : "?",
		    js(l, "rev_detail") && *js(l, "rev_detail") ? ": " : "",
		    js(l, "rev_detail") ? js(l, "rev_detail") : "");
		return !(fw && strcmp(fw, "ok") == 0 && rv && strcmp(rv, "ok") == 0);
	}
	finding(x, "%s bound %s %s on %s; the check at %s did not probe that address", who, ifname,
		addr, node, when);
	return false;
}

/* "node1, node2" holds name. */
static bool node_in(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

static void crosscheck_findings(struct xcheck *x, const struct npf_xp_report *rep)
{
	const json_t *check = x->check, *v;
	const char *self = js(check, "self");
	char when[16] = "?", nodes[256], ifn[32];
	time_t t = (time_t)(json_integer_value(json_object_get(check, "started_unix_ms")) / 1000);
	struct tm tm;
	size_t i;
	bool bad = false;
	const char *fail_peer = NULL;
	bool one_peer = true, any_fail = false;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	/* What each distinct bound address was, per the check. */
	for (size_t p = 0; p < rep->n_procs; p++) {
		const struct npf_xp_proc *pr = &rep->procs[p];
		const char *addr = pr->boot_addr[0] ? pr->boot_addr : pr->oob_addr;
		const char *ifname = pr->boot_addr[0] ? pr->boot_if : pr->oob_if;
		char who[96];
		int cnt;
		bool dup = false;

		if (!addr[0])
			continue;
		for (size_t q = 0; q < p; q++)
			if (strcmp(rep->procs[q].boot_addr[0] ? rep->procs[q].boot_addr
							      : rep->procs[q].oob_addr,
				   addr) == 0)
				dup = true;
		if (dup)
			continue;
		cnt = nodes_with_addr(check, addr, nodes, sizeof(nodes), ifn, sizeof(ifn));
		npf_xp_proc_label(rep, (int)p, who, sizeof(who));
		if (cnt > 1) {
			finding(x,
				"%s bound %s %s, an address the check found on %d nodes (%s): a "
				"connect to it stays on the connecting node",
				who, ifname, addr, cnt, nodes);
			x->confirmed = x->confirmed || rep->cause == NPF_XC_SAME_ADDRESS ||
				       rep->cause == NPF_XC_CONTAINER_BRIDGE;
		}
		if (cnt >= 1 && self && node_in(nodes, self)) {
			bad = describe_iface(x, who, ifn, addr, when) || bad;
		} else if (cnt == 1) {
			bad = describe_peer(x, who, nodes, ifn, addr, when) || bad;
		} else if (cnt == 0) {
			finding(
			    x,
			    "%s bound %s %s: no node of the check offers that address (loopback, "
			    "link-local, down, or a network the daemons do not use)",
			    who, ifname, addr);
			bad = true;
		}
	}
	/* A failing bound interface confirms a cause about the choice of interface. */
	if (bad && (rep->cause == NPF_XC_SAME_ADDRESS || rep->cause == NPF_XC_CONTAINER_BRIDGE ||
		    rep->cause == NPF_XC_LOOPBACK || rep->cause == NPF_XC_LINK_LOCAL ||
		    rep->cause == NPF_XC_PREFIX_MATCH))
		x->confirmed = true;
	/* Every interface the check saw from this node: which failed how, which passed. */
	json_array_foreach(json_object_get(json_object_get(check, "verdict"), "interfaces"), i, v)
	{
		const json_t *f = json_object_get(v, "failure");
		long long ok = json_integer_value(json_object_get(v, "ok_peers"));

		if (json_is_true(json_object_get(v, "works"))) {
			finding(x, "%s: %s passed to all %lld peers", self ? self : "this node",
				js(v, "ifname"), ok);
			continue;
		}
		any_fail = true;
		if (js(f, "peer")) {
			if (fail_peer && strcmp(fail_peer, js(f, "peer")) != 0)
				one_peer = false;
			fail_peer = js(f, "peer");
		}
		finding(x, "%s: %s %s with %s%s%s (%lld peers ok)", self ? self : "this node",
			js(v, "ifname"), js(f, "outcome") ? js(f, "outcome") : "fails",
			js(f, "peer") ? js(f, "peer") : "?",
			js(f, "detail") && *js(f, "detail") ? ": " : "",
			js(f, "detail") ? js(f, "detail") : "", ok);
		/* The check's outcomes that the cause predicts. */
		if ((rep->cause == NPF_XC_MTU_BLACKHOLE && js(f, "outcome") &&
		     strcmp(js(f, "outcome"), "bulk-stall") == 0) ||
		    ((rep->cause == NPF_XC_SAME_ADDRESS || rep->cause == NPF_XC_CONTAINER_BRIDGE) &&
		     js(f, "outcome") && strcmp(js(f, "outcome"), "wrong-peer") == 0) ||
		    (rep->cause == NPF_XC_FIREWALL_REFUSED && js(f, "outcome") &&
		     strcmp(js(f, "outcome"), "refused") == 0) ||
		    (rep->cause == NPF_XC_FIREWALL_SILENT && js(f, "outcome") &&
		     strcmp(js(f, "outcome"), "timeout") == 0))
			x->confirmed = true;
	}
	/* A node to drain: nothing works for this node and every failure names one peer, or a
	 * node-specific cause (a path that stalls/refuses) names that same peer. */
	if (any_fail && one_peer && fail_peer && (x->verdict && strcmp(x->verdict, "ok") != 0))
		snprintf(x->drain, sizeof(x->drain), "%s", fail_peer);
	/* The environment the job ran with against the one published. */
	if (json_is_object(x->variables))
		for (size_t p = 0; p < rep->n_procs; p++) {
			const struct npf_xp_proc *pr = &rep->procs[p];
			char who[96];

			npf_xp_proc_label(rep, (int)p, who, sizeof(who));
			for (size_t e = 0; e < pr->n_env; e++) {
				const char *pub = js(x->variables, pr->env[e].name);

				if (pub && strcmp(pub, pr->env[e].value) != 0) {
					finding(x, "%s ran with %s=%s; the daemon publishes %s=%s",
						who, pr->env[e].name, pr->env[e].value,
						pr->env[e].name, pub);
					x->env_differs = true;
				}
			}
			if (!pr->n_env && pr->boot_if[0] &&
			    js(x->variables, "NCCL_SOCKET_IFNAME")) {
				const char *pub = js(x->variables, "NCCL_SOCKET_IFNAME");

				if (strcmp(pub[0] == '=' ? pub + 1 : pub, pr->boot_if) != 0 &&
				    (!self || !pr->host[0] || strcmp(pr->host, self) == 0)) {
					finding(
					    x,
					    "%s ran without NCCL_SOCKET_IFNAME and bound %s; the "
					    "daemon publishes NCCL_SOCKET_IFNAME=%s",
					    who, pr->boot_if, pub);
					x->env_differs = true;
				}
			}
		}
}

/* The log shows connects to an address failing without saying how (Open MPI 4.1 reports
 * "Operation now in progress" for every failed connect, truncated logs, wrappers): when the
 * daemon's check probed that very address, its outcome says how the path fails. */
static void upgrade_from_daemon(struct npf_xp_report *rep, struct xcheck *x)
{
	static const struct {
		const char *outcome;
		enum npf_xp_cause cause;
		const char *what;
	} map[] = {
	    {"refused", NPF_XC_FIREWALL_REFUSED, "connections to it are refused (a reject rule)"},
	    {"timeout", NPF_XC_FIREWALL_SILENT, "connections to it time out (dropped)"},
	    {"unreachable", NPF_XC_FIREWALL_SILENT, "it is unreachable"},
	    {"bulk-stall", NPF_XC_MTU_BLACKHOLE,
	     "small packets pass and full-size ones do not (MTU black hole)"},
	    {"wrong-peer", NPF_XC_SAME_ADDRESS, "it answers as another node"},
	};
	const json_t *l;
	size_t i;

	if (rep->cause != NPF_XC_UNKNOWN || !x->ok)
		return;
	for (size_t p = 0; p < rep->n_procs; p++) {
		const char *addr = rep->procs[p].peer_addr;

		if (!addr[0])
			continue;
		json_array_foreach(json_object_get(x->check, "links"), i, l)
		{
			const char *o = js(l, "fwd"), *d = js(l, "fwd_detail");

			if (!same_ip(js(l, "peer_addr"), addr))
				continue;
			if (o && strcmp(o, "ok") == 0) {
				o = js(l, "rev");
				d = js(l, "rev_detail");
			}
			for (size_t m = 0; o && m < sizeof(map) / sizeof(map[0]); m++) {
				if (strcmp(o, map[m].outcome) != 0)
					continue;
				rep->cause = map[m].cause;
				snprintf(rep->subject_addr, sizeof(rep->subject_addr), "%s", addr);
				snprintf(rep->subject_host, sizeof(rep->subject_host), "%s",
					 js(l, "peer") ? js(l, "peer") : "");
				snprintf(rep->subject_if, sizeof(rep->subject_if), "%s",
					 js(l, "peer_if") ? js(l, "peer_if") : "");
				snprintf(rep->summary, sizeof(rep->summary),
					 "the job's connects to %s (%s) failed; the daemon's check "
					 "of that "
					 "path: %s: %s%s%s",
					 addr, rep->subject_host, o, map[m].what,
					 d && *d ? ": " : "", d ? d : "");
				snprintf(rep->fix_hint, sizeof(rep->fix_hint),
					 "use a network that works to every peer (the published "
					 "environment), or repair that path");
				x->cause_from_daemon = true;
				x->confirmed = true;
				return;
			}
		}
	}
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
		       uint32_t max_age_ms, uint32_t timeout_ms, const struct npf_xp_report *rep)
{
	struct npf_api_request req = {
	    .type = NPF_API_REQ_CHECK, .max_age_ms = max_age_ms, .timeout_ms = timeout_ms};
	json_t *vj;

	x->findings = json_array();
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
	x->check = json_object_get(x->reply, "check");
	vj = json_object_get(x->check, "verdict");
	x->verdict = js(vj, "verdict");
	x->summary = js(vj, "summary");
	if (!json_is_object(x->check) || !x->verdict) {
		snprintf(x->error, sizeof(x->error), "malformed check in the daemon's reply");
		x->check = NULL;
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
		if (js(x->env_reply, "verdict") && strcmp(js(x->env_reply, "verdict"), "ok") == 0) {
			x->env_text = js(x->env_reply, "text");
			x->variables = json_object_get(x->env_reply, "variables");
		}
		x->error[0] = '\0';
	}
	npf_api_request_clear(&req);
	crosscheck_findings(x, rep);
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
	       x->cause_from_daemon ? " (from the daemon's check)" : "",
	       rep->summary[0] ? rep->summary : "no failure and no network cause in the log");
	if (rep->first_proc >= 0) {
		const struct npf_xp_proc *pr = &rep->procs[rep->first_proc];

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
		json_array_foreach(x->findings, i, v)
		{
			fputs("daemon: ", stdout);
			cli_put_clean(stdout, json_string_value(v));
			fputc('\n', stdout);
		}
	}
	if (x->ok && x->env_text && rep->cause != NPF_XC_NONE) {
		printf("fix: the environment the daemon publishes (netpreflight env):\n");
		put_assignments(stdout, x->env_text, "  ");
	} else if (x->ok && x->drain[0]) {
		printf("fix: drain %s (", x->drain);
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
		xc =
		    json_pack("{s:s, s:O, s:s?, s:s?, s:O, s:b, s:b, s:b, s:s?, s:O?, s:s?}",
			      "self", js(x->check, "self") ? js(x->check, "self") : "",
			      "started_unix_ms", json_object_get(x->check, "started_unix_ms"),
			      "verdict", x->verdict, "summary", x->summary, "findings", x->findings,
			      "confirmed", x->confirmed, "cause_from_daemon", x->cause_from_daemon,
			      "env_differs", x->env_differs, "env_text", x->env_text, "env",
			      x->variables, "drain", x->drain[0] ? x->drain : NULL);
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
	fprintf(f, "usage: netpreflight [--socket PATH] explain [--nodes HOSTLIST] [--no-daemon] "
		   "[--max-age S] [--timeout S] [--node-env] [--verbose] [--json] [FILE...]\n");
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
		upgrade_from_daemon(&rep, &x);
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
	rc = rep.cause == NPF_XC_NONE || rep.cause == NPF_XC_UNKNOWN ? CLI_EXIT_FAIL : CLI_EXIT_OK;
out:
	json_decref(x.findings);
	json_decref(x.reply);
	json_decref(x.env_reply);
	npf_xp_report_clear(&rep);
	free(in.p);
	return rc;
}
