// SPDX-License-Identifier: MIT
/* Pure rtnetlink / ethtool-netlink parsers: message bytes in, node model out. */
#include "nlif.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>

/* The kernel's ALTIFNAMSIZ; kept local because older uapi headers lack it. */
#define NLIF_ALTIFNAMSIZ 128
/* dev->addr_len never exceeds MAX_ADDR_LEN. */
#define NLIF_MAX_ADDR_LEN 32
/* Largest errno value the kernel reports in NLMSG_ERROR / NLMSG_DONE. */
#define NLIF_MAX_ERRNO 4095

/* One tb[] size per attribute family: the maxima differ (iproute2 style). */
#define NLIF_LINK_TB (IFLA_MAX + 1)
#define NLIF_LINKINFO_TB (IFLA_INFO_MAX + 1)
#define NLIF_PROP_TB (IFLA_ALT_IFNAME + 1)
#define NLIF_TUN_TB (IFLA_TUN_MAX + 1)
#define NLIF_ADDR_TB (IFA_MAX + 1)
#define NLIF_ROUTE_TB (RTA_MAX + 1)
#define NLIF_LINKMODES_TB (ETHTOOL_A_LINKMODES_MAX + 1)
#define NLIF_CTRL_TB (CTRL_ATTR_MAX + 1)

/*
 * Validation rule for one attribute type. type MNL_TYPE_UNSPEC (the zero
 * value) means "not ours": such attributes are skipped unvalidated. For
 * MNL_TYPE_BINARY min_len/max_len bound the payload; for strings max_len
 * bounds the payload including its NUL. 0 = no bound.
 */
struct attr_policy {
	enum mnl_attr_data_type type;
	uint16_t min_len;
	uint16_t max_len;
};

static const struct attr_policy link_policy[NLIF_LINK_TB] = {
	[IFLA_ADDRESS] = { MNL_TYPE_BINARY, 0, NLIF_MAX_ADDR_LEN },
	[IFLA_IFNAME] = { MNL_TYPE_NUL_STRING, 0, IFNAMSIZ },
	[IFLA_MTU] = { MNL_TYPE_U32, 0, 0 },
	[IFLA_LINK] = { MNL_TYPE_U32, 0, 0 },
	[IFLA_MASTER] = { MNL_TYPE_U32, 0, 0 },
	[IFLA_OPERSTATE] = { MNL_TYPE_U8, 0, 0 },
	[IFLA_LINKINFO] = { MNL_TYPE_NESTED, 0, 0 },
	[IFLA_CARRIER] = { MNL_TYPE_U8, 0, 0 },
	[IFLA_LINK_NETNSID] = { MNL_TYPE_U32, 0, 0 },
	[IFLA_PROP_LIST] = { MNL_TYPE_NESTED, 0, 0 },
};

static const struct attr_policy linkinfo_policy[NLIF_LINKINFO_TB] = {
	[IFLA_INFO_KIND] = { MNL_TYPE_NUL_STRING, 0, 0 },
	[IFLA_INFO_DATA] = { MNL_TYPE_NESTED, 0, 0 },
	[IFLA_INFO_SLAVE_KIND] = { MNL_TYPE_NUL_STRING, 0, 0 },
};

static const struct attr_policy prop_policy[NLIF_PROP_TB] = {
	[IFLA_ALT_IFNAME] = { MNL_TYPE_NUL_STRING, 0, NLIF_ALTIFNAMSIZ },
};

static const struct attr_policy tun_policy[NLIF_TUN_TB] = {
	[IFLA_TUN_TYPE] = { MNL_TYPE_U8, 0, 0 },
};

static const struct attr_policy addr_policy[NLIF_ADDR_TB] = {
	[IFA_ADDRESS] = { MNL_TYPE_BINARY, 4, 16 },
	[IFA_LOCAL] = { MNL_TYPE_BINARY, 4, 16 },
	[IFA_LABEL] = { MNL_TYPE_NUL_STRING, 0, IFNAMSIZ },
	[IFA_FLAGS] = { MNL_TYPE_U32, 0, 0 },
};

static const struct attr_policy route_policy[NLIF_ROUTE_TB] = {
	[RTA_OIF] = { MNL_TYPE_U32, 0, 0 },
	[RTA_TABLE] = { MNL_TYPE_U32, 0, 0 },
};

