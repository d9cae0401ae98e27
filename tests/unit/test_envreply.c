// SPDX-License-Identifier: MIT
/* The SPANK plugin's env request and reply validation (slurm/envreply.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <errno.h>
#include <string.h>

/* The plugin is a Slurm module, not a library: compile its pure part in here. */
#include "../../slurm/envreply.c"

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_ALLOW_NUL, &e);

	if (!j)
		fail_msg("bad test JSON: %s: %s", e.text, text);
	return j;
}

static int parse_text(const char *text, struct npf_envreply *out, char *err, size_t errlen)
{
	json_t *j = load(text);
	int r = npf_envreply_parse(j, out, err, errlen);

	json_decref(j);
	return r;
}

static void request_shape(void **state)
{
	json_t *peers = json_pack("[s,s]", "node1", "node2");
	json_t *req;
	char *s;
	(void)state;

	req = npf_envreply_request(peers);
	assert_non_null(req);
	s = json_dumps(req, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(s, "{\"cached\":true,\"peers\":[\"node1\",\"node2\"],"
			       "\"request\":\"env\",\"version\":1}");
	free(s);
	json_decref(req);
	assert_null(npf_envreply_request(json_string("node1")));
	assert_null(npf_envreply_request(NULL));
}

static void variables_array_and_object(void **state)
{
	struct npf_envreply e;
	char err[128];
	(void)state;

	assert_int_equal(parse_text("{\"version\":1,\"ok\":true,\"verdict\":\"ok\",\"summary\":\"s\","
				    "\"variables\":[{\"name\":\"NCCL_SOCKET_IFNAME\",\"value\":\"=fab0\"},"
				    "{\"name\":\"OMPI_MCA_btl_tcp_if_include\",\"value\":\"198.18.0.0/24\"}]}",
				    &e, err, sizeof(err)),
			 0);
	assert_string_equal(e.verdict, "ok");
	assert_string_equal(e.summary, "s");
	assert_int_equal(e.n_vars, 2);
	assert_string_equal(e.vars[0].name, "NCCL_SOCKET_IFNAME");
	assert_string_equal(e.vars[0].value, "=fab0");
	assert_string_equal(e.vars[1].value, "198.18.0.0/24");
	npf_envreply_clear(&e);
	assert_null(e.vars);

	/* Nested in "env", variables as a map. */
	assert_int_equal(parse_text("{\"version\":1,\"ok\":true,\"env\":{\"verdict\":\"ok\","
				    "\"variables\":{\"GLOO_SOCKET_IFNAME\":\"fab0\"}}}",
				    &e, err, sizeof(err)),
			 0);
	assert_int_equal(e.n_vars, 1);
	assert_string_equal(e.vars[0].name, "GLOO_SOCKET_IFNAME");
	npf_envreply_clear(&e);

	/* A check-style nested verdict object and nothing published. */
	assert_int_equal(parse_text("{\"version\":1,\"ok\":true,\"verdict\":{\"verdict\":\"fail\","
				    "\"summary\":\"FAIL — node3: fab0 timeout\"}}",
				    &e, err, sizeof(err)),
			 0);
	assert_string_equal(e.verdict, "fail");
	assert_int_equal(e.n_vars, 0);
	npf_envreply_clear(&e);

	/* degraded (the job moved to a worse network) carries its variables like ok. */
	assert_int_equal(parse_text("{\"version\":1,\"ok\":true,\"verdict\":\"degraded\","
				    "\"summary\":\"degraded: eno1\",\"variables\":"
				    "{\"NCCL_SOCKET_IFNAME\":\"=eno1\"}}",
				    &e, err, sizeof(err)),
			 0);
	assert_string_equal(e.verdict, "degraded");
	assert_int_equal(e.n_vars, 1);
	assert_string_equal(e.vars[0].value, "=eno1");
	npf_envreply_clear(&e);
}

static void daemon_error_reply(void **state)
{
	struct npf_envreply e;
	char err[128];
	(void)state;

	assert_int_equal(parse_text("{\"version\":1,\"ok\":false,\"error\":{\"code\":\"no-verdict\","
				    "\"message\":\"nothing cached\"}}",
				    &e, err, sizeof(err)),
			 -EREMOTEIO);
	assert_non_null(strstr(err, "nothing cached"));
	assert_int_equal(parse_text("{\"version\":2,\"ok\":true,\"verdict\":\"ok\"}", &e, err,
				    sizeof(err)),
			 -EBADMSG);
}

static void hostile_values_rejected(void **state)
{
	static const char *const bad_replies[] = {
		/* newline would inject a second TaskProlog command */
		"{\"version\":1,\"ok\":true,\"verdict\":\"ok\",\"variables\":"
		"[{\"name\":\"A\",\"value\":\"x\\nexport LD_PRELOAD=/tmp/x\"}]}",
		"{\"version\":1,\"ok\":true,\"verdict\":\"ok\",\"variables\":"
		"[{\"name\":\"LD PRELOAD\",\"value\":\"x\"}]}",
		"{\"version\":1,\"ok\":true,\"verdict\":\"ok\",\"variables\":"
		"[{\"name\":\"1A\",\"value\":\"x\"}]}",
		"{\"version\":1,\"ok\":true,\"verdict\":\"ok\",\"variables\":"
		"[{\"name\":\"A\",\"value\":\"a\\u0000b\"}]}",
		"{\"version\":1,\"ok\":true,\"verdict\":\"ok\",\"variables\":"
		"[{\"name\":\"A\",\"value\":3}]}",
		"{\"version\":1,\"ok\":true,\"verdict\":\"ok\",\"variables\":"
		"[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"A\",\"value\":\"2\"}]}",
		"{\"version\":1,\"ok\":true,\"verdict\":\"ok\",\"variables\":[{\"value\":\"1\"}]}",
		"{\"version\":1,\"ok\":true,\"verdict\":\"ok\",\"variables\":\"A=1\"}",
		"{\"version\":1,\"ok\":true,\"verdict\":\"maybe\"}",
		"{\"version\":1,\"ok\":true,\"verdict\":\"suspect\"}",
		"{\"version\":1,\"ok\":true}",
		"[]",
	};
	struct npf_envreply e;
	char err[128];
	(void)state;

	for (size_t i = 0; i < sizeof(bad_replies) / sizeof(bad_replies[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse_text(bad_replies[i], &e, err, sizeof(err)), -EBADMSG);
		assert_true(err[0] != '\0');
		assert_null(e.vars);
		assert_int_equal(e.n_vars, 0);
	}
}

static void too_many_and_too_long(void **state)
{
	json_t *vars = json_array(), *reply;
	struct npf_envreply e;
	char err[128], name[16], *longv;
	(void)state;

	for (int i = 0; i <= NPF_ENVREPLY_MAX_VARS; i++) {
		snprintf(name, sizeof(name), "V%d", i);
		json_array_append_new(vars, json_pack("{s:s,s:s}", "name", name, "value", "x"));
	}
	reply = json_pack("{s:i,s:b,s:s,s:o}", "version", 1, "ok", 1, "verdict", "ok",
			  "variables", vars);
	assert_int_equal(npf_envreply_parse(reply, &e, err, sizeof(err)), -EBADMSG);
	json_decref(reply);

	longv = malloc(NPF_ENVREPLY_VALUE_MAX + 1);
	assert_non_null(longv);
	memset(longv, 'a', NPF_ENVREPLY_VALUE_MAX);
	longv[NPF_ENVREPLY_VALUE_MAX] = '\0';
	reply = json_pack("{s:i,s:b,s:s,s:{s:s}}", "version", 1, "ok", 1, "verdict", "ok",
			  "variables", "A", longv);
	assert_int_equal(npf_envreply_parse(reply, &e, err, sizeof(err)), -EBADMSG);
	json_decref(reply);
	longv[NPF_ENVREPLY_VALUE_MAX - 1] = '\0';
	reply = json_pack("{s:i,s:b,s:s,s:{s:s}}", "version", 1, "ok", 1, "verdict", "ok",
			  "variables", "A", longv);
	assert_int_equal(npf_envreply_parse(reply, &e, err, sizeof(err)), 0);
	assert_int_equal(strlen(e.vars[0].value), NPF_ENVREPLY_VALUE_MAX - 1);
	npf_envreply_clear(&e);
	json_decref(reply);
	free(longv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_shape),
		cmocka_unit_test(variables_array_and_object),
		cmocka_unit_test(daemon_error_reply),
		cmocka_unit_test(hostile_values_rejected),
		cmocka_unit_test(too_many_and_too_long),
	};

	return npf_run_tests(tests, NULL, NULL);
}
