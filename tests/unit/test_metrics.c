// SPDX-License-Identifier: MIT
/* Prometheus rendering (lib/metrics.c) and the atomic textfile writer (daemon/metrics.c,
 * through lib/sys/fileio: these cases cover npf_atomic_write). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "sparse_check.h"

/* The writer lives in the daemon, which is not a library: compile it in here. */
#include "../../daemon/metrics.c"

/* Structural check of the exposition format as node_exporter's parser applies
 * it: each family has HELP then TYPE once, its samples are contiguous and follow
 * them, a sample is "name[{labels}] value" with no timestamp, names and label
 * names match the Prometheus grammar, and the text ends with a newline. */
static void assert_valid_exposition(const char *text)
{
	char seen[64][96];
	size_t n_seen = 0;
	char cur[96] = "";
	const char *p = text;

	assert_true(strlen(text) > 0);
	assert_int_equal(text[strlen(text) - 1], '\n');
	while (*p) {
		const char *eol = strchr(p, '\n');
		char line[1024];
		size_t len;

		assert_non_null(eol);
		len = (size_t)(eol - p);
		assert_true(len < sizeof(line));
		memcpy(line, p, len);
		line[len] = '\0';
		p = eol + 1;
		if (strncmp(line, "# HELP ", 7) == 0) {
			char name[96];

			assert_int_equal(sscanf(line + 7, "%95s", name), 1);
			for (size_t i = 0; i < n_seen; i++)
				assert_string_not_equal(seen[i], name);
			assert_true(n_seen < 64);
			snprintf(seen[n_seen++], sizeof(seen[0]), "%s", name);
			snprintf(cur, sizeof(cur), "%s", name);
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			char name[96], type[32];

			assert_int_equal(sscanf(line + 7, "%95s %31s", name, type), 2);
			assert_string_equal(name, cur);
			assert_true(strcmp(type, "gauge") == 0 || strcmp(type, "counter") == 0);
			continue;
		}
		assert_true(line[0] != '#');
		/* Sample: the metric name is the current family (counters too: the
		 * family name keeps _total in format 0.0.4). */
		size_t nl = strspn(line, "abcdefghijklmnopqrstuvwxyz_0123456789");
		assert_true(nl > 0);
		assert_int_equal(nl, strlen(cur));
		assert_memory_equal(line, cur, nl);
		const char *rest = line + nl;
		if (*rest == '{') {
			bool in_str = false;

			rest++;
			while (*rest && (in_str || *rest != '}')) {
				if (in_str && *rest == '\\') {
					rest++;
					assert_true(*rest == '\\' || *rest == '"' || *rest == 'n');
				} else if (*rest == '"') {
					in_str = !in_str;
				} else if (!in_str) {
					assert_true(strchr("abcdefghijklmnopqrstuvwxyz_=,", *rest));
				} else {
					assert_true((unsigned char)*rest >= 0x20 &&
						    (unsigned char)*rest < 0x7f);
				}
				rest++;
			}
			assert_int_equal(*rest, '}');
			rest++;
		}
		assert_int_equal(*rest, ' ');
		rest++;
		/* Exactly one field: a number, no timestamp after it. */
		char *end;
		strtod(rest, &end);
		assert_true(end != rest);
		assert_int_equal(*end, '\0');
	}
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

#define assert_line(text, line)                                                                    \
	do {                                                                                       \
		if (!has_line(text, line))                                                        \
			fail_msg("missing line: %s\n--- got:\n%s", line, text);                   \
	} while (0)

static void set_addr4(struct npf_addr *a, const char *s)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->prefixlen = 24;
	assert_int_equal(inet_pton(AF_INET, s, a->addr), 1);
}

/* Three nodes: fab0 works both ways with both peers, docker0 is answered by the
 * wrong node forward and times out in reverse with one peer. */
struct fixture {
	struct npf_node nodes[3];
	struct npf_link links[4];
	struct npf_check chk;
};

