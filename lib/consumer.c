// SPDX-License-Identifier: MIT
/* The consumer address models (lib/consumer.h), one function per consumer. */
#include "consumer.h"
#include "nccl_default.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* The first address of name in getifaddrs order, AF_INET before AF_INET6, skipping what
 * skip() rejects. Interfaces hold their addresses in dump order, so "first IPv4 of the
 * interface, else its first IPv6" is the getifaddrs walk for one name. */
static const struct npf_addr *first_addr(const struct npf_iface *ifc, int family,
					 bool (*skip)(const struct npf_addr *a))
{
	static const int fams[] = {AF_INET, AF_INET6};

	for (size_t f = 0; f < 2; f++) {
		if (family && family != fams[f])
			continue;
		for (size_t i = 0; i < ifc->n_addrs; i++)
			if (ifc->addrs[i].family == fams[f] && !(skip && skip(&ifc->addrs[i])))
				return &ifc->addrs[i];
	}
	return NULL;
}

static bool up_running(const struct npf_iface *ifc)
{
	return (ifc->flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING);
}

static int found(const struct npf_iface *ifc, const struct npf_addr *a, char ifname[IFNAMSIZ],
		 struct npf_addr *out)
{
	if (!a)
		return -ENOENT;
	if (ifname)
		snprintf(ifname, IFNAMSIZ, "%s", ifc->name);
	*out = *a;
	return 0;
}

/* NCCL: src/misc/socket.cc:ncclFindInterfaces -> src/os/linux.cc:ncclOsFindInterfaces
 * with maxIfs = 1 (bootstrapNetInit, ncclIbInitDevices' OOB socket): the first getifaddrs
 * entry whose name passes matchIfList, deduplicated by name keeping the first address. */
static int nccl_socket(const struct npf_inventory *inv, const struct npf_cmodel_query *q,
		       char ifname[IFNAMSIZ], struct npf_addr *out)
{
	struct nccl_pick p;
	int r = nccl_socket_pick(inv, q->nccl_version, q->family, q->value, &p);

	if (r < 0)
		return r;
	if (ifname)
		snprintf(ifname, IFNAMSIZ, "%s", p.ifname);
	*out = p.addr;
	return 0;
}

/* Gloo: gloo/transport/tcp/device.cc:lookupAddrForIface: strcmp on the name, the first
 * AF_INET/AF_INET6 entry (ai_family AF_UNSPEC as PyTorch leaves it), no flag checks, no
 * link-local filter. PyTorch splits GLOO_SOCKET_IFNAME on ','; we publish one name. */
static int gloo(const struct npf_inventory *inv, const struct npf_cmodel_query *q,
		char ifname[IFNAMSIZ], struct npf_addr *out)
{
	const struct npf_iface *ifc = npf_inventory_find_name(inv, q->value);

	return ifc ? found(ifc, first_addr(ifc, 0, NULL), ifname, out) : -ENOENT;
}

/* TensorPipe: tensorpipe/transport/uv/utility.cc:lookupAddrForIface over
 * uv_interface_addresses, which lists only UP and RUNNING entries (libuv
 * uv__ifaddr_exclude); the whole value is one name. Missing: 127.0.0.1 (caller). */
static int tensorpipe(const struct npf_inventory *inv, const struct npf_cmodel_query *q,
		      char ifname[IFNAMSIZ], struct npf_addr *out)
{
	const struct npf_iface *ifc = npf_inventory_find_name(inv, q->value);

	if (!ifc || !up_running(ifc))
		return -ENOENT;
	return found(ifc, first_addr(ifc, 0, NULL), ifname, out);
}

static bool ucx_skip(const struct npf_addr *a)
{
	/* 169.254/16 skipped since UCX 1.21, fe80::/10 since 1.12; loopback is never a
	 * name we publish. */
	return npf_addr_is_local_only(a);
}

/* UCX: src/uct/tcp/tcp_iface.c -> src/ucs/sys/sock.c:ucs_netif_get_addr, for each family
 * of UCX_TCP_AF_PRIO (default inet,inet6): the first UP+RUNNING entry of the exact name
 * that is not link-local. */
static int ucx_tcp(const struct npf_inventory *inv, const struct npf_cmodel_query *q,
		   char ifname[IFNAMSIZ], struct npf_addr *out)
{
	const struct npf_iface *ifc = npf_inventory_find_name(inv, q->value);

	if (!ifc || !up_running(ifc))
		return -ENOENT;
	return found(ifc, first_addr(ifc, 0, ucx_skip), ifname, out);
}

static const struct {
	const char *name;
	const char *function;
	int (*addr)(const struct npf_inventory *inv, const struct npf_cmodel_query *q,
		    char ifname[IFNAMSIZ], struct npf_addr *out);
} models[NPF_CM__COUNT] = {
    [NPF_CM_NONE] = {"none", "", NULL},
    [NPF_CM_NCCL_SOCKET] = {"nccl-socket", "ncclFindInterfaces", nccl_socket},
    [NPF_CM_GLOO] = {"gloo", "lookupAddrForIface", gloo},
    [NPF_CM_TENSORPIPE] = {"tensorpipe", "lookupAddrForIface (uv)", tensorpipe},
    [NPF_CM_UCX_TCP] = {"ucx-tcp", "ucs_netif_get_addr", ucx_tcp},
    /* opal split_and_resolve selects by CIDR: no single address to model here. */
    [NPF_CM_OMPI] = {"openmpi", "split_and_resolve", NULL},
};

int npf_cmodel_addr(enum npf_cmodel m, const struct npf_inventory *inv,
		    const struct npf_cmodel_query *q, char ifname[IFNAMSIZ], struct npf_addr *out)
{
	if ((unsigned int)m >= NPF_CM__COUNT || !models[m].addr || !inv || !q || !q->value || !out)
		return -EINVAL;
	return models[m].addr(inv, q, ifname, out);
}

const char *npf_cmodel_name(enum npf_cmodel m)
{
	return (unsigned int)m < NPF_CM__COUNT ? models[m].name : "?";
}

const char *npf_cmodel_function(enum npf_cmodel m)
{
	return (unsigned int)m < NPF_CM__COUNT ? models[m].function : "";
}
