// SPDX-License-Identifier: MIT
/* Glue: netlink dump + RDMA collection + the join that ties ports to netdevs. */
#include "inventory.h"

#include <stdio.h>
#include <string.h>

#include "classify.h"
#include "netlink.h"
#include "rdma.h"
#include "rdma_join.h"
#include "rdma_sysfs.h"

int npf_inventory_collect(struct npf_inventory *out, const char *sysfs_root)
{
	struct rdma_collect_opts ropts = { .sysfs_root = sysfs_root, .ops = NULL };
	int r;

	memset(out, 0, sizeof(*out));
	r = nlsys_dump_ifaces(out, sysfs_root);
	if (r < 0)
		goto err;
	/* RDMA trouble never hides the interfaces: it degrades to "no devices". */
	r = npf_rdma_collect(out, &ropts);
	if (r < 0) {
		const char *why = strerror(-r);

		snprintf(out->rdma_note, sizeof(out->rdma_note), "RDMA inventory failed: %s", why);
	}
	rdma_join_netdevs(out);
	/* Which devices are rails where GPUs are present; without a topology, no GPUs. */
	(void)rdma_sysfs_read_topology(sysfs_root, out);
	/* The join adds the RDMA role, which classification turns into evidence. */
	classify_inventory(out);
	return 0;
err:
	npf_inventory_clear(out);
	return r;
}
