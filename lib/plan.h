/* SPDX-License-Identifier: MIT */
/* Probe plan: which peers this node probes (full mesh, or a sparse circulant graph). */
#ifndef NPF_PLAN_H
#define NPF_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* Chooses the peers `self` probes among `nodes` (names; duplicates and empty
 * names are ignored, `self` may or may not appear). With at most full_mesh_max
 * distinct peers every peer is chosen. Above it the distinct names (self
 * included) are put on a ring in an order every node computes identically
 * (keyed hash of the name, ties by name); self then takes its two ring
 * neighbours and the nodes at +-d for k offsets d drawn deterministically from
 * the node count, so the plan is symmetric (a probes b iff b probes a), every
 * node is probed by >= 2 distinct nodes (when there are >= 3 nodes), and each
 * node probes at most 2k + 2 peers. See docs/protocol.md "Probe plan".
 * On success *idx_out is a malloc'd array owned by the caller (free()) of
 * indices into `nodes` (first occurrence of each chosen name), ascending; it
 * may be NULL when the count is 0. Returns the count or -EINVAL / -ENOMEM. */
int npf_plan_peers(const char *self, const char *const *nodes, size_t n, uint32_t full_mesh_max,
		   uint32_t k, size_t **idx_out, size_t *n_out);

/* The distinct non-empty names in nodes other than self (self may be NULL):
 * indices of their first occurrences, ascending. On success *idx_out is a
 * malloc'd array owned by the caller (free()). Returns the count or -EINVAL /
 * -ENOMEM. */
int npf_plan_distinct(const char *self, const char *const *nodes, size_t n, size_t **idx_out,
		      size_t *n_out);

/* Number of distinct non-empty names in nodes other than self (0 on failure). */
size_t npf_plan_count_peers(const char *self, const char *const *nodes, size_t n);

#endif
