// SPDX-License-Identifier: MIT
/* nlif parsers: constructed rtnetlink/ethtool messages, malformed input, and
 * replay of a dump captured in a namespace (tests/fixtures/netlink). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

/* model.h pulls <net/if.h>, which must precede <linux/if.h>. */
#include "classify.h"
#include "model.h"
#include "nlif.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>


#define BUFSZ 8192

/* ---- message builders ------------------------------------------------- */

static struct nlmsghdr *link_msg(void *buf, int ifindex, const char *name, unsigned short arphrd,
				 unsigned int flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_MULTI;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	ifi->ifi_type = arphrd;
	ifi->ifi_flags = flags;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return nlh;
}

static void put_kind(struct nlmsghdr *nlh, const char *kind)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, IFLA_LINKINFO);

	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, kind);
	mnl_attr_nest_end(nlh, nest);
}

static void put_tun_kind(struct nlmsghdr *nlh, uint8_t tun_type)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, IFLA_LINKINFO), *data;

	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "tun");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	mnl_attr_put_u8(nlh, IFLA_TUN_TYPE, tun_type);
	mnl_attr_put_u8(nlh, IFLA_TUN_PI, 0);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, nest);
}

static struct nlmsghdr *addr_msg(void *buf, int family, int ifindex, const char *txt,
				 uint8_t prefixlen, uint8_t scope)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;
	uint8_t raw[16];

	nlh->nlmsg_type = RTM_NEWADDR;
	nlh->nlmsg_flags = NLM_F_MULTI;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (uint8_t)family;
	ifa->ifa_index = (uint32_t)ifindex;
	ifa->ifa_prefixlen = prefixlen;
	ifa->ifa_scope = scope;
	if (txt) {
		assert_int_equal(inet_pton(family, txt, raw), 1);
		mnl_attr_put(nlh, IFA_ADDRESS, family == AF_INET ? 4 : 16, raw);
	}
	return nlh;
}

static struct nlmsghdr *ctl_msg(void *buf, uint16_t type, int err)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	int *e;

	nlh->nlmsg_type = type;
	e = mnl_nlmsg_put_extra_header(nlh, type == NLMSG_ERROR ? sizeof(struct nlmsgerr) :
								    sizeof(int));
	*e = err;
	return nlh;
}

static struct nlmsghdr *genl_msg(void *buf, uint16_t type, uint8_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

/* Appends a copy of nlh to a dump buffer. */
static size_t dump_add(char *dump, size_t used, const struct nlmsghdr *nlh)
{
	size_t len = MNL_ALIGN(nlh->nlmsg_len);

	assert_true(used + len <= BUFSZ * 4);
	memcpy(dump + used, nlh, nlh->nlmsg_len);
	memset(dump + used + nlh->nlmsg_len, 0, len - nlh->nlmsg_len);
	return used + len;
}

/* ---- links ------------------------------------------------------------ */

static void link_veth_fields(void **state)
{
	char buf[BUFSZ];
	static const uint8_t mac[6] = { 0x02, 0x42, 0xac, 0x11, 0x00, 0x02 };
	struct nlmsghdr *nlh =
		link_msg(buf, 7, "veth1a2b", ARPHRD_ETHER, IFF_UP | IFF_RUNNING | IFF_LOWER_UP);
	struct npf_iface ifc;
	(void)state;

	mnl_attr_put_u32(nlh, IFLA_MTU, 1450);
	mnl_attr_put_u8(nlh, IFLA_OPERSTATE, IF_OPER_UP);
	mnl_attr_put_u8(nlh, IFLA_CARRIER, 1);
	mnl_attr_put(nlh, IFLA_ADDRESS, sizeof(mac), mac);
	mnl_attr_put_u32(nlh, IFLA_MASTER, 4);
	mnl_attr_put_u32(nlh, IFLA_LINK, 12);
	mnl_attr_put_u32(nlh, IFLA_LINK_NETNSID, 0);
	/* An attribute type beyond IFLA_MAX must be skipped, not rejected. */
	mnl_attr_put_u16(nlh, IFLA_MAX + 40, 0xbeef);
	put_kind(nlh, "veth");

	assert_int_equal(nlif_parse_link(nlh, &ifc), 0);
	assert_string_equal(ifc.name, "veth1a2b");
	assert_int_equal(ifc.ifindex, 7);
	assert_string_equal(ifc.kind_str, "veth");
	assert_int_equal(ifc.kind, NPF_KIND_VETH);
	assert_int_equal(ifc.mtu, 1450);
	assert_int_equal(ifc.operstate, IF_OPER_UP);
	assert_int_equal(ifc.carrier, 1);
	assert_int_equal(ifc.mac_len, 6);
	assert_memory_equal(ifc.mac, mac, 6);
	assert_int_equal(ifc.master, 4);
	assert_int_equal(ifc.link, 12);
	assert_true(ifc.link_netns);
	assert_int_equal(ifc.flags & (IFF_UP | IFF_RUNNING | IFF_LOWER_UP),
			 IFF_UP | IFF_RUNNING | IFF_LOWER_UP);
	assert_int_equal(ifc.arphrd, ARPHRD_ETHER);
	assert_int_equal(ifc.speed_mbps, NPF_SPEED_UNKNOWN);
	assert_false(ifc.has_device);
	assert_null(ifc.addrs);
}

static void link_defaults_without_optional_attrs(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh = link_msg(buf, 3, "eth9", ARPHRD_ETHER, 0);
	struct npf_iface ifc;
	(void)state;

	assert_int_equal(nlif_parse_link(nlh, &ifc), 0);
	assert_int_equal(ifc.carrier, -1);
	assert_int_equal(ifc.operstate, IF_OPER_UNKNOWN);
	assert_int_equal(ifc.kind, NPF_KIND_UNKNOWN);
	assert_string_equal(ifc.kind_str, "");
	assert_int_equal(ifc.master, 0);
	assert_int_equal(ifc.link, 0);
	assert_false(ifc.link_netns);
	assert_int_equal(ifc.mac_len, 0);
}

static void link_kinds(void **state)
{
	static const struct {
		const char *kind;
		enum npf_kind want;
	} cases[] = {
		{ "bridge", NPF_KIND_BRIDGE },   { "bond", NPF_KIND_BOND },
		{ "team", NPF_KIND_TEAM },       { "vlan", NPF_KIND_VLAN },
		{ "macvlan", NPF_KIND_MACVLAN }, { "macvtap", NPF_KIND_MACVLAN },
		{ "ipvlan", NPF_KIND_IPVLAN },   { "vxlan", NPF_KIND_VXLAN },
		{ "geneve", NPF_KIND_GENEVE },   { "wireguard", NPF_KIND_WIREGUARD },
		{ "ipoib", NPF_KIND_IPOIB },     { "dummy", NPF_KIND_DUMMY },
		{ "veth", NPF_KIND_VETH },       { "ifb", NPF_KIND_OTHER },
		{ "a-kind-name-longer-than-the-field", NPF_KIND_OTHER },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[BUFSZ];
		struct nlmsghdr *nlh = link_msg(buf, 10, "x0", ARPHRD_ETHER, 0);
		struct npf_iface ifc;

		put_kind(nlh, cases[i].kind);
		assert_int_equal(nlif_parse_link(nlh, &ifc), 0);
		assert_int_equal(ifc.kind, cases[i].want);
		/* Classification keeps a kind the link reported. */
		classify_iface(&ifc, NULL);
		assert_int_equal(ifc.kind, cases[i].want);
		assert_non_null(strstr(ifc.evidence, "kind="));
		assert_int_equal(strncmp(ifc.kind_str, cases[i].kind, sizeof(ifc.kind_str) - 1), 0);
	}
}

static void link_tun_vs_tap(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh;
	struct npf_iface ifc;
	(void)state;

	/* IFLA_TUN_TYPE decides even against the framing. */
	nlh = link_msg(buf, 5, "tun0", ARPHRD_ETHER, 0);
	put_tun_kind(nlh, IFF_TUN);
	assert_int_equal(nlif_parse_link(nlh, &ifc), 0);
	assert_int_equal(ifc.kind, NPF_KIND_TUN);
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.kind, NPF_KIND_TUN);

	nlh = link_msg(buf, 6, "tap0", ARPHRD_NONE, 0);
	put_tun_kind(nlh, IFF_TAP);
	assert_int_equal(nlif_parse_link(nlh, &ifc), 0);
	assert_int_equal(ifc.kind, NPF_KIND_TAP);
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.kind, NPF_KIND_TAP);
	assert_non_null(strstr(ifc.evidence, "tap"));

	/* Without IFLA_INFO_DATA the framing tells them apart. */
	nlh = link_msg(buf, 7, "tap1", ARPHRD_ETHER, 0);
	put_kind(nlh, "tun");
	assert_int_equal(nlif_parse_link(nlh, &ifc), 0);
	assert_int_equal(ifc.kind, NPF_KIND_TAP);
	nlh = link_msg(buf, 8, "tun1", ARPHRD_NONE, 0);
	put_kind(nlh, "tun");
	assert_int_equal(nlif_parse_link(nlh, &ifc), 0);
	assert_int_equal(ifc.kind, NPF_KIND_TUN);
}

