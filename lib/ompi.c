// SPDX-License-Identifier: MIT
/* What Open MPI sees of an interface: which addresses its interface scan lists, its
 * primary IPv4 address, strays beside the chosen network. */
#include "decide.h"

/* Would Open MPI's interface scan (opal/mca/if) list this address? Every IPv4 address of
 * an UP interface, link-local included; IPv6 only with global scope (not ::1, fe80::/10,
 * fec0::/10). */
bool dec_ompi_lists(const struct npf_addr *a)
{
	if (a->family == AF_INET)
		return true;
	if (a->family != AF_INET6 || npf_addr_is_local_only(a))
		return false;
	return !(a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0xc0) && a->addr[0] != 0xff;
}

/* An address Open MPI would use besides the chosen network when an interface is named:
 * if_include by name takes every address of it. Returns the first one, or NULL. */
const struct npf_addr *dec_ompi_stray(const struct npf_addr *addrs, size_t n, const struct net *net)
{
	for (size_t i = 0; i < n; i++)
		if (addr_valid(&addrs[i]) && dec_ompi_lists(&addrs[i]) && !in_net(&addrs[i], net))
			return &addrs[i];
	return NULL;
}

/* Open MPI sees one IPv4 address per interface, the primary one: 4.1's opal if framework
 * (opal/mca/if/posix_ipv4/if_posix.c, if_posix_open) lists interfaces with SIOCGIFCONF and
 * re-reads each one's address by name with SIOCGIFADDR, and 5's btl/tcp keeps the first
 * (mca_btl_tcp_create). A CIDR of a secondary subnet matches nothing there ("Did not find
 * interface matching this subnet") and the job falls back to every interface. */
const struct npf_addr *dec_ompi_primary(const struct npf_iface *ifc)
{
	for (size_t i = 0; i < ifc->n_addrs; i++)
		if (ifc->addrs[i].family == AF_INET)
			return &ifc->addrs[i];
	return NULL;
}

const struct npf_addr *dec_ompi_cand_primary(const struct npf_node *nd, const char *ifname)
{
	for (size_t j = 0; j < nd->n_cands; j++)
		if (nd->cands[j].addr.family == AF_INET &&
		    strncmp(nd->cands[j].ifname, ifname, IFNAMSIZ) == 0)
			return &nd->cands[j].addr;
	return NULL;
}
