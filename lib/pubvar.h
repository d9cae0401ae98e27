/* SPDX-License-Identifier: MIT */
/* The registry of published variables: one row per variable, read by the decision
 * (lib/publish.c runs each row's per-node rule, lib/jobwide.c its job-wide rule), by the
 * config ([publish] variables names and bits, derived from the rows) and by the docs. A new
 * variable is one row here.
 * docs/decision.md, "The variable registry", shows an example. */
#ifndef NPF_PUBVAR_H
#define NPF_PUBVAR_H

#include <stdint.h>

/* Who decides whether a variable may be published at all. */
enum npf_gate {
	NPF_GATE_VARIABLES = 0, /* its bit in [publish] variables */
	NPF_GATE_MASTER_ADDR,   /* [publish] master_addr */
	NPF_GATE_ALWAYS,        /* every environment carries it (the node marker) */
};

/* Whose variable it is (JSON "consumer", notes). */
enum npf_consumer {
	NPF_CONSUMER_NCCL = 0,
	NPF_CONSUMER_GLOO,
	NPF_CONSUMER_TENSORPIPE,
	NPF_CONSUMER_UCX,
	NPF_CONSUMER_OMPI,  /* Open MPI 4.1 btl/oob, Open MPI 5 btl */
	NPF_CONSUMER_PRRTE, /* Open MPI 5's runtime (PRRTE 3.x) */
	NPF_CONSUMER_TORCH, /* PyTorch's TCPStore rendezvous */
	NPF_CONSUMER_NETPREFLIGHT,
	NPF_CONSUMER__COUNT
};

/* How a job-wide value is formed from the nodes' per-node values: one function each in
 * lib/jobwide.c (jw_rules[]), as the per-node rule is one of lib/publish.c. */
enum npf_jw_rule {
	NPF_JW_SAME = 0,      /* the per-node value already holds on every node (family, flag) */
	NPF_JW_NCCL_IFNAMES,  /* "=a,b": union of the nodes' names, proven with NCCL's matcher */
	NPF_JW_NCCL_HCAS,     /* "=dev:port,...": one rail set on every node, proven likewise */
	NPF_JW_EXACT_UNION,   /* UCX: union of exact names, each node selecting exactly its own */
	NPF_JW_ONE_NAME,      /* Gloo, TensorPipe: one exact name that exists on every node */
	NPF_JW_OMPI,          /* IPv4: a prefix covering every node's address; else one name */
	NPF_JW_PER_NODE_GID,  /* a GID index: kept when every node's rails agree (jw_gid) */
	NPF_JW_NODE,          /* the marker: always this node's own name */
	NPF_JW_MASTER,        /* MASTER_ADDR: the first node's address, the same everywhere */
	NPF_JW__COUNT
};

/* Which consumer's address model proves an interface-name value (lib/consumer.h). */
enum npf_cmodel {
	NPF_CM_NONE = 0,
	NPF_CM_NCCL_SOCKET, /* ncclFindInterfaces, maxIfs = 1 (bootstrap, IB OOB) */
	NPF_CM_GLOO,        /* gloo tcp lookupAddrForIface */
	NPF_CM_TENSORPIPE,  /* tensorpipe uv lookupAddrForIface (UP+RUNNING) */
	NPF_CM_UCX_TCP,     /* ucs_netif_get_addr per UCX_TCP_AF_PRIO */
	NPF_CM_OMPI,        /* opal if_include split_and_resolve */
	NPF_CM__COUNT
};

/* X(id, name, gate, consumer, travels with, per-node rule, job-wide rule, consumer model,
 *   what the consumer does when it is unset)
 * Row order is output order. "travels with": the variable that must be published with
 * this one or neither is (NONE: none). The per-node rule is a function of lib/publish.c. */