static void link_kindless_classes(void **state)
{
	char buf[BUFSZ];
	struct npf_iface ifc;
	(void)state;

	assert_int_equal(nlif_parse_link(link_msg(buf, 1, "lo", ARPHRD_LOOPBACK,
						   IFF_UP | IFF_LOOPBACK), &ifc), 0);
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.kind, NPF_KIND_LOOPBACK);

	assert_int_equal(nlif_parse_link(link_msg(buf, 9, "ib0", ARPHRD_INFINIBAND, 0), &ifc), 0);
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.kind, NPF_KIND_IPOIB);
	assert_non_null(strstr(ifc.evidence, "INFINIBAND"));

	assert_int_equal(nlif_parse_link(link_msg(buf, 2, "enp1s0f0", ARPHRD_ETHER, 0), &ifc), 0);
	ifc.has_device = true;
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.kind, NPF_KIND_PHYSICAL);
	assert_non_null(strstr(ifc.evidence, "device"));

	/* No kind and no device seen: physical, but the evidence says it is weaker. */
	ifc.has_device = false;
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.kind, NPF_KIND_PHYSICAL);
	assert_non_null(strstr(ifc.evidence, "no sysfs device"));

	assert_int_equal(nlif_parse_link(link_msg(buf, 4, "sit0", ARPHRD_SIT, 0), &ifc), 0);
	classify_iface(&ifc, NULL);
	assert_int_equal(ifc.kind, NPF_KIND_UNKNOWN);
}

static void link_altnames(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	struct nlattr *nest = mnl_attr_nest_start(nlh, IFLA_PROP_LIST);
	struct npf_iface ifc;
	(void)state;

	mnl_attr_put_strz(nlh, IFLA_ALT_IFNAME, "enp3s0");
	/* 40 characters: legal (ALTIFNAMSIZ is 128) but does not fit the model. */
	mnl_attr_put_strz(nlh, IFLA_ALT_IFNAME, "enx0123456789abcdef0123456789abcdef01234");
	mnl_attr_put_strz(nlh, IFLA_ALT_IFNAME, "uplink");
	mnl_attr_put_strz(nlh, IFLA_ALT_IFNAME, "a3");
	mnl_attr_put_strz(nlh, IFLA_ALT_IFNAME, "a4");
	mnl_attr_put_strz(nlh, IFLA_ALT_IFNAME, "a5");
	mnl_attr_nest_end(nlh, nest);

	assert_int_equal(nlif_parse_link(nlh, &ifc), 0);
	assert_int_equal(ifc.n_altnames, NPF_ALTNAMES_MAX);
	assert_string_equal(ifc.altnames[0], "enp3s0");
	assert_string_equal(ifc.altnames[1], "uplink");
	assert_string_equal(ifc.altnames[2], "a3");
	assert_string_equal(ifc.altnames[3], "a4");
}

/* ---- malformed links -------------------------------------------------- */