static const struct attr_policy linkmodes_policy[NLIF_LINKMODES_TB] = {
	[ETHTOOL_A_LINKMODES_HEADER] = { MNL_TYPE_NESTED, 0, 0 },
	[ETHTOOL_A_LINKMODES_SPEED] = { MNL_TYPE_U32, 0, 0 },
};

static const struct attr_policy ctrl_policy[NLIF_CTRL_TB] = {
	[CTRL_ATTR_FAMILY_ID] = { MNL_TYPE_U16, 0, 0 },
	[CTRL_ATTR_FAMILY_NAME] = { MNL_TYPE_NUL_STRING, 0, GENL_NAMSIZ },
};

static int attr_check(const struct nlattr *a, const struct attr_policy *p)
{
	uint16_t plen = mnl_attr_get_payload_len(a);

	if (p->type == MNL_TYPE_BINARY) {
		if (plen < p->min_len || (p->max_len && plen > p->max_len))
			return -EBADMSG;
		return 0;
	}
	/* mnl_attr_validate: exact sizes for integers, NUL for NUL_STRING. */
	if (mnl_attr_validate(a, p->type) < 0)
		return -EBADMSG;
	if (p->max_len && plen > p->max_len)
		return -EBADMSG;
	return 0;
}

typedef int (*attr_each_fn)(const struct nlattr *a, void *arg);

/*
 * Walks the attributes in [data, data + len). Every attribute must lie fully
 * inside the region, and the region must end exactly after the last one (a
 * trailing fragment means truncation). Attributes the policy knows are
 * validated and stored in tb (the last duplicate wins, as in the kernel) and,
 * when each is set, passed to it in order; the rest are skipped.
 */
static int attr_walk(const void *data, size_t len, const struct attr_policy *pol,
		     uint16_t maxtype, const struct nlattr **tb, attr_each_fn each, void *arg)
{
	const struct nlattr *a = data;
	size_t rem = len;

	if (tb)
		memset(tb, 0, ((size_t)maxtype + 1) * sizeof(*tb));
	if (len > INT_MAX)
		return -EBADMSG;
	while (rem > 0) {
		uint16_t type;
		size_t step;
		int rc;

		if (!mnl_attr_ok(a, (int)rem))
			return -EBADMSG;
		type = mnl_attr_get_type(a);
		if (type <= maxtype && pol[type].type != MNL_TYPE_UNSPEC) {
			rc = attr_check(a, &pol[type]);
			if (rc < 0)
				return rc;
			if (tb)
				tb[type] = a;
			if (each) {
				rc = each(a, arg);
				if (rc < 0)
					return rc;
			}
		}
		/* The last attribute may legitimately lack its alignment padding. */
		step = MNL_ALIGN(a->nla_len);
		if (step > rem)
			step = rem;
		rem -= step;
		a = (const struct nlattr *)((const char *)a + step);
	}
	return 0;
}

/* Bounds the fixed header of a message and returns its attribute region. */
static int msg_attrs(const struct nlmsghdr *nlh, size_t fixed, const void **attrs, size_t *len)
{
	size_t hdr = MNL_ALIGN(fixed);

	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN || nlh->nlmsg_len - MNL_NLMSG_HDRLEN < hdr)
		return -EBADMSG;
	*attrs = (const char *)mnl_nlmsg_get_payload(nlh) + hdr;
	*len = nlh->nlmsg_len - MNL_NLMSG_HDRLEN - hdr;
	return 0;
}

static int nested_walk(const struct nlattr *nest, const struct attr_policy *pol, uint16_t maxtype,
		       const struct nlattr **tb, attr_each_fn each, void *arg)
{
	return attr_walk(mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest), pol, maxtype,
			 tb, each, arg);
}

