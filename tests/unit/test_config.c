// SPDX-License-Identifier: MIT
/* Unit tests for the configuration: defaults, value types, errors, options, round-trip. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cmocka.h needs the four headers above it first. */
#include <cmocka.h>

#include "npf_test.h"

#include "conffile.h"
#include "config.h"
#include "pubvar.h"

#define EXAMPLE NPF_FIXTURES "/../../systemd/netpreflight.conf.example"
#define DOCS NPF_FIXTURES "/../../docs/config.md"

/* Parses a NUL-terminated text; fails the test on error. */
static void parse_ok(struct npf_config *cfg, const char *text)
{
	char err[256];
	int rc = npf_config_parse(cfg, text, strlen(text), err, sizeof(err));

	if (rc != 0)
		fail_msg("parse failed (%d): %s\n--- text ---\n%s", rc, err, text);
	assert_string_equal(err, "");
}

/* Expects parse to fail with -EINVAL and exactly the message want. */
static void parse_err(const char *text, const char *want)
{
	struct npf_config cfg, before;
	char err[256];
	int rc;

	npf_config_defaults(&cfg);
	assert_int_equal(npf_config_set(&cfg, "probe", "port", "1234", NULL, 0), 0);
	before = cfg;
	rc = npf_config_parse(&cfg, text, strlen(text), err, sizeof(err));
	if (rc != -EINVAL || strcmp(err, want) != 0)
		fail_msg("want -EINVAL '%s', got %d '%s'", want, rc, err);
	/* A failed parse leaves the old config in place. */
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

/* Sets section.key and expects success. */
static void set_ok(struct npf_config *cfg, const char *section, const char *key, const char *val)
{
	char err[256];

	if (npf_config_set(cfg, section, key, val, err, sizeof(err)) != 0)
		fail_msg("[%s] %s = '%s': %s", section ? section : "-", key, val, err);
}

/* Expects section.key = val to be refused with a message containing want,
 * and the config to stay unchanged. */
static void set_bad(const char *section, const char *key, const char *val, const char *want)
{
	struct npf_config cfg, before;
	char err[256];
	int rc;

	npf_config_defaults(&cfg);
	before = cfg;
	rc = npf_config_set(&cfg, section, key, val, err, sizeof(err));
	if (rc != -EINVAL || !strstr(err, want))
		fail_msg("[%s] %s = '%s': want -EINVAL '%s', got %d '%s'", section, key, val, want,
			 rc, err);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

static void defaults(void **state)
{
	struct npf_config c;
	(void)state;

	memset(&c, 0x5a, sizeof(c));
	npf_config_defaults(&c);
	assert_string_equal(c.daemon.socket, "/run/netpreflight/netpreflight.sock");
	assert_string_equal(c.daemon.node_name, "");
	assert_string_equal(c.daemon.sysfs_root, "/sys");
	assert_string_equal(c.daemon.state_dir, "/var/lib/netpreflight");
	assert_int_equal(c.daemon.log_level, NPF_CONFIG_LOG_INFO);
	assert_string_equal(c.daemon.check_group, "");
	assert_int_equal(c.probe.port, 7718);
	assert_int_equal(c.probe.timeout_ms, 3000);
	assert_int_equal(c.probe.full_mesh_max, 64);
	assert_int_equal(c.probe.sparse_k, 4);
	assert_int_equal(c.probe.bulk_bytes, 262144);
	assert_int_equal(c.probe.max_conns, 256);
	assert_int_equal(c.probe.cache_ttl_ms, 300000);
	assert_int_equal(c.probe.interfaces_exclude.n, 0);
	assert_int_equal(c.publish.prefer.n, 0);
	assert_int_equal(c.publish.avoid.n, 0);
	assert_int_equal(c.publish.nccl_version, NPF_NCCL_VERSION_CURRENT);
	assert_int_equal(c.publish.variables, NPF_PUBVAR__ALL);
	assert_false(c.publish.master_addr);
	assert_string_equal(c.metrics.textfile_dir, "");
	assert_false(c.slurm.drain);
	assert_string_equal(c.slurm.drain_prefix, "netpreflight:");
}

/* The table itself: option names, field sizes per type, parseable defaults. */
static void key_table_is_consistent(void **state)
{
	size_t n;
	const struct npf_config_key *k = npf_config_keys(&n);
	(void)state;

	assert_int_equal(n, 26); /* + rdma_fabric, fallback, key_file, allow_foreign_netns */
	for (size_t i = 0; i < n; i++) {
		char opt[64], err[256];
		struct npf_config c;
		size_t want = 0;

		snprintf(opt, sizeof(opt), "%s", k[i].name);
		for (char *p = opt; *p; p++)
			if (*p == '_')
				*p = '-';
		assert_string_equal(k[i].option, opt);
		assert_ptr_equal(npf_config_key_by_option(opt), &k[i]);
		assert_ptr_equal(npf_config_key_find(k[i].section, k[i].name), &k[i]);
		assert_non_null(k[i].help);
		assert_string_not_equal(npf_config_type_name(k[i].type), "VALUE");
		switch (k[i].type) {
		case NPF_CT_BOOL:
			want = sizeof(bool);
			break;
		case NPF_CT_U16:
			want = 2;
			break;
		case NPF_CT_UINT:
		case NPF_CT_DURATION:
		case NPF_CT_SIZE:
		case NPF_CT_VARLIST:
			want = 4;
			break;
		case NPF_CT_LOGLEVEL:
		case NPF_CT_FALLBACK:
		case NPF_CT_VERSION:
			want = sizeof(int);
			break;
		case NPF_CT_PATTERNS:
			want = sizeof(struct npf_pattern_list);
			break;
		case NPF_CT_STRING:
		case NPF_CT_PATH:
			want = k[i].size;
			break;
		default:
			fail_msg("key %s has no type", k[i].name);
		}
		assert_int_equal(k[i].size, want);
		assert_true(k[i].offset + k[i].size <= sizeof(struct npf_config));
		npf_config_defaults(&c);
		if (npf_config_set(&c, k[i].section, k[i].name, k[i].def, err, sizeof(err)))
			fail_msg("default of %s: %s", k[i].name, err);
		/* Option names never collide. */
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(k[i].option, k[j].option);
	}
}

static void bools(void **state)
{
	static const char *const t[] = {"yes", "true", "on", "1", "YES", "True"};
	static const char *const f[] = {"no", "false", "off", "0", "No", "OFF"};
	struct npf_config c;
	(void)state;

	npf_config_defaults(&c);
	for (size_t i = 0; i < 6; i++) {
		set_ok(&c, "slurm", "drain", t[i]);
		assert_true(c.slurm.drain);
		set_ok(&c, "slurm", "drain", f[i]);
		assert_false(c.slurm.drain);
	}
	set_bad("slurm", "drain", "2", "want yes/no");
	set_bad("slurm", "drain", "", "want yes/no");
	set_bad("publish", "master_addr", "yess", "[publish] master_addr: bad value 'yess'");
}

static void integers(void **state)
{
	struct npf_config c;
	(void)state;

	npf_config_defaults(&c);
	set_ok(&c, "probe", "port", "1");
	assert_int_equal(c.probe.port, 1);
	set_ok(&c, "probe", "port", "65535");
	assert_int_equal(c.probe.port, 65535);
	set_bad("probe", "port", "0", "must be 1..65535");
	set_bad("probe", "port", "65536", "must be 1..65535");
	set_bad("probe", "port", "99999999999999999999", "must be 1..65535");
	set_bad("probe", "port", "-1", "not a number");
	set_bad("probe", "port", "+1", "not a number");
	set_bad("probe", "port", "12ab", "not a number");
	set_bad("probe", "port", "", "not a number");
	set_ok(&c, "probe", "sparse_k", " 8 ");
	assert_int_equal(c.probe.sparse_k, 8);
	set_ok(&c, "probe", "full_mesh_max", "65536");
	assert_int_equal(c.probe.full_mesh_max, 65536);
	set_bad("probe", "full_mesh_max", "0", "must be 1..65536");
	set_bad("probe", "max_conns", "65537", "must be 1..65536");
	set_bad("probe", "sparse_k", "1025", "must be 1..1024");
}

static void durations(void **state)
{
	struct npf_config c;
	(void)state;

	npf_config_defaults(&c);
	set_ok(&c, "probe", "timeout", "3");
	assert_int_equal(c.probe.timeout_ms, 3000);
	set_ok(&c, "probe", "timeout", "5s");
	assert_int_equal(c.probe.timeout_ms, 5000);
	set_ok(&c, "probe", "timeout", "500ms");
	assert_int_equal(c.probe.timeout_ms, 500);
	set_ok(&c, "probe", "timeout", "1.5s");
	assert_int_equal(c.probe.timeout_ms, 1500);
	set_ok(&c, "probe", "timeout", "0.125");
	assert_int_equal(c.probe.timeout_ms, 125);
	set_ok(&c, "probe", "timeout", "100ms");
	assert_int_equal(c.probe.timeout_ms, 100);
	set_ok(&c, "probe", "timeout", "1m");
	assert_int_equal(c.probe.timeout_ms, 60000);
	set_ok(&c, "probe", "cache_ttl", "1h");
	assert_int_equal(c.probe.cache_ttl_ms, 3600000);
	set_ok(&c, "probe", "cache_ttl", "1.5m");
	assert_int_equal(c.probe.cache_ttl_ms, 90000);
	set_bad("probe", "timeout", "99ms", "must be 100ms..60000ms");
	set_bad("probe", "timeout", "61s", "must be 100ms..60000ms");
	set_bad("probe", "timeout", "0", "must be 100ms");
	set_bad("probe", "timeout", "1.0005s", "finer than a millisecond");
	set_bad("probe", "timeout", "3x", "unknown unit 'x'");
	set_bad("probe", "timeout", "3 s", "unknown unit ' s'");
	set_bad("probe", "timeout", "s", "want a number");
	set_bad("probe", "timeout", "1.s", "want a number");
	set_bad("probe", "timeout", "", "want a number");
	set_bad("probe", "timeout", "1.1234567s", "too many decimals");
	set_bad("probe", "timeout", "9999999999999h", "must be 100ms");
	set_bad("probe", "cache_ttl", "25h", "must be 1s..86400s");
	set_bad("probe", "cache_ttl", "999ms", "must be 1s..86400s");
}

static void sizes(void **state)
{
	struct npf_config c;
	(void)state;

	npf_config_defaults(&c);
	set_ok(&c, "probe", "bulk_bytes", "65536");
	assert_int_equal(c.probe.bulk_bytes, 65536);
	set_ok(&c, "probe", "bulk_bytes", "256K");
	assert_int_equal(c.probe.bulk_bytes, 262144);
	set_ok(&c, "probe", "bulk_bytes", "16M");
	assert_int_equal(c.probe.bulk_bytes, 16777216);
	set_ok(&c, "probe", "bulk_bytes", "1m");
	assert_int_equal(c.probe.bulk_bytes, 1048576);
	set_bad("probe", "bulk_bytes", "65535", "must be 65536..16777216 bytes");
	set_bad("probe", "bulk_bytes", "17M", "must be 65536..16777216");
	set_bad("probe", "bulk_bytes", "1G", "must be 65536..16777216");
	set_bad("probe", "bulk_bytes", "999999999999G", "must be 65536");
	set_bad("probe", "bulk_bytes", "9999999999999", "must be 65536");
	set_bad("probe", "bulk_bytes", "256kb", "want bytes");
	set_bad("probe", "bulk_bytes", "k", "want bytes");
}

static void texts_and_paths(void **state)
{
	struct npf_config c;
	char path[NPF_CONFIG_PATH_MAX + 8];
	(void)state;

	npf_config_defaults(&c);
	set_ok(&c, "daemon", "node_name", "gpu-01.rack_2");
	assert_string_equal(c.daemon.node_name, "gpu-01.rack_2");
	set_ok(&c, "daemon", "node_name", "");
	assert_string_equal(c.daemon.node_name, "");
	set_bad("daemon", "node_name", "gpu 01", "only letters, digits");
	set_bad("daemon", "check_group", "wheel:x", "only letters, digits");
	set_ok(&c, "daemon", "check_group", "gpu-users");
	assert_string_equal(c.daemon.check_group, "gpu-users");
	set_ok(&c, "slurm", "drain_prefix", "net preflight#1;");
	assert_string_equal(c.slurm.drain_prefix, "net preflight#1;");
	set_bad("slurm", "drain_prefix", "a ;b", "';' at the start or after a blank");
	set_bad("slurm", "drain_prefix", "a\t#b", "'#' at the start or after a blank");
	set_bad("slurm", "drain_prefix", "#b", "'#' at the start or after a blank");
	set_bad("slurm", "drain_prefix", "a\nb", "control character 0x0a at position 1");
	set_bad("slurm", "drain_prefix", "a\x7f", "control character 0x7f");
	memset(path, 'x', 64);
	path[64] = '\0';
	set_bad("slurm", "drain_prefix", path, "longer than 63 bytes");

	set_bad("daemon", "sysfs_root", "sys", "not an absolute path");
	set_bad("daemon", "sysfs_root", "", "must not be empty");
	set_ok(&c, "metrics", "textfile_dir", "");
	set_ok(&c, "metrics", "textfile_dir", "/var/lib/prometheus/node-exporter");
	assert_string_equal(c.metrics.textfile_dir, "/var/lib/prometheus/node-exporter");
	set_ok(&c, "daemon", "state_dir", "/srv/state with space");
	assert_string_equal(c.daemon.state_dir, "/srv/state with space");

	/* 4095 bytes is the longest path; a socket path must fit sun_path. */
	path[0] = '/';
	memset(path + 1, 'p', NPF_CONFIG_PATH_MAX - 2);
	path[NPF_CONFIG_PATH_MAX - 1] = '\0';
	set_ok(&c, "daemon", "state_dir", path);
	assert_int_equal(strlen(c.daemon.state_dir), 4095);
	path[NPF_CONFIG_PATH_MAX - 1] = 'p';
	path[NPF_CONFIG_PATH_MAX] = '\0';
	set_bad("daemon", "state_dir", path, "longer than 4095 bytes");
	path[107] = '\0';
	set_ok(&c, "daemon", "socket", path);
	path[107] = 'p';
	path[108] = '\0';
	set_bad("daemon", "socket", path, "longer than 107 bytes");
}

static void enums_and_versions(void **state)
{
	struct npf_config c;
	(void)state;

	npf_config_defaults(&c);
	set_ok(&c, "daemon", "log_level", "debug");
	assert_int_equal(c.daemon.log_level, NPF_CONFIG_LOG_DEBUG);
	set_ok(&c, "daemon", "log_level", "INFO");
	assert_int_equal(c.daemon.log_level, NPF_CONFIG_LOG_INFO);
	set_bad("daemon", "log_level", "warn", "want info or debug");
	set_ok(&c, "publish", "fallback", "degrade");
	assert_int_equal(c.publish.fallback, NPF_FALLBACK_DEGRADE);
	set_ok(&c, "publish", "fallback", "DRAIN");
	assert_int_equal(c.publish.fallback, NPF_FALLBACK_DRAIN);
	set_bad("publish", "fallback", "move", "want drain or degrade");

	set_ok(&c, "publish", "nccl_version", "2.19");
	assert_int_equal(c.publish.nccl_version, 21900);
	set_ok(&c, "publish", "nccl_version", "2.18.3");
	assert_int_equal(c.publish.nccl_version, NPF_NCCL_VERSION(2, 18, 3));
	assert_true(NPF_NCCL_VERSION(2, 18, 3) < NPF_NCCL_VERSION(2, 21, 5));
	set_ok(&c, "publish", "nccl_version", "current");
	assert_int_equal(c.publish.nccl_version, NPF_NCCL_VERSION_CURRENT);
	assert_true(c.publish.nccl_version > NPF_NCCL_VERSION(99, 99, 99));
	set_bad("publish", "nccl_version", "2", "want MAJOR.MINOR");
	set_bad("publish", "nccl_version", "0.9.1", "want MAJOR.MINOR");
	set_bad("publish", "nccl_version", "2.100.1", "want MAJOR.MINOR");
	set_bad("publish", "nccl_version", "2.21.5.1", "want MAJOR.MINOR");
	set_bad("publish", "nccl_version", "2.21.", "want MAJOR.MINOR");
	set_bad("publish", "nccl_version", "v2.21", "want MAJOR.MINOR");
}

static void pattern_lists(void **state)
{
	struct npf_config c;
	char many[40 * 4] = "", longp[80];
	(void)state;

	npf_config_defaults(&c);
	set_ok(&c, "probe", "interfaces_exclude", "docker0, br-*,virbr?,veth[0-9]* ");
	assert_int_equal(c.probe.interfaces_exclude.n, 4);
	assert_string_equal(c.probe.interfaces_exclude.pat[1], "br-*");
	assert_string_equal(c.probe.interfaces_exclude.pat[3], "veth[0-9]*");
	assert_true(npf_pattern_list_match(&c.probe.interfaces_exclude, "docker0"));
	assert_true(npf_pattern_list_match(&c.probe.interfaces_exclude, "br-0123456789ab"));
	assert_true(npf_pattern_list_match(&c.probe.interfaces_exclude, "virbr0"));
	assert_true(npf_pattern_list_match(&c.probe.interfaces_exclude, "veth1a2b"));
	assert_false(npf_pattern_list_match(&c.probe.interfaces_exclude, "virbr10"));
	assert_false(npf_pattern_list_match(&c.probe.interfaces_exclude, "eth0"));
	set_ok(&c, "probe", "interfaces_exclude", "");
	assert_int_equal(c.probe.interfaces_exclude.n, 0);
	assert_false(npf_pattern_list_match(&c.probe.interfaces_exclude, "eth0"));

	set_bad("publish", "prefer", "eth*,,ib*", "empty item in list");
	set_bad("publish", "prefer", "eth*,", "empty item in list");
	set_bad("publish", "prefer", "eth 0", "has ' '");
	set_bad("publish", "avoid", "eth/0", "has '/'");
	for (int i = 0; i < 33; i++)
		strcat(many, i ? ",e" : "e");
	set_bad("publish", "avoid", many, "more than 32 patterns");
	many[strlen(many) - 2] = '\0';
	set_ok(&c, "publish", "avoid", many);
	assert_int_equal(c.publish.avoid.n, 32);
	memset(longp, 'a', 64);
	longp[64] = '\0';
	set_bad("publish", "avoid", longp, "longer than 63 bytes");
	longp[63] = '\0';
	set_ok(&c, "publish", "avoid", longp);
}

static void variable_lists(void **state)
{
	struct npf_config c;
	(void)state;

	npf_config_defaults(&c);
	set_ok(&c, "publish", "variables", "NCCL_IB_HCA, UCX_NET_DEVICES");
	assert_int_equal(c.publish.variables, NPF_PUBVAR_NCCL_IB_HCA | NPF_PUBVAR_UCX_NET_DEVICES);
	set_ok(&c, "publish", "variables", "");
	assert_int_equal(c.publish.variables, NPF_PUBVAR__ALL);
	set_ok(&c, "publish", "variables", "OMPI_MCA_oob_tcp_if_include");
	assert_int_equal(c.publish.variables, NPF_PUBVAR_OMPI_MCA_OOB_TCP_IF_INCLUDE);
	set_ok(&c, "publish", "variables", "all");
	assert_int_equal(c.publish.variables, NPF_PUBVAR__ALL);
	set_bad("publish", "variables", "NCCL_IB_HCA,NCCL_DEBUG", "unknown variable 'NCCL_DEBUG'");
	set_bad("publish", "variables", "all,NCCL_IB_HCA", "'all' cannot be combined");
	set_bad("publish", "variables", "nccl_ib_hca", "unknown variable");

	assert_string_equal(npf_pubvar_name(NPF_PUBVAR_GLOO_SOCKET_IFNAME), "GLOO_SOCKET_IFNAME");
	assert_null(npf_pubvar_name(NPF_PUBVAR_NCCL_IB_HCA | NPF_PUBVAR_NCCL_SOCKET_IFNAME));
	assert_int_equal(npf_pubvar_parse("TP_SOCKET_IFNAME"), NPF_PUBVAR_TP_SOCKET_IFNAME);
	assert_int_equal(npf_pubvar_parse("TP"), -EINVAL);
	assert_int_equal(npf_pubvar_parse(NULL), -EINVAL);
}

static void parse_a_file(void **state)
{
	struct npf_config c;
	(void)state;

	parse_ok(&c, "; netpreflight\n"
		     "# comment\n"
		     "\n"
		     "[probe]\r\n"
		     "port = 9000\r\n"
		     "  timeout=2s ; inline comment\n"
		     "\tport = 9001\n" /* repeated key: last wins */
		     "[daemon] ; section comment\n"
		     "node_name: n1\n" /* inih also takes ':' */
		     "state_dir = /var/lib/x#y  # shell-style comment\n"
		     "[probe]\n"
		     "sparse_k = 2"); /* no final newline */
	assert_int_equal(c.probe.port, 9001);
	assert_int_equal(c.probe.timeout_ms, 2000);
	assert_int_equal(c.probe.sparse_k, 2);
	assert_string_equal(c.daemon.node_name, "n1");
	assert_string_equal(c.daemon.state_dir, "/var/lib/x#y");
	/* Keys not named keep their defaults. */
	assert_int_equal(c.probe.max_conns, 256);

	/* Empty text, and text without a terminator, are fine. */
	parse_ok(&c, "");
	assert_int_equal(c.probe.port, 7718);
	assert_int_equal(npf_config_parse(&c, "[probe]\nport = 1234XXXX", 19, NULL, 0), 0);
	assert_int_equal(c.probe.port, 1234);
	assert_int_equal(npf_config_parse(&c, NULL, 0, NULL, 0), 0);
	assert_int_equal(c.probe.port, 7718);
	/* A UTF-8 byte order mark is skipped, and does not hide the section. */
	parse_ok(&c, "\xef\xbb\xbf[probe]\nport = 5\n");
	assert_int_equal(c.probe.port, 5);
}

static void parse_errors_name_the_line(void **state)
{
	char big[NPF_CONFIG_LINE_MAX + 64];
	(void)state;

	parse_err("[daemon]\nbogus = 1\n", "line 2: unknown key 'bogus' in [daemon]");
	parse_err("# c\n[nosuch]\n", "line 2: unknown section [nosuch]");
	parse_err("[probe]\nport = 1\n[ probe ]\n", "line 3: unknown section [ probe ]");
	parse_err("port = 1\n", "line 1: 'port' is outside any [section]");
	parse_err("[probe]\n\n\ntimeout = 7x\n",
		  "line 4: [probe] timeout: bad value '7x': unknown unit 'x' (want ms, s, m or h)");
	parse_err("[probe]\nport = 99999\n",
		  "line 2: [probe] port: bad value '99999': must be 1..65535");
	parse_err("[probe]\njust words\n", "line 2: expected [section], key = value or a comment");
	parse_err("[probe\nport = 1\n", "line 1: expected [section], key = value or a comment");
	parse_err("[probe] port = 1\n", "line 1: text after [probe]");
	parse_err("[publish]\nprefer =;x\n",
		  "line 2: [publish] prefer: bad value ';x': ';' at the start or after a blank "
		  "reads as a comment");
	parse_err("\xef\xbb\xbf[bogus]\n", "line 1: unknown section [bogus]");
	parse_err("[slurm]\ndrain_prefix = a\x01z\n",
		  "line 2: control character 0x01 at column 17");
	parse_err("[slurm]\ndrain = yes\rno\n", "line 2: control character 0x0d at column 12");
	parse_err("[slurm]\n\t drain = \x02\n", "line 2: control character 0x02 at column 11");
	/* The earliest error wins, whichever kind it is. */
	parse_err("[probe]\nnope\nport = 0\n",
		  "line 2: expected [section], key = value or a comment");
	parse_err("[probe]\nport = 0\nnope\n",
		  "line 2: [probe] port: bad value '0': must be 1..65535");

	/* Long values are cut in messages; long lines are refused, not cut. */
	snprintf(big, sizeof(big), "[daemon]\nnode_name = %0100d\n", 0);
	parse_err(big, "line 2: [daemon] node_name: bad value "
		       "'000000000000000000000000000000000000000000000000000000000000...': "
		       "longer than 63 bytes");
	memset(big, 'a', sizeof(big));
	memcpy(big, "[daemon]\nstate_dir = /", 22);
	big[sizeof(big) - 1] = '\0';
	parse_err(big, "line 2: longer than 8192 bytes");

	/* NUL bytes inside the given length. */
	{
		struct npf_config c;
		char err[128];

		assert_int_equal(npf_config_parse(&c, "[probe]\nport\0= 1\n", 17, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err, "line 2: control character 0x00 at column 5");
	}
}

static void parse_limits(void **state)
{
	struct npf_config c;
	char err[128];
	(void)state;

	assert_int_equal(npf_config_parse(&c, "", NPF_CONFIG_FILE_MAX + 1, err, sizeof(err)),
			 -EFBIG);
	assert_non_null(strstr(err, "more than 1048576"));
}

static void round_trip(void **state)
{
	struct npf_config a, b;
	char *buf = malloc(NPF_CONFIG_DUMP_MAX), err[256], longp[64];
	int n;
	(void)state;

	assert_non_null(buf);
	/* Defaults. */
	npf_config_defaults(&a);
	n = npf_config_dump(&a, buf, NPF_CONFIG_DUMP_MAX);
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(buf));
	assert_non_null(strstr(buf, "[daemon]\nsocket = /run/netpreflight/netpreflight.sock\n"
				    "node_name =\n"));
	assert_non_null(strstr(buf, "timeout = 3s\n"));
	assert_non_null(strstr(buf, "bulk_bytes = 256k\n"));
	assert_non_null(strstr(buf, "nccl_version = current\n"));
	assert_non_null(strstr(buf, "variables = all\n"));
	memset(&b, 0x33, sizeof(b));
	parse_ok(&b, buf);
	assert_true(npf_config_equal(&a, &b));
	assert_memory_equal(&a, &b, sizeof(a));

	/* Every key away from its default. */
	set_ok(&a, "daemon", "socket", "/tmp/s.sock");
	set_ok(&a, "daemon", "node_name", "gpu7");
	set_ok(&a, "daemon", "sysfs_root", "/fixtures/sys");
	set_ok(&a, "daemon", "state_dir", "/state dir");
	set_ok(&a, "daemon", "log_level", "debug");
	set_ok(&a, "daemon", "check_group", "hpc");
	set_ok(&a, "probe", "port", "1");
	set_ok(&a, "probe", "timeout", "1.25s");
	set_ok(&a, "probe", "full_mesh_max", "8");
	set_ok(&a, "probe", "sparse_k", "3");
	set_ok(&a, "probe", "bulk_bytes", "65537");
	set_ok(&a, "probe", "max_conns", "9");
	set_ok(&a, "probe", "cache_ttl", "2h");
	set_ok(&a, "probe", "interfaces_exclude", "docker*,br-*");
	set_ok(&a, "publish", "prefer", "ib*");
	set_ok(&a, "publish", "avoid", "eno[12]");
	set_ok(&a, "publish", "nccl_version", "current");
	set_ok(&a, "publish", "variables", "NCCL_SOCKET_IFNAME,OMPI_MCA_btl_tcp_if_include");
	set_ok(&a, "publish", "master_addr", "on");
	set_ok(&a, "metrics", "textfile_dir", "/var/lib/node_exporter/textfile_collector");
	set_ok(&a, "slurm", "drain", "1");
	set_ok(&a, "slurm", "drain_prefix", "np: x#;");
	n = npf_config_dump(&a, buf, NPF_CONFIG_DUMP_MAX);
	assert_true(n > 0);
	npf_config_defaults(&b);
	assert_false(npf_config_equal(&a, &b));
	parse_ok(&b, buf);
	assert_true(npf_config_equal(&a, &b));
	assert_memory_equal(&a, &b, sizeof(a));

	/* Too small a buffer: -ENOSPC, never an overflow. */
	for (size_t len = 0; len < (size_t)n; len += 37)
		assert_int_equal(npf_config_dump(&a, buf, len), -ENOSPC);
	assert_int_equal(npf_config_dump(&a, buf, (size_t)n + 1), n);

	/* The largest config fits NPF_CONFIG_DUMP_MAX. */
	{
		size_t nk;
		const struct npf_config_key *k = npf_config_keys(&nk);
		char *v = malloc(NPF_CONFIG_LINE_MAX);

		assert_non_null(v);
		memset(longp, 'g', 63);
		longp[63] = '\0';
		for (size_t i = 0; i < nk; i++) {
			size_t len = 0;

			if (k[i].type == NPF_CT_PATH) {
				v[0] = '/';
				memset(v + 1, 'p', k[i].size - 2);
				v[k[i].size - 1] = '\0';
			} else if (k[i].type == NPF_CT_STRING) {
				memset(v, 'n', k[i].size - 1);
				v[k[i].size - 1] = '\0';
			} else if (k[i].type == NPF_CT_PATTERNS) {
				for (int j = 0; j < NPF_CONFIG_PATTERNS_MAX; j++)
					len +=
					    (size_t)sprintf(v + len, "%s%s", j ? "," : "", longp);
			} else if (k[i].type == NPF_CT_VARLIST) {
				strcpy(v,
				       "NCCL_SOCKET_IFNAME,NCCL_IB_HCA,NCCL_IB_GID_INDEX,"
				       "NCCL_IB_ADDR_FAMILY,NCCL_IB_ADDR_RANGE,NCCL_SOCKET_FAMILY,"
				       "GLOO_SOCKET_IFNAME,TP_SOCKET_IFNAME,UCX_NET_DEVICES,"
				       "OMPI_MCA_btl_tcp_if_include");
			} else {
				continue;
			}
			if (npf_config_set(&a, k[i].section, k[i].name, v, err, sizeof(err)))
				fail_msg("%s: %s", k[i].name, err);
		}
		n = npf_config_dump(&a, buf, NPF_CONFIG_DUMP_MAX);
		assert_true(n > 0);
		parse_ok(&b, buf);
		assert_true(npf_config_equal(&a, &b));
		free(v);
	}
	free(buf);
}

static void set_by_option(void **state)
{
	struct npf_config c;
	char err[256];
	(void)state;

	npf_config_defaults(&c);
	set_ok(&c, NULL, "timeout", "5");
	assert_int_equal(c.probe.timeout_ms, 5000);
	set_ok(&c, NULL, "--check-group", "gpu");
	assert_string_equal(c.daemon.check_group, "gpu");
	set_ok(&c, NULL, "full_mesh_max", "10");
	assert_int_equal(c.probe.full_mesh_max, 10);
	set_ok(&c, NULL, "interfaces-exclude", "docker0");
	assert_int_equal(c.probe.interfaces_exclude.n, 1);
	assert_int_equal(npf_config_set(&c, NULL, "no-such", "1", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown option 'no-such'");
	assert_int_equal(npf_config_set(&c, NULL, NULL, "1", err, sizeof(err)), -EINVAL);
	assert_int_equal(npf_config_set(&c, "probe", "node_name", "x", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown key 'node_name' in [probe]");
	assert_int_equal(npf_config_set(&c, NULL, "port", NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "[probe] port: no value");
	assert_int_equal(npf_config_set(&c, NULL, "port", "x", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "[probe] port: bad value 'x': not a number");
	/* No error buffer is fine too. */
	assert_int_equal(npf_config_set(&c, NULL, "port", "x", NULL, 0), -EINVAL);

	assert_null(npf_config_key_by_option("-timeout"));
	assert_null(npf_config_key_by_option("time"));
	assert_null(npf_config_key_by_option("timeoutx"));
	assert_null(npf_config_key_by_option(NULL));
	assert_null(npf_config_key_find("probe", NULL));
	assert_string_equal(npf_config_type_name(NPF_CT_DURATION), "DURATION");
	assert_string_equal(npf_config_type_name(NPF_CT__COUNT), "VALUE");
}

static void equality(void **state)
{
	struct npf_config a, b;
	size_t n;
	const struct npf_config_key *k = npf_config_keys(&n);
	(void)state;

	npf_config_defaults(&a);
	npf_config_defaults(&b);
	assert_true(npf_config_equal(&a, &b));
	/* Bytes past a string's NUL do not matter. */
	b.daemon.node_name[5] = 'x';
	assert_true(npf_config_equal(&a, &b));
	b.probe.interfaces_exclude.pat[0][0] = 'z';
	assert_true(npf_config_equal(&a, &b));
	/* Each key's value does. */
	for (size_t i = 0; i < n; i++) {
		npf_config_defaults(&b);
		((unsigned char *)&b)[k[i].offset] ^= 0x01;
		if (k[i].type == NPF_CT_PATTERNS) {
			npf_config_defaults(&b);
			set_ok(&b, k[i].section, k[i].name, "x");
		}
		if (npf_config_equal(&a, &b))
			fail_msg("change of %s not seen", k[i].name);
	}
}

static void load_files(void **state)
{
	struct npf_config c, d;
	char err[256], path[] = "/tmp/npf-cfg-test-XXXXXX";
	char *big;
	int fd;
	(void)state;

	/* Missing and optional: defaults. */
	memset(&c, 0x11, sizeof(c));
	npf_config_defaults(&d);
	assert_int_equal(
	    npf_config_load_file(&c, "/nonexistent/netpreflight.conf", false, err, sizeof(err)), 0);
	assert_true(npf_config_equal(&c, &d));
	assert_int_equal(
	    npf_config_load_file(&c, "/nonexistent/netpreflight.conf", true, err, sizeof(err)),
	    -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/netpreflight.conf: "));
	assert_int_equal(npf_config_load_file(&c, "/tmp", true, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "/tmp: not a regular file");

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "[probe]\nport = 0\n", 17), 17);
	assert_int_equal(npf_config_load_file(&c, path, true, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ": line 2: [probe] port: bad value '0'"));
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, "[probe]\nport = 42\n", 18, 0), 18);
	assert_int_equal(npf_config_load_file(&c, path, true, err, sizeof(err)), 0);
	assert_int_equal(c.probe.port, 42);

	big = malloc(NPF_CONFIG_FILE_MAX + 1);
	assert_non_null(big);
	memset(big, '\n', NPF_CONFIG_FILE_MAX + 1);
	assert_int_equal(pwrite(fd, big, NPF_CONFIG_FILE_MAX, 0), NPF_CONFIG_FILE_MAX);
	assert_int_equal(npf_config_load_file(&c, path, true, err, sizeof(err)), 0);
	assert_int_equal(pwrite(fd, big, NPF_CONFIG_FILE_MAX + 1, 0), NPF_CONFIG_FILE_MAX + 1);
	assert_int_equal(npf_config_load_file(&c, path, true, err, sizeof(err)), -EFBIG);
	free(big);
	close(fd);
	unlink(path);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 20);
	size_t n;

	if (!f)
		fail_msg("cannot open %s", path);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The shipped example parses, sets every key, and sets each to its default. */
static void example_file(void **state)
{
	struct npf_config c, d;
	char err[512], want[128];
	size_t n;
	const struct npf_config_key *k = npf_config_keys(&n);
	char *text = slurp(EXAMPLE);
	(void)state;

	if (npf_config_load_file(&c, EXAMPLE, true, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	npf_config_defaults(&d);
	assert_true(npf_config_equal(&c, &d));
	for (size_t i = 0; i < n; i++) {
		char *sec;

		snprintf(want, sizeof(want), "\n[%s]\n", k[i].section);
		sec = strstr(text, want);
		if (!sec)
			fail_msg("example lacks [%s]", k[i].section);
		snprintf(want, sizeof(want), "\n%s = %s\n", k[i].name, k[i].def);
		if (!k[i].def[0])
			snprintf(want, sizeof(want), "\n%s =\n", k[i].name);
		if (!strstr(sec, want))
			fail_msg("example lacks '%s' after [%s]", want + 1, k[i].section);
	}
	free(text);
}

/* docs/config.md documents every key and its option. */
static void docs_cover_every_key(void **state)
{
	size_t n;
	const struct npf_config_key *k = npf_config_keys(&n);
	char *text = slurp(DOCS), want[128];
	(void)state;

	for (size_t i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "`%s`", k[i].name);
		if (!strstr(text, want))
			fail_msg("docs/config.md lacks %s", want);
		snprintf(want, sizeof(want), "`--%s`", k[i].option);
		if (!strstr(text, want))
			fail_msg("docs/config.md lacks %s", want);
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(defaults),
	    cmocka_unit_test(key_table_is_consistent),
	    cmocka_unit_test(bools),
	    cmocka_unit_test(integers),
	    cmocka_unit_test(durations),
	    cmocka_unit_test(sizes),
	    cmocka_unit_test(texts_and_paths),
	    cmocka_unit_test(enums_and_versions),
	    cmocka_unit_test(pattern_lists),
	    cmocka_unit_test(variable_lists),
	    cmocka_unit_test(parse_a_file),
	    cmocka_unit_test(parse_errors_name_the_line),
	    cmocka_unit_test(parse_limits),
	    cmocka_unit_test(round_trip),
	    cmocka_unit_test(set_by_option),
	    cmocka_unit_test(equality),
	    cmocka_unit_test(load_files),
	    cmocka_unit_test(example_file),
	    cmocka_unit_test(docs_cover_every_key),
	};

	return npf_run_tests(tests, NULL, NULL);
}
