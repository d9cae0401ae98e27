// SPDX-License-Identifier: MIT
/* The decision: outcome mixes, ranking, one network for the whole job, verdicts, GID policy
 * per NCCL version, job-wide values proven with the NCCL grammar matcher. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <arpa/inet.h>
#include <net/if_arp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclmatch.h"
#include "rdma_join.h"
#include "rdma_sysfs.h"
#include "recommend.h"
#include "jobrow.h"
#include "jobrows.h"
#include "sparse_check.h"

/* ---- a small cluster description -------------------------------------------------------- */

struct cl_if {
	const char *name;
	const char *cidr; /* "198.18.2.1/24", NULL = no address */
	int64_t speed;
	uint32_t roles;
	const char *rdma_dev; /* announced RDMA port behind it */
	int rdma_port;
};

#define CL_IFS 6
#define IFA(n, c) { .name = (n), .cidr = (c) }
#define IFS(n, c, s) { .name = (n), .cidr = (c), .speed = (s) }
#define IFR(n, c, s, r) { .name = (n), .cidr = (c), .speed = (s), .roles = (r) }
#define IFD(n, c, s, r, d, p) \
	{ .name = (n), .cidr = (c), .speed = (s), .roles = (r), .rdma_dev = (d), .rdma_port = (p) }

struct cl_node {
	const char *name;
	struct cl_if ifs[CL_IFS];
};

/* Outcome of a probe from node a's interface to node b's interface (both on one network). */
typedef enum npf_outcome (*pair_fn)(const struct cl_node *a, const struct cl_if *ia,
				    const struct cl_node *b, const struct cl_if *ib);

struct fx {
	struct npf_inventory inv;
	struct npf_check chk;
	struct npf_policy pol;
	struct npf_pattern_list prefer, avoid;
	struct npf_recommendation rec;
};

static void parse_cidr(const char *cidr, struct npf_addr *a)
{
	char buf[64];
	char *slash;

	memset(a, 0, sizeof(*a));
	snprintf(buf, sizeof(buf), "%s", cidr);
	slash = strchr(buf, '/');
	assert_non_null(slash);
	*slash = '\0';
	a->family = strchr(buf, ':') ? AF_INET6 : AF_INET;
	a->prefixlen = (uint8_t)atoi(slash + 1);
	a->scope = 0;
	assert_int_equal(inet_pton(a->family, buf, a->addr), 1);
}

static bool same_net(const char *c1, const char *c2)
{
	struct npf_addr a, b;
	unsigned int bits;

	if (!c1 || !c2)
		return false;
	parse_cidr(c1, &a);
	parse_cidr(c2, &b);
	if (a.family != b.family || a.prefixlen != b.prefixlen)
		return false;
	bits = a.prefixlen;
	for (unsigned int i = 0; i < bits; i++)
		if (((a.addr[i / 8] >> (7 - i % 8)) & 1) != ((b.addr[i / 8] >> (7 - i % 8)) & 1))
			return false;
	return true;
}

static struct npf_iface *inv_if(struct npf_inventory *inv, const char *name)
{
	struct npf_iface *ifc = npf_inventory_find_name(inv, name);
	struct npf_iface *n;

	if (ifc)
		return ifc;
	n = realloc(inv->ifaces, (inv->n_ifaces + 1) * sizeof(*n));
	assert_non_null(n);
	inv->ifaces = n;
	ifc = &n[inv->n_ifaces++];
	memset(ifc, 0, sizeof(*ifc));
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	ifc->ifindex = (int)inv->n_ifaces;
	ifc->flags = IFF_UP | IFF_RUNNING;
	ifc->kind = NPF_KIND_PHYSICAL;
	ifc->speed_mbps = NPF_SPEED_UNKNOWN;
	return ifc;
}

static void node_add_ifname(struct npf_node *nd, const char *name)
{
	char(*n)[IFNAMSIZ];

	for (size_t i = 0; i < nd->n_ifnames; i++)
		if (strcmp(nd->ifnames[i], name) == 0)
			return;
	n = realloc(nd->ifnames, (nd->n_ifnames + 1) * sizeof(*n));
	assert_non_null(n);
	nd->ifnames = n;
	memset(n[nd->n_ifnames], 0, IFNAMSIZ);
	snprintf(n[nd->n_ifnames++], IFNAMSIZ, "%s", name);
}

static void node_add_cand(struct npf_node *nd, const struct cl_if *ci)
{
	struct npf_candidate *n = realloc(nd->cands, (nd->n_cands + 1) * sizeof(*n));
	struct npf_candidate *c;

	assert_non_null(n);
	nd->cands = n;
	c = &n[nd->n_cands++];
	memset(c, 0, sizeof(*c));
	snprintf(c->ifname, sizeof(c->ifname), "%s", ci->name);
	parse_cidr(ci->cidr, &c->addr);
	c->kind = NPF_KIND_PHYSICAL;
	c->roles = ci->roles;
	c->speed_mbps = ci->speed ? ci->speed : NPF_SPEED_UNKNOWN;
	if (ci->rdma_dev) {
		snprintf(c->rdma_dev, sizeof(c->rdma_dev), "%s", ci->rdma_dev);
		c->rdma_port = ci->rdma_port;
		c->rdma_ll = NPF_LL_ETHERNET;
		c->rdma_active = true;
	}
}

static enum npf_outcome all_ok(const struct cl_node *a, const struct cl_if *ia,
			       const struct cl_node *b, const struct cl_if *ib)
{
	(void)a;
	(void)ia;
	(void)b;
	(void)ib;
	return NPF_OUT_OK;
}

/* The raw probes behind link l (one each way), so that an interface holding several
 * networks is judged per network as the engine's paths allow. */
static void add_paths(struct npf_check *chk, const struct npf_link *l, const struct cl_if *mine)
{
	struct npf_path *p = realloc(chk->paths, (chk->n_paths + 2) * sizeof(*p));

	assert_non_null(p);
	chk->paths = p;
	p = &p[chk->n_paths];
	chk->n_paths += 2;
	memset(p, 0, 2 * sizeof(*p));
	p[0].peer = p[1].peer = l->peer;
	p[0].dir = NPF_DIR_FORWARD;
	snprintf(p[0].local_if, sizeof(p[0].local_if), "%s", mine->name);
	snprintf(p[0].peer_if, sizeof(p[0].peer_if), "%s", l->peer_if);
	p[0].peer_addr = l->peer_addr;
	p[0].outcome = l->fwd;
	p[1].dir = NPF_DIR_REVERSE;
	snprintf(p[1].local_if, sizeof(p[1].local_if), "%s", mine->name);
	parse_cidr(mine->cidr, &p[1].local_addr);
	p[1].outcome = l->rev;
}

/* The check as node `self` sees it: nodes[0] = self, peers in description order; one
 * link per (our interface with an address, peer), outcomes from fn in both directions. */
static struct fx *cluster_view(const struct cl_node *nodes, size_t n, size_t self, pair_fn fn)
{
	struct fx *f = calloc(1, sizeof(*f));
	size_t k = 1;
	struct npf_addr lo4;

	assert_non_null(f);
	if (!fn)
		fn = all_ok;
	f->chk.n_nodes = n;
	f->chk.nodes = calloc(n, sizeof(*f->chk.nodes));
	assert_non_null(f->chk.nodes);
	/* Every node has lo; it must never be chosen. */
	parse_cidr("127.0.0.1/8", &lo4);
	inv_if(&f->inv, "lo")->kind = NPF_KIND_LOOPBACK;
	assert_int_equal(npf_iface_add_addr(inv_if(&f->inv, "lo"), &lo4), 0);
	for (size_t i = 0; i < n; i++) {
		struct npf_node *nd = &f->chk.nodes[i == self ? 0 : k++];

		snprintf(nd->name, sizeof(nd->name), "%s", nodes[i].name);
		nd->available = true;
		nd->probed = i != self;
		node_add_ifname(nd, "lo");
		for (size_t j = 0; j < CL_IFS && nodes[i].ifs[j].name; j++) {
			const struct cl_if *ci = &nodes[i].ifs[j];

			node_add_ifname(nd, ci->name);
			if (ci->cidr)
				node_add_cand(nd, ci);
			if (i != self)
				continue;
			{
				struct npf_iface *ifc = inv_if(&f->inv, ci->name);
				struct npf_addr a;

				ifc->roles |= ci->roles;
				if (ci->roles & NPF_ROLE_CONTAINER_BRIDGE)
					ifc->kind = NPF_KIND_BRIDGE;
				if (ci->speed)
					ifc->speed_mbps = ci->speed;
				if (ci->cidr) {
					parse_cidr(ci->cidr, &a);
					assert_int_equal(npf_iface_add_addr(ifc, &a), 0);
				}
			}
		}
	}
	/* Links: our interfaces x peers. */
	for (size_t j = 0; j < CL_IFS && nodes[self].ifs[j].name; j++) {
		const struct cl_if *mine = &nodes[self].ifs[j];
		size_t peer = 1;

		if (!mine->cidr)
			continue;
		for (size_t i = 0; i < n; i++) {
			const struct cl_if *theirs = NULL;
			struct npf_link *l;

			if (i == self)
				continue;
			for (size_t t = 0; t < CL_IFS && nodes[i].ifs[t].name; t++)
				if (same_net(mine->cidr, nodes[i].ifs[t].cidr)) {
					theirs = &nodes[i].ifs[t];
					break;
				}
			l = realloc(f->chk.links, (f->chk.n_links + 1) * sizeof(*l));
			assert_non_null(l);
			f->chk.links = l;
			l = &l[f->chk.n_links++];
			memset(l, 0, sizeof(*l));
			snprintf(l->ifname, sizeof(l->ifname), "%s", mine->name);
			l->peer = (int)peer;
			if (!theirs) {
				l->fwd = l->rev = NPF_OUT_UNREACHABLE;
				snprintf(l->fwd_detail, sizeof(l->fwd_detail),
					 "%s has no address here", nodes[i].name);
			} else {
				l->fwd = fn(&nodes[self], mine, &nodes[i], theirs);
				l->rev = fn(&nodes[i], theirs, &nodes[self], mine);
				snprintf(l->peer_if, sizeof(l->peer_if), "%s", theirs->name);
				parse_cidr(theirs->cidr, &l->peer_addr);
				if (l->fwd == NPF_OUT_WRONG_PEER)
					snprintf(l->fwd_detail, sizeof(l->fwd_detail),
						 "answered by %s", nodes[self].name);
				add_paths(&f->chk, l, mine);
			}
			peer++;
		}
	}
	f->pol.prefer = &f->prefer;
	f->pol.avoid = &f->avoid;
	return f;
}

static void fx_free(struct fx *f)
{
	npf_recommendation_clear(&f->rec);
	npf_inventory_clear(&f->inv);
	npf_check_clear(&f->chk);
	free(f);
}

static void fx_run(struct fx *f)
{
	int r = npf_recommend(&f->inv, &f->chk, &f->pol, &f->rec);

	assert_int_equal(r, 0);
}

static const char *var(const struct fx *f, enum npf_var v)
{
	return npf_recommendation_get(&f->rec, v);
}

/* The rejection line of ifname; fails the test when there is none. */
/* var(f, v) equals want; a missing variable fails with the notes for context. */
static void assert_var(const struct fx *f, enum npf_var v, const char *want)
{
	const char *got = var(f, v);

	if (!got) {
		for (size_t i = 0; i < f->rec.n_notes; i++)
			print_message("note: %s\n", f->rec.notes[i].text);
		fail_msg("%s is not published (want '%s'; verdict %s: %s)", npf_var_name(v), want,
			 npf_verdict_name(f->rec.verdict), f->rec.summary);
	}
	assert_string_equal(got, want);
}

/* Every consumer with an address model is steered to interface ifname. */
static void assert_steered(const struct fx *f, const char *ifname)
{
	char nccl[IFNAMSIZ + 2];

	snprintf(nccl, sizeof(nccl), "=%s", ifname);
	assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, nccl);
	assert_var(f, NPF_VAR_GLOO_SOCKET_IFNAME, ifname);
	assert_var(f, NPF_VAR_TP_SOCKET_IFNAME, ifname);
	assert_var(f, NPF_VAR_UCX_NET_DEVICES, ifname);
}

static const struct npf_rejection *rejection(const struct fx *f, const char *ifname)
{
	static const struct npf_rejection none = { .outcome = NPF_OUT__COUNT };

	for (size_t i = 0; i < f->rec.n_rejections; i++)
		if (strcmp(f->rec.rejections[i].ifname, ifname) == 0)
			return &f->rec.rejections[i];
	fail_msg("no rejection line for %s", ifname);
	return &none;
}

static bool rejected(const struct fx *f, const char *ifname)
{
	for (size_t i = 0; i < f->rec.n_rejections; i++)
		if (strcmp(f->rec.rejections[i].ifname, ifname) == 0)
			return true;
	return false;
}

static bool has_note(const struct fx *f, const char *needle)
{
	for (size_t i = 0; i < f->rec.n_notes; i++)
		if (strstr(f->rec.notes[i].text, needle))
			return true;
	return false;
}

static void set_pattern(struct npf_pattern_list *l, const char *pat)
{
	snprintf(l->pat[l->n++], NPF_CONFIG_PATTERN_LEN, "%s", pat);
}

/* ---- scenarios ------------------------------------------------------------------------ */

/* Three nodes, a management network and a 100G fabric, same names everywhere. */
static const struct cl_node basic[] = {
	{ "node1",
	  { IFS("eth0", "198.18.1.1/24", 1000), IFS("ens1f0", "198.18.2.1/24", 100000) } },
	{ "node2",
	  { IFS("eth0", "198.18.1.2/24", 1000), IFS("ens1f0", "198.18.2.2/24", 100000) } },
	{ "node3",
	  { IFS("eth0", "198.18.1.3/24", 1000), IFS("ens1f0", "198.18.2.3/24", 100000) } },
};

static void all_ok_picks_fastest(void **state)
{
	struct fx *f = cluster_view(basic, 3, 0, NULL);
	const struct npf_rejection *rj;
	(void)state;

	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.ifname, "ens1f0");
	assert_string_equal(f->rec.cidr, "198.18.2.0/24");
	assert_steered(f, "ens1f0");
	assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "198.18.2.0/24");
	assert_var(f, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE, "198.18.2.0/24");
	/* Open MPI 5's runtime reads the PRRTE name (class 9), and every environment says
	 * whose it is (class 7). */
	assert_var(f, NPF_VAR_PRTE_MCA_PRTE_IF_INCLUDE, "198.18.2.0/24");
	assert_var(f, NPF_VAR_NETPREFLIGHT_NODE, "node1");
	assert_null(var(f, NPF_VAR_NCCL_IB_DISABLE));
	assert_null(var(f, NPF_VAR_NCCL_SOCKET_FAMILY));
	assert_null(var(f, NPF_VAR_MASTER_ADDR));
	assert_null(var(f, NPF_VAR_NCCL_IB_HCA));
	/* The management network works too; it lost on speed. */
	rj = rejection(f, "eth0");
	assert_int_equal(rj->outcome, NPF_OUT_OK);
	assert_non_null(strstr(rj->reason, "link speed"));
	assert_false(rejected(f, "lo"));
	assert_false(rejected(f, "ens1f0"));
	assert_non_null(strstr(f->rec.summary, "ok: ens1f0"));
	/* NCCL's own pick (eth0, ifindex order) works, and says so. */
	assert_true(f->rec.nccl_default_found);
	assert_string_equal(f->rec.nccl_default.ifname, "eth0");
	assert_true(f->rec.nccl_default_passed);
	/* Every node's interface on the network is known. */
	assert_int_equal(f->rec.n_nodes, 3);
	assert_string_equal(f->rec.nodes[2].ifname, "ens1f0");
	fx_free(f);
}

/* docker0 holds 172.17.0.1/16 on every node: a connect to a "peer" lands locally. */
static enum npf_outcome docker_wrong_peer(const struct cl_node *a, const struct cl_if *ia,
					  const struct cl_node *b, const struct cl_if *ib)
{
	(void)a;
	(void)b;
	(void)ib;
	return strncmp(ia->name, "docker", 6) == 0 || strncmp(ia->name, "br-", 3) == 0 ?
		       NPF_OUT_WRONG_PEER :
		       NPF_OUT_OK;
}

static const struct cl_node dockers[] = {
	{ "node1",
	  { IFR("br-5c2f8e1a9b07", "172.18.0.1/16", 10000, NPF_ROLE_CONTAINER_BRIDGE),
	    IFR("docker0", "172.17.0.1/16", 10000, NPF_ROLE_CONTAINER_BRIDGE),
	    IFS("eth0", "198.18.1.1/24", 1000) } },
	{ "node2",
	  { IFR("br-5c2f8e1a9b07", "172.18.0.1/16", 10000, NPF_ROLE_CONTAINER_BRIDGE),
	    IFR("docker0", "172.17.0.1/16", 10000, NPF_ROLE_CONTAINER_BRIDGE),
	    IFS("eth0", "198.18.1.2/24", 1000) } },
};

