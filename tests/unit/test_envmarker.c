// SPDX-License-Identifier: MIT
/* Per-node values stay per node (slurm/envmarker.c): the shared case table, plus edge cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* after the headers it needs */
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plugin is a Slurm module, not a library: compile its pure part in here. */
#include "../../slurm/envmarker.c"
#include "../../slurm/envreply.c"

#define MAX_ENV 16

struct fake_env {
	char names[MAX_ENV][NPF_ENVREPLY_NAME_MAX];
	char values[MAX_ENV][NPF_ENVREPLY_VALUE_MAX];
	size_t n;
	char buf[NPF_ENVREPLY_VALUE_MAX]; /* one buffer for every lookup, as spank_getenv */
};

static const char *lookup(const char *name, void *userdata)
{
	struct fake_env *e = userdata;

	for (size_t i = 0; i < e->n; i++) {
		if (strcmp(e->names[i], name) == 0) {
			snprintf(e->buf, sizeof(e->buf), "%s", e->values[i]);
			return e->buf;
		}
	}
	return NULL;
}

/* "A=1 B=2" (or "-") into env. */
static void parse_env(char *text, struct fake_env *e)
{
	memset(e, 0, sizeof(*e));
	for (char *save = NULL, *tok = strtok_r(text, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		if (strcmp(tok, "-") == 0)
			continue;
		assert_non_null(eq);
		assert_true(e->n < MAX_ENV);
		*eq = '\0';
		snprintf(e->names[e->n], sizeof(e->names[0]), "%s", tok);
		snprintf(e->values[e->n], sizeof(e->values[0]), "%s", eq + 1);
		e->n++;
	}
}

static void to_reply(const struct fake_env *e, struct npf_envreply *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->verdict, sizeof(r->verdict), "%s", e->n ? "ok" : "unknown");
	r->vars = calloc(NPF_ENVREPLY_MAX_VARS, sizeof(*r->vars));
	assert_non_null(r->vars);
	for (size_t i = 0; i < e->n; i++) {
		snprintf(r->vars[i].name, sizeof(r->vars[i].name), "%s", e->names[i]);
		snprintf(r->vars[i].value, sizeof(r->vars[i].value), "%s", e->values[i]);
	}
	r->n_vars = e->n;
}

static void render(const struct npf_envplan *p, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < p->n_ops; i++) {
		const struct npf_envop *op = &p->ops[i];

		o += (size_t)snprintf(buf + o, len - o, "%s%s:%s%s%s", i ? " " : "",
				      op->kind == NPF_ENVOP_SET ? "set" : "unset", op->name,
				      op->kind == NPF_ENVOP_SET ? "=" : "",
				      op->kind == NPF_ENVOP_SET ? op->value : "");
		assert_true(o < len);
	}
	if (p->n_ops == 0)
		snprintf(buf, len, "-");
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* The same table drives the TaskProlog's test: both implementations must agree. */
static void shared_cases(void **state)
{
	FILE *f = fopen(NPF_FIXTURES "/envmarker/cases.txt", "r");
	char line[2048], got[2048];
	int n = 0;
	(void)state;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *field[5], *save = NULL;
		struct fake_env task, rep;
		struct npf_envreply reply;
		struct npf_envplan plan;
		int nf = 0;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		for (char *tok = strtok_r(line, "|", &save); tok && nf < 5;
		     tok = strtok_r(NULL, "|", &save))
			field[nf++] = trim(tok);
		assert_int_equal(nf, 5);
		parse_env(field[1], &task);
		parse_env(field[2], &rep);
		to_reply(&rep, &reply);
		assert_int_equal(npf_envmarker_plan(&reply, field[3], lookup, &task, &plan), 0);
		render(&plan, got, sizeof(got));
		if (strcmp(got, field[4]) != 0)
			fail_msg("case %s:\n got  %s\n want %s", field[0], got, field[4]);
		npf_envplan_clear(&plan);
		npf_envreply_clear(&reply);
		n++;
	}
	fclose(f);
	assert_true(n >= 10);
}

static void counters_and_other_node(void **state)
{
	struct fake_env task, rep;
	struct npf_envreply reply;
	struct npf_envplan plan;
	char t[] = "NCCL_SOCKET_IFNAME=eth9 GLOO_SOCKET_IFNAME=fab1 NCCL_IB_HCA=mlx5_1 "
		   "NETPREFLIGHT_NODE=node1 NETPREFLIGHT_VARS=GLOO_SOCKET_IFNAME,NCCL_IB_HCA";
	char r[] = "NCCL_SOCKET_IFNAME=fab0 GLOO_SOCKET_IFNAME=fab0";
	(void)state;

	parse_env(t, &task);
	parse_env(r, &rep);
	to_reply(&rep, &reply);
	assert_int_equal(npf_envmarker_plan(&reply, "node2", lookup, &task, &plan), 0);
	assert_string_equal(plan.other_node, "node1");
	assert_int_equal(plan.n_kept, 1);     /* the user's NCCL_SOCKET_IFNAME */
	assert_int_equal(plan.n_replaced, 2); /* GLOO replaced, NCCL_IB_HCA removed */
	npf_envplan_clear(&plan);
	assert_null(plan.ops);
	npf_envplan_clear(&plan);
	npf_envreply_clear(&reply);
}

static void bad_arguments(void **state)
{
	struct fake_env task = {0};
	struct npf_envplan plan;
	(void)state;

	assert_int_equal(npf_envmarker_plan(NULL, NULL, lookup, &task, &plan), -EINVAL);
	assert_int_equal(npf_envmarker_plan(NULL, "node1", NULL, &task, &plan), -EINVAL);
	assert_int_equal(npf_envmarker_plan(NULL, "node1", lookup, &task, NULL), -EINVAL);
	/* No reply at all and no marker: nothing to do. */
	assert_int_equal(npf_envmarker_plan(NULL, "node1", lookup, &task, &plan), 0);
	assert_int_equal(plan.n_ops, 0);
	npf_envplan_clear(&plan);
}

/* A list too long to carry is dropped whole, never cut in the middle of a name. */
static void list_overflow(void **state)
{
	struct fake_env task = {0};
	struct npf_envreply reply = {0};
	struct npf_envplan plan;
	(void)state;

	reply.vars = calloc(NPF_ENVREPLY_MAX_VARS, sizeof(*reply.vars));
	assert_non_null(reply.vars);
	for (int i = 0; i < NPF_ENVREPLY_MAX_VARS; i++) {
		snprintf(reply.vars[i].name, sizeof(reply.vars[i].name),
			 "NCCL_A_VERY_LONG_VARIABLE_NAME_NUMBER_%02d", i);
		snprintf(reply.vars[i].value, sizeof(reply.vars[i].value), "x");
	}
	reply.n_vars = NPF_ENVREPLY_MAX_VARS;
	assert_int_equal(npf_envmarker_plan(&reply, "node1", lookup, &task, &plan), 0);
	assert_int_equal(plan.n_ops, NPF_ENVREPLY_MAX_VARS + 2);
	assert_string_equal(plan.ops[plan.n_ops - 1].name, NPF_ENVMARKER_VARS);
	assert_int_equal(plan.ops[plan.n_ops - 1].kind, NPF_ENVOP_UNSET);
	npf_envplan_clear(&plan);
	npf_envreply_clear(&reply);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(shared_cases),
	    cmocka_unit_test(counters_and_other_node),
	    cmocka_unit_test(bad_arguments),
	    cmocka_unit_test(list_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