static void link_rejects_bad_attrs(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh;
	struct npf_iface ifc;
	uint8_t junk[40] = { 0 };
	char noz[4] = { 'e', 't', 'h', '0' };
	(void)state;

	/* IFLA_MTU must be exactly a u32. */
	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	mnl_attr_put_u16(nlh, IFLA_MTU, 1500);
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);
	assert_string_equal(ifc.name, "");

	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	mnl_attr_put_u64(nlh, IFLA_OPERSTATE, 6);
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);

	/* Name without its NUL, name longer than IFNAMSIZ, empty name. */
	nlh = link_msg(buf, 2, NULL, ARPHRD_ETHER, 0);
	mnl_attr_put(nlh, IFLA_IFNAME, sizeof(noz), noz);
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);
	nlh = link_msg(buf, 2, "eth0-but-far-too-long", ARPHRD_ETHER, 0);
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);
	nlh = link_msg(buf, 2, "", ARPHRD_ETHER, 0);
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);

	/* Hardware address longer than MAX_ADDR_LEN. */
	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	mnl_attr_put(nlh, IFLA_ADDRESS, sizeof(junk), junk);
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);

	/* IFLA_INFO_KIND without NUL inside the nest. */
	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	{
		struct nlattr *nest = mnl_attr_nest_start(nlh, IFLA_LINKINFO);

		mnl_attr_put(nlh, IFLA_INFO_KIND, 4, "veth");
		mnl_attr_nest_end(nlh, nest);
	}
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);

	/* IFLA_TUN_TYPE as a u32. */
	nlh = link_msg(buf, 2, "tun0", ARPHRD_NONE, 0);
	{
		struct nlattr *nest = mnl_attr_nest_start(nlh, IFLA_LINKINFO), *data;

		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "tun");
		data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
		mnl_attr_put_u32(nlh, IFLA_TUN_TYPE, IFF_TUN);
		mnl_attr_nest_end(nlh, data);
		mnl_attr_nest_end(nlh, nest);
	}
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);

	/* IFLA_MASTER outside the ifindex range. */
	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	mnl_attr_put_u32(nlh, IFLA_MASTER, 0x80000000u);
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);
}

static void link_rejects_bad_headers(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh;
	struct npf_iface ifc;
	(void)state;

	/* No name at all, ifindex 0, another message type. */
	assert_int_equal(nlif_parse_link(link_msg(buf, 2, NULL, ARPHRD_ETHER, 0), &ifc), -EBADMSG);
	assert_int_equal(nlif_parse_link(link_msg(buf, 0, "eth0", ARPHRD_ETHER, 0), &ifc), -EBADMSG);
	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	nlh->nlmsg_type = RTM_DELLINK;
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EINVAL);

	/* nlmsg_len shorter than the ifinfomsg it must carry. */
	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 8;
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);
	nlh->nlmsg_len = 4;
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);
}

static void link_rejects_truncation(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh;
	struct nlattr *a;
	struct npf_iface ifc;
	(void)state;

	/* Last attribute claims more bytes than the message holds. */
	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, IFLA_MTU, 1500);
	a->nla_len = 64;
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);

	/* Message cut in the middle of an attribute header. */
	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	mnl_attr_put_u32(nlh, IFLA_MTU, 1500);
	nlh->nlmsg_len -= 6;
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);

	/* An attribute whose nla_len is below its own header. */
	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, IFLA_MTU, 1500);
	a->nla_len = 2;
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);

	/* A nested attribute truncated inside IFLA_LINKINFO. */
	nlh = link_msg(buf, 2, "eth0", ARPHRD_ETHER, 0);
	{
		struct nlattr *nest = mnl_attr_nest_start(nlh, IFLA_LINKINFO);

		a = mnl_nlmsg_get_payload_tail(nlh);
		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "bridge");
		mnl_attr_nest_end(nlh, nest);
		a->nla_len = 40;
	}
	assert_int_equal(nlif_parse_link(nlh, &ifc), -EBADMSG);

	/* The unpadded last attribute is fine (kernel pads, others may not). */
	nlh = link_msg(buf, 2, NULL, ARPHRD_ETHER, 0);
	mnl_attr_put(nlh, IFLA_IFNAME, 3, "ab");
	nlh->nlmsg_len -= 1;
	assert_int_equal(nlif_parse_link(nlh, &ifc), 0);
	assert_string_equal(ifc.name, "ab");
}

/* ---- addresses -------------------------------------------------------- */

static void addr_ipv4_ptp_takes_local(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh = addr_msg(buf, AF_INET, 4, "198.18.0.2", 32, RT_SCOPE_UNIVERSE);
	uint8_t local[4];
	struct npf_addr a;
	int idx;
	(void)state;

	inet_pton(AF_INET, "198.18.0.1", local);
	mnl_attr_put(nlh, IFA_LOCAL, 4, local);
	/* IFA_F_SECONDARY shares the bit with IFA_F_TEMPORARY: not temporary. */
	((struct ifaddrmsg *)mnl_nlmsg_get_payload(nlh))->ifa_flags = IFA_F_SECONDARY | IFA_F_PERMANENT;
	mnl_attr_put_strz(nlh, IFA_LABEL, "eth0:1");
	assert_int_equal(nlif_parse_addr(nlh, &idx, &a), 0);
	assert_int_equal(idx, 4);
	assert_int_equal(a.family, AF_INET);
	assert_int_equal(a.prefixlen, 32);
	assert_memory_equal(a.addr, local, 4);
	assert_int_equal(a.flags, NPF_ADDR_PERMANENT);
}

static void addr_ipv6_flags(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh = addr_msg(buf, AF_INET6, 3, "2001:db8::5", 64, RT_SCOPE_UNIVERSE);
	struct npf_addr a;
	uint8_t want[16];
	int idx;
	(void)state;

	/* IFA_FLAGS wins over the 8-bit field. */
	((struct ifaddrmsg *)mnl_nlmsg_get_payload(nlh))->ifa_flags = 0;
	mnl_attr_put_u32(nlh, IFA_FLAGS, IFA_F_TENTATIVE | IFA_F_DEPRECATED | IFA_F_TEMPORARY |
					 IFA_F_DADFAILED | IFA_F_MANAGETEMPADDR);
	assert_int_equal(nlif_parse_addr(nlh, &idx, &a), 0);
	inet_pton(AF_INET6, "2001:db8::5", want);
	assert_memory_equal(a.addr, want, 16);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(a.scope, RT_SCOPE_UNIVERSE);
	assert_int_equal(a.flags, NPF_ADDR_TENTATIVE | NPF_ADDR_DEPRECATED | NPF_ADDR_TEMPORARY |
					  NPF_ADDR_DADFAILED);

	nlh = addr_msg(buf, AF_INET6, 3, "fe80::1", 64, RT_SCOPE_LINK);
	((struct ifaddrmsg *)mnl_nlmsg_get_payload(nlh))->ifa_flags = IFA_F_PERMANENT;
	assert_int_equal(nlif_parse_addr(nlh, &idx, &a), 0);
	assert_int_equal(a.flags, NPF_ADDR_PERMANENT);
	assert_int_equal(a.scope, RT_SCOPE_LINK);
}

