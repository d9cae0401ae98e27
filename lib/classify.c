// SPDX-License-Identifier: MIT
/* Interface classification: kind and roles, each with human-readable evidence. */
#include "classify.h"
#include "nlif.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if.h>
#include <linux/if_arp.h>

enum name_match {
	MATCH_PREFIX,
	MATCH_EXACT,
	MATCH_DOCKER_USER, /* "br-" + exactly 12 lower-case hex digits */
	MATCH_DIGITS,      /* prefix followed by one or more digits only */
};

struct name_rule {
	enum name_match how;
	const char *pat;
	enum npf_role role;
	const char *why;
};

/* Names from the container runtimes, CNIs and VPNs that hand out links which
 * NCCL's "^docker,lo,virbr" default does not exclude (reference/nccl.md 1.2). */
static const struct name_rule name_rules[] = {
	{ MATCH_PREFIX, "docker", NPF_ROLE_CONTAINER_BRIDGE, "docker bridge docker*" },
	{ MATCH_DOCKER_USER, "br-", NPF_ROLE_CONTAINER_BRIDGE, "docker user bridge br-<12 hex>" },
	{ MATCH_DIGITS, "cni", NPF_ROLE_CONTAINER_BRIDGE, "CNI bridge cni<N>" },
	{ MATCH_PREFIX, "podman", NPF_ROLE_CONTAINER_BRIDGE, "podman bridge podman*" },
	{ MATCH_PREFIX, "virbr", NPF_ROLE_CONTAINER_BRIDGE, "libvirt bridge virbr*" },
	{ MATCH_PREFIX, "lxcbr", NPF_ROLE_CONTAINER_BRIDGE, "LXC bridge lxcbr*" },
	{ MATCH_PREFIX, "flannel", NPF_ROLE_OVERLAY, "flannel overlay flannel*" },
	{ MATCH_PREFIX, "cali", NPF_ROLE_OVERLAY, "Calico link cali*" },
	{ MATCH_PREFIX, "cilium_", NPF_ROLE_OVERLAY, "Cilium link cilium_*" },
	{ MATCH_EXACT, "vxlan.calico", NPF_ROLE_OVERLAY, "Calico VXLAN vxlan.calico" },
	{ MATCH_EXACT, "weave", NPF_ROLE_OVERLAY, "Weave bridge weave" },
	{ MATCH_PREFIX, "tailscale", NPF_ROLE_VPN, "Tailscale tailscale*" },
	{ MATCH_PREFIX, "wg", NPF_ROLE_VPN, "WireGuard wg*" },
	{ MATCH_PREFIX, "zt", NPF_ROLE_VPN, "ZeroTier zt*" },
	{ MATCH_PREFIX, "tun", NPF_ROLE_VPN, "tunnel tun*" },
};

static bool is_lower_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool name_matches(const struct name_rule *r, const char *name)
{
	size_t plen = strlen(r->pat);
	const char *rest = name + plen;
	size_t i;

	if (r->how == MATCH_EXACT)
		return strcmp(name, r->pat) == 0;
	if (strncmp(name, r->pat, plen) != 0)
		return false;
	switch (r->how) {
	case MATCH_PREFIX:
		return true;
	case MATCH_DOCKER_USER:
		/* Docker names user networks' bridges after 12 hex digits of the
		 * network id; "br-lan" and friends are someone's real bridge. */
		for (i = 0; rest[i]; i++)
			if (!is_lower_hex(rest[i]))
				return false;
		return i == 12;
	case MATCH_DIGITS:
		for (i = 0; rest[i]; i++)
			if (rest[i] < '0' || rest[i] > '9')
				return false;
		return i > 0;
	case MATCH_EXACT:
		break;
	}
	return false;
}

