// SPDX-License-Identifier: MIT
/* First-stage verdict: pure reduction of a check's links to ok / fail / unknown. */
#include "verdict.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct npf_link *find_link(const struct npf_check *c, const char *ifname, int peer)
{
	for (size_t i = 0; i < c->n_links; i++)
		if (c->links[i].peer == peer && strcmp(c->links[i].ifname, ifname) == 0)
			return &c->links[i];
	return NULL;
}

static void set_fail(struct npf_verdict_iface *vi, int peer, enum npf_direction dir,
		     enum npf_outcome o, const char *detail)
{
	if (vi->fail_peer >= 0)
		return;
	vi->fail_peer = peer;
	vi->fail_dir = dir;
	vi->fail_outcome = o;
	snprintf(vi->fail_detail, sizeof(vi->fail_detail), "%s", detail ? detail : "");
}

static void judge_iface(const struct npf_check *c, struct npf_verdict_iface *vi)
{
	for (size_t p = 1; p < c->n_nodes; p++) {
		const struct npf_node *n = &c->nodes[p];
		const struct npf_link *l = find_link(c, vi->ifname, (int)p);

		if (!n->available) {
			vi->unproven = true;
			continue;
		}
		if (!l) {
			/* A sparse plan leaves pairs out on purpose; a full mesh must cover all. */
			if (!c->sparse)
				set_fail(vi, (int)p, NPF_DIR_FORWARD, NPF_OUT_NOT_PROBED, "no result");
			continue;
		}
		if (c->sparse && l->fwd == NPF_OUT_NOT_PROBED && l->rev == NPF_OUT_NOT_PROBED)
			continue;
		if (l->fwd == NPF_OUT_OK && l->rev == NPF_OUT_OK) {
			vi->n_ok++;
			continue;
		}
		if (l->fwd != NPF_OUT_OK)
			set_fail(vi, (int)p, NPF_DIR_FORWARD, l->fwd, l->fwd_detail);
		else
			set_fail(vi, (int)p, NPF_DIR_REVERSE, l->rev, l->rev_detail);
	}
	vi->works = vi->fail_peer < 0 && vi->n_ok > 0 && !vi->unproven;
}

int npf_verdict_compute(const struct npf_check *c, struct npf_verdict_report *out)
{
	bool any_works = false;

	memset(out, 0, sizeof(*out));
	out->n_peers = c->n_nodes > 0 ? c->n_nodes - 1 : 0;
	for (size_t p = 1; p < c->n_nodes; p++)
		if (!c->nodes[p].available)
			out->n_unavailable++;
	if (c->n_links) {
		out->ifaces = calloc(c->n_links, sizeof(*out->ifaces));
		if (!out->ifaces)
			return -ENOMEM;
	}
	for (size_t i = 0; i < c->n_links; i++) {
		const char *name = c->links[i].ifname;
		bool seen = false;

		for (size_t k = 0; k < out->n_ifaces && !seen; k++)
			seen = strcmp(out->ifaces[k].ifname, name) == 0;
		if (seen)
			continue;
		struct npf_verdict_iface *vi = &out->ifaces[out->n_ifaces++];

		snprintf(vi->ifname, sizeof(vi->ifname), "%s", name);
		vi->fail_peer = -1;
		judge_iface(c, vi);
		any_works |= vi->works;
	}
	if (out->n_peers == 0 || out->n_unavailable > 0)
		out->verdict = NPF_VERDICT_UNKNOWN;
	else
		out->verdict = any_works ? NPF_VERDICT_OK : NPF_VERDICT_FAIL;
	return 0;
}

void npf_verdict_report_clear(struct npf_verdict_report *out)
{
	if (!out)
		return;
	free(out->ifaces);
	memset(out, 0, sizeof(*out));
}

/* snprintf into a running cursor; keeps counting past the end like snprintf. */
static void __attribute__((format(printf, 4, 5)))
cat(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*pos < len ? buf + *pos : NULL, *pos < len ? len - *pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n;
}

static const char *dir_short(enum npf_direction d)
{
	return d == NPF_DIR_REVERSE ? "rev" : "fwd";
}

int npf_verdict_format(const struct npf_verdict_report *r, const struct npf_check *c, char *buf,
		       size_t len)
{
	size_t pos = 0, n_works = 0;
	const char *sep = "";

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < r->n_ifaces; i++)
		n_works += r->ifaces[i].works;

	if (r->n_peers == 0) {
		cat(buf, len, &pos, "UNKNOWN — no peers to check");
		return (int)pos;
	}
	if (r->verdict == NPF_VERDICT_OK) {
		cat(buf, len, &pos, "ok — ");
		for (size_t i = 0; i < r->n_ifaces; i++) {
			if (!r->ifaces[i].works)
				continue;
			cat(buf, len, &pos, "%s%s", sep, r->ifaces[i].ifname);
			sep = ", ";
		}
		cat(buf, len, &pos, " work%s to and from %zu peer%s", n_works == 1 ? "s" : "",
		    r->n_peers, r->n_peers == 1 ? "" : "s");
		return (int)pos;
	}

	cat(buf, len, &pos, "%s — ", r->verdict == NPF_VERDICT_FAIL ? "FAIL" : "UNKNOWN");
	if (r->n_unavailable) {
		for (size_t p = 1; p < c->n_nodes; p++) {
			if (c->nodes[p].available)
				continue;
			cat(buf, len, &pos, "%s%s: peer-unavailable%s%s%s", sep, c->nodes[p].name,
			    c->nodes[p].error[0] ? " (" : "", c->nodes[p].error,
			    c->nodes[p].error[0] ? ")" : "");
			sep = "; ";
		}
	}
	for (size_t i = 0; i < r->n_ifaces; i++) {
		const struct npf_verdict_iface *vi = &r->ifaces[i];

		if (vi->fail_peer < 0 || (size_t)vi->fail_peer >= c->n_nodes) {
			if (vi->unproven && vi->n_ok > 0) {
				cat(buf, len, &pos, "%s%s ok with the %zu available peer%s", sep,
				    vi->ifname, vi->n_ok, vi->n_ok == 1 ? "" : "s");
				sep = "; ";
			}
			continue;
		}
		cat(buf, len, &pos, "%s%s: %s %s (%s)", sep, c->nodes[vi->fail_peer].name, vi->ifname,
		    npf_outcome_name(vi->fail_outcome), dir_short(vi->fail_dir));
		sep = "; ";
	}
	if (!*sep)
		cat(buf, len, &pos, "no interface was probed");
	return (int)pos;
}
