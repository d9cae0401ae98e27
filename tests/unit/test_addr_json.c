// SPDX-License-Identifier: MIT
/* addr_json: each form of an address in JSON, and what each does with a non-IP address. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include "addr_json.h"
#include "model.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/rtnetlink.h>

static struct npf_addr addr(const char *txt, uint8_t plen)
{
	struct npf_addr a = { .prefixlen = plen, .scope = RT_SCOPE_UNIVERSE };

	a.family = strchr(txt, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(a.family, txt, a.addr), 1);
	return a;
}

/* The form's JSON of a, compact, or NULL when the form refused a. Caller frees. */
static char *dump(const struct npf_addr *a, enum npf_addr_json_form form)
{
	json_t *j = npf_addr_json(a, form);
	char *txt;

	if (!j)
		return NULL;
	txt = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(j);
	assert_non_null(txt);
	return txt;
}

static void expect(const struct npf_addr *a, enum npf_addr_json_form form, const char *want)
{
	char *got = dump(a, form);

	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void text_forms(void **state)
{
	struct npf_addr v4 = addr("198.18.2.7", 24), v6 = addr("2001:db8::5", 64);
	(void)state;

	expect(&v4, NPF_ADDR_JSON_IP, "\"198.18.2.7\"");
	expect(&v4, NPF_ADDR_JSON_CIDR, "\"198.18.2.7/24\"");
	expect(&v6, NPF_ADDR_JSON_IP, "\"2001:db8::5\"");
	expect(&v6, NPF_ADDR_JSON_CIDR, "\"2001:db8::5/64\"");
}

/* The wire refuses an address it cannot name; the check JSON writes null. */
static void non_ip_address(void **state)
{
	struct npf_addr none = { .family = AF_UNSPEC };
	(void)state;

	expect(&none, NPF_ADDR_JSON_IP, NULL);
	expect(&none, NPF_ADDR_JSON_CIDR, "null");
	expect(&none, (enum npf_addr_json_form)99, NULL);
}

static void object_form(void **state)
{
	struct npf_addr v6 = addr("fe80::1", 64);
	(void)state;

	v6.scope = RT_SCOPE_LINK;
	v6.flags = NPF_ADDR_PERMANENT | NPF_ADDR_TENTATIVE;
	expect(&v6, NPF_ADDR_JSON_OBJECT,
	       "{\"family\":\"inet6\",\"address\":\"fe80::1\",\"prefixlen\":64,\"scope\":\"link\","
	       "\"flags\":[\"tentative\",\"permanent\"]}");
	v6.scope = 42;
	v6.flags = 0;
	expect(&v6, NPF_ADDR_JSON_OBJECT,
	       "{\"family\":\"inet6\",\"address\":\"fe80::1\",\"prefixlen\":64,\"scope\":\"42\","
	       "\"flags\":[]}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_forms),
		cmocka_unit_test(non_ip_address),
		cmocka_unit_test(object_form),
	};

	return npf_run_tests(tests, NULL, NULL);
}
