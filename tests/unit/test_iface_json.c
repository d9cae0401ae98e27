// SPDX-License-Identifier: MIT
/* iface_json: field names, types and null conventions of docs/json.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

/* model.h pulls <net/if.h>, which must precede <linux/if.h>. */
#include "classify.h"
#include "iface_json.h"
#include "model.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>

/* Every key docs/json.md documents for an interface object, in order. */
static const char *const iface_keys[] = {
	"name", "ifindex", "altnames", "kind", "link_kind", "roles", "evidence", "flags", "up",
	"running", "lower_up", "operstate", "carrier", "mtu", "link_type", "mac", "master",
	"master_ifindex", "parent", "parent_ifindex", "parent_netns", "has_device",
	"default_route", "speed_mbps", "addresses",
};
static const char *const addr_keys[] = { "family", "address", "prefixlen", "scope", "flags" };

static void add_addr(struct npf_iface *ifc, const char *txt, uint8_t plen, uint8_t scope,
		     uint32_t flags)
{
	struct npf_addr a = { .prefixlen = plen, .scope = scope, .flags = flags };

	a.family = strchr(txt, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(a.family, txt, a.addr), 1);
	assert_int_equal(npf_iface_add_addr(ifc, &a), 0);
}

static void build(struct npf_inventory *inv)
{
	struct npf_iface *br, *p;

	inv->n_ifaces = 2;
	inv->ifaces = calloc(2, sizeof(*inv->ifaces));
	assert_non_null(inv->ifaces);
	br = &inv->ifaces[0];
	p = &inv->ifaces[1];

	snprintf(br->name, sizeof(br->name), "docker0");
	br->ifindex = 3;
	snprintf(br->kind_str, sizeof(br->kind_str), "bridge");
	br->flags = IFF_UP | IFF_BROADCAST | IFF_MULTICAST | IFF_RUNNING | IFF_LOWER_UP;
	br->operstate = IF_OPER_UP;
	br->carrier = 1;
	br->mtu = 1500;
	br->arphrd = ARPHRD_ETHER;
	br->mac_len = 6;
	memcpy(br->mac, "\x02\x42\xac\x11\x00\x01", 6);
	br->speed_mbps = NPF_SPEED_UNKNOWN;
	add_addr(br, "172.17.0.1", 16, RT_SCOPE_UNIVERSE, NPF_ADDR_PERMANENT);
	add_addr(br, "fe80::42:acff:fe11:1", 64, RT_SCOPE_LINK, NPF_ADDR_TENTATIVE);

	snprintf(p->name, sizeof(p->name), "eth1");
	p->ifindex = 4;
	p->has_device = true;
	p->default_route = true;
	p->master = 3;
	p->link = 9;
	p->link_netns = true;
	p->carrier = -1;
	p->operstate = IF_OPER_LOWERLAYERDOWN;
	p->mtu = 9000;
	p->arphrd = ARPHRD_ETHER;
	p->speed_mbps = 100000;
	p->n_altnames = 1;
	snprintf(p->altnames[0], IFNAMSIZ, "enp65s0f0");
	add_addr(p, "198.18.0.2", 24, 42, 0);
	classify_inventory(inv);
}