static void make_check(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 3; i++) {
		snprintf(f->nodes[i].name, sizeof(f->nodes[i].name), "node%d", i + 1);
		f->nodes[i].available = true;
	}
	struct npf_link l[4] = {
		{ .ifname = "fab0", .peer = 1, .fwd = NPF_OUT_OK, .rev = NPF_OUT_OK },
		{ .ifname = "fab0", .peer = 2, .fwd = NPF_OUT_OK, .rev = NPF_OUT_OK },
		{ .ifname = "docker0", .peer = 1, .fwd = NPF_OUT_WRONG_PEER, .rev = NPF_OUT_OK },
		{ .ifname = "docker0", .peer = 2, .fwd = NPF_OUT_WRONG_PEER,
		  .rev = NPF_OUT_TIMEOUT },
	};
	memcpy(f->links, l, sizeof(l));
	for (int i = 0; i < 4; i++)
		set_addr4(&f->links[i].peer_addr, "198.18.0.2");
	f->chk.started_unix_ms = 1700000000123ull;
	f->chk.duration_ms = 1450;
	f->chk.timeout_ms = 3000;
	f->chk.nodes = f->nodes;
	f->chk.n_nodes = 3;
	f->chk.links = f->links;
	f->chk.n_links = 4;
}

static void build_info_only(void **state)
{
	char *out = NULL;
	int n;
	(void)state;

	n = npf_metrics_render(NULL, NULL, NULL, &out);
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(out));
	assert_valid_exposition(out);
	assert_line(out, "netpreflight_build_info{version=\"" NPF_VERSION "\"} 1");
	assert_null(strstr(out, "last_check"));
	free(out);
	assert_int_equal(npf_metrics_render(NULL, NULL, NULL, NULL), -EINVAL);
}

/* One series per configured cluster key, by its public id (issue 19: operators see when
 * the old key of a rotation is no longer used); none without a key. */
static void key_sessions(void **state)
{
	struct npf_metrics_counters ctr = { .auth_reported = true, .authenticated = true,
					    .n_keys = 2, .key_sessions = { 41, 0 },
					    .probe_reported = true, .data_impostors = 7 };
	char *out = NULL;
	(void)state;

	for (int i = 0; i < NPF_AUTH_ID_LEN; i++) {
		ctr.key_ids[0][i] = (uint8_t)(0xa0 + i);
		ctr.key_ids[1][i] = (uint8_t)i;
	}
	assert_true(npf_metrics_render(NULL, NULL, &ctr, &out) > 0);
	assert_valid_exposition(out);
	assert_line(out, "netpreflight_probe_key_sessions_total{key_id=\"a0a1a2a3a4a5a6a7\"} 41");
	assert_line(out, "netpreflight_probe_key_sessions_total{key_id=\"0001020304050607\"} 0");
	assert_line(out, "netpreflight_probe_data_impostors_total 7");
	free(out);
	ctr.n_keys = 0;
	ctr.authenticated = false;
	assert_true(npf_metrics_render(NULL, NULL, &ctr, &out) > 0);
	assert_null(strstr(out, "key_sessions"));
	free(out);
}

static void check_outcomes_per_interface(void **state)
{
	struct fixture f;
	struct npf_metrics_counters ctr = { .checks = { 1, 7, 2, 4 }, .check_errors = 3,
					    .start_unix_ms = 1699999999000ull };
	char *out = NULL;
	(void)state;

	make_check(&f);
	assert_true(npf_metrics_render(&f.chk, NULL, &ctr, &out) > 0);
	assert_valid_exposition(out);
	assert_line(out, "netpreflight_last_check_timestamp_seconds 1700000001.573");
	assert_line(out, "netpreflight_last_check_duration_seconds 1.450");
	assert_line(out, "netpreflight_last_check_timeout_seconds 3.000");
	assert_line(out, "netpreflight_last_check_peers 2");
	assert_line(out, "netpreflight_last_check_peers_unavailable 0");
	/* No decision, no verdict: the links alone are evidence, not a verdict. */
	assert_null(strstr(out, "netpreflight_last_check_verdict"));
	assert_line(out, "netpreflight_interface_probe_peers{interface=\"fab0\","
			 "direction=\"forward\",outcome=\"ok\"} 2");
	assert_line(out, "netpreflight_interface_probe_peers{interface=\"fab0\","
			 "direction=\"reverse\",outcome=\"ok\"} 2");
	assert_line(out, "netpreflight_interface_probe_peers{interface=\"fab0\","
			 "direction=\"forward\",outcome=\"timeout\"} 0");
	assert_line(out, "netpreflight_interface_probe_peers{interface=\"docker0\","
			 "direction=\"forward\",outcome=\"wrong-peer\"} 2");
	assert_line(out, "netpreflight_interface_probe_peers{interface=\"docker0\","
			 "direction=\"reverse\",outcome=\"timeout\"} 1");
	assert_line(out, "netpreflight_interface_probe_peers{interface=\"docker0\","
			 "direction=\"reverse\",outcome=\"ok\"} 1");
	assert_line(out, "netpreflight_interface_probe_success{interface=\"fab0\"} 1");
	assert_line(out, "netpreflight_interface_probe_success{interface=\"docker0\"} 0");
	assert_line(out, "netpreflight_checks_total{verdict=\"ok\"} 7");
	assert_line(out, "netpreflight_checks_total{verdict=\"fail\"} 2");
	assert_line(out, "netpreflight_checks_total{verdict=\"unknown\"} 1");
	assert_line(out, "netpreflight_checks_total{verdict=\"degraded\"} 4");
	assert_line(out, "netpreflight_check_errors_total 3");
	assert_line(out, "netpreflight_daemon_start_time_seconds 1699999999.000");
	assert_line(out, "netpreflight_metrics_interfaces_dropped 0");
	/* Bounded cardinality: peer names never appear. */
	assert_null(strstr(out, "node2"));
	assert_null(strstr(out, "node3"));
	free(out);
}

