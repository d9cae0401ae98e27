/* SPDX-License-Identifier: MIT */
/* RDMA collection: a narrow verbs backend interface, its libibverbs implementation, sysfs fallback. */
#ifndef NPF_SYS_RDMA_H
#define NPF_SYS_RDMA_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* What the backend reports, already normalised to our model's encodings. */
struct rdma_dev_info {
	uint64_t node_guid; /* host order */
	int phys_port_cnt;
	char node_type[16]; /* "CA", "switch", "RNIC", ... */
};

struct rdma_port_info {
	enum npf_port_state state;
	int phys_state;      /* -1 unknown */
	enum npf_link_layer link_layer;
	int active_speed;    /* RDMA_SPEED_* (rdma_sysfs.h), -1 unknown */
	int active_width;    /* RDMA_WIDTH_*, -1 unknown */
	int active_mtu;      /* bytes, 0 unknown */
	int gid_tbl_len;
};

/* One valid GID table entry (ibv_query_gid_table returns only those). */
struct rdma_gid_info {
	int port;  /* 1-based */
	int index;
	uint8_t raw[16];
	enum npf_gid_type type;
	char ndev[IFNAMSIZ]; /* "" when the entry has no netdev (IB) */
};

/*
 * A verbs-like backend. Every op gets the table itself first, so an
 * implementation that needs state embeds the table in a larger struct (the
 * test fake does) instead of using a global. All ops return 0 (or a count)
 * or -errno.
 */
struct rdma_ops {
	/* Device names, in the backend's order. *names is malloc'd (n entries);
	 * the caller frees it with free(). 0 devices is not an error. */
	int (*list)(const struct rdma_ops *ops, char (**names)[NPF_NAME_MAX]);
	/* Opens a device by name; *h is an opaque handle for the ops below. */
	int (*open)(const struct rdma_ops *ops, const char *name, void **h);
	int (*query_device)(const struct rdma_ops *ops, void *h, struct rdma_dev_info *out);
	/* port is 1..phys_port_cnt. */
	int (*query_port)(const struct rdma_ops *ops, void *h, int port,
			  struct rdma_port_info *out);
	/* All valid GID entries of every port, at most max; returns the count. */
	int (*query_gids)(const struct rdma_ops *ops, void *h, struct rdma_gid_info *out,
			  size_t max);
	/* Releases h; called exactly once per successful open. */
	int (*close)(const struct rdma_ops *ops, void *h);
};

/* The real backend over libibverbs (ibv_get_device_list, ibv_open_device,
 * ibv_query_device/port, ibv_query_gid_table, if_indextoname). */
extern const struct rdma_ops rdma_verbs_ops;

struct rdma_collect_opts {
	/* A captured tree to read instead of asking verbs; NULL or "/sys" means
	 * the live system through ops. */
	const char *sysfs_root;
	/* Backend; NULL = rdma_verbs_ops. */
	const struct rdma_ops *ops;
	/* Where to read a device verbs cannot open or query; NULL = "/sys".
	 * Tests point it at a fixture tree. */
	const char *fallback_root;
};

/*
 * Appends this node's RDMA devices to inv->rdma, then runs
 * gid_predict_inventory() on inv. With a captured sysfs_root only that tree is
 * read (rdma_sysfs_read). Otherwise each device the backend lists is opened
 * and queried (ports 1..phys_port_cnt, the GID table via query_gids); a device
 * that fails to open or to answer a query is read from fallback_root's sysfs
 * layout instead, and when that fails too it is left out and named in
 * inv->rdma_note. No devices at all is not an error: the list stays empty,
 * inv->rdma_note explains, 0 is returned.
 * Does not join netdevs (rdma_join_netdevs does, once ifaces are known).
 * Returns the number of devices appended or -errno (-ENOMEM; -ENOENT when a
 * captured sysfs_root does not exist); on error inv->rdma is unchanged.
 * Ownership: appended devices belong to inv (npf_inventory_clear).
 */
int npf_rdma_collect(struct npf_inventory *inv, const struct rdma_collect_opts *opts);

#endif
