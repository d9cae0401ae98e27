/* SPDX-License-Identifier: MIT */
/* Netlink I/O shell: rtnetlink and ethtool sockets feeding the nlif parsers. */
#ifndef NPF_SYS_NETLINK_H
#define NPF_SYS_NETLINK_H

#include "model.h"

/*
 * Snapshots the links and addresses of the calling thread's network namespace:
 * RTM_GETLINK dump, then RTM_GETADDR dump (AF_UNSPEC), restarting both when the
 * kernel flags NLM_F_DUMP_INTR (up to 3 restarts). Then per link: has_device
 * from <sysfs_root>/class/net/<if>/device, speed from ethtool netlink
 * (ETHTOOL_MSG_LINKMODES_GET) with <sysfs_root>/class/net/<if>/speed as
 * fallback (unknown stays NPF_SPEED_UNKNOWN), sort by ifindex, classify.
 * sysfs_root NULL means "/sys". Needs no privileges.
 *
 * On success replaces inv->ifaces/n_ifaces (freeing the old ones; the RDMA
 * fields are not touched) and returns the number of interfaces; inv owns the
 * result (npf_inventory_clear). On failure inv is unchanged and the return is
 * -errno: -EAGAIN when every restart was interrupted, -ETIMEDOUT when the
 * kernel did not answer, -ENOSPC for a truncated receive, or the kernel's
 * error.
 */
int nlsys_dump_ifaces(struct npf_inventory *inv, const char *sysfs_root);

/* Asks the kernel (RTM_GETROUTE) which interface a packet to dst leaves on,
 * in the calling thread's namespace. Returns 0 with *oif set, -EAFNOSUPPORT
 * for a family other than AF_INET/AF_INET6, or -errno (-ENETUNREACH etc.). */
int nlsys_route_get(const struct npf_addr *dst, int *oif);

/* A netlink socket kept for route lookups: a probe asks the kernel once per path, and the
 * hundreds of probes of a job start would otherwise open and close a socket each. On
 * success *out is owned by the caller (nlsys_routes_close()). Returns 0 or -errno. */
struct nlsys_routes;
int nlsys_routes_open(struct nlsys_routes **out);
/* nlsys_route_get() on r's socket (reopened after a failure that may have left it out of
 * step). Same returns. */
int nlsys_routes_get(struct nlsys_routes *r, const struct npf_addr *dst, int *oif);
/* Closes and frees; NULL-safe. */
void nlsys_routes_close(struct nlsys_routes *r);

/* Writes the raw receive buffers of one link dump followed by one address
 * dump to path (created or truncated, mode 0644), for replay through
 * nlif_parse_dump() (the .nl files in tests/fixtures/netlink). Returns the number of
 * bytes written or -errno; on failure path is removed. */
int nlsys_capture(const char *path);

#endif
