// SPDX-License-Identifier: MIT
/* Daemon configuration, the output: one key's value as text (npf_config_format()), the whole
 * config as an INI file that parses back to the same config (npf_config_dump()), and
 * equality. */
#include "config.h"
#include "config_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int join_patterns(const struct npf_pattern_list *l, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned int i = 0; i < l->n && i < NPF_CONFIG_PATTERNS_MAX; i++) {
		int n = snprintf(buf + off, len - off, "%s%.*s", i ? "," : "",
				 NPF_CONFIG_PATTERN_LEN - 1, l->pat[i]);

		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return (int)off;
}

static int join_pubvars(uint32_t bits, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	if ((bits & NPF_PUBVAR__ALL) == NPF_PUBVAR__ALL)
		return snprintf(buf, len, "all") >= (int)len ? -ENOSPC : 3;
	for (int v = 0; v < NPF_VAR__COUNT; v++) {
		const struct npf_var_info *r = npf_var_info((enum npf_var)v);
		int n;

		if (!(bits & r->bit))
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", r->name);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return (int)off;
}

int npf_config_format(const struct npf_config *cfg, const struct npf_config_key *k, char *buf,
		      size_t len)
{
	const char *f = (const char *)cfg + k->offset;
	uint32_t u32;
	uint16_t u16;
	bool b;
	int i, n;

	if (!len)
		return -ENOSPC;
	switch (k->type) {
	case NPF_CT_STRING:
	case NPF_CT_PATH:
		n = snprintf(buf, len, "%.*s", (int)strnlen(f, k->size), f);
		break;
	case NPF_CT_BOOL:
		memcpy(&b, f, sizeof(b));
		n = snprintf(buf, len, "%s", b ? "true" : "false");
		break;
	case NPF_CT_U16:
		memcpy(&u16, f, sizeof(u16));
		n = snprintf(buf, len, "%u", u16);
		break;
	case NPF_CT_UINT:
		memcpy(&u32, f, sizeof(u32));
		n = snprintf(buf, len, "%u", u32);
		break;
	case NPF_CT_DURATION:
		memcpy(&u32, f, sizeof(u32));
		n = u32 % SEC ? snprintf(buf, len, "%ums", u32)
			      : snprintf(buf, len, "%us", u32 / SEC);
		break;
	case NPF_CT_SIZE:
		memcpy(&u32, f, sizeof(u32));
		if (u32 && u32 % MIB == 0)
			n = snprintf(buf, len, "%uM", u32 / MIB);
		else if (u32 && u32 % 1024 == 0)
			n = snprintf(buf, len, "%uk", u32 / 1024);
		else
			n = snprintf(buf, len, "%u", u32);
		break;
	case NPF_CT_FALLBACK:
		memcpy(&i, f, sizeof(i));
		n = snprintf(buf, len, "%s", i == NPF_FALLBACK_DEGRADE ? "degrade" : "drain");
		break;
	case NPF_CT_LOGLEVEL:
		memcpy(&i, f, sizeof(i));
		n = snprintf(buf, len, "%s", i == NPF_CONFIG_LOG_DEBUG ? "debug" : "info");
		break;
	case NPF_CT_PATTERNS:
		return join_patterns((const struct npf_pattern_list *)(const void *)f, buf, len);
	case NPF_CT_VERSION:
		memcpy(&i, f, sizeof(i));
		if (i == NPF_NCCL_VERSION_CURRENT)
			n = snprintf(buf, len, "current");
		else
			n = snprintf(buf, len, "%d.%d.%d", i / 10000, i / 100 % 100, i % 100);
		break;
	case NPF_CT_VARLIST:
		memcpy(&u32, f, sizeof(u32));
		return join_pubvars(u32, buf, len);
	default:
		return -EINVAL;
	}
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}

int npf_config_dump(const struct npf_config *cfg, char *buf, size_t len)
{
	size_t n_keys;
	const struct npf_config_key *keys = npf_config_keys(&n_keys);
	const char *section = NULL;
	size_t off = 0;
	int n;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	for (size_t i = 0; i < n_keys; i++) {
		const struct npf_config_key *k = &keys[i];

		if (!section || strcmp(section, k->section) != 0) {
			n = snprintf(buf + off, len - off, "%s[%s]\n", section ? "\n" : "",
				     k->section);
			if (n < 0 || (size_t)n >= len - off)
				return -ENOSPC;
			off += (size_t)n;
			section = k->section;
		}
		n = snprintf(buf + off, len - off, "%s =", k->name);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
		/* " value\n": format after the space, then fix up empties. */
		if (len - off < 2)
			return -ENOSPC;
		buf[off] = ' ';
		n = npf_config_format(cfg, k, buf + off + 1, len - off - 1);
		if (n < 0)
			return n;
		off += n ? (size_t)n + 1 : 0;
		if (len - off < 2)
			return -ENOSPC;
		buf[off++] = '\n';
		buf[off] = '\0';
	}
	return (int)off;
}

bool npf_config_equal(const struct npf_config *a, const struct npf_config *b)
{
	size_t n_keys;
	const struct npf_config_key *keys = npf_config_keys(&n_keys);

	for (size_t i = 0; i < n_keys; i++) {
		const struct npf_config_key *k = &keys[i];
		const char *fa = (const char *)a + k->offset, *fb = (const char *)b + k->offset;
		const struct npf_pattern_list *pa, *pb;

		switch (k->type) {
		case NPF_CT_STRING:
		case NPF_CT_PATH:
			if (strncmp(fa, fb, k->size) != 0)
				return false;
			break;
		case NPF_CT_PATTERNS:
			pa = (const struct npf_pattern_list *)(const void *)fa;
			pb = (const struct npf_pattern_list *)(const void *)fb;
			if (pa->n != pb->n)
				return false;
			for (unsigned int j = 0; j < pa->n && j < NPF_CONFIG_PATTERNS_MAX; j++)
				if (strncmp(pa->pat[j], pb->pat[j], NPF_CONFIG_PATTERN_LEN) != 0)
					return false;
			break;
		default:
			if (memcmp(fa, fb, k->size) != 0)
				return false;
			break;
		}
	}
	return true;
}
