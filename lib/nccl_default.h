/* SPDX-License-Identifier: MIT */
/* Predicts which interface NCCL's bootstrap would bind on this node, with no settings or
 * with a given NCCL_SOCKET_IFNAME, per NCCL version (nccl.md §1.2). */
#ifndef NPF_NCCL_DEFAULT_H
#define NPF_NCCL_DEFAULT_H

#include <stdint.h>

#include "model.h"

/* Same definitions as lib/config.h (identical redefinitions are legal C), so either
 * header can come first. Comparable version code: 2.21.5 -> 22105. "current" is
 * newer than any real version, so every ">= X" rule holds. */
#define NPF_NCCL_VERSION_CURRENT INT32_MAX
#define NPF_NCCL_VERSION(x, y, z) ((x) * 10000 + (y) * 100 + (z))
#define NPF_NCCL_VERSION_DYNAMIC_GID NPF_NCCL_VERSION(2, 21, 5) /* GID auto-detection */
#define NPF_NCCL_VERSION_RUNNING NPF_NCCL_VERSION(2, 28, 3)     /* IFF_RUNNING, virbr last */

/* Which list of ncclFindInterfaces produced the pick. */
enum nccl_stage {
	NCCL_STAGE_USER = 0,   /* NCCL_SOCKET_IFNAME */
	NCCL_STAGE_IB,         /* "ib" */
	NCCL_STAGE_NOT_DOCKER, /* "^docker,lo" (< 2.28.3) or "^docker,lo,virbr" */
	NCCL_STAGE_DOCKER,     /* "docker" */
	NCCL_STAGE_LO,         /* "lo" */
	NCCL_STAGE_VIRBR,      /* "virbr" (>= 2.28.3) */
};

struct nccl_pick {
	char ifname[IFNAMSIZ];
	int ifindex;
	struct npf_addr addr; /* the address NCCL would advertise and bind */
	enum nccl_stage stage;
	const char *list; /* the list that matched: a static string ("ib", "^docker,lo"), or
			   * for NCCL_STAGE_USER the caller's socket_ifname (borrowed) */
};

/* What NCCL's bootstrap (one interface) takes with no NCCL_SOCKET_IFNAME and no
 * NCCL_COMM_ID (that subnet path is not modelled). nccl_version <= 0 means
 * NPF_NCCL_VERSION_CURRENT; family is 0, AF_INET or AF_INET6 (NCCL_SOCKET_FAMILY).
 * Walks addresses in getifaddrs order: every IPv4 address in ifindex order, then every
 * IPv6 one; ::1 skipped, link-local kept; IFF_RUNNING required only from 2.28.3.
 * Returns 0 and fills out, -ENOENT when NCCL would find nothing, -EINVAL. */
int nccl_default_pick(const struct npf_inventory *inv, int nccl_version, int family,
		      struct nccl_pick *out);

/* Same, with NCCL_SOCKET_IFNAME = socket_ifname (NULL or a value of length <= 1 means
 * unset, i.e. nccl_default_pick). A set value has no fallback, as in NCCL. Returns 0,
 * -ENOENT, -EINVAL, or -ENAMETOOLONG for a token NCCL cannot hold. */
int nccl_socket_pick(const struct npf_inventory *inv, int nccl_version, int family,
		     const char *socket_ifname, struct nccl_pick *out);

#endif
