// SPDX-License-Identifier: MIT
/* Per-interface evidence: pure reduction of a check's links, interface by interface. */
#include "verdict.h"
#include "pairstate.h"

#include <errno.h>
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

/* Every pair goes through the one reducer (lib/pairstate.h) that the decision uses. */
static void judge_iface(const struct npf_check *c, struct npf_verdict_iface *vi)
{
	for (size_t p = 1; p < c->n_nodes; p++) {
		const struct npf_link *l = find_link(c, vi->ifname, (int)p);
		struct npf_pair ps = npf_pair_reduce(c->sparse, &c->nodes[p], l != NULL,
						     l ? l->fwd : NPF_OUT_NOT_PROBED,
						     l ? l->rev : NPF_OUT_NOT_PROBED);

		switch (ps.state) {
		case NPF_PAIR_OUTSIDE:
			break;
		case NPF_PAIR_OK:
			vi->n_ok++;
			break;
		case NPF_PAIR_UNKNOWN:
			vi->unproven = true;
			break;
		case NPF_PAIR_FAIL:
			set_fail(vi, (int)p, ps.dir, ps.outcome,
				 ps.dir == NPF_DIR_FORWARD ? l->fwd_detail : l->rev_detail);
			break;
		}
	}
	vi->works = vi->fail_peer < 0 && vi->n_ok > 0 && !vi->unproven;
}

int npf_verdict_compute(const struct npf_check *c, struct npf_verdict_report *out)
{
	memset(out, 0, sizeof(*out));
	out->n_peers = c->n_nodes > 0 ? c->n_nodes - 1 : 0;
	for (size_t p = 1; p < c->n_nodes; p++)
		if (!c->nodes[p].available && !(c->sparse && !c->nodes[p].probed))
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
	}
	return 0;
}

void npf_verdict_report_clear(struct npf_verdict_report *out)
{
	if (!out)
		return;
	free(out->ifaces);
	memset(out, 0, sizeof(*out));
}
