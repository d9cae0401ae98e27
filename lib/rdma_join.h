/* SPDX-License-Identifier: MIT */
/* Joins RDMA ports to the netdevs behind them (RoCE GID ndevs, IPoIB GIDs). */
#ifndef NPF_RDMA_JOIN_H
#define NPF_RDMA_JOIN_H

#include "model.h"

/*
 * Pure join over one inventory snapshot (ifaces and rdma already filled):
 *  - RoCE (Ethernet) ports: port->netdev becomes the ndev of the first IPv4
 *    RoCE v2 GID that names one (the entry NCCL's automatic choice favours),
 *    else the first GID with any ndev; left as is when no GID names one.
 *    Every iface named by a GID ndev or port->netdev gets NPF_ROLE_RDMA, so a
 *    VLAN netdev carrying its own GIDs is marked too.
 *  - InfiniBand ports: an IPoIB iface (arphrd ARPHRD_INFINIBAND, 20-byte
 *    hardware address = 4 bytes flags/QPN + the 16-byte port GID) matches when
 *    bytes 4..19 equal the port's GID at index 0. All matches (P_Key child
 *    interfaces share the GID) get NPF_ROLE_RDMA; port->netdev is the one
 *    holding a non-link-local address (the child with the job's address, not its
 *    bare parent), then the one without a parent link (ifla link == 0), then the
 *    lowest ifindex.
 * Never allocates; ifaces that do not exist in inv are simply not marked.
 */
void rdma_join_netdevs(struct npf_inventory *inv);

/* True when ifc is an IPoIB netdev of IB port p (its hardware address carries p's GID 0);
 * the decision uses it to find the netdev that holds the probed address. */
bool rdma_join_is_ipoib_of(const struct npf_iface *ifc, const struct npf_rdma_port *p);

#endif
