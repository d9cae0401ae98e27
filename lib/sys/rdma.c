// SPDX-License-Identifier: MIT
/* Collects RDMA devices through libibverbs, falling back to sysfs per device. */
#include "rdma.h"

#include <endian.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gid.h"
#include "rdma_sysfs.h"

/* ---- libibverbs backend ---- */

/* rdma-core mixes positive errno returns, -1 + errno, and negative errno;
 * everything leaves here as -errno. */
static int verbs_err(int ret)
{
	if (ret > 0)
		return -ret;
	if (ret == -1)
		return errno > 0 ? -errno : -EIO;
	return ret;
}

static int verbs_list(const struct rdma_ops *ops, char (**names)[NPF_NAME_MAX])
{
	struct ibv_device **list;
	int num = 0;

	(void)ops;
	*names = NULL;
	errno = 0;
	list = ibv_get_device_list(&num);
	if (!list) {
		/* ENOSYS: no /sys/class/infiniband (no RDMA stack at all). */
		if (errno == 0 || errno == ENOSYS || errno == ENOENT || errno == ENODEV)
			return 0;
		return -errno;
	}
	if (num > 0) {
		*names = calloc((size_t)num, sizeof(**names));
		if (!*names) {
			ibv_free_device_list(list);
			return -ENOMEM;
		}
		for (int i = 0; i < num; i++)
			snprintf((*names)[i], NPF_NAME_MAX, "%s", ibv_get_device_name(list[i]));
	}
	ibv_free_device_list(list);
	return num > 0 ? num : 0;
}

static int verbs_open(const struct rdma_ops *ops, const char *name, void **h)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int num = 0, ret = -ENODEV;

	(void)ops;
	list = ibv_get_device_list(&num);
	if (!list)
		return errno > 0 ? -errno : -ENODEV;
	for (int i = 0; i < num; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) != 0)
			continue;
		errno = 0;
		ctx = ibv_open_device(list[i]);
		ret = ctx ? 0 : (errno > 0 ? -errno : -EIO);
		break;
	}
	/* An opened context outlives the list (ibv_free_device_list(3)). */
	ibv_free_device_list(list);
	*h = ctx;
	return ret;
}

static const char *node_type_str(enum ibv_node_type t)
{
	switch (t) {
	case IBV_NODE_CA: return "CA";
	case IBV_NODE_SWITCH: return "switch";
	case IBV_NODE_ROUTER: return "router";
	case IBV_NODE_RNIC: return "RNIC";
	case IBV_NODE_USNIC: return "usNIC";
	case IBV_NODE_USNIC_UDP: return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED: return "unspecified";
	case IBV_NODE_UNKNOWN: break;
	}
	return "unknown";
}

static int verbs_query_device(const struct rdma_ops *ops, void *h, struct rdma_dev_info *out)
{
	struct ibv_context *ctx = h;
	struct ibv_device_attr attr;
	int ret;

	(void)ops;
	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_device(ctx, &attr);
	if (ret)
		return verbs_err(ret);
	memset(out, 0, sizeof(*out));
	out->node_guid = be64toh(attr.node_guid);
	out->phys_port_cnt = attr.phys_port_cnt;
	snprintf(out->node_type, sizeof(out->node_type), "%s",
		 node_type_str(ctx->device->node_type));
	return 0;
}

static int verbs_query_port(const struct rdma_ops *ops, void *h, int port,
			    struct rdma_port_info *out)
{
	struct ibv_port_attr pa;
	int ret;

	(void)ops;
	if (port < 1 || port > 255)
		return -EINVAL;
	memset(&pa, 0, sizeof(pa));
	ret = ibv_query_port((struct ibv_context *)h, (uint8_t)port, &pa);
	if (ret)
		return verbs_err(ret);
	memset(out, 0, sizeof(*out));
	out->state = pa.state <= IBV_PORT_ACTIVE_DEFER ? (enum npf_port_state)pa.state :
							 NPF_PORT_NOP;
	out->phys_state = pa.phys_state;
	/* Old providers report UNSPECIFIED for InfiniBand. */
	out->link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? NPF_LL_ETHERNET :
									  NPF_LL_INFINIBAND;
	out->active_speed = pa.active_speed ? pa.active_speed : -1;
	out->active_width = pa.active_width ? pa.active_width : -1;
	out->active_mtu = pa.active_mtu >= IBV_MTU_256 && pa.active_mtu <= IBV_MTU_4096 ?
				  128 << pa.active_mtu :
				  0;
	out->gid_tbl_len = pa.gid_tbl_len;
	return 0;
}