/* Copies a validated NUL_STRING; returns -ENAMETOOLONG if it does not fit. */
static int copy_str(char *dst, size_t dstsz, const struct nlattr *a)
{
	const char *s = mnl_attr_get_str(a);
	size_t n = strnlen(s, mnl_attr_get_payload_len(a));

	if (n >= dstsz)
		return -ENAMETOOLONG;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

static int altname_add(const struct nlattr *a, void *arg)
{
	struct npf_iface *ifc = arg;

	if (ifc->n_altnames >= NPF_ALTNAMES_MAX)
		return 0;
	/* Too long for the model: skip it, a truncated name would be wrong. */
	if (copy_str(ifc->altnames[ifc->n_altnames], IFNAMSIZ, a) < 0)
		return 0;
	if (ifc->altnames[ifc->n_altnames][0] == '\0')
		return -EBADMSG;
	ifc->n_altnames++;
	return 0;
}

static const struct {
	const char *str;
	enum npf_kind kind;
} kind_map[] = {
	{ "bond", NPF_KIND_BOND },       { "team", NPF_KIND_TEAM },
	{ "vlan", NPF_KIND_VLAN },       { "macvlan", NPF_KIND_MACVLAN },
	{ "macvtap", NPF_KIND_MACVLAN }, { "ipvlan", NPF_KIND_IPVLAN },
	{ "ipvtap", NPF_KIND_IPVLAN },   { "bridge", NPF_KIND_BRIDGE },
	{ "veth", NPF_KIND_VETH },       { "tun", NPF_KIND_TUN },
	{ "vxlan", NPF_KIND_VXLAN },     { "geneve", NPF_KIND_GENEVE },
	{ "wireguard", NPF_KIND_WIREGUARD }, { "ipoib", NPF_KIND_IPOIB },
	{ "dummy", NPF_KIND_DUMMY },
};

enum npf_kind nlif_kind_from_str(const char *s)
{
	if (!*s)
		return NPF_KIND_UNKNOWN;
	for (size_t i = 0; i < sizeof(kind_map) / sizeof(kind_map[0]); i++)
		if (strcmp(s, kind_map[i].str) == 0)
			return kind_map[i].kind;
	return NPF_KIND_OTHER;
}

static int parse_linkinfo(const struct nlattr *nest, struct npf_iface *ifc)
{
	const struct nlattr *tb[NLIF_LINKINFO_TB];
	const struct nlattr *ttb[NLIF_TUN_TB];
	int rc;

	rc = nested_walk(nest, linkinfo_policy, IFLA_INFO_MAX, tb, NULL, NULL);
	if (rc < 0)
		return rc;
	if (!tb[IFLA_INFO_KIND])
		return 0;
	/* Kinds are short kernel identifiers; one too long is merely "other". */
	if (copy_str(ifc->kind_str, sizeof(ifc->kind_str), tb[IFLA_INFO_KIND]) < 0)
		snprintf(ifc->kind_str, sizeof(ifc->kind_str), "%s", mnl_attr_get_str(tb[IFLA_INFO_KIND]));
	ifc->kind = nlif_kind_from_str(ifc->kind_str);
	if (ifc->kind != NPF_KIND_TUN)
		return 0;
	/* "tun" covers both; the framing tells them apart when IFLA_TUN_TYPE is absent. */
	ifc->kind = ifc->arphrd == ARPHRD_ETHER ? NPF_KIND_TAP : NPF_KIND_TUN;
	if (!tb[IFLA_INFO_DATA])
		return 0;
	rc = nested_walk(tb[IFLA_INFO_DATA], tun_policy, IFLA_TUN_MAX, ttb, NULL, NULL);
	if (rc < 0)
		return rc;
	if (ttb[IFLA_TUN_TYPE]) {
		uint8_t t = mnl_attr_get_u8(ttb[IFLA_TUN_TYPE]);

		if (t == IFF_TUN)
			ifc->kind = NPF_KIND_TUN;
		else if (t == IFF_TAP)
			ifc->kind = NPF_KIND_TAP;
	}
	return 0;
}

int nlif_parse_link(const struct nlmsghdr *nlh, struct npf_iface *out)
{
	const struct nlattr *tb[NLIF_LINK_TB];
	const struct ifinfomsg *ifi;
	const void *attrs;
	size_t alen;
	int rc;

	memset(out, 0, sizeof(*out));
	if (nlh->nlmsg_type != RTM_NEWLINK)
		return -EINVAL;
	rc = msg_attrs(nlh, sizeof(*ifi), &attrs, &alen);
	if (rc < 0)
		return rc;
	ifi = mnl_nlmsg_get_payload(nlh);
	rc = attr_walk(attrs, alen, link_policy, IFLA_MAX, tb, NULL, NULL);
	if (rc < 0)
		goto err;
	rc = -EBADMSG;
	if (ifi->ifi_index <= 0 || !tb[IFLA_IFNAME])
		goto err;
	if (copy_str(out->name, sizeof(out->name), tb[IFLA_IFNAME]) < 0 || !out->name[0])
		goto err;
	out->ifindex = ifi->ifi_index;
	out->flags = ifi->ifi_flags;
	out->arphrd = ifi->ifi_type;
	out->carrier = -1;
	out->speed_mbps = NPF_SPEED_UNKNOWN;
	out->operstate = IF_OPER_UNKNOWN;
	if (tb[IFLA_OPERSTATE])
		out->operstate = mnl_attr_get_u8(tb[IFLA_OPERSTATE]);
	if (tb[IFLA_CARRIER])
		out->carrier = mnl_attr_get_u8(tb[IFLA_CARRIER]) ? 1 : 0;
	if (tb[IFLA_MTU])
		out->mtu = mnl_attr_get_u32(tb[IFLA_MTU]);
	if (tb[IFLA_ADDRESS]) {
		out->mac_len = (uint8_t)mnl_attr_get_payload_len(tb[IFLA_ADDRESS]);
		memcpy(out->mac, mnl_attr_get_payload(tb[IFLA_ADDRESS]), out->mac_len);
	}
	/* ifindexes are positive ints; anything above INT_MAX is corrupt. */
	if (tb[IFLA_MASTER]) {
		uint32_t m = mnl_attr_get_u32(tb[IFLA_MASTER]);

		if (m > INT_MAX)
			goto err;
		out->master = (int)m;
	}
	if (tb[IFLA_LINK]) {
		uint32_t l = mnl_attr_get_u32(tb[IFLA_LINK]);

		if (l > INT_MAX)
			goto err;
		out->link = (int)l;
	}
	out->link_netns = tb[IFLA_LINK_NETNSID] != NULL;
	if (tb[IFLA_LINKINFO]) {
		rc = parse_linkinfo(tb[IFLA_LINKINFO], out);
		if (rc < 0)
			goto err;
	}
	if (tb[IFLA_PROP_LIST]) {
		rc = nested_walk(tb[IFLA_PROP_LIST], prop_policy, IFLA_ALT_IFNAME, NULL,
				 altname_add, out);
		if (rc < 0)
			goto err;
	}
	return 0;
err:
	memset(out, 0, sizeof(*out));
	return rc;
}

int nlif_parse_addr(const struct nlmsghdr *nlh, int *ifindex, struct npf_addr *out)
{
	const struct nlattr *tb[NLIF_ADDR_TB];
	const struct nlattr *src;
	const struct ifaddrmsg *ifa;
	const void *attrs;
	size_t alen, want;
	uint32_t kflags;
	int rc;

	memset(out, 0, sizeof(*out));
	*ifindex = 0;
	if (nlh->nlmsg_type != RTM_NEWADDR)
		return -EINVAL;
	rc = msg_attrs(nlh, sizeof(*ifa), &attrs, &alen);
	if (rc < 0)
		return rc;
	ifa = mnl_nlmsg_get_payload(nlh);
	if (ifa->ifa_family == AF_INET)
		want = 4;
	else if (ifa->ifa_family == AF_INET6)
		want = 16;
	else
		return -EAFNOSUPPORT;
	rc = attr_walk(attrs, alen, addr_policy, IFA_MAX, tb, NULL, NULL);
	if (rc < 0)
		return rc;
	if (ifa->ifa_index == 0 || ifa->ifa_index > INT_MAX || ifa->ifa_prefixlen > want * 8)
		return -EBADMSG;
	if ((tb[IFA_LOCAL] && mnl_attr_get_payload_len(tb[IFA_LOCAL]) != want) ||
	    (tb[IFA_ADDRESS] && mnl_attr_get_payload_len(tb[IFA_ADDRESS]) != want))
		return -EBADMSG;
	/* On point-to-point links IFA_ADDRESS is the peer and IFA_LOCAL ours,
	 * in both families; without a peer the kernel may send only one. */
	src = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
	if (!src)
		return -EBADMSG;
	memcpy(out->addr, mnl_attr_get_payload(src), want);
	out->family = ifa->ifa_family;
	out->prefixlen = ifa->ifa_prefixlen;
	out->scope = ifa->ifa_scope;
	/* IFA_FLAGS extends the 8-bit field and wins when present. */
	kflags = tb[IFA_FLAGS] ? mnl_attr_get_u32(tb[IFA_FLAGS]) : ifa->ifa_flags;
	if (kflags & IFA_F_TENTATIVE)
		out->flags |= NPF_ADDR_TENTATIVE;
	if (kflags & IFA_F_DEPRECATED)
		out->flags |= NPF_ADDR_DEPRECATED;
	if (kflags & IFA_F_DADFAILED)
		out->flags |= NPF_ADDR_DADFAILED;
	if (kflags & IFA_F_PERMANENT)
		out->flags |= NPF_ADDR_PERMANENT;
	/* The same bit is IFA_F_SECONDARY on IPv4, which is not "temporary". */
	if (ifa->ifa_family == AF_INET6 && (kflags & IFA_F_TEMPORARY))
		out->flags |= NPF_ADDR_TEMPORARY;
	*ifindex = (int)ifa->ifa_index;
	return 0;
}

/* An RTM_NEWROUTE's attributes, its RTA_OIF in *oif (0 when absent). */
static int route_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb, int *oif)
{
	const void *attrs;
	size_t alen;
	uint32_t v;
	int rc;

	*oif = 0;
	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return -EINVAL;
	rc = msg_attrs(nlh, sizeof(struct rtmsg), &attrs, &alen);
	if (rc < 0)
		return rc;
	rc = attr_walk(attrs, alen, route_policy, RTA_MAX, tb, NULL, NULL);
	if (rc < 0)
		return rc;
	v = tb[RTA_OIF] ? mnl_attr_get_u32(tb[RTA_OIF]) : 0;
	if (v > INT_MAX)
		return -EBADMSG;
	*oif = (int)v;
	return 0;
}

