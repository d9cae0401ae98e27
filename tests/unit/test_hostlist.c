// SPDX-License-Identifier: MIT
/* Unit tests for Slurm hostlist expansion: ranges, padding, products, errors, caps. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs setjmp.h, stdarg.h, stddef.h and stdint.h first. */
#include <cmocka.h>

#include "npf_test.h"

#include "hostlist.h"
#include "model.h"

/* Expands expr and compares with the space-separated list want. */
static void expect(const char *expr, const char *want)
{
	char **names = NULL, err[128], joined[8192] = "";
	size_t n = 99, off = 0;
	int rc = npf_hostlist_expand(expr, &names, &n, err, sizeof(err));

	if (rc < 0)
		fail_msg("'%s' failed: %d %s", expr, rc, err);
	assert_int_equal((size_t)rc, n);
	assert_string_equal(err, "");
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(joined + off, sizeof(joined) - off, "%s%s", i ? " " : "",
					names[i]);
	assert_string_equal(joined, want);
	npf_hostlist_free(names, n);
}

/* Expects failure with code rc and an error message containing msg. */
static void expect_err(const char *expr, int code, const char *msg)
{
	char **names = (char **)1, err[128];
	size_t n = 99;
	int rc = npf_hostlist_expand(expr, &names, &n, err, sizeof(err));

	if (rc != code)
		fail_msg("'%s': want %d got %d (%s)", expr, code, rc, err);
	assert_null(names);
	assert_int_equal(n, 0);
	if (!strstr(err, msg))
		fail_msg("'%s': message '%s' lacks '%s'", expr, err, msg);
}

static void plain_names(void **state)
{
	(void)state;
	expect("login1", "login1");
	expect("a,b,c", "a b c");
	expect("node-1.cluster_x", "node-1.cluster_x");
}

static void ranges_and_lists(void **state)
{
	(void)state;
	expect("gpu[001-004,010],login1", "gpu001 gpu002 gpu003 gpu004 gpu010 login1");
	expect("host[1-3],host5", "host1 host2 host3 host5");
	expect("node[0,3-4,8],linux,linux[2,5]", "node0 node3 node4 node8 linux linux2 linux5");
	expect("n[7]", "n7");
	expect("[1-3]", "1 2 3");
}

static void padding(void **state)
{
	(void)state;
	expect("n[8-10]", "n8 n9 n10");
	expect("n[08-10]", "n08 n09 n10");
	expect("n[0098-0101]", "n0098 n0099 n0100 n0101");
	/* The lower bound alone sets the width. */
	expect("n[1-010]", "n1 n2 n3 n4 n5 n6 n7 n8 n9 n10");
	expect("n[9-9]", "n9");
	expect("n[000]", "n000");
}

static void suffixes_and_products(void **state)
{
	(void)state;
	expect("n[1-3]-ib", "n1-ib n2-ib n3-ib");
	expect("rack[1-2]-node[01-02]", "rack1-node01 rack1-node02 rack2-node01 rack2-node02");
	expect("a[0-1].b[5,7].c", "a0.b5.c a0.b7.c a1.b5.c a1.b7.c");
	expect("[1-2][3-4]", "13 14 23 24");
}

static void whitespace_trimmed_at_edges(void **state)
{
	(void)state;
	expect("  a , b\t,\nc  ", "a b c");
	expect_err("gpu 1", -EINVAL, "whitespace inside a name at offset 3");
	expect_err("gpu[1, 2]", -EINVAL, "whitespace inside brackets at offset 6");
	expect_err("gpu[1 -2]", -EINVAL, "whitespace inside brackets at offset 5");
}

static void duplicates_keep_first(void **state)
{
	(void)state;
	expect("tux2,tux1,tux2", "tux2 tux1");
	expect("n[1-3],n[2-5],n1", "n1 n2 n3 n4 n5");
	expect("n[1-3,2,1]", "n1 n2 n3");
	/* Same number, different width: different names. */
	expect("n[1,01]", "n1 n01");
}

static void syntax_errors(void **state)
{
	(void)state;
	expect_err("gpu[1-", -EINVAL, "unbalanced '[' at offset 3");
	expect_err("gpu[1-2,login", -EINVAL, "unbalanced '[' at offset 3");
	expect_err("gpu1]", -EINVAL, "unbalanced ']' at offset 4");
	expect_err("gpu[1-[2]]", -EINVAL, "nested '[' at offset 6");
	expect_err("gpu[]", -EINVAL, "empty range at offset 4");
	expect_err("gpu[1,]", -EINVAL, "empty range at offset 6");
	expect_err("gpu[,1]", -EINVAL, "empty range at offset 4");
	expect_err("gpu[-3]", -EINVAL, "non-digit '-' at offset 4");
	expect_err("gpu[3-1]", -EINVAL, "range 3-1 at offset 4 ends below its start");
	expect_err("gpu[a-b]", -EINVAL, "non-digit 'a' at offset 4");
	expect_err("gpu[1-b]", -EINVAL, "non-digit 'b' at offset 6");
	expect_err("gpu[1-2-3]", -EINVAL, "unexpected '-' at offset 7");
	expect_err("bgl[000x133]", -EINVAL, "unexpected 'x' at offset 7");
	expect_err("gpu[1]x[", -EINVAL, "unbalanced '[' at offset 7");
	expect_err("a,,b", -EINVAL, "empty name at offset 2");
	expect_err(",a", -EINVAL, "empty name at offset 0");
	expect_err("a,", -EINVAL, "empty name at offset 2");
	expect_err("a, ", -EINVAL, "empty name at offset 3");
	expect_err("", -EINVAL, "empty hostlist");
	expect_err("  \t", -EINVAL, "empty hostlist");
	expect_err("node/1", -EINVAL, "invalid character '/' at offset 4");
	expect_err("node\x01", -EINVAL, "invalid character 0x01 at offset 4");
	expect_err("n[1234567890123456789]", -EINVAL, "longer than 18 digits at offset 2");
}