static void addr_rejects_bad(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh;
	struct npf_addr a;
	uint8_t raw[16] = { 0 };
	int idx;
	(void)state;

	/* Families we do not model are reported so callers can skip them. */
	nlh = addr_msg(buf, AF_INET, 3, NULL, 0, 0);
	((struct ifaddrmsg *)mnl_nlmsg_get_payload(nlh))->ifa_family = AF_PACKET;
	assert_int_equal(nlif_parse_addr(nlh, &idx, &a), -EAFNOSUPPORT);

	/* An IPv4 message carrying a 16-byte address. */
	nlh = addr_msg(buf, AF_INET, 3, NULL, 24, 0);
	mnl_attr_put(nlh, IFA_ADDRESS, 16, raw);
	assert_int_equal(nlif_parse_addr(nlh, &idx, &a), -EBADMSG);
	/* A 3-byte address: below every family's size. */
	nlh = addr_msg(buf, AF_INET, 3, NULL, 24, 0);
	mnl_attr_put(nlh, IFA_LOCAL, 3, raw);
	assert_int_equal(nlif_parse_addr(nlh, &idx, &a), -EBADMSG);
	/* Prefix longer than the address. */
	assert_int_equal(nlif_parse_addr(addr_msg(buf, AF_INET, 3, "198.18.0.1", 33, 0), &idx, &a),
			 -EBADMSG);
	assert_int_equal(nlif_parse_addr(addr_msg(buf, AF_INET6, 3, "2001:db8::1", 129, 0), &idx,
					 &a),
			 -EBADMSG);
	/* No address at all, no ifindex, wrong IFA_FLAGS size, wrong type. */
	assert_int_equal(nlif_parse_addr(addr_msg(buf, AF_INET, 3, NULL, 24, 0), &idx, &a),
			 -EBADMSG);
	assert_int_equal(nlif_parse_addr(addr_msg(buf, AF_INET, 0, "198.18.0.1", 24, 0), &idx, &a),
			 -EBADMSG);
	nlh = addr_msg(buf, AF_INET, 3, "198.18.0.1", 24, 0);
	mnl_attr_put_u8(nlh, IFA_FLAGS, 1);
	assert_int_equal(nlif_parse_addr(nlh, &idx, &a), -EBADMSG);
	nlh = addr_msg(buf, AF_INET, 3, "198.18.0.1", 24, 0);
	nlh->nlmsg_type = RTM_DELADDR;
	assert_int_equal(nlif_parse_addr(nlh, &idx, &a), -EINVAL);
	/* Too short for its ifaddrmsg. */
	nlh = addr_msg(buf, AF_INET, 3, "198.18.0.1", 24, 0);
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 4;
	assert_int_equal(nlif_parse_addr(nlh, &idx, &a), -EBADMSG);
}

/* ---- route, ethtool, genl, sysfs -------------------------------------- */

static struct nlmsghdr *route_msg(void *buf)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;
	uint8_t dst[4] = { 198, 18, 0, 2 };

	nlh->nlmsg_type = RTM_NEWROUTE;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = 32;
	rtm->rtm_table = RT_TABLE_MAIN;
	mnl_attr_put_u32(nlh, RTA_TABLE, RT_TABLE_MAIN);
	mnl_attr_put(nlh, RTA_DST, 4, dst);
	return nlh;
}

static void route_answer(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh;
	int oif;
	(void)state;

	nlh = route_msg(buf);
	mnl_attr_put_u32(nlh, RTA_OIF, 7);
	mnl_attr_put_u32(nlh, RTA_PRIORITY, 100);
	assert_int_equal(nlif_parse_route_oif(nlh, &oif), 0);
	assert_int_equal(oif, 7);

	nlh = route_msg(buf);
	assert_int_equal(nlif_parse_route_oif(nlh, &oif), -ENOENT);
	assert_int_equal(oif, 0);

	nlh = route_msg(buf);
	mnl_attr_put_u16(nlh, RTA_OIF, 7);
	assert_int_equal(nlif_parse_route_oif(nlh, &oif), -EBADMSG);

	nlh = route_msg(buf);
	mnl_attr_put_u32(nlh, RTA_OIF, 7);
	nlh->nlmsg_type = RTM_NEWLINK;
	assert_int_equal(nlif_parse_route_oif(nlh, &oif), -EINVAL);
}

/* A default route of the main table, as `ip route` dumps it. */
static struct nlmsghdr *default_route_msg(void *buf, int family, uint32_t oif)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;
	uint8_t gw[4] = { 198, 19, 0, 254 };

	nlh->nlmsg_type = RTM_NEWROUTE;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (unsigned char)family;
	rtm->rtm_dst_len = 0;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_type = RTN_UNICAST;
	rtm->rtm_protocol = RTPROT_DHCP;
	mnl_attr_put_u32(nlh, RTA_TABLE, RT_TABLE_MAIN);
	if (family == AF_INET)
		mnl_attr_put(nlh, RTA_GATEWAY, 4, gw);
	if (oif)
		mnl_attr_put_u32(nlh, RTA_OIF, oif);
	return nlh;
}