int nlif_parse_route_oif(const struct nlmsghdr *nlh, int *oif)
{
	const struct nlattr *tb[NLIF_ROUTE_TB];
	int rc = route_attrs(nlh, tb, oif);

	if (rc < 0)
		return rc;
	return *oif ? 0 : -ENOENT;
}

int nlif_parse_default_oif(const struct nlmsghdr *nlh, int *oif)
{
	const struct nlattr *tb[NLIF_ROUTE_TB];
	const struct rtmsg *rtm;
	uint32_t table;
	int rc = route_attrs(nlh, tb, oif);

	if (rc < 0)
		return rc;
	rtm = mnl_nlmsg_get_payload(nlh);
	/* RTA_TABLE carries ids above 255, where rtm_table says RT_TABLE_COMPAT. */
	table = tb[RTA_TABLE] ? mnl_attr_get_u32(tb[RTA_TABLE]) : rtm->rtm_table;
	if (rtm->rtm_dst_len != 0 || rtm->rtm_type != RTN_UNICAST || table != RT_TABLE_MAIN ||
	    !*oif) {
		*oif = 0;
		return -ENOENT;
	}
	return 0;
}

int nlif_parse_ethtool_speed(const struct nlmsghdr *nlh, int64_t *mbps)
{
	const struct nlattr *tb[NLIF_LINKMODES_TB];
	const struct genlmsghdr *genl;
	const void *attrs;
	size_t alen;
	uint32_t v;
	int rc;

	*mbps = NPF_SPEED_UNKNOWN;
	if (nlh->nlmsg_type < NLMSG_MIN_TYPE || nlh->nlmsg_type == GENL_ID_CTRL)
		return -EINVAL;
	rc = msg_attrs(nlh, sizeof(*genl), &attrs, &alen);
	if (rc < 0)
		return rc;
	genl = mnl_nlmsg_get_payload(nlh);
	if (genl->cmd != ETHTOOL_MSG_LINKMODES_GET_REPLY)
		return -EINVAL;
	rc = attr_walk(attrs, alen, linkmodes_policy, ETHTOOL_A_LINKMODES_MAX, tb, NULL, NULL);
	if (rc < 0)
		return rc;
	if (!tb[ETHTOOL_A_LINKMODES_SPEED])
		return 0;
	v = mnl_attr_get_u32(tb[ETHTOOL_A_LINKMODES_SPEED]);
	/* SPEED_UNKNOWN is (u32)-1; the kernel never reports more than INT_MAX. */
	if (v != 0 && v <= INT_MAX)
		*mbps = v;
	return 0;
}