static int verbs_query_gids(const struct rdma_ops *ops, void *h, struct rdma_gid_info *out,
			    size_t max)
{
	struct ibv_gid_entry *ent;
	ssize_t n;

	(void)ops;
	if (max == 0)
		return 0;
	ent = calloc(max, sizeof(*ent));
	if (!ent)
		return -ENOMEM;
	/* Only valid entries come back, each with its type and netdev. */
	n = ibv_query_gid_table((struct ibv_context *)h, ent, max, 0);
	if (n < 0) {
		free(ent);
		return (int)n;
	}
	for (ssize_t i = 0; i < n; i++) {
		struct rdma_gid_info *g = &out[i];
		char ifname[IF_NAMESIZE];

		memset(g, 0, sizeof(*g));
		g->port = (int)ent[i].port_num;
		g->index = (int)ent[i].gid_index;
		memcpy(g->raw, ent[i].gid.raw, 16);
		g->type = ent[i].gid_type == IBV_GID_TYPE_ROCE_V2 ? NPF_GID_ROCE_V2 :
			  ent[i].gid_type == IBV_GID_TYPE_ROCE_V1 ||
					  ent[i].gid_type == IBV_GID_TYPE_IB ?
							  NPF_GID_IB_ROCE_V1 :
							  NPF_GID_TYPE_UNKNOWN;
		if (ent[i].ndev_ifindex && if_indextoname(ent[i].ndev_ifindex, ifname))
			snprintf(g->ndev, sizeof(g->ndev), "%s", ifname);
	}
	free(ent);
	return (int)n;
}

static int verbs_close(const struct rdma_ops *ops, void *h)
{
	(void)ops;
	return ibv_close_device((struct ibv_context *)h) ? verbs_err(-1) : 0;
}

const struct rdma_ops rdma_verbs_ops = {
	.list = verbs_list,
	.open = verbs_open,
	.query_device = verbs_query_device,
	.query_port = verbs_query_port,
	.query_gids = verbs_query_gids,
	.close = verbs_close,
};

/* ---- collection ---- */

static int cmp_gid_index(const void *a, const void *b)
{
	const struct npf_gid *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static bool raw_is_zero(const uint8_t raw[16])
{
	for (int i = 0; i < 16; i++)
		if (raw[i])
			return false;
	return true;
}

/* Moves the entries of one port out of the device-wide table. */
static int port_take_gids(struct npf_rdma_port *p, const struct rdma_gid_info *ent, int n)
{
	size_t cnt = 0;

	for (int i = 0; i < n; i++)
		if (ent[i].port == p->port)
			cnt++;
	if (!cnt)
		return 0;
	p->gids = calloc(cnt, sizeof(*p->gids));
	if (!p->gids)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct npf_gid *g = &p->gids[p->n_gids];

		if (ent[i].port != p->port || ent[i].index < 0 ||
		    ent[i].index >= RDMA_SYSFS_MAX_GIDS || raw_is_zero(ent[i].raw))
			continue;
		g->index = ent[i].index;
		memcpy(g->raw, ent[i].raw, 16);
		g->type = ent[i].type;
		memcpy(g->ndev, ent[i].ndev, sizeof(g->ndev));
		g->ndev[sizeof(g->ndev) - 1] = '\0';
		gid_fill_ipv4(g);
		p->n_gids++;
	}
	qsort(p->gids, p->n_gids, sizeof(*p->gids), cmp_gid_index);
	return 0;
}

/* Fills dev from an open handle. Returns 0, -ENOMEM, or the backend's error
 * (which sends the caller to the sysfs fallback). */
static int query_dev(const struct rdma_ops *ops, void *h, struct npf_rdma_dev *dev)
{
	struct rdma_gid_info *ent = NULL;
	struct rdma_dev_info di;
	size_t total = 0;
	int ret, n = 0, nports;

	ret = ops->query_device(ops, h, &di);
	if (ret < 0)
		return ret;
	dev->node_guid = di.node_guid;
	snprintf(dev->node_type, sizeof(dev->node_type), "%s", di.node_type);
	nports = di.phys_port_cnt;
	if (nports < 0)
		return -EINVAL;
	if (nports > RDMA_SYSFS_MAX_PORTS)
		nports = RDMA_SYSFS_MAX_PORTS;
	if (nports == 0)
		return 0;
	dev->ports = calloc((size_t)nports, sizeof(*dev->ports));
	if (!dev->ports)
		return -ENOMEM;
	for (int i = 0; i < nports; i++) {
		struct npf_rdma_port *p = &dev->ports[i];
		struct rdma_port_info pi;

		ret = ops->query_port(ops, h, i + 1, &pi);
		if (ret < 0)
			return ret;
		p->port = i + 1;
		p->state = pi.state;
		p->phys_state = pi.phys_state;
		p->link_layer = pi.link_layer;
		p->active_speed = pi.active_speed;
		p->active_width = pi.active_width;
		p->active_mtu = pi.active_mtu;
		p->gid_tbl_len = pi.gid_tbl_len < 0 ? 0 :
				 pi.gid_tbl_len > RDMA_SYSFS_MAX_GIDS ? RDMA_SYSFS_MAX_GIDS :
									 pi.gid_tbl_len;
		p->nccl_auto_gid = p->nccl_legacy_gid = -1;
		/* The kernel's rate file format, so both paths read alike. */
		rdma_format_rate(p->active_speed, p->active_width, p->rate, sizeof(p->rate));
		total += (size_t)p->gid_tbl_len;
		dev->n_ports++;
	}
	if (total) {
		ent = calloc(total, sizeof(*ent));
		if (!ent)
			return -ENOMEM;
		n = ops->query_gids(ops, h, ent, total);
		if (n < 0) {
			free(ent);
			return n;
		}
		if ((size_t)n > total)
			n = (int)total;
	}
	for (size_t i = 0; i < dev->n_ports && ret >= 0; i++)
		ret = port_take_gids(&dev->ports[i], ent, n);
	free(ent);
	return ret < 0 ? ret : 0;
}

