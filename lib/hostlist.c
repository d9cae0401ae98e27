// SPDX-License-Identifier: MIT
/* Slurm hostlist expansion: validate and count first, allocate only within the cap. */
#include "hostlist.h"
#include "api.h"
#include "model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 18 decimal digits always fit in uint64_t, so ranges never overflow. */
#define MAX_DIGITS 18
/* Counts saturate here: one past the cap is enough to refuse. */
#define COUNT_SAT ((uint64_t)NPF_HOSTLIST_MAX + 1)

struct scan {
	const char *expr;
	size_t len;
	char *err;
	size_t errlen;
};

/* One top-level token: [start, end) of expr, whitespace trimmed. */
struct token {
	size_t start, end;
	uint64_t count; /* names it expands to, saturated at COUNT_SAT */
	size_t maxlen;	/* longest name it expands to */
	bool more;	/* a top-level comma follows: another token must come */
};

struct range {
	uint64_t lo, hi;
	int width;   /* digits in the lower bound, leading zeros included */
	size_t next; /* offset just past the range text */
};

static int fail(struct scan *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct scan *s, int code, const char *fmt, ...)
{
	va_list ap;

	if (s->err && s->errlen) {
		va_start(ap, fmt);
		vsnprintf(s->err, s->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Describes a byte for an error message without echoing control bytes. */
static const char *show_char(char c, char buf[8])
{
	unsigned char u = (unsigned char)c;

	if (u > 0x20 && u < 0x7f)
		snprintf(buf, 8, "'%c'", c);
	else
		snprintf(buf, 8, "0x%02x", u);
	return buf;
}

static int decimal_width(uint64_t v)
{
	int w = 1;

	while (v >= 10) {
		v /= 10;
		w++;
	}
	return w;
}

/* Reads digits at expr[pos...]; returns how many there are (all of them,
 * even past MAX_DIGITS, so the caller can report the number as too long). */
static size_t read_number(const struct scan *s, size_t pos, uint64_t *v)
{
	size_t n = 0;

	*v = 0;
	while (pos + n < s->len && is_digit(s->expr[pos + n])) {
		if (n < MAX_DIGITS)
			*v = *v * 10 + (uint64_t)(s->expr[pos + n] - '0');
		n++;
	}
	return n;
}

/* Error for a byte where a bracket group expected something else. */
static int group_error(struct scan *s, size_t open, size_t pos, const char *what)
{
	char cb[8];

	if (pos >= s->len)
		return fail(s, -EINVAL, "unbalanced '[' at offset %zu", open);
	if (s->expr[pos] == '[')
		return fail(s, -EINVAL, "nested '[' at offset %zu", pos);
	if (s->expr[pos] == ']' || s->expr[pos] == ',')
		return fail(s, -EINVAL, "empty range at offset %zu", pos);
	if (is_space(s->expr[pos]))
		return fail(s, -EINVAL, "whitespace inside brackets at offset %zu", pos);
	return fail(s, -EINVAL, "%s %s at offset %zu", what, show_char(s->expr[pos], cb), pos);
}

static int read_bound(struct scan *s, size_t open, size_t pos, uint64_t *v, size_t *ndigits)
{
	*ndigits = read_number(s, pos, v);
	if (*ndigits == 0)
		return group_error(s, open, pos, "non-digit");
	if (*ndigits > MAX_DIGITS)
		return fail(s, -EINVAL, "number longer than %d digits at offset %zu", MAX_DIGITS,
			    pos);
	return 0;
}

/* Parses "lo" or "lo-hi" at pos inside the group opened at open. */
static int read_range(struct scan *s, size_t open, size_t pos, struct range *r)
{
	size_t nlo, nhi;
	int rc;

	rc = read_bound(s, open, pos, &r->lo, &nlo);
	if (rc < 0)
		return rc;
	r->width = (int)nlo;
	r->hi = r->lo;
	r->next = pos + nlo;
	if (r->next < s->len && s->expr[r->next] == '-') {
		rc = read_bound(s, open, r->next + 1, &r->hi, &nhi);
		if (rc < 0)
			return rc;
		if (r->hi < r->lo)
			return fail(s, -EINVAL,
				    "range %.*s-%.*s at offset %zu ends below its start", (int)nlo,
				    s->expr + pos, (int)nhi, s->expr + r->next + 1, pos);
		r->next += 1 + nhi;
	}
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b >= COUNT_SAT || a + b < a ? COUNT_SAT : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	if (a == 0 || b == 0)
		return 0;
	if (a >= COUNT_SAT || b >= COUNT_SAT || a > COUNT_SAT / b)
		return COUNT_SAT;
	return a * b >= COUNT_SAT ? COUNT_SAT : a * b;
}

/* Validates the group opened at expr[open]; returns the offset past its ']'
 * and what the group contributes to the token's count and length. */
static int scan_group(struct scan *s, size_t open, size_t *next, uint64_t *count, size_t *maxw)
{
	size_t pos = open + 1;
	struct range r;
	int rc;

	/* Bracket structure first, so "gpu[1-2,login" blames the '[' rather
	 * than the first byte that is not a digit. */
	for (size_t j = pos;; j++) {
		if (j >= s->len)
			return fail(s, -EINVAL, "unbalanced '[' at offset %zu", open);
		if (s->expr[j] == '[')
			return fail(s, -EINVAL, "nested '[' at offset %zu", j);
		if (s->expr[j] == ']')
			break;
	}
	*count = 0;
	*maxw = 0;
	for (;;) {
		rc = read_range(s, open, pos, &r);
		if (rc < 0)
			return rc;
		*count = sat_add(*count, r.hi - r.lo >= COUNT_SAT ? COUNT_SAT : r.hi - r.lo + 1);
		if ((size_t)r.width > *maxw)
			*maxw = (size_t)r.width;
		if ((size_t)decimal_width(r.hi) > *maxw)
			*maxw = (size_t)decimal_width(r.hi);
		pos = r.next;
		if (pos < s->len && s->expr[pos] == ',') {
			pos++;
			continue;
		}
		if (pos < s->len && s->expr[pos] == ']') {
			*next = pos + 1;
			return 0;
		}
		return group_error(s, open, pos, "unexpected");
	}
}

/* Scans the token starting at *pos (leading whitespace allowed) up to the
 * next top-level comma or the end; leaves *pos after that comma. */
static int scan_token(struct scan *s, size_t *pos, struct token *t)
{
	size_t i = *pos, len = 0;
	uint64_t count = 1;
	char cb[8];
	int rc;

	while (i < s->len && is_space(s->expr[i]))
		i++;
	t->start = i;
	for (;;) {
		char c = i < s->len ? s->expr[i] : '\0';

		if (i >= s->len || c == ',') {
			t->end = i;
			break;
		}
		if (is_space(c)) {
			size_t j = i;

			while (j < s->len && is_space(s->expr[j]))
				j++;
			if (j < s->len && s->expr[j] != ',')
				return fail(s, -EINVAL, "whitespace inside a name at offset %zu",
					    i);
			t->end = i;
			i = j;
			break;
		}
		if (c == '[') {
			uint64_t gcount = 0;
			size_t maxw = 0;

			rc = scan_group(s, i, &i, &gcount, &maxw);
			if (rc < 0)
				return rc;
			count = sat_mul(count, gcount);
			len += maxw;
			continue;
		}
		if (c == ']')
			return fail(s, -EINVAL, "unbalanced ']' at offset %zu", i);
		if (!npf_api_name_char(c))
			return fail(s, -EINVAL, "invalid character %s at offset %zu",
				    show_char(c, cb), i);
		len++;
		i++;
	}
	if (t->end == t->start)
		return fail(s, -EINVAL, "empty name at offset %zu", t->start);
	if (len >= NPF_NAME_MAX)
		return fail(s, -EINVAL, "name at offset %zu expands to %zu bytes (max %d)",
			    t->start, len, NPF_NAME_MAX - 1);
	t->count = count;
	t->maxlen = len;
	t->more = i < s->len; /* scanning stops only at a comma or the end */
	*pos = t->more ? i + 1 : i;
	return 0;
}

/* Output under construction: names plus an open-addressing set of them. */
struct out {
	char **names;
	size_t n;
	uint32_t *slots; /* 0 = empty, else index + 1 into names */
	size_t mask;
};

static uint64_t hash_name(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	while (*p) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static int emit(struct out *o, const char *name)
{
	size_t i = (size_t)hash_name(name) & o->mask;

	while (o->slots[i]) {
		if (strcmp(o->names[o->slots[i] - 1], name) == 0)
			return 0;
		i = (i + 1) & o->mask;
	}
	o->names[o->n] = strdup(name);
	if (!o->names[o->n])
		return -ENOMEM;
	o->slots[i] = (uint32_t)++o->n;
	return 0;
}

/* Expands expr[pos, end) of an already validated token after the prefix
 * buf[0, blen); one level of recursion per bracket group. */
static int generate(struct scan *s, struct out *o, size_t pos, size_t end, char *buf, size_t blen)
{
	size_t close, p;
	struct range r;
	int rc;

	while (pos < end && s->expr[pos] != '[')
		buf[blen++] = s->expr[pos++];
	if (pos == end) {
		buf[blen] = '\0';
		return emit(o, buf);
	}
	close = pos;
	while (s->expr[close] != ']')
		close++;
	for (p = pos + 1; p < close; p = r.next + 1) {
		rc = read_range(s, pos, p, &r);
		if (rc < 0)
			return rc;
		for (uint64_t v = r.lo;; v++) {
			int w = snprintf(buf + blen, NPF_NAME_MAX - blen, "%0*llu", r.width,
					 (unsigned long long)v);

			if (w < 0 || blen + (size_t)w >= NPF_NAME_MAX)
				return -EINVAL; /* scan_token bounded this already */
			rc = generate(s, o, close + 1, end, buf, blen + (size_t)w);
			if (rc < 0)
				return rc;
			if (v == r.hi)
				break;
		}
	}
	return 0;
}

void npf_hostlist_free(char **names, size_t n)
{
	if (!names)
		return;
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int npf_hostlist_expand(const char *expr, char ***names, size_t *n, char *err, size_t errlen)
{
	struct scan s = {.expr = expr, .err = err, .errlen = errlen};
	struct out o = {0};
	struct token t;
	uint64_t total = 0;
	size_t pos, slots;
	char buf[NPF_NAME_MAX];
	int rc;

	*names = NULL;
	*n = 0;
	if (err && errlen)
		err[0] = '\0';
	if (!expr)
		return fail(&s, -EINVAL, "no hostlist");
	s.len = strlen(expr);
	pos = 0;
	while (pos < s.len && is_space(expr[pos]))
		pos++;
	if (pos == s.len)
		return fail(&s, -EINVAL, "empty hostlist");

	/* Pass 1: validate everything and count, so a huge range costs nothing. */
	pos = 0;
	do {
		rc = scan_token(&s, &pos, &t);
		if (rc < 0)
			return rc;
		total = sat_add(total, t.count);
		if (total > NPF_HOSTLIST_MAX)
			return fail(&s, -E2BIG, "hostlist expands to more than %d names",
				    NPF_HOSTLIST_MAX);
	} while (t.more);

	for (slots = 2; slots < 2 * (size_t)total; slots <<= 1)
		;
	o.names = calloc((size_t)total, sizeof(*o.names));
	o.slots = calloc(slots, sizeof(*o.slots));
	o.mask = slots - 1;
	if (!o.names || !o.slots) {
		rc = fail(&s, -ENOMEM, "out of memory");
		goto err_free;
	}

	/* Pass 2: generate, dropping repeats. */
	pos = 0;
	do {
		rc = scan_token(&s, &pos, &t);
		if (rc < 0)
			goto err_free;
		rc = generate(&s, &o, t.start, t.end, buf, 0);
		if (rc < 0) {
			fail(&s, rc, "%s", rc == -ENOMEM ? "out of memory" : "internal error");
			goto err_free;
		}
	} while (t.more);
	free(o.slots);
	*names = o.names;
	*n = o.n;
	return (int)o.n;

err_free:
	free(o.slots);
	npf_hostlist_free(o.names, o.n);
	return rc;
}