static void default_route(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh;
	int oif;
	(void)state;

	assert_int_equal(nlif_parse_default_oif(default_route_msg(buf, AF_INET, 3), &oif), 0);
	assert_int_equal(oif, 3);
	assert_int_equal(nlif_parse_default_oif(default_route_msg(buf, AF_INET6, 4), &oif), 0);
	assert_int_equal(oif, 4);
	/* Not a default route: a /32, another table, a blackhole, a multipath one (no OIF). */
	assert_int_equal(nlif_parse_default_oif(route_msg(buf), &oif), -ENOENT);
	nlh = route_msg(buf);
	mnl_attr_put_u32(nlh, RTA_OIF, 7);
	assert_int_equal(nlif_parse_default_oif(nlh, &oif), -ENOENT);
	assert_int_equal(oif, 0);
	nlh = default_route_msg(buf, AF_INET, 3);
	((struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_table = RT_TABLE_COMPAT;
	assert_int_equal(nlif_parse_default_oif(nlh, &oif), 0); /* RTA_TABLE says main */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWROUTE;
	{
		struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

		rtm->rtm_table = 100;
		rtm->rtm_type = RTN_UNICAST;
		mnl_attr_put_u32(nlh, RTA_OIF, 3);
		assert_int_equal(nlif_parse_default_oif(nlh, &oif), -ENOENT);
		rtm->rtm_table = RT_TABLE_MAIN;
		assert_int_equal(nlif_parse_default_oif(nlh, &oif), 0);
		rtm->rtm_type = RTN_BLACKHOLE;
		assert_int_equal(nlif_parse_default_oif(nlh, &oif), -ENOENT);
	}
	assert_int_equal(nlif_parse_default_oif(default_route_msg(buf, AF_INET, 0), &oif), -ENOENT);
	/* Malformed: a short OIF; another message type. */
	nlh = default_route_msg(buf, AF_INET, 0);
	mnl_attr_put_u16(nlh, RTA_OIF, 3);
	assert_int_equal(nlif_parse_default_oif(nlh, &oif), -EBADMSG);
	nlh = default_route_msg(buf, AF_INET, 3);
	nlh->nlmsg_type = RTM_NEWADDR;
	assert_int_equal(nlif_parse_default_oif(nlh, &oif), -EINVAL);
}

/* The dump marks the default route's link, whatever the order of its messages. */
static void dump_default_route(void **state)
{
	char buf[BUFSZ], dump[4 * BUFSZ];
	size_t len = 0;
	struct npf_inventory inv = { 0 };
	(void)state;

	len = dump_add(dump, len, default_route_msg(buf, AF_INET, 2));
	len = dump_add(dump, len, link_msg(buf, 2, "eno1", ARPHRD_ETHER, IFF_UP));
	len = dump_add(dump, len, link_msg(buf, 3, "ens1f0np0", ARPHRD_ETHER, IFF_UP));
	len = dump_add(dump, len, route_msg(buf));
	/* A default route through a link we do not have is dropped. */
	len = dump_add(dump, len, default_route_msg(buf, AF_INET6, 9));
	assert_int_equal(nlif_parse_dump(dump, len, &inv), 2);
	nlif_inventory_sort(&inv);
	assert_true(npf_inventory_find_name(&inv, "eno1")->default_route);
	assert_false(npf_inventory_find_name(&inv, "ens1f0np0")->default_route);
	npf_inventory_clear(&inv);

	/* A malformed route is a malformed dump. */
	len = dump_add(dump, 0, link_msg(buf, 2, "eno1", ARPHRD_ETHER, IFF_UP));
	mnl_attr_put_u16(default_route_msg(buf, AF_INET, 0), RTA_OIF, 2);
	len = dump_add(dump, len, (struct nlmsghdr *)buf);
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EBADMSG);
	npf_inventory_clear(&inv);
}

static void ethtool_speed(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	int64_t mbps;
	(void)state;

	nlh = genl_msg(buf, 27, ETHTOOL_MSG_LINKMODES_GET_REPLY);
	nest = mnl_attr_nest_start(nlh, ETHTOOL_A_LINKMODES_HEADER);
	mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, 2);
	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, "eth0");
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put_u8(nlh, ETHTOOL_A_LINKMODES_AUTONEG, 1);
	mnl_attr_put_u32(nlh, ETHTOOL_A_LINKMODES_SPEED, 100000);
	mnl_attr_put_u8(nlh, ETHTOOL_A_LINKMODES_DUPLEX, 1);
	assert_int_equal(nlif_parse_ethtool_speed(nlh, &mbps), 0);
	assert_int_equal(mbps, 100000);

	/* SPEED_UNKNOWN and 0 stay unknown; never guessed. */
	nlh = genl_msg(buf, 27, ETHTOOL_MSG_LINKMODES_GET_REPLY);
	mnl_attr_put_u32(nlh, ETHTOOL_A_LINKMODES_SPEED, 0xffffffffu);
	assert_int_equal(nlif_parse_ethtool_speed(nlh, &mbps), 0);
	assert_int_equal(mbps, NPF_SPEED_UNKNOWN);
	nlh = genl_msg(buf, 27, ETHTOOL_MSG_LINKMODES_GET_REPLY);
	mnl_attr_put_u32(nlh, ETHTOOL_A_LINKMODES_SPEED, 0);
	assert_int_equal(nlif_parse_ethtool_speed(nlh, &mbps), 0);
	assert_int_equal(mbps, NPF_SPEED_UNKNOWN);
	nlh = genl_msg(buf, 27, ETHTOOL_MSG_LINKMODES_GET_REPLY);
	assert_int_equal(nlif_parse_ethtool_speed(nlh, &mbps), 0);
	assert_int_equal(mbps, NPF_SPEED_UNKNOWN);

	nlh = genl_msg(buf, 27, ETHTOOL_MSG_LINKMODES_GET_REPLY);
	mnl_attr_put_u16(nlh, ETHTOOL_A_LINKMODES_SPEED, 1000);
	assert_int_equal(nlif_parse_ethtool_speed(nlh, &mbps), -EBADMSG);
	nlh = genl_msg(buf, 27, ETHTOOL_MSG_LINKINFO_GET_REPLY);
	assert_int_equal(nlif_parse_ethtool_speed(nlh, &mbps), -EINVAL);
	nlh = genl_msg(buf, NLMSG_ERROR, ETHTOOL_MSG_LINKMODES_GET_REPLY);
	assert_int_equal(nlif_parse_ethtool_speed(nlh, &mbps), -EINVAL);
	nlh = genl_msg(buf, 27, ETHTOOL_MSG_LINKMODES_GET_REPLY);
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 2;
	assert_int_equal(nlif_parse_ethtool_speed(nlh, &mbps), -EBADMSG);
}