#define NPF_VAR_TABLE(X)                                                                       \
	X(NCCL_SOCKET_IFNAME, "NCCL_SOCKET_IFNAME", VARIABLES,                                 \
	  NCCL, NCCL_SOCKET_FAMILY, rule_ifname, NCCL_IFNAMES, NCCL_SOCKET,                    \
	  "auto: ib, then ^docker,lo(,virbr); the first address of the first match")           \
	X(NCCL_SOCKET_FAMILY, "NCCL_SOCKET_FAMILY", VARIABLES,                                 \
	  NCCL, NCCL_SOCKET_IFNAME, rule_socket_family, SAME, NONE,                            \
	  "any family: IPv4 first in getifaddrs order")                                        \
	X(NCCL_IB_HCA, "NCCL_IB_HCA", VARIABLES, NCCL, NONE,                                   \
	  rule_rdma, NCCL_HCAS, NONE, "every ACTIVE IB/RoCE port")                             \
	X(NCCL_IB_DISABLE, "NCCL_IB_DISABLE", VARIABLES, NCCL,                                 \
	  NONE, rule_rdma, SAME, NONE, "IB transport on when any port is ACTIVE")              \
	X(NCCL_IB_GID_INDEX, "NCCL_IB_GID_INDEX", VARIABLES,                                   \
	  NCCL, NONE, rule_rdma, PER_NODE_GID, NONE,                                           \
	  ">= 2.21.5: auto per port; older: index 0")                                          \
	X(NCCL_IB_ADDR_FAMILY, "NCCL_IB_ADDR_FAMILY", VARIABLES, NCCL, NONE, rule_rdma, SAME, NONE, \
	  "AF_INET")                                                                           \
	X(NCCL_IB_ADDR_RANGE, "NCCL_IB_ADDR_RANGE", VARIABLES,                                 \
	  NCCL, NONE, rule_rdma, SAME, NONE, "any range")                                      \
	X(GLOO_SOCKET_IFNAME, "GLOO_SOCKET_IFNAME", VARIABLES,                                 \
	  GLOO, NONE, rule_ifname, ONE_NAME, GLOO,                                             \
	  "the hostname's address, often 127.0.1.1")                                           \
	X(TP_SOCKET_IFNAME, "TP_SOCKET_IFNAME", VARIABLES,                                     \
	  TENSORPIPE, NONE, rule_ifname, ONE_NAME, TENSORPIPE,                                 \
	  "the hostname's address, else 127.0.0.1")                                            \
	X(UCX_NET_DEVICES, "UCX_NET_DEVICES", VARIABLES, UCX,                                  \
	  NONE, rule_ucx_devices, EXACT_UNION, UCX_TCP, "all")                                 \
	X(UCX_IB_GID_INDEX, "UCX_IB_GID_INDEX", VARIABLES, UCX,                                \
	  NONE, rule_rdma, PER_NODE_GID, NONE, "auto: RoCE v2 IPv4 first")                     \
	X(OMPI_MCA_BTL_TCP_IF_INCLUDE, "OMPI_MCA_btl_tcp_if_include", VARIABLES, OMPI, NONE, rule_ompi, OMPI, OMPI, \
	  "every interface but 127.0.0.1/8 and sppp")                                          \
	X(OMPI_MCA_OOB_TCP_IF_INCLUDE, "OMPI_MCA_oob_tcp_if_include", VARIABLES, OMPI, NONE, rule_ompi, OMPI, OMPI, \
	  "every interface but vir* (and lo when others exist)")                               \
	X(PRTE_MCA_PRTE_IF_INCLUDE, "PRTE_MCA_prte_if_include", VARIABLES, PRRTE, NONE, rule_ompi, OMPI, OMPI, \
	  "every interface but vir*")                                                          \
	X(MASTER_ADDR, "MASTER_ADDR", MASTER_ADDR, TORCH, NONE, rule_master_addr, MASTER,      \
	  NONE, "none: the launcher sets it")                                                  \
	X(NETPREFLIGHT_NODE, "NETPREFLIGHT_NODE", ALWAYS, NETPREFLIGHT, NONE, rule_node,       \
	  NODE, NONE, "none")

/* Every variable we may publish, in output order. */
enum npf_var {
#define NPF_VAR_ENUM(id, name, gate, cons, with, rule, jw, model, unset) NPF_VAR_##id,
	NPF_VAR_TABLE(NPF_VAR_ENUM)
#undef NPF_VAR_ENUM
	NPF_VAR__COUNT,
	NPF_VAR_NONE = -1
};

/* [publish] variables: the bits of the variables operators may switch off (gate
 * VARIABLES), derived from the rows: a variable's bit is its row's position, so a new
 * variable brings its bit, its config name and "all" with it. */
enum npf_pubvar {
#define NPF_PUBVAR_BIT(id, name, gate, cons, with, rule, jw, model, unset)                         \
	NPF_PUBVAR_##id = NPF_GATE_##gate == NPF_GATE_VARIABLES ? 1u << NPF_VAR_##id : 0u,
	NPF_VAR_TABLE(NPF_PUBVAR_BIT)
#undef NPF_PUBVAR_BIT
#define NPF_PUBVAR_OR(id, name, gate, cons, with, rule, jw, model, unset) | NPF_PUBVAR_##id
	NPF_PUBVAR__ALL = 0u NPF_VAR_TABLE(NPF_PUBVAR_OR),
#undef NPF_PUBVAR_OR
};

_Static_assert(NPF_VAR__COUNT <= 31, "enum npf_pubvar holds one int bit per variable");

/* The variable's name ("NCCL_IB_HCA") for exactly one bit, else NULL. */
const char *npf_pubvar_name(enum npf_pubvar v);
/* The bit for an exact variable name of gate VARIABLES, or -EINVAL. */
int npf_pubvar_parse(const char *name);

struct npf_var_info {
	const char *name;      /* "NCCL_SOCKET_IFNAME" */
	enum npf_gate gate;
	uint32_t bit;          /* enum npf_pubvar (derived), 0 unless gate is NPF_GATE_VARIABLES */
	enum npf_consumer consumer;
	int with;              /* enum npf_var, or NPF_VAR_NONE */
	enum npf_jw_rule jw;
	enum npf_cmodel model;
	const char *unset;     /* the consumer's behaviour without it, for humans */
};

/* The row of v, or NULL for an out-of-range value. Borrowed, static. */
const struct npf_var_info *npf_var_info(enum npf_var v);

/* "NCCL_SOCKET_IFNAME", ...; NULL for an out-of-range value. */
const char *npf_var_name(enum npf_var v);

/* The variable named name, or -EINVAL. */
int npf_var_parse(const char *name);

/* "nccl" | "gloo" | "tensorpipe" | "ucx" | "openmpi" | "prrte" | "pytorch" | "netpreflight" */
const char *npf_consumer_name(enum npf_consumer c);

#endif
