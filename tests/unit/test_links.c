// SPDX-License-Identifier: MIT
/* Unit tests for the per-(interface, peer) summary of a check (lib/links). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npf_test.h"

#include "links.h"
#include "wire.h"

static void cand(struct npf_node *n, const char *ifn, const char *addr, int prefix)
{
	struct npf_candidate *c = realloc(n->cands, (n->n_cands + 1) * sizeof(*c));

	assert_non_null(c);
	n->cands = c;
	c = &n->cands[n->n_cands++];
	memset(c, 0, sizeof(*c));
	snprintf(c->ifname, sizeof(c->ifname), "%s", ifn);
	assert_int_equal(npf_wire_addr_parse(addr, &c->addr), 0);
	c->addr.prefixlen = (uint8_t)prefix;
}

static void path(struct npf_check *chk, int peer, enum npf_direction dir, const char *local_if,
		 const char *addr, enum npf_outcome o, uint32_t rtt, const char *detail)
{
	struct npf_path *p = realloc(chk->paths, (chk->n_paths + 1) * sizeof(*p));

	assert_non_null(p);
	chk->paths = p;
	p = &chk->paths[chk->n_paths++];
	memset(p, 0, sizeof(*p));
	p->peer = peer;
	p->dir = dir;
	snprintf(p->local_if, sizeof(p->local_if), "%s", local_if);
	if (dir == NPF_DIR_FORWARD)
		assert_int_equal(npf_wire_addr_parse(addr, &p->peer_addr), 0);
	else
		assert_int_equal(npf_wire_addr_parse(addr, &p->local_addr), 0);
	p->outcome = o;
	p->rtt_us = rtt;
	snprintf(p->detail, sizeof(p->detail), "%s", detail);
}

static const struct npf_link *link_of(const struct npf_check *chk, const char *ifn, int peer)
{
	for (size_t i = 0; i < chk->n_links; i++)
		if (strcmp(chk->links[i].ifname, ifn) == 0 && chk->links[i].peer == peer)
			return &chk->links[i];
	fail_msg("no link %s/%d", ifn, peer);
	return NULL;
}

/* node1 (self): eth0 198.18.1.1/24, docker0 172.17.0.1/16, eth2 198.18.3.1/24,
 * eth1 198.18.2.1/24. node2 shares eth0, eth2, docker0 and 198.18.2.0/24 (routed
 * out of eth0 by a bad route). node3: eth0 and docker0. node4: down. node5: not
 * in the plan. */
static void build(struct npf_check *chk)
{
	memset(chk, 0, sizeof(*chk));
	chk->n_nodes = 5;
	chk->nodes = calloc(5, sizeof(*chk->nodes));
	assert_non_null(chk->nodes);
	strcpy(chk->nodes[0].name, "node1");
	chk->nodes[0].available = true;
	cand(&chk->nodes[0], "eth0", "198.18.1.1", 24);
	cand(&chk->nodes[0], "docker0", "172.17.0.1", 16);
	cand(&chk->nodes[0], "eth2", "198.18.3.1", 24);
	cand(&chk->nodes[0], "eth1", "198.18.2.1", 24);
	cand(&chk->nodes[0], "eth0", "2001:db8:1::1", 64);
	strcpy(chk->nodes[1].name, "node2");
	chk->nodes[1].available = chk->nodes[1].probed = true;
	cand(&chk->nodes[1], "eth0", "198.18.1.2", 24);
	cand(&chk->nodes[1], "docker0", "172.17.0.1", 16);
	cand(&chk->nodes[1], "eth2", "198.18.3.2", 24);
	cand(&chk->nodes[1], "ens9", "198.18.2.2", 24);
	strcpy(chk->nodes[2].name, "node3");
	chk->nodes[2].available = chk->nodes[2].probed = true;
	cand(&chk->nodes[2], "eth0", "198.18.1.3", 24);
	cand(&chk->nodes[2], "docker0", "172.17.0.1", 16);
	strcpy(chk->nodes[3].name, "node4");
	chk->nodes[3].probed = true;
	strcpy(chk->nodes[3].error, "no daemon answering on node4 (Connection refused)");
	strcpy(chk->nodes[4].name, "node5");

	path(chk, 1, NPF_DIR_FORWARD, "eth0", "198.18.1.2", NPF_OUT_OK, 300, "");
	path(chk, 1, NPF_DIR_FORWARD, "docker0", "172.17.0.1", NPF_OUT_WRONG_PEER, 0,
	     "172.17.0.1 is local to node1");
	path(chk, 1, NPF_DIR_FORWARD, "eth2", "198.18.3.2", NPF_OUT_BULK_STALL, 90, "stalled");
	path(chk, 1, NPF_DIR_FORWARD, "eth0", "198.18.2.2", NPF_OUT_OK, 200, "");
	path(chk, 1, NPF_DIR_REVERSE, "eth0", "198.18.1.1", NPF_OUT_OK, 250, "");
	path(chk, 1, NPF_DIR_REVERSE, "eth0", "2001:db8:1::1", NPF_OUT_TIMEOUT, 0, "t/o");
	path(chk, 1, NPF_DIR_REVERSE, "docker0", "172.17.0.1", NPF_OUT_WRONG_PEER, 0,
	     "172.17.0.1 is local to node2");
	path(chk, 1, NPF_DIR_REVERSE, "eth2", "198.18.3.1", NPF_OUT_OK, 80, "");
	path(chk, 1, NPF_DIR_REVERSE, "eth1", "198.18.2.1", NPF_OUT_REFUSED, 0, "refused");

	path(chk, 2, NPF_DIR_FORWARD, "eth0", "198.18.1.3", NPF_OUT_TIMEOUT, 0, "slow");
	path(chk, 2, NPF_DIR_FORWARD, "eth0", "198.18.1.3", NPF_OUT_OK, 700, "");
	path(chk, 2, NPF_DIR_FORWARD, "eth0", "198.18.1.3", NPF_OUT_OK, 500, "");
	path(chk, 2, NPF_DIR_FORWARD, "docker0", "172.17.0.1", NPF_OUT_WRONG_PEER, 0, "local");
	path(chk, 2, NPF_DIR_REVERSE, "eth0", "198.18.1.1", NPF_OUT_OK, 100, "");
}