/* The verdict series is the decision's, whatever the links alone would suggest: fab0
 * works with every peer here, and the decision (not the links) says unknown. */
static void verdict_is_the_decisions(void **state)
{
	struct fixture f;
	struct npf_recommendation rec;
	char *out = NULL;
	(void)state;

	make_check(&f);
	memset(&rec, 0, sizeof(rec));
	/* Every verdict has its series, exactly one of them 1: degraded too (ok on a worse
	 * network than the job's best), which is neither ok nor fail. */
	for (int v = 0; v < NPF_VERDICT__COUNT; v++) {
		rec.verdict = (enum npf_verdict)v;
		assert_true(npf_metrics_render(&f.chk, &rec, NULL, &out) > 0);
		assert_valid_exposition(out);
		for (int w = 0; w < NPF_VERDICT__COUNT; w++) {
			char line[128];

			snprintf(line, sizeof(line), "netpreflight_last_check_verdict{verdict=\"%s\"} %d",
				 npf_verdict_name((enum npf_verdict)w), v == w);
			assert_line(out, line);
		}
		free(out);
	}
	rec.verdict = NPF_VERDICT_DEGRADED;
	assert_true(npf_metrics_render(&f.chk, &rec, NULL, &out) > 0);
	assert_line(out, "netpreflight_last_check_verdict{verdict=\"degraded\"} 1");
	assert_line(out, "netpreflight_last_check_verdict{verdict=\"ok\"} 0");
	free(out);
	/* Without a check there is nothing the verdict is about. */
	assert_true(npf_metrics_render(NULL, &rec, NULL, &out) > 0);
	assert_null(strstr(out, "netpreflight_last_check_verdict"));
	free(out);
}

static void unavailable_peer_is_unknown(void **state)
{
	struct fixture f;
	struct npf_recommendation rec;
	char *out = NULL;
	(void)state;

	make_check(&f);
	memset(&rec, 0, sizeof(rec));
	rec.verdict = NPF_VERDICT_UNKNOWN; /* what npf_recommend decides here */
	f.nodes[2].available = false;
	f.links[1].fwd = f.links[1].rev = NPF_OUT_PEER_UNAVAILABLE;
	f.links[3].fwd = f.links[3].rev = NPF_OUT_PEER_UNAVAILABLE;
	assert_true(npf_metrics_render(&f.chk, &rec, NULL, &out) > 0);
	assert_valid_exposition(out);
	assert_line(out, "netpreflight_last_check_peers_unavailable 1");
	assert_line(out, "netpreflight_last_check_verdict{verdict=\"unknown\"} 1");
	assert_line(out, "netpreflight_last_check_verdict{verdict=\"ok\"} 0");
	assert_line(out, "netpreflight_interface_probe_success{interface=\"fab0\"} 0");
	assert_line(out, "netpreflight_interface_probe_peers{interface=\"fab0\","
			 "direction=\"forward\",outcome=\"peer-unavailable\"} 1");
	assert_null(strstr(out, "netpreflight_checks_total"));
	free(out);
}

