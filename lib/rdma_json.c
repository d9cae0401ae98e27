// SPDX-License-Identifier: MIT
/* Builds the JSON view of RDMA devices, ports and GID tables. */
#include "rdma_json.h"

#include <stdio.h>

#include "gid.h"
#include "rdma_sysfs.h"

/* Empty strings and unknown numbers become null, so consumers can tell
 * "not known" from a value. */
static json_t *str_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

static json_t *int_or_null(long long v, bool known)
{
	return known ? json_integer(v) : json_null();
}

/* json_object_set_new() consumes the value even on failure, so a NULL from a
 * constructor is the only thing to track. */
static int set(json_t *obj, const char *key, json_t *val)
{
	if (!val)
		return -1;
	return json_object_set_new(obj, key, val);
}

static json_t *gid_json(const struct npf_rdma_port *p, const struct npf_gid *g)
{
	char buf[GID_STR_LEN], v4[16];
	json_t *o = json_object();
	int ver = g->type == NPF_GID_IB_ROCE_V1 ? 1 : g->type == NPF_GID_ROCE_V2 ? 2 : 0;
	int err = 0;

	if (!o)
		return NULL;
	if (g->is_ipv4)
		snprintf(v4, sizeof(v4), "%u.%u.%u.%u", g->ipv4[0], g->ipv4[1], g->ipv4[2],
			 g->ipv4[3]);
	err |= set(o, "index", json_integer(g->index));
	err |= set(o, "gid", json_string(gid_format(g->raw, buf, sizeof(buf))));
	err |= set(o, "type", json_string(npf_gid_type_name(g->type)));
	/* IB GIDs share the "IB/RoCE v1" type but have no RoCE version. */
	err |= set(o, "roce_version",
		   int_or_null(ver, ver != 0 && p->link_layer == NPF_LL_ETHERNET));
	err |= set(o, "ndev", str_or_null(g->ndev));
	err |= set(o, "ipv4", g->is_ipv4 ? json_string(v4) : json_null());
	err |= set(o, "nccl_auto", json_boolean(g->index == p->nccl_auto_gid));
	err |= set(o, "nccl_legacy", json_boolean(g->index == p->nccl_legacy_gid));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *warnings_json(uint32_t warn)
{
	json_t *a = json_array();

	if (!a)
		return NULL;
	for (uint32_t bit = 1; bit && bit <= warn; bit <<= 1) {
		if (!(warn & bit))
			continue;
		if (json_array_append_new(a, json_string(gid_warn_name(bit))) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *port_json(const struct npf_rdma_port *p)
{
	json_t *o = json_object(), *gids = json_array();
	int err = 0;

	if (!o || !gids)
		goto fail;
	err |= set(o, "port", json_integer(p->port));
	err |= set(o, "state", json_string(npf_port_state_name(p->state)));
	err |= set(o, "phys_state",
		   p->phys_state >= 0 ? json_string(rdma_phys_state_name(p->phys_state)) :
					json_null());
	err |= set(o, "phys_state_num", int_or_null(p->phys_state, p->phys_state >= 0));
	err |= set(o, "link_layer", json_string(npf_link_layer_name(p->link_layer)));
	err |= set(o, "rate", str_or_null(p->rate));
	err |= set(o, "active_speed",
		   p->active_speed > 0 ? json_string(rdma_speed_name(p->active_speed)) :
					 json_null());
	err |= set(o, "active_width",
		   p->active_width > 0 ? json_string(rdma_width_name(p->active_width)) :
					 json_null());
	err |= set(o, "active_mtu", int_or_null(p->active_mtu, p->active_mtu > 0));
	err |= set(o, "netdev", str_or_null(p->netdev));
	err |= set(o, "gid_tbl_len", int_or_null(p->gid_tbl_len, p->gid_tbl_len > 0));
	err |= set(o, "nccl_auto_gid", int_or_null(p->nccl_auto_gid, p->nccl_auto_gid >= 0));
	err |= set(o, "nccl_legacy_gid",
		   int_or_null(p->nccl_legacy_gid, p->nccl_legacy_gid >= 0));
	err |= set(o, "warnings", warnings_json(p->gid_warn));
	for (size_t i = 0; i < p->n_gids && !err; i++)
		err |= json_array_append_new(gids, gid_json(p, &p->gids[i])) < 0;
	err |= json_object_set(o, "gids", gids);
	if (err)
		goto fail;
	json_decref(gids);
	return o;
fail:
	json_decref(gids);
	json_decref(o);
	return NULL;
}

static json_t *dev_json(const struct npf_rdma_dev *d)
{
	json_t *o = json_object(), *ports = json_array();
	char guid[24];
	int err = 0;

	if (!o || !ports)
		goto fail;
	snprintf(guid, sizeof(guid), "%04x:%04x:%04x:%04x", (unsigned)(d->node_guid >> 48) & 0xffff,
		 (unsigned)(d->node_guid >> 32) & 0xffff, (unsigned)(d->node_guid >> 16) & 0xffff,
		 (unsigned)d->node_guid & 0xffff);
	err |= set(o, "name", json_string(d->name));
	err |= set(o, "node_guid", d->node_guid ? json_string(guid) : json_null());
	err |= set(o, "node_type", str_or_null(d->node_type));
	for (size_t i = 0; i < d->n_ports && !err; i++)
		err |= json_array_append_new(ports, port_json(&d->ports[i])) < 0;
	err |= json_object_set(o, "ports", ports);
	if (err)
		goto fail;
	json_decref(ports);
	return o;
fail:
	json_decref(ports);
	json_decref(o);
	return NULL;
}

json_t *npf_rdma_to_json(const struct npf_inventory *inv)
{
	json_t *o = json_object(), *devs = json_array();
	int err = 0;

	if (!o || !devs)
		goto fail;
	err |= set(o, "note", str_or_null(inv->rdma_note));
	for (size_t i = 0; i < inv->n_rdma && !err; i++)
		err |= json_array_append_new(devs, dev_json(&inv->rdma[i])) < 0;
	err |= json_object_set(o, "devices", devs);
	if (err)
		goto fail;
	json_decref(devs);
	return o;
fail:
	json_decref(devs);
	json_decref(o);
	return NULL;
}
