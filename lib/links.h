/* SPDX-License-Identifier: MIT */
/* Per-(interface, peer) summary of a check's raw paths: what the recommendation reads. */
#ifndef NPF_LINKS_H
#define NPF_LINKS_H

#include "check.h"

/* Rebuilds chk->links from chk->nodes and chk->paths: one link per (distinct
 * interface among nodes[0].cands, peer 1..n_nodes-1), in candidate order then
 * peer order.
 *  - peer not in the plan (!probed) -> fwd = rev = not-probed; else peer
 *    unavailable -> peer-unavailable;
 *  - fwd = best forward outcome among paths whose kernel egress was this
 *    interface; when the peer has an address in one of this interface's subnets
 *    but the kernel sent the probe to it out of another interface, that path
 *    counts as wrong-egress here; with neither, unreachable ("node2 has no
 *    address on 198.18.3.0/24");
 *  - rev = best outcome among reverse paths to our addresses on the interface
 *    (not-probed when there are none).
 * "Best" is the lowest enum npf_outcome, then the lowest RTT. Any previous
 * chk->links is freed; the new array is owned by chk (npf_check_clear frees it).
 * Returns the number of links or -EINVAL / -ENOMEM (chk->links then empty). */
int npf_check_summarise(struct npf_check *chk);

#endif
