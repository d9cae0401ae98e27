// SPDX-License-Identifier: MIT
/* Daemon configuration, what a key accepts: one value parser per type of the key table
 * (numbers with a range, durations, sizes, booleans, versions, glob and variable lists, text
 * and paths), and setting one key from text (npf_config_set(), the defaults). */
#include "config.h"
#include "config_internal.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A parsed value before it is stored, so a bad value leaves the field alone. */
union value {
	char text[NPF_CONFIG_PATH_MAX];
	bool b;
	uint16_t u16;
	uint32_t u32;
	int i;
	struct npf_pattern_list pats;
};

void npf_cfg_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- value parsers: 0 or -EINVAL with a reason in why ---- */

static int bad(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Reads a decimal number of at most 12 digits; anything longer is out of
 * every range we have, and stopping there keeps uint64_t safe. */
static int read_u64(const char **p, uint64_t *v)
{
	int n = 0;

	*v = 0;
	while (**p >= '0' && **p <= '9') {
		if (++n > 12)
			return -ERANGE;
		*v = *v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	return n;
}

static int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *why,
		      size_t whylen)
{
	const char *p = s;
	int n = read_u64(&p, out);

	if (n == -ERANGE || (n > 0 && !*p && (*out < min || *out > max)))
		return bad(why, whylen, "must be %llu..%llu", (unsigned long long)min,
			   (unsigned long long)max);
	if (n <= 0 || *p)
		return bad(why, whylen, "not a number");
	return 0;
}

static int parse_bool(const char *s, bool *out, char *why, size_t whylen)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return bad(why, whylen, "want yes/no, true/false, on/off or 1/0");
}

/* "1.5s" -> 1500. No unit means seconds. Only whole milliseconds. */
static int parse_duration(const char *s, uint64_t min, uint64_t max, uint32_t *out, char *why,
			  size_t whylen)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = {{"", SEC}, {"ms", 1}, {"s", SEC}, {"m", 60 * SEC}, {"h", 3600 * SEC}};
	const char *p = s;
	uint64_t ip, frac = 0, scale = 1, ms;
	int n, nf = 0;

	n = read_u64(&p, &ip);
	if (n == -ERANGE)
		goto range;
	if (*p == '.') {
		const char *f = ++p;

		nf = read_u64(&p, &frac);
		if (nf == -ERANGE || nf > 6)
			return bad(why, whylen, "too many decimals");
		for (const char *q = f; q < p; q++)
			scale *= 10;
		if (nf == 0)
			return bad(why, whylen, "want a number and ms, s, m or h");
	}
	if (n == 0 && nf == 0)
		return bad(why, whylen, "want a number and ms, s, m or h");
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].unit) != 0)
			continue;
		if ((frac * units[i].ms) % scale)
			return bad(why, whylen, "finer than a millisecond");
		ms = ip * units[i].ms + frac * units[i].ms / scale;
		if (ms < min || ms > max)
			goto range;
		*out = (uint32_t)ms;
		return 0;
	}
	return bad(why, whylen, "unknown unit '%.8s' (want ms, s, m or h)", p);
range:
	if (min % SEC == 0 && max % SEC == 0)
		return bad(why, whylen, "must be %llus..%llus", (unsigned long long)(min / SEC),
			   (unsigned long long)(max / SEC));
	return bad(why, whylen, "must be %llums..%llums", (unsigned long long)min,
		   (unsigned long long)max);
}

/* "256k" -> 262144; k, M, G are powers of 1024, either case. */
static int parse_size(const char *s, uint64_t min, uint64_t max, uint32_t *out, char *why,
		      size_t whylen)
{
	const char *p = s;
	uint64_t v, mult = 1;
	int n = read_u64(&p, &v);

	if (n == 0)
		return bad(why, whylen, "want bytes, optionally with k, M or G");
	if (n > 0) {
		switch (*p) {
		case 'k':
		case 'K':
			mult = 1024;
			p++;
			break;
		case 'm':
		case 'M':
			mult = MIB;
			p++;
			break;
		case 'g':
		case 'G':
			mult = 1024u * MIB;
			p++;
			break;
		default:
			break;
		}
		if (*p)
			return bad(why, whylen, "want bytes, optionally with k, M or G");
	}
	if (n < 0 || v > max || v * mult < min || v * mult > max)
		return bad(why, whylen, "must be %llu..%llu bytes", (unsigned long long)min,
			   (unsigned long long)max);
	*out = (uint32_t)(v * mult);
	return 0;
}

