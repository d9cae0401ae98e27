// SPDX-License-Identifier: MIT
/* Ownership helpers and stable names for the node and check models. */
#include "model.h"
#include "check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void npf_iface_clear(struct npf_iface *iface)
{
	if (!iface)
		return;
	free(iface->addrs);
	iface->addrs = NULL;
	iface->n_addrs = 0;
}

int npf_iface_add_addr(struct npf_iface *iface, const struct npf_addr *a)
{
	struct npf_addr *n = realloc(iface->addrs, (iface->n_addrs + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	n[iface->n_addrs++] = *a;
	iface->addrs = n;
	return 0;
}

void npf_rdma_dev_clear(struct npf_rdma_dev *dev)
{
	if (!dev)
		return;
	for (size_t i = 0; i < dev->n_ports; i++)
		free(dev->ports[i].gids);
	free(dev->ports);
	dev->ports = NULL;
	dev->n_ports = 0;
}

void npf_inventory_clear(struct npf_inventory *inv)
{
	if (!inv)
		return;
	for (size_t i = 0; i < inv->n_ifaces; i++)
		npf_iface_clear(&inv->ifaces[i]);
	free(inv->ifaces);
	for (size_t i = 0; i < inv->n_rdma; i++)
		npf_rdma_dev_clear(&inv->rdma[i]);
	free(inv->rdma);
	memset(inv, 0, sizeof(*inv));
}

struct npf_iface *npf_inventory_find_ifindex(const struct npf_inventory *inv, int ifindex)
{
	for (size_t i = 0; i < inv->n_ifaces; i++)
		if (inv->ifaces[i].ifindex == ifindex)
			return &inv->ifaces[i];
	return NULL;
}

struct npf_iface *npf_inventory_find_name(const struct npf_inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->n_ifaces; i++)
		if (strcmp(inv->ifaces[i].name, name) == 0)
			return &inv->ifaces[i];
	return NULL;
}

const char *npf_kind_name(enum npf_kind k)
{
	static const char *const names[NPF_KIND__COUNT] = {
		[NPF_KIND_UNKNOWN] = "unknown", [NPF_KIND_PHYSICAL] = "physical",
		[NPF_KIND_BOND] = "bond",       [NPF_KIND_TEAM] = "team",
		[NPF_KIND_VLAN] = "vlan",       [NPF_KIND_MACVLAN] = "macvlan",
		[NPF_KIND_IPVLAN] = "ipvlan",   [NPF_KIND_BRIDGE] = "bridge",
		[NPF_KIND_VETH] = "veth",       [NPF_KIND_TUN] = "tun",
		[NPF_KIND_TAP] = "tap",         [NPF_KIND_VXLAN] = "vxlan",
		[NPF_KIND_GENEVE] = "geneve",   [NPF_KIND_WIREGUARD] = "wireguard",
		[NPF_KIND_IPOIB] = "ipoib",     [NPF_KIND_LOOPBACK] = "loopback",
		[NPF_KIND_DUMMY] = "dummy",     [NPF_KIND_OTHER] = "other",
	};
	if ((unsigned)k >= NPF_KIND__COUNT)
		return "unknown";
	return names[k];
}

const char *npf_port_state_name(enum npf_port_state s)
{
	switch (s) {
	case NPF_PORT_NOP: return "NOP";
	case NPF_PORT_DOWN: return "DOWN";
	case NPF_PORT_INIT: return "INIT";
	case NPF_PORT_ARMED: return "ARMED";
	case NPF_PORT_ACTIVE: return "ACTIVE";
	case NPF_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
	}
	return "UNKNOWN";
}

const char *npf_link_layer_name(enum npf_link_layer ll)
{
	switch (ll) {
	case NPF_LL_INFINIBAND: return "InfiniBand";
	case NPF_LL_ETHERNET: return "Ethernet";
	case NPF_LL_UNKNOWN: break;
	}
	return "unknown";
}

const char *npf_gid_type_name(enum npf_gid_type t)
{
	switch (t) {
	case NPF_GID_IB_ROCE_V1: return "IB/RoCE v1";
	case NPF_GID_ROCE_V2: return "RoCE v2";
	case NPF_GID_TYPE_UNKNOWN: break;
	}
	return "unknown";
}

const char *npf_operstate_name(uint8_t operstate)
{
	switch (operstate) {
	case IF_OPER_UNKNOWN: return "UNKNOWN";
	case IF_OPER_NOTPRESENT: return "NOTPRESENT";
	case IF_OPER_DOWN: return "DOWN";
	case IF_OPER_LOWERLAYERDOWN: return "LOWERLAYERDOWN";
	case IF_OPER_TESTING: return "TESTING";
	case IF_OPER_DORMANT: return "DORMANT";
	case IF_OPER_UP: return "UP";
	}
	return "UNKNOWN";
}

char *npf_addr_str(const struct npf_addr *a, char *buf, size_t bufsz)
{
	if (!inet_ntop(a->family == AF_INET6 ? AF_INET6 : AF_INET, a->addr, buf, (socklen_t)bufsz))
		snprintf(buf, bufsz, "?");
	return buf;
}

bool npf_addr_is_local_only(const struct npf_addr *a)
{
	if (a->family == AF_INET)
		return a->addr[0] == 127 || (a->addr[0] == 169 && a->addr[1] == 254);
	if (a->family == AF_INET6) {
		static const uint8_t loop6[16] = { [15] = 1 };
		if (memcmp(a->addr, loop6, 16) == 0)
			return true;
		return a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80;
	}
	return false;
}

void npf_node_clear(struct npf_node *n)
{
	if (!n)
		return;
	free(n->cands);
	free(n->ifnames);
	n->cands = NULL;
	n->ifnames = NULL;
	n->n_cands = n->n_ifnames = 0;
}

void npf_check_clear(struct npf_check *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_nodes; i++)
		npf_node_clear(&c->nodes[i]);
	free(c->nodes);
	free(c->paths);
	free(c->links);
	memset(c, 0, sizeof(*c));
}