static void container_bridges_rejected(void **state)
{
	struct fx *f = cluster_view(dockers, 2, 0, docker_wrong_peer);
	const struct npf_rejection *rj;
	(void)state;

	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.ifname, "eth0");
	rj = rejection(f, "docker0");
	assert_int_equal(rj->outcome, NPF_OUT_WRONG_PEER);
	assert_string_equal(rj->peer_name, "node2");
	assert_int_equal(rj->dir, NPF_DIR_FORWARD);
	assert_non_null(strstr(rj->reason, "answered by node1"));
	/* NCCL's default takes the docker user bridge (not excluded, lower ifindex). */
	assert_string_equal(f->rec.nccl_default.ifname, "br-5c2f8e1a9b07");
	assert_false(f->rec.nccl_default_passed);
	assert_non_null(strstr(f->rec.nccl_default_text,
			       "br-5c2f8e1a9b07 (container bridge, 172.18.0.1): "
			       "wrong-peer (forward) with node2"));
	fx_free(f);
}

/* A bridge that really connects the nodes (a lab switch) is fine when it is the only path,
 * and never wins over a working ordinary network even when faster. */
static const struct cl_node bridge_only[] = {
	{ "node1",
	  { IFR("br0", "198.18.7.1/24", 100000, NPF_ROLE_CONTAINER_BRIDGE),
	    IFS("eth0", "198.18.1.1/24", 1000) } },
	{ "node2",
	  { IFR("br0", "198.18.7.2/24", 100000, NPF_ROLE_CONTAINER_BRIDGE),
	    IFS("eth0", "198.18.1.2/24", 1000) } },
};

static enum npf_outcome eth0_dead(const struct cl_node *a, const struct cl_if *ia,
				  const struct cl_node *b, const struct cl_if *ib)
{
	(void)a;
	(void)b;
	(void)ib;
	return strcmp(ia->name, "eth0") == 0 ? NPF_OUT_TIMEOUT : NPF_OUT_OK;
}

static void bridge_roles(void **state)
{
	struct fx *f = cluster_view(bridge_only, 2, 0, NULL);
	const struct npf_rejection *rj;
	(void)state;

	fx_run(f);
	assert_string_equal(f->rec.ifname, "eth0");
	rj = rejection(f, "br0");
	assert_int_equal(rj->outcome, NPF_OUT_OK);
	assert_non_null(strstr(rj->reason, "container bridge"));
	fx_free(f);

	f = cluster_view(bridge_only, 2, 0, eth0_dead);
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.ifname, "br0");
	assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=br0");
	fx_free(f);
}

static void policy_prefer_avoid(void **state)
{
	struct fx *f;
	(void)state;

	/* prefer beats speed */
	f = cluster_view(basic, 3, 0, NULL);
	set_pattern(&f->prefer, "eth*");
	fx_run(f);
	assert_string_equal(f->rec.ifname, "eth0");
	assert_non_null(strstr(rejection(f, "ens1f0")->reason, "prefer= policy"));
	fx_free(f);

	/* avoid beats speed */
	f = cluster_view(basic, 3, 0, NULL);
	set_pattern(&f->avoid, "ens*");
	fx_run(f);
	assert_string_equal(f->rec.ifname, "eth0");
	fx_free(f);

	/* the earlier prefer pattern is the stronger one */
	f = cluster_view(basic, 3, 0, NULL);
	set_pattern(&f->prefer, "eth*");
	set_pattern(&f->prefer, "ens*");
	fx_run(f);
	assert_string_equal(f->rec.ifname, "eth0");
	fx_free(f);
	f = cluster_view(basic, 3, 0, NULL);
	set_pattern(&f->prefer, "ens*");
	set_pattern(&f->prefer, "eth*");
	fx_run(f);
	assert_string_equal(f->rec.ifname, "ens1f0");
	fx_free(f);

	/* avoid wins over prefer on the same network */
	f = cluster_view(basic, 3, 0, NULL);
	set_pattern(&f->prefer, "ens*");
	set_pattern(&f->avoid, "ens1f0");
	fx_run(f);
	assert_string_equal(f->rec.ifname, "eth0");
	fx_free(f);

	/* an avoided network still serves when it is the only one that works */
	f = cluster_view(bridge_only, 2, 0, eth0_dead);
	set_pattern(&f->avoid, "br*");
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.ifname, "br0");
	fx_free(f);
}

/* RDMA-backed beats a faster plain network. */
static const struct cl_node rdma_vs_speed[] = {
	{ "node1",
	  { IFS("eth0", "198.18.1.1/24", 200000),
	    IFD("ens1f0np0", "198.18.2.1/24", 100000, 0, "mlx5_0", 1) } },
	{ "node2",
	  { IFS("eth0", "198.18.1.2/24", 200000),
	    IFD("ens1f0np0", "198.18.2.2/24", 100000, 0, "mlx5_0", 1) } },
};

static void rdma_ranks_before_speed(void **state)
{
	struct fx *f = cluster_view(rdma_vs_speed, 2, 0, NULL);
	(void)state;

	fx_run(f);
	assert_string_equal(f->rec.ifname, "ens1f0np0");
	assert_non_null(strstr(rejection(f, "eth0")->reason, "RDMA-backed"));
	fx_free(f);
}

/* The fabric of node3 is down. Every node must land on the management network, and
 * node3 must not claim the fabric because "it works to nobody". */
static enum npf_outcome node3_fabric_down(const struct cl_node *a, const struct cl_if *ia,
					  const struct cl_node *b, const struct cl_if *ib)
{
	(void)ib;
	if (strcmp(ia->name, "ens1f0") == 0 &&
	    (strcmp(a->name, "node3") == 0 || strcmp(b->name, "node3") == 0))
		return NPF_OUT_TIMEOUT;
	return NPF_OUT_OK;
}

static void one_network_for_all(void **state)
{
	(void)state;

	for (size_t self = 0; self < 3; self++) {
		struct fx *f = cluster_view(basic, 3, self, node3_fabric_down);
		const struct npf_rejection *rj;

		fx_run(f);
		assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
		assert_string_equal(f->rec.cidr, "198.18.1.0/24");
		assert_string_equal(f->rec.ifname, "eth0");
		rj = rejection(f, "ens1f0");
		assert_int_equal(rj->outcome, NPF_OUT_TIMEOUT);
		if (self != 2)
			assert_string_equal(rj->peer_name, "node3");
		fx_free(f);
	}
}

/* Merges the rows of an n-node job (lib/jobrows) and decides it (lib/jobcheck); the
 * caller clears m, d and the rows with job_clear(). */
static void job_merge_decide(struct npf_msg_row *rows, size_t n, struct npf_job_matrix *m,
			     struct npf_job_decision *d)
{
	const struct npf_msg_row *rp[8];
	struct npf_job_input in;

	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		rp[i] = &rows[i];
	assert_int_equal(npf_job_rows_merge(rp, n, m), 0);
	in = npf_job_matrix_input(m, false);
	assert_int_equal(npf_job_decide(&in, d), 0);
}

static void job_clear(struct npf_msg_row *rows, size_t n, struct npf_job_matrix *m,
		      struct npf_job_decision *d)
{
	npf_job_decision_clear(d);
	npf_job_matrix_clear(m);
	for (size_t i = 0; i < n; i++)
		npf_wire_row_clear(&rows[i]);
}

/* The same fault through the job check: each node's row (npf_recommend_row) from its own
 * evidence, merged (lib/jobrows) and decided (lib/jobcheck): node3 is the suspect, node1
 * and node2 stay on the faster fabric instead of the whole job moving to eth0. */
static void job_rows_blame_node3(void **state)
{
	static const char *const hosts[] = {"node1", "node2", "node3"};
	struct npf_msg_row rows[3];
	struct npf_job_matrix m;
	struct npf_job_decision d;

	(void)state;
	for (size_t self = 0; self < 3; self++) {
		struct fx *f = cluster_view(basic, 3, self, node3_fabric_down);

		assert_int_equal(npf_recommend_row(&f->inv, &f->chk, &f->pol, hosts, 3, self + 1,
						   &rows[self]),
				 0);
		assert_int_equal(rows[self].index, self);
		assert_int_equal(rows[self].n_nets, 2);
		/* The fabric first (the faster network), the pairs with node3 failed. */
		assert_string_equal(rows[self].nets[0].key, "198.18.2.0/24");
		assert_true(rows[self].nets[0].quality > rows[self].nets[1].quality);
		fx_free(f);
	}
	assert_string_equal(rows[0].nets[0].states, ".of");
	assert_string_equal(rows[2].nets[0].states, "ff.");
	assert_string_equal(rows[2].nets[1].states, "oo.");
	job_merge_decide(rows, 3, &m, &d);
	assert_int_equal(d.verdict, NPF_JOB_OK);
	assert_string_equal(m.nets[d.net].name, "198.18.2.0/24");
	assert_int_equal(d.n_suspects, 1);
	assert_true(d.suspect[2]);
	job_clear(rows, 3, &m, &d);
}

/* ---- the job check's decision applied per node (npf_policy.job) ---------------------- */

/* Four nodes, the fabric strictly faster than eno1; node4's fabric is dead. */
static const struct cl_node dead_fabric4[] = {
    {"node1", {IFS("eno1", "10.0.0.1/24", 1000), IFS("ens1f0np0", "198.18.1.1/24", 100000)}},
    {"node2", {IFS("eno1", "10.0.0.2/24", 1000), IFS("ens1f0np0", "198.18.1.2/24", 100000)}},
    {"node3", {IFS("eno1", "10.0.0.3/24", 1000), IFS("ens1f0np0", "198.18.1.3/24", 100000)}},
    {"node4", {IFS("eno1", "10.0.0.4/24", 1000), IFS("ens1f0np0", "198.18.1.4/24", 100000)}},
};

#define FABRIC "198.18.1.0/24"
#define MGMT "10.0.0.0/24"

static enum npf_outcome node4_fabric_dead(const struct cl_node *a, const struct cl_if *ia,
					  const struct cl_node *b, const struct cl_if *ib)
{
	(void)ib;
	if (strcmp(ia->name, "ens1f0np0") == 0 &&
	    (strcmp(a->name, "node4") == 0 || strcmp(b->name, "node4") == 0))
		return NPF_OUT_TIMEOUT;
	return NPF_OUT_OK;
}

/* Only the fabric pair node3-node4 is dead. */
static enum npf_outcome node34_fabric_dead(const struct cl_node *a, const struct cl_if *ia,
					   const struct cl_node *b, const struct cl_if *ib)
{
	(void)ib;
	if (strcmp(ia->name, "ens1f0np0") == 0 &&
	    ((strcmp(a->name, "node3") == 0 && strcmp(b->name, "node4") == 0) ||
	     (strcmp(a->name, "node4") == 0 && strcmp(b->name, "node3") == 0)))
		return NPF_OUT_TIMEOUT;
	return NPF_OUT_OK;
}

static const char *const node4_only[] = {"node4"};

/* node `self` of dead_fabric4 decided under job view v. */
static struct fx *job_run(size_t self, const struct npf_job_view *v)
{
	struct fx *f = cluster_view(dead_fabric4, 4, self, node4_fabric_dead);

	f->pol.job = v;
	fx_run(f);
	return f;
}

static void assert_has(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("'%s' not in '%s'", needle, hay);
}

/* Alone, every healthy node falls back to eno1; with the job's decision (node4 the
 * suspect) each stays on the fabric, node4's pairs outside its evidence. */
static void job_view_blames_dead_node(void **state)
{
	const struct npf_job_view v = {.role = NPF_JOB_ROLE_OK,
				       .net = FABRIC,
				       .best = FABRIC,
				       .suspects = node4_only,
				       .n_suspects = 1,
				       .reason = "node4: " FABRIC " fails with 3 of 3 nodes"};
	const char *const hosts[] = {"node1", "node2", "node3", "node4"};
	struct npf_msg_row row;
	struct fx *f;

	(void)state;
	f = cluster_view(dead_fabric4, 4, 0, node4_fabric_dead);
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.ifname, "eno1");
	fx_free(f);
	for (size_t self = 0; self < 3; self++) {
		f = job_run(self, &v);
		assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
		assert_string_equal(f->rec.ifname, "ens1f0np0");
		assert_string_equal(f->rec.cidr, FABRIC);
		assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=ens1f0np0");
		assert_has(f->rec.summary, "ok: ens1f0np0 (" FABRIC ") works to and from 2 peers");
		assert_has(f->rec.summary, "; job check: node4 fails and is drained");
		assert_int_equal(f->rec.fail_node[0], '\0');
		/* eno1 works too, it only ranks lower: no failure shown for it. */
		assert_int_equal(rejection(f, "eno1")->outcome, NPF_OUT_OK);
		/* The row under the same view leaves node4 outside. */
		assert_int_equal(npf_recommend_row(&f->inv, &f->chk, &f->pol, hosts, 4, 1, &row),
				 0);
		assert_string_equal(row.nets[0].key, FABRIC);
		assert_int_equal(row.nets[0].states[3], '-');
		npf_wire_row_clear(&row);
		fx_free(f);
	}
}

/* fallback = degrade (or no minority explains the failure): the job moves to eno1, and
 * every node says so while publishing eno1. */
static void job_view_degraded(void **state)
{
	const struct npf_job_view v = {.role = NPF_JOB_ROLE_DEGRADED,
				       .net = MGMT,
				       .best = FABRIC,
				       .reason = "fallback = degrade: node4 fails on " FABRIC};
	struct fx *f;

	(void)state;
	for (size_t self = 0; self < 4; self++) {
		f = job_run(self, &v);
		assert_int_equal(f->rec.verdict, NPF_VERDICT_DEGRADED);
		assert_true(npf_verdict_publishes(f->rec.verdict));
		assert_string_equal(npf_verdict_name(f->rec.verdict), "degraded");
		assert_string_equal(f->rec.ifname, "eno1");
		assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=eno1");
		assert_has(f->rec.summary, "degraded: eno1 (" MGMT ") works to and from 3 peers");
		assert_has(f->rec.summary, "; the job moved from " FABRIC ": fallback = degrade");
		fx_free(f);
	}

	/* node1's fabric works from here (only node3-node4 fails): its rejection line says
	 * the job chose eno1, not that eno1 ranks higher. */
	f = cluster_view(dead_fabric4, 4, 0, node34_fabric_dead);
	f->pol.job = &v;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_DEGRADED);
	assert_string_equal(rejection(f, "ens1f0np0")->reason,
			    "works on " FABRIC ", but the job check chose " MGMT " (eno1)");
	assert_int_equal(rejection(f, "ens1f0np0")->outcome, NPF_OUT_OK);
	fx_free(f);
}

/* The job's network must work from here: the coordinator's answer does not replace this
 * node's proof, nor does this node pick another network: unknown. */
static void job_view_net_fails_here(void **state)
{
	struct npf_job_view v = {
	    .role = NPF_JOB_ROLE_OK, .net = FABRIC, .best = FABRIC, .reason = "all pairs work"};
	struct fx *f;

	(void)state;
	/* No suspects: node4's dead pairs stay in node1's evidence. */
	f = job_run(0, &v);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
	assert_int_equal(f->rec.n_vars, 0);
	assert_false(f->rec.have_choice);
	assert_has(f->rec.summary,
		   "unknown: the job's network " FABRIC
		   " does not work from here (ens1f0np0: timeout (forward) with node4");
	assert_string_equal(f->rec.fail_node, "node4");
	assert_string_equal(f->rec.fail_ifname, "ens1f0np0");
	assert_int_equal(f->rec.fail_outcome, NPF_OUT_TIMEOUT);
	fx_free(f);

	/* A network this node holds no address on. */
	v.net = "203.0.113.0/24";
	f = job_run(0, &v);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
	assert_has(f->rec.summary, "unknown: the job's network 203.0.113.0/24 does not work from "
				   "here (no address of this node is on it)");
	fx_free(f);

	/* Every peer a suspect: nothing left to prove the network with. */
	{
		static const char *const all[] = {"node2", "node3", "node4"};

		v.net = MGMT;
		v.suspects = all;
		v.n_suspects = 3;
		f = job_run(0, &v);
		assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
		assert_int_equal(f->rec.n_vars, 0);
		fx_free(f);
	}
}

/* The suspect fails with a typed reason: its interface on the network it breaks and its
 * own evidence there; it keeps all of its evidence (it is in the suspects itself). */
