// SPDX-License-Identifier: MIT
/* A model of ncclFindInterfaces() for one interface (the bootstrap's maxIfs = 1). */
#include "nccl_default.h"
#include "ncclmatch.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

static bool addr_is_v6_loopback(const struct npf_addr *a)
{
	static const uint8_t loop6[16] = { [15] = 1 };

	return a->family == AF_INET6 && memcmp(a->addr, loop6, sizeof(loop6)) == 0;
}

/* getifaddrs() returns the kernel's AF_UNSPEC address dump: all IPv4 addresses (per
 * device, ifindex order) before all IPv6 ones. The first matching entry is the pick. */
static int first_match(const struct npf_inventory *inv, int version, int family,
		       const struct ncclmatch_list *l, struct nccl_pick *out)
{
	static const int fams[] = { AF_INET, AF_INET6 };

	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		if (family && family != fams[f])
			continue;
		for (size_t i = 0; i < inv->n_ifaces; i++) {
			const struct npf_iface *ifc = &inv->ifaces[i];

			if (version >= NPF_NCCL_VERSION_RUNNING && !(ifc->flags & IFF_RUNNING))
				continue;
			if (!ncclmatch_ifname(l, ifc->name))
				continue;
			for (size_t a = 0; a < ifc->n_addrs; a++) {
				const struct npf_addr *ad = &ifc->addrs[a];

				if (ad->family != fams[f] || addr_is_v6_loopback(ad))
					continue;
				memset(out, 0, sizeof(*out));
				memcpy(out->ifname, ifc->name, sizeof(out->ifname));
				out->ifname[sizeof(out->ifname) - 1] = '\0';
				out->ifindex = ifc->ifindex;
				out->addr = *ad;
				return 0;
			}
		}
	}
	return -ENOENT;
}

static int try_list(const struct npf_inventory *inv, int version, int family, const char *list,
		    enum nccl_stage stage, struct nccl_pick *out)
{
	struct ncclmatch_list l;
	int r = ncclmatch_parse(list, NCCLMATCH_SOCKET, &l);

	if (r < 0)
		return r;
	r = first_match(inv, version, family, &l, out);
	if (r == 0) {
		out->stage = stage;
		out->list = list;
	}
	return r;
}

int nccl_default_pick(const struct npf_inventory *inv, int nccl_version, int family,
		      struct nccl_pick *out)
{
	/* The auto-selection order, nccl.md §1.2: virbr joined the exclusions and
	 * became the last resort in 2.28.3; before that it was an ordinary name. */
	static const struct {
		const char *list;
		enum nccl_stage stage;
		bool running_only; /* >= 2.28.3 */
		bool before_running_only;
	} stages[] = {
		{ "ib", NCCL_STAGE_IB, false, false },
		{ "^docker,lo", NCCL_STAGE_NOT_DOCKER, false, true },
		{ "^docker,lo,virbr", NCCL_STAGE_NOT_DOCKER, true, false },
		{ "docker", NCCL_STAGE_DOCKER, false, false },
		{ "lo", NCCL_STAGE_LO, false, false },
		{ "virbr", NCCL_STAGE_VIRBR, true, false },
	};
	int version = nccl_version > 0 ? nccl_version : NPF_NCCL_VERSION_CURRENT;
	bool new_order = version >= NPF_NCCL_VERSION_RUNNING;

	if (!inv || !out || (family && family != AF_INET && family != AF_INET6))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		int r;

		if ((stages[i].running_only && !new_order) ||
		    (stages[i].before_running_only && new_order))
			continue;
		r = try_list(inv, version, family, stages[i].list, stages[i].stage, out);
		if (r != -ENOENT)
			return r;
	}
	return -ENOENT;
}

int nccl_socket_pick(const struct npf_inventory *inv, int nccl_version, int family,
		     const char *socket_ifname, struct nccl_pick *out)
{
	int version = nccl_version > 0 ? nccl_version : NPF_NCCL_VERSION_CURRENT;

	if (!inv || !out || (family && family != AF_INET && family != AF_INET6))
		return -EINVAL;
	if (!socket_ifname || strlen(socket_ifname) <= 1)
		return nccl_default_pick(inv, version, family, out);
	return try_list(inv, version, family, socket_ifname, NCCL_STAGE_USER, out);
}