int nlif_parse_genl_family_id(const struct nlmsghdr *nlh, uint16_t *id)
{
	const struct nlattr *tb[NLIF_CTRL_TB];
	const struct genlmsghdr *genl;
	const void *attrs;
	size_t alen;
	int rc;

	*id = 0;
	if (nlh->nlmsg_type != GENL_ID_CTRL)
		return -EINVAL;
	rc = msg_attrs(nlh, sizeof(*genl), &attrs, &alen);
	if (rc < 0)
		return rc;
	genl = mnl_nlmsg_get_payload(nlh);
	if (genl->cmd != CTRL_CMD_NEWFAMILY)
		return -EINVAL;
	rc = attr_walk(attrs, alen, ctrl_policy, CTRL_ATTR_MAX, tb, NULL, NULL);
	if (rc < 0)
		return rc;
	if (!tb[CTRL_ATTR_FAMILY_ID] || mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]) < NLMSG_MIN_TYPE)
		return -ENOENT;
	*id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return 0;
}

int nlif_parse_sysfs_speed(const char *buf, size_t len, int64_t *mbps)
{
	char tmp[32];
	char *end;
	long long v;
	size_t n = 0;

	*mbps = NPF_SPEED_UNKNOWN;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\0'))
		len--;
	if (len == 0 || len >= sizeof(tmp))
		return -EINVAL;
	for (; n < len; n++) {
		if (!((buf[n] >= '0' && buf[n] <= '9') || (n == 0 && buf[n] == '-')))
			return -EINVAL;
		tmp[n] = buf[n];
	}
	tmp[n] = '\0';
	errno = 0;
	v = strtoll(tmp, &end, 10);
	if (errno || *end || end == tmp)
		return -EINVAL;
	/* Older kernels print SPEED_UNKNOWN unsigned, newer ones as -1. */
	if (v == -1 || v == 4294967295LL || v == 0)
		return 0;
	if (v < 0 || v > INT_MAX)
		return -EINVAL;
	*mbps = v;
	return 0;
}

