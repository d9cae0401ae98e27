// SPDX-License-Identifier: MIT
/*
 * Build-time tool: writes netpreflight.conf(5) in scdoc syntax from the configuration
 * key table (npf_config_keys()), the same table that drives parsing, the daemon's
 * options, --help and --check-config --print. A key added to lib/config.c is
 * therefore documented by the next build; there is no list to forget.
 *
 * Usage: gen_conf_man TEMPLATE OUTPUT
 * Copies TEMPLATE to OUTPUT, replacing the line "@@TYPES@@" with the value types
 * used by the table and "@@KEYS@@" with one entry per key, grouped by section in
 * table order. Exit 0, or 1 with a message (usage, I/O error).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* What each value type accepts, in words (docs/config.md "Value types"). Indexed by
 * enum npf_config_type; a type without an entry gets UNDOCUMENTED_TYPE (pkg.man fails). */
static const char *const type_doc[NPF_CT__COUNT] = {
    [NPF_CT_STRING] = "printable text, at most 63 bytes; a key marked *name* takes only "
		      "letters, digits, \".\", \"\\_\" and \"-\".",
    [NPF_CT_PATH] = "an absolute path, shorter than 4096 bytes (a socket path: 108).",
    [NPF_CT_BOOL] = "*yes*/*no*, *true*/*false*, *on*/*off*, *1*/*0*, in any case; printed "
		    "as *true* or *false*.",
    [NPF_CT_U16] = "a TCP port number, decimal.",
    [NPF_CT_UINT] = "a decimal number within the key's range.",
    [NPF_CT_DURATION] = "a number with an optional unit *ms*, *s* (the default), *m* or *h*; "
			"decimals down to whole milliseconds: *3*, *3s*, *500ms*, *1.5s*, *5m*.",
    [NPF_CT_SIZE] = "bytes, optionally with *k*, *M* or *G* (powers of 1024, either case): "
		    "*262144*, *256k*, *16M*.",
    [NPF_CT_LOGLEVEL] = "*info* or *debug*.",
    [NPF_CT_FALLBACK] = "*drain* (the nodes the failure points at fail, the rest of the job "
			"stays on the best network) or *degrade* (the whole job moves to the next "
			"network).",
    [NPF_CT_PATTERNS] = "comma-separated shell globs (*fnmatch*(3)) on interface names, blanks "
			"around commas ignored; at most 32 globs of at most 63 bytes; empty: "
			"none.",
    [NPF_CT_VERSION] = "an NCCL version *MAJOR.MINOR[.PATCH]* (each part 0..99), or *current* "
		       "for the newest rules netpreflight knows.",
    [NPF_CT_VARLIST] = "comma-separated environment variable names from the key's default "
		       "list; empty or *all*: every one.",
};

/* Text for a type added to config.h but not to type_doc: the page still builds (and
 * lists every key), and the test pkg.man fails on this sentence. */
#define UNDOCUMENTED_TYPE "undocumented value type: see /usr/share/doc/netpreflight/config.md."

/* scdoc markup characters in table text are literal. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '*' || *s == '_')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* Lists are written with a blank after each comma so that long defaults (the
 * variables list) can be broken by the formatter; the parser ignores the blanks. */
static void put_value(FILE *f, const struct npf_config_key *k, const char *v)
{
	bool list = k->type == NPF_CT_PATTERNS || k->type == NPF_CT_VARLIST;

	for (; *v; v++) {
		if (*v == '\\' || *v == '*' || *v == '_')
			fputc('\\', f);
		fputc(*v, f);
		if (list && *v == ',')
			fputc(' ', f);
	}
}

/* A bound in the key's stored units (ms, bytes) in config syntax: 100ms, 60s, 24h, 16M
 * (seconds rather than minutes: the ranges in docs/config.md read 100ms..60s). */
