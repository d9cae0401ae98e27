/* SPDX-License-Identifier: MIT */
/* One call that builds a complete node snapshot: netlink links/addresses, RDMA
 * devices (verbs, or a captured sysfs tree), and the join between them. */
#ifndef NPF_SYS_INVENTORY_H
#define NPF_SYS_INVENTORY_H

#include "model.h"

/* Fills *out (which must be zeroed) with a fresh snapshot. sysfs_root NULL or
 * "/sys" reads the live system; another directory is a captured tree (used for
 * the RDMA view and the sysfs fallbacks). On success the caller owns *out and
 * frees it with npf_inventory_clear(); on failure *out is left cleared.
 * A node without RDMA is not an error: the RDMA list is empty and
 * out->rdma_note says why. Returns 0 or -errno. */
int npf_inventory_collect(struct npf_inventory *out, const char *sysfs_root);

#endif
