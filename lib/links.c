// SPDX-License-Identifier: MIT
/* Summarises raw forward/reverse paths into per-(interface, peer) links. */
#include "links.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"

/* Details are for humans: cutting a long one is fine, so no truncation checks. */
__attribute__((format(printf, 3, 4))) static void fmt(char *buf, size_t sz, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, sz, f, ap);
	va_end(ap);
}

static bool better(enum npf_outcome o, uint32_t rtt, enum npf_outcome best, uint32_t best_rtt)
{
	if (o != best)
		return o < best;
	return rtt && (!best_rtt || rtt < best_rtt);
}

/* The peer's candidate that sits in one of our subnets on `ifname`, and the
 * first such subnet of ours (for the "no address on" detail). */
static const struct npf_candidate *peer_on_net(const struct npf_node *self,
					       const struct npf_node *peer, const char *ifname,
					       const struct npf_candidate **our_first, size_t skip)
{
	*our_first = NULL;
	for (size_t i = 0; i < self->n_cands; i++) {
		const struct npf_candidate *c = &self->cands[i];

		if (strcmp(c->ifname, ifname) != 0)
			continue;
		if (!*our_first)
			*our_first = c;
		for (size_t j = 0; j < peer->n_cands; j++) {
			if (!npf_addr_same_subnet(&c->addr, &peer->cands[j].addr, c->addr.prefixlen))
				continue;
			if (skip-- == 0)
				return &peer->cands[j];
		}
	}
	return NULL;
}