/* Adds "<dev> skipped (...)" to the one-line note; what does not fit is cut. */
static void note_skipped(struct npf_inventory *inv, const char *name, int verr, int serr)
{
	size_t used = strnlen(inv->rdma_note, sizeof(inv->rdma_note) - 1);
	size_t room = sizeof(inv->rdma_note) - used;
	int n;

	if (room < 8)
		return;
	n = snprintf(inv->rdma_note + used, room, "%s%.*s skipped (verbs: %.24s; sysfs: %.24s)",
		     used ? "; " : "", NPF_NAME_MAX - 1, name, strerror(-verr), strerror(-serr));
	if (n < 0)
		inv->rdma_note[used] = '\0';
}

/* The note for "verbs lists nothing": say whether sysfs disagrees, because
 * devices without a provider library or /dev/infiniband access are invisible
 * to NCCL too, but the fix differs from "no RDMA hardware". */
static void note_no_devices(struct npf_inventory *inv, const char *root)
{
	struct npf_inventory tmp = { 0 };
	int n = rdma_sysfs_read(root, &tmp);

	if (n > 0)
		snprintf(inv->rdma_note, sizeof(inv->rdma_note),
			 "no RDMA devices: libibverbs found none, but sysfs lists %d "
			 "(provider library or /dev/infiniband access missing?)",
			 n);
	else
		snprintf(inv->rdma_note, sizeof(inv->rdma_note),
			 "no RDMA devices: libibverbs found none (no /sys/class/infiniband)");
	npf_inventory_clear(&tmp);
}

static int collect_verbs(struct npf_inventory *inv, const struct rdma_ops *ops, const char *root)
{
	char (*names)[NPF_NAME_MAX] = NULL;
	struct npf_rdma_dev *devs = NULL, *grown;
	size_t ndevs = 0;
	int n, ret = 0;

	n = ops->list(ops, &names);
	if (n < 0)
		return n;
	if (n == 0) {
		free(names);
		note_no_devices(inv, root);
		return 0;
	}
	if (n > RDMA_SYSFS_MAX_DEVS)
		n = RDMA_SYSFS_MAX_DEVS;
	devs = calloc((size_t)n, sizeof(*devs));
	if (!devs) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct npf_rdma_dev *dev = &devs[ndevs];
		void *h = NULL;
		int err, serr;

		names[i][NPF_NAME_MAX - 1] = '\0';
		memset(dev, 0, sizeof(*dev));
		snprintf(dev->name, sizeof(dev->name), "%s", names[i]);
		err = ops->open(ops, names[i], &h);
		if (err == 0) {
			err = query_dev(ops, h, dev);
			ops->close(ops, h);
			if (err == 0) {
				ndevs++;
				continue;
			}
			npf_rdma_dev_clear(dev);
		}
		if (err == -ENOMEM) {
			ret = err;
			goto out;
		}
		/* Not openable (permissions, no provider) or not answering:
		 * the kernel's sysfs view of the same device is the next best. */
		serr = rdma_sysfs_read_dev(root, names[i], dev);
		if (serr == 0) {
			ndevs++;
			continue;
		}
		if (serr == -ENOMEM) {
			ret = serr;
			goto out;
		}
		note_skipped(inv, names[i], err, serr);
	}
	if (ndevs) {
		grown = realloc(inv->rdma, (inv->n_rdma + ndevs) * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
			goto out;
		}
		memcpy(grown + inv->n_rdma, devs, ndevs * sizeof(*devs));
		inv->rdma = grown;
		inv->n_rdma += ndevs;
	}
	ret = (int)ndevs;
	ndevs = 0;
out:
	for (size_t i = 0; i < ndevs; i++)
		npf_rdma_dev_clear(&devs[i]);
	free(devs);
	free(names);
	return ret;
}

int npf_rdma_collect(struct npf_inventory *inv, const struct rdma_collect_opts *opts)
{
	const struct rdma_collect_opts none = { 0 };
	int ret;

	if (!opts)
		opts = &none;
	if (opts->sysfs_root && strcmp(opts->sysfs_root, "/sys") != 0)
		ret = rdma_sysfs_read(opts->sysfs_root, inv);
	else
		ret = collect_verbs(inv, opts->ops ? opts->ops : &rdma_verbs_ops,
				    opts->fallback_root ? opts->fallback_root : "/sys");
	if (ret >= 0)
		gid_predict_inventory(inv);
	return ret;
}
