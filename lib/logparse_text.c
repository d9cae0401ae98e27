// SPDX-License-Identifier: MIT
/* The line layer's text helpers: bounded spans, UTF-8 cleaning, tokens and numbers, and the
 * two facts read from a name (interface:address, a bridge's name). Pure. */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "logparse_internal.h"

const char *xp_span_find(struct span s, const char *needle)
{
	size_t k = strlen(needle);

	if (!k)
		return s.p;
	for (size_t i = 0; i + k <= s.n; i++)
		if (s.p[i] == needle[0] && memcmp(s.p + i, needle, k) == 0)
			return s.p + i;
	return NULL;
}

size_t npf_xp_clean_text(char *dst, size_t dstlen, const char *p, size_t n)
{
	size_t o = 0, i = 0;

	if (!dstlen)
		return 0;
	while (i < n && o + 1 < dstlen) {
		unsigned char c = (unsigned char)p[i];
		size_t k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
		uint32_t cp = k == 4 ? c & 0x07u : k == 3 ? c & 0x0fu : c & 0x1fu;
		bool ok = c >= 0xc2 && c <= 0xf4 && i + k <= n && o + k < dstlen;

		if (c < 0x80) {
			dst[o++] = (c < ' ' || c == 0x7f) ? '?' : (char)c;
			i++;
			continue;
		}
		for (size_t j = 1; ok && j < k; j++) {
			unsigned char cc = (unsigned char)p[i + j];

			ok = (cc & 0xc0) == 0x80;
			cp = (cp << 6) | (cc & 0x3fu);
		}
		/* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8. */
		ok = ok && !(k == 3 && cp < 0x800) && !(k == 4 && cp < 0x10000) &&
		     !(cp >= 0xd800 && cp <= 0xdfff) && cp <= 0x10ffff;
		if (!ok) {
			if (c >= 0xc2 && c <= 0xf4 && i + k <= n && o + k >= dstlen)
				break; /* a valid character that does not fit: cut before it */
			dst[o++] = '?';
			i++;
			continue;
		}
		memcpy(dst + o, p + i, k);
		o += k;
		i += k;
	}
	dst[o] = '\0';
	return o;
}

/* Copies [p, p+n) into dst as text (npf_xp_clean_text()). */
void xp_copy_clean(char *dst, size_t dstlen, const char *p, size_t n)
{
	npf_xp_clean_text(dst, dstlen, p, n);
}

/* The token starting at p (within end): up to a blank, or one of stop. */
size_t xp_token_len(const char *p, const char *end, const char *stop)
{
	size_t n = 0;

	while (p + n < end && !isspace((unsigned char)p[n]) && p[n] != '\0' && !strchr(stop, p[n]))
		n++;
	return n;
}

int npf_xp_split_ifaddr(const char *s, size_t len, char *ifname, size_t iflen, char *addr,
			size_t addrlen)
{
	/* ncclSocketToString(): "eth0:10.0.0.1<0>", "ib0:fe80::1%ib0<0>". The first ':' ends the
	 * name (interface names cannot hold one in these logs: alias labels are not listed). */
	const char *colon = memchr(s, ':', len), *lt;
	size_t alen;

	if (!colon || colon == s)
		return -EINVAL;
	xp_copy_clean(ifname, iflen, s, (size_t)(colon - s));
	lt = memchr(colon + 1, '<', len - (size_t)(colon + 1 - s));
	alen = lt ? (size_t)(lt - colon - 1) : len - (size_t)(colon + 1 - s);
	xp_copy_clean(addr, addrlen, colon + 1, alen);
	return 0;
}

bool npf_xp_bridge_name(const char *n)
{
	/* Names of bridges and container links a host carries besides its fabric: NCCL excludes
	 * docker* and virbr* only in auto mode (nccl.md §1.2), and nothing excludes the others. */
	static const char *const prefixes[] = {"docker", "virbr",   "veth", "cni",     "podman",
					       "lxcbr",	 "flannel", "cali", "cilium_", "vnet"};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(n, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	if (strncmp(n, "br-", 3) == 0 && strlen(n) == 15) {
		for (size_t i = 3; i < 15; i++)
			if (!isxdigit((unsigned char)n[i]))
				return false;
		return true;
	}
	return false;
}

bool xp_digits(const char *p, const char *end, size_t n)
{
	if ((size_t)(end - p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)p[i]))
			return false;
	return true;
}

long xp_num(const char *p, size_t n)
{
	long v = 0;

	for (size_t i = 0; i < n; i++)
		v = v * 10 + (p[i] - '0');
	return v;
}
