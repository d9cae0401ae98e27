// SPDX-License-Identifier: MIT
/* Unit tests for lib/launcher.c: which launcher a job's environment names, its job tag, and
 * the node lists of Slurm, PBS, LSF and mpirun/DeepSpeed/Hydra hostfiles. */
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
#include "launcher.h"

/* ---- node lists: one row per case ------------------------------------------------------- */

static const struct nodes_case {
	const char *what;
	enum npf_nodes_form form;
	const char *in;
	int rc;		  /* the count, or -errno */
	const char *want; /* space-separated names, or a piece of the error */
} nodes_cases[] = {
	{ "slurm hostlist", NPF_NODES_HOSTLIST, "gpu[001-003],login1", 4,
	  "gpu001 gpu002 gpu003 login1" },
	{ "slurm bad hostlist", NPF_NODES_HOSTLIST, "gpu[1-", -EINVAL, "unbalanced" },
	{ "slurm name starting with '-'", NPF_NODES_HOSTLIST, "-x", -EINVAL, "name 1: bad host" },
	{ "pbs node file, a line per slot", NPF_NODES_FILE, "n2\nn2\nn2\nn1\nn1\nn3\n", 3,
	  "n2 n1 n3" },
	{ "pbs node file, fqdn, CRLF, no last newline", NPF_NODES_FILE,
	  "n1.cluster.local\r\nn2.cluster.local", 2, "n1.cluster.local n2.cluster.local" },
	{ "open mpi hostfile", NPF_NODES_FILE,
	  "# the job's hosts\nnodeA slots=4 max_slots=8\n\n  nodeB slots=4 # big one\nnodeA slots=2\n",
	  2, "nodeA nodeB" },
	{ "deepspeed hostfile", NPF_NODES_FILE, "worker-1 slots=8\nworker-2 slots=8\n", 2,
	  "worker-1 worker-2" },
	{ "hydra hostfile", NPF_NODES_FILE, "h1:4\nh2:4\nh3\n", 3, "h1 h2 h3" },
	{ "hydra bad count", NPF_NODES_FILE, "h1:x\n", -EINVAL, "line 1: bad slot count" },
	{ "hydra empty count", NPF_NODES_FILE, "h1:\n", -EINVAL, "line 1: bad slot count" },
	{ "hostfile stray word", NPF_NODES_FILE, "h1 slots=2\nh2 four\n", -EINVAL,
	  "line 2: 'four' is not key=value" },
	{ "hostfile empty value", NPF_NODES_FILE, "h1 slots=\n", -EINVAL, "not key=value" },
	{ "hostfile bad name", NPF_NODES_FILE, "ok1\nb@d\n", -EINVAL, "line 2: bad host name" },
	{ "hostfile long name", NPF_NODES_FILE,
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", -EINVAL,
	  "line 1: a host name of 69 bytes" },
	{ "only comments", NPF_NODES_FILE, "# nothing\n\n   \n", -EINVAL, "no host" },
	{ "empty file", NPF_NODES_FILE, "", -EINVAL, "no host" },
	{ "lsf mcpu", NPF_NODES_MCPU, "hostA 4 hostB 4 hostC 1", 3, "hostA hostB hostC" },
	{ "lsf mcpu, spaces around", NPF_NODES_MCPU, "  hostA 4   hostA 2 hostB 1 ", 2,
	  "hostA hostB" },
	{ "lsf mcpu missing count", NPF_NODES_MCPU, "hostA 4 hostB", -EINVAL,
	  "word 3: host 'hostB' without a slot count" },
	{ "lsf mcpu count not a number", NPF_NODES_MCPU, "hostA four", -EINVAL,
	  "without a slot count" },
};

/* The names joined by single spaces. */
static void join(char **v, size_t n, char *out, size_t len)
{
	size_t off = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(out + off, len - off, "%s%s", i ? " " : "", v[i]);
}

static void node_lists(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(nodes_cases) / sizeof(nodes_cases[0]); i++) {
		const struct nodes_case *c = &nodes_cases[i];
		char **v = (char **)1, err[160], got[1024];
		size_t n = 99;
		int rc = npf_launcher_nodes(c->form, c->in, strlen(c->in), &v, &n, err, sizeof(err));

		if (rc != c->rc)
			fail_msg("%s: want %d got %d (%s)", c->what, c->rc, rc, err);
		if (rc < 0) {
			assert_null(v);
			assert_int_equal(n, 0);
			if (!strstr(err, c->want))
				fail_msg("%s: error '%s' lacks '%s'", c->what, err, c->want);
			continue;
		}
		assert_int_equal((size_t)rc, n);
		assert_string_equal(err, "");
		join(v, n, got, sizeof(got));
		if (strcmp(got, c->want) != 0)
			fail_msg("%s: got '%s', want '%s'", c->what, got, c->want);
		npf_hostlist_free(v, n);
	}
}

