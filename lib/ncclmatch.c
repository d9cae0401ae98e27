// SPDX-License-Identifier: MIT
/* NCCL list grammar: a faithful model of parseStringList/matchIfList (nccl.md §1.4, §3). */
#include "ncclmatch.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

/* atoi() as NCCL calls it on the text after ':', but without atoi's undefined overflow. */
static int port_atoi(const char *s)
{
	long v = 0;
	int sign = 1;

	while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		s++;
	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (*s++ - '0');
		if (v > INT_MAX)
			v = INT_MAX;
	}
	return (int)(sign * v);
}

int ncclmatch_parse(const char *value, enum ncclmatch_kind kind, struct ncclmatch_list *out)
{
	size_t max = kind == NCCLMATCH_IB ? NCCLMATCH_IB_MAX : NCCLMATCH_SOCKET_MAX;
	const char *p;
	size_t len = 0;

	if (!value || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->kind = kind;
	/* ncclFindInterfaces only honours NCCL_SOCKET_IFNAME when strlen(env) > 1. */
	if (kind == NCCLMATCH_SOCKET && strlen(value) <= 1) {
		out->ignored = true;
		return 0;
	}
	p = value;
	if (*p == '^') {
		out->negate = true;
		p++;
	}
	if (*p == '=') {
		out->exact = true;
		p++;
	}
	for (;;) {
		char c = *p;

		if (c == ':' || c == ',' || c == '\0') {
			if (len > 0) {
				if (out->n < max) {
					struct ncclmatch_entry *e = &out->e[out->n++];

					e->name[len] = '\0';
					e->port = c == ':' ? port_atoi(p + 1) : -1;
				} else {
					out->dropped++;
				}
				len = 0;
			}
			/* Everything after ':' up to the next ',' is port (and, in
			 * 2.30.7+, rail/plane); none of it is part of the name. */
			if (c == ':')
				while (*p != ',' && *p != '\0')
					p++;
			if (*p == '\0')
				break;
			p++;
			continue;
		}
		/* NCCL stops reading after max tokens, so only those must fit. */
		if (out->n < max) {
			if (len + 1 >= NCCLMATCH_TOKEN_MAX)
				return -ENAMETOOLONG;
			out->e[out->n].name[len] = c;
		}
		len++;
		p++;
	}
	return 0;
}

/* matchIf(): without '=' the token is a prefix of the name; with it the whole name. */
static bool match_name(const char *name, const char *tok, bool exact)
{
	if (exact)
		return strcmp(name, tok) == 0;
	return strncmp(name, tok, strlen(tok)) == 0;
}

static bool match_list(const struct ncclmatch_list *l, const char *name, int port)
{
	if (l->n == 0)
		return true;
	for (size_t i = 0; i < l->n; i++) {
		const struct ncclmatch_entry *e = &l->e[i];

		if (!match_name(name, e->name, l->exact))
			continue;
		if (port == -1 || e->port == -1 || port == e->port)
			return true;
	}
	return false;
}

bool ncclmatch_ifname(const struct ncclmatch_list *l, const char *ifname)
{
	if (!l || !ifname)
		return false;
	if (l->ignored)
		return true;
	/* The socket path calls matchIfList(name, -1, ...): ports never restrict. */
	return match_list(l, ifname, -1) != l->negate;
}

bool ncclmatch_hca(const struct ncclmatch_list *l, const char *dev, int port)
{
	if (!l || !dev)
		return false;
	return match_list(l, dev, port) != l->negate;
}

size_t ncclmatch_select(const struct ncclmatch_list *l, const char *const *names, size_t n,
			bool *selected)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		selected[i] = ncclmatch_ifname(l, names[i]);
		if (selected[i])
			count++;
	}
	return count;
}
