/* SPDX-License-Identifier: MIT */
/* The node model shared by every stage: interfaces, addresses, RDMA ports and GIDs. */
#ifndef NPF_MODEL_H
#define NPF_MODEL_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NPF_NAME_MAX 64     /* node names, verbs device names */
#define NPF_KIND_STR_MAX 24 /* IFLA_INFO_KIND strings ("veth", "macvlan") */
#define NPF_ALTNAMES_MAX 4
#define NPF_EVIDENCE_MAX 160
#define NPF_SPEED_UNKNOWN (-1)

/* What the link is, from IFLA_LINKINFO and sysfs. */
enum npf_kind {
	NPF_KIND_UNKNOWN = 0,
	NPF_KIND_PHYSICAL, /* backed by a device (sysfs device/ link or no kind + ether) */
	NPF_KIND_BOND,
	NPF_KIND_TEAM,
	NPF_KIND_VLAN,
	NPF_KIND_MACVLAN,
	NPF_KIND_IPVLAN,
	NPF_KIND_BRIDGE,
	NPF_KIND_VETH,
	NPF_KIND_TUN,
	NPF_KIND_TAP,
	NPF_KIND_VXLAN,
	NPF_KIND_GENEVE,
	NPF_KIND_WIREGUARD,
	NPF_KIND_IPOIB,
	NPF_KIND_LOOPBACK,
	NPF_KIND_DUMMY,
	NPF_KIND_OTHER, /* a kind string we do not model; kept in kind_str */
	NPF_KIND__COUNT
};

/* Roles are evidence for the decision, never a verdict on their own. */
enum npf_role {
	NPF_ROLE_CONTAINER_BRIDGE = 1u << 0, /* docker0, br-<12 hex>, cni0, podman*, virbr*, lxcbr* */
	NPF_ROLE_OVERLAY = 1u << 1,          /* flannel.*, cali*, cilium_*, vxlan.calico, weave */
	NPF_ROLE_VPN = 1u << 2,              /* tailscale*, wg*, zt*, tun* */
	NPF_ROLE_LINK_LOCAL_ONLY = 1u << 3,  /* no address beyond 169.254/16 or fe80::/10 */
	NPF_ROLE_VIRTUAL_PORT = 1u << 4,     /* veth end / enslaved port: carries no job traffic */
	NPF_ROLE_RDMA = 1u << 5,             /* netdev behind an RDMA port (IPoIB, RoCE) */
	NPF_ROLE_MANAGEMENT = 1u << 6,       /* reserved for operator policy */
};

/* IFA_F_* style flags we keep on addresses. */
enum npf_addr_flag {
	NPF_ADDR_TENTATIVE = 1u << 0,
	NPF_ADDR_DEPRECATED = 1u << 1,
	NPF_ADDR_TEMPORARY = 1u << 2,
	NPF_ADDR_DADFAILED = 1u << 3,
	NPF_ADDR_PERMANENT = 1u << 4,
};

struct npf_addr {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t prefixlen;
	uint8_t scope; /* RT_SCOPE_* */
	uint8_t _pad;
	uint32_t flags; /* enum npf_addr_flag */
	uint8_t addr[16]; /* network order; IPv4 in the first 4 bytes */
};

struct npf_iface {
	char name[IFNAMSIZ];
	int ifindex;
	char altnames[NPF_ALTNAMES_MAX][IFNAMSIZ];
	int n_altnames;
	char kind_str[NPF_KIND_STR_MAX]; /* IFLA_INFO_KIND verbatim, "" if none */
	enum npf_kind kind;
	uint32_t roles; /* enum npf_role bits */
	char evidence[NPF_EVIDENCE_MAX]; /* why kind/roles were assigned, for humans */
	unsigned int flags; /* IFF_* from ifi_flags (UP, RUNNING, LOWER_UP, ...) */
	uint8_t operstate;  /* IF_OPER_* */
	int carrier;        /* 1, 0, or -1 when unknown */
	uint32_t mtu;
	uint16_t arphrd;    /* ifi_type: ARPHRD_ETHER, ARPHRD_INFINIBAND, ... */
	uint8_t mac[32];
	uint8_t mac_len;
	int master;  /* ifindex of the bridge/bond we are enslaved to, 0 if none */
	int link;    /* IFLA_LINK: parent/lower ifindex (vlan, macvlan, veth peer), 0 if none */
	bool link_netns; /* IFLA_LINK refers to another namespace (veth peer) */
	bool has_device; /* sysfs device/ exists: a real NIC or VF */
	bool default_route; /* a main-table default route leaves here: the management network */
	int64_t speed_mbps; /* NPF_SPEED_UNKNOWN when nobody knows */
	struct npf_addr *addrs; /* owned by the iface, n_addrs entries */
	size_t n_addrs;
};

/* RDMA port state as in ibv_port_state / sysfs "4: ACTIVE". */
enum npf_port_state {
	NPF_PORT_NOP = 0,
	NPF_PORT_DOWN = 1,
	NPF_PORT_INIT = 2,
	NPF_PORT_ARMED = 3,
	NPF_PORT_ACTIVE = 4,
	NPF_PORT_ACTIVE_DEFER = 5,
};

enum npf_link_layer {
	NPF_LL_UNKNOWN = 0,
	NPF_LL_INFINIBAND,
	NPF_LL_ETHERNET,
};

