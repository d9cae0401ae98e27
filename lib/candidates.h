/* SPDX-License-Identifier: MIT */
/* Which addresses of a node are worth probing: the candidates announced in HELLO. */
#ifndef NPF_CANDIDATES_H
#define NPF_CANDIDATES_H

#include <stddef.h>

#include "check.h"
#include "model.h"

/* Builds one candidate per usable address: the interface is UP and RUNNING, is
 * not loopback, does not match any of the fnmatch(3) globs in exclude_globs
 * (matched against the name and its altnames), and the address is not
 * loopback/link-local (npf_addr_is_local_only) and did not fail DAD. RDMA
 * fields come from the first RDMA port whose netdev is this interface.
 * Candidates keep the inventory order (by ifindex, then address order).
 * On success *out is malloc'd and owned by the caller (free()); it may be NULL
 * when *n is 0. Returns the count (>= 0) or -ENOMEM / -EINVAL. */
int npf_candidates_from_inventory(const struct npf_inventory *inv, const char *const *exclude_globs,
				  size_t n_excl, struct npf_candidate **out, size_t *n);

/* True when a and b share family and the first `prefixlen` bits. */
bool npf_addr_same_subnet(const struct npf_addr *a, const struct npf_addr *b,
			  unsigned int prefixlen);

/* True when a and b are the same address (family and bytes; prefix ignored). */
bool npf_addr_equal(const struct npf_addr *a, const struct npf_addr *b);

#endif
