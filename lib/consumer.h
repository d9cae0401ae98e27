/* SPDX-License-Identifier: MIT */
/* Consumer address models: for "interface X" (or NCCL's list grammar), the address each
 * consumer binds or advertises on this node, modelled from its source (the functions are
 * cited per model in lib/consumer.c; facts in ../shared/reference/consumers.md). The
 * decision publishes an interface variable only when this address passed the probes. */
#ifndef NPF_CONSUMER_H
#define NPF_CONSUMER_H

#include "model.h"
#include "pubvar.h"

struct npf_cmodel_query {
	const char *value; /* the variable's value: "=ens1f0" for NCCL, "ens1f0" otherwise */
	int family;	   /* NCCL_SOCKET_FAMILY: 0, AF_INET or AF_INET6 */
	int nccl_version;  /* <= 0: current */
};

/* The address model m's consumer uses on inv for q. Returns 0 and fills *ifname (may be
 * NULL) and *out; -ENOENT when the consumer would find no address: NCCL and Gloo then
 * fail, TensorPipe falls back to 127.0.0.1 (the caller says so); -EINVAL for a model
 * without an address rule (NPF_CM_NONE, NPF_CM_OMPI: it selects by CIDR) or bad input.
 * The inventory's per-interface address order is the kernel's dump order, which is
 * getifaddrs() order: every IPv4 address (primary first) before every IPv6 one. */
int npf_cmodel_addr(enum npf_cmodel m, const struct npf_inventory *inv,
		    const struct npf_cmodel_query *q, char ifname[IFNAMSIZ], struct npf_addr *out);

/* "nccl-socket" | "gloo" | "tensorpipe" | "ucx-tcp" | "openmpi" | "none" */
const char *npf_cmodel_name(enum npf_cmodel m);

/* The consumer function the model follows, for notes: "ncclFindInterfaces". */
const char *npf_cmodel_function(enum npf_cmodel m);

#endif