/* A healthy sparse check: the peers outside this node's plan were never contacted, which
 * makes them neither unavailable nor a reason for an interface not to work. */
static void sparse_check_ok(void **state)
{
	struct npf_inventory inv;
	struct npf_check chk;
	struct npf_recommendation rec;
	char *out = NULL;
	(void)state;

	assert_int_equal(sparse_check_build(128, 64, &chk, &inv, NULL), 0);
	assert_int_equal(npf_recommend(&inv, &chk, NULL, &rec), 0);
	assert_true(npf_metrics_render(&chk, &rec, NULL, &out) > 0);
	assert_valid_exposition(out);
	assert_line(out, "netpreflight_last_check_peers 127");
	assert_line(out, "netpreflight_last_check_peers_unavailable 0");
	assert_line(out, "netpreflight_last_check_verdict{verdict=\"ok\"} 1");
	assert_line(out, "netpreflight_interface_probe_success{interface=\"ens1f0\"} 1");
	free(out);
	npf_recommendation_clear(&rec);
	npf_check_clear(&chk);
	npf_inventory_clear(&inv);
}

static void recommendation_info(void **state)
{
	struct fixture f;
	struct npf_recommendation rec;
	char v_if[] = "=fab0", v_hca[] = "=mlx5_0:1", v_gid[] = "3";
	struct npf_envvar vars[3] = {
		{ .name = "NCCL_SOCKET_IFNAME", .value = v_if },
		{ .name = "NCCL_IB_HCA", .value = v_hca },
		{ .name = "NCCL_IB_GID_INDEX", .value = v_gid },
	};
	char *out = NULL;
	(void)state;

	make_check(&f);
	memset(&rec, 0, sizeof(rec));
	rec.verdict = NPF_VERDICT_FAIL; /* the decision's verdict, whatever the links say */
	rec.have_choice = true;
	snprintf(rec.ifname, sizeof(rec.ifname), "fab0");
	snprintf(rec.cidr, sizeof(rec.cidr), "198.18.0.0/24");
	rec.vars = vars;
	rec.n_vars = 3;
	rec.nccl_default_found = true;
	snprintf(rec.nccl_default.ifname, sizeof(rec.nccl_default.ifname), "docker0");
	rec.nccl_default_passed = false;
	assert_true(npf_metrics_render(&f.chk, &rec, NULL, &out) > 0);
	assert_valid_exposition(out);
	assert_line(out, "netpreflight_recommendation_info{interface=\"fab0\","
			 "network=\"198.18.0.0/24\",nccl_socket_ifname=\"=fab0\","
			 "nccl_ib_hca=\"=mlx5_0:1\",nccl_ib_gid_index=\"3\"} 1");
	assert_line(out, "netpreflight_nccl_default_passed{interface=\"docker0\"} 0");
	assert_line(out, "netpreflight_last_check_verdict{verdict=\"fail\"} 1");
	free(out);

	/* No choice: no info series at all rather than one with empty labels. */
	rec.have_choice = false;
	rec.nccl_default_found = false;
	assert_true(npf_metrics_render(NULL, &rec, NULL, &out) > 0);
	assert_valid_exposition(out);
	assert_null(strstr(out, "recommendation_info"));
	assert_null(strstr(out, "nccl_default"));
	free(out);
}

static void label_values_escaped(void **state)
{
	struct fixture f;
	char *out = NULL;
	(void)state;

	make_check(&f);
	/* Linux allows nearly any byte in an interface name. */
	memcpy(f.links[2].ifname, "a\"b\\c\xc3\n", 8);
	memcpy(f.links[3].ifname, "a\"b\\c\xc3\n", 8);
	assert_true(npf_metrics_render(&f.chk, NULL, NULL, &out) > 0);
	assert_valid_exposition(out);
	assert_line(out, "netpreflight_interface_probe_success{interface=\"a\\\"b\\\\c_\\n\"} 0");
	free(out);
}

