// SPDX-License-Identifier: MIT
/* Probe inventory lookups: the daemon's current inventory, our interface holding an address,
 * the candidates we announce. Calls only lib/ (every probe/ module may use it). */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "candidates.h"

const struct npf_inventory *inventory_current(struct npf_probe_ctx *ctx)
{
	return ctx->inventory ? ctx->inventory(ctx->userdata) : NULL;
}

bool inventory_local_iface(struct npf_probe_ctx *ctx, const struct npf_addr *a,
			   char ifname[IFNAMSIZ])
{
	const struct npf_inventory *inv = inventory_current(ctx);

	ifname[0] = '\0';
	if (!inv)
		return false;
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		const struct npf_iface *ifc = &inv->ifaces[i];

		for (size_t j = 0; j < ifc->n_addrs; j++) {
			if (npf_addr_equal(&ifc->addrs[j], a)) {
				snprintf(ifname, IFNAMSIZ, "%s", ifc->name);
				return true;
			}
		}
	}
	return false;
}

int inventory_candidates(struct npf_probe_ctx *ctx, struct npf_candidate **cands, size_t *n_cands,
			 char (**ifnames)[IFNAMSIZ], size_t *n_ifnames)
{
	const struct npf_inventory *inv = inventory_current(ctx);
	char(*names)[IFNAMSIZ];
	size_t n = 0;
	int r;

	*cands = NULL;
	*n_cands = 0;
	*ifnames = NULL;
	*n_ifnames = 0;
	if (!inv)
		return 0;
	r = npf_candidates_from_inventory(inv, (const char *const *)ctx->exclude, ctx->n_exclude,
					  cands, n_cands);
	if (r < 0)
		return r;
	if (*n_cands > NPF_WIRE_MAX_CANDS)
		*n_cands = NPF_WIRE_MAX_CANDS;
	names = calloc(inv->n_ifaces + 1, sizeof(*names));
	if (!names) {
		free(*cands);
		*cands = NULL;
		*n_cands = 0;
		return -ENOMEM;
	}
	for (size_t i = 0; i < inv->n_ifaces && n < NPF_WIRE_MAX_IFNAMES; i++)
		snprintf(names[n++], IFNAMSIZ, "%s", inv->ifaces[i].name);
	*ifnames = names;
	*n_ifnames = n;
	return 0;
}
