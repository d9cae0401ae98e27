// SPDX-License-Identifier: MIT
/* Daemon configuration: the one key table (section, name, option, type, range, default, help)
 * and the lookups over it. What a key accepts is lib/config_value.c, the INI front end
 * lib/config_ini.c, the output (dump, format) lib/config_out.c. */
#include "config.h"
#include "config_internal.h"
#include "pubvar.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#define FIELD(m) offsetof(struct npf_config, m), sizeof(((struct npf_config *)0)->m)

/* clang-format off */
static const struct npf_config_key keys[] = {
	{ "daemon", "socket", "socket", NPF_CT_PATH, FIELD(daemon.socket),
	  "/run/netpreflight/netpreflight.sock", 0, 0, 0,
	  "Unix socket the daemon listens on" },
	{ "daemon", "node_name", "node-name", NPF_CT_STRING, FIELD(daemon.node_name), "", 0, 0,
	  NPF_CK_EMPTY_OK | NPF_CK_NAME_CHARS,
	  "this node's name in job hostlists (empty: the hostname)" },
	{ "daemon", "sysfs_root", "sysfs-root", NPF_CT_PATH, FIELD(daemon.sysfs_root), "/sys", 0, 0,
	  0, "where sysfs is mounted (tests point it at fixtures)" },
	{ "daemon", "state_dir", "state-dir", NPF_CT_PATH, FIELD(daemon.state_dir),
	  "/var/lib/netpreflight", 0, 0, 0, "directory for persistent state" },
	{ "daemon", "log_level", "log-level", NPF_CT_LOGLEVEL, FIELD(daemon.log_level), "info", 0,
	  0, 0, "info or debug" },
	{ "daemon", "check_group", "check-group", NPF_CT_STRING, FIELD(daemon.check_group), "", 0,
	  0, NPF_CK_EMPTY_OK | NPF_CK_NAME_CHARS,
	  "local group that may start probes besides root and the daemon's user" },
	{ "daemon", "allow_foreign_netns", "allow-foreign-netns", NPF_CT_BOOL,
	  FIELD(daemon.allow_foreign_netns), "false", 0, 0, 0,
	  "also answer clients in other network namespaces (test labs driven from outside)" },

	{ "probe", "port", "port", NPF_CT_U16, FIELD(probe.port), "7718", 1, 65535, 0,
	  "TCP port peers' daemons listen on for probes" },
	{ "probe", "timeout", "timeout", NPF_CT_DURATION, FIELD(probe.timeout_ms), "3s", 100,
	  60 * SEC, 0, "give up on one probe after this long (100ms..60s)" },
	{ "probe", "full_mesh_max", "full-mesh-max", NPF_CT_UINT, FIELD(probe.full_mesh_max), "64",
	  1, 65536, 0, "probe every peer when the job has at most this many nodes" },
	{ "probe", "sparse_k", "sparse-k", NPF_CT_UINT, FIELD(probe.sparse_k), "4", 1, 1024, 0,
	  "peers probed per node in larger jobs" },
	{ "probe", "bulk_bytes", "bulk-bytes", NPF_CT_SIZE, FIELD(probe.bulk_bytes), "256k",
	  65536, 16 * MIB, 0, "bytes sent by a bulk probe (64k..16M)" },
	{ "probe", "max_conns", "max-conns", NPF_CT_UINT, FIELD(probe.max_conns), "256", 1, 65536,
	  0, "probe connections open at once" },
	{ "probe", "cache_ttl", "cache-ttl", NPF_CT_DURATION, FIELD(probe.cache_ttl_ms), "300s",
	  SEC, 86400u * SEC, 0, "reuse a probe result for this long (1s..24h)" },
	{ "probe", "interfaces_exclude", "interfaces-exclude", NPF_CT_PATTERNS,
	  FIELD(probe.interfaces_exclude), "", 0, 0, NPF_CK_EMPTY_OK,
	  "interface globs never probed" },
	{ "probe", "key_file", "key-file", NPF_CT_PATH, FIELD(probe.key_file), "", 0, 0,
	  NPF_CK_EMPTY_OK,
	  "cluster key (netpreflight key generate; mode 0600/0640, the daemon's user); "
	  "empty: peers are not authenticated" },

	{ "publish", "prefer", "prefer", NPF_CT_PATTERNS, FIELD(publish.prefer), "", 0, 0,
	  NPF_CK_EMPTY_OK, "interface globs preferred among working ones" },
	{ "publish", "avoid", "avoid", NPF_CT_PATTERNS, FIELD(publish.avoid), "", 0, 0,
	  NPF_CK_EMPTY_OK, "interface globs used only when nothing else works" },
	{ "publish", "rdma_fabric", "rdma-fabric", NPF_CT_PATTERNS, FIELD(publish.rdma_fabric), "",
	  0, 0, NPF_CK_EMPTY_OK, "RDMA port globs (dev or dev:port) of the job's fabric, for IB "
	  "ports without an IPoIB address" },
	{ "publish", "nccl_version", "nccl-version", NPF_CT_VERSION, FIELD(publish.nccl_version),
	  "current", 0, 0, 0, "NCCL version whose selection rules to assume, or current" },
	{ "publish", "variables", "variables", NPF_CT_VARLIST, FIELD(publish.variables),
	  "all",
	  0, 0, NPF_CK_EMPTY_OK, "environment variables to publish (empty or all: every one)" },
	{ "publish", "master_addr", "master-addr", NPF_CT_BOOL, FIELD(publish.master_addr), "false",
	  0, 0, 0, "also publish MASTER_ADDR" },
	{ "publish", "fallback", "fallback", NPF_CT_FALLBACK, FIELD(publish.fallback), "drain", 0, 0,
	  0, "best network broken only by some nodes: drain them, or degrade the job" },

	{ "metrics", "textfile_dir", "textfile-dir", NPF_CT_PATH, FIELD(metrics.textfile_dir), "",
	  0, 0, NPF_CK_EMPTY_OK, "node_exporter textfile directory (empty: no metrics)" },

	{ "slurm", "drain", "drain", NPF_CT_BOOL, FIELD(slurm.drain), "false", 0, 0, 0,
	  "drain the node from the prolog when no interface works" },
	{ "slurm", "drain_prefix", "drain-prefix", NPF_CT_STRING, FIELD(slurm.drain_prefix),
	  "netpreflight:", 0, 0, NPF_CK_EMPTY_OK, "prefix of the drain reason" },
};
/* clang-format on */

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

