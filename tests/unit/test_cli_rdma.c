// SPDX-License-Identifier: MIT
/* Runs the built `netpreflight rdma` on captured sysfs fixtures: table markers, JSON contract, exit codes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The CLI lives next to this test in the build tree: <build>/cli/netpreflight. */
static char cli[PATH_MAX];

static int find_cli(void **state)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(cli, sizeof(cli), "%s/../cli/netpreflight", dirname(self));
	return 0;
}

/* Runs the CLI with a clean NCCL environment; returns its exit status and
 * its stdout in a malloc'd string (caller frees). */
static int run(const char *args, char **out)
{
	char cmd[PATH_MAX + 512];
	size_t len = 0, cap = 4096;
	FILE *p;
	int st;

	if (access(cli, X_OK) != 0)
		npf_skip("the CLI is not built in this configuration (%s)", cli);
	snprintf(cmd, sizeof(cmd),
		 "env -u NCCL_IB_ADDR_FAMILY -u NCCL_IB_ADDR_RANGE -u NCCL_IB_ROCE_VERSION_NUM "
		 "-u NCCL_IB_GID_INDEX %s %s 2>/dev/null",
		 cli, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	*out = malloc(cap);
	assert_non_null(*out);
	for (;;) {
		size_t r = fread(*out + len, 1, cap - len - 1, p);

		len += r;
		if (r == 0)
			break;
		if (len + 1 == cap) {
			cap *= 2;
			*out = realloc(*out, cap);
			assert_non_null(*out);
		}
	}
	(*out)[len] = '\0';
	st = pclose(p);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* The table line for index idx of dev (the GID table, not the port table). */
static const char *gid_line(const char *text, const char *dev, int idx, char *buf, size_t bufsz)
{
	const char *l = text;

	while (l && *l) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);

		if (strncmp(l, dev, strlen(dev)) == 0 && n < bufsz) {
			char tok[4][48];

			memcpy(buf, l, n);
			buf[n] = '\0';
			/* DEV PORT INDEX GID ...: match on the first three columns. */
			if (sscanf(buf, "%47s %47s %47s %47s", tok[0], tok[1], tok[2], tok[3]) == 4 &&
			    atoi(tok[2]) == idx && strchr(tok[3], ':'))
				return buf;
		}
		l = e ? e + 1 : NULL;
	}
	return NULL;
}

static void table_marks_nccl_choice(void **state)
{
	char *out, root[512], line[512];
	(void)state;

	snprintf(root, sizeof(root), "rdma --sysfs-root %s/sysfs/container-gaps", NPF_FIXTURES);
	assert_int_equal(run(root, &out), 0);
	assert_non_null(strstr(out, "DEV     PORT  INDEX  GID"));
	assert_non_null(gid_line(out, "mlx5_3", 7, line, sizeof(line)));
	assert_non_null(strstr(line, "198.18.1.7"));
	assert_non_null(strstr(line, "v2"));
	assert_non_null(strstr(line, "net1"));
	assert_non_null(strstr(line, "<- NCCL auto"));
	assert_non_null(gid_line(out, "mlx5_3", 6, line, sizeof(line)));
	assert_null(strstr(line, "<- NCCL"));
	/* The unpopulated index 0 an old NCCL would use still gets a row. */
	assert_non_null(strstr(out, "(unpopulated)"));
	assert_non_null(strstr(out, "warnings:"));
	free(out);
}

static void json_contract(void **state)
{
	char *out, args[512];
	json_t *j, *port;
	json_error_t err;
	(void)state;

	snprintf(args, sizeof(args), "--json rdma --sysfs-root %s/sysfs/two-hcas", NPF_FIXTURES);
	assert_int_equal(run(args, &out), 0);
	j = json_loads(out, 0, &err);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "schema")), "netpreflight.rdma");
	assert_int_equal(json_integer_value(json_object_get(j, "version")), 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "policy"),
							      "source")),
			    "defaults");
	assert_int_equal(json_array_size(json_object_get(j, "devices")), 2);
	port = json_array_get(json_object_get(json_array_get(json_object_get(j, "devices"), 1),
					      "ports"),
			      0);
	assert_int_equal(json_integer_value(json_object_get(port, "nccl_auto_gid")), 5);
	assert_string_equal(json_string_value(json_object_get(port, "netdev")), "ens1f1np1");
	json_decref(j);
	free(out);
}

static void exit_codes(void **state)
{
	char *out, args[512];
	(void)state;

	/* No class/infiniband in the tree: a note, success. */
	snprintf(args, sizeof(args), "rdma --sysfs-root %s/sysfs", NPF_FIXTURES);
	assert_int_equal(run(args, &out), 0);
	assert_non_null(strstr(out, "no RDMA devices"));
	free(out);
	assert_int_equal(run("rdma --sysfs-root /nonexistent/npf-rdma", &out), 2);
	free(out);
	assert_int_equal(run("rdma --bogus", &out), 2);
	free(out);
	/* This machine as it is: never an error, whether it has RDMA or not. */
	assert_int_equal(run("rdma", &out), 0);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_marks_nccl_choice),
		cmocka_unit_test(json_contract),
		cmocka_unit_test(exit_codes),
	};
	return npf_run_tests(tests, find_cli, NULL);
}
