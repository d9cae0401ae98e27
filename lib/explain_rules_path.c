// SPDX-License-Identifier: MIT
/* `explain` rules about the path and the fabric: connects refused or dropped, a
 * rendezvous address that is no host's, an MTU black hole, RoCE GIDs, IB MTU, the IB-to-socket
 * fallback. Each is a pure test (lib/explain_diagnose.c has the table). */
#include <stdio.h>
#include <string.h>

#include "explain_internal.h"

bool xp_test_bad_address(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	const struct npf_xp_line *l = xp_line_of(e, NPF_XL_UNRESOLVED, -2, NULL);
	const char *what = NULL;

	if (!l) {
		l = xp_line_of(e, NPF_XL_GLOO_NOADDR, -2, NULL);
		if (l && !xp_looks_hostname(l->addr))
			l = NULL;
	}
	for (size_t i = 0; i < e->n_lines && !l; i++)
		if (xp_is_connect_kind(e->lines[i].kind) &&
		    (what = xp_impossible_addr(e->lines[i].addr)) != NULL)
			l = &e->lines[i];
	if (!l)
		return false;
	xp_cite(f, l);
	xp_about(f, NULL, xp_unmapped(l->addr), NULL);
	if (what)
		snprintf(f->summary, sizeof(f->summary),
			 "the job connects to %s, which is %s, no host's address: the rendezvous "
			 "address (MASTER_ADDR) is wrong",
			 f->addr, what);
	else
		snprintf(f->summary, sizeof(f->summary),
			 "the name %s does not resolve on %s: the rendezvous address "
			 "(MASTER_ADDR, the host name) cannot be reached",
			 xp_or_else(f->addr, "given"),
			 l->proc >= 0 && r->procs[l->proc].host[0] ? r->procs[l->proc].host
								   : "a node");
	return true;
}

static bool r_connect(const struct xp_evidence *e, struct xp_finding *f, bool refused)
{
	const struct npf_xp_report *r = e->rep;

	for (size_t i = 0; i < e->n_lines; i++) {
		const struct npf_xp_line *l = &e->lines[i];
		const char *h;

		if (!xp_is_connect_kind(l->kind))
			continue;
		if (refused ? (l->err != NPF_XE_REFUSED && l->err != NPF_XE_NOROUTE)
			    : l->err != NPF_XE_TIMEOUT)
			continue;
		/* A connect to loopback, link-local or a bridge address failed because of what
		 * was bound there (the rules above), not because of a firewall on the path. */
		if (l->addr[0] ? !xp_plausible_peer(e, l->addr) : !xp_all_bound_plausible(e))
			continue;
		xp_cite(f, l);
		h = xp_host_of_addr(e, l->addr);
		if (h[0]) {
			for (size_t k = 0; k < r->n_procs; k++)
				if (strcmp(r->procs[k].host, h) == 0 &&
				    strcmp(r->procs[k].boot_addr, l->addr) == 0) {
					xp_cite(f, xp_line_of(e, NPF_XL_BOOTSTRAP, (int)k, NULL));
					break;
				}
		}
		xp_about(f, NULL, l->addr, h);
		snprintf(f->summary, sizeof(f->summary),
			 refused ? "connections to %s%s%s%s were %s: a firewall rejects them (or "
				   "nothing listens there)"
				 : "connections to %s%s%s%s timed out: packets are dropped on the "
				   "way (a silent firewall or a missing path)",
			 l->addr[0] ? l->addr : "a peer", h[0] ? " (" : "", h, h[0] ? ")" : "",
			 l->err == NPF_XE_NOROUTE ? "rejected (no route to host)" : "refused");
		return true;
	}
	return false;
}

bool xp_test_refused(const struct xp_evidence *e, struct xp_finding *f)
{
	return r_connect(e, f, true);
}

bool xp_test_silent(const struct xp_evidence *e, struct xp_finding *f)
{
	return r_connect(e, f, false);
}

bool xp_test_mtu(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	const struct npf_xp_line *w = xp_line_of(e, NPF_XL_WATCHDOG, -2, NULL);
	const struct npf_xp_line *ok = xp_line_of(e, NPF_XL_INIT_DONE, -2, NULL);

	if (!ok)
		ok = xp_line_of(e, NPF_XL_CHANNEL, -2, NULL);
	/* Connected (init complete or channels over NET), then collectives time out, and no
	 * connect ever failed: the small packets passed and the large ones did not. */
	for (size_t i = 0; i < r->n_procs; i++)
		if (r->procs[i].primary)
			return false;
	if (!w || !ok)
		return false;
	xp_cite(f, ok);
	xp_cite(f, w);
	xp_about(f, NULL, NULL, NULL);
	snprintf(f->summary, sizeof(f->summary),
		 "every connection was set up, then the first collective hung until the watchdog "
		 "fired: full-size packets are lost on the path (MTU black hole suspected)");
	return true;
}

