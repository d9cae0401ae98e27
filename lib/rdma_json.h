/* SPDX-License-Identifier: MIT */
/* JSON rendering of the RDMA part of an inventory (contract: docs/json.md). */
#ifndef NPF_RDMA_JSON_H
#define NPF_RDMA_JSON_H

#include <jansson.h>

#include "model.h"

/* Schema id and version of the `netpreflight rdma --json` document. Bump the
 * version on any incompatible change to the fields below. */
#define NPF_RDMA_JSON_SCHEMA "netpreflight.rdma"
#define NPF_RDMA_JSON_VERSION 1

/*
 * Returns {"note": string|null, "devices": [...]} for inv->rdma, field by
 * field as documented in docs/json.md ("netpreflight rdma --json"). Callers
 * embedding it elsewhere (daemon API) use it as is; the CLI adds "schema"
 * and "version". Returns NULL on allocation failure.
 * Ownership: a new reference; release with json_decref().
 */
json_t *npf_rdma_to_json(const struct npf_inventory *inv);

#endif
