// SPDX-License-Identifier: MIT
/* `explain`, choosing the cause: the rule table (one row per cause), the cause names, and
 * the one step that writes the report from the winning row's finding. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "explain_internal.h"

/* The line kinds a row may cite, as a bit set (one bit per enum npf_xp_kind). */
#define K(k) (1ull << NPF_XL_##k)
_Static_assert(NPF_XL__COUNT <= 64, "npf_xp_kind no longer fits a 64-bit evidence set");
#define CONNECTS                                                                                   \
	(K(CONNECT_FAIL) | K(CONNECT_RETRY) | K(OMPI_CONNECT) | K(GLOO_CONNECT) | K(STORE_FAIL))
#define NOT_NET                                                                                    \
	(K(CUDA_OOM) | K(KILLED) | K(DUP_GPU) | K(COLL_MISMATCH) | K(CUDA_ERROR) | K(SHM) |        \
	 K(VERSION) | K(NO_BARRIER) | K(PY_EXCEPTION))
#define ANY_FIRST ~0ull /* also the first failing process's first failure, whatever it is */
#define C(c) (1u << NPF_XC_##c)

/* One row per root cause, in precedence order: the first whose test fires is the cause, the
 * others that fire are reported as "also". tier: rules of one tier are alternatives; when two
 * fire that do not go together (compat), the answer is marked ambiguous. evidence: the kinds
 * of line the test cites. fix: what to change, unless the test wrote a fix of its own (NULL:
 * the test always does). "none" and "unknown" have no test: they are what is left. */