static void interface_cap(void **state)
{
	enum { N = NPF_METRICS_MAX_IFACES + 6 };
	struct fixture f;
	struct npf_link *links = calloc(N, sizeof(*links));
	char *out = NULL;
	(void)state;

	assert_non_null(links);
	make_check(&f);
	f.chk.n_nodes = 2;
	for (int i = 0; i < N; i++) {
		snprintf(links[i].ifname, sizeof(links[i].ifname), "eth%d", i);
		links[i].peer = 1;
	}
	f.chk.links = links;
	f.chk.n_links = N;
	assert_true(npf_metrics_render(&f.chk, NULL, NULL, &out) > 0);
	assert_valid_exposition(out);
	assert_line(out, "netpreflight_metrics_interfaces_dropped 6");
	assert_non_null(strstr(out, "interface=\"eth63\""));
	assert_null(strstr(out, "interface=\"eth64\""));
	free(out);
	free(links);
}

static void inconsistent_check_rejected(void **state)
{
	struct fixture f;
	char *out = (char *)1;
	(void)state;

	make_check(&f);
	f.links[1].peer = 3; /* only 3 nodes */
	assert_int_equal(npf_metrics_render(&f.chk, NULL, NULL, &out), -EINVAL);
	assert_null(out);
	make_check(&f);
	f.links[0].peer = 0; /* self */
	assert_int_equal(npf_metrics_render(&f.chk, NULL, NULL, &out), -EINVAL);
	make_check(&f);
	f.links[0].rev = NPF_OUT__COUNT;
	assert_int_equal(npf_metrics_render(&f.chk, NULL, NULL, &out), -EINVAL);
	make_check(&f);
	f.chk.n_nodes = 0;
	assert_int_equal(npf_metrics_render(&f.chk, NULL, NULL, &out), -EINVAL);
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	assert_non_null(fp);
	assert_non_null(buf);
	n = fread(buf, 1, 65535, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void atomic_write(void **state)
{
	char dir[] = "/tmp/npfsl-metrics.XXXXXX";
	char path[128], *got;
	struct stat st;
	mode_t old = umask(0077);
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, METRICS_FILE_NAME);
	assert_int_equal(metrics_write(dir, "a 1\n"), 0);
	assert_int_equal(metrics_write(dir, "netpreflight_build_info 1\n"), 0);
	got = slurp(path);
	assert_string_equal(got, "netpreflight_build_info 1\n");
	free(got);
	/* Readable by node_exporter whatever the daemon's umask. */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* No temporary file left behind. */
	assert_int_equal(count_entries(dir), 1);

	/* metrics_publish renders and writes; an empty dir means "off". */
	assert_int_equal(metrics_publish("", NULL, NULL, NULL), 0);
	assert_int_equal(metrics_publish(dir, NULL, NULL, NULL), 0);
	got = slurp(path);
	assert_valid_exposition(got);
	free(got);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	umask(old);
}

static void write_errors(void **state)
{
	char dir[] = "/tmp/npfsl-metrics.XXXXXX";
	char sub[128];
	(void)state;

	assert_int_equal(metrics_write("/nonexistent/npfsl", "x 1\n"), -ENOENT);
	assert_int_equal(metrics_write(NULL, "x 1\n"), -EINVAL);
	assert_int_equal(metrics_write("/tmp", NULL), -EINVAL);
	/* A regular file where the directory should be. */
	assert_int_equal(metrics_write("/dev/null", "x 1\n"), -ENOTDIR);
	/* The target name taken by a directory: rename fails, the temp is removed. */
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/%s", dir, METRICS_FILE_NAME);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(metrics_write(dir, "x 1\n"), -EISDIR);
	assert_int_equal(count_entries(dir), 1);
	assert_int_equal(metrics_publish(dir, NULL, NULL, NULL), -EISDIR);
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(build_info_only),
		cmocka_unit_test(key_sessions),
		cmocka_unit_test(check_outcomes_per_interface),
		cmocka_unit_test(verdict_is_the_decisions),
		cmocka_unit_test(unavailable_peer_is_unknown),
		cmocka_unit_test(sparse_check_ok),
		cmocka_unit_test(recommendation_info),
		cmocka_unit_test(label_values_escaped),
		cmocka_unit_test(interface_cap),
		cmocka_unit_test(inconsistent_check_rejected),
		cmocka_unit_test(atomic_write),
		cmocka_unit_test(write_errors),
	};

	log_init("test_metrics", NPF_LOG_STDERR, 0);
	return npf_run_tests(tests, NULL, NULL);
}