static void job_view_suspect(void **state)
{
	const struct npf_job_view v = {.role = NPF_JOB_ROLE_SUSPECT,
				       .net = FABRIC,
				       .best = FABRIC,
				       .suspects = node4_only,
				       .n_suspects = 1,
				       .reason = "node4: " FABRIC " fails with 3 of 3 nodes"};
	static const char *const node3_only[] = {"node3"};
	struct npf_job_view v3 = v;
	struct fx *f;

	(void)state;
	f = job_run(3, &v);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_int_equal(f->rec.n_vars, 0);
	assert_string_equal(f->rec.fail_ifname, "ens1f0np0");
	assert_string_equal(f->rec.fail_node, "node1");
	assert_int_equal(f->rec.fail_outcome, NPF_OUT_TIMEOUT);
	assert_int_equal(f->rec.fail_dir, NPF_DIR_FORWARD);
	assert_has(f->rec.summary, "fail: this node breaks the job's network " FABRIC
				   ": ens1f0np0 timeout (forward) with node1");
	assert_has(f->rec.summary, "; drain it (job check: node4: " FABRIC);
	/* Rejections as today: the fabric with its evidence. */
	assert_int_equal(rejection(f, "ens1f0np0")->outcome, NPF_OUT_TIMEOUT);
	fx_free(f);

	/* A decision that names this node a suspect while its own evidence shows no failure
	 * there: the coordinator blames only on a node's own row, so such a decision is forged
	 * (a key holder answering in the coordinator's name, netns.fakecoord) or stale. It
	 * drains nothing: unknown, no environment, said why (issue 19). */
	v3.suspects = node3_only;
	v3.reason = "node3: " FABRIC " fails with node1";
	f = cluster_view(dead_fabric4, 4, 2, NULL);
	f->pol.job = &v3;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
	assert_int_equal(f->rec.n_vars, 0);
	assert_has(f->rec.summary, "unknown: the job's decision names this node a suspect on "
				   FABRIC ", but its own evidence shows no failure there: not drained");
	fx_free(f);

	/* A pulled cable: the suspect's fabric interface keeps its address but has no carrier
	 * (so it is no candidate here): the reason still names it, and why. */
	f = cluster_view(dead_fabric4, 4, 3, node4_fabric_dead);
	for (size_t i = 0; i < f->inv.n_ifaces; i++)
		if (strcmp(f->inv.ifaces[i].name, "ens1f0np0") == 0) {
			f->inv.ifaces[i].flags &= ~(unsigned int)IFF_RUNNING;
			f->inv.ifaces[i].carrier = 0;
		}
	f->pol.job = &v;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_string_equal(f->rec.fail_ifname, "ens1f0np0");
	assert_has(f->rec.summary, "fail: this node breaks the job's network " FABRIC
				   ": ens1f0np0 (no carrier); drain it");
	fx_free(f);

	/* Missing evidence is no failure of ours either: a peer that did not answer does not
	 * back the decision, so it drains nothing. */
	f = cluster_view(dead_fabric4, 4, 2, NULL);
	f->chk.nodes[1].available = false;
	f->pol.job = &v3;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
	assert_has(f->rec.summary, "its own evidence shows no failure there: not drained");
	fx_free(f);
}

/* fail and unknown for the whole job: the coordinator's reason, nothing published. */
static void job_view_fail_and_unknown(void **state)
{
	struct npf_job_view v = {.role = NPF_JOB_ROLE_FAIL,
				 .reason = "no network works for every pair"};
	struct fx *f;

	(void)state;
	f = job_run(0, &v);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_int_equal(f->rec.n_vars, 0);
	assert_string_equal(f->rec.summary, "fail: job check: no network works for every pair");
	/* node1's own evidence: its fabric fails with node4. */
	assert_string_equal(f->rec.fail_node, "node4");
	assert_true(f->rec.nccl_default_text[0] != '\0');
	assert_true(f->rec.n_rejections > 0);
	fx_free(f);

	/* No failure here at all: nobody to name from this node's evidence. */
	f = cluster_view(dead_fabric4, 4, 0, NULL);
	f->pol.job = &v;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_int_equal(f->rec.fail_node[0], '\0');
	fx_free(f);

	v.role = NPF_JOB_ROLE_UNKNOWN;
	v.reason = "no row from node3";
	f = job_run(0, &v);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
	assert_int_equal(f->rec.n_vars, 0);
	assert_string_equal(f->rec.summary, "unknown: job check: no row from node3");
	/* Nobody to blame for a row that did not come. */
	assert_int_equal(f->rec.fail_node[0], '\0');
	assert_int_equal(f->rec.fail_ifname[0], '\0');
	fx_free(f);

	/* A job of one node: the summary still says what the job decided. */
	v.role = NPF_JOB_ROLE_FAIL;
	v.reason = "no network works for every pair";
	f = cluster_view(dead_fabric4, 1, 0, NULL);
	f->pol.job = &v;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_string_equal(f->rec.summary, "fail: job check: no network works for every pair");
	fx_free(f);

	/* A role this code does not know (a newer coordinator): unknown, never ok. */
	v.role = (enum npf_job_role)42;
	v.net = MGMT;
	f = job_run(0, &v);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
	assert_int_equal(f->rec.n_vars, 0);
	fx_free(f);
}

/* Same evidence in another order (peers listed differently, addresses announced in a
 * different order) must give the same network: nothing local takes part. */
static const struct cl_node basic_shuffled[] = {
	{ "node1",
	  { IFS("ens1f0", "198.18.2.1/24", 100000), IFS("eth0", "198.18.1.1/24", 1000) } },
	{ "node3",
	  { IFS("ens1f0", "198.18.2.3/24", 100000), IFS("eth0", "198.18.1.3/24", 1000) } },
	{ "node2",
	  { IFS("eth0", "198.18.1.2/24", 1000), IFS("ens1f0", "198.18.2.2/24", 100000) } },
};

/* Equal speed everywhere: only the prefix value can decide, identically on all nodes. */
static const struct cl_node equal_nets[] = {
	{ "node1", { IFA("ethB", "198.18.9.1/24"), IFA("ethA", "198.18.3.1/24") } },
	{ "node2", { IFA("ethA", "198.18.9.2/24"), IFA("ethB", "198.18.3.2/24") } },
	{ "node3", { IFA("x0", "198.18.3.3/24"), IFA("x1", "198.18.9.3/24") } },
};

static void deterministic_order(void **state)
{
	(void)state;

	for (size_t self = 0; self < 3; self++) {
		struct fx *a = cluster_view(basic, 3, self, NULL);
		struct fx *b = cluster_view(basic_shuffled, 3, self, NULL);

		fx_run(a);
		fx_run(b);
		assert_string_equal(a->rec.cidr, b->rec.cidr);
		fx_free(a);
		fx_free(b);
	}
	for (size_t self = 0; self < 3; self++) {
		struct fx *f = cluster_view(equal_nets, 3, self, NULL);

		fx_run(f);
		assert_string_equal(f->rec.cidr, "198.18.3.0/24");
		fx_free(f);
	}
}

/* Interface names differ between nodes. */
static const struct cl_node names_differ[] = {
	{ "node1", { IFS("ens1f0", "198.18.2.1/24", 100000), IFA("eth0", "198.18.1.1/24") } },
	{ "node2", { IFS("eth2", "198.18.2.2/24", 100000), IFA("eno1", "198.18.1.2/24") } },
	{ "node3", { IFS("eth2", "198.18.2.3/24", 100000), IFA("eno1", "198.18.1.3/24") } },
};

/* On node2, a second interface called ens1f0 sits on another network. */
static const struct cl_node names_clash[] = {
	{ "node1", { IFS("ens1f0", "198.18.2.1/24", 100000), IFA("eth0", "198.18.1.1/24") } },
	{ "node2",
	  { IFS("eth2", "198.18.2.2/24", 100000),
	    IFA("eno1", "198.18.1.2/24"),
	    IFA("ens1f0", "198.18.8.2/24") } },
};

static void assert_selects_exactly(const char *value, const struct npf_node *nd,
				   const char *want)
{
	struct ncclmatch_list l;
	size_t hits = 0;

	assert_int_equal(ncclmatch_parse(value, NCCLMATCH_SOCKET, &l), 0);
	for (size_t i = 0; i < nd->n_ifnames; i++)
		if (ncclmatch_ifname(&l, nd->ifnames[i])) {
			hits++;
			assert_string_equal(nd->ifnames[i], want);
		}
	assert_int_equal(hits, 1);
}

static void job_wide_names(void **state)
{
	struct fx *f;
	(void)state;

	/* Per node: each node gets its own exact name. */
	for (size_t self = 0; self < 3; self++) {
		f = cluster_view(names_differ, 3, self, NULL);
		fx_run(f);
		assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, self == 0 ? "=ens1f0" : "=eth2");
		fx_free(f);
	}

	/* Job-wide: one exact list, proven on every node with the matcher. */
	f = cluster_view(names_differ, 3, 0, NULL);
	f->pol.job_wide = true;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=ens1f0,eth2");
	for (size_t k = 0; k < f->chk.n_nodes; k++)
		assert_selects_exactly(var(f, NPF_VAR_NCCL_SOCKET_IFNAME), &f->chk.nodes[k],
				       k == 0 ? "ens1f0" : "eth2");
	/* Gloo and TensorPipe need one name that exists everywhere: left out, with a note. */
	assert_null(var(f, NPF_VAR_GLOO_SOCKET_IFNAME));
	assert_null(var(f, NPF_VAR_TP_SOCKET_IFNAME));
	assert_true(has_note(f, "GLOO_SOCKET_IFNAME: no job-wide value"));
	assert_true(has_note(f, "TP_SOCKET_IFNAME: no job-wide value"));
	/* A CIDR holds everywhere. */
	assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "198.18.2.0/24");
	assert_var(f, NPF_VAR_UCX_NET_DEVICES, "ens1f0,eth2");
	fx_free(f);

	/* Same names everywhere: Gloo keeps its value. */
	f = cluster_view(basic, 3, 1, NULL);
	f->pol.job_wide = true;
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=ens1f0");
	assert_var(f, NPF_VAR_GLOO_SOCKET_IFNAME, "ens1f0");
	fx_free(f);

	/* Clash: "=ens1f0,eth2" would select two interfaces on node2. */
	f = cluster_view(names_clash, 2, 0, NULL);
	f->pol.job_wide = true;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_null(var(f, NPF_VAR_NCCL_SOCKET_IFNAME));
	assert_true(has_note(f, "NCCL_SOCKET_IFNAME: no job-wide value: '=ens1f0,eth2' would "
				"also select ens1f0 on node2"));
	assert_null(var(f, NPF_VAR_UCX_NET_DEVICES));
	assert_var(f, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE, "198.18.2.0/24");
	fx_free(f);

	/* Per node, the clash does not matter: the value is ours alone. */
	f = cluster_view(names_clash, 2, 0, NULL);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=ens1f0");
	fx_free(f);
}

/* Prefix clashes on this node: eth1 vs eth10, eth0 vs eth0.100. The published value must
 * select only the chosen interface under NCCL's grammar. */
static const struct cl_node prefix_clash[] = {
	{ "node1",
	  { IFS("eth1", "198.18.2.1/24", 100000),
	    IFA("eth10", "198.18.3.1/24"),
	    IFA("eth0", "198.18.1.1/24"),
	    IFA("eth0.100", "198.18.4.1/24") } },
	{ "node2",
	  { IFS("eth1", "198.18.2.2/24", 100000),
	    IFA("eth10", "198.18.3.2/24"),
	    IFA("eth0", "198.18.1.2/24"),
	    IFA("eth0.100", "198.18.4.2/24") } },
};

static void prefix_clashes(void **state)
{
	struct fx *f = cluster_view(prefix_clash, 2, 0, NULL);
	(void)state;

	fx_run(f);
	assert_string_equal(f->rec.ifname, "eth1");
	assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=eth1");
	assert_selects_exactly(var(f, NPF_VAR_NCCL_SOCKET_IFNAME), &f->chk.nodes[0], "eth1");
	fx_free(f);

	f = cluster_view(prefix_clash, 2, 0, NULL);
	set_pattern(&f->prefer, "eth0");
	fx_run(f);
	assert_string_equal(f->rec.ifname, "eth0");
	assert_selects_exactly(var(f, NPF_VAR_NCCL_SOCKET_IFNAME), &f->chk.nodes[0], "eth0");
	fx_free(f);
}

static enum npf_outcome everything_to_node3_dead(const struct cl_node *a, const struct cl_if *ia,
						 const struct cl_node *b, const struct cl_if *ib)
{
	(void)ia;
	(void)ib;
	return strcmp(a->name, "node3") == 0 || strcmp(b->name, "node3") == 0 ? NPF_OUT_TIMEOUT :
										 NPF_OUT_OK;
}

static void fail_names_node_and_interfaces(void **state)
{
	struct fx *f;
	(void)state;

	f = cluster_view(basic, 3, 0, everything_to_node3_dead);
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_string_equal(f->rec.fail_node, "node3");
	assert_int_equal(f->rec.fail_outcome, NPF_OUT_TIMEOUT);
	assert_int_equal(f->rec.n_vars, 0);
	assert_false(f->rec.have_choice);
	/* Both interfaces tried, each with its evidence. */
	assert_int_equal(rejection(f, "ens1f0")->outcome, NPF_OUT_TIMEOUT);
	assert_string_equal(rejection(f, "ens1f0")->peer_name, "node3");
	assert_int_equal(rejection(f, "eth0")->outcome, NPF_OUT_TIMEOUT);
	assert_non_null(strstr(f->rec.summary, "fail"));
	assert_non_null(strstr(f->rec.summary, "node3"));
	assert_non_null(strstr(f->rec.summary, "ens1f0"));
	assert_non_null(strstr(f->rec.summary, "eth0"));
	fx_free(f);

	/* Seen from node3 itself: everything fails with every peer: the suspect is node3. */
	f = cluster_view(basic, 3, 2, everything_to_node3_dead);
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_string_equal(f->rec.fail_node, "node3");
	fx_free(f);
}

/* Every outcome that is a failure fails an interface; a missing direction is unknown. */
static void every_outcome_mix(void **state)
{
	(void)state;

	for (int fo = 0; fo < NPF_OUT__COUNT; fo++)
		for (int ro = 0; ro < NPF_OUT__COUNT; ro++)
			for (int sparse = 0; sparse < 2; sparse++) {
				struct fx *f = cluster_view(basic, 2, 0, NULL);
				enum npf_verdict want;
				bool fbad = fo != NPF_OUT_OK && fo != NPF_OUT_PEER_UNAVAILABLE &&
					    fo != NPF_OUT_NOT_PROBED;
				bool rbad = ro != NPF_OUT_OK && ro != NPF_OUT_PEER_UNAVAILABLE &&
					    ro != NPF_OUT_NOT_PROBED;
				/* The pair rule (lib/pairstate.h): node2 is probed and
				 * available, so it needs ok both ways, sparse or not. */
				bool both_ok = fo == NPF_OUT_OK && ro == NPF_OUT_OK;

				/* Both links to node2 get the same mix. */
				for (size_t l = 0; l < f->chk.n_links; l++) {
					f->chk.links[l].fwd = (enum npf_outcome)fo;
					f->chk.links[l].rev = (enum npf_outcome)ro;
				}
				f->chk.sparse = sparse;
				fx_run(f);
				if (fbad || rbad)
					want = NPF_VERDICT_FAIL;
				else if (!both_ok)
					want = NPF_VERDICT_UNKNOWN;
				else
					want = NPF_VERDICT_OK;
				if (f->rec.verdict != want)
					fail_msg("fwd %s rev %s sparse %d: verdict %s, want %s",
						 npf_outcome_name(fo), npf_outcome_name(ro), sparse,
						 npf_verdict_name(f->rec.verdict),
						 npf_verdict_name(want));
				if (want != NPF_VERDICT_OK)
					assert_int_equal(f->rec.n_vars, 0);
				fx_free(f);
			}
}

static void unknown_when_peer_unavailable(void **state)
{
	struct fx *f = cluster_view(basic, 3, 0, NULL);
	(void)state;

	/* node3's daemon did not answer: its links say so and the node is unavailable. */
	f->chk.nodes[2].available = false;
	snprintf(f->chk.nodes[2].error, sizeof(f->chk.nodes[2].error), "connection refused");
	for (size_t l = 0; l < f->chk.n_links; l++)
		if (f->chk.links[l].peer == 2)
			f->chk.links[l].fwd = f->chk.links[l].rev = NPF_OUT_PEER_UNAVAILABLE;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
	assert_int_equal(f->rec.n_vars, 0);
	assert_string_equal(f->rec.fail_node, "node3");
	assert_int_equal(f->rec.fail_outcome, NPF_OUT_PEER_UNAVAILABLE);
	assert_true(f->rec.have_choice); /* provisional */
	assert_string_equal(f->rec.ifname, "ens1f0");
	assert_non_null(strstr(f->rec.summary, "unknown"));
	assert_non_null(strstr(f->rec.summary, "node3"));
	fx_free(f);

	/* Even when the links claim ok, an unavailable node is never verified. */
	f = cluster_view(basic, 3, 0, NULL);
	f->chk.nodes[1].available = false;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
	fx_free(f);

	/* But when every network fails with an available peer, it is a failure. */
	f = cluster_view(basic, 3, 0, everything_to_node3_dead);
	f->chk.nodes[1].available = false;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_string_equal(f->rec.fail_node, "node3");
	fx_free(f);
}