static void schema_keys_and_types(void **state)
{
	struct npf_inventory inv = { 0 };
	json_t *arr, *o, *a;
	const char *key;
	json_t *val;
	size_t i = 0;
	(void)state;

	build(&inv);
	arr = npf_ifaces_to_json(&inv);
	assert_non_null(arr);
	assert_true(json_is_array(arr));
	assert_int_equal(json_array_size(arr), 2);

	o = json_array_get(arr, 0);
	assert_int_equal(json_object_size(o), sizeof(iface_keys) / sizeof(iface_keys[0]));
	/* Insertion order is the documented order. */
	json_object_foreach(o, key, val) {
		assert_string_equal(key, iface_keys[i]);
		i++;
	}
	assert_string_equal(json_string_value(json_object_get(o, "name")), "docker0");
	assert_int_equal(json_integer_value(json_object_get(o, "ifindex")), 3);
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "bridge");
	assert_string_equal(json_string_value(json_object_get(o, "link_kind")), "bridge");
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "roles"), 0)),
			    "container-bridge");
	assert_non_null(strstr(json_string_value(json_object_get(o, "evidence")), "docker"));
	assert_true(json_is_true(json_object_get(o, "up")));
	assert_true(json_is_true(json_object_get(o, "running")));
	assert_true(json_is_true(json_object_get(o, "lower_up")));
	assert_string_equal(json_string_value(json_object_get(o, "operstate")), "UP");
	assert_true(json_is_true(json_object_get(o, "carrier")));
	assert_string_equal(json_string_value(json_object_get(o, "mac")), "02:42:ac:11:00:01");
	assert_true(json_is_null(json_object_get(o, "master")));
	assert_true(json_is_null(json_object_get(o, "master_ifindex")));
	assert_true(json_is_null(json_object_get(o, "speed_mbps")));
	assert_int_equal(json_integer_value(json_object_get(o, "link_type")), ARPHRD_ETHER);
	assert_int_equal(json_array_size(json_object_get(o, "flags")), 5);
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "flags"), 0)),
			    "UP");

	a = json_array_get(json_object_get(o, "addresses"), 0);
	assert_int_equal(json_object_size(a), sizeof(addr_keys) / sizeof(addr_keys[0]));
	for (i = 0; i < sizeof(addr_keys) / sizeof(addr_keys[0]); i++)
		assert_non_null(json_object_get(a, addr_keys[i]));
	assert_string_equal(json_string_value(json_object_get(a, "family")), "inet");
	assert_string_equal(json_string_value(json_object_get(a, "address")), "172.17.0.1");
	assert_int_equal(json_integer_value(json_object_get(a, "prefixlen")), 16);
	assert_string_equal(json_string_value(json_object_get(a, "scope")), "global");
	assert_string_equal(json_string_value(json_array_get(json_object_get(a, "flags"), 0)),
			    "permanent");
	a = json_array_get(json_object_get(o, "addresses"), 1);
	assert_string_equal(json_string_value(json_object_get(a, "family")), "inet6");
	assert_string_equal(json_string_value(json_object_get(a, "scope")), "link");
	assert_string_equal(json_string_value(json_array_get(json_object_get(a, "flags"), 0)),
			    "tentative");

	o = json_array_get(arr, 1);
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "physical");
	assert_true(json_is_null(json_object_get(o, "link_kind")));
	assert_true(json_is_null(json_object_get(o, "carrier")));
	assert_true(json_is_null(json_object_get(o, "mac")));
	assert_string_equal(json_string_value(json_object_get(o, "master")), "docker0");
	assert_int_equal(json_integer_value(json_object_get(o, "master_ifindex")), 3);
	/* The parent lives in another namespace: its index is not ours to name. */
	assert_true(json_is_null(json_object_get(o, "parent")));
	assert_int_equal(json_integer_value(json_object_get(o, "parent_ifindex")), 9);
	assert_true(json_is_true(json_object_get(o, "parent_netns")));
	assert_true(json_is_true(json_object_get(o, "has_device")));
	assert_true(json_is_true(json_object_get(o, "default_route")));
	assert_int_equal(json_integer_value(json_object_get(o, "speed_mbps")), 100000);
	assert_string_equal(json_string_value(json_object_get(o, "operstate")), "LOWERLAYERDOWN");
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "altnames"), 0)),
			    "enp65s0f0");
	/* A bridge port with its own routable address is no virtual port. */
	assert_int_equal(json_array_size(json_object_get(o, "roles")), 0);
	a = json_array_get(json_object_get(o, "addresses"), 0);
	assert_string_equal(json_string_value(json_object_get(a, "scope")), "42");
	assert_int_equal(json_array_size(json_object_get(a, "flags")), 0);

	json_decref(arr);
	npf_inventory_clear(&inv);
}

static void empty_inventory(void **state)
{
	struct npf_inventory inv = { 0 };
	json_t *arr = npf_ifaces_to_json(&inv);
	char *txt;
	(void)state;

	assert_non_null(arr);
	txt = json_dumps(arr, JSON_COMPACT);
	assert_string_equal(txt, "[]");
	free(txt);
	json_decref(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(schema_keys_and_types),
		cmocka_unit_test(empty_inventory),
	};

	return npf_run_tests(tests, NULL, NULL);
}
