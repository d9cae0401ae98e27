// SPDX-License-Identifier: MIT
/* Evidence: the check's links and paths reduced per (our interface, network of the job),
 * every pair through the one reducer of lib/pairstate. */
#include "decide.h"
#include "gid.h"
#include "ncclmatch.h"

#include <errno.h>
#include <stdlib.h>

/* ---- evidence ------------------------------------------------------------------------ */

int dec_build_indexes(struct ctx *c)
{
	const struct npf_check *chk = c->chk;
	size_t nn = chk->n_nodes, ni = c->inv->n_ifaces;

	c->link_idx = malloc((ni ? ni : 1) * nn * sizeof(*c->link_idx));
	c->path_off = calloc(nn + 1, sizeof(*c->path_off));
	c->path_idx = malloc((chk->n_paths ? chk->n_paths : 1) * sizeof(*c->path_idx));
	c->peer_fail = calloc(nn, sizeof(*c->peer_fail));
	if (!c->link_idx || !c->path_off || !c->path_idx || !c->peer_fail)
		return -ENOMEM;
	for (size_t i = 0; i < ni * nn; i++)
		c->link_idx[i] = -1;
	for (size_t l = 0; l < chk->n_links; l++) {
		const struct npf_link *lk = &chk->links[l];
		const struct npf_iface *ifc;
		size_t at;

		if (lk->peer <= 0 || (size_t)lk->peer >= nn)
			continue;
		ifc = npf_inventory_find_name(c->inv, lk->ifname);
		if (!ifc)
			continue;
		at = (size_t)(ifc - c->inv->ifaces) * nn + (size_t)lk->peer;
		/* The first link for a pair wins; the summariser makes one. */
		if (c->link_idx[at] < 0)
			c->link_idx[at] = (int)l;
	}
	/* Paths bucketed by peer, so splitting a link per network stays linear. */
	for (size_t p = 0; p < chk->n_paths; p++)
		if (chk->paths[p].peer > 0 && (size_t)chk->paths[p].peer < nn)
			c->path_off[chk->paths[p].peer + 1]++;
	for (size_t k = 0; k < nn; k++)
		c->path_off[k + 1] += c->path_off[k];
	{
		size_t *fill = calloc(nn, sizeof(*fill));

		if (!fill)
			return -ENOMEM;
		for (size_t p = 0; p < chk->n_paths; p++) {
			int k = chk->paths[p].peer;

			if (k > 0 && (size_t)k < nn)
				c->path_idx[c->path_off[k] + fill[k]++] = p;
		}
		free(fill);
	}
	return 0;
}

/* An interface holding addresses on several networks gets one npf_link per peer; the
 * raw paths tell the networks apart, so a broken IPv4 network is not hidden behind a
 * working IPv6 one on the same interface. Returns false when no path covers it. */
static bool split_from_paths(const struct ctx *c, const struct npf_iface *ifc, const struct net *n,
			     int peer, enum npf_outcome *fwd, enum npf_outcome *rev, char *detail,
			     size_t dlen)
{
	const struct npf_check *chk = c->chk;
	enum npf_outcome f = NPF_OUT__COUNT, r = NPF_OUT__COUNT;
	const char *fd = "", *rd = "";

	for (size_t i = c->path_off[peer]; i < c->path_off[peer + 1]; i++) {
		const struct npf_path *p = &chk->paths[c->path_idx[i]];
		enum npf_outcome o = (unsigned int)p->outcome < NPF_OUT__COUNT ? p->outcome :
										NPF_OUT_UNREACHABLE;

		if (p->dir == NPF_DIR_FORWARD && in_net(&p->peer_addr, n)) {
			/* The kernel sent it out elsewhere: NCCL's traffic would too. */
			if (o == NPF_OUT_OK && strncmp(p->local_if, ifc->name, IFNAMSIZ) != 0)
				o = NPF_OUT_WRONG_EGRESS;
			if (o < f) {
				f = o;
				fd = p->detail;
			}
		} else if (p->dir == NPF_DIR_REVERSE && in_net(&p->local_addr, n)) {
			if (o < r) {
				r = o;
				rd = p->detail;
			}
		}
	}
	if (f == NPF_OUT__COUNT && r == NPF_OUT__COUNT)
		return false;
	*fwd = f == NPF_OUT__COUNT ? NPF_OUT_NOT_PROBED : f;
	*rev = r == NPF_OUT__COUNT ? NPF_OUT_NOT_PROBED : r;
	copy_str(detail, dlen, npf_outcome_failed(*fwd) ? fd : rd);
	return true;
}