static int cmp_ifindex(const void *a, const void *b)
{
	const struct npf_iface *x = a, *y = b;

	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

void nlif_inventory_sort(struct npf_inventory *inv)
{
	if (inv->n_ifaces > 1)
		qsort(inv->ifaces, inv->n_ifaces, sizeof(inv->ifaces[0]), cmp_ifindex);
}

/* Lookups stay logarithmic while the kernel hands out links in ifindex order,
 * which it does for dumps; anything else degrades to a linear scan. */
static struct npf_iface *find_iface(const struct npf_inventory *inv, int ifindex, bool sorted)
{
	struct npf_iface key = { .ifindex = ifindex };

	if (!inv->n_ifaces)
		return NULL;
	if (sorted)
		return bsearch(&key, inv->ifaces, inv->n_ifaces, sizeof(key), cmp_ifindex);
	return npf_inventory_find_ifindex(inv, ifindex);
}

static bool inventory_sorted(const struct npf_inventory *inv)
{
	for (size_t i = 1; i < inv->n_ifaces; i++)
		if (inv->ifaces[i - 1].ifindex >= inv->ifaces[i].ifindex)
			return false;
	return true;
}

/* NLMSG_ERROR (and a failed dump's NLMSG_DONE) carry an int errno. Callers
 * map the sign like mnlu_cb_error(): the kernel sends it negative. */
static int msg_errno(const struct nlmsghdr *nlh)
{
	int err;

	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(int))
		return nlh->nlmsg_type == NLMSG_DONE ? 0 : -EBADMSG;
	memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	if (err > 0)
		err = -err;
	if (err < -NLIF_MAX_ERRNO)
		return -EBADMSG;
	return err;
}