static int parse_version(const char *s, int *out, char *why, size_t whylen)
{
	const char *p = s;
	uint64_t part[3] = {0, 0, 0};
	int i;

	if (strcasecmp(s, "current") == 0) {
		*out = NPF_NCCL_VERSION_CURRENT;
		return 0;
	}
	for (i = 0; i < 3; i++) {
		int n = read_u64(&p, &part[i]);

		if (n <= 0 || n > 2 || (i == 0 && part[0] == 0))
			return bad(why, whylen,
				   "want MAJOR.MINOR[.PATCH] (parts 0..99) or current");
		if (*p != '.')
			break;
		p++;
	}
	if (*p || i == 0)
		return bad(why, whylen, "want MAJOR.MINOR[.PATCH] (parts 0..99) or current");
	*out = NPF_NCCL_VERSION((int)part[0], (int)part[1], (int)part[2]);
	return 0;
}

/* Calls fn on each trimmed, comma-separated item of s; an empty s has none. */
static int each_item(const char *s,
		     int (*fn)(const char *item, size_t len, void *ctx, char *why, size_t whylen),
		     void *ctx, char *why, size_t whylen)
{
	const char *p = s;

	if (!*s)
		return 0;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int rc;

		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (!len)
			return bad(why, whylen, "empty item in list");
		rc = fn(p, len, ctx, why, whylen);
		if (rc < 0)
			return rc;
		if (!e)
			return 0;
		p = e + 1;
	}
}

static int add_pattern(const char *item, size_t len, void *ctx, char *why, size_t whylen)
{
	struct npf_pattern_list *l = ctx;

	if (l->n >= NPF_CONFIG_PATTERNS_MAX)
		return bad(why, whylen, "more than %d patterns", NPF_CONFIG_PATTERNS_MAX);
	if (len >= NPF_CONFIG_PATTERN_LEN)
		return bad(why, whylen, "pattern '%.*s...' longer than %d bytes", 16, item,
			   NPF_CONFIG_PATTERN_LEN - 1);
	/* What the kernel refuses in interface names (dev_valid_name) can
	 * never match, so it is a typo. */
	for (size_t i = 0; i < len; i++)
		if (item[i] == ' ' || item[i] == '\t' || item[i] == '/' || item[i] == ':')
			return bad(why, whylen,
				   "pattern '%.*s' has '%c', which no interface name has", (int)len,
				   item, item[i]);
	memcpy(l->pat[l->n], item, len);
	l->pat[l->n][len] = '\0';
	l->n++;
	return 0;
}

static int add_pubvar(const char *item, size_t len, void *ctx, char *why, size_t whylen)
{
	uint32_t *bits = ctx;

	for (int v = 0; v < NPF_VAR__COUNT; v++) {
		const struct npf_var_info *r = npf_var_info((enum npf_var)v);

		if (r->bit && strlen(r->name) == len && strncmp(r->name, item, len) == 0) {
			*bits |= r->bit;
			return 0;
		}
	}
	if (len == 3 && strncmp(item, "all", 3) == 0)
		return bad(why, whylen, "'all' cannot be combined with names");
	return bad(why, whylen, "unknown variable '%.*s'", len > 40 ? 40 : (int)len, item);
}

static int parse_text(const struct npf_config_key *k, const char *s, char *out, char *why,
		      size_t whylen)
{
	size_t len = strlen(s);

	if (!len && !(k->flags & NPF_CK_EMPTY_OK))
		return bad(why, whylen, "must not be empty");
	if (len >= k->size)
		return bad(why, whylen, "longer than %zu bytes", k->size - 1);
	if (k->type == NPF_CT_PATH && len && s[0] != '/')
		return bad(why, whylen, "not an absolute path");
	for (size_t i = 0; (k->flags & NPF_CK_NAME_CHARS) && i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return bad(why, whylen, "only letters, digits, '.', '_' and '-' allowed");
	}
	memcpy(out, s, len + 1);
	return 0;
}

/* Parses text for key k into v. s is trimmed and free of control bytes. */
static int parse_value(const struct npf_config_key *k, const char *s, union value *v, char *why,
		       size_t whylen)
{
	uint64_t u;
	int rc;

	memset(v, 0, sizeof(*v));
	switch (k->type) {
	case NPF_CT_STRING:
	case NPF_CT_PATH:
		return parse_text(k, s, v->text, why, whylen);
	case NPF_CT_BOOL:
		return parse_bool(s, &v->b, why, whylen);
	case NPF_CT_U16:
		rc = parse_uint(s, k->min, k->max, &u, why, whylen);
		v->u16 = (uint16_t)u;
		return rc;
	case NPF_CT_UINT:
		rc = parse_uint(s, k->min, k->max, &u, why, whylen);
		v->u32 = (uint32_t)u;
		return rc;
	case NPF_CT_DURATION:
		return parse_duration(s, k->min, k->max, &v->u32, why, whylen);
	case NPF_CT_SIZE:
		return parse_size(s, k->min, k->max, &v->u32, why, whylen);
	case NPF_CT_FALLBACK:
		if (strcasecmp(s, "drain") == 0)
			v->i = NPF_FALLBACK_DRAIN;
		else if (strcasecmp(s, "degrade") == 0)
			v->i = NPF_FALLBACK_DEGRADE;
		else
			return bad(why, whylen, "want drain or degrade");
		return 0;
	case NPF_CT_LOGLEVEL:
		if (strcasecmp(s, "info") == 0)
			v->i = NPF_CONFIG_LOG_INFO;
		else if (strcasecmp(s, "debug") == 0)
			v->i = NPF_CONFIG_LOG_DEBUG;
		else
			return bad(why, whylen, "want info or debug");
		return 0;
	case NPF_CT_PATTERNS:
		return each_item(s, add_pattern, &v->pats, why, whylen);
	case NPF_CT_VERSION:
		return parse_version(s, &v->i, why, whylen);
	case NPF_CT_VARLIST:
		if (!*s || strcmp(s, "all") == 0) {
			v->u32 = NPF_PUBVAR__ALL;
			return 0;
		}
		return each_item(s, add_pubvar, &v->u32, why, whylen);
	case NPF_CT__COUNT:
		break;
	}
	return bad(why, whylen, "key of unknown type");
}