static void genl_family(void **state)
{
	char buf[BUFSZ];
	struct nlmsghdr *nlh;
	uint16_t id;
	(void)state;

	nlh = genl_msg(buf, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, 27);
	mnl_attr_put_u32(nlh, CTRL_ATTR_VERSION, 1);
	assert_int_equal(nlif_parse_genl_family_id(nlh, &id), 0);
	assert_int_equal(id, 27);

	nlh = genl_msg(buf, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
	assert_int_equal(nlif_parse_genl_family_id(nlh, &id), -ENOENT);
	nlh = genl_msg(buf, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
	mnl_attr_put_u32(nlh, CTRL_ATTR_FAMILY_ID, 27);
	assert_int_equal(nlif_parse_genl_family_id(nlh, &id), -EBADMSG);
	nlh = genl_msg(buf, 27, CTRL_CMD_NEWFAMILY);
	assert_int_equal(nlif_parse_genl_family_id(nlh, &id), -EINVAL);
}

static void sysfs_speed(void **state)
{
	int64_t mbps;
	(void)state;

	assert_int_equal(nlif_parse_sysfs_speed("25000\n", 6, &mbps), 0);
	assert_int_equal(mbps, 25000);
	assert_int_equal(nlif_parse_sysfs_speed("10", 2, &mbps), 0);
	assert_int_equal(mbps, 10);
	assert_int_equal(nlif_parse_sysfs_speed("-1\n", 3, &mbps), 0);
	assert_int_equal(mbps, NPF_SPEED_UNKNOWN);
	assert_int_equal(nlif_parse_sysfs_speed("4294967295\n", 11, &mbps), 0);
	assert_int_equal(mbps, NPF_SPEED_UNKNOWN);
	assert_int_equal(nlif_parse_sysfs_speed("0\n", 2, &mbps), 0);
	assert_int_equal(mbps, NPF_SPEED_UNKNOWN);
	assert_int_equal(nlif_parse_sysfs_speed("", 0, &mbps), -EINVAL);
	assert_int_equal(nlif_parse_sysfs_speed("\n", 1, &mbps), -EINVAL);
	assert_int_equal(nlif_parse_sysfs_speed("fast\n", 5, &mbps), -EINVAL);
	assert_int_equal(nlif_parse_sysfs_speed("10 0", 4, &mbps), -EINVAL);
	assert_int_equal(nlif_parse_sysfs_speed("-5", 2, &mbps), -EINVAL);
	assert_int_equal(nlif_parse_sysfs_speed("99999999999", 11, &mbps), -EINVAL);
	assert_int_equal(mbps, NPF_SPEED_UNKNOWN);
	/* Not NUL-terminated: the length bounds the read. */
	assert_int_equal(nlif_parse_sysfs_speed("100000000", 3, &mbps), 0);
	assert_int_equal(mbps, 100);
}

/* ---- dumps ------------------------------------------------------------ */

static void dump_links_and_addrs_any_order(void **state)
{
	static char dump[BUFSZ * 4];
	char buf[BUFSZ];
	struct npf_inventory inv = { 0 };
	struct nlmsghdr *nlh;
	size_t len = 0;
	(void)state;

	/* Address before its link, links out of order, control messages mixed in. */
	len = dump_add(dump, len, addr_msg(buf, AF_INET, 5, "198.18.0.5", 24, 0));
	nlh = link_msg(buf, 5, "eth5", ARPHRD_ETHER, IFF_UP);
	put_kind(nlh, "macvlan");
	len = dump_add(dump, len, nlh);
	len = dump_add(dump, len, link_msg(buf, 2, "eth2", ARPHRD_ETHER, 0));
	len = dump_add(dump, len, ctl_msg(buf, NLMSG_DONE, 0));
	len = dump_add(dump, len, ctl_msg(buf, NLMSG_NOOP, 0));
	len = dump_add(dump, len, ctl_msg(buf, NLMSG_ERROR, 0));
	len = dump_add(dump, len, addr_msg(buf, AF_INET6, 2, "2001:db8::2", 64, 0));
	len = dump_add(dump, len, addr_msg(buf, AF_INET6, 5, "fe80::5", 64, RT_SCOPE_LINK));
	/* Vanished link: its address is dropped. */
	len = dump_add(dump, len, addr_msg(buf, AF_INET, 99, "198.18.9.9", 24, 0));
	/* A family we do not model is skipped. */
	nlh = addr_msg(buf, AF_INET, 2, NULL, 0, 0);
	((struct ifaddrmsg *)mnl_nlmsg_get_payload(nlh))->ifa_family = AF_MPLS;
	len = dump_add(dump, len, nlh);
	/* Routes are not ours. */
	nlh = route_msg(buf);
	len = dump_add(dump, len, nlh);

	assert_int_equal(nlif_parse_dump(dump, len, &inv), 5);
	assert_int_equal(inv.n_ifaces, 2);
	nlif_inventory_sort(&inv);
	assert_string_equal(inv.ifaces[0].name, "eth2");
	assert_string_equal(inv.ifaces[1].name, "eth5");
	assert_int_equal(inv.ifaces[0].n_addrs, 1);
	assert_int_equal(inv.ifaces[1].n_addrs, 2);
	assert_int_equal(inv.ifaces[1].addrs[0].family, AF_INET);
	assert_int_equal(inv.ifaces[1].kind, NPF_KIND_MACVLAN);

	/* A second buffer (the address dump of the shell) appends to inv; a
	 * repeated link replaces its entry and keeps the addresses. */
	len = 0;
	len = dump_add(dump, len, addr_msg(buf, AF_INET, 2, "198.18.0.2", 24, 0));
	nlh = link_msg(buf, 5, "eth5", ARPHRD_ETHER, IFF_UP | IFF_RUNNING);
	mnl_attr_put_u32(nlh, IFLA_MTU, 9000);
	len = dump_add(dump, len, nlh);
	assert_int_equal(nlif_parse_dump(dump, len, &inv), 2);
	assert_int_equal(inv.n_ifaces, 2);
	assert_int_equal(inv.ifaces[0].n_addrs, 2);
	assert_int_equal(inv.ifaces[1].mtu, 9000);
	assert_int_equal(inv.ifaces[1].n_addrs, 2);
	assert_true(inv.ifaces[1].flags & IFF_RUNNING);
	npf_inventory_clear(&inv);
	assert_int_equal(inv.n_ifaces, 0);

	assert_int_equal(nlif_parse_dump(dump, 0, &inv), 0);
}

static void dump_errors(void **state)
{
	static char dump[BUFSZ * 4];
	char buf[BUFSZ];
	struct npf_inventory inv = { 0 };
	struct nlmsghdr *nlh;
	size_t len;
	(void)state;

	/* NLMSG_ERROR with an errno: returned as -errno, either sign on the wire. */
	len = dump_add(dump, 0, link_msg(buf, 2, "eth2", ARPHRD_ETHER, 0));
	len = dump_add(dump, len, ctl_msg(buf, NLMSG_ERROR, -EPERM));
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EPERM);
	/* What was parsed before the error is kept and owned by inv. */
	assert_int_equal(inv.n_ifaces, 1);
	npf_inventory_clear(&inv);
	len = dump_add(dump, 0, ctl_msg(buf, NLMSG_ERROR, EPERM));
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EPERM);
	len = dump_add(dump, 0, ctl_msg(buf, NLMSG_ERROR, -100000));
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EBADMSG);

	/* NLMSG_ERROR too short to carry its errno. */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	len = dump_add(dump, 0, nlh);
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EBADMSG);

	/* A failed dump ends with NLMSG_DONE carrying the error. */
	len = dump_add(dump, 0, ctl_msg(buf, NLMSG_DONE, -EMSGSIZE));
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EMSGSIZE);
	/* An old-style empty NLMSG_DONE is fine. */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_DONE;
	len = dump_add(dump, 0, nlh);
	assert_int_equal(nlif_parse_dump(dump, len, &inv), 0);

	/* nlmsg_len larger than the buffer. */
	len = dump_add(dump, 0, link_msg(buf, 2, "eth2", ARPHRD_ETHER, 0));
	((struct nlmsghdr *)dump)->nlmsg_len = (uint32_t)len + 64;
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EBADMSG);
	assert_int_equal(inv.n_ifaces, 0);

	/* nlmsg_len above INT_MAX: libmnl's signed check alone would accept it. */
	((struct nlmsghdr *)dump)->nlmsg_len = 0xb3b3b3b3u;
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EBADMSG);
	assert_false(nlif_msg_ok((struct nlmsghdr *)dump, len));

	/* nlmsg_len below the header size. */
	((struct nlmsghdr *)dump)->nlmsg_len = 8;
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EBADMSG);

	/* Trailing bytes that are not a whole message. */
	len = dump_add(dump, 0, link_msg(buf, 2, "eth2", ARPHRD_ETHER, 0));
	memset(dump + len, 0xff, 8);
	assert_int_equal(nlif_parse_dump(dump, len + 8, &inv), -EBADMSG);
	npf_inventory_clear(&inv);

	/* A malformed link in the middle fails the buffer. */
	len = dump_add(dump, 0, link_msg(buf, 2, "eth2", ARPHRD_ETHER, 0));
	nlh = link_msg(buf, 3, "eth3", ARPHRD_ETHER, 0);
	mnl_attr_put_u16(nlh, IFLA_MTU, 1500);
	len = dump_add(dump, len, nlh);
	len = dump_add(dump, len, link_msg(buf, 4, "eth4", ARPHRD_ETHER, 0));
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EBADMSG);
	npf_inventory_clear(&inv);

	/* A malformed address too. */
	len = dump_add(dump, 0, link_msg(buf, 2, "eth2", ARPHRD_ETHER, 0));
	len = dump_add(dump, len, addr_msg(buf, AF_INET, 2, NULL, 24, 0));
	assert_int_equal(nlif_parse_dump(dump, len, &inv), -EBADMSG);
	npf_inventory_clear(&inv);
}

