// SPDX-License-Identifier: MIT
/* The built CLI against a one-shot fake daemon: for every verdict, the exit code of check
 * and env, the human verdict line and whether env's assignments reach stdout (docs/json.md, "Exit status of check and
 * env"). degraded (the job check moved the job to a worse network, docs/decision.md §10)
 * must behave as ok for a caller: exit 0, the environment printed, the line saying so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api.h"
#include "envfmt.h"
#include "recommend.h"

static char cli[PATH_MAX];
static char dir[] = "/tmp/npf-cli-verdict-XXXXXX";

static int setup(void **state)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	if (n <= 0 || !mkdtemp(dir))
		return -1;
	self[n] = '\0';
	/* The CLI lives next to this test in the build tree: <build>/cli/netpreflight. */
	snprintf(cli, sizeof(cli), "%s/../cli/netpreflight", dirname(self));
	return 0;
}

static int teardown(void **state)
{
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/out", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/err", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}

static bool read_all(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t r = read(fd, (char *)buf + got, len - got);

		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* Listens on <dir>/sock before returning (the CLI connects at once) and answers the
 * first request with reply from a child, bounded by an alarm so a stuck client cannot
 * hang the test. Returns the child's pid. */
static pid_t serve_once(const json_t *reply)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *frame = NULL;
	size_t len = 0;
	pid_t pid;
	int s;

	assert_int_equal(npf_api_frame_encode(reply, NPF_API_MAX_REPLY, &frame, &len), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
	unlink(sa.sun_path);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s, 1), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint8_t hdr[NPF_API_HDR_LEN];
		uint32_t n;
		char *body;
		int c;

		alarm(30);
		c = accept(s, NULL, NULL);
		if (c < 0 || !read_all(c, hdr, sizeof(hdr)) ||
		    npf_api_frame_len(hdr, NPF_API_MAX_REQUEST, &n) < 0 || !(body = malloc(n)) ||
		    !read_all(c, body, n) || write(c, frame, len) != (ssize_t)len)
			_exit(1);
		_exit(0);
	}
	close(s);
	free(frame);
	return pid;
}

/* A daemon's decision saying verdict, with one variable (owned: npf_recommendation_clear). */
static void make_rec(struct npf_recommendation *rp, enum npf_verdict verdict)
{
	struct npf_recommendation r = { 0 };

	r.verdict = verdict;
	snprintf(r.summary, sizeof(r.summary), "%s: eno1 (10.0.0.0/24) works to and from 1 peer",
		 npf_verdict_name(verdict));
	r.have_choice = true;
	snprintf(r.ifname, sizeof(r.ifname), "eno1");
	snprintf(r.cidr, sizeof(r.cidr), "10.0.0.0/24");
	r.addr.family = AF_INET;
	r.addr.prefixlen = 24;
	assert_int_equal(inet_pton(AF_INET, "10.0.0.1", r.addr.addr), 1);
	r.network = r.addr;
	r.network.addr[3] = 0;
	r.vars = calloc(1, sizeof(*r.vars));
	assert_non_null(r.vars);
	r.n_vars = 1;
	snprintf(r.vars[0].name, sizeof(r.vars[0].name), "NCCL_SOCKET_IFNAME");
	r.vars[0].value = strdup("=eno1");
	assert_non_null(r.vars[0].value);
	r.nccl_version = NPF_NCCL_VERSION_CURRENT;
	*rp = r;
}

/* The env reply of a daemon whose decision says verdict. */
static json_t *env_reply(enum npf_verdict verdict)
{
	struct npf_recommendation r;
	json_t *j;

	make_rec(&r, verdict);
	j = npf_api_env_reply(&r, "shell", true, 0);
	assert_non_null(j);
	npf_recommendation_clear(&r);
	return j;
}

/* The check reply (docs/protocol.md, "The check object"): node1 and node2, eno1 ok both
 * ways, and the decision saying verdict. */
static json_t *check_reply(enum npf_verdict verdict)
{
	struct npf_recommendation r;
	struct npf_check c = { .started_unix_ms = 1700000000000ull, .duration_ms = 12,
			       .timeout_ms = 3000 };
	json_t *j;

	make_rec(&r, verdict);
	c.n_nodes = 2;
	c.nodes = calloc(2, sizeof(*c.nodes));
	c.links = calloc(1, sizeof(*c.links));
	assert_true(c.nodes && c.links);
	for (int i = 0; i < 2; i++) {
		snprintf(c.nodes[i].name, sizeof(c.nodes[i].name), "node%d", i + 1);
		c.nodes[i].instance = 1 + (uint64_t)i;
		c.nodes[i].available = true;
		c.nodes[i].probed = i > 0;
	}
	c.n_links = 1;
	snprintf(c.links[0].ifname, sizeof(c.links[0].ifname), "eno1");
	c.links[0].peer = 1;
	c.links[0].fwd = c.links[0].rev = NPF_OUT_OK;
	snprintf(c.links[0].peer_if, sizeof(c.links[0].peer_if), "eno1");
	c.links[0].peer_addr = r.addr;
	c.links[0].peer_addr.addr[3] = 2;
	j = json_pack("{s:i, s:b, s:o, s:b, s:i}", "version", NPF_API_VERSION, "ok", 1, "check",
		      npf_check_to_json(&c, &r), "cached", 0, "age_ms", 0);
	assert_non_null(j);
	npf_recommendation_clear(&r);
	npf_check_clear(&c);
	return j;
}

