/* SPDX-License-Identifier: MIT */
/* Pure rtnetlink / ethtool-netlink parsers: message bytes in, node model out. */
#ifndef NPF_NLIF_H
#define NPF_NLIF_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* True when a whole message with a sane nlmsg_len starts at nlh within len
 * bytes. Use it rather than bare mnl_nlmsg_ok(), which libmnl 1.0.4 lets pass
 * nlmsg_len values above INT_MAX. */
bool nlif_msg_ok(const struct nlmsghdr *nlh, size_t len);

/*
 * Every parser takes a message that the caller has already bounded with
 * nlif_msg_ok() against its buffer; nlif_parse_dump() does that itself.
 * Unknown attributes are skipped, known attributes with a wrong type or
 * length and truncated messages give -EBADMSG, and nothing is read past
 * nlh->nlmsg_len. No parser logs or allocates unless stated.
 */

/* RTM_NEWLINK -> *out (zeroed first; addrs stay NULL, speed unknown, kind
 * derived from IFLA_INFO_KIND and IFLA_TUN_TYPE only; classification is
 * classify_iface's job). Returns 0, -EINVAL for another message type or
 * -EBADMSG. Altnames that do not fit IFNAMSIZ, or beyond NPF_ALTNAMES_MAX,
 * are skipped rather than truncated (a cut name would name another link). */
int nlif_parse_link(const struct nlmsghdr *nlh, struct npf_iface *out);

/* RTM_NEWADDR -> *ifindex and *out. Takes IFA_LOCAL when present (IFA_ADDRESS
 * is the peer on point-to-point links), else IFA_ADDRESS. Returns 0, -EINVAL
 * for another message type, -EAFNOSUPPORT for families other than
 * AF_INET/AF_INET6 (callers skip those), or -EBADMSG. */
int nlif_parse_addr(const struct nlmsghdr *nlh, int *ifindex, struct npf_addr *out);

/* RTM_NEWROUTE (the answer to RTM_GETROUTE) -> RTA_OIF. Returns 0, -EINVAL
 * for another message type, -ENOENT when the route has no RTA_OIF, or
 * -EBADMSG. */
int nlif_parse_route_oif(const struct nlmsghdr *nlh, int *oif);

/* RTM_NEWROUTE of a dump -> RTA_OIF of a default route of the main table (destination
 * length 0, unicast). Returns 0, -ENOENT for any other route or one without RTA_OIF
 * (multipath), -EINVAL for another message type, or -EBADMSG. */
int nlif_parse_default_oif(const struct nlmsghdr *nlh, int *oif);

/* ETHTOOL_MSG_LINKMODES_GET_REPLY -> *mbps. The family id is dynamic, so only
 * the generic netlink command is checked. Absent, 0, SPEED_UNKNOWN or
 * out-of-range speeds give NPF_SPEED_UNKNOWN and still return 0; the speed is
 * never guessed. Returns 0, -EINVAL for another command or -EBADMSG. */
int nlif_parse_ethtool_speed(const struct nlmsghdr *nlh, int64_t *mbps);

/* CTRL_CMD_NEWFAMILY (answer to CTRL_CMD_GETFAMILY) -> CTRL_ATTR_FAMILY_ID.
 * Returns 0, -EINVAL for another command, -ENOENT without the id, or -EBADMSG. */
int nlif_parse_genl_family_id(const struct nlmsghdr *nlh, uint16_t *id);

/* Contents of sysfs class/net/<if>/speed -> *mbps. "-1", "4294967295" and 0
 * mean unknown (NPF_SPEED_UNKNOWN). Returns 0 or -EINVAL for text that is not
 * a number. */
int nlif_parse_sysfs_speed(const char *buf, size_t len, int64_t *mbps);

/* Walks a buffer of netlink messages (one receive buffer, or a capture that
 * concatenates a link dump and an address dump) and appends every link and
 * every AF_INET/AF_INET6 address to inv. Links and addresses may come in any
 * order within the buffer; an address is attached to a link already in inv
 * or parsed in the same call, else dropped (the link vanished between dumps).
 * A link whose ifindex is already in inv replaces that entry (addresses kept).
 * An RTM_NEWROUTE that is a main-table default route (nlif_parse_default_oif) sets
 * default_route on its link, if that link is in inv; other routes are skipped.
 * NLMSG_DONE, NLMSG_NOOP, acks and other message types are skipped;
 * NLMSG_DUMP_INTR is not checked here (the I/O shell restarts on it).
 * Returns the number of links and addresses added, the negative errno of an
 * NLMSG_ERROR message, -EBADMSG for a truncated or malformed message, or
 * -ENOMEM. On error inv keeps what was appended before it; inv owns all of it
 * (free with npf_inventory_clear). Does not sort: see nlif_inventory_sort. */
int nlif_parse_dump(const void *buf, size_t len, struct npf_inventory *inv);

/* Maps an IFLA_INFO_KIND string to the model: "" -> NPF_KIND_UNKNOWN, a kind
 * we do not model -> NPF_KIND_OTHER. "tun" gives NPF_KIND_TUN (tun and tap
 * share the kind string; nlif_parse_link tells them apart). */
enum npf_kind nlif_kind_from_str(const char *s);

/* Sorts inv->ifaces by ifindex (the model's invariant). */
void nlif_inventory_sort(struct npf_inventory *inv);

#endif