static void dump_many_links_sorted_lookup(void **state)
{
	static char dump[BUFSZ * 4];
	char buf[BUFSZ], name[IFNAMSIZ];
	struct npf_inventory inv = { 0 };
	size_t len = 0;
	(void)state;

	/* Ascending links, then addresses in reverse: exercises the sorted lookup. */
	for (int i = 1; i <= 100; i++) {
		snprintf(name, sizeof(name), "v%d", i);
		len = dump_add(dump, len, link_msg(buf, i * 3, name, ARPHRD_ETHER, 0));
	}
	for (int i = 100; i >= 1; i--) {
		char txt[32];

		snprintf(txt, sizeof(txt), "198.18.%d.1", i);
		len = dump_add(dump, len, addr_msg(buf, AF_INET, i * 3, txt, 24, 0));
	}
	assert_int_equal(nlif_parse_dump(dump, len, &inv), 200);
	for (size_t i = 0; i < inv.n_ifaces; i++) {
		assert_int_equal(inv.ifaces[i].n_addrs, 1);
		assert_int_equal(inv.ifaces[i].addrs[0].addr[2], inv.ifaces[i].ifindex / 3);
	}
	npf_inventory_clear(&inv);
}

/* ---- captured fixture ------------------------------------------------- */

static char *read_fixture(const char *name, size_t *len)
{
	char path[4096];
	FILE *f;
	char *buf;
	long sz;

	snprintf(path, sizeof(path), "%s/netlink/%s", NPF_FIXTURES, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	sz = ftell(f);
	assert_true(sz > 0);
	rewind(f);
	buf = malloc((size_t)sz);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*len = (size_t)sz;
	return buf;
}

static const struct npf_iface *must_find(const struct npf_inventory *inv, const char *name)
{
	const struct npf_iface *ifc = npf_inventory_find_name(inv, name);

	if (!ifc)
		fail_msg("interface %s missing from the fixture", name);
	return ifc;
}

static bool has_addr(const struct npf_iface *ifc, const char *txt, uint8_t prefixlen,
		     uint32_t flags)
{
	struct npf_addr want = { 0 };
	int fam = strchr(txt, ':') ? AF_INET6 : AF_INET;

	assert_int_equal(inet_pton(fam, txt, want.addr), 1);
	for (size_t i = 0; i < ifc->n_addrs; i++) {
		const struct npf_addr *a = &ifc->addrs[i];

		if (a->family == fam && a->prefixlen == prefixlen &&
		    memcmp(a->addr, want.addr, fam == AF_INET ? 4 : 16) == 0)
			return (a->flags & flags) == flags;
	}
	return false;
}

/* tests/fixtures/netlink/capture.sh made this namespace; see it for the setup. */
static void replay_captured_namespace(void **state)
{
	struct npf_inventory inv = { 0 };
	const struct npf_iface *ifc, *peer;
	size_t len;
	char *buf = read_fixture("ns-mixed.nl", &len);
	int rc;
	(void)state;

	rc = nlif_parse_dump(buf, len, &inv);
	assert_true(rc > 0);
	nlif_inventory_sort(&inv);
	classify_inventory(&inv);
	assert_int_equal(inv.n_ifaces, 14);
	for (size_t i = 1; i < inv.n_ifaces; i++)
		assert_true(inv.ifaces[i - 1].ifindex < inv.ifaces[i].ifindex);

	ifc = must_find(&inv, "lo");
	assert_int_equal(ifc->kind, NPF_KIND_LOOPBACK);
	assert_true(has_addr(ifc, "127.0.0.1", 8, 0));

	ifc = must_find(&inv, "npfnl-va");
	assert_int_equal(ifc->kind, NPF_KIND_VETH);
	assert_int_equal(ifc->roles, 0);
	assert_int_equal(ifc->n_altnames, 1); /* the long altname does not fit */
	assert_string_equal(ifc->altnames[0], "npfnl-uplink0");
	assert_true(has_addr(ifc, "198.18.0.1", 24, 0));
	assert_true(has_addr(ifc, "2001:db8:1::1", 64, 0));
	assert_true(has_addr(ifc, "2001:db8:1::99", 64, NPF_ADDR_DEPRECATED));
	assert_false(has_addr(ifc, "2001:db8:1::1", 64, NPF_ADDR_DEPRECATED));
	assert_int_equal(ifc->operstate, IF_OPER_UP);
	assert_true(ifc->flags & IFF_RUNNING);
	peer = npf_inventory_find_ifindex(&inv, ifc->link);
	assert_non_null(peer);
	assert_string_equal(peer->name, "npfnl-vb");
	assert_false(ifc->link_netns);
	assert_int_equal(peer->roles, NPF_ROLE_VIRTUAL_PORT | NPF_ROLE_LINK_LOCAL_ONLY);

	ifc = must_find(&inv, "docker0");
	assert_int_equal(ifc->kind, NPF_KIND_BRIDGE);
	assert_int_equal(ifc->roles, NPF_ROLE_CONTAINER_BRIDGE);
	assert_true(has_addr(ifc, "172.17.0.1", 16, NPF_ADDR_PERMANENT));
	assert_true(ifc->flags & IFF_RUNNING);
	assert_int_equal(ifc->operstate, IF_OPER_UP);
	peer = must_find(&inv, "vethdock0");
	assert_int_equal(peer->master, ifc->ifindex);
	assert_true(peer->roles & NPF_ROLE_VIRTUAL_PORT);
	assert_non_null(strstr(peer->evidence, "enslaved to docker0 (bridge)"));

	ifc = must_find(&inv, "br-0123456789ab");
	assert_int_equal(ifc->roles, NPF_ROLE_CONTAINER_BRIDGE);
	assert_int_equal(ifc->operstate, IF_OPER_DOWN);
	assert_false(ifc->flags & IFF_UP);
	assert_true(has_addr(ifc, "2001:db8:2::1", 64, NPF_ADDR_TENTATIVE));
	ifc = must_find(&inv, "br-lan");
	assert_int_equal(ifc->kind, NPF_KIND_BRIDGE);
	assert_int_equal(ifc->roles, 0);

	ifc = must_find(&inv, "npfnl-mv");
	assert_int_equal(ifc->kind, NPF_KIND_MACVLAN);
	assert_int_equal(ifc->link, must_find(&inv, "npfnl-va")->ifindex);
	assert_true(has_addr(ifc, "198.18.1.1", 24, 0));

	ifc = must_find(&inv, "vxlan.calico");
	assert_int_equal(ifc->kind, NPF_KIND_VXLAN);
	assert_int_equal(ifc->roles, NPF_ROLE_OVERLAY);

	ifc = must_find(&inv, "tun0");
	assert_int_equal(ifc->kind, NPF_KIND_TUN);
	assert_int_equal(ifc->roles, NPF_ROLE_VPN);
	assert_int_equal(ifc->carrier, 0);
	assert_int_equal(must_find(&inv, "npfnl-tap")->kind, NPF_KIND_TAP);

	ifc = must_find(&inv, "npfnl-ll");
	assert_true(ifc->roles & NPF_ROLE_LINK_LOCAL_ONLY);
	assert_true(has_addr(ifc, "169.254.10.1", 16, 0));

	npf_inventory_clear(&inv);
	free(buf);
}

/* Every prefix of a real capture either parses or fails cleanly. */
static void replay_truncated_capture(void **state)
{
	size_t len;
	char *buf = read_fixture("ns-mixed.nl", &len);
	int ok = 0, bad = 0;
	(void)state;

	for (size_t cut = 0; cut < len; cut += 3) {
		struct npf_inventory inv = { 0 };
		char *copy = malloc(cut ? cut : 1);
		int rc;

		/* A tight heap copy lets ASan catch any read past the end. */
		assert_non_null(copy);
		memcpy(copy, buf, cut);
		rc = nlif_parse_dump(copy, cut, &inv);
		if (rc >= 0)
			ok++;
		else if (rc == -EBADMSG)
			bad++;
		else
			fail_msg("cut at %zu: unexpected %d", cut, rc);
		classify_inventory(&inv);
		npf_inventory_clear(&inv);
		free(copy);
	}
	assert_true(ok > 0);
	assert_true(bad > 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(link_veth_fields),
		cmocka_unit_test(link_defaults_without_optional_attrs),
		cmocka_unit_test(link_kinds),
		cmocka_unit_test(link_tun_vs_tap),
		cmocka_unit_test(link_kindless_classes),
		cmocka_unit_test(link_altnames),
		cmocka_unit_test(link_rejects_bad_attrs),
		cmocka_unit_test(link_rejects_bad_headers),
		cmocka_unit_test(link_rejects_truncation),
		cmocka_unit_test(addr_ipv4_ptp_takes_local),
		cmocka_unit_test(addr_ipv6_flags),
		cmocka_unit_test(addr_rejects_bad),
		cmocka_unit_test(route_answer),
		cmocka_unit_test(default_route),
		cmocka_unit_test(dump_default_route),
		cmocka_unit_test(ethtool_speed),
		cmocka_unit_test(genl_family),
		cmocka_unit_test(sysfs_speed),
		cmocka_unit_test(dump_links_and_addrs_any_order),
		cmocka_unit_test(dump_errors),
		cmocka_unit_test(dump_many_links_sorted_lookup),
		cmocka_unit_test(replay_captured_namespace),
		cmocka_unit_test(replay_truncated_capture),
	};

	return npf_run_tests(tests, NULL, NULL);
}