static size_t iface_net_count(const struct ctx *c, size_t i)
{
	size_t n = 0;

	for (size_t k = 0; k < c->n_nets; k++)
		if (c->ev[i * c->n_nets + k].state != EST_ABSENT)
			n++;
	return n;
}

/* In a sparse plan, a peer this node did not plan to probe (nor did it plan us: the plan
 * is symmetric, docs/protocol.md). */
bool dec_outside_plan(const struct ctx *c, const struct npf_node *nd)
{
	return c->sparse && !nd->probed;
}

/* Fills e for our interface i on network n against every peer. */
bool dec_iface_multi(const struct ctx *c, size_t i)
{
	return iface_net_count(c, i) > 1;
}

struct npf_pair dec_pair(const struct ctx *c, size_t i, const struct net *n, bool multi, size_t k,
			 char *detail, size_t dlen)
{
	const struct npf_check *chk = c->chk;
	const struct npf_iface *ifc = &c->inv->ifaces[i];
	const struct npf_node *nd = &chk->nodes[k];
	enum npf_outcome fwd = NPF_OUT_NOT_PROBED, rev = NPF_OUT_NOT_PROBED;
	int li = c->link_idx[i * chk->n_nodes + k];
	bool have = false;

	/* The job check drains a suspect by its own fail: the pair is no evidence about the
	 * networks the rest of the job will use (docs/decision.md §10). */
	if (c->suspect && c->suspect[k]) {
		copy_str(detail, dlen, "a suspect of the job check");
		return (struct npf_pair){
		    .state = NPF_PAIR_OUTSIDE, .dir = NPF_DIR_FORWARD, .outcome = NPF_OUT_OK};
	}
	if (!nd->available) {
		copy_str(detail, dlen, nd->error);
	} else if (multi && split_from_paths(c, ifc, n, (int)k, &fwd, &rev, detail, dlen)) {
		have = true;
	} else if (li >= 0) {
		const struct npf_link *lk = &chk->links[li];

		have = true;
		fwd = lk->fwd;
		rev = lk->rev;
		copy_str(detail, dlen,
			 npf_outcome_failed(fwd) || (!npf_outcome_failed(rev) && fwd != NPF_OUT_OK) ?
				 lk->fwd_detail :
				 lk->rev_detail);
	}
	/* The one pair rule shared with lib/verdict. */
	return npf_pair_reduce(c->sparse, nd, have, fwd, rev);
}

static void evaluate(struct ctx *c, size_t i, const struct net *n, struct eval *e)
{
	const struct npf_check *chk = c->chk;
	bool multi = dec_iface_multi(c, i);
	int first_unknown = -1;
	enum npf_outcome unk_out = NPF_OUT_NOT_PROBED;
	enum npf_direction unk_dir = NPF_DIR_FORWARD;
	char unk_detail[96] = "";

	e->peer = -1;
	e->outcome = NPF_OUT_OK;
	e->dir = NPF_DIR_FORWARD;
	e->detail[0] = '\0';
	e->n_ok = e->n_fail = e->n_unknown = 0;
	for (size_t k = 1; k < chk->n_nodes; k++) {
		char detail[96] = "";
		struct npf_pair ps = dec_pair(c, i, n, multi, k, detail, sizeof(detail));

		switch (ps.state) {
		case NPF_PAIR_OUTSIDE:
			break;
		case NPF_PAIR_OK:
			e->n_ok++;
			break;
		case NPF_PAIR_FAIL:
			c->peer_fail[k]++;
			if (e->n_fail++ == 0) {
				e->peer = (int)k;
				e->dir = ps.dir;
				e->outcome = ps.outcome;
				copy_str(e->detail, sizeof(e->detail), detail);
			}
			break;
		case NPF_PAIR_UNKNOWN:
			if (e->n_unknown++ == 0) {
				first_unknown = (int)k;
				unk_dir = ps.dir;
				unk_out = ps.outcome;
				copy_str(unk_detail, sizeof(unk_detail), detail);
			}
			break;
		}
	}
	if (e->n_fail) {
		e->state = EST_FAIL;
	} else if (e->n_unknown || e->n_ok == 0) {
		e->state = EST_UNKNOWN;
		e->peer = first_unknown;
		e->outcome = unk_out;
		e->dir = unk_dir;
		copy_str(e->detail, sizeof(e->detail),
			 first_unknown < 0 ? "no peer was probed on this network" : unk_detail);
	} else {
		e->state = EST_WORKS;
	}
}