static void test_summary(void **state)
{
	struct npf_check chk;
	const struct npf_link *l;
	char buf[64];

	(void)state;
	build(&chk);
	/* 4 interfaces (eth0 once despite two addresses) x 4 peers */
	assert_int_equal(npf_check_summarise(&chk), 16);
	assert_int_equal(chk.n_links, 16);
	assert_string_equal(chk.links[0].ifname, "eth0");
	assert_int_equal(chk.links[0].peer, 1);

	l = link_of(&chk, "eth0", 1);
	assert_int_equal(l->fwd, NPF_OUT_OK);
	assert_int_equal(l->fwd_rtt_us, 200); /* best RTT among ok paths leaving eth0 */
	assert_int_equal(l->rev, NPF_OUT_OK); /* best of ok (v4) and timeout (v6) */
	assert_int_equal(l->rev_rtt_us, 250);

	l = link_of(&chk, "docker0", 1);
	assert_int_equal(l->fwd, NPF_OUT_WRONG_PEER);
	assert_string_equal(l->fwd_detail, "172.17.0.1 is local to node1");
	assert_int_equal(l->rev, NPF_OUT_WRONG_PEER);
	assert_string_equal(l->peer_if, "docker0");

	l = link_of(&chk, "eth2", 1);
	assert_int_equal(l->fwd, NPF_OUT_BULK_STALL);
	assert_int_equal(l->rev, NPF_OUT_OK);
	assert_string_equal(l->peer_if, "eth2");
	assert_string_equal(npf_addr_str(&l->peer_addr, buf, sizeof(buf)), "198.18.3.2");

	/* node2's 198.18.2.2 is on eth1's network but the kernel sent it out of eth0. */
	l = link_of(&chk, "eth1", 1);
	assert_int_equal(l->fwd, NPF_OUT_WRONG_EGRESS);
	assert_string_equal(l->fwd_detail, "198.18.2.2 left via eth0");
	assert_string_equal(l->peer_if, "ens9");
	assert_int_equal(l->rev, NPF_OUT_REFUSED);

	l = link_of(&chk, "eth0", 2);
	assert_int_equal(l->fwd, NPF_OUT_OK);
	assert_int_equal(l->fwd_rtt_us, 500);
	assert_int_equal(l->rev, NPF_OUT_OK);

	/* node3 has no address on 198.18.3.0/24 and nothing left via eth2 for it. */
	l = link_of(&chk, "eth2", 2);
	assert_int_equal(l->fwd, NPF_OUT_UNREACHABLE);
	assert_string_equal(l->fwd_detail, "node3 has no address on 198.18.3.0/24");
	assert_int_equal(l->rev, NPF_OUT_NOT_PROBED);
	l = link_of(&chk, "eth1", 2);
	assert_string_equal(l->fwd_detail, "node3 has no address on 198.18.2.0/24");

	l = link_of(&chk, "eth0", 3);
	assert_int_equal(l->fwd, NPF_OUT_PEER_UNAVAILABLE);
	assert_int_equal(l->rev, NPF_OUT_PEER_UNAVAILABLE);
	assert_string_equal(l->fwd_detail, "no daemon answering on node4 (Connection refused)");

	l = link_of(&chk, "eth0", 4);
	assert_int_equal(l->fwd, NPF_OUT_NOT_PROBED);
	assert_int_equal(l->rev, NPF_OUT_NOT_PROBED);

	/* Summarising again replaces, never appends. */
	assert_int_equal(npf_check_summarise(&chk), 16);
	npf_check_clear(&chk);
}

static void test_peer_on_net_not_probed(void **state)
{
	struct npf_check chk;
	const struct npf_link *l;

	(void)state;
	build(&chk);
	/* Drop every forward path to node2: it is on eth0's network, nothing tried. */
	for (size_t i = 0; i < chk.n_paths; i++)
		if (chk.paths[i].peer == 1 && chk.paths[i].dir == NPF_DIR_FORWARD)
			chk.paths[i].peer = 99;
	assert_int_equal(npf_check_summarise(&chk), 16);
	l = link_of(&chk, "eth0", 1);
	assert_int_equal(l->fwd, NPF_OUT_NOT_PROBED);
	assert_string_equal(l->peer_if, "eth0");
	npf_check_clear(&chk);
}

static void test_edges(void **state)
{
	struct npf_check chk = { 0 };
	struct npf_node self = { .name = "solo", .available = true };

	(void)state;
	assert_int_equal(npf_check_summarise(NULL), -EINVAL);
	assert_int_equal(npf_check_summarise(&chk), -EINVAL);
	chk.nodes = &self;
	chk.n_nodes = 1;
	assert_int_equal(npf_check_summarise(&chk), 0);
	assert_int_equal(chk.n_links, 0);
	free(chk.links);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_peer_on_net_not_probed),
		cmocka_unit_test(test_edges),
	};

	return npf_run_tests(tests, NULL, NULL);
}
