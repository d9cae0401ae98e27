/* SPDX-License-Identifier: MIT */
/* This node's row of a job check: the decision's evidence as the wire message ROW. Kept
 * apart from lib/recommend.h so the decision does not depend on the wire codec. */
#ifndef NPF_JOBROW_H
#define NPF_JOBROW_H

#include <stddef.h>
#include <stdint.h>

#include "recommend.h"
#include "wire.h"

/* This node's row of the job's pair-state matrix (wire message ROW, docs/decision.md §10):
 * per network of the job's shared order that we hold an address on (at most
 * NPF_WIRE_MAX_ROW_NETS), the state of the pair (our best interface there, each node of
 * hostlist) through the same evaluation as npf_recommend(); a hostlist node missing from
 * chk is outside in a sparse plan, unknown otherwise. hostlist[0..n) is the job in order
 * and must name chk->nodes[0]; instance is this daemon's. On success out owns its states
 * (npf_wire_row_clear). Returns 0, -EINVAL or -ENOMEM (out left empty). */
int npf_recommend_row(const struct npf_inventory *inv, const struct npf_check *chk,
		      const struct npf_policy *pol, const char *const *hostlist, size_t n,
		      uint64_t instance, struct npf_msg_row *out);

#endif