static void sparse_mode(void **state)
{
	struct fx *f = cluster_view(basic, 3, 0, NULL);
	(void)state;

	/* node3 is outside this node's plan: its links were not probed. */
	for (size_t l = 0; l < f->chk.n_links; l++)
		if (f->chk.links[l].peer == 2)
			f->chk.links[l].fwd = f->chk.links[l].rev = NPF_OUT_NOT_PROBED;
	f->chk.nodes[2].probed = false;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
	npf_recommendation_clear(&f->rec);
	f->chk.sparse = true;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.ifname, "ens1f0");
	assert_true(has_note(f, "sparse"));
	npf_recommendation_clear(&f->rec);
	/* The policy flag works too. */
	f->chk.sparse = false;
	f->pol.sparse = true;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	npf_recommendation_clear(&f->rec);
	/* A failure with a probed peer still fails the interface in sparse mode. */
	for (size_t l = 0; l < f->chk.n_links; l++)
		if (f->chk.links[l].peer == 1 && strcmp(f->chk.links[l].ifname, "ens1f0") == 0)
			f->chk.links[l].rev = NPF_OUT_REFUSED;
	fx_run(f);
	assert_string_equal(f->rec.ifname, "eth0");
	assert_int_equal(rejection(f, "ens1f0")->outcome, NPF_OUT_REFUSED);
	assert_int_equal(rejection(f, "ens1f0")->dir, NPF_DIR_REVERSE);
	fx_free(f);

	/* Job-wide in a sparse plan: an unprobed node without an address on the network
	 * gets no name-based values, but the per-node answer stands. */
	{
		static const struct cl_node partial[] = {
			{ "node1", { IFS("ens1f0", "198.18.2.1/24", 100000) } },
			{ "node2", { IFS("ens1f0", "198.18.2.2/24", 100000) } },
			{ "node3", { IFS("eth0", "198.18.1.3/24", 1000) } },
		};

		f = cluster_view(partial, 3, 0, NULL);
		for (size_t l = 0; l < f->chk.n_links; l++)
			if (f->chk.links[l].peer == 2)
				f->chk.links[l].fwd = f->chk.links[l].rev = NPF_OUT_NOT_PROBED;
		f->chk.nodes[2].probed = false; /* outside the plan, as the test says */
		f->chk.sparse = true;
		f->pol.job_wide = true;
		fx_run(f);
		assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
		assert_null(var(f, NPF_VAR_NCCL_SOCKET_IFNAME));
		assert_null(var(f, NPF_VAR_GLOO_SOCKET_IFNAME));
		assert_true(has_note(f, "node3 announced no address on 198.18.2.0/24"));
		fx_free(f);
	}
}

/* Above full_mesh_max the engine probes only its plan and reports every other peer as it
 * left it: never contacted, so not available, not probed, links not-probed. Those peers are
 * outside this node's evidence: a healthy 128-node check is ok. */
static void sparse_plan_peers_not_contacted(void **state)
{
	struct npf_inventory inv;
	struct npf_check chk;
	struct npf_recommendation rec;
	size_t n_plan = 0;
	char want[96];
	(void)state;

	assert_int_equal(sparse_check_build(128, 64, &chk, &inv, &n_plan), 0);
	assert_true(chk.sparse);
	assert_true(n_plan >= 2 && n_plan <= 10);
	assert_int_equal(npf_recommend(&inv, &chk, NULL, &rec), 0);
	assert_int_equal(rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(rec.ifname, "ens1f0");
	assert_string_equal(rec.cidr, "198.18.0.0/16");
	snprintf(want, sizeof(want), "works to and from %zu peers (sparse plan", n_plan);
	assert_non_null(strstr(rec.summary, want));
	assert_string_equal(npf_recommendation_get(&rec, NPF_VAR_NCCL_SOCKET_IFNAME), "=ens1f0");
	npf_recommendation_clear(&rec);

	/* A planned peer whose daemon did not answer still leaves the check unknown. */
	for (size_t k = 1; k < chk.n_nodes; k++)
		if (chk.nodes[k].probed) {
			chk.nodes[k].available = false;
			chk.links[k - 1].fwd = chk.links[k - 1].rev = NPF_OUT_PEER_UNAVAILABLE;
			assert_int_equal(npf_recommend(&inv, &chk, NULL, &rec), 0);
			assert_int_equal(rec.verdict, NPF_VERDICT_UNKNOWN);
			assert_string_equal(rec.fail_node, chk.nodes[k].name);
			npf_recommendation_clear(&rec);
			chk.nodes[k].available = true;
			chk.links[k - 1].fwd = chk.links[k - 1].rev = NPF_OUT_OK;
			break;
		}

	/* A failing planned peer still fails the only interface. */
	for (size_t k = 1; k < chk.n_nodes; k++)
		if (chk.nodes[k].probed) {
			chk.links[k - 1].rev = NPF_OUT_TIMEOUT;
			assert_int_equal(npf_recommend(&inv, &chk, NULL, &rec), 0);
			assert_int_equal(rec.verdict, NPF_VERDICT_FAIL);
			npf_recommendation_clear(&rec);
			chk.links[k - 1].rev = NPF_OUT_OK;
			break;
		}

	/* The same silent peers in a full mesh are unavailable daemons: unknown. */
	chk.sparse = false;
	assert_int_equal(npf_recommend(&inv, &chk, NULL, &rec), 0);
	assert_int_equal(rec.verdict, NPF_VERDICT_UNKNOWN);
	npf_recommendation_clear(&rec);
	npf_check_clear(&chk);
	npf_inventory_clear(&inv);
}

/* Interfaces that cannot carry the job, or that were never probed, hold no network: they
 * neither win nor turn a failure into "unknown". */
static void down_and_unannounced(void **state)
{
	struct fx *f = cluster_view(basic, 3, 0, everything_to_node3_dead);
	struct npf_iface *ifc;
	struct npf_addr a;
	(void)state;

	/* ens1f0 lost its carrier after the check, eth1 joined the fabric unannounced. */
	inv_if(&f->inv, "ens1f0")->flags = IFF_UP;
	ifc = inv_if(&f->inv, "eth1");
	parse_cidr("198.18.2.11/24", &a);
	assert_int_equal(npf_iface_add_addr(ifc, &a), 0);
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_non_null(strstr(rejection(f, "ens1f0")->reason, "not running"));
	assert_non_null(strstr(rejection(f, "eth1")->reason, "not announced"));
	fx_free(f);
}

static void no_peers_no_candidates(void **state)
{
	struct fx *f = cluster_view(basic, 1, 0, NULL);
	static const struct cl_node bare[] = {
		{ "node1", { IFA("eth0", NULL) } },
		{ "node2", { IFA("eth0", "198.18.1.2/24") } },
	};
	(void)state;

	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_UNKNOWN);
	assert_int_equal(f->rec.n_vars, 0);
	fx_free(f);

	f = cluster_view(bare, 2, 0, NULL);
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_string_equal(f->rec.fail_node, "node1");
	assert_non_null(strstr(rejection(f, "eth0")->reason, "no IP address"));
	fx_free(f);
}

/* Two NICs in one subnet: the kernel sends everything out of eth1. */
static const struct cl_node same_subnet[] = {
	{ "node1", { IFA("eth1", "198.18.5.1/24"), IFA("eth2", "198.18.5.11/24") } },
	{ "node2", { IFA("eth1", "198.18.5.2/24"), IFA("eth2", "198.18.5.12/24") } },
};

static enum npf_outcome egress_eth1(const struct cl_node *a, const struct cl_if *ia,
				    const struct cl_node *b, const struct cl_if *ib)
{
	(void)a;
	(void)b;
	(void)ib;
	return strcmp(ia->name, "eth2") == 0 ? NPF_OUT_WRONG_EGRESS : NPF_OUT_OK;
}

static void wrong_egress(void **state)
{
	struct fx *f = cluster_view(same_subnet, 2, 0, egress_eth1);
	(void)state;

	set_pattern(&f->prefer, "eth2"); /* policy cannot make a wrong egress work */
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.ifname, "eth1");
	assert_int_equal(rejection(f, "eth2")->outcome, NPF_OUT_WRONG_EGRESS);
	fx_free(f);
}

/* One interface, IPv4 broken, IPv6 working: the link summary merges both networks; the
 * raw paths tell them apart. */
static void dual_stack_split_by_paths(void **state)
{
	static const struct cl_node ds[] = {
		{ "node1", { IFA("eth0", "198.18.1.1/24"), IFA("eth0", "2001:db8:1::1/64") } },
		{ "node2", { IFA("eth0", "198.18.1.2/24"), IFA("eth0", "2001:db8:1::2/64") } },
	};
	struct fx *f = cluster_view(ds, 2, 0, NULL);
	struct npf_path *p = calloc(4, sizeof(*p));
	const char *peers[2] = { "198.18.1.2/24", "2001:db8:1::2/64" };
	const char *ours[2] = { "198.18.1.1/24", "2001:db8:1::1/64" };
	(void)state;

	assert_non_null(p);
	for (int i = 0; i < 2; i++) {
		p[2 * i].peer = 1;
		p[2 * i].dir = NPF_DIR_FORWARD;
		strcpy(p[2 * i].local_if, "eth0");
		parse_cidr(peers[i], &p[2 * i].peer_addr);
		p[2 * i].outcome = i == 0 ? NPF_OUT_TIMEOUT : NPF_OUT_OK;
		p[2 * i + 1].peer = 1;
		p[2 * i + 1].dir = NPF_DIR_REVERSE;
		strcpy(p[2 * i + 1].local_if, "eth0");
		parse_cidr(ours[i], &p[2 * i + 1].local_addr);
		p[2 * i + 1].outcome = i == 0 ? NPF_OUT_TIMEOUT : NPF_OUT_OK;
	}
	free(f->chk.paths); /* cluster_view's own paths: replaced by these */
	f->chk.paths = p;
	f->chk.n_paths = 4;
	f->pol.master_addr = true;
	f->pol.first_node = "node2";
	fx_run(f);
	/* Gloo, TensorPipe and UCX bind the broken IPv4 address of eth0: no verified
	 * network works for them, and the verdict says so. */
	assert_int_equal(f->rec.verdict, NPF_VERDICT_DEGRADED);
	assert_non_null(strstr(f->rec.summary, "gloo,tensorpipe,ucx cannot be steered"));
	assert_string_equal(f->rec.cidr, "2001:db8:1::/64");
	assert_var(f, NPF_VAR_NCCL_SOCKET_FAMILY, "AF_INET6");
	assert_var(f, NPF_VAR_MASTER_ADDR, "2001:db8:1::2");
	/* Open MPI takes no IPv6 CIDR, and "eth0" would hand it the broken 198.18.1.1 too. */
	assert_null(var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE));
	assert_null(var(f, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE));
	assert_true(has_note(f, "by name (eth0) it would also use 198.18.1.1, which is not on "
				"2001:db8:1::/64"));

	/* The IPv6 probe left through another interface: no longer ok on eth0. */
	npf_recommendation_clear(&f->rec);
	strcpy(p[2].local_if, "eth9");
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	assert_non_null(strstr(f->rec.summary, "wrong-egress"));
	fx_free(f);

	/* Both families work: IPv4 first, as NCCL itself prefers; no family forced, and
	 * Open MPI gets the IPv4 CIDR. */
	f = cluster_view(ds, 2, 0, NULL);
	fx_run(f);
	assert_string_equal(f->rec.cidr, "198.18.1.0/24");
	assert_null(var(f, NPF_VAR_NCCL_SOCKET_FAMILY));
	assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "198.18.1.0/24");
	assert_var(f, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE, "198.18.1.0/24");
	fx_free(f);
}

/* Open MPI 4.1 parses only IPv4 CIDRs ("invalid if_inexclude"); on an IPv6 network it gets
 * the interface name, where that name holds (job-wide: on every node) and selects nothing
 * unverified. */
static void ompi_ipv6_by_name(void **state)
{
	static const struct cl_node v6[] = {
		{ "node1", { IFA("ens1f0", "2001:db8:1::1/64"), IFA("docker0", "172.17.0.1/16") } },
		{ "node2", { IFA("ens1f0", "2001:db8:1::2/64"), IFA("docker0", "172.17.0.1/16") } },
		{ "node3", { IFA("ens1f0", "2001:db8:1::3/64"), IFA("docker0", "172.17.0.1/16") } },
	};
	static const struct cl_node v6_names[] = {
		{ "node1", { IFA("ens1f0", "2001:db8:1::1/64") } },
		{ "node2", { IFA("eth2", "2001:db8:1::2/64") } },
	};
	/* node2's fabric also holds a ULA prefix nobody probed. */
	static const struct cl_node v6_ula[] = {
		{ "node1", { IFA("ens1f0", "2001:db8:1::1/64") } },
		{ "node2", { IFA("ens1f0", "2001:db8:1::2/64"), IFA("ens1f0", "fd00:5::2/64") } },
	};
	struct fx *f;
	struct npf_addr ll;
	(void)state;

	f = cluster_view(v6, 3, 0, docker_wrong_peer);
	/* A link-local address is not listed by Open MPI: no reason to leave the name out. */
	parse_cidr("fe80::1/64", &ll);
	assert_int_equal(npf_iface_add_addr(inv_if(&f->inv, "ens1f0"), &ll), 0);
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.cidr, "2001:db8:1::/64");
	assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "ens1f0");
	assert_var(f, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE, "ens1f0");
	npf_recommendation_clear(&f->rec);
	f->pol.job_wide = true;
	fx_run(f);
	assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "ens1f0");
	assert_var(f, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE, "ens1f0");
	npf_recommendation_clear(&f->rec);
	/* Only one of the two asked for: only that one. */
	f->pol.publish = NPF_PUBVAR_OMPI_MCA_OOB_TCP_IF_INCLUDE;
	fx_run(f);
	assert_null(var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE));
	assert_var(f, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE, "ens1f0");
	fx_free(f);

	/* Names differ: fine per node, no job-wide value (mpirun copies the launch node's). */
	f = cluster_view(v6_names, 2, 1, NULL);
	fx_run(f);
	assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "eth2");
	npf_recommendation_clear(&f->rec);
	f->pol.job_wide = true;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_null(var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE));
	assert_null(var(f, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE));
	assert_true(has_note(f, "the nodes use different interface names on 2001:db8:1::/64"));
	fx_free(f);

	/* A peer's interface carries another global prefix: per node (ours is clean) the
	 * name stands; job-wide it would reach node2's unprobed fd00:5::2. */
	f = cluster_view(v6_ula, 2, 0, NULL);
	fx_run(f);
	assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "ens1f0");
	npf_recommendation_clear(&f->rec);
	f->pol.job_wide = true;
	fx_run(f);
	assert_null(var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE));
	assert_true(has_note(f, "it would also use fd00:5::2 on node2"));
	fx_free(f);
}

/* Linux allows ',' in interface names; NCCL splits on it. Only the real grammar sees that
 * "=en,1" selects nothing called "en,1". */
static void comma_in_name(void **state)
{
	static const struct cl_node comma[] = {
		{ "node1", { IFS("ens1f0", "198.18.2.1/24", 100000) } },
		{ "node2", { IFS("en,1", "198.18.2.2/24", 100000) } },
	};
	struct fx *f = cluster_view(comma, 2, 1, NULL);
	(void)state;

	/* On node2 itself no NCCL_SOCKET_IFNAME can name it; Gloo splits on ',' too but
	 * takes the one name it is given here. */
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_DEGRADED);
	if (!strstr(f->rec.summary, "but nccl,gloo cannot be steered to it"))
		fail_msg("%s", f->rec.summary);
	assert_null(var(f, NPF_VAR_NCCL_SOCKET_IFNAME));
	assert_true(has_note(f, "NCCL_SOCKET_IFNAME left out"));
	fx_free(f);

	/* From node1, the job-wide list would miss node2's interface. */
	f = cluster_view(comma, 2, 0, NULL);
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=ens1f0");
	npf_recommendation_clear(&f->rec);
	f->pol.job_wide = true;
	fx_run(f);
	assert_null(var(f, NPF_VAR_NCCL_SOCKET_IFNAME));
	assert_true(has_note(f, "NCCL_SOCKET_IFNAME: no job-wide value: '=ens1f0,en,1' would "
				"miss en,1 on node2"));
	fx_free(f);
}

static void master_addr_and_mask(void **state)
{
	struct fx *f;
	(void)state;

	f = cluster_view(basic, 3, 1, NULL);
	f->pol.master_addr = true;
	f->pol.first_node = "node1";
	fx_run(f);
	assert_var(f, NPF_VAR_MASTER_ADDR, "198.18.2.1");
	fx_free(f);

	f = cluster_view(basic, 3, 0, NULL);
	f->pol.master_addr = true;
	fx_run(f);
	assert_null(var(f, NPF_VAR_MASTER_ADDR));
	assert_true(has_note(f, "MASTER_ADDR left out"));
	fx_free(f);

	f = cluster_view(basic, 3, 0, NULL);
	f->pol.master_addr = true;
	f->pol.first_node = "node9";
	fx_run(f);
	assert_null(var(f, NPF_VAR_MASTER_ADDR));
	fx_free(f);

	/* Only what the operator asked for. */
	f = cluster_view(basic, 3, 0, NULL);
	f->pol.publish = NPF_PUBVAR_NCCL_SOCKET_IFNAME | NPF_PUBVAR_OMPI_MCA_BTL_TCP_IF_INCLUDE;
	fx_run(f);
	/* ... and the node marker, which every environment carries. */
	assert_int_equal(f->rec.n_vars, 3);
	assert_string_equal(f->rec.vars[0].name, "NCCL_SOCKET_IFNAME");
	assert_string_equal(f->rec.vars[1].name, "OMPI_MCA_btl_tcp_if_include");
	assert_string_equal(f->rec.vars[2].name, "NETPREFLIGHT_NODE");
	assert_string_equal(f->rec.vars[2].value, "node1");
	fx_free(f);
}

/* ---- RDMA: HCA list and GID policy ------------------------------------------------------- */

