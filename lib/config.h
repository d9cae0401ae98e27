/* SPDX-License-Identifier: MIT */
/* Daemon configuration: one key table drives INI parsing, defaults, options, help and dump. */
#ifndef NPF_CONFIG_H
#define NPF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define NPF_CONFIG_DEFAULT_PATH "/etc/netpreflight/netpreflight.conf"

#define NPF_CONFIG_FILE_MAX (1u << 20) /* bytes; a bigger file is refused (-EFBIG) */
#define NPF_CONFIG_LINE_MAX 8192       /* bytes per INI line, comments included */
#define NPF_CONFIG_PATH_MAX 4096       /* path buffers, NUL included (PATH_MAX) */
#define NPF_CONFIG_SOCKET_MAX 108      /* sizeof(sun_path), NUL included */
#define NPF_CONFIG_TEXT_MAX 64	       /* short strings: group, drain prefix */
#define NPF_CONFIG_PATTERNS_MAX 32     /* globs per pattern list */
#define NPF_CONFIG_PATTERN_LEN 64      /* bytes per glob, NUL included */
/* Enough for npf_config_dump() of any valid config (checked by a unit test). */
#define NPF_CONFIG_DUMP_MAX 32768

/* nccl_version = current: newer than any real version, so ">= X" tests hold. */
#define NPF_NCCL_VERSION_CURRENT INT32_MAX
/* Comparable NCCL version code, as NCCL_VERSION_CODE since 2.9: 2.21.5 -> 22105. */
/* lib/nccl_default.h repeats this macro; C allows that only when both are
 * spelled alike, blanks included, hence no clang-format here. */
/* clang-format off */
#define NPF_NCCL_VERSION(x, y, z) ((x) * 10000 + (y) * 100 + (z))
/* clang-format on */

/* [daemon] log_level; values are log_init()'s verbosity. */
enum npf_config_log_level {
	NPF_CONFIG_LOG_INFO = 0,
	NPF_CONFIG_LOG_DEBUG = 1,
};

/* [publish] fallback: what a job does when its best network fails only with some nodes
 * (docs/decision.md §10, "Blame instead of degrading"). */
enum npf_config_fallback {
	NPF_FALLBACK_DRAIN = 0,   /* those nodes fail (the Prolog drains them), the rest stay */
	NPF_FALLBACK_DEGRADE = 1, /* the whole job moves to the next network */
};

/* Comma-separated shell globs on interface names, parsed and bounded. */
struct npf_pattern_list {
	unsigned int n;
	char pat[NPF_CONFIG_PATTERNS_MAX][NPF_CONFIG_PATTERN_LEN];
};

/* True when name matches any glob of the list (fnmatch, no flags); false for
 * an empty list. */
bool npf_pattern_list_match(const struct npf_pattern_list *l, const char *name);

/*
 * The effective configuration. Only fixed-size fields, no pointers: the daemon
 * builds a new one on SIGHUP and replaces the old one with a struct copy.
 * Strings are NUL-terminated and zero-filled to the end of their buffer.
 */
struct npf_config {
	struct {
		char socket[NPF_CONFIG_SOCKET_MAX];
		char node_name[NPF_NAME_MAX]; /* "" = gethostname() */
		char sysfs_root[NPF_CONFIG_PATH_MAX];
		char state_dir[NPF_CONFIG_PATH_MAX];
		int log_level;			       /* enum npf_config_log_level */
		char check_group[NPF_CONFIG_TEXT_MAX]; /* "" = root + daemon uid only */
		bool allow_foreign_netns; /* answer clients in other network namespaces */
	} daemon;
	struct {
		uint16_t port;
		uint32_t timeout_ms;
		uint32_t full_mesh_max;
		uint32_t sparse_k;
		uint32_t bulk_bytes;
		uint32_t max_conns;
		uint32_t cache_ttl_ms;
		struct npf_pattern_list interfaces_exclude;
		char key_file[NPF_CONFIG_PATH_MAX]; /* "" = no cluster key */
	} probe;
	struct {
		struct npf_pattern_list prefer;
		struct npf_pattern_list avoid;
		struct npf_pattern_list rdma_fabric; /* RDMA ports without IP of the job's fabric */
		int nccl_version;   /* NPF_NCCL_VERSION() or NPF_NCCL_VERSION_CURRENT */
		uint32_t variables; /* enum npf_pubvar bits (lib/pubvar.h) */
		bool master_addr;
		int fallback; /* enum npf_config_fallback */
	} publish;
	struct {
		char textfile_dir[NPF_CONFIG_PATH_MAX]; /* "" = metrics off */
	} metrics;
	struct {
		bool drain;
		char drain_prefix[NPF_CONFIG_TEXT_MAX];
	} slurm;
};