bool dec_announced(const struct ctx *c, const struct npf_iface *ifc, const struct npf_addr *a)
{
	const struct npf_node *self = &c->chk->nodes[0];

	if (self->n_cands == 0)
		return true;
	for (size_t j = 0; j < self->n_cands; j++)
		if (strncmp(self->cands[j].ifname, ifc->name, IFNAMSIZ) == 0 &&
		    npf_addr_equal(&self->cands[j].addr, a))
			return true;
	return false;
}

void dec_evaluate_all(struct ctx *c)
{
	const struct npf_inventory *inv = c->inv;

	/* First mark which interface holds which network, so evaluate() knows which
	 * interfaces carry several and must split their links by path. An interface
	 * that is down or has no carrier holds none: it cannot carry the job. */
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		const struct npf_iface *ifc = &inv->ifaces[i];
		bool up = (ifc->flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING);

		for (size_t n = 0; n < c->n_nets; n++) {
			struct eval *e = &c->ev[i * c->n_nets + n];

			e->state = EST_ABSENT;
			if (iface_is_loopback(ifc) || !up)
				continue;
			for (size_t a = 0; a < ifc->n_addrs; a++)
				if (addr_usable(&ifc->addrs[a]) &&
				    in_net(&ifc->addrs[a], &c->nets[n]) &&
				    dec_announced(c, ifc, &ifc->addrs[a])) {
					e->state = EST_UNKNOWN;
					e->addr = ifc->addrs[a];
					break;
				}
		}
	}
	for (size_t i = 0; i < inv->n_ifaces; i++)
		for (size_t n = 0; n < c->n_nets; n++) {
			struct eval *e = &c->ev[i * c->n_nets + n];

			if (e->state != EST_ABSENT)
				evaluate(c, i, &c->nets[n], e);
		}
	for (size_t n = 0; n < c->n_nets; n++) {
		struct net *net = &c->nets[n];

		net->state = EST_ABSENT;
		net->ifc = -1;
		for (size_t i = 0; i < inv->n_ifaces; i++) {
			enum est s = c->ev[i * c->n_nets + n].state;

			if (s == EST_ABSENT)
				continue;
			if (net->ifc < 0 || s > net->state ||
			    (s == net->state && dec_local_cmp(c, n, i, (size_t)net->ifc) < 0)) {
				net->state = s;
				net->ifc = (int)i;
			}
		}
	}
}

/* "wrong-peer (forward) with node2: answered by node1" */
void dec_eval_text(const struct ctx *c, const struct eval *e, char *buf, size_t len)
{
	int n;

	if (e->peer < 0) {
		snprintf(buf, len, "%s", e->detail[0] ? e->detail : "no evidence");
		return;
	}
	n = snprintf(buf, len, "%s (%s) with %s", npf_outcome_name(e->outcome),
		     npf_direction_name(e->dir), node_name(c, e->peer));
	if (n >= 0 && (size_t)n < len && e->detail[0])
		snprintf(buf + n, len - (size_t)n, ": %s", e->detail);
}

/* The most telling evaluation of interface i: a working network, else the best-ranked
 * one it holds. Returns the network index or -1. */
int dec_iface_best_net(const struct ctx *c, size_t i)
{
	int best = -1;

	for (size_t n = 0; n < c->n_nets; n++) {
		enum est s = ev_at(c, i, n)->state;

		if (s == EST_ABSENT)
			continue;
		if (best < 0 || s > ev_at(c, i, (size_t)best)->state)
			best = (int)n;
	}
	return best;
}