/* A NUL inside the bytes (a binary file given as a hostfile) is refused, not cut short. */
static void nul_byte(void **state)
{
	static const char in[] = "h1\n\0h2\n";
	char **v, err[128];
	size_t n;

	(void)state;
	assert_int_equal(npf_launcher_nodes(NPF_NODES_FILE, in, sizeof(in) - 1, &v, &n, err,
					    sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "NUL"));
}

/* More unique hosts than one check takes: refused before the daemon would. */
static void too_many(void **state)
{
	size_t len = (NPF_API_MAX_PEERS + 1) * 8;
	char *buf = malloc(len + 1), **v, err[128];
	size_t off = 0, n;

	(void)state;
	assert_non_null(buf);
	for (unsigned i = 0; i <= NPF_API_MAX_PEERS; i++)
		off += (size_t)snprintf(buf + off, len + 1 - off, "h%05u\n", i);
	assert_int_equal(npf_launcher_nodes(NPF_NODES_FILE, buf, off, &v, &n, err, sizeof(err)),
			 -E2BIG);
	/* One host fewer fits. */
	off = (size_t)(strstr(buf, "h04096\n") - buf);
	assert_int_equal(npf_launcher_nodes(NPF_NODES_FILE, buf, off, &v, &n, err, sizeof(err)),
			 (int)NPF_API_MAX_PEERS);
	npf_hostlist_free(v, n);
	free(buf);
}

/* ---- job tags ------------------------------------------------------------------------------ */

static const struct tag_case {
	const char *id, *restart;
	int rc;
	const char *want;
} tag_cases[] = {
	{ "1234", NULL, 0, "1234" },
	{ "1234", "2", 0, "1234.r2" }, /* a requeued Slurm job: the Prolog's tag */
	{ "1234", "", 0, "1234" },
	{ "1234", "x1", 0, "1234" }, /* not a count: no suffix, as the Prolog */
	{ "5678.pbs-server", NULL, 0, "5678.pbs-server" },
	{ "123[4].srv", NULL, 0, "123_4_.srv" }, /* a PBS array job */
	{ "", NULL, -EINVAL, "" },
	{ "0123456789012345678901234567890123456789012345678901234567890123", NULL, 0,
	  "0123456789012345678901234567890123456789012345678901234567890123" },
	{ "0123456789012345678901234567890123456789012345678901234567890123", "1", -EINVAL, "" },
};

static void job_tags(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(tag_cases) / sizeof(tag_cases[0]); i++) {
		const struct tag_case *c = &tag_cases[i];
		char out[NPF_API_JOB_MAX];
		int rc = npf_launcher_tag(c->id, c->restart, out, sizeof(out));

		if (rc != c->rc)
			fail_msg("tag of '%s' restart '%s': want %d got %d", c->id,
				 c->restart ? c->restart : "(null)", c->rc, rc);
		if (rc == 0 && strcmp(out, c->want) != 0)
			fail_msg("tag of '%s': got '%s' want '%s'", c->id, out, c->want);
	}
}

/* Standalone ports: the same tag the same port; consecutive job ids different ports, also
 * across a requeue suffix; every port inside the range. */
static void ports(void **state)
{
	(void)state;
	assert_int_equal(npf_launcher_port("1234"), NPF_RUN_PORT_BASE + 1234);
	assert_int_equal(npf_launcher_port("1234.r2"), NPF_RUN_PORT_BASE + 1234);
	assert_int_equal(npf_launcher_port("1234.pbs-server"), NPF_RUN_PORT_BASE + 1234);
	assert_int_equal(npf_launcher_port("13234"), NPF_RUN_PORT_BASE + 1234);
	for (unsigned id = 1000; id < 1000 + NPF_RUN_PORT_SPAN; id += 7) {
		char a[16], b[16];

		snprintf(a, sizeof(a), "%u", id);
		snprintf(b, sizeof(b), "%u", id + 1);
		assert_int_not_equal(npf_launcher_port(a), npf_launcher_port(b));
	}
	assert_int_equal(npf_launcher_port("hf-42"), npf_launcher_port("hf-42"));
	assert_int_not_equal(npf_launcher_port("hf-42"), npf_launcher_port("hf-43"));
	for (const char *t = "abcdefghijklmnopqrstuvwxyz"; *t; t++) {
		uint16_t p = npf_launcher_port(t);

		assert_true(p >= NPF_RUN_PORT_BASE && p < NPF_RUN_PORT_BASE + NPF_RUN_PORT_SPAN);
	}
	assert_true(npf_launcher_port("99999999999999999999999") <
		    NPF_RUN_PORT_BASE + NPF_RUN_PORT_SPAN);
}