struct gid_spec {
	int index;
	const char *gid; /* IPv6 text */
	enum npf_gid_type type;
};

static void add_port(struct fx *f, const char *dev, int port, enum npf_link_layer ll,
		     enum npf_port_state st, const char *netdev, const struct gid_spec *gids,
		     size_t n_gids)
{
	struct npf_rdma_dev *d = NULL;
	struct npf_rdma_port *p;

	for (size_t i = 0; i < f->inv.n_rdma; i++)
		if (strcmp(f->inv.rdma[i].name, dev) == 0)
			d = &f->inv.rdma[i];
	if (!d) {
		d = realloc(f->inv.rdma, (f->inv.n_rdma + 1) * sizeof(*d));
		assert_non_null(d);
		f->inv.rdma = d;
		d = &d[f->inv.n_rdma++];
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%s", dev);
	}
	p = realloc(d->ports, (d->n_ports + 1) * sizeof(*p));
	assert_non_null(p);
	d->ports = p;
	p = &p[d->n_ports++];
	memset(p, 0, sizeof(*p));
	p->port = port;
	p->state = st;
	p->link_layer = ll;
	snprintf(p->netdev, sizeof(p->netdev), "%s", netdev ? netdev : "");
	p->gids = calloc(n_gids ? n_gids : 1, sizeof(*p->gids));
	assert_non_null(p->gids);
	p->n_gids = n_gids;
	for (size_t i = 0; i < n_gids; i++) {
		p->gids[i].index = gids[i].index;
		assert_int_equal(inet_pton(AF_INET6, gids[i].gid, p->gids[i].raw), 1);
		p->gids[i].type = gids[i].type;
		snprintf(p->gids[i].ndev, sizeof(p->gids[i].ndev), "%s", netdev ? netdev : "");
		if (gids[i].index + 1 > p->gid_tbl_len)
			p->gid_tbl_len = gids[i].index + 1;
	}
	p->nccl_auto_gid = p->nccl_legacy_gid = -1;
}

static const struct cl_node roce2[] = {
	{ "node1",
	  { IFS("eno1", "198.18.1.1/24", 1000),
	    IFD("ens1f0np0", "198.18.2.1/24", 100000, 0, "mlx5_0", 1),
	    IFD("ens2f0np0", "198.18.3.1/24", 100000, 0, "mlx5_1", 1) } },
	{ "node2",
	  { IFS("eno1", "198.18.1.2/24", 1000),
	    IFD("ens1f0np0", "198.18.2.2/24", 100000, 0, "mlx5_0", 1),
	    IFD("ens2f0np0", "198.18.3.2/24", 100000, 0, "mlx5_1", 1) } },
};

#define V1 NPF_GID_IB_ROCE_V1
#define V2 NPF_GID_ROCE_V2

/* The usual mlx5 layout [fe80 v1, fe80 v2, IPv4 v1, IPv4 v2]. */
static const struct gid_spec std0[] = {
	{ 0, "fe80::a288:c2ff:fe5b:3ec", V1 },
	{ 1, "fe80::a288:c2ff:fe5b:3ec", V2 },
	{ 2, "::ffff:198.18.2.1", V1 },
	{ 3, "::ffff:198.18.2.1", V2 },
};

/* Container layout: empty slots 0-3, the same pattern at 4-7. */
static const struct gid_spec gap1[] = {
	{ 4, "fe80::a288:c2ff:fe5b:3ed", V1 },
	{ 5, "fe80::a288:c2ff:fe5b:3ed", V2 },
	{ 6, "::ffff:198.18.3.1", V1 },
	{ 7, "::ffff:198.18.3.1", V2 },
};

static const char *hca_why(const struct fx *f, const char *dev, int port)
{
	for (size_t i = 0; i < f->rec.n_hcas; i++)
		if (strcmp(f->rec.hcas[i].dev, dev) == 0 && f->rec.hcas[i].port == port)
			return f->rec.hcas[i].published ? NULL : f->rec.hcas[i].why;
	return "missing";
}

static void roce_standard_layout(void **state)
{
	struct fx *f;
	(void)state;

	/* Current NCCL: its own pick (3) is right, but the job may bring an older NCCL:
	 * one index for every port holds for every version (GID for every NCCL), and UCX
	 * gets the same steering. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	fx_run(f);
	assert_string_equal(f->rec.ifname, "ens1f0np0");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_var(f, NPF_VAR_UCX_NET_DEVICES, "mlx5_0:1");
	assert_var(f, NPF_VAR_NCCL_IB_GID_INDEX, "3");
	assert_var(f, NPF_VAR_UCX_IB_GID_INDEX, "3");
	assert_true(has_note(f, "holds for every NCCL version"));
	assert_null(var(f, NPF_VAR_NCCL_IB_ADDR_FAMILY));
	assert_null(var(f, NPF_VAR_NCCL_IB_ADDR_RANGE));
	assert_int_equal(f->rec.hcas[0].gid_index, 3);
	assert_int_equal(f->rec.hcas[0].auto_gid, 3);
	fx_free(f);

	/* NCCL 2.20: index 0 would be the link-local v1 GID: pin 3. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	f->pol.nccl_version = NPF_NCCL_VERSION(2, 20, 5);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_GID_INDEX, "3");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	fx_free(f);
}

static void roce_container_gaps_and_two_hcas(void **state)
{
	struct fx *f;
	(void)state;

	/* Two rails, auto indices 3 and 7: fine on current NCCL, per-port detection. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", gap1, 4);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	assert_int_equal(f->rec.hcas[1].auto_gid, 7);
	fx_free(f);

	/* Old NCCL: one global index; 3 and 7 disagree -> narrow to one, and say so. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", gap1, 4);
	f->pol.nccl_version = NPF_NCCL_VERSION(2, 19, 3);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_GID_INDEX, "3");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_non_null(strstr(hca_why(f, "mlx5_1", 1), "index 7"));
	assert_true(has_note(f, "NCCL_IB_HCA narrowed: mlx5_1:1"));
	fx_free(f);

	/* Old NCCL, only the container port: pin 7. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", gap1, 4);
	f->pol.nccl_version = NPF_NCCL_VERSION(2, 18, 1);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_GID_INDEX, "7");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_1:1");
	fx_free(f);

	/* Old NCCL but NCCL_IB_GID_INDEX not published: NCCL stays on 0; no port fits. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	f->pol.nccl_version = NPF_NCCL_VERSION(2, 18, 1);
	f->pol.publish = NPF_PUBVAR_NCCL_IB_HCA | NPF_PUBVAR_NCCL_SOCKET_IFNAME;
	fx_run(f);
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	assert_null(var(f, NPF_VAR_NCCL_IB_HCA));
	assert_true(has_note(f, "no RDMA port passed"));
	fx_free(f);
}

static void roce_ipv6_only(void **state)
{
	static const struct cl_node v6[] = {
		{ "node1", { IFD("ens1f0np0", "2001:db8:2::1/64", 100000, 0, "mlx5_0", 1) } },
		{ "node2", { IFD("ens1f0np0", "2001:db8:2::2/64", 100000, 0, "mlx5_0", 1) } },
	};
	static const struct gid_spec g6[] = {
		{ 0, "fe80::a288:c2ff:fe5b:3ec", V1 },
		{ 1, "fe80::a288:c2ff:fe5b:3ec", V2 },
		{ 2, "2001:db8:2::1", V1 },
		{ 3, "2001:db8:2::1", V2 },
	};
	struct fx *f = cluster_view(v6, 2, 0, NULL);
	(void)state;

	/* NCCL's default family is AF_INET: with no IPv4 GID it stays on 0 (fe80). One
	 * port, one index: NCCL_IB_GID_INDEX pins it for every NCCL version. */
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", g6, 4);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_SOCKET_FAMILY, "AF_INET6");
	assert_var(f, NPF_VAR_NCCL_IB_GID_INDEX, "3");
	assert_null(var(f, NPF_VAR_NCCL_IB_ADDR_RANGE));
	assert_null(var(f, NPF_VAR_NCCL_IB_ADDR_FAMILY));
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_int_equal(f->rec.hcas[0].auto_gid, 3);
	fx_free(f);

	/* Without permission to publish the family, the port cannot be used right. */
	f = cluster_view(v6, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", g6, 4);
	f->pol.publish = NPF_PUBVAR_NCCL_IB_HCA | NPF_PUBVAR_NCCL_SOCKET_IFNAME;
	fx_run(f);
	assert_null(var(f, NPF_VAR_NCCL_IB_HCA));
	assert_non_null(strstr(hca_why(f, "mlx5_0", 1), "would use index 0"));
	fx_free(f);

	/* Without NCCL_IB_GID_INDEX, the per-version rule: the family steers NCCL >= 2.21.5. */
	f = cluster_view(v6, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", g6, 4);
	f->pol.publish = NPF_PUBVAR__ALL & ~NPF_PUBVAR_NCCL_IB_GID_INDEX;
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_ADDR_FAMILY, "AF_INET6");
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	assert_int_equal(f->rec.hcas[0].auto_gid, 3);
	assert_true(has_note(f, "NCCL >= 2.21.5 only"));
	fx_free(f);
}

/* The netdev carries a second IPv4 address whose GID comes first: NCCL's default pick is
 * the wrong address; a range steers it. */
static void roce_range_steers(void **state)
{
	static const struct gid_spec two4[] = {
		{ 0, "fe80::1", V1 },         { 1, "fe80::1", V2 },
		{ 2, "::ffff:10.9.9.1", V1 }, { 3, "::ffff:10.9.9.1", V2 },
		{ 4, "::ffff:198.18.2.1", V1 }, { 5, "::ffff:198.18.2.1", V2 },
	};
	struct fx *f = cluster_view(roce2, 2, 0, NULL);
	(void)state;

	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", two4, 6);
	/* (With NCCL_IB_GID_INDEX allowed, index 5 is pinned for every version.) */
	f->pol.publish = NPF_PUBVAR__ALL & ~NPF_PUBVAR_NCCL_IB_GID_INDEX;
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_ADDR_RANGE, "198.18.2.0/24");
	assert_null(var(f, NPF_VAR_NCCL_IB_ADDR_FAMILY));
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_int_equal(f->rec.hcas[0].auto_gid, 5);
	fx_free(f);
}

/* Ports that are down, have no netdev, or whose netdev failed are left out; the exact
 * value keeps mlx5_1 from selecting mlx5_10. */
static void hca_selection(void **state)
{
	static const struct cl_node many[] = {
		{ "node1",
		  { IFD("ens1f0np0", "198.18.2.1/24", 100000, 0, "mlx5_1", 1),
		    IFD("ens9f0np0", "198.18.9.1/24", 100000, 0, "mlx5_10", 1) } },
		{ "node2",
		  { IFD("ens1f0np0", "198.18.2.2/24", 100000, 0, "mlx5_1", 1),
		    IFD("ens9f0np0", "198.18.9.2/24", 100000, 0, "mlx5_10", 1) } },
	};
	static const struct gid_spec g1[] = {
		{ 0, "fe80::1", V1 }, { 1, "fe80::1", V2 },
		{ 2, "::ffff:198.18.2.1", V1 }, { 3, "::ffff:198.18.2.1", V2 },
	};
	static const struct gid_spec g10[] = {
		{ 0, "fe80::2", V1 }, { 1, "fe80::2", V2 },
		{ 2, "::ffff:198.18.9.1", V1 }, { 3, "::ffff:198.18.9.1", V2 },
	};
	struct fx *f = cluster_view(many, 2, 0, NULL);
	struct ncclmatch_list l;
	(void)state;

	/* ens9f0np0 (mlx5_10) is refused by the peer. */
	for (size_t i = 0; i < f->chk.n_links; i++)
		if (strcmp(f->chk.links[i].ifname, "ens9f0np0") == 0)
			f->chk.links[i].rev = NPF_OUT_REFUSED;
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", g1, 4);
	/* A DOWN port behind a working netdev is still out: NCCL would not use it. */
	add_port(f, "mlx5_1", 2, NPF_LL_ETHERNET, NPF_PORT_DOWN, "ens1f0np0", g1, 4);
	add_port(f, "mlx5_10", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens9f0np0", g10, 4);
	add_port(f, "mlx5_2", 1, NPF_LL_INFINIBAND, NPF_PORT_ACTIVE, NULL, NULL, 0);
	fx_run(f);
	/* mlx5_2 is InfiniBand without an IPoIB address: IB RDMA needs no IP, so it is
	 * kept, marked untested (it used to be dropped). */
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_1:1,mlx5_2:1");
	assert_true(has_note(f, "keeps mlx5_2:1 untested"));
	assert_non_null(strstr(hca_why(f, "mlx5_10", 1), "did not pass"));
	assert_non_null(strstr(hca_why(f, "mlx5_1", 2), "DOWN"));
	assert_int_equal(ncclmatch_parse(var(f, NPF_VAR_NCCL_IB_HCA), NCCLMATCH_IB, &l), 0);
	assert_true(ncclmatch_hca(&l, "mlx5_1", 1));
	assert_false(ncclmatch_hca(&l, "mlx5_1", 2));
	assert_false(ncclmatch_hca(&l, "mlx5_10", 1));
	assert_true(ncclmatch_hca(&l, "mlx5_2", 1));
	fx_free(f);
}

/* InfiniBand with a working IPoIB network: the IB port is published, no GID settings. */
static void ib_over_ipoib(void **state)
{
	static const struct cl_node ib[] = {
		{ "node1",
		  { IFS("eno1", "198.18.1.1/24", 25000),
		    IFD("ibp12s0", "198.18.6.1/24", 0, 0, "mlx5_0", 1) } },
		{ "node2",
		  { IFS("eno1", "198.18.1.2/24", 25000),
		    IFD("ibp12s0", "198.18.6.2/24", 0, 0, "mlx5_0", 1) } },
	};
	static const struct gid_spec gib[] = { { 0, "fe80::248a:703:9a:b0c1", V1 } };
	struct fx *f = cluster_view(ib, 2, 0, NULL);
	(void)state;

	add_port(f, "mlx5_0", 1, NPF_LL_INFINIBAND, NPF_PORT_ACTIVE, "ibp12s0", gib, 1);
	f->pol.nccl_version = NPF_NCCL_VERSION(2, 20, 5);
	fx_run(f);
	assert_string_equal(f->rec.ifname, "ibp12s0"); /* RDMA-backed ranks first */
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	assert_var(f, NPF_VAR_UCX_NET_DEVICES, "mlx5_0:1");
	fx_free(f);
}

static void job_wide_hca(void **state)
{
	struct fx *f = cluster_view(roce2, 2, 0, NULL);
	(void)state;

	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", gap1, 4);
	f->pol.job_wide = true;
	f->pol.nccl_version = NPF_NCCL_VERSION(2, 19, 3);
	fx_run(f);
	/* Narrowed here to mlx5_0 while node2's mlx5_1 works: every node must use the
	 * same rails, so mlx5_0 alone, with a note (was: no job-wide value at all). */
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_true(has_note(f, "every node must use the same rails"));
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	assert_true(has_note(f, "NCCL_IB_GID_INDEX: no job-wide value"));
	fx_free(f);

	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", gap1, 4);
	f->pol.job_wide = true;
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
	assert_var(f, NPF_VAR_UCX_NET_DEVICES, "mlx5_0:1,mlx5_1:1");
	fx_free(f);
}


/* ---- Decision v2: consumer addresses, RDMA evidence, routed fabrics ---------------------- */

/* The structured note about variable v with code, or NULL. */
static const struct npf_note *note_for(const struct fx *f, enum npf_note_code code, int v)
{
	for (size_t i = 0; i < f->rec.n_notes; i++)
		if (f->rec.notes[i].code == code && f->rec.notes[i].var == v)
			return &f->rec.notes[i];
	return NULL;
}

/* The same, failing the test when there is none. */
static const struct npf_note *must_note(const struct fx *f, enum npf_note_code code, int v)
{
	static char empty[1];
	static const struct npf_note none = { .text = empty };
	const struct npf_note *n = note_for(f, code, v);

	if (!n)
		fail_msg("no %s note about %s", npf_note_code_name(code), npf_var_name(v));
	return n ? n : &none;
}

/* Any network whose cidr starts with 10.0.0. is broken (timeouts both ways). */
static enum npf_outcome ten_dead(const struct cl_node *a, const struct cl_if *ia,
				 const struct cl_node *b, const struct cl_if *ib)
{
	(void)a;
	(void)b;
	(void)ib;
	return strncmp(ia->cidr, "10.0.0.", 7) == 0 ? NPF_OUT_TIMEOUT : NPF_OUT_OK;
}

/* Class 1: the verified network is a secondary subnet of eth0, whose primary address
 * (first in getifaddrs order) is on a network that fails. NCCL, Gloo, TensorPipe and UCX
 * bind the primary: with no other working network their names are left out with a note
 * naming the address, and the verdict is degraded naming them (issue 18). Open MPI sees
 * only the primary address too (if_posix_open, mca_btl_tcp_create; scenario
 * secondary-addr showed a hang): its values are left out as well. With another working
 * network every consumer binds correctly (a slower management NIC), that one is the
 * job's network, although the secondary subnet ranks higher on speed. */
static void secondary_address_interface(void **state)
{
	static const struct cl_node sec[] = {
		{ "node1", { IFS("eth0", "10.0.0.1/24", 1000), IFS("eth0", "198.18.2.1/24", 1000) } },
		{ "node2", { IFS("eth0", "10.0.0.2/24", 1000), IFS("eth0", "198.18.2.2/24", 1000) } },
	};
	static const struct cl_node sec_first[] = {
		{ "node1", { IFS("eth0", "198.18.2.1/24", 1000), IFS("eth0", "10.0.0.1/24", 1000) } },
		{ "node2", { IFS("eth0", "198.18.2.2/24", 1000), IFS("eth0", "10.0.0.2/24", 1000) } },
	};
	struct fx *f = cluster_view(sec, 2, 0, ten_dead);
	const struct npf_note *n;
	(void)state;

	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_DEGRADED);
	assert_non_null(strstr(f->rec.summary, "but nccl,gloo,tensorpipe,ucx cannot be steered "
					       "to it"));
	assert_string_equal(f->rec.cidr, "198.18.2.0/24");
	assert_null(var(f, NPF_VAR_NCCL_SOCKET_IFNAME));
	assert_null(var(f, NPF_VAR_GLOO_SOCKET_IFNAME));
	assert_null(var(f, NPF_VAR_TP_SOCKET_IFNAME));
	assert_null(var(f, NPF_VAR_UCX_NET_DEVICES));
	assert_true(has_note(f, "NCCL_SOCKET_IFNAME left out: nccl (ncclFindInterfaces) would "
				"bind 10.0.0.1"));
	n = must_note(f, NPF_NOTE_OMITTED, NPF_VAR_GLOO_SOCKET_IFNAME);
	assert_string_equal(n->ifname, "eth0");
	assert_non_null(strstr(n->text, "lookupAddrForIface"));
	assert_non_null(note_for(f, NPF_NOTE_CONSUMER_ADDRESS, NPF_VAR_TP_SOCKET_IFNAME));
	assert_null(var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE));
	assert_null(var(f, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE));
	assert_null(var(f, NPF_VAR_PRTE_MCA_PRTE_IF_INCLUDE));
	n = must_note(f, NPF_NOTE_OMITTED, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE);
	assert_non_null(strstr(n->text, "sees only the primary address of eth0, 10.0.0.1"));
	assert_var(f, NPF_VAR_NETPREFLIGHT_NODE, "node1");
	fx_free(f);

	/* A slower management NIC works too, and every consumer binds its address: it is
	 * the network, everything is published there, and the job check's rows rank it
	 * above the secondary subnet on every node (the same order in both flows). */
	{
		static const struct cl_node mgmt[] = {
			{ "node1",
			  { IFS("eth0", "10.0.0.1/24", 1000), IFS("eth0", "198.18.2.1/24", 1000),
			    IFS("eno1", "198.19.0.1/24", 100) } },
			{ "node2",
			  { IFS("eth0", "10.0.0.2/24", 1000), IFS("eth0", "198.18.2.2/24", 1000),
			    IFS("eno1", "198.19.0.2/24", 100) } },
		};
		const char *hosts[] = { "node1", "node2" };

		for (size_t self = 0; self < 2; self++) {
			struct npf_msg_row row;
			int64_t q_sec = -1, q_mgmt = -1;

			f = cluster_view(mgmt, 2, self, ten_dead);
			fx_run(f);
			assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
			assert_string_equal(f->rec.cidr, "198.19.0.0/24");
			assert_steered(f, "eno1");
			assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "198.19.0.0/24");
			assert_non_null(rejection(f, "eth0"));
			assert_int_equal(npf_recommend_row(&f->inv, &f->chk, &f->pol, hosts, 2,
							   self + 1, &row),
					 0);
			for (size_t k = 0; k < row.n_nets; k++) {
				if (strcmp(row.nets[k].key, "198.18.2.0/24") == 0)
					q_sec = row.nets[k].quality;
				if (strcmp(row.nets[k].key, "198.19.0.0/24") == 0)
					q_mgmt = row.nets[k].quality;
			}
			assert_true(q_sec >= 0 && q_mgmt > q_sec);
			npf_wire_row_clear(&row);
			fx_free(f);
		}
	}

	/* Another interface of ours on the same network whose first address is on it:
	 * that one is chosen (the local tie-break), and everything is published. */
	{
		static const struct cl_node two_nics[] = {
			{ "node1",
			  { IFS("eth0", "10.0.0.1/24", 1000), IFS("eth0", "198.18.2.1/24", 1000),
			    IFS("eth1", "198.18.2.11/24", 1000) } },
			{ "node2",
			  { IFS("eth0", "10.0.0.2/24", 1000), IFS("eth0", "198.18.2.2/24", 1000),
			    IFS("eth1", "198.18.2.12/24", 1000) } },
		};

		f = cluster_view(two_nics, 2, 0, ten_dead);
		fx_run(f);
		assert_string_equal(f->rec.cidr, "198.18.2.0/24");
		assert_string_equal(f->rec.ifname, "eth1");
		assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=eth1");
		assert_var(f, NPF_VAR_GLOO_SOCKET_IFNAME, "eth1");
		fx_free(f);
	}

	/* The verified subnet is the primary one: everything is published. */
	f = cluster_view(sec_first, 2, 0, ten_dead);
	fx_run(f);
	assert_string_equal(f->rec.cidr, "198.18.2.0/24");
	assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=eth0");
	assert_var(f, NPF_VAR_GLOO_SOCKET_IFNAME, "eth0");
	assert_var(f, NPF_VAR_TP_SOCKET_IFNAME, "eth0");
	assert_var(f, NPF_VAR_UCX_NET_DEVICES, "eth0");
	fx_free(f);
}