/* Runs `netpreflight --socket <dir>/sock <cmd> --nodes node1,node2` against reply;
 * returns the exit status, stdout and stderr (malloc'd, caller frees). */
static int run_cli(const char *command, const json_t *reply, char **out, char **err)
{
	char cmd[3 * PATH_MAX], path[PATH_MAX];
	pid_t pid;
	int st, child;

	if (access(cli, X_OK) != 0)
		npf_skip("the CLI is not built in this configuration (%s)", cli);
	pid = serve_once(reply);
	snprintf(cmd, sizeof(cmd), "%s --socket %s/sock %s --nodes node1,node2 >%s/out 2>%s/err",
		 cli, dir, command, dir, dir);
	st = system(cmd);
	assert_int_equal(waitpid(pid, &child, 0), pid);
	assert_true(WIFEXITED(child) && WEXITSTATUS(child) == 0);
	assert_true(WIFEXITED(st));
	for (int i = 0; i < 2; i++) {
		char **dst = i == 0 ? out : err;
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "%s/%s", dir, i == 0 ? "out" : "err");
		f = fopen(path, "r");
		assert_non_null(f);
		*dst = calloc(1, 8192);
		assert_non_null(*dst);
		n = fread(*dst, 1, 8191, f);
		(*dst)[n] = '\0';
		fclose(f);
	}
	return WEXITSTATUS(st);
}

/* One row per verdict: what a caller of `env` sees. */
static const struct {
	enum npf_verdict verdict;
	int exit;
	const char *line; /* the human verdict line on stderr */
	bool exports;	  /* stdout carries the assignments */
} cases[] = {
	{ NPF_VERDICT_OK, 0, "netpreflight: ok: eno1 (10.0.0.0/24)", true },
	{ NPF_VERDICT_DEGRADED, 0, "netpreflight: DEGRADED: degraded: eno1 (10.0.0.0/24)", true },
	{ NPF_VERDICT_FAIL, 1, "netpreflight: NOT OK: fail: eno1", false },
	{ NPF_VERDICT_UNKNOWN, 3, "netpreflight: NOT OK: unknown: eno1", false },
};
_Static_assert(sizeof(cases) / sizeof(cases[0]) == NPF_VERDICT__COUNT, "a row per verdict");

static void env_exit_and_line_per_verdict(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *reply = env_reply(cases[i].verdict);
		char *out, *err;
		int rc = run_cli("env", reply, &out, &err);

		if (rc != cases[i].exit || !strstr(err, cases[i].line))
			fail_msg("verdict %s: exit %d (want %d), stderr: %s",
				 npf_verdict_name(cases[i].verdict), rc, cases[i].exit, err);
		assert_int_equal(strstr(out, "export NCCL_SOCKET_IFNAME='=eno1'\n") != NULL,
				 cases[i].exports);
		free(out);
		free(err);
		json_decref(reply);
	}
}

/* check: the same exit codes, and the verdict line on stdout names the verdict. */
static void check_exit_and_line_per_verdict(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *reply = check_reply(cases[i].verdict);
		char *out, *err, want[96];
		int rc = run_cli("check", reply, &out, &err);

		snprintf(want, sizeof(want), "verdict: %s: eno1 (10.0.0.0/24)",
			 npf_verdict_name(cases[i].verdict));
		if (rc != cases[i].exit || !strstr(out, want))
			fail_msg("verdict %s: exit %d (want %d), stdout: %s, stderr: %s",
				 npf_verdict_name(cases[i].verdict), rc, cases[i].exit, out, err);
		free(out);
		free(err);
		json_decref(reply);
	}
}

/* A verdict this CLI does not know is an error (exit 2), never a silent ok. */
static void env_unknown_verdict_name(void **state)
{
	json_t *reply = env_reply(NPF_VERDICT_OK);
	char *out, *err;

	(void)state;
	assert_int_equal(json_object_set_new(reply, "verdict", json_string("suspect")), 0);
	assert_int_equal(run_cli("env", reply, &out, &err), 2);
	assert_string_equal(out, "");
	assert_non_null(strstr(err, "malformed env reply"));
	free(out);
	free(err);
	json_decref(reply);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(env_exit_and_line_per_verdict),
		cmocka_unit_test(env_unknown_verdict_name),
		cmocka_unit_test(check_exit_and_line_per_verdict),
	};

	signal(SIGPIPE, SIG_IGN);
	return npf_run_tests(tests, setup, teardown);
}