bool xp_test_gid_forced(const struct xp_evidence *e, struct xp_finding *f)
{
	int who = -1;
	const char *gi = xp_env_any(e, "NCCL_IB_GID_INDEX", &who);
	const struct npf_xp_line *l = xp_line_of(e, NPF_XL_IB_GID_HINT, -2, NULL);

	if (!l)
		l = xp_line_of(e, NPF_XL_IB_MODIFY_QP, -2, NULL);
	if (!l && gi)
		l = xp_line_of(e, NPF_XL_IB_COMPLETION, -2, NULL);
	if (!l || (!gi && l->kind != NPF_XL_IB_GID_HINT))
		return false;
	xp_cite(f, xp_line_of(e, NPF_XL_ENV, -2, "NCCL_IB_GID_INDEX"));
	xp_cite(f, l);
	xp_about(f, NULL, NULL, xp_host_of(e, l->proc));
	if (gi)
		snprintf(f->summary, sizeof(f->summary),
			 "NCCL_IB_GID_INDEX=%s forces one GID index on every RoCE port, and it is "
			 "wrong on at least one",
			 gi);
	else
		snprintf(f->summary, sizeof(f->summary),
			 "NCCL's own hint: the QP setup failed the way a forced wrong "
			 "NCCL_IB_GID_INDEX makes it fail (set in a file such as /etc/nccl.conf?)");
	return true;
}

/* An RDMA failure line, the NET/IB line of its process, and its node as the subject. */
static void cite_ib_failure(const struct xp_evidence *e, struct xp_finding *f,
			    const struct npf_xp_line *l)
{
	xp_cite(f, l);
	if (l->proc >= 0)
		xp_cite(f, xp_line_of(e, NPF_XL_NET_IB, l->proc, NULL));
	xp_about(f, NULL, NULL, xp_host_of(e, l->proc));
}

bool xp_test_gid(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *l = NULL;

	for (size_t i = 0; i < e->n_lines && !l; i++)
		if (e->lines[i].kind == NPF_XL_IB_COMPLETION &&
		    (strstr(e->lines[i].text, "(12)") || strstr(e->lines[i].text, "status=12") ||
		     strstr(e->lines[i].text, "error 12") || strstr(e->lines[i].text, "RETRY_EXC")))
			l = &e->lines[i];
	if (!l)
		return false;
	cite_ib_failure(e, f, l);
	snprintf(f->summary, sizeof(f->summary),
		 "RoCE completion status 12 (retry exceeded): the TCP exchange worked but the RDMA "
		 "path did not%s",
		 strstr(l->text, "fe80:") ? ", and the GID used is link-local (fe80::)"
					  : " (a link-local or RoCE v1 GID, VLAN/PFC or routing)");
	return true;
}

bool xp_test_ib_mtu(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *l = xp_line_of(e, NPF_XL_IB_ASYNC, -2, "access violation");

	if (!l)
		l = xp_line_of(e, NPF_XL_IB_COMPLETION, -2, "LOC_LEN");
	if (!l)
		return false;
	cite_ib_failure(e, f, l);
	snprintf(f->summary, sizeof(f->summary),
		 "an IB/RoCE queue pair failed with a local access/length error on %s: the ports' "
		 "MTUs differ between nodes (NCCL >= 2.20.3 no longer lowers it to the peer's)",
		 xp_or_else(f->host, "a node"));
	return true;
}

bool xp_test_ib_fallback(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *n = xp_line_of(e, NPF_XL_IB_NONE, -2, NULL);
	const struct npf_xp_line *u = xp_line_of(e, NPF_XL_USING_NET, -2, "Socket");

	if (!n || !u)
		return false;
	xp_cite(f, n);
	xp_cite(f, u);
	xp_cite(f, xp_line_of(e, NPF_XL_ENV, -2, "NCCL_IB_HCA"));
	xp_about(f, NULL, NULL, xp_host_of(e, n->proc));
	snprintf(f->summary, sizeof(f->summary),
		 "NET/IB found no usable device on %s and NCCL silently fell back to TCP sockets",
		 xp_or_else(f->host, "a node"));
	return true;
}