static const char *const outcome_names[NPF_OUT__COUNT] = {
	[NPF_OUT_OK] = "ok",
	[NPF_OUT_WRONG_EGRESS] = "wrong-egress",
	[NPF_OUT_BULK_STALL] = "bulk-stall",
	[NPF_OUT_WRONG_PEER] = "wrong-peer",
	[NPF_OUT_REFUSED] = "refused",
	[NPF_OUT_TIMEOUT] = "timeout",
	[NPF_OUT_UNREACHABLE] = "unreachable",
	[NPF_OUT_PEER_UNAVAILABLE] = "peer-unavailable",
	[NPF_OUT_NOT_PROBED] = "not-probed",
};

const char *npf_outcome_name(enum npf_outcome o)
{
	if ((unsigned)o >= NPF_OUT__COUNT)
		return "unknown";
	return outcome_names[o];
}

int npf_outcome_parse(const char *s)
{
	for (int i = 0; i < NPF_OUT__COUNT; i++)
		if (s && strcmp(s, outcome_names[i]) == 0)
			return i;
	return -EINVAL;
}

const char *npf_verdict_name(enum npf_verdict v)
{
	switch (v) {
	case NPF_VERDICT_OK: return "ok";
	case NPF_VERDICT_FAIL: return "fail";
	case NPF_VERDICT_DEGRADED: return "degraded";
	case NPF_VERDICT_UNKNOWN:
	case NPF_VERDICT__COUNT: break;
	}
	return "unknown";
}

int npf_verdict_parse(const char *s)
{
	for (int v = 0; s && v < NPF_VERDICT__COUNT; v++)
		if (strcmp(s, npf_verdict_name((enum npf_verdict)v)) == 0)
			return v;
	return -EINVAL;
}

bool npf_verdict_publishes(enum npf_verdict v)
{
	return v == NPF_VERDICT_OK || v == NPF_VERDICT_DEGRADED;
}

bool npf_verdict_name_publishes(const char *s)
{
	int v = npf_verdict_parse(s);

	return v >= 0 && npf_verdict_publishes((enum npf_verdict)v);
}

const char *npf_direction_name(enum npf_direction d)
{
	return d == NPF_DIR_REVERSE ? "reverse" : "forward";
}
