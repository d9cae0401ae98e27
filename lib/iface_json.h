/* SPDX-License-Identifier: MIT */
/* JSON rendering of the interface inventory (field names documented in docs/json.md). */
#ifndef NPF_IFACE_JSON_H
#define NPF_IFACE_JSON_H

#include <jansson.h>

#include "model.h"

/* Returns a new JSON array with one object per interface of inv, in inv order
 * (the "interfaces" array of `netpreflight interfaces --json`). The caller
 * owns the new reference (json_decref). NULL when out of memory. */
json_t *npf_ifaces_to_json(const struct npf_inventory *inv);

/* One interface as the object described in docs/json.md; inv resolves the
 * master and parent names and may be NULL. New reference or NULL on ENOMEM. */
json_t *npf_iface_to_json(const struct npf_iface *ifc, const struct npf_inventory *inv);

#endif