static void null_and_no_err_buffer(void **state)
{
	char **names = (char **)1;
	size_t n = 5;
	(void)state;

	assert_int_equal(npf_hostlist_expand(NULL, &names, &n, NULL, 0), -EINVAL);
	assert_null(names);
	assert_int_equal(npf_hostlist_expand("x[", &names, &n, NULL, 0), -EINVAL);
	assert_int_equal(npf_hostlist_expand("x[1-2]", &names, &n, NULL, 0), 2);
	npf_hostlist_free(names, n);
	npf_hostlist_free(NULL, 0);
}

static void tiny_err_buffer_is_terminated(void **state)
{
	char **names, err[6];
	size_t n;
	(void)state;

	memset(err, 'X', sizeof(err));
	assert_int_equal(npf_hostlist_expand("gpu[1-", &names, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unbal");
}

static void name_length_limit(void **state)
{
	char expr[128], want[128];
	(void)state;

	/* 63 bytes is the longest name NPF_NAME_MAX holds. */
	memset(expr, 'a', 63);
	expr[63] = '\0';
	expect(expr, expr);
	memset(expr, 'a', 64);
	expr[64] = '\0';
	expect_err(expr, -EINVAL, "expands to 64 bytes (max 63)");

	/* The padded number counts: 60 + "[1-100]" is 63 at the widest. */
	memset(expr, 'b', 60);
	strcpy(expr + 60, "[100]");
	memcpy(want, expr, 60);
	strcpy(want + 60, "100");
	expect(expr, want);
	strcpy(expr + 60, "[1-1000]");
	expect_err(expr, -EINVAL, "expands to 64 bytes");
	strcpy(expr + 60, "[0001]");
	expect_err(expr, -EINVAL, "expands to 64 bytes");
}

static void caps_checked_before_expanding(void **state)
{
	char **names;
	size_t n;
	(void)state;

	/* Each of these would need gigabytes if expanded first. */
	expect_err("n[0-999999999]", -E2BIG, "more than 65536 names");
	expect_err("n[0-999999999999999999]", -E2BIG, "more than 65536");
	expect_err("n[0-99999][0-99999]", -E2BIG, "more than 65536");
	expect_err("a[1-4][1-4][1-4][1-4][1-4][1-4][1-4][1-4][1-4]", -E2BIG, "more than");
	/* Duplicates count toward the cap: it bounds work, not output. */
	expect_err("n[1-40000],n[1-40000]", -E2BIG, "more than 65536");

	/* Exactly at the cap works. */
	assert_int_equal(npf_hostlist_expand("n[00000-65535]", &names, &n, NULL, 0), 65536);
	assert_string_equal(names[0], "n00000");
	assert_string_equal(names[65535], "n65535");
	npf_hostlist_free(names, n);
	expect_err("n[00000-65536]", -E2BIG, "more than 65536");
}

static void many_tokens(void **state)
{
	size_t len = 3000 * 8;
	char *expr = malloc(len), **names;
	size_t n, off = 0;
	(void)state;

	assert_non_null(expr);
	for (int i = 0; i < 3000; i++)
		off += (size_t)snprintf(expr + off, len - off, "%sh%d", i ? "," : "", i % 1000);
	assert_int_equal(npf_hostlist_expand(expr, &names, &n, NULL, 0), 1000);
	assert_string_equal(names[0], "h0");
	assert_string_equal(names[999], "h999");
	npf_hostlist_free(names, n);
	free(expr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(plain_names),
	    cmocka_unit_test(ranges_and_lists),
	    cmocka_unit_test(padding),
	    cmocka_unit_test(suffixes_and_products),
	    cmocka_unit_test(whitespace_trimmed_at_edges),
	    cmocka_unit_test(duplicates_keep_first),
	    cmocka_unit_test(syntax_errors),
	    cmocka_unit_test(null_and_no_err_buffer),
	    cmocka_unit_test(tiny_err_buffer_is_terminated),
	    cmocka_unit_test(name_length_limit),
	    cmocka_unit_test(caps_checked_before_expanding),
	    cmocka_unit_test(many_tokens),
	};

	return npf_run_tests(tests, NULL, NULL);
}
