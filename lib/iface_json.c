// SPDX-License-Identifier: MIT
/* JSON rendering of the interface inventory (field names documented in docs/json.md). */
#include "iface_json.h"
#include "addr_json.h"
#include "classify.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if.h>
#include <linux/rtnetlink.h>

static const struct {
	unsigned int bit;
	const char *name;
} iff_names[] = {
	{ IFF_UP, "UP" },           { IFF_BROADCAST, "BROADCAST" },
	{ IFF_LOOPBACK, "LOOPBACK" }, { IFF_POINTOPOINT, "POINTOPOINT" },
	{ IFF_RUNNING, "RUNNING" }, { IFF_NOARP, "NOARP" },
	{ IFF_PROMISC, "PROMISC" }, { IFF_ALLMULTI, "ALLMULTI" },
	{ IFF_MASTER, "MASTER" },   { IFF_SLAVE, "SLAVE" },
	{ IFF_MULTICAST, "MULTICAST" }, { IFF_LOWER_UP, "LOWER_UP" },
	{ IFF_DORMANT, "DORMANT" }, { IFF_ECHO, "ECHO" },
};

/* Sets obj[key] = val, taking val's reference even on failure. */
static int put(json_t *obj, const char *key, json_t *val)
{
	if (!val)
		return -1;
	return json_object_set_new(obj, key, val);
}

static int append(json_t *arr, json_t *val)
{
	if (!val)
		return -1;
	return json_array_append_new(arr, val);
}

static json_t *mac_json(const struct npf_iface *ifc)
{
	char buf[3 * sizeof(ifc->mac)];
	size_t len = ifc->mac_len <= sizeof(ifc->mac) ? ifc->mac_len : sizeof(ifc->mac);
	size_t off = 0;

	if (!len)
		return json_null();
	/* 3 bytes per octet ("xx:" or "xx\0") fit exactly, so nothing truncates. */
	for (size_t i = 0; i < len; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%02x", i ? ":" : "",
					ifc->mac[i]);
	return json_string(buf);
}

/* Name of a related link, or null when it is unknown or in another namespace. */
static json_t *link_name_json(const struct npf_inventory *inv, int ifindex, bool other_ns)
{
	const struct npf_iface *o;

	if (!ifindex || other_ns || !inv)
		return json_null();
	o = npf_inventory_find_ifindex(inv, ifindex);
	return o ? json_string(o->name) : json_null();
}

json_t *npf_iface_to_json(const struct npf_iface *ifc, const struct npf_inventory *inv)
{
	json_t *o = json_object(), *alt = json_array(), *roles = json_array(),
	       *flags = json_array(), *addrs = json_array();
	int rc = 0;

	if (!o || !alt || !roles || !flags || !addrs)
		goto err;
	for (int i = 0; i < ifc->n_altnames && i < NPF_ALTNAMES_MAX; i++)
		rc |= append(alt, json_stringn(ifc->altnames[i], strnlen(ifc->altnames[i], IFNAMSIZ)));
	for (uint32_t bit = 1; bit && bit <= NPF_ROLE_MANAGEMENT; bit <<= 1)
		if (ifc->roles & bit)
			rc |= append(roles, json_string(classify_role_name((enum npf_role)bit)));
	for (size_t i = 0; i < sizeof(iff_names) / sizeof(iff_names[0]); i++)
		if (ifc->flags & iff_names[i].bit)
			rc |= append(flags, json_string(iff_names[i].name));
	for (size_t i = 0; i < ifc->n_addrs; i++)
		rc |= append(addrs, npf_addr_json(&ifc->addrs[i], NPF_ADDR_JSON_OBJECT));

	rc |= put(o, "name", json_stringn(ifc->name, strnlen(ifc->name, IFNAMSIZ)));
	rc |= put(o, "ifindex", json_integer(ifc->ifindex));
	rc |= put(o, "altnames", alt);
	rc |= put(o, "kind", json_string(npf_kind_name(ifc->kind)));
	rc |= put(o, "link_kind",
		  ifc->kind_str[0] ? json_stringn(ifc->kind_str,
						  strnlen(ifc->kind_str, sizeof(ifc->kind_str))) :
				     json_null());
	rc |= put(o, "roles", roles);
	rc |= put(o, "evidence",
		  json_stringn(ifc->evidence, strnlen(ifc->evidence, sizeof(ifc->evidence))));
	rc |= put(o, "flags", flags);
	rc |= put(o, "up", json_boolean(ifc->flags & IFF_UP));
	rc |= put(o, "running", json_boolean(ifc->flags & IFF_RUNNING));
	rc |= put(o, "lower_up", json_boolean(ifc->flags & IFF_LOWER_UP));
	rc |= put(o, "operstate", json_string(npf_operstate_name(ifc->operstate)));
	rc |= put(o, "carrier", ifc->carrier < 0 ? json_null() : json_boolean(ifc->carrier));
	rc |= put(o, "mtu", json_integer(ifc->mtu));
	rc |= put(o, "link_type", json_integer(ifc->arphrd));
	rc |= put(o, "mac", mac_json(ifc));
	rc |= put(o, "master", link_name_json(inv, ifc->master, false));
	rc |= put(o, "master_ifindex", ifc->master ? json_integer(ifc->master) : json_null());
	rc |= put(o, "parent", link_name_json(inv, ifc->link, ifc->link_netns));
	rc |= put(o, "parent_ifindex", ifc->link ? json_integer(ifc->link) : json_null());
	rc |= put(o, "parent_netns", json_boolean(ifc->link_netns));
	rc |= put(o, "has_device", json_boolean(ifc->has_device));
	rc |= put(o, "default_route", json_boolean(ifc->default_route));
	rc |= put(o, "speed_mbps",
		  ifc->speed_mbps < 0 ? json_null() : json_integer((json_int_t)ifc->speed_mbps));
	rc |= put(o, "addresses", addrs);
	/* put() consumed every container, whatever it returned. */
	alt = roles = flags = addrs = NULL;
	if (rc)
		goto err;
	return o;
err:
	json_decref(alt);
	json_decref(roles);
	json_decref(flags);
	json_decref(addrs);
	json_decref(o);
	return NULL;
}

json_t *npf_ifaces_to_json(const struct npf_inventory *inv)
{
	json_t *arr = json_array();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		if (append(arr, npf_iface_to_json(&inv->ifaces[i], inv)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}