enum npf_gid_type {
	NPF_GID_IB_ROCE_V1 = 0, /* "IB/RoCE v1": IB GIDs and RoCE v1 */
	NPF_GID_ROCE_V2,
	NPF_GID_TYPE_UNKNOWN,
};

struct npf_gid {
	int index;
	uint8_t raw[16];
	enum npf_gid_type type;
	char ndev[IFNAMSIZ]; /* "" when the slot has no netdev (IB) */
	bool is_ipv4;        /* ::ffff:a.b.c.d */
	uint8_t ipv4[4];
};

/* Per-port flags about GID choices that break QPs. */
enum npf_gid_warn {
	NPF_GIDW_AUTO_LINK_LOCAL = 1u << 0,   /* NCCL >= 2.21.5 auto lands on fe80:: */
	NPF_GIDW_AUTO_ROCE_V1 = 1u << 1,      /* ... or on a RoCE v1 entry */
	NPF_GIDW_LEGACY_LINK_LOCAL = 1u << 2, /* NCCL <= 2.20 index 0 is fe80:: */
	NPF_GIDW_LEGACY_ROCE_V1 = 1u << 3,    /* ... or RoCE v1 */
	NPF_GIDW_NO_IPV4_GID = 1u << 4,
	NPF_GIDW_AUTO_EMPTY = 1u << 5,        /* NCCL >= 2.21.5 auto lands on an unpopulated slot */
	NPF_GIDW_LEGACY_EMPTY = 1u << 6,      /* NCCL <= 2.20 index 0 is unpopulated (container) */
};

struct npf_rdma_port {
	int port; /* 1-based */
	enum npf_port_state state;
	int phys_state; /* 5 = LinkUp, 3 = Disabled, 2 = Polling, ... */
	enum npf_link_layer link_layer;
	char rate[48];      /* sysfs "rate" verbatim: "100 Gb/sec (4X EDR)" */
	int active_speed;   /* ibv_port_attr.active_speed, -1 unknown */
	int active_width;   /* ibv_port_attr.active_width, -1 unknown */
	int active_mtu;     /* bytes, 0 unknown */
	char netdev[IFNAMSIZ]; /* RoCE: from GID ndevs; IB: IPoIB match; "" unknown */
	struct npf_gid *gids; /* owned, n_gids entries, only populated slots */
	size_t n_gids;
	int nccl_auto_gid;   /* index NCCL >= 2.21.5 picks on its own, -1 n/a */
	int nccl_legacy_gid; /* index NCCL <= 2.20 uses (0), -1 n/a */
	uint32_t gid_warn;   /* enum npf_gid_warn bits */
	int gid_tbl_len;     /* slots in the port's GID table, populated or not; 0 unknown */
};

#define NPF_PCI_PATH_MAX 160

struct npf_rdma_dev {
	char name[NPF_NAME_MAX];
	uint64_t node_guid; /* host order */
	char node_type[16];
	/* Its PCI device under devices/ ("pci0000:00/0000:00:01.0/0000:05:00.0"), "" unknown;
	 * and whether NCCL's topology pairs a GPU with it (lib/rdma_topo.h; meaningful only
	 * when the inventory found GPUs). */
	char pci[NPF_PCI_PATH_MAX];
	bool gpu_rail;
	struct npf_rdma_port *ports; /* owned, n_ports entries */
	size_t n_ports;
};

/* A full snapshot of one node. Built whole, swapped whole, freed whole. */
struct npf_inventory {
	struct npf_iface *ifaces; /* owned, sorted by ifindex */
	size_t n_ifaces;
	struct npf_rdma_dev *rdma; /* owned */
	size_t n_rdma;
	size_t n_gpus; /* NVIDIA GPUs on the PCI bus (lib/rdma_topo.h), 0 none or unknown */
	char rdma_note[128]; /* "no RDMA devices (no /sys/class/infiniband)" etc. */
};

/* Frees everything an inventory owns and zeroes it; safe on a zeroed struct. */
void npf_inventory_clear(struct npf_inventory *inv);

/* Appends an address to iface->addrs. Returns 0 or -ENOMEM. */
int npf_iface_add_addr(struct npf_iface *iface, const struct npf_addr *a);

/* Frees iface->addrs; the iface itself is caller's. */
void npf_iface_clear(struct npf_iface *iface);

/* Frees ports and gids of a device; the device itself is caller's. */
void npf_rdma_dev_clear(struct npf_rdma_dev *dev);

/* Lookups; return a borrowed pointer into inv or NULL. */
struct npf_iface *npf_inventory_find_ifindex(const struct npf_inventory *inv, int ifindex);
struct npf_iface *npf_inventory_find_name(const struct npf_inventory *inv, const char *name);

/* Stable names for enums, used by human and JSON output. Never NULL. */
const char *npf_kind_name(enum npf_kind k);
const char *npf_port_state_name(enum npf_port_state s);
const char *npf_link_layer_name(enum npf_link_layer ll);
const char *npf_gid_type_name(enum npf_gid_type t);
const char *npf_operstate_name(uint8_t operstate);

/* Formats an address as "a.b.c.d" or IPv6 text (no prefix) into buf.
 * Returns buf. bufsz must be >= INET6_ADDRSTRLEN. */
char *npf_addr_str(const struct npf_addr *a, char *buf, size_t bufsz);

/* True when the address is 127/8, ::1, 169.254/16 or fe80::/10. */
bool npf_addr_is_local_only(const struct npf_addr *a);

#endif