static const struct xp_rule xp_rules[] = {
    /* Tier 0: the first failure is not the network's; no network rule is consulted. */
    {NPF_XC_NOT_NETWORK, "not-network", 0, xp_test_not_network_first, NOT_NET, NULL, 0},
    {NPF_XC_COMM_ID_SUBNET, "comm-id-subnet", 1, xp_test_comm_id,
     K(NO_SUBNET) | K(BOOTSTRAP) | K(NCCL_VERSION) | K(ENV),
     "give NCCL_COMM_ID an address of rank 0's node on a network every node has "
     "(or unset it and let the launcher pass the unique id)",
     C(LOOPBACK)},
    {NPF_XC_BAD_ADDRESS, "bad-address", 1, xp_test_bad_address,
     K(UNRESOLVED) | K(GLOO_NOADDR) | CONNECTS,
     "give MASTER_ADDR (--rdzv-endpoint, --dist-init-addr) rank 0's node's address on "
     "the fabric, or a name every node resolves to it",
     0},
    {NPF_XC_IB_MTU, "ib-mtu-mismatch", 1, xp_test_ib_mtu,
     K(IB_ASYNC) | K(IB_COMPLETION) | K(NET_IB),
     "make the MTU equal on every port and switch (ibv_devinfo: active_mtu; RoCE: the "
     "netdev MTU, e.g. 4200 for 4096)",
     C(ROCE_GID)},
    {NPF_XC_ROCE_GID_FORCED, "roce-gid-forced", 1, xp_test_gid_forced,
     K(ENV) | K(IB_GID_HINT) | K(IB_MODIFY_QP) | K(IB_COMPLETION),
     "unset NCCL_IB_GID_INDEX (NCCL >= 2.21.5 picks the RoCE v2 IPv4 GID per port); "
     "on older NCCL pin the index show_gids reports as RoCE v2 + IPv4",
     C(ROCE_GID)},
    {NPF_XC_ROCE_GID, "roce-gid", 1, xp_test_gid, K(IB_COMPLETION) | K(NET_IB),
     "use a RoCE v2 GID with an IPv4 address on every port: NCCL >= 2.21.5 unset "
     "NCCL_IB_GID_INDEX (set NCCL_IB_ADDR_FAMILY/NCCL_IB_ADDR_RANGE if needed), older "
     "NCCL pin the RoCE v2 index",
     0},
    {NPF_XC_GLOO_HOSTNAME, "gloo-hostname-loopback", 1, xp_test_gloo_hostname,
     K(GLOO_LOOPBACK) | K(GLOO_CONNECT),
     "set GLOO_SOCKET_IFNAME to the fabric interface (exact name), or make the "
     "hostname resolve to the fabric address in /etc/hosts",
     C(LOOPBACK)},
    {NPF_XC_IFNAME_MISSING, "interface-missing", 1, xp_test_ifname_missing,
     K(ENV) | K(NO_IFACE) | K(NO_FAMILY) | K(GLOO_NOADDR),
     "set the variable to an interface the nodes have (ip -br addr), or unset it and "
     "let NCCL pick; `netpreflight env` publishes the one that works",
     0},
    {NPF_XC_NAMES_DIFFER, "interface-names-differ", 1, xp_test_names_differ,
     K(NO_IFACE) | K(GLOO_NOADDR) | K(OMPI_NOIF) | K(ENV) | K(BOOTSTRAP),
     "set the variable per node (each node's own name), or list every node's name, "
     "or use an address-based setting (CIDR for Open MPI)",
     C(ENV_DIFFERS)},
    {NPF_XC_PREFIX_MATCH, "prefix-match", 2, xp_test_prefix, K(ENV) | K(BOOTSTRAP) | K(NET_SOCKET),
     NULL, C(FIREWALL_REFUSED) | C(FIREWALL_SILENT)},
    {NPF_XC_LOOPBACK, "loopback", 2, xp_test_loopback, ANY_FIRST,
     "exclude lo: a '^' list replaces NCCL's defaults, so write ^docker,lo,... "
     "or better name the fabric interface with '='",
     C(FIREWALL_REFUSED) | C(SAME_ADDRESS)},
    {NPF_XC_LINK_LOCAL, "link-local", 2, xp_test_link_local, ANY_FIRST,
     "name an interface with a routable address (NCCL_SOCKET_IFNAME==<if>), or "
     "NCCL_SOCKET_FAMILY=AF_INET if the nodes have IPv4",
     C(FIREWALL_REFUSED) | C(FIREWALL_SILENT) | C(SAME_ADDRESS)},
    {NPF_XC_SAME_ADDRESS, "same-address", 2, xp_test_same_address, ANY_FIRST,
     "exclude the bridges: name the fabric interface (NCCL_SOCKET_IFNAME==<if>, "
     "GLOO_SOCKET_IFNAME; Open MPI: the fabric CIDR in "
     "OMPI_MCA_btl_tcp_if_include)",
     C(CONTAINER_BRIDGE) | C(FIREWALL_REFUSED)},
    {NPF_XC_CONTAINER_BRIDGE, "container-bridge", 2, xp_test_bridge, ANY_FIRST,
     "name the fabric interface: NCCL_SOCKET_IFNAME==<if> (NCCL's defaults "
     "exclude docker* and lo only, never br-<id> or veth)",
     C(FIREWALL_REFUSED) | C(FIREWALL_SILENT)},
    {NPF_XC_FIREWALL_REFUSED, "firewall-refused", 3, xp_test_refused, CONNECTS | K(BOOTSTRAP),

     "open the job's ports between the nodes on that network, or use a network "
     "that works to every peer",
     0},
    {NPF_XC_FIREWALL_SILENT, "firewall-silent", 3, xp_test_silent, CONNECTS | K(BOOTSTRAP),

     "open the job's ports between the nodes on that network, or use a network "
     "that works to every peer",
     0},
    {NPF_XC_MTU_BLACKHOLE, "mtu-blackhole", 3, xp_test_mtu, K(INIT_DONE) | K(CHANNEL) | K(WATCHDOG),

     "make the MTU equal on every NIC and switch port of the path (ping -M do -s "
     "<mtu-28> finds the hop), or use a network without the mismatch",
     0},
    {NPF_XC_ENV_DIFFERS, "env-differs", 4, xp_test_env_differs, K(ENV),
     "give every rank the environment `netpreflight env` publishes "
     "(TaskProlog or the launcher's env file)",
     0},
    {NPF_XC_IB_FALLBACK, "ib-socket-fallback", 4, xp_test_ib_fallback,
     K(IB_NONE) | K(USING_NET) | K(ENV),
     "fix NCCL_IB_HCA (verbs names, '=' for exact: =mlx5_0:1) or the port state; set "
     "NCCL_NET=IB so a fallback fails loudly",
     0},
    {NPF_XC_NOT_NETWORK, "not-network", 5, xp_test_not_network_any, NOT_NET, NULL, 0},
    {NPF_XC_NONE, "none", 6, NULL, 0, NULL, 0},
    {NPF_XC_UNKNOWN, "unknown", 6, NULL, 0, NULL, 0},
};