static const char *const type_names[NPF_CT__COUNT] = {
    [NPF_CT_STRING] = "TEXT",	 [NPF_CT_PATH] = "PATH",       [NPF_CT_BOOL] = "BOOL",
    [NPF_CT_U16] = "PORT",	 [NPF_CT_UINT] = "N",	       [NPF_CT_DURATION] = "DURATION",
    [NPF_CT_SIZE] = "SIZE",	 [NPF_CT_LOGLEVEL] = "LEVEL",  [NPF_CT_FALLBACK] = "POLICY",
    [NPF_CT_PATTERNS] = "GLOBS", [NPF_CT_VERSION] = "VERSION", [NPF_CT_VARLIST] = "VARS",
};

const char *npf_pubvar_name(enum npf_pubvar v)
{
	for (int i = 0; v && i < NPF_VAR__COUNT; i++) {
		const struct npf_var_info *r = npf_var_info((enum npf_var)i);

		if (r->gate == NPF_GATE_VARIABLES && r->bit == (uint32_t)v)
			return r->name;
	}
	return NULL;
}

int npf_pubvar_parse(const char *name)
{
	int v = npf_var_parse(name);

	return v >= 0 && npf_var_info((enum npf_var)v)->bit ? (int)npf_var_info((enum npf_var)v)->bit
							     : -EINVAL;
}

bool npf_pattern_list_match(const struct npf_pattern_list *l, const char *name)
{
	for (unsigned int i = 0; i < l->n && i < NPF_CONFIG_PATTERNS_MAX; i++)
		if (fnmatch(l->pat[i], name, 0) == 0)
			return true;
	return false;
}

const struct npf_config_key *npf_config_keys(size_t *n)
{
	*n = N_KEYS;
	return keys;
}

const struct npf_config_key *npf_config_key_find(const char *section, const char *name)
{
	for (size_t i = 0; section && name && i < N_KEYS; i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

const struct npf_config_key *npf_config_key_by_option(const char *option)
{
	if (!option)
		return NULL;
	if (strncmp(option, "--", 2) == 0)
		option += 2;
	for (size_t i = 0; i < N_KEYS; i++) {
		const char *a = option, *b = keys[i].option;

		/* Option names are the INI names with '_' -> '-'; take either. */
		while (*a && *b && (*a == *b || (*a == '_' && *b == '-'))) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return &keys[i];
	}
	return NULL;
}

const char *npf_config_type_name(enum npf_config_type t)
{
	return (unsigned int)t < NPF_CT__COUNT ? type_names[t] : "VALUE";
}

bool npf_cfg_known_section(const char *s, size_t len)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strlen(keys[i].section) == len && strncmp(keys[i].section, s, len) == 0)
			return true;
	return false;
}