static enum npf_outcome v4_dead(const struct cl_node *a, const struct cl_if *ia,
				const struct cl_node *b, const struct cl_if *ib)
{
	(void)a;
	(void)b;
	(void)ib;
	return strchr(ia->cidr, ':') ? NPF_OUT_OK : NPF_OUT_REFUSED;
}

/* Class 1, dual stack: IPv4 is broken, IPv6 works. NCCL can be told the family (name and
 * family go together); Gloo, TensorPipe and UCX take IPv4 first and are left out. */
static void dual_stack_v6_only_works(void **state)
{
	static const struct cl_node ds[] = {
		{ "node1",
		  { IFS("ens1f0", "198.18.2.1/24", 100000), IFS("ens1f0", "2001:db8:2::1/64", 100000) } },
		{ "node2",
		  { IFS("ens1f0", "198.18.2.2/24", 100000), IFS("ens1f0", "2001:db8:2::2/64", 100000) } },
	};
	struct fx *f = cluster_view(ds, 2, 0, v4_dead);
	(void)state;

	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_DEGRADED);
	assert_string_equal(f->rec.cidr, "2001:db8:2::/64");
	assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=ens1f0");
	assert_var(f, NPF_VAR_NCCL_SOCKET_FAMILY, "AF_INET6");
	assert_null(var(f, NPF_VAR_GLOO_SOCKET_IFNAME));
	assert_true(has_note(f, "would bind 198.18.2.1"));
	assert_null(var(f, NPF_VAR_TP_SOCKET_IFNAME));
	assert_null(var(f, NPF_VAR_UCX_NET_DEVICES));
	/* By name Open MPI would use the IPv4 address too. */
	assert_null(var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE));
	assert_null(var(f, NPF_VAR_PRTE_MCA_PRTE_IF_INCLUDE));
	fx_free(f);

	/* Without NCCL_SOCKET_FAMILY, NCCL binds IPv4: the name is left out as well. */
	f = cluster_view(ds, 2, 0, v4_dead);
	f->pol.publish = NPF_PUBVAR__ALL & ~NPF_PUBVAR_NCCL_SOCKET_FAMILY;
	fx_run(f);
	assert_null(var(f, NPF_VAR_NCCL_SOCKET_IFNAME));
	assert_null(var(f, NPF_VAR_NCCL_SOCKET_FAMILY));
	fx_free(f);
}

static enum npf_outcome fabric_stalls(const struct cl_node *a, const struct cl_if *ia,
				      const struct cl_node *b, const struct cl_if *ib)
{
	(void)a;
	(void)b;
	(void)ib;
	return strncmp(ia->name, "ens", 3) == 0 ? NPF_OUT_BULK_STALL : NPF_OUT_OK;
}

static enum npf_outcome rail2_stalls(const struct cl_node *a, const struct cl_if *ia,
				     const struct cl_node *b, const struct cl_if *ib)
{
	(void)a;
	(void)b;
	(void)ib;
	return strcmp(ia->name, "ens2f0np0") == 0 ? NPF_OUT_BULK_STALL : NPF_OUT_OK;
}

static const struct gid_spec std1[] = {
	{ 0, "fe80::a288:c2ff:fe5b:4ec", V1 },
	{ 1, "fe80::a288:c2ff:fe5b:4ec", V2 },
	{ 2, "::ffff:198.18.3.1", V1 },
	{ 3, "::ffff:198.18.3.1", V2 },
};

/* Class 2: the RoCE fabric fails its probes (MTU black hole); sockets move to eno1 and
 * NCCL must not fall back onto the broken RDMA path: NCCL_IB_DISABLE=1 with the reason. */
static void roce_behind_failing_fabric(void **state)
{
	struct fx *f = cluster_view(roce2, 2, 0, fabric_stalls);
	const struct npf_note *n;
	(void)state;

	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.ifname, "eno1");
	assert_null(var(f, NPF_VAR_NCCL_IB_HCA));
	assert_var(f, NPF_VAR_NCCL_IB_DISABLE, "1");
	assert_var(f, NPF_VAR_UCX_NET_DEVICES, "eno1");
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	n = must_note(f, NPF_NOTE_RDMA_DISABLED, NPF_VAR_NCCL_IB_DISABLE);
	assert_non_null(strstr(n->text, "mlx5_0:1"));
	if (!strstr(hca_why(f, "mlx5_0", 1), "bulk-stall"))
		fail_msg("why: %s", hca_why(f, "mlx5_0", 1));
	fx_free(f);

	/* Only one rail broken: the other stays, the broken one is named. */
	f = cluster_view(roce2, 2, 0, rail2_stalls);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_null(var(f, NPF_VAR_NCCL_IB_DISABLE));
	assert_true(has_note(f, "NCCL_IB_HCA narrowed: mlx5_1:1 left out: its netdev ens2f0np0 "
				"did not pass the probes on 198.18.3.0/24"));
	fx_free(f);

	/* Both rails work: both are published (a rail: RDMA, equal on every quality key). */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
	assert_var(f, NPF_VAR_NCCL_IB_GID_INDEX, "3");
	fx_free(f);

	/* Sockets on eno1 by policy (prefer=): the RDMA ports follow the best RDMA network,
	 * which works, with its rails. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	set_pattern(&f->prefer, "eno*");
	fx_run(f);
	assert_string_equal(f->rec.ifname, "eno1");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
	assert_null(var(f, NPF_VAR_NCCL_IB_DISABLE));
	fx_free(f);

	/* A port NCCL skips itself (not ACTIVE, struct npf_hca nccl_skip) is no narrowing
	 * and no reason for NCCL_IB_DISABLE; its why still says its state. */
	f = cluster_view(roce2, 2, 0, rail2_stalls);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	add_port(f, "mlx5_2", 1, NPF_LL_ETHERNET, NPF_PORT_DOWN, "ens3f0np0", std1, 4);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_true(has_note(f, "NCCL_IB_HCA narrowed: mlx5_1:1"));
	assert_false(has_note(f, "mlx5_2"));
	assert_non_null(strstr(hca_why(f, "mlx5_2", 1), "port state"));
	fx_free(f);
	f = cluster_view(roce2, 2, 0, fabric_stalls);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_2", 1, NPF_LL_ETHERNET, NPF_PORT_DOWN, "ens3f0np0", std1, 4);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_DISABLE, "1");
	n = must_note(f, NPF_NOTE_RDMA_DISABLED, NPF_VAR_NCCL_IB_DISABLE);
	assert_non_null(strstr(n->text, "mlx5_0:1"));
	assert_null(strstr(n->text, "mlx5_2"));
	fx_free(f);

	/* NCCL_IB_DISABLE not allowed: the old note, nothing published for IB. */
	f = cluster_view(roce2, 2, 0, fabric_stalls);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	f->pol.publish = NPF_PUBVAR__ALL & ~NPF_PUBVAR_NCCL_IB_DISABLE;
	fx_run(f);
	assert_null(var(f, NPF_VAR_NCCL_IB_DISABLE));
	assert_true(has_note(f, "no RDMA port passed"));
	fx_free(f);
}

/* Class 3: a storage RoCE NIC whose netdev sits on the management network works, but it
 * is not the job's network: it is left out of NCCL_IB_HCA. avoid=/prefer= act on ports. */
static void storage_roce_on_mgmt(void **state)
{
	static const struct cl_node st[] = {
		{ "node1",
		  { IFS("eno1", "198.18.1.1/24", 1000),
		    IFD("ens1f0np0", "198.18.2.1/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens3f0np0", "198.18.1.11/24", 25000, 0, "mlx5_1", 1) } },
		{ "node2",
		  { IFS("eno1", "198.18.1.2/24", 1000),
		    IFD("ens1f0np0", "198.18.2.2/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens3f0np0", "198.18.1.12/24", 25000, 0, "mlx5_1", 1) } },
	};
	static const struct gid_spec gst[] = {
		{ 0, "fe80::5", V1 }, { 1, "fe80::5", V2 },
		{ 2, "::ffff:198.18.1.11", V1 }, { 3, "::ffff:198.18.1.11", V2 },
	};
	struct fx *f = cluster_view(st, 2, 0, NULL);
	(void)state;

	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens3f0np0", gst, 4);
	fx_run(f);
	assert_string_equal(f->rec.ifname, "ens1f0np0");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_var(f, NPF_VAR_UCX_NET_DEVICES, "mlx5_0:1");
	assert_non_null(strstr(hca_why(f, "mlx5_1", 1),
			       "is on 198.18.1.0/24, not on the chosen network 198.18.2.0/24"));
	fx_free(f);

	/* Two rails; avoid= on a device, on a netdev; prefer= among ports. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	set_pattern(&f->avoid, "mlx5_1");
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_string_equal(hca_why(f, "mlx5_1", 1), "avoid= policy");
	fx_free(f);

	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	set_pattern(&f->prefer, "mlx5_1");
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_1:1");
	assert_non_null(strstr(hca_why(f, "mlx5_0", 1), "prefer="));
	fx_free(f);
}

/* A storage RoCE port (mlx5_1) on the lower prefix, as fast as the fabric's (mlx5_0). */
static const struct cl_node roce_mgmt_equal[] = {
	{ "node1",
	  { IFD("ens3f0np0", "198.18.1.11/24", 100000, 0, "mlx5_1", 1),
	    IFD("ens1f0np0", "198.18.2.1/24", 100000, 0, "mlx5_0", 1) } },
	{ "node2",
	  { IFD("ens3f0np0", "198.18.1.12/24", 100000, 0, "mlx5_1", 1),
	    IFD("ens1f0np0", "198.18.2.2/24", 100000, 0, "mlx5_0", 1) } },
};
static const struct gid_spec roce_mgmt_gids[] = {
	{ 0, "fe80::5", V1 }, { 1, "fe80::5", V2 },
	{ 2, "::ffff:198.18.1.11", V1 }, { 3, "::ffff:198.18.1.11", V2 },
};

/* roce_mgmt_equal with both ports added. Caller frees with fx_free. */
static struct fx *roce_mgmt_view(void)
{
	struct fx *f = cluster_view(roce_mgmt_equal, 2, 0, NULL);

	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens3f0np0", roce_mgmt_gids, 4);
	return f;
}

/* Issue 18: a storage RoCE NIC on the management network (where node names resolve, the
 * peers' name_addr) at the fabric's speed, on the lower prefix. Without knowing where names
 * resolve, both look like rails of one fabric; knowing it, the fabric is the job's network
 * and the management port is no rail, in the node's decision and in its job row; unless
 * rdma_fabric= names it. */
static void storage_roce_on_mgmt_equal_speed(void **state)
{
	const char *hosts[] = { "node1", "node2" };
	struct npf_pattern_list fabric = { 0 };
	struct npf_msg_row row;
	struct fx *f;
	(void)state;

	for (int known = 0; known < 3; known++) {
		f = roce_mgmt_view();
		if (known)
			parse_cidr("198.18.1.12/32", &f->chk.nodes[1].name_addr);
		if (known == 2) {
			snprintf(fabric.pat[fabric.n++], NPF_CONFIG_PATTERN_LEN, "mlx5_*");
			f->pol.rdma_fabric = &fabric;
		}
		fx_run(f);
		if (!known) {
			/* Equal on every quality row: the lower prefix wins, the other is a
			 * rail of it (the behaviour issue 18 reported). */
			assert_string_equal(f->rec.cidr, "198.18.1.0/24");
			assert_non_null(strstr(var(f, NPF_VAR_NCCL_IB_HCA), "mlx5_0:1"));
		} else if (known == 1) {
			assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
			assert_string_equal(f->rec.cidr, "198.18.2.0/24");
			assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
			assert_non_null(strstr(hca_why(f, "mlx5_1", 1),
					       "on the management network 198.18.1.0/24"));
			assert_non_null(strstr(rejection(f, "ens3f0np0")->reason,
					       "RDMA, not on the management network"));
			/* The job row ranks the fabric above the management network too. */
			assert_int_equal(npf_recommend_row(&f->inv, &f->chk, &f->pol, hosts, 2, 1,
							   &row),
					 0);
			assert_int_equal(row.n_nets, 2);
			assert_true(row.nets[0].quality != row.nets[1].quality);
			assert_string_equal(row.nets[0].quality > row.nets[1].quality
						    ? row.nets[0].key
						    : row.nets[1].key,
					    "198.18.2.0/24");
			npf_wire_row_clear(&row);
		} else {
			/* Configured: the operator's rdma_fabric= makes it a rail again. */
			assert_string_equal(f->rec.cidr, "198.18.2.0/24");
			assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
		}
		fx_free(f);
	}
}

/* Issue 18, the other half of "management network": the default route's. The same equal-speed
 * storage RoCE port, node names resolving nowhere we know, but our default route leaving by
 * its netdev: not a rail, not in NCCL_IB_HCA; the fabric is the job's network. */
static void storage_roce_on_default_route(void **state)
{
	struct fx *f = roce_mgmt_view();
	(void)state;

	npf_inventory_find_name(&f->inv, "ens3f0np0")->default_route = true;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.cidr, "198.18.2.0/24");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_non_null(strstr(hca_why(f, "mlx5_1", 1), "on the management network 198.18.1.0/24"));
	assert_non_null(strstr(rejection(f, "ens3f0np0")->reason,
			       "RDMA, not on the management network"));
	fx_free(f);

	/* The default route on the fabric's netdev instead: the roles swap. */
	f = roce_mgmt_view();
	npf_inventory_find_name(&f->inv, "ens1f0np0")->default_route = true;
	fx_run(f);
	assert_string_equal(f->rec.cidr, "198.18.1.0/24");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_1:1");
	fx_free(f);
}