static void store_value(const struct npf_config_key *k, struct npf_config *cfg,
			const union value *v)
{
	char *f = (char *)cfg + k->offset;

	switch (k->type) {
	case NPF_CT_STRING:
	case NPF_CT_PATH:
		/* Zero-fill the whole buffer so equal configs are equal bytes. */
		memset(f, 0, k->size);
		memcpy(f, v->text, strnlen(v->text, k->size - 1));
		break;
	default:
		memcpy(f, v, k->size);
		break;
	}
}

/*
 * Validates and stores one value; why gets the reason on failure. The value
 * may come from the command line, so it is trimmed here too, and anything a
 * config line could not carry (control bytes, " ;" which inih takes as a
 * comment) is refused so that dump -> parse stays exact.
 */
int npf_cfg_apply(struct npf_config *cfg, const struct npf_config_key *k, const char *raw,
		  char *why, size_t whylen)
{
	char s[NPF_CONFIG_LINE_MAX + 1];
	union value v;
	size_t len;
	int rc;

	while (*raw == ' ' || *raw == '\t')
		raw++;
	len = strnlen(raw, NPF_CONFIG_LINE_MAX + 1);
	if (len > NPF_CONFIG_LINE_MAX)
		return bad(why, whylen, "value longer than %d bytes", NPF_CONFIG_LINE_MAX);
	while (len && (raw[len - 1] == ' ' || raw[len - 1] == '\t'))
		len--;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)raw[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return bad(why, whylen, "control character 0x%02x at position %zu", c, i);
		/* At i == 0 too: dump writes "key = value", a blank before it. */
		if ((c == ';' || c == '#') && (!i || raw[i - 1] == ' ' || raw[i - 1] == '\t'))
			return bad(why, whylen,
				   "'%c' at the start or after a blank reads as a comment", c);
	}
	memcpy(s, raw, len);
	s[len] = '\0';
	rc = parse_value(k, s, &v, why, whylen);
	if (rc == 0)
		store_value(k, cfg, &v);
	return rc;
}

/* Copies at most 60 bytes of a value into an error message, marking cuts. */
const char *npf_cfg_quote(const char *value, char buf[72])
{
	size_t len = strlen(value);

	for (size_t i = 0; i < len && i < 60; i++) {
		unsigned char c = (unsigned char)value[i];

		buf[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	if (len > 60)
		memcpy(buf + 60, "...", 4);
	else
		buf[len] = '\0';
	return buf;
}

void npf_config_defaults(struct npf_config *cfg)
{
	char why[128];

	size_t n_keys;
	const struct npf_config_key *keys = npf_config_keys(&n_keys);

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < n_keys; i++) {
		int rc = npf_cfg_apply(cfg, &keys[i], keys[i].def, why, sizeof(why));

		/* Defaults are constants; a unit test parses every one. */
		assert(rc == 0);
		(void)rc;
	}
}

int npf_config_set(struct npf_config *cfg, const char *section, const char *key, const char *value,
		   char *err, size_t errlen)
{
	const struct npf_config_key *k;
	char why[160], q[72];
	int rc;

	npf_cfg_set_err(err, errlen, "%s", "");
	k = section ? npf_config_key_find(section, key) : npf_config_key_by_option(key);
	if (!k) {
		if (section)
			npf_cfg_set_err(err, errlen, "unknown key '%s' in [%s]", key ? key : "",
					section);
		else
			npf_cfg_set_err(err, errlen, "unknown option '%s'", key ? key : "");
		return -EINVAL;
	}
	if (!value) {
		npf_cfg_set_err(err, errlen, "[%s] %s: no value", k->section, k->name);
		return -EINVAL;
	}
	rc = npf_cfg_apply(cfg, k, value, why, sizeof(why));
	if (rc < 0)
		npf_cfg_set_err(err, errlen, "[%s] %s: bad value '%s': %s", k->section, k->name,
				npf_cfg_quote(value, q), why);
	return rc;
}