/* ---- detection: a job's environment, as NAME=value pairs ----------------------------------- */

static const char *lookup(const char *name, void *ud)
{
	const char *const *env = ud;
	size_t n = strlen(name);

	for (; *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static const struct detect_case {
	const char *what;
	const char *env[8];
	int rc;
	const char *launcher, *var, *nodes, *job;
} detect_cases[] = {
	{ "slurm", { "SLURM_JOB_ID=77", "SLURM_JOB_NODELIST=gpu[1-4]", NULL }, 0, "slurm",
	  "SLURM_JOB_NODELIST", "gpu[1-4]", "77" },
	{ "slurm requeued", { "SLURM_JOB_ID=77", "SLURM_JOB_NODELIST=g1", "SLURM_RESTART_COUNT=3" },
	  0, "slurm", "SLURM_JOB_NODELIST", "g1", "77.r3" },
	{ "slurm old names", { "SLURM_JOBID=9", "SLURM_NODELIST=a,b", NULL }, 0, "slurm",
	  "SLURM_NODELIST", "a,b", "9" },
	{ "pbs", { "PBS_JOBID=12.srv", "PBS_NODEFILE=/var/spool/pbs/aux/12.srv", NULL }, 0, "pbs",
	  "PBS_NODEFILE", "/var/spool/pbs/aux/12.srv", "12.srv" },
	{ "lsf", { "LSB_JOBID=5", "LSB_MCPU_HOSTS=a 2 b 2", "LSB_DJOB_HOSTFILE=/tmp/h" }, 0, "lsf",
	  "LSB_MCPU_HOSTS", "a 2 b 2", "5" },
	{ "lsf with its host file only", { "LSB_JOBID=5", "LSB_DJOB_HOSTFILE=/tmp/h", NULL }, 0,
	  "lsf", "LSB_DJOB_HOSTFILE", "/tmp/h", "5" },
	/* A Slurm job inside an LSF one (or a leaked variable): the first row wins. */
	{ "slurm before lsf", { "LSB_JOBID=5", "LSB_MCPU_HOSTS=a 2", "SLURM_JOB_ID=8",
	  "SLURM_JOB_NODELIST=n1", NULL }, 0, "slurm", "SLURM_JOB_NODELIST", "n1", "8" },
	/* Half a pair is no launcher: a job id without its node list, or an empty one. */
	{ "slurm id only, pbs complete", { "SLURM_JOB_ID=8", "PBS_JOBID=1", "PBS_NODEFILE=/f" }, 0,
	  "pbs", "PBS_NODEFILE", "/f", "1" },
	{ "empty node list", { "SLURM_JOB_ID=8", "SLURM_JOB_NODELIST=", NULL }, -ENOENT, NULL, NULL, NULL, NULL },
	{ "nothing", { "HOME=/root", NULL }, -ENOENT, NULL, NULL, NULL, NULL },
	{ "job id too long for a tag", { "PBS_JOBID="
	  "0123456789012345678901234567890123456789012345678901234567890123456789",
	  "PBS_NODEFILE=/f", NULL }, -EINVAL, NULL, NULL, NULL, NULL },
};

static void detection(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(detect_cases) / sizeof(detect_cases[0]); i++) {
		const struct detect_case *c = &detect_cases[i];
		const char *env[8];
		struct npf_launch l;
		int rc;

		memcpy(env, c->env, sizeof(env));
		rc = npf_launcher_detect(lookup, env, &l);

		if (rc != c->rc)
			fail_msg("%s: want %d got %d", c->what, c->rc, rc);
		if (rc < 0) {
			assert_null(l.nodes);
			continue;
		}
		assert_string_equal(l.launcher, c->launcher);
		assert_string_equal(l.nodes_var, c->var);
		assert_string_equal(l.nodes, c->nodes);
		if (strcmp(l.job, c->job) != 0)
			fail_msg("%s: job tag '%s', want '%s'", c->what, l.job, c->job);
		npf_launch_clear(&l);
		assert_null(l.nodes);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(node_lists), cmocka_unit_test(nul_byte),
		cmocka_unit_test(too_many),   cmocka_unit_test(job_tags),
		cmocka_unit_test(detection),  cmocka_unit_test(ports),
	};

	return npf_run_tests(tests, NULL, NULL);
}