/* Class 4: a rail dead on a peer: every node drops it (the network fails here too), with
 * a note naming the rail; job-wide, one rail set for every node. */
static enum npf_outcome rail2_dead_at_node2(const struct cl_node *a, const struct cl_if *ia,
					    const struct cl_node *b, const struct cl_if *ib)
{
	(void)ib;
	return strcmp(ia->name, "ens2f0np0") == 0 &&
			       (strcmp(a->name, "node2") == 0 || strcmp(b->name, "node2") == 0) ?
		       NPF_OUT_TIMEOUT :
		       NPF_OUT_OK;
}

static void rails_differ_between_nodes(void **state)
{
	static const struct cl_node three[] = {
		{ "node1",
		  { IFS("eno1", "198.18.1.1/24", 1000),
		    IFD("ens1f0np0", "198.18.2.1/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens2f0np0", "198.18.3.1/24", 100000, 0, "mlx5_1", 1) } },
		{ "node2",
		  { IFS("eno1", "198.18.1.2/24", 1000),
		    IFD("ens1f0np0", "198.18.2.2/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens2f0np0", "198.18.3.2/24", 100000, 0, "mlx5_1", 1) } },
		{ "node3",
		  { IFS("eno1", "198.18.1.3/24", 1000),
		    IFD("ens1f0np0", "198.18.2.3/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens2f0np0", "198.18.3.3/24", 100000, 0, "mlx5_1", 1) } },
	};

	static const struct gid_spec n3r1[] = {
		{ 0, "fe80::31", V1 }, { 1, "fe80::31", V2 },
		{ 2, "::ffff:198.18.2.3", V1 }, { 3, "::ffff:198.18.2.3", V2 },
	};
	static const struct gid_spec n3r2[] = {
		{ 0, "fe80::32", V1 }, { 1, "fe80::32", V2 },
		{ 2, "::ffff:198.18.3.3", V1 }, { 3, "::ffff:198.18.3.3", V2 },
	};

	(void)state;
	/* node1 and node3 see the same thing: mlx5_1 fails with node2, so neither uses it. */
	for (size_t self = 0; self < 3; self += 2) {
		struct fx *f = cluster_view(three, 3, self, rail2_dead_at_node2);

		add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0",
			 self ? n3r1 : std0, 4);
		add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0",
			 self ? n3r2 : std1, 4);
		f->pol.job_wide = true;
		fx_run(f);
		assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
		assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
		assert_var(f, NPF_VAR_UCX_NET_DEVICES, "mlx5_0:1");
		assert_true(has_note(f, "mlx5_1:1 left out"));
		fx_free(f);
	}
}

/* Class 5: InfiniBand. The IPoIB child holding the address is the port's netdev, not its
 * bare parent; a port without any IPoIB address is kept untested, or filtered by the
 * operator's rdma_fabric=. */
static void set_ipoib(struct fx *f, const char *name, const char *gid0)
{
	struct npf_iface *ifc = npf_inventory_find_name(&f->inv, name);

	assert_non_null(ifc);
	ifc->arphrd = ARPHRD_INFINIBAND;
	ifc->kind = NPF_KIND_IPOIB;
	ifc->mac_len = 20;
	assert_int_equal(inet_pton(AF_INET6, gid0, ifc->mac + 4), 1);
}

static void ib_child_and_no_ipoib(void **state)
{
	static const struct cl_node ib[] = {
		{ "node1",
		  { IFS("eno1", "198.18.1.1/24", 25000), IFA("ib0", NULL),
		    IFD("ib0.8001", "198.18.6.1/24", 0, 0, "mlx5_0", 1) } },
		{ "node2",
		  { IFS("eno1", "198.18.1.2/24", 25000), IFA("ib0", NULL),
		    IFD("ib0.8001", "198.18.6.2/24", 0, 0, "mlx5_0", 1) } },
	};
	static const struct gid_spec gib[] = { { 0, "fe80::248a:703:9a:b0c1", V1 } };
	static const struct gid_spec gib2[] = { { 0, "fe80::248a:703:9a:b0c2", V1 } };
	struct npf_pattern_list fabric = { 0 };
	struct fx *f = cluster_view(ib, 2, 0, NULL);
	(void)state;

	set_ipoib(f, "ib0", "fe80::248a:703:9a:b0c1");
	set_ipoib(f, "ib0.8001", "fe80::248a:703:9a:b0c1");
	/* The old join named the parent. */
	add_port(f, "mlx5_0", 1, NPF_LL_INFINIBAND, NPF_PORT_ACTIVE, "ib0", gib, 1);
	add_port(f, "mlx5_2", 1, NPF_LL_INFINIBAND, NPF_PORT_ACTIVE, NULL, gib2, 1);
	fx_run(f);
	assert_string_equal(f->rec.ifname, "ib0.8001");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_2:1");
	assert_string_equal(f->rec.hcas[0].netdev, "ib0.8001");
	assert_true(f->rec.hcas[1].published);
	assert_non_null(note_for(f, NPF_NOTE_UNTESTED, NPF_VAR_NCCL_IB_HCA));
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	fx_free(f);

	/* rdma_fabric= names the job's fabric: the other IP-less port stays out. */
	snprintf(fabric.pat[fabric.n++], NPF_CONFIG_PATTERN_LEN, "mlx5_9*");
	f = cluster_view(ib, 2, 0, NULL);
	set_ipoib(f, "ib0", "fe80::248a:703:9a:b0c1");
	set_ipoib(f, "ib0.8001", "fe80::248a:703:9a:b0c1");
	add_port(f, "mlx5_0", 1, NPF_LL_INFINIBAND, NPF_PORT_ACTIVE, "ib0", gib, 1);
	add_port(f, "mlx5_2", 1, NPF_LL_INFINIBAND, NPF_PORT_ACTIVE, NULL, gib2, 1);
	f->pol.rdma_fabric = &fabric;
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_non_null(strstr(hca_why(f, "mlx5_2", 1), "rdma_fabric"));
	fx_free(f);
}

/* Class 6: different GID indices on two RoCE ports: no single index; the env holds for
 * NCCL >= 2.21.5, and says so. */
static void gid_indices_differ(void **state)
{
	struct fx *f = cluster_view(roce2, 2, 0, NULL);
	(void)state;

	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", gap1, 4);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	assert_null(var(f, NPF_VAR_UCX_IB_GID_INDEX));
	assert_non_null(note_for(f, NPF_NOTE_GID_VERSIONS, NPF_VAR_NCCL_IB_GID_INDEX));
	assert_true(has_note(f, "NCCL >= 2.21.5 only"));
	fx_free(f);
}

/* Class 6, UCX: UCX_IB_GID_INDEX is one index for every device of the process, so with
 * different indices on the published ports no value steers it; the note says whether
 * UCX's own pick (uct_ib_device_select_gid) is the right GID anyway. */
static void gid_indices_differ_ucx(void **state)
{
	/* A second RoCE v2 IPv4 GID (another address of the netdev) below the probed one:
	 * UCX takes the lowest RoCE v2 IPv4 index, 2, not the probed address's 5. */
	static const struct gid_spec two_v4[] = {
	    {0, "fe80::a288:c2ff:fe5b:3ed", V1},
	    {1, "fe80::a288:c2ff:fe5b:3ed", V2},
	    {2, "::ffff:10.9.0.1", V2},
	    {5, "::ffff:198.18.2.11", V2},
	};
	static const struct cl_node roce_one_net[] = {
	    {"node1",
	     {IFS("eno1", "198.18.1.1/24", 1000),
	      IFD("ens1f0np0", "198.18.2.1/24", 100000, 0, "mlx5_0", 1),
	      IFD("ens2f0np0", "198.18.2.11/24", 100000, 0, "mlx5_1", 1)}},
	    {"node2",
	     {IFS("eno1", "198.18.1.2/24", 1000),
	      IFD("ens1f0np0", "198.18.2.2/24", 100000, 0, "mlx5_0", 1),
	      IFD("ens2f0np0", "198.18.2.12/24", 100000, 0, "mlx5_1", 1)}},
	};
	struct fx *f = cluster_view(roce2, 2, 0, NULL);
	const struct npf_note *n;
	(void)state;

	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", gap1, 4);
	fx_run(f);
	assert_null(var(f, NPF_VAR_UCX_IB_GID_INDEX));
	n = must_note(f, NPF_NOTE_GID_VERSIONS, NPF_VAR_UCX_IB_GID_INDEX);
	assert_non_null(strstr(n->text, "already the probed address's GID"));
	fx_free(f);

	/* Both RoCE NICs on one network: NCCL_IB_ADDR_RANGE steers NCCL to index 5 on
	 * mlx5_1, but UCX has no such knob here and takes 2. */
	f = cluster_view(roce_one_net, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", two_v4, 4);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
	assert_var(f, NPF_VAR_NCCL_IB_ADDR_RANGE, "198.18.2.0/24");
	assert_null(var(f, NPF_VAR_UCX_IB_GID_INDEX));
	n = must_note(f, NPF_NOTE_GID_VERSIONS, NPF_VAR_UCX_IB_GID_INDEX);
	assert_non_null(strstr(n->text, "would use index 2 on mlx5_1:1, not 5"));
	assert_non_null(strstr(n->text, "UCX_IB_ROCE_SUBNETS=198.18.2.0/24"));
	fx_free(f);
}

/* Sets the GID index peer node announced for its candidates on dev:port. */
static void peer_gid(struct fx *f, const char *node, const char *dev, int port, int idx)
{
	bool hit = false;

	for (size_t k = 1; k < f->chk.n_nodes; k++) {
		if (strcmp(f->chk.nodes[k].name, node) != 0)
			continue;
		for (size_t j = 0; j < f->chk.nodes[k].n_cands; j++) {
			struct npf_candidate *c = &f->chk.nodes[k].cands[j];

			if (strcmp(c->rdma_dev, dev) != 0 || c->rdma_port != port)
				continue;
			c->has_gid = idx >= 0;
			c->gid_index = idx >= 0 ? (uint16_t)idx : 0;
			hit = true;
		}
	}
	assert_true(hit);
}

/* Issue 10, GID for every NCCL job-wide: every node announces its rails' GID index of
 * the job's address (HELLO_REPLY gid_index); one index everywhere is published job-wide,
 * for every NCCL and UCX; a node that differs, or did not announce it, drops both with a
 * note naming the node and the NCCL versions the job-wide environment holds for. */
static void job_wide_gid(void **state)
{
	/* Both of node1's ports carry their address at index 3 (std0, std1). */
	struct fx *f;
	const struct npf_note *n;
	(void)state;

	/* Every node at 3: published job-wide, right for old and new NCCL. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	peer_gid(f, "node2", "mlx5_0", 1, 3);
	peer_gid(f, "node2", "mlx5_1", 1, 3);
	f->pol.job_wide = true;
	f->pol.nccl_version = NPF_NCCL_VERSION(2, 19, 3);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
	assert_var(f, NPF_VAR_NCCL_IB_GID_INDEX, "3");
	assert_var(f, NPF_VAR_UCX_IB_GID_INDEX, "3");
	assert_true(has_note(f, "NCCL_IB_GID_INDEX=3 job-wide"));
	assert_true(has_note(f, "UCX_IB_GID_INDEX=3 job-wide"));
	fx_free(f);

	/* node2's second rail at 7: no one index; the note names node2 and the versions. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	peer_gid(f, "node2", "mlx5_0", 1, 3);
	peer_gid(f, "node2", "mlx5_1", 1, 7);
	f->pol.job_wide = true;
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	assert_null(var(f, NPF_VAR_UCX_IB_GID_INDEX));
	assert_true(has_note(f, "NCCL_IB_GID_INDEX: no job-wide value: the job's address is at "
				"GID index 7 on node2 (mlx5_1:1) but 3 on node1; the job-wide "
				"environment holds for NCCL >= 2.21.5 only"));
	n = must_note(f, NPF_NOTE_JOB_WIDE, NPF_VAR_UCX_IB_GID_INDEX);
	assert_non_null(strstr(n->text, "uct_ib_device_select_gid"));
	fx_free(f);

	/* node2 announced no index (a daemon older than the field): nothing is assumed. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	peer_gid(f, "node2", "mlx5_0", 1, 3);
	f->pol.job_wide = true;
	fx_run(f);
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	assert_null(var(f, NPF_VAR_UCX_IB_GID_INDEX));
	assert_true(
	    has_note(f, "no GID index of the job's address is known for node2 on mlx5_1:1"));
	fx_free(f);

	/* The same fixture without --job-wide keeps node1's own index. */
	f = cluster_view(roce2, 2, 0, NULL);
	add_port(f, "mlx5_0", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens1f0np0", std0, 4);
	add_port(f, "mlx5_1", 1, NPF_LL_ETHERNET, NPF_PORT_ACTIVE, "ens2f0np0", std1, 4);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_GID_INDEX, "3");
	assert_var(f, NPF_VAR_UCX_IB_GID_INDEX, "3");
	fx_free(f);
}

/* Class 9: routed /31 host links, one prefix per node. Per node the /31 is right; job-wide
 * it would match nothing on other nodes: the covering prefix of every node's address,
 * unless it also holds another interface's address somewhere. */
static enum npf_outcome fab_routed(const struct cl_node *a, const struct cl_if *ia,
				   const struct cl_node *b, const struct cl_if *ib)
{
	(void)a;
	(void)ia;
	(void)b;
	(void)ib;
	return NPF_OUT_OK;
}

/* A routed fabric: every ifname (the node's ifs[at]) reaches every peer's (the peers' /31s
 * through the covering route), as the probes record it in the links. */
static void route_links(struct fx *f, const struct cl_node *lab, size_t n, const char *ifname,
			size_t at)
{
	for (size_t l = 0; l < f->chk.n_links; l++) {
		struct npf_link *lk = &f->chk.links[l];
		const struct cl_if *theirs = NULL;

		if (strcmp(lk->ifname, ifname) != 0)
			continue;
		for (size_t i = 0; i < n; i++)
			if (strcmp(lab[i].name, f->chk.nodes[lk->peer].name) == 0)
				theirs = &lab[i].ifs[at];
		assert_non_null(theirs);
		lk->fwd = lk->rev = NPF_OUT_OK;
		snprintf(lk->peer_if, sizeof(lk->peer_if), "%s", theirs->name);
		parse_cidr(theirs->cidr, &lk->peer_addr);
	}
}

static void routed_host_links(void **state)
{
	static const struct cl_node r31[] = {
		{ "node1", { IFS("eth0", "198.18.1.1/24", 1000), IFS("fab0", "10.0.0.0/31", 100000) } },
		{ "node2", { IFS("eth0", "198.18.1.2/24", 1000), IFS("fab0", "10.0.0.2/31", 100000) } },
		{ "node3", { IFS("eth0", "198.18.1.3/24", 1000), IFS("fab0", "10.0.0.4/31", 100000) } },
	};
	static const struct cl_node r31_stray[] = {
		{ "node1", { IFS("eth0", "198.18.1.1/24", 1000), IFS("fab0", "10.0.0.0/31", 100000) } },
		{ "node2",
		  { IFS("eth0", "198.18.1.2/24", 1000), IFS("fab0", "10.0.0.2/31", 100000),
		    IFS("bmc0", "10.0.0.6/31", 100) } },
		{ "node3", { IFS("eth0", "198.18.1.3/24", 1000), IFS("fab0", "10.0.0.4/31", 100000) } },
	};
	static const struct cl_node r31_names[] = {
		{ "node1", { IFS("eth0", "198.18.1.1/24", 1000), IFS("fab0", "10.0.0.0/31", 100000) } },
		{ "node2",
		  { IFS("eth0", "198.18.1.2/24", 1000), IFS("fab1", "10.0.0.2/31", 100000),
		    IFS("bmc0", "10.0.0.6/31", 100) } },
		{ "node3", { IFS("eth0", "198.18.1.3/24", 1000), IFS("fab0", "10.0.0.4/31", 100000) } },
	};
	const struct cl_node *labs[] = { r31, r31_stray, r31_names };
	(void)state;

	for (size_t t = 0; t < 3; t++) {
		struct fx *f = cluster_view(labs[t], 3, 0, fab_routed);

		route_links(f, labs[t], 3, "fab0", 1);
		fx_run(f);
		assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
		assert_string_equal(f->rec.ifname, "fab0");
		if (!var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE))
			fail_msg("%s %s", f->rec.summary, f->rec.n_notes ? f->rec.notes[0].text : "");
		assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "10.0.0.0/31");
		npf_recommendation_clear(&f->rec);
		f->pol.job_wide = true;
		fx_run(f);
		if (t == 0) {
			assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "10.0.0.0/29");
			assert_var(f, NPF_VAR_PRTE_MCA_PRTE_IF_INCLUDE, "10.0.0.0/29");
			assert_true(has_note(f, "covers every node's address"));
		} else if (t == 2) {
			/* Neither a CIDR nor one name: left out. */
			assert_null(var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE));
			assert_null(var(f, NPF_VAR_PRTE_MCA_PRTE_IF_INCLUDE));
		} else {
			/* No CIDR; fab0 on every node, holding only the job's address: the
			 * name. */
			assert_var(f, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE, "fab0");
			assert_var(f, NPF_VAR_PRTE_MCA_PRTE_IF_INCLUDE, "fab0");
			assert_true(has_note(f, "also holds 10.0.0.6 on node2"));
		}
		fx_free(f);
	}
}