static int add_link(struct npf_inventory *inv, const struct nlmsghdr *nlh, bool *sorted)
{
	struct npf_iface ifc, *ex, *n;
	int rc;

	rc = nlif_parse_link(nlh, &ifc);
	if (rc < 0)
		return rc;
	ex = (*sorted && inv->n_ifaces && inv->ifaces[inv->n_ifaces - 1].ifindex < ifc.ifindex) ?
		     NULL :
		     find_iface(inv, ifc.ifindex, *sorted);
	if (ex) {
		/* A repeated link (re-dump, event after dump): newest state wins. */
		ifc.addrs = ex->addrs;
		ifc.n_addrs = ex->n_addrs;
		*ex = ifc;
		return 1;
	}
	n = realloc(inv->ifaces, (inv->n_ifaces + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	inv->ifaces = n;
	if (inv->n_ifaces && n[inv->n_ifaces - 1].ifindex > ifc.ifindex)
		*sorted = false;
	n[inv->n_ifaces++] = ifc;
	return 1;
}

bool nlif_msg_ok(const struct nlmsghdr *nlh, size_t len)
{
	/* mnl_nlmsg_ok() compares (int)nlmsg_len, so a length above INT_MAX
	 * passes it; the unsigned comparison closes that hole. */
	return len <= INT_MAX && mnl_nlmsg_ok(nlh, (int)len) && nlh->nlmsg_len <= len;
}

/* One pass over the buffer handling either links and control messages
 * (addrs false) or addresses (addrs true). */
static int dump_pass(const void *buf, int len, struct npf_inventory *inv, bool addrs, bool *sorted)
{
	const struct nlmsghdr *nlh = buf;
	int rem = len, rc, added = 0;

	while (rem > 0) {
		struct npf_iface *ifc;
		struct npf_addr a;
		int idx;

		if (!nlif_msg_ok(nlh, (size_t)rem))
			return -EBADMSG;
		/* Each pass handles only its own messages; control messages are
		 * checked by the link pass. */
		if ((nlh->nlmsg_type == RTM_NEWADDR || nlh->nlmsg_type == RTM_NEWROUTE) != addrs) {
			nlh = mnl_nlmsg_next(nlh, &rem);
			continue;
		}
		switch (nlh->nlmsg_type) {
		case NLMSG_ERROR:
		case NLMSG_DONE:
			rc = msg_errno(nlh);
			if (rc < 0)
				return rc;
			break;
		case RTM_NEWLINK:
			rc = add_link(inv, nlh, sorted);
			if (rc < 0)
				return rc;
			added += rc;
			break;
		case RTM_NEWADDR:
			rc = nlif_parse_addr(nlh, &idx, &a);
			if (rc == -EAFNOSUPPORT)
				break;
			if (rc < 0)
				return rc;
			/* No such link: it vanished between the two dumps. */
			ifc = find_iface(inv, idx, *sorted);
			if (!ifc)
				break;
			rc = npf_iface_add_addr(ifc, &a);
			if (rc < 0)
				return rc;
			added++;
			break;
		case RTM_NEWROUTE:
			/* The default route's interface marks the management network. */
			rc = nlif_parse_default_oif(nlh, &idx);
			if (rc == -ENOENT)
				break;
			if (rc < 0)
				return rc;
			ifc = find_iface(inv, idx, *sorted);
			if (ifc)
				ifc->default_route = true;
			break;
		default:
			/* NLMSG_NOOP, NLMSG_OVERRUN and anything not ours. */
			break;
		}
		nlh = mnl_nlmsg_next(nlh, &rem);
	}
	return added;
}

int nlif_parse_dump(const void *buf, size_t len, struct npf_inventory *inv)
{
	bool sorted = inventory_sorted(inv);
	int links, addrs;

	if (len > INT_MAX)
		return -EMSGSIZE;
	/* Links first, so that addresses find their link wherever it sits in
	 * the buffer and keep their dump order. */
	links = dump_pass(buf, (int)len, inv, false, &sorted);
	if (links < 0)
		return links;
	addrs = dump_pass(buf, (int)len, inv, true, &sorted);
	if (addrs < 0)
		return addrs;
	return links + addrs;
}
