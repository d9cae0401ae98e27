// SPDX-License-Identifier: MIT
/* Candidate selection from an inventory snapshot, plus small address predicates. */
#include "candidates.h"
#include "gid.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

bool npf_addr_equal(const struct npf_addr *a, const struct npf_addr *b)
{
	size_t len;

	if (a->family != b->family)
		return false;
	len = a->family == AF_INET ? 4 : 16;
	return memcmp(a->addr, b->addr, len) == 0;
}

bool npf_addr_same_subnet(const struct npf_addr *a, const struct npf_addr *b,
			  unsigned int prefixlen)
{
	unsigned int max, full, rest;

	if (a->family != b->family || (a->family != AF_INET && a->family != AF_INET6))
		return false;
	max = a->family == AF_INET ? 32 : 128;
	if (prefixlen > max)
		prefixlen = max;
	full = prefixlen / 8;
	rest = prefixlen % 8;
	if (memcmp(a->addr, b->addr, full) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));

		if ((a->addr[full] & mask) != (b->addr[full] & mask))
			return false;
	}
	return true;
}

static bool excluded(const struct npf_iface *ifc, const char *const *globs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!globs[i] || !*globs[i])
			continue;
		if (fnmatch(globs[i], ifc->name, 0) == 0)
			return true;
		for (int a = 0; a < ifc->n_altnames && a < NPF_ALTNAMES_MAX; a++)
			if (fnmatch(globs[i], ifc->altnames[a], 0) == 0)
				return true;
	}
	return false;
}

static bool iface_usable(const struct npf_iface *ifc)
{
	if ((ifc->flags & (IFF_UP | IFF_RUNNING)) != (IFF_UP | IFF_RUNNING))
		return false;
	if ((ifc->flags & IFF_LOOPBACK) || ifc->kind == NPF_KIND_LOOPBACK)
		return false;
	return strcmp(ifc->name, "lo") != 0;
}

static void fill_rdma(const struct npf_inventory *inv, const char *ifname, struct npf_candidate *c)
{
	for (size_t d = 0; d < inv->n_rdma; d++) {
		const struct npf_rdma_dev *dev = &inv->rdma[d];

		for (size_t p = 0; p < dev->n_ports; p++) {
			const struct npf_rdma_port *port = &dev->ports[p];

			if (!port->netdev[0] || strncmp(port->netdev, ifname, IFNAMSIZ) != 0)
				continue;
			snprintf(c->rdma_dev, sizeof(c->rdma_dev), "%s", dev->name);
			c->rdma_port = port->port;
			c->rdma_ll = port->link_layer;
			c->rdma_active = port->state == NPF_PORT_ACTIVE;
			if (port->link_layer == NPF_LL_ETHERNET) {
				int g = gid_index_of_addr(port, &c->addr);

				c->has_gid = g >= 0 && g <= UINT16_MAX;
				c->gid_index = c->has_gid ? (uint16_t)g : 0;
			}
			return;
		}
	}
}

int npf_candidates_from_inventory(const struct npf_inventory *inv, const char *const *exclude_globs,
				  size_t n_excl, struct npf_candidate **out, size_t *n)
{
	struct npf_candidate *arr = NULL;
	size_t count = 0, cap = 0;

	if (!inv || !out || !n || (n_excl && !exclude_globs))
		return -EINVAL;
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		const struct npf_iface *ifc = &inv->ifaces[i];

		if (!iface_usable(ifc) || excluded(ifc, exclude_globs, n_excl))
			continue;
		for (size_t a = 0; a < ifc->n_addrs; a++) {
			const struct npf_addr *ad = &ifc->addrs[a];
			struct npf_candidate *c;

			if ((ad->family != AF_INET && ad->family != AF_INET6) ||
			    npf_addr_is_local_only(ad) || (ad->flags & NPF_ADDR_DADFAILED))
				continue;
			if (count == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				struct npf_candidate *t = realloc(arr, ncap * sizeof(*t));

				if (!t) {
					free(arr);
					return -ENOMEM;
				}
				arr = t;
				cap = ncap;
			}
			c = &arr[count++];
			memset(c, 0, sizeof(*c));
			snprintf(c->ifname, sizeof(c->ifname), "%s", ifc->name);
			c->addr = *ad;
			c->kind = ifc->kind;
			c->roles = ifc->roles;
			c->mtu = ifc->mtu;
			c->speed_mbps = ifc->speed_mbps;
			fill_rdma(inv, ifc->name, c);
		}
	}
	*out = arr;
	*n = count;
	return (int)count;
}
