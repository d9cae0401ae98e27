/* SPDX-License-Identifier: MIT */
/* What every cmocka unit test shares: a skip that CTest sees.
 *
 * cmocka's skip() marks one test SKIPPED but the binary still exits 0, so CTest would
 * report Passed. npf_skip() counts the skip, and npf_run_tests() turns "no failure but
 * something skipped" into exit status NPF_TEST_SKIPPED, which tests/CMakeLists.txt
 * registers as SKIP_RETURN_CODE; scripts/test under CI=true then fails the run. */
#ifndef NPF_TEST_H
#define NPF_TEST_H

#include <stdio.h>

#define NPF_TEST_SKIPPED 77

/* Mutable test-binary state: how many tests were skipped (header-only on purpose, one
 * copy per test binary). */
static int npf_test_skips;

#define npf_skip(...)                                  \
	do {                                           \
		fprintf(stderr, "SKIP: " __VA_ARGS__); \
		fputc('\n', stderr);                   \
		npf_test_skips++;                      \
		skip();                                \
	} while (0)

static inline int npf_test_exit(int failed)
{
	if (failed)
		return failed;
	return npf_test_skips ? NPF_TEST_SKIPPED : 0;
}

#define npf_run_tests(tests, setup, teardown) \
	npf_test_exit(cmocka_run_group_tests(tests, setup, teardown))

#endif