static void fmt_bound(char *buf, size_t len, enum npf_config_type t, uint64_t v)
{
	if (t == NPF_CT_DURATION) {
		if (v && v % 3600000 == 0)
			snprintf(buf, len, "%" PRIu64 "h", v / 3600000);
		else if (v && v % 1000 == 0)
			snprintf(buf, len, "%" PRIu64 "s", v / 1000);
		else
			snprintf(buf, len, "%" PRIu64 "ms", v);
	} else if (t == NPF_CT_SIZE) {
		if (v && v % (1024 * 1024) == 0)
			snprintf(buf, len, "%" PRIu64 "M", v / (1024 * 1024));
		else if (v && v % 1024 == 0)
			snprintf(buf, len, "%" PRIu64 "k", v / 1024);
		else
			snprintf(buf, len, "%" PRIu64, v);
	} else {
		snprintf(buf, len, "%" PRIu64, v);
	}
}

static bool has_range(const struct npf_config_key *k)
{
	return (k->type == NPF_CT_UINT || k->type == NPF_CT_U16 || k->type == NPF_CT_DURATION ||
		k->type == NPF_CT_SIZE) &&
	       k->max > 0;
}

static void put_types(FILE *f)
{
	size_t n;
	const struct npf_config_key *keys = npf_config_keys(&n);

	for (int t = 0; t < NPF_CT__COUNT; t++) {
		bool used = false;

		for (size_t i = 0; i < n; i++)
			used |= keys[i].type == (enum npf_config_type)t;
		if (!used)
			continue;
		if (!type_doc[t])
			fprintf(stderr, "gen_conf_man: warning: value type %s has no description\n",
				npf_config_type_name((enum npf_config_type)t));
		fprintf(f, "*%s*\n\t%s\n\n", npf_config_type_name((enum npf_config_type)t),
			type_doc[t] ? type_doc[t] : UNDOCUMENTED_TYPE);
	}
}

static void put_keys(FILE *f)
{
	size_t n;
	const struct npf_config_key *keys = npf_config_keys(&n);
	const char *section = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct npf_config_key *k = &keys[i];
		char lo[32], hi[32];

		if (!section || strcmp(section, k->section) != 0) {
			section = k->section;
			fprintf(f, "## [%s]\n\n", section);
		}
		fputc('*', f);
		put_escaped(f, k->name);
		fprintf(f, "* = _%s_\n\t", npf_config_type_name(k->type));
		put_escaped(f, k->help);
		fputs(".\n\n\tDefault: ", f);
		if (k->def[0]) {
			fputc('*', f);
			put_value(f, k, k->def);
			fputc('*', f);
		} else {
			fputs("empty", f);
		}
		fputs(".", f);
		if (has_range(k)) {
			fmt_bound(lo, sizeof(lo), k->type, k->min);
			fmt_bound(hi, sizeof(hi), k->type, k->max);
			fprintf(f, " Range: %s..%s.", lo, hi);
		}
		if (k->flags & NPF_CK_NAME_CHARS)
			fputs(" A name: letters, digits, \".\", \"\\_\", \"-\".", f);
		if ((k->flags & NPF_CK_EMPTY_OK) && k->def[0])
			fputs(" May be empty.", f);
		fputs(" Option: *--", f);
		put_escaped(f, k->option);
		fprintf(f, "* _%s_.\n\n", npf_config_type_name(k->type));
	}
}

int main(int argc, char **argv)
{
	char line[4096];
	FILE *in, *out;
	int rc = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: gen_conf_man TEMPLATE OUTPUT\n");
		return 1;
	}
	in = fopen(argv[1], "re");
	if (!in) {
		perror(argv[1]);
		return 1;
	}
	out = fopen(argv[2], "we");
	if (!out) {
		perror(argv[2]);
		fclose(in);
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		if (strcmp(line, "@@TYPES@@\n") == 0)
			put_types(out);
		else if (strcmp(line, "@@KEYS@@\n") == 0)
			put_keys(out);
		else
			fputs(line, out);
	}
	if (ferror(in) || fclose(out) != 0) {
		fprintf(stderr, "gen_conf_man: writing %s failed\n", argv[2]);
		rc = 1;
	}
	fclose(in);
	return rc;
}