/* Appends "; text" (or "text" first) to the evidence, truncating safely. */
static void ev_add(struct npf_iface *ifc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ev_add(struct npf_iface *ifc, const char *fmt, ...)
{
	size_t used = strnlen(ifc->evidence, sizeof(ifc->evidence));
	size_t left;
	va_list ap;

	if (used + 1 >= sizeof(ifc->evidence))
		return;
	if (used) {
		snprintf(ifc->evidence + used, sizeof(ifc->evidence) - used, "; ");
		used = strnlen(ifc->evidence, sizeof(ifc->evidence));
	}
	left = sizeof(ifc->evidence) - used;
	if (left <= 1)
		return;
	va_start(ap, fmt);
	vsnprintf(ifc->evidence + used, left, fmt, ap);
	va_end(ap);
}

static bool is_link_local(const struct npf_addr *a)
{
	if (a->family == AF_INET)
		return a->addr[0] == 169 && a->addr[1] == 254;
	if (a->family == AF_INET6)
		return a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80;
	return false;
}

static bool has_routable_addr(const struct npf_iface *ifc)
{
	for (size_t i = 0; i < ifc->n_addrs; i++)
		if (!npf_addr_is_local_only(&ifc->addrs[i]))
			return true;
	return false;
}

static void classify_kind(struct npf_iface *ifc)
{
	enum npf_kind k;

	if (ifc->kind_str[0]) {
		k = nlif_kind_from_str(ifc->kind_str);
		if (k == NPF_KIND_TUN) {
			/* Keep the parser's split (it saw IFLA_TUN_TYPE); else framing. */
			if (ifc->kind == NPF_KIND_TAP || ifc->kind == NPF_KIND_TUN)
				k = ifc->kind;
			else
				k = ifc->arphrd == ARPHRD_ETHER ? NPF_KIND_TAP : NPF_KIND_TUN;
			ev_add(ifc, "kind=tun (%s)", k == NPF_KIND_TAP ? "tap" : "tun");
		} else {
			ev_add(ifc, "kind=%s", ifc->kind_str);
		}
		if (ifc->has_device)
			ev_add(ifc, "backed by a device");
	} else if (ifc->arphrd == ARPHRD_LOOPBACK || (ifc->flags & IFF_LOOPBACK)) {
		k = NPF_KIND_LOOPBACK;
		ev_add(ifc, "loopback");
	} else if (ifc->arphrd == ARPHRD_INFINIBAND) {
		k = NPF_KIND_IPOIB;
		ev_add(ifc, "ARPHRD_INFINIBAND (IPoIB)%s", ifc->has_device ? ", backed by a device" : "");
	} else if (ifc->has_device) {
		k = NPF_KIND_PHYSICAL;
		ev_add(ifc, "no link kind, backed by a device (sysfs device/)");
	} else if (ifc->arphrd == ARPHRD_ETHER) {
		/* Every rtnl-created virtual link reports a kind; a kindless
		 * Ethernet link is a NIC whose sysfs we could not see. */
		k = NPF_KIND_PHYSICAL;
		ev_add(ifc, "no link kind, ethernet, no sysfs device/ seen");
	} else {
		k = NPF_KIND_UNKNOWN;
		ev_add(ifc, "no link kind, no device, link type %u", ifc->arphrd);
	}
	ifc->kind = k;
}

/* A master whose ports carry frames for it rather than their own traffic. */
static bool is_port_master(const struct npf_iface *m)
{
	enum npf_kind k = nlif_kind_from_str(m->kind_str);

	return k == NPF_KIND_BRIDGE || k == NPF_KIND_BOND || k == NPF_KIND_TEAM ||
	       strcmp(m->kind_str, "openvswitch") == 0;
}

void classify_iface(struct npf_iface *ifc, const struct npf_inventory *inv)
{
	const struct npf_iface *m = NULL;
	bool port = false, routable;
	size_t n_ll = 0;

	ifc->roles &= NPF_ROLE_RDMA | NPF_ROLE_MANAGEMENT;
	memset(ifc->evidence, 0, sizeof(ifc->evidence));
	classify_kind(ifc);

	if (ifc->master) {
		m = inv ? npf_inventory_find_ifindex(inv, ifc->master) : NULL;
		if (m) {
			port = is_port_master(m);
			ev_add(ifc, "enslaved to %s (%s)", m->name, m->kind_str[0] ? m->kind_str : "?");
		} else {
			ev_add(ifc, "enslaved to ifindex %d", ifc->master);
		}
	}

	for (size_t i = 0; i < sizeof(name_rules) / sizeof(name_rules[0]); i++) {
		if (!name_matches(&name_rules[i], ifc->name))
			continue;
		ifc->roles |= name_rules[i].role;
		ev_add(ifc, "name matches %s", name_rules[i].why);
		break;
	}
	if (ifc->kind == NPF_KIND_WIREGUARD && !(ifc->roles & NPF_ROLE_VPN)) {
		ifc->roles |= NPF_ROLE_VPN;
		ev_add(ifc, "WireGuard tunnel");
	}

	for (size_t i = 0; i < ifc->n_addrs; i++)
		n_ll += is_link_local(&ifc->addrs[i]);
	if (ifc->n_addrs && n_ll == ifc->n_addrs) {
		ifc->roles |= NPF_ROLE_LINK_LOCAL_ONLY;
		ev_add(ifc, "only link-local addresses");
	}

	if (ifc->roles & NPF_ROLE_RDMA)
		ev_add(ifc, "netdev of an RDMA port");

	routable = has_routable_addr(ifc);
	if (!routable && ifc->kind == NPF_KIND_VETH) {
		ifc->roles |= NPF_ROLE_VIRTUAL_PORT;
		ev_add(ifc, "veth without routable address");
	} else if (!routable && port) {
		ifc->roles |= NPF_ROLE_VIRTUAL_PORT;
		ev_add(ifc, "%s port without routable address", m->kind_str);
	}
}

void classify_inventory(struct npf_inventory *inv)
{
	for (size_t i = 0; i < inv->n_ifaces; i++)
		classify_iface(&inv->ifaces[i], inv);
}

const char *classify_role_name(enum npf_role r)
{
	switch (r) {
	case NPF_ROLE_CONTAINER_BRIDGE: return "container-bridge";
	case NPF_ROLE_OVERLAY: return "overlay";
	case NPF_ROLE_VPN: return "vpn";
	case NPF_ROLE_LINK_LOCAL_ONLY: return "link-local-only";
	case NPF_ROLE_VIRTUAL_PORT: return "virtual-port";
	case NPF_ROLE_RDMA: return "rdma";
	case NPF_ROLE_MANAGEMENT: return "management";
	}
	return "unknown";
}

int classify_roles_str(uint32_t roles, const char *sep, char *buf, size_t bufsz)
{
	size_t used = 0;
	int n = 0;

	if (!bufsz)
		return 0;
	buf[0] = '\0';
	for (uint32_t bit = 1; bit && bit <= NPF_ROLE_MANAGEMENT; bit <<= 1) {
		int w;

		if (!(roles & bit))
			continue;
		w = snprintf(buf + used, bufsz - used, "%s%s", n ? sep : "",
			     classify_role_name((enum npf_role)bit));
		if (w < 0 || (size_t)w >= bufsz - used) {
			/* Drop the partial name: half a role name reads as another. */
			buf[used] = '\0';
			break;
		}
		used += (size_t)w;
		n++;
	}
	return n;
}
