/* SPDX-License-Identifier: MIT */
/* A healthy N-node check as one node's sparse probe plan leaves it (for the verdict tests). */
#ifndef NPF_SPARSE_CHECK_H
#define NPF_SPARSE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "model.h"

/* Fills chk (and inv, when not NULL) as node1 of node1..node<n> sees a check in which every
 * node has one NIC, ens1f0, at 198.18.<i / 256>.<i % 256>/16 (i = 1..n), and every probed pair
 * works both ways. The peers come from npf_plan_peers(full_mesh_max, sparse_k = 4) exactly as
 * the probe engine plans them: the planned ones are available with ok links; the others are
 * what the engine reports for a peer it never contacted (available = false, probed = false,
 * an error, links not-probed both ways, no candidates). chk->sparse is set when the plan
 * left peers out. *n_planned (may be NULL) gets the number of planned peers.
 * The caller releases chk with npf_check_clear() and inv with npf_inventory_clear(), also
 * after an error. Returns 0, -EINVAL (n < 2) or -ENOMEM. */
int sparse_check_build(size_t n, uint32_t full_mesh_max, struct npf_check *chk,
		       struct npf_inventory *inv, size_t *n_planned);

#endif
