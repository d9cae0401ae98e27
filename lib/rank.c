// SPDX-License-Identifier: MIT
/* The networks of the job and their total order, from facts every node shares. */
#include "decide.h"
#include "gid.h"
#include "consumer.h"
#include "ncclmatch.h"

#include <errno.h>
#include <stdlib.h>

/* ---- the network order ---------------------------------------------------------------- */

static int add_net(struct ctx *c, const struct npf_addr *a)
{
	struct npf_addr key;
	struct net *n;

	/* A /0 would contain every address and make "0.0.0.0/0" a network of the job. */
	if (!addr_usable(a) || a->prefixlen == 0)
		return 0;
	addr_mask(a, a->prefixlen, &key);
	for (size_t i = 0; i < c->n_nets; i++)
		if (c->nets[i].prefix.family == key.family &&
		    c->nets[i].prefix.prefixlen == key.prefixlen &&
		    memcmp(c->nets[i].prefix.addr, key.addr, sizeof(key.addr)) == 0)
			return 0;
	if (c->n_nets >= REC_NETS_MAX) {
		c->nets_capped = true;
		return 0;
	}
	n = realloc(c->nets, (c->n_nets + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->nets = n;
	memset(&n[c->n_nets], 0, sizeof(*n));
	n[c->n_nets].prefix = key;
	n[c->n_nets].prefer = PREFER_NONE;
	n[c->n_nets].ifc = -1;
	c->n_nets++;
	return 0;
}

static void rank_member(const struct ctx *c, struct net *n, const char *ifname, uint32_t roles,
			bool rdma, int64_t speed)
{
	unsigned int idx;

	if (pat_match(c->pol->avoid, ifname, NULL))
		n->avoid = true;
	if (pat_match(c->pol->prefer, ifname, &idx) && idx < n->prefer)
		n->prefer = idx;
	if (roles & (NPF_ROLE_CONTAINER_BRIDGE | NPF_ROLE_OVERLAY | NPF_ROLE_VPN))
		n->role = true;
	if (n->n_members++ == 0) {
		n->rdma = rdma;
		n->speed = speed > 0 ? speed : 0;
	} else {
		n->rdma = n->rdma && rdma;
		if (speed <= 0 || speed < n->speed)
			n->speed = speed > 0 ? speed : 0;
	}
}

static bool cand_rdma(const struct npf_candidate *cd)
{
	return (cd->rdma_dev[0] && cd->rdma_active) || cd->kind == NPF_KIND_IPOIB;
}

bool dec_iface_rdma(const struct npf_inventory *inv, const struct npf_iface *ifc)
{
	if (ifc->kind == NPF_KIND_IPOIB)
		return true;
	for (size_t d = 0; d < inv->n_rdma; d++)
		for (size_t p = 0; p < inv->rdma[d].n_ports; p++)
			if (inv->rdma[d].ports[p].state == NPF_PORT_ACTIVE &&
			    strncmp(inv->rdma[d].ports[p].netdev, ifc->name, IFNAMSIZ) == 0)
				return true;
	return false;
}

/* ---- which consumers can be steered to a network ------------------------------------ */

/* A consumer whose variable names an interface binds the address its model (lib/consumer.h:
 * ncclFindInterfaces, Gloo's and TensorPipe's lookupAddrForIface, UCX's ucs_netif_get_addr)
 * finds there; naming the interface steers it to network n only when that address is on
 * n. The variables this concerns are the registry rows with an address model. */
bool dec_steer_var(const struct ctx *c, enum npf_var v)
{
	enum npf_cmodel m = npf_var_info(v)->model;

	return m != NPF_CM_NONE && m != NPF_CM_OMPI && dec_var_wanted(c, v);
}

/* The enum npf_var bits of the consumers that interface ifname of inv steers to n. */
static uint32_t steer_bits(const struct ctx *c, const struct npf_inventory *inv, const char *ifname,
			   const struct net *n)
{
	uint32_t bits = 0;

	for (int v = 0; v < NPF_VAR__COUNT; v++) {
		const struct npf_var_info *vi = npf_var_info((enum npf_var)v);
		char value[IFNAMSIZ + 2];
		struct npf_cmodel_query q = {.value = value, .nccl_version = c->version};
		struct npf_addr a;

		if (!dec_steer_var(c, (enum npf_var)v))
			continue;
		snprintf(value, sizeof(value), "%s%s", vi->model == NPF_CM_NCCL_SOCKET ? "=" : "",
			 ifname);
		/* publish.c forces the family on an IPv6 network (rule_socket_family). */
		if (vi->model == NPF_CM_NCCL_SOCKET && n->prefix.family == AF_INET6 &&
		    dec_var_wanted(c, NPF_VAR_NCCL_SOCKET_FAMILY))
			q.family = AF_INET6;
		if (npf_cmodel_addr(vi->model, inv, &q, NULL, &a) == 0 && in_net(&a, n))
			bits |= 1u << v;
	}
	return bits;
}

/* Addresses of one announced interface we look at: the models take the first of a family,
 * so a longer list changes nothing but the IPv6 tail of an interface with this many IPv4. */
#define STEER_ADDRS_MAX 64

/* steer_bits() for a node's announced interface: its announcement, in inventory (=
 * getifaddrs) order, stands in for its inventory; what it announces is UP and RUNNING. */
static uint32_t cand_steer_bits(const struct ctx *c, const struct npf_node *nd, const char *ifname,
				const struct net *n)
{
	struct npf_addr addrs[STEER_ADDRS_MAX];
	struct npf_iface ifc;
	struct npf_inventory inv = {.ifaces = &ifc, .n_ifaces = 1};

	memset(&ifc, 0, sizeof(ifc));
	copy_str(ifc.name, sizeof(ifc.name), ifname);
	ifc.flags = IFF_UP | IFF_RUNNING;
	ifc.addrs = addrs;
	for (size_t j = 0; j < nd->n_cands && ifc.n_addrs < STEER_ADDRS_MAX; j++)
		if (strncmp(nd->cands[j].ifname, ifname, IFNAMSIZ) == 0)
			addrs[ifc.n_addrs++] = nd->cands[j].addr;
	return steer_bits(c, &inv, ifname, n);
}


/* The management network is also the one our default route leaves by (docs/decision.md,
 * rails): a network holding an address of that interface. */
static bool holds_default_route(const struct npf_inventory *inv, const struct net *net)
{
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		const struct npf_iface *ifc = &inv->ifaces[i];

		if (!ifc->default_route)
			continue;
		for (size_t a = 0; a < ifc->n_addrs; a++)
			if (addr_usable(&ifc->addrs[a]) && in_net(&ifc->addrs[a], net))
				return true;
	}
	return false;
}

/* Fills n->unsteer: the consumers that some node holding n cannot be steered to it, by
 * any of its interfaces there. UCX on an RDMA network names the ports, not a netdev. */
static void net_steer(const struct ctx *c, struct net *n, bool self_announced)
{
	const struct npf_check *chk = c->chk;
	uint32_t want = 0;

	for (int v = 0; v < NPF_VAR__COUNT; v++)
		if (dec_steer_var(c, (enum npf_var)v))
			want |= 1u << v;
	for (size_t k = 0; k < chk->n_nodes; k++) {
		const struct npf_node *nd = &chk->nodes[k];
		uint32_t got = 0;
		bool holds = false;

		for (size_t j = 0; j < nd->n_cands; j++)
			if (addr_usable(&nd->cands[j].addr) && in_net(&nd->cands[j].addr, n)) {
				holds = true;
				got |= cand_steer_bits(c, nd, nd->cands[j].ifname, n);
			}
		for (size_t i = 0; k == 0 && !self_announced && i < c->inv->n_ifaces; i++) {
			const struct npf_iface *ifc = &c->inv->ifaces[i];

			for (size_t a = 0; a < ifc->n_addrs && !iface_is_loopback(ifc); a++)
				if (addr_usable(&ifc->addrs[a]) && in_net(&ifc->addrs[a], n)) {
					holds = true;
					got |= steer_bits(c, c->inv, ifc->name, n);
					break;
				}
		}
		if (holds)
			n->unsteer |= want & ~got;
	}
	if (n->rdma)
		n->unsteer &= ~(1u << NPF_VAR_UCX_NET_DEVICES);
}

void dec_consumers_text(uint32_t bits, char *buf, size_t len)
{
	bool seen[NPF_CONSUMER__COUNT] = {false};

	buf[0] = '\0';
	for (int v = 0; v < NPF_VAR__COUNT; v++) {
		enum npf_consumer k = npf_var_info((enum npf_var)v)->consumer;

		if (!(bits & 1u << v) || seen[k])
			continue;
		seen[k] = true;
		if (!list_append(buf, len, npf_consumer_name(k)))
			break;
	}
}

/* The facts every node of the job shares: what each node announced in HELLO. Our own
 * inventory only stands in when our own announcement is missing from the check. */
int dec_build_nets(struct ctx *c)
{
	const struct npf_check *chk = c->chk;
	bool self_announced = chk->nodes[0].n_cands > 0;
	int r;

	for (size_t k = 0; k < chk->n_nodes; k++)
		for (size_t j = 0; j < chk->nodes[k].n_cands; j++)
			if ((r = add_net(c, &chk->nodes[k].cands[j].addr)) < 0)
				return r;
	if (!self_announced)
		for (size_t i = 0; i < c->inv->n_ifaces; i++)
			for (size_t a = 0; a < c->inv->ifaces[i].n_addrs; a++)
				if (!iface_is_loopback(&c->inv->ifaces[i]) &&
				    (r = add_net(c, &c->inv->ifaces[i].addrs[a])) < 0)
					return r;
	for (size_t n = 0; n < c->n_nets; n++) {
		struct net *net = &c->nets[n];

		for (size_t k = 0; k < chk->n_nodes; k++)
			for (size_t j = 0; j < chk->nodes[k].n_cands; j++) {
				const struct npf_candidate *cd = &chk->nodes[k].cands[j];

				if (addr_valid(&cd->addr) && in_net(&cd->addr, net))
					rank_member(c, net, cd->ifname, cd->roles, cand_rdma(cd),
						    cd->speed_mbps);
			}
		if (self_announced)
			continue;
		for (size_t i = 0; i < c->inv->n_ifaces; i++) {
			const struct npf_iface *ifc = &c->inv->ifaces[i];

			for (size_t a = 0; a < ifc->n_addrs; a++)
				if (addr_usable(&ifc->addrs[a]) && in_net(&ifc->addrs[a], net)) {
					rank_member(c, net, ifc->name, ifc->roles,
						    dec_iface_rdma(c->inv, ifc), ifc->speed_mbps);
					break;
				}
		}
	}
	for (size_t n = 0; n < c->n_nets; n++) {
		net_steer(c, &c->nets[n], self_announced);
		for (size_t k = 1; k < chk->n_nodes; k++)
			if (addr_valid(&chk->nodes[k].name_addr) &&
			    in_net(&chk->nodes[k].name_addr, &c->nets[n]))
				c->nets[n].mgmt = true;
		if (holds_default_route(c->inv, &c->nets[n]))
			c->nets[n].mgmt = true;
	}
	return 0;
}

/* ---- the ranking table ------------------------------------------------------------------ */

/* The total order of networks (docs/decision.md, "Ranking"): one row per key, first
 * difference wins. The same rows explain a ranking (their reason) and break ties among
 * our own interfaces on one network (rows marked local). Nothing node-local (names,
 * ifindex) takes part in the network order, so every node holding the same
 * announcements sorts identically. quality: the row says one network is better than
 * another (policy, RDMA, speed, role); the others only make the order total. */

static int by_avoid(const struct net *a, const struct net *b)
{
	return a->avoid == b->avoid ? 0 : a->avoid ? 1 : -1;
}

/* A network every published consumer can be steered to beats one where some cannot
 * (docs/decision.md, "Consumers"): there, a consumer left unset binds its default. */
static int by_steer(const struct net *a, const struct net *b)
{
	return !a->unsteer == !b->unsteer ? 0 : a->unsteer ? 1 : -1;
}

static int by_prefer(const struct net *a, const struct net *b)
{
	return a->prefer == b->prefer ? 0 : a->prefer < b->prefer ? -1 : 1;
}

static int by_role(const struct net *a, const struct net *b)
{
	return a->role == b->role ? 0 : a->role ? 1 : -1;
}

static int by_rdma(const struct net *a, const struct net *b)
{
	return a->rdma == b->rdma ? 0 : a->rdma ? -1 : 1;
}

static int by_speed(const struct net *a, const struct net *b)
{
	return a->speed == b->speed ? 0 : a->speed > b->speed ? -1 : 1;
}

/* Among RDMA networks at equal speed, one where node names resolve (a storage RoCE NIC on
 * the management network) ranks after the fabric (issue 18). Only among RDMA networks: names
 * often resolve to the fabric itself, which must not lose to an Ethernet management NIC. The
 * rows before make a->rdma == b->rdma here. */
static bool mgmt_rdma(const struct net *n)
{
	return n->mgmt && n->rdma;
}

static int by_mgmt(const struct net *a, const struct net *b)
{
	return mgmt_rdma(a) == mgmt_rdma(b) ? 0 : mgmt_rdma(a) ? 1 : -1;
}

static int by_family(const struct net *a, const struct net *b)
{
	if (a->prefix.family == b->prefix.family)
		return 0;
	return a->prefix.family == AF_INET ? -1 : 1;
}

static int by_prefix(const struct net *a, const struct net *b)
{
	int r = memcmp(a->prefix.addr, b->prefix.addr, sizeof(a->prefix.addr));

	if (r)
		return r < 0 ? -1 : 1;
	return (a->prefix.prefixlen > b->prefix.prefixlen) -
	       (a->prefix.prefixlen < b->prefix.prefixlen);
}

/* Each row's key for a job row (lib/jobrows): the row's fact as an unsigned number, larger
 * is better, in the row's width of bits; dec_net_row_keys() packs the rows in table order,
 * so comparing the packed numbers is comparing row by row. A key agrees with its compare
 * within its width (prefer is capped at 255, speed at 2^32-1 Mbit/s). */
static uint64_t key_avoid(const struct net *n)
{
	return !n->avoid;
}

static uint64_t key_steer(const struct net *n)
{
	return !n->unsteer;
}

static uint64_t key_prefer(const struct net *n)
{
	return 255 - (n->prefer > 255 ? 255 : n->prefer);
}

static uint64_t key_role(const struct net *n)
{
	return !n->role;
}

static uint64_t key_rdma(const struct net *n)
{
	return n->rdma;
}

static uint64_t key_speed(const struct net *n)
{
	return n->speed < 0 ? 0 : n->speed > 0xffffffffLL ? 0xffffffffULL : (uint64_t)n->speed;
}

static uint64_t key_mgmt(const struct net *n)
{
	return !mgmt_rdma(n);
}

static uint64_t key_family(const struct net *n)
{
	return n->prefix.family == AF_INET;
}

/* key NULL: the row is not packed (the job compares the prefix bytes itself,
 * npf_job_net_order). */
static const struct rank_row {
	const char *name;
	int (*compare)(const struct net *a, const struct net *b);
	const char *reason; /* why the first ranks higher */
	bool quality;
	bool local; /* also breaks ties among our interfaces on one network */
	uint64_t (*key)(const struct net *n);
	unsigned int width; /* bits of key */
} rank_rows[] = {
    {"avoid", by_avoid, "avoid= policy", true, true, key_avoid, 1},
    {"steer", by_steer, "every consumer binds a verified address on it", true, false, key_steer, 1},
    {"prefer", by_prefer, "prefer= policy", true, true, key_prefer, 8},
    {"role", by_role, "container bridge/overlay/VPN ranks last", true, false, key_role, 1},
    {"rdma", by_rdma, "RDMA-backed", true, true, key_rdma, 1},
    {"speed", by_speed, "link speed", true, true, key_speed, 32},
    {"mgmt", by_mgmt, "RDMA, not on the management network", true, false, key_mgmt, 1},
    {"family", by_family, "IPv4 before IPv6", false, false, key_family, 1},
    {"prefix", by_prefix, "lower network prefix", false, false, NULL, 0},
};

#define N_RANK_ROWS (sizeof(rank_rows) / sizeof(rank_rows[0]))

/* The first row that tells a and b apart, or NULL. */
static const struct rank_row *deciding_row(const struct net *a, const struct net *b, bool local)
{
	for (size_t i = 0; i < N_RANK_ROWS; i++)
		if ((!local || rank_rows[i].local) && rank_rows[i].compare(a, b))
			return &rank_rows[i];
	return NULL;
}

int dec_net_cmp(const void *pa, const void *pb)
{
	const struct net *a = pa, *b = pb;
	const struct rank_row *r = deciding_row(a, b, false);

	return r ? r->compare(a, b) : 0;
}

int dec_net_quality_cmp(const struct net *a, const struct net *b)
{
	for (size_t i = 0; i < N_RANK_ROWS && rank_rows[i].quality; i++) {
		int r = rank_rows[i].compare(a, b);

		if (r)
			return r;
	}
	return 0;
}

const char *dec_net_cmp_reason(const struct net *a, const struct net *b)
{
	const struct rank_row *r = deciding_row(a, b, false);

	return r ? r->reason : "lower network prefix";
}

void dec_net_row_keys(const struct net *n, int64_t *rank, int64_t *quality)
{
	uint64_t k = 0;

	/* The quality rows come first in the table; the packed rows after them extend the
	 * quality key into the rank key. 46 bits today: a row that would pass 63 fails
	 * test_rank's width check. */
	*quality = 0;
	for (size_t i = 0; i < N_RANK_ROWS && rank_rows[i].key; i++) {
		k = k << rank_rows[i].width | (rank_rows[i].key(n) & ((1ULL << rank_rows[i].width) - 1));
		if (rank_rows[i].quality)
			*quality = (int64_t)k;
	}
	*rank = (int64_t)k;
}

/* Bits dec_net_row_keys() packs into the rank key (a test keeps it under 63). */
unsigned int dec_net_key_bits(void)
{
	unsigned int bits = 0;

	for (size_t i = 0; i < N_RANK_ROWS && rank_rows[i].key; i++)
		bits += rank_rows[i].width;
	return bits;
}

/* Our interface i's ranking facts as a one-member network. */
static void iface_facts(const struct ctx *c, size_t i, struct net *n)
{
	const struct npf_iface *ifc = &c->inv->ifaces[i];

	memset(n, 0, sizeof(*n));
	n->prefer = PREFER_NONE;
	n->ifc = -1;
	rank_member(c, n, ifc->name, 0, dec_iface_rdma(c->inv, ifc), ifc->speed_mbps);
}

/* Whether the first address of n's family on interface i (getifaddrs order) lies on
 * network n: NCCL (family forced on IPv6), Gloo, TensorPipe and UCX bind that address for
 * the interface's name. */
static bool first_addr_on(const struct ctx *c, size_t i, size_t n)
{
	const struct npf_iface *ifc = &c->inv->ifaces[i];

	for (size_t a = 0; a < ifc->n_addrs; a++)
		if (ifc->addrs[a].family == c->nets[n].prefix.family)
			return in_net(&ifc->addrs[a], &c->nets[n]);
	return false;
}

/* Among our interfaces on network n (two NICs in one subnet): the one whose first address
 * is on n (the consumers' address), then the local rows of the table, then the name. */
int dec_local_cmp(const struct ctx *c, size_t n, size_t i, size_t j)
{
	struct net a, b;
	const struct rank_row *r;
	bool fa = first_addr_on(c, i, n), fb = first_addr_on(c, j, n);

	if (fa != fb)
		return fa ? -1 : 1;
	iface_facts(c, i, &a);
	iface_facts(c, j, &b);
	r = deciding_row(&a, &b, true);
	if (r)
		return r->compare(&a, &b);
	return strcmp(c->inv->ifaces[i].name, c->inv->ifaces[j].name);
}

/* ---- the job's name of a network ------------------------------------------------------- */

/* A host link: a prefix that holds only its two ends (IPv4 /31 and /30, IPv6 /127 and /126). */
static bool host_link(const struct net *n)
{
	return (unsigned int)n->prefix.prefixlen + 2 >= addr_bits(n->prefix.family);
}

/* The key of network n: a routed fabric (each NIC its own /31 to a top-of-rack router, a
 * covering route to the others) is one network of the job, named by the prefix that covers
 * our address and every peer address our links on it reached (the value Open MPI's
 * job-wide CIDR takes, jobwide.c): every node computes the same one. Otherwise its CIDR. */
static void net_key(const struct ctx *c, struct net *n)
{
	const struct npf_check *chk = c->chk;
	const struct npf_addr *ours;
	unsigned int bits = n->prefix.prefixlen, min = n->prefix.family == AF_INET ? 8 : 16;
	size_t reached = 0;
	struct npf_addr cover;

	cidr_str(&n->prefix, n->key, sizeof(n->key));
	if (n->ifc < 0 || !host_link(n))
		return;
	for (size_t k = 1; k < chk->n_nodes; k++)
		for (size_t j = 0; j < chk->nodes[k].n_cands; j++)
			if (addr_valid(&chk->nodes[k].cands[j].addr) &&
			    in_net(&chk->nodes[k].cands[j].addr, n))
				return; /* a peer on it: an ordinary subnet */
	ours = &ev_at(c, (size_t)n->ifc, (size_t)(n - c->nets))->addr;
	for (size_t k = 1; k < chk->n_nodes; k++) {
		int li = c->link_idx[(size_t)n->ifc * chk->n_nodes + k];
		const struct npf_addr *pa = li >= 0 ? &chk->links[li].peer_addr : NULL;

		if (!pa || pa->family != n->prefix.family || !addr_usable(pa))
			continue;
		bits = addr_common_bits(ours, pa, bits);
		reached++;
	}
	if (!reached || bits < min)
		return;
	addr_mask(ours, bits, &cover);
	cidr_str(&cover, n->key, sizeof(n->key));
}

void dec_net_keys(struct ctx *c)
{
	for (size_t n = 0; n < c->n_nets; n++)
		net_key(c, &c->nets[n]);
	/* Two routed rails whose addresses interleave would cover the same prefix: a row's
	 * keys must stay distinct (wire ROW), so such host links keep their CIDRs. */
	for (size_t n = 0; n < c->n_nets; n++) {
		char key[sizeof(c->nets[n].key)];
		bool clash = false;

		for (size_t m = 0; m < c->n_nets && c->nets[n].ifc >= 0; m++)
			if (m != n && c->nets[m].ifc >= 0 &&
			    strcmp(c->nets[n].key, c->nets[m].key) == 0)
				clash = true;
		if (!clash)
			continue;
		copy_str(key, sizeof(key), c->nets[n].key);
		for (size_t m = 0; m < c->n_nets; m++)
			if (c->nets[m].ifc >= 0 && strcmp(c->nets[m].key, key) == 0)
				cidr_str(&c->nets[m].prefix, c->nets[m].key, sizeof(c->nets[m].key));
	}
}

/* Only what we announced was probed; an address we did not announce (excluded by
 * interfaces_exclude, or newer than the check) is not a candidate at all. */