/* Issue 18: the routed fabric through the job check. Each node's row names its host link
 * by the prefix covering every node's fabric address (rank.c net_key), so the rows agree on
 * one fabric network, the job decides it, and each node applies it on its own /31; before,
 * three different /31 keys sent the job to the management network. */
static void routed_host_links_job(void **state)
{
	static const struct cl_node r31[] = {
		{ "node1", { IFS("eth0", "198.18.1.1/24", 1000), IFS("fab0", "10.0.0.0/31", 100000) } },
		{ "node2", { IFS("eth0", "198.18.1.2/24", 1000), IFS("fab0", "10.0.0.2/31", 100000) } },
		{ "node3", { IFS("eth0", "198.18.1.3/24", 1000), IFS("fab0", "10.0.0.4/31", 100000) } },
	};
	static const char *const hosts[] = { "node1", "node2", "node3" };
	const struct npf_job_view v = { .role = NPF_JOB_ROLE_OK, .net = "10.0.0.0/29",
					.best = "10.0.0.0/29", .reason = "test" };
	struct npf_msg_row rows[3];
	struct npf_job_matrix m;
	struct npf_job_decision d;
	(void)state;

	for (size_t self = 0; self < 3; self++) {
		struct fx *f = cluster_view(r31, 3, self, fab_routed);

		route_links(f, r31, 3, "fab0", 1);
		assert_int_equal(npf_recommend_row(&f->inv, &f->chk, &f->pol, hosts, 3, self + 1,
						   &rows[self]),
				 0);
		assert_int_equal(rows[self].n_nets, 2);
		assert_string_equal(rows[self].nets[0].key, "10.0.0.0/29");
		assert_string_equal(rows[self].nets[0].states, self == 0 ? ".oo" :
							       self == 1 ? "o.o" : "oo.");
		/* The node applies the job's decision on its own host link. */
		f->pol.job = &v;
		fx_run(f);
		assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
		assert_string_equal(f->rec.ifname, "fab0");
		assert_var(f, NPF_VAR_NCCL_SOCKET_IFNAME, "=fab0");
		fx_free(f);
	}
	job_merge_decide(rows, 3, &m, &d);
	assert_int_equal(d.verdict, NPF_JOB_OK);
	assert_string_equal(m.nets[d.net].name, "10.0.0.0/29");
	job_clear(rows, 3, &m, &d);

	/* Two routed rails whose addresses interleave cover the same prefix: a row's keys must
	 * stay distinct (wire ROW), so both keep their CIDRs. */
	{
		static const struct cl_node two[] = {
			{ "node1", { IFS("eth0", "198.18.1.1/24", 1000),
				     IFS("fab0", "10.0.0.0/31", 100000),
				     IFS("fab1", "10.0.0.2/31", 100000) } },
			{ "node2", { IFS("eth0", "198.18.1.2/24", 1000),
				     IFS("fab0", "10.0.0.4/31", 100000),
				     IFS("fab1", "10.0.0.6/31", 100000) } },
			{ "node3", { IFS("eth0", "198.18.1.3/24", 1000),
				     IFS("fab0", "10.0.0.8/31", 100000),
				     IFS("fab1", "10.0.0.10/31", 100000) } },
		};
		struct fx *f = cluster_view(two, 3, 0, fab_routed);
		struct npf_msg_row row;

		route_links(f, two, 3, "fab0", 1);
		route_links(f, two, 3, "fab1", 2);
		assert_int_equal(npf_recommend_row(&f->inv, &f->chk, &f->pol, hosts, 3, 1, &row),
				 0);
		assert_int_equal(row.n_nets, 3);
		for (size_t k = 0; k < row.n_nets; k++)
			assert_true(strcmp(row.nets[k].key, "10.0.0.0/28") != 0);
		assert_string_equal(row.nets[0].key, "10.0.0.0/31");
		assert_string_equal(row.nets[1].key, "10.0.0.2/31");
		npf_wire_row_clear(&row);
		fx_free(f);
	}
}

/* The same classes on fake sysfs trees (tests/fixtures/sysfs, read by the real reader and
 * joined by the real join): the storage NIC on the management network stays out; two
 * HCAs whose IPv4 GIDs sit at different indices (3 and 5) get no single index. */
static void load_sysfs(struct fx *f, const char *name)
{
	char root[512];

	snprintf(root, sizeof(root), "%s/sysfs/%s", NPF_FIXTURES, name);
	assert_true(rdma_sysfs_read(root, &f->inv) > 0);
	assert_true(rdma_sysfs_read_topology(root, &f->inv) >= 0);
	rdma_join_netdevs(&f->inv);
}

/* Issue 18: GPUs present (fixture gpu-rails: two GPUs, each behind a PCIe switch with a
 * RoCE NIC, and a third RoCE NIC as fast on a root port of its own). Three healthy RDMA
 * networks, equal on every quality row: by the ranking all three are rails; NCCL's
 * topology pairs each GPU with the NIC on its switch, so mlx5_2 is no rail. */
static void gpu_rails_pcie_locality(void **state)
{
	static const struct cl_node three[] = {
		{ "node1",
		  { IFD("ens1f0np0", "198.18.1.1/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens2f0np0", "198.18.2.1/24", 100000, 0, "mlx5_1", 1),
		    IFD("ens3f0np0", "198.18.3.1/24", 100000, 0, "mlx5_2", 1) } },
		{ "node2",
		  { IFD("ens1f0np0", "198.18.1.2/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens2f0np0", "198.18.2.2/24", 100000, 0, "mlx5_1", 1),
		    IFD("ens3f0np0", "198.18.3.2/24", 100000, 0, "mlx5_2", 1) } },
	};
	struct npf_pattern_list fabric = { 0 };
	struct fx *f = cluster_view(three, 2, 0, NULL);
	(void)state;

	load_sysfs(f, "gpu-rails");
	assert_int_equal(f->inv.n_gpus, 2);
	fx_run(f);
	assert_string_equal(f->rec.ifname, "ens1f0np0");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
	assert_non_null(strstr(hca_why(f, "mlx5_2", 1), "no GPU is paired with it"));
	fx_free(f);

	/* Configured: rdma_fabric= names it, a rail again. */
	f = cluster_view(three, 2, 0, NULL);
	load_sysfs(f, "gpu-rails");
	snprintf(fabric.pat[fabric.n++], NPF_CONFIG_PATTERN_LEN, "mlx5_*");
	f->pol.rdma_fabric = &fabric;
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1,mlx5_2:1");
	fx_free(f);

	/* No GPUs (the same NICs, no topology read): every equal network is a rail. */
	f = cluster_view(three, 2, 0, NULL);
	load_sysfs(f, "gpu-rails");
	f->inv.n_gpus = 0;
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1,mlx5_2:1");
	fx_free(f);
}

static void sysfs_fixture_decisions(void **state)
{
	static const struct cl_node st[] = {
		{ "node1",
		  { IFS("eno1", "198.18.1.1/24", 1000),
		    IFD("ens1f0np0", "198.18.2.1/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens3f0np0", "198.18.1.11/24", 25000, 0, "mlx5_1", 1) } },
		{ "node2",
		  { IFS("eno1", "198.18.1.2/24", 1000),
		    IFD("ens1f0np0", "198.18.2.2/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens3f0np0", "198.18.1.12/24", 25000, 0, "mlx5_1", 1) } },
	};
	static const struct cl_node two[] = {
		{ "node1",
		  { IFS("eno1", "198.18.1.1/24", 1000),
		    IFD("ens1f0np0", "198.18.4.1/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens1f1np1", "198.18.5.1/24", 100000, 0, "mlx5_1", 1) } },
		{ "node2",
		  { IFS("eno1", "198.18.1.2/24", 1000),
		    IFD("ens1f0np0", "198.18.4.2/24", 100000, 0, "mlx5_0", 1),
		    IFD("ens1f1np1", "198.18.5.2/24", 100000, 0, "mlx5_1", 1) } },
	};
	struct fx *f = cluster_view(st, 2, 0, NULL);
	(void)state;

	load_sysfs(f, "storage-roce");
	fx_run(f);
	assert_string_equal(f->rec.ifname, "ens1f0np0");
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_var(f, NPF_VAR_NCCL_IB_GID_INDEX, "3");
	assert_var(f, NPF_VAR_UCX_IB_GID_INDEX, "3");
	assert_non_null(strstr(hca_why(f, "mlx5_1", 1), "not on the chosen network"));
	fx_free(f);

	/* The compute fabric's netdev fails: NCCL_IB_DISABLE, not the storage port. */
	f = cluster_view(st, 2, 0, fabric_stalls);
	load_sysfs(f, "storage-roce");
	fx_run(f);
	assert_string_equal(f->rec.ifname, "eno1");
	assert_null(var(f, NPF_VAR_NCCL_IB_HCA));
	assert_var(f, NPF_VAR_NCCL_IB_DISABLE, "1");
	fx_free(f);

	f = cluster_view(two, 2, 0, NULL);
	load_sysfs(f, "two-hcas");
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1,mlx5_1:1");
	assert_null(var(f, NPF_VAR_NCCL_IB_GID_INDEX));
	assert_true(has_note(f, "NCCL >= 2.21.5 only"));
	npf_recommendation_clear(&f->rec);
	/* NCCL 2.19: one index for all ports, so the ports of one index only. */
	f->pol.nccl_version = NPF_NCCL_VERSION(2, 19, 3);
	fx_run(f);
	assert_var(f, NPF_VAR_NCCL_IB_HCA, "=mlx5_0:1");
	assert_var(f, NPF_VAR_NCCL_IB_GID_INDEX, "3");
	fx_free(f);
}

/* Evidence from the network is not trusted: out-of-range indices and enums, junk
 * addresses, hostile names. */
static void hostile_check(void **state)
{
	struct fx *f = cluster_view(basic, 3, 0, NULL);
	struct npf_link *l;
	(void)state;

	l = realloc(f->chk.links, (f->chk.n_links + 3) * sizeof(*l));
	assert_non_null(l);
	f->chk.links = l;
	memset(&l[f->chk.n_links], 0, 3 * sizeof(*l));
	strcpy(l[f->chk.n_links].ifname, "ens1f0");
	l[f->chk.n_links].peer = 77;
	strcpy(l[f->chk.n_links + 1].ifname, "ens1f0");
	l[f->chk.n_links + 1].peer = -3;
	strcpy(l[f->chk.n_links + 2].ifname, "nosuch");
	l[f->chk.n_links + 2].peer = 1;
	f->chk.n_links += 3;
	f->chk.nodes[1].cands[0].addr.family = 99;
	f->chk.nodes[1].cands[1].addr.prefixlen = 200;
	f->chk.nodes[2].cands[0].addr.prefixlen = 0; /* "everything is my subnet" */
	snprintf(f->chk.nodes[2].name, sizeof(f->chk.nodes[2].name), "evil\n$(reboot)");
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_OK);
	assert_string_equal(f->rec.cidr, "198.18.2.0/24");
	assert_non_null(strstr(rejection(f, "eth0")->reason, "198.18.1.0/24"));
	npf_recommendation_clear(&f->rec);

	/* An outcome outside the enum is a failure, never ok. */
	for (size_t i = 0; i < f->chk.n_links; i++)
		if (f->chk.links[i].peer == 2)
			f->chk.links[i].fwd = (enum npf_outcome)1234;
	fx_run(f);
	assert_int_equal(f->rec.verdict, NPF_VERDICT_FAIL);
	fx_free(f);

	assert_int_equal(npf_recommend(NULL, NULL, NULL, NULL), -EINVAL);
	{
		struct npf_inventory inv = { 0 };
		struct npf_check chk = { 0 };
		struct npf_recommendation rec;

		assert_int_equal(npf_recommend(&inv, &chk, NULL, &rec), -EINVAL);
		npf_recommendation_clear(&rec);
	}
}

static void var_names(void **state)
{
	(void)state;
	assert_string_equal(npf_var_name(NPF_VAR_NCCL_SOCKET_IFNAME), "NCCL_SOCKET_IFNAME");
	assert_string_equal(npf_var_name(NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE),
			    "OMPI_MCA_btl_tcp_if_include");
	assert_null(npf_var_name(NPF_VAR__COUNT));
	assert_null(npf_recommendation_get(NULL, NPF_VAR_MASTER_ADDR));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(all_ok_picks_fastest),
		cmocka_unit_test(container_bridges_rejected),
		cmocka_unit_test(bridge_roles),
		cmocka_unit_test(policy_prefer_avoid),
		cmocka_unit_test(rdma_ranks_before_speed),
		cmocka_unit_test(one_network_for_all),
		cmocka_unit_test(job_rows_blame_node3),
		cmocka_unit_test(job_view_blames_dead_node),
		cmocka_unit_test(job_view_degraded),
		cmocka_unit_test(job_view_net_fails_here),
		cmocka_unit_test(job_view_suspect),
		cmocka_unit_test(job_view_fail_and_unknown),
		cmocka_unit_test(deterministic_order),
		cmocka_unit_test(job_wide_names),
		cmocka_unit_test(prefix_clashes),
		cmocka_unit_test(fail_names_node_and_interfaces),
		cmocka_unit_test(every_outcome_mix),
		cmocka_unit_test(unknown_when_peer_unavailable),
		cmocka_unit_test(sparse_mode),
		cmocka_unit_test(sparse_plan_peers_not_contacted),
		cmocka_unit_test(down_and_unannounced),
		cmocka_unit_test(no_peers_no_candidates),
		cmocka_unit_test(wrong_egress),
		cmocka_unit_test(dual_stack_split_by_paths),
		cmocka_unit_test(ompi_ipv6_by_name),
		cmocka_unit_test(comma_in_name),
		cmocka_unit_test(master_addr_and_mask),
		cmocka_unit_test(roce_standard_layout),
		cmocka_unit_test(roce_container_gaps_and_two_hcas),
		cmocka_unit_test(roce_ipv6_only),
		cmocka_unit_test(roce_range_steers),
		cmocka_unit_test(hca_selection),
		cmocka_unit_test(ib_over_ipoib),
		cmocka_unit_test(job_wide_hca),
		cmocka_unit_test(secondary_address_interface),
		cmocka_unit_test(dual_stack_v6_only_works),
		cmocka_unit_test(roce_behind_failing_fabric),
		cmocka_unit_test(storage_roce_on_mgmt),
		cmocka_unit_test(storage_roce_on_mgmt_equal_speed),
		cmocka_unit_test(storage_roce_on_default_route),
		cmocka_unit_test(rails_differ_between_nodes),
		cmocka_unit_test(ib_child_and_no_ipoib),
		cmocka_unit_test(gid_indices_differ),
		cmocka_unit_test(gid_indices_differ_ucx),
		cmocka_unit_test(job_wide_gid),
		cmocka_unit_test(routed_host_links),
		cmocka_unit_test(routed_host_links_job),
		cmocka_unit_test(sysfs_fixture_decisions),
		cmocka_unit_test(gpu_rails_pcie_locality),
		cmocka_unit_test(hostile_check),
		cmocka_unit_test(var_names),
	};

	return npf_run_tests(tests, NULL, NULL);
}