static const struct xp_rule *rule_of(enum npf_xp_cause c)
{
	for (size_t i = 0; i < sizeof(xp_rules) / sizeof(xp_rules[0]); i++)
		if (xp_rules[i].cause == c)
			return &xp_rules[i];
	return NULL;
}

const char *npf_xp_cause_name(enum npf_xp_cause c)
{
	const struct xp_rule *row = rule_of(c);

	return row ? row->name : "unknown";
}

int npf_xp_cause_parse(const char *s)
{
	for (size_t i = 0; s && i < sizeof(xp_rules) / sizeof(xp_rules[0]); i++)
		if (strcmp(s, xp_rules[i].name) == 0)
			return (int)xp_rules[i].cause;
	return -EINVAL;
}

const struct xp_rule *xp_rule_table(size_t *n)
{
	*n = sizeof(xp_rules) / sizeof(xp_rules[0]);
	return xp_rules;
}

/* Adds an evidence line once (by line number), while there is room. */
static void add_evidence(struct npf_xp_report *r, const struct npf_xp_line *l)
{
	if (!l || r->n_evidence >= NPF_XP_MAX_EVIDENCE)
		return;
	for (size_t i = 0; i < r->n_evidence; i++)
		if (r->evidence[i].lineno == l->lineno)
			return;
	r->evidence[r->n_evidence++] = *l;
}

/* The one step that writes the report: the winning row and what its test found. */
static void report_finding(struct npf_xp_report *r, const struct xp_rule *row,
			   const struct xp_finding *f)
{
	r->cause = row->cause;
	for (size_t i = 0; i < f->n_lines; i++)
		add_evidence(r, f->lines[i]);
	xp_cpy(r->subject_if, sizeof(r->subject_if), f->ifname);
	xp_cpy(r->subject_addr, sizeof(r->subject_addr), f->addr);
	xp_cpy(r->subject_host, sizeof(r->subject_host), f->host);
	snprintf(r->summary, sizeof(r->summary), "%s", f->summary);
	snprintf(r->fix_hint, sizeof(r->fix_hint), "%s",
		 f->fix[0]  ? f->fix
		 : row->fix ? row->fix
			    : "");
}

static bool any_failure(const struct npf_xp_report *r)
{
	for (size_t i = 0; i < r->n_procs; i++)
		if (r->procs[i].has_error)
			return true;
	return false;
}

void xp_diagnose(struct xp_ctx *c)
{
	struct npf_xp_report *r = c->rep;
	const struct xp_evidence e = {r, c->lines, c->n_lines, c->job};
	const struct xp_rule *top = NULL;
	struct xp_finding found, also;

	for (size_t i = 0; i < sizeof(xp_rules) / sizeof(xp_rules[0]); i++) {
		const struct xp_rule *row = &xp_rules[i];

		if (!row->test)
			continue;
		if (!top) {
			memset(&found, 0, sizeof(found));
			if (row->test(&e, &found)) {
				top = row;
				if (row->tier == 0)
					break;
			}
			continue;
		}
		/* Later rules only tell whether they also fire. */
		memset(&also, 0, sizeof(also));
		if (!row->test(&e, &also))
			continue;
		if (r->n_also < sizeof(r->also) / sizeof(r->also[0]))
			r->also[r->n_also++] = row->cause;
		if (row->tier == top->tier && !(top->compat & (1u << row->cause)) &&
		    !(row->compat & (1u << top->cause)))
			r->ambiguous = true;
	}
	if (top)
		report_finding(r, top, &found);
	xp_mend(r->summary, sizeof(r->summary));
	xp_mend(r->fix_hint, sizeof(r->fix_hint));
	if (!top && any_failure(r)) {
		r->cause = NPF_XC_UNKNOWN;
		snprintf(r->summary, sizeof(r->summary),
			 "the job failed, but no line shows a network cause this tool knows");
		for (size_t i = 0; i < r->n_procs; i++)
			if (r->procs[i].has_error)
				add_evidence(r, &r->procs[i].first_error);
	}
}
