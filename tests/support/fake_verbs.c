// SPDX-License-Identifier: MIT
/* Table-driven fake verbs backend: devices, ports and GID tables from static arrays. */
#include "fake_verbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct fake_verbs *self(const struct rdma_ops *ops)
{
	return (const struct fake_verbs *)(const void *)((const char *)ops -
							  offsetof(struct fake_verbs, ops));
}

/* Handles are 1-based device indices, so no state is needed per open. */
static const struct fake_dev *dev_of(const struct fake_verbs *fv, void *h)
{
	size_t i = (size_t)(uintptr_t)h;

	return i >= 1 && i <= fv->n_devs ? &fv->devs[i - 1] : NULL;
}

static int fake_list(const struct rdma_ops *ops, char (**names)[NPF_NAME_MAX])
{
	const struct fake_verbs *fv = self(ops);

	*names = NULL;
	if (fv->cnt)
		fv->cnt->lists++;
	if (fv->list_err)
		return fv->list_err;
	if (!fv->n_devs)
		return 0;
	*names = calloc(fv->n_devs, sizeof(**names));
	if (!*names)
		return -ENOMEM;
	for (size_t i = 0; i < fv->n_devs; i++)
		snprintf((*names)[i], NPF_NAME_MAX, "%s", fv->devs[i].name);
	return (int)fv->n_devs;
}

static int fake_open(const struct rdma_ops *ops, const char *name, void **h)
{
	const struct fake_verbs *fv = self(ops);

	*h = NULL;
	for (size_t i = 0; i < fv->n_devs; i++) {
		if (strcmp(fv->devs[i].name, name) != 0)
			continue;
		if (fv->devs[i].open_err)
			return fv->devs[i].open_err;
		if (fv->cnt)
			fv->cnt->opens++;
		*h = (void *)(uintptr_t)(i + 1);
		return 0;
	}
	return -ENODEV;
}

static int fake_query_device(const struct rdma_ops *ops, void *h, struct rdma_dev_info *out)
{
	const struct fake_verbs *fv = self(ops);
	const struct fake_dev *d = dev_of(fv, h);

	if (!d)
		return -EBADF;
	if (fv->cnt)
		fv->cnt->queries++;
	if (d->query_device_err)
		return d->query_device_err;
	memset(out, 0, sizeof(*out));
	out->node_guid = d->node_guid;
	out->phys_port_cnt = d->nports;
	snprintf(out->node_type, sizeof(out->node_type), "CA");
	return 0;
}

static int fake_query_port(const struct rdma_ops *ops, void *h, int port,
			   struct rdma_port_info *out)
{
	const struct fake_dev *d = dev_of(self(ops), h);
	const struct fake_port *p;

	if (!d)
		return -EBADF;
	if (d->query_port_err)
		return d->query_port_err;
	if (port < 1 || port > d->nports || port > 4)
		return -EINVAL;
	p = &d->ports[port - 1];
	memset(out, 0, sizeof(*out));
	out->state = p->state;
	out->phys_state = p->phys_state;
	out->link_layer = p->link_layer;
	out->active_speed = p->speed;
	out->active_width = p->width;
	out->active_mtu = p->mtu;
	out->gid_tbl_len = p->gid_tbl_len;
	return 0;
}

static int fake_query_gids(const struct rdma_ops *ops, void *h, struct rdma_gid_info *out,
			   size_t max)
{
	const struct fake_dev *d = dev_of(self(ops), h);

	if (!d)
		return -EBADF;
	if (d->query_gids_err)
		return d->query_gids_err;
	/* ibv_query_gid_table fails rather than truncate. */
	if (d->n_gids > max)
		return -EINVAL;
	for (size_t i = 0; i < d->n_gids; i++) {
		const struct fake_gid *g = &d->gids[i];

		memset(&out[i], 0, sizeof(out[i]));
		out[i].port = g->port;
		out[i].index = g->index;
		if (inet_pton(AF_INET6, g->gid, out[i].raw) != 1)
			return -EINVAL;
		out[i].type = g->type;
		if (g->ndev)
			snprintf(out[i].ndev, sizeof(out[i].ndev), "%s", g->ndev);
	}
	return (int)d->n_gids;
}

static int fake_close(const struct rdma_ops *ops, void *h)
{
	const struct fake_verbs *fv = self(ops);

	if (!dev_of(fv, h))
		return -EBADF;
	if (fv->cnt)
		fv->cnt->closes++;
	return 0;
}

void fake_verbs_init(struct fake_verbs *fv, const struct fake_dev *devs, size_t n_devs,
		     struct fake_counters *cnt)
{
	memset(fv, 0, sizeof(*fv));
	fv->ops.list = fake_list;
	fv->ops.open = fake_open;
	fv->ops.query_device = fake_query_device;
	fv->ops.query_port = fake_query_port;
	fv->ops.query_gids = fake_query_gids;
	fv->ops.close = fake_close;
	fv->devs = devs;
	fv->n_devs = n_devs;
	fv->cnt = cnt;
}
