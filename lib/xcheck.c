// SPDX-License-Identifier: MIT
/* The cross-check of `explain` (docs/explain.md): a diagnosis from the log joined with the
 * daemon's check of the same nodes (the check object of docs/protocol.md) and the environment it
 * publishes. Pure: JSON in, findings out; the CLI does the asking. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "explain.h"

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

static void finding(struct npf_xp_xcheck *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void finding(struct npf_xp_xcheck *x, const char *fmt, ...)
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
static bool describe_iface(struct npf_xp_xcheck *x, const char *who, const char *ifname,
			   const char *addr, const char *when)
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
static bool describe_peer(struct npf_xp_xcheck *x, const char *who, const char *node,
			  const char *ifname, const char *addr, const char *when)
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

static void crosscheck_findings(struct npf_xp_xcheck *x, const struct npf_xp_report *rep)
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
	 * node-specific cause (a path that stalls/refuses) names that same peer. A published
	 * verdict (ok, degraded) drains nobody. */
	if (any_fail && one_peer && fail_peer && x->verdict &&
	    !npf_verdict_name_publishes(x->verdict))
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
static void upgrade_from_daemon(struct npf_xp_report *rep, struct npf_xp_xcheck *x)
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

	if (rep->cause != NPF_XC_UNKNOWN || !x->check)
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

int npf_xp_crosscheck(struct npf_xp_report *rep, struct npf_xp_xcheck *x)
{
	x->findings = json_array();
	if (!x->findings)
		return -ENOMEM;
	x->verdict = js(json_object_get(x->check, "verdict"), "verdict");
	crosscheck_findings(x, rep);
	upgrade_from_daemon(rep, x);
	return 0;
}

void npf_xp_xcheck_clear(struct npf_xp_xcheck *x)
{
	json_decref(x->findings);
	memset(x, 0, sizeof(*x));
}
