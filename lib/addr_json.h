/* SPDX-License-Identifier: MIT */
/* An address in JSON, in each form the documents use (docs/json.md, docs/protocol.md). */
#ifndef NPF_ADDR_JSON_H
#define NPF_ADDR_JSON_H

#include <jansson.h>

#include "model.h"

enum npf_addr_json_form {
	NPF_ADDR_JSON_IP,     /* "192.0.2.1": the wire; a non-IP address is refused (NULL) */
	NPF_ADDR_JSON_CIDR,   /* "192.0.2.1/24": the check JSON; a non-IP address is null */
	NPF_ADDR_JSON_OBJECT, /* {"family","address","prefixlen","scope","flags"}: the inventory */
};

/* a in form. Returns a new reference (the caller owns it), or NULL when out of memory or
 * when the form refuses a non-IP address. */
json_t *npf_addr_json(const struct npf_addr *a, enum npf_addr_json_form form);

#endif
