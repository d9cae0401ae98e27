// SPDX-License-Identifier: MIT
/* `explain`: reads the log into records (a line and the lines that continue it, per
 * writer), feeds them to the per-process table (lib/explain_procs.c), then tells the story and
 * chooses the cause (lib/explain_diagnose.c). Every cause names its evidence lines; with none, the
 * answer is "unknown". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "explain_internal.h"

/* Ends with suffix (trailing blanks ignored). */
static bool ends_with(const char *p, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	return n >= k && memcmp(p + n - k, suffix, k) == 0;
}

/* A line that the next lines of its writer may continue: PyTorch's "Last error:" (the NCCL
 * WARN follows on its own line), a header that ends in ':' with an indented block below
 * (torchelastic's "[0]:" failure summary), Gloo's wrapped errors and warnings. A Python
 * traceback header is not one: its frames are no part of the error. */
static bool record_head(const struct npf_xp_parsed *p, bool *last_error)
{
	*last_error = ends_with(p->msg, p->msg_len, "Last error:");
	if (*last_error)
		return true;
	if (ends_with(p->msg, p->msg_len, "(most recent call last):"))
		return false;
	return ends_with(p->msg, p->msg_len, ":") || ends_with(p->msg, p->msg_len, "failed with") ||
	       p->kind == NPF_XL_GLOO_CONNECT || p->kind == NPF_XL_GLOO_LOOPBACK;
}

static int feed_record(struct xp_ctx *c, struct pend *r)
{
	struct npf_xp_parsed p;
	int rc;

	c->cur_cont = r->n_cont;
	npf_xp_parse_line(r->buf, r->len, &p);
	rc = xp_feed_parsed(c, &p, r->lineno);
	c->cur_cont = 0;
	r->used = false;
	return rc;
}

/* Feeds the records still being assembled, oldest first. */
static int flush_records(struct xp_ctx *c)
{
	for (;;) {
		struct pend *o = NULL;

		for (size_t i = 0; i < sizeof(c->pend) / sizeof(c->pend[0]); i++)
			if (c->pend[i].used && (!o || c->pend[i].lineno < o->lineno))
				o = &c->pend[i];
		if (!o)
			return 0;
		if (feed_record(c, o) < 0)
			return -ENOMEM;
	}
}

/* One physical line: continues a record of its writer, starts one, or is a record itself. */
static int assemble(struct xp_ctx *c, const char *line, size_t n, size_t lineno)
{
	struct npf_xp_parsed p;
	struct pend *r = NULL, *free_slot = NULL, *oldest = NULL;
	bool last_error;

	if (n > sizeof(c->pend[0].buf) - 1)
		n = sizeof(c->pend[0].buf) - 1;
	npf_xp_parse_line(line, n, &p);
	for (size_t i = 0; i < sizeof(c->pend) / sizeof(c->pend[0]); i++) {
		struct pend *s = &c->pend[i];

		if (!s->used) {
			free_slot = free_slot ? free_slot : s;
			continue;
		}
		if (s->stream == p.stream)
			r = s;
		if (!oldest || s->lineno < oldest->lineno)
			oldest = s;
	}
	if (r && p.msg_len && (r->last_error || (p.indent && r->n_cont < 8))) {
		/* Joined with one blank: the continuation without its prefixes and indent. */
		size_t k = p.msg_len;

		if (r->len + 1 + k > sizeof(r->buf) - 1)
			k = sizeof(r->buf) - 1 - r->len - (r->len < sizeof(r->buf) - 1);
		if (r->len < sizeof(r->buf) - 1) {
			r->buf[r->len++] = ' ';
			memcpy(r->buf + r->len, p.msg, k);
			r->len += k;
		}
		r->n_cont++;
		return r->last_error ? feed_record(c, r) : 0;
	}
	if (r && feed_record(c, r) < 0)
		return -ENOMEM;
	if (!record_head(&p, &last_error))
		return xp_feed_parsed(c, &p, lineno); /* a record of one line: parsed once */
	if (!r)
		r = free_slot;
	if (!r) {
		if (feed_record(c, oldest) < 0)
			return -ENOMEM;
		r = oldest;
	}
	memcpy(r->buf, line, n);
	r->len = n;
	r->used = true;
	r->last_error = last_error;
	r->stream = p.stream;
	r->lineno = lineno;
	r->n_cont = 0;
	return 0;
}

int npf_explain(const char *buf, size_t len, struct npf_xp_report *rep)
{
	struct xp_ctx *c = calloc(1, sizeof(*c));
	size_t lineno = 0, i = 0;
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	rep->first_proc = -1;
	if (!c)
		return -ENOMEM;
	c->rep = rep;
	c->job = -1;
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;

		lineno++;
		rep->n_lines++;
		if (!nl)
			rep->truncated = true;
		rc = assemble(c, buf + i, n, lineno);
		if (rc < 0)
			break;
		i += n + (nl ? 1 : 0);
	}
	if (rc == 0)
		rc = flush_records(c);
	if (rc == 0) {
		xp_flush_box(c);
		xp_story(c);
		xp_diagnose(c);
	}
	free(c->lines);
	free(c);
	if (rc < 0)
		npf_xp_report_clear(rep);
	return rc;
}

void npf_xp_report_clear(struct npf_xp_report *rep)
{
	free(rep->procs);
	memset(rep, 0, sizeof(*rep));
	rep->first_proc = -1;
}
