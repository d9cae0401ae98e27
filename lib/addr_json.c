// SPDX-License-Identifier: MIT
/* Addresses in JSON: one place for the wire's, the check JSON's and the inventory's forms. */
#include "addr_json.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>

#include <linux/rtnetlink.h>

/* The text forms, one row each. */
static const struct {
	bool prefix;      /* "/prefixlen" after the address */
	bool null_absent; /* a non-IP address is JSON null, else refused (NULL) */
} text_forms[] = {
	[NPF_ADDR_JSON_IP] = { .prefix = false, .null_absent = false },
	[NPF_ADDR_JSON_CIDR] = { .prefix = true, .null_absent = true },
};

static const struct {
	uint32_t bit;
	const char *name;
} addr_flag_names[] = {
	{ NPF_ADDR_TENTATIVE, "tentative" }, { NPF_ADDR_DEPRECATED, "deprecated" },
	{ NPF_ADDR_TEMPORARY, "temporary" }, { NPF_ADDR_DADFAILED, "dadfailed" },
	{ NPF_ADDR_PERMANENT, "permanent" },
};

static json_t *scope_json(uint8_t scope)
{
	char buf[8];

	switch (scope) {
	case RT_SCOPE_UNIVERSE: return json_string("global");
	case RT_SCOPE_SITE: return json_string("site");
	case RT_SCOPE_LINK: return json_string("link");
	case RT_SCOPE_HOST: return json_string("host");
	case RT_SCOPE_NOWHERE: return json_string("nowhere");
	}
	snprintf(buf, sizeof(buf), "%u", scope);
	return json_string(buf);
}

/* The inventory's address object. Its addresses come from the kernel's IPv4/IPv6 dumps,
 * so any other family is written as "inet", as it always was. */
static json_t *addr_object(const struct npf_addr *a)
{
	char buf[INET6_ADDRSTRLEN];
	json_t *flags = json_array();

	for (size_t i = 0; flags && i < sizeof(addr_flag_names) / sizeof(addr_flag_names[0]); i++)
		if ((a->flags & addr_flag_names[i].bit) &&
		    json_array_append_new(flags, json_string(addr_flag_names[i].name)) < 0) {
			json_decref(flags);
			flags = NULL;
		}
	/* "o" takes the references even when packing fails. */
	return json_pack("{s:s, s:s, s:i, s:o, s:o}", "family",
			 a->family == AF_INET6 ? "inet6" : "inet", "address",
			 npf_addr_str(a, buf, sizeof(buf)), "prefixlen", (int)a->prefixlen,
			 "scope", scope_json(a->scope), "flags", flags);
}

json_t *npf_addr_json(const struct npf_addr *a, enum npf_addr_json_form form)
{
	char buf[INET6_ADDRSTRLEN + 8], ip[INET6_ADDRSTRLEN];

	if (form == NPF_ADDR_JSON_OBJECT)
		return addr_object(a);
	if ((unsigned)form >= sizeof(text_forms) / sizeof(text_forms[0]))
		return NULL;
	if (a->family != AF_INET && a->family != AF_INET6)
		return text_forms[form].null_absent ? json_null() : NULL;
	npf_addr_str(a, ip, sizeof(ip));
	if (!text_forms[form].prefix)
		return json_string(ip);
	snprintf(buf, sizeof(buf), "%s/%u", ip, a->prefixlen);
	return json_string(buf);
}
