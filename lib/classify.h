/* SPDX-License-Identifier: MIT */
/* Interface classification: kind and roles, each with human-readable evidence. */
#ifndef NPF_CLASSIFY_H
#define NPF_CLASSIFY_H

#include "model.h"

/*
 * Sets ifc->kind, ifc->roles and ifc->evidence from what the parsers and the
 * I/O shell filled in (kind_str, arphrd, flags, has_device, master, addrs).
 * inv supplies the master link (bridge/bond port detection); it may be NULL.
 * Idempotent. Rewrites evidence from scratch; the RDMA role and the
 * management role are not ours and are kept. Classification is evidence for
 * the decision, never a verdict: nothing is excluded here.
 *
 * Kind: IFLA_INFO_KIND wins ("tun" keeps the tun/tap split nlif_parse_link
 * made); without a kind: ARPHRD_LOOPBACK -> loopback, ARPHRD_INFINIBAND ->
 * IPoIB, sysfs device/ -> physical, ethernet framing -> physical (weaker,
 * said so in the evidence), else unknown.
 * Roles (primary name only, as NCCL matches only those):
 *   container bridge: docker*, br-<12 lower-case hex>, cni<digits>, podman*,
 *                     virbr*, lxcbr*
 *   overlay:          flannel*, cali*, cilium_*, vxlan.calico, weave
 *   VPN:              tailscale*, wg*, zt*, tun*, or kind wireguard
 *   link-local-only:  has addresses, all in 169.254/16 or fe80::/10
 *   virtual port:     a veth, or a port of a bridge/bond/team/openvswitch
 *                     master, that has no address beyond link-local/loopback
 *                     (a veth with a routable address is a real path, e.g.
 *                     between namespaces, so it keeps no such role)
 */
void classify_iface(struct npf_iface *ifc, const struct npf_inventory *inv);

/* classify_iface on every interface of inv. */
void classify_inventory(struct npf_inventory *inv);

/* Stable lower-case name of one role bit ("container-bridge", "overlay",
 * "vpn", "link-local-only", "virtual-port", "rdma", "management"); "unknown"
 * for anything else. Never NULL. */
const char *classify_role_name(enum npf_role r);

/* Writes the role names of a bit set joined by sep into buf (always
 * NUL-terminated, truncated to bufsz). Returns the number of roles written. */
int classify_roles_str(uint32_t roles, const char *sep, char *buf, size_t bufsz);

#endif