static void subnet_str(const struct npf_addr *a, char *buf, size_t sz)
{
	struct npf_addr net = *a;
	unsigned int max = a->family == AF_INET ? 32 : 128, p = a->prefixlen;
	char txt[64];

	if (p > max)
		p = max;
	for (unsigned int bit = p; bit < max; bit++)
		net.addr[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
	fmt(buf, sz, "%s/%u", npf_addr_str(&net, txt, sizeof(txt)), p);
}

static void summarise_fwd(const struct npf_check *chk, int p, const char *ifname,
			  struct npf_link *l)
{
	const struct npf_node *self = &chk->nodes[0], *peer = &chk->nodes[p];
	const struct npf_candidate *ours = NULL, *pc;
	bool found = false;

	l->fwd = NPF_OUT__COUNT;
	for (size_t i = 0; i < chk->n_paths; i++) {
		const struct npf_path *ph = &chk->paths[i];

		if (ph->peer != p || ph->dir != NPF_DIR_FORWARD || strcmp(ph->local_if, ifname) != 0)
			continue;
		if (found && !better(ph->outcome, ph->rtt_us, l->fwd, l->fwd_rtt_us))
			continue;
		found = true;
		l->fwd = ph->outcome;
		l->fwd_rtt_us = ph->rtt_us;
		l->peer_addr = ph->peer_addr;
		fmt(l->peer_if, sizeof(l->peer_if), "%s", ph->peer_if);
		fmt(l->fwd_detail, sizeof(l->fwd_detail), "%s", ph->detail);
	}
	/* The peer's addresses on our networks that the kernel routed elsewhere. */
	for (size_t skip = 0; (pc = peer_on_net(self, peer, ifname, &ours, skip)); skip++) {
		for (size_t i = 0; i < chk->n_paths; i++) {
			const struct npf_path *ph = &chk->paths[i];
			char a[64];

			if (ph->peer != p || ph->dir != NPF_DIR_FORWARD ||
			    !npf_addr_equal(&ph->peer_addr, &pc->addr) || !ph->local_if[0] ||
			    strcmp(ph->local_if, ifname) == 0)
				continue;
			if (found && !better(NPF_OUT_WRONG_EGRESS, 0, l->fwd, l->fwd_rtt_us))
				continue;
			found = true;
			l->fwd = NPF_OUT_WRONG_EGRESS;
			l->fwd_rtt_us = 0;
			l->peer_addr = pc->addr;
			fmt(l->peer_if, sizeof(l->peer_if), "%s", pc->ifname);
			fmt(l->fwd_detail, sizeof(l->fwd_detail), "%s left via %s",
				 npf_addr_str(&pc->addr, a, sizeof(a)), ph->local_if);
		}
		if (!l->peer_if[0])
			fmt(l->peer_if, sizeof(l->peer_if), "%s", pc->ifname);
	}
	if (found)
		return;
	pc = peer_on_net(self, peer, ifname, &ours, 0);
	if (pc) {
		/* The peer is on this network but no probe toward it used it. */
		l->fwd = NPF_OUT_NOT_PROBED;
		l->peer_addr = pc->addr;
		fmt(l->peer_if, sizeof(l->peer_if), "%s", pc->ifname);
		fmt(l->fwd_detail, sizeof(l->fwd_detail), "no probe left via %s", ifname);
		return;
	}
	l->fwd = NPF_OUT_UNREACHABLE;
	if (ours) {
		char net[80];

		subnet_str(&ours->addr, net, sizeof(net));
		fmt(l->fwd_detail, sizeof(l->fwd_detail), "%s has no address on %s",
			 peer->name, net);
	} else {
		fmt(l->fwd_detail, sizeof(l->fwd_detail), "%s has no address on %s's networks",
			 peer->name, ifname);
	}
}

static void summarise_rev(const struct npf_check *chk, int p, const char *ifname,
			  struct npf_link *l)
{
	bool found = false;

	l->rev = NPF_OUT_NOT_PROBED;
	fmt(l->rev_detail, sizeof(l->rev_detail), "no reverse probe");
	for (size_t i = 0; i < chk->n_paths; i++) {
		const struct npf_path *ph = &chk->paths[i];

		if (ph->peer != p || ph->dir != NPF_DIR_REVERSE || strcmp(ph->local_if, ifname) != 0)
			continue;
		if (found && !better(ph->outcome, ph->rtt_us, l->rev, l->rev_rtt_us))
			continue;
		found = true;
		l->rev = ph->outcome;
		l->rev_rtt_us = ph->rtt_us;
		fmt(l->rev_detail, sizeof(l->rev_detail), "%s", ph->detail);
	}
}

int npf_check_summarise(struct npf_check *chk)
{
	const struct npf_node *self;
	struct npf_link *links;
	size_t n_if = 0, n = 0;
	const char **ifs;

	if (!chk || !chk->nodes || chk->n_nodes == 0)
		return -EINVAL;
	free(chk->links);
	chk->links = NULL;
	chk->n_links = 0;
	self = &chk->nodes[0];
	ifs = calloc(self->n_cands + 1, sizeof(*ifs));
	if (!ifs)
		return -ENOMEM;
	for (size_t i = 0; i < self->n_cands; i++) {
		bool dup = false;

		for (size_t j = 0; j < n_if; j++)
			if (strcmp(ifs[j], self->cands[i].ifname) == 0)
				dup = true;
		if (!dup)
			ifs[n_if++] = self->cands[i].ifname;
	}
	links = calloc(n_if * (chk->n_nodes - 1) + 1, sizeof(*links));
	if (!links) {
		free(ifs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_if; i++) {
		for (size_t p = 1; p < chk->n_nodes; p++) {
			const struct npf_node *peer = &chk->nodes[p];
			struct npf_link *l = &links[n++];

			fmt(l->ifname, sizeof(l->ifname), "%s", ifs[i]);
			l->peer = (int)p;
			if (!peer->probed) {
				l->fwd = l->rev = NPF_OUT_NOT_PROBED;
				fmt(l->fwd_detail, sizeof(l->fwd_detail), "outside the probe plan");
				fmt(l->rev_detail, sizeof(l->rev_detail), "outside the probe plan");
				continue;
			}
			if (!peer->available) {
				l->fwd = l->rev = NPF_OUT_PEER_UNAVAILABLE;
				fmt(l->fwd_detail, sizeof(l->fwd_detail), "%s", peer->error);
				fmt(l->rev_detail, sizeof(l->rev_detail), "%s", peer->error);
				continue;
			}
			summarise_fwd(chk, (int)p, ifs[i], l);
			summarise_rev(chk, (int)p, ifs[i], l);
		}
	}
	free(ifs);
	chk->links = links;
	chk->n_links = n;
	return (int)n;
}