enum npf_config_type {
	NPF_CT_STRING,	 /* bounded text */
	NPF_CT_PATH,	 /* absolute path */
	NPF_CT_BOOL,	 /* yes/no/true/false/on/off/1/0 */
	NPF_CT_U16,	 /* uint16_t */
	NPF_CT_UINT,	 /* uint32_t within [min, max] */
	NPF_CT_DURATION, /* uint32_t milliseconds: "3", "3s", "500ms", "1.5s", "5m", "1h" */
	NPF_CT_SIZE,	 /* uint32_t bytes: "262144", "256k", "16M" (binary units) */
	NPF_CT_LOGLEVEL, /* int: info | debug */
	NPF_CT_FALLBACK, /* int: drain | degrade (enum npf_config_fallback) */
	NPF_CT_PATTERNS, /* struct npf_pattern_list */
	NPF_CT_VERSION,	 /* int: "2.21.5" | "current" */
	NPF_CT_VARLIST,	 /* uint32_t enum npf_pubvar bits: names, "all" or "" */
	NPF_CT__COUNT
};

/* Key flags. */
enum {
	NPF_CK_EMPTY_OK = 1u << 0,   /* "" is a valid value */
	NPF_CK_NAME_CHARS = 1u << 1, /* only [A-Za-z0-9._-] (host and group names) */
};

/* One configuration key. The table is static and lives for the program. */
struct npf_config_key {
	const char *section; /* "daemon" */
	const char *name;    /* "node_name" */
	const char *option;  /* "node-name": the daemon's --node-name */
	enum npf_config_type type;
	size_t offset;	   /* of the field in struct npf_config */
	size_t size;	   /* of the field */
	const char *def;   /* default, in config-file syntax */
	uint64_t min, max; /* numeric bounds in stored units (ms, bytes) */
	unsigned int flags;
	const char *help; /* one line for --help */
};

/* The key table in documentation order; *n gets its length. Never NULL. */
const struct npf_config_key *npf_config_keys(size_t *n);

/* Key by section and INI name; NULL when unknown. */
const struct npf_config_key *npf_config_key_find(const char *section, const char *name);

/* Key by command-line option name: "check-group", "check_group" and
 * "--check-group" all find [daemon] check_group. NULL when unknown. */
const struct npf_config_key *npf_config_key_by_option(const char *option);

/* Upper-case placeholder for --help ("DURATION", "PATH"). Never NULL. */
const char *npf_config_type_name(enum npf_config_type t);

/* Every key at its default. Cannot fail. */
void npf_config_defaults(struct npf_config *cfg);

/*
 * Parses an INI text of len bytes (need not be NUL-terminated) into *cfg:
 * defaults first, then every key the text sets; the last of repeated keys
 * wins. Syntax is inih's ("[section]", "key = value" or "key: value",
 * full-line comments with '#' or ';'), plus: a ';' or '#' after a blank
 * starts an inline comment, leading whitespace is ignored (no continuation
 * lines), NUL and control bytes other than tab are refused, lines are
 * limited to NPF_CONFIG_LINE_MAX bytes, unknown sections and keys are errors.
 *
 * Returns 0, or -EINVAL (err gets "line N: ..." naming the section, key and
 * value at fault), -EFBIG when len > NPF_CONFIG_FILE_MAX, -ENOMEM. *cfg is
 * changed only on success. err (errlen bytes) may be NULL; "" on success.
 */
int npf_config_parse(struct npf_config *cfg, const char *text, size_t len, char *err,
		     size_t errlen);


/*
 * Sets one key from text, as a config line would (surrounding whitespace is
 * trimmed; a value a config line could not carry, such as one with " #",
 * is refused). With section NULL, key is an option name as for
 * npf_config_key_by_option(); otherwise the INI name in that section.
 * Returns 0 or -EINVAL (unknown key, bad value; err explains); *cfg is
 * unchanged on error.
 */
int npf_config_set(struct npf_config *cfg, const char *section, const char *key, const char *value,
		   char *err, size_t errlen);

/* Formats one key's value in config-file syntax (parses back to the same
 * value). Returns the length, or -ENOSPC when buf is too small. */
int npf_config_format(const struct npf_config *cfg, const struct npf_config_key *k, char *buf,
		      size_t len);

/* Writes the whole config as INI text, every key, sections in table order;
 * npf_config_parse() of the output gives an equal config. Returns the
 * length, or -ENOSPC (NPF_CONFIG_DUMP_MAX is always enough). */
int npf_config_dump(const struct npf_config *cfg, char *buf, size_t len);

/* True when every key has the same value in both. */
bool npf_config_equal(const struct npf_config *a, const struct npf_config *b);

#endif
