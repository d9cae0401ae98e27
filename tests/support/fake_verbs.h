/* SPDX-License-Identifier: MIT */
/* A table-driven fake of struct rdma_ops for exercising the verbs collection path. */
#ifndef NPF_FAKE_VERBS_H
#define NPF_FAKE_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include "rdma.h"

struct fake_gid {
	int port;
	int index;
	const char *gid; /* inet_pton AF_INET6 text */
	enum npf_gid_type type;
	const char *ndev; /* NULL = none */
};

struct fake_port {
	enum npf_port_state state;
	int phys_state;
	enum npf_link_layer link_layer;
	int speed, width, mtu;
	int gid_tbl_len;
};

struct fake_dev {
	const char *name;
	uint64_t node_guid;
	/* -errno each op returns for this device; 0 = succeed. */
	int open_err, query_device_err, query_port_err, query_gids_err;
	int nports; /* phys_port_cnt reported */
	struct fake_port ports[4];
	const struct fake_gid *gids; /* device-wide table, in any order */
	size_t n_gids;
};

/* What the fake saw, so tests can check handles were balanced. */
struct fake_counters {
	int lists, opens, closes, queries;
};

/* ops must stay the first member: the fake finds itself from the ops pointer. */
struct fake_verbs {
	struct rdma_ops ops;
	const struct fake_dev *devs;
	size_t n_devs;
	int list_err; /* -errno from list, 0 = succeed */
	struct fake_counters *cnt; /* optional */
};

/* Fills fv->ops and the table pointers; devs must outlive fv. Never fails. */
void fake_verbs_init(struct fake_verbs *fv, const struct fake_dev *devs, size_t n_devs,
		     struct fake_counters *cnt);

#endif
