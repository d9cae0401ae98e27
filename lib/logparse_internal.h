/* SPDX-License-Identifier: MIT */
/* What the line-layer modules of `explain` share and nothing else uses. The arrows (no cycles):
 * logparse.c (one line) -> logparse_prefix.c (prefixes), logparse_rows.c (line kinds)
 * -> logparse_text.c (spans, text, numbers). */
#ifndef NPF_LOGPARSE_INTERNAL_H
#define NPF_LOGPARSE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "explain.h"

/* A bounded view of the message being classified. */
struct span {
	const char *p;
	size_t n;
};

/* ---- logparse_text.c ---- */

/* The first occurrence of needle in s, or NULL ("" is found at the start). */
const char *xp_span_find(struct span s, const char *needle);
/* Copies [p, p+n) into dst as text (npf_xp_clean_text()). */
void xp_copy_clean(char *dst, size_t dstlen, const char *p, size_t n);
/* The token starting at p (within end): up to a blank, or one of stop. */
size_t xp_token_len(const char *p, const char *end, const char *stop);
/* n decimal digits at p (within end). */
bool xp_digits(const char *p, const char *end, size_t n);
/* The value of n decimal digits at p (checked with xp_digits()). */
long xp_num(const char *p, size_t n);

/* ---- logparse_rows.c ---- */

/* The first row of the table whose needles occur in s: its kind (in p->kind, with the row's
 * fields parsed into p), or NPF_XL_NONE. */
enum npf_xp_kind xp_classify(struct span s, struct npf_xp_parsed *p);
/* A Python exception at the start of s that no row knows: NPF_XL_PY_EXCEPTION, or
 * NPF_XL_ABORTED for one that only echoes a failure elsewhere; NPF_XL_NONE otherwise. */
enum npf_xp_kind xp_python_exception(struct span s);

/* ---- logparse_prefix.c ---- */

/* One launcher or logger prefix at q (a timestamp, a launcher tag, ...) into p: the length
 * eaten, 0 when there is none. */
size_t xp_strip_prefix(const char *q, const char *end, struct npf_xp_parsed *p);
/* NCCL's own "host:pid:tid [dev] ... NCCL INFO|WARN " header into p: the length eaten, or 0. */
size_t xp_strip_nccl(const char *p, const char *end, struct npf_xp_parsed *o);

#endif
