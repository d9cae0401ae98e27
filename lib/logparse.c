// SPDX-License-Identifier: MIT
/* The line layer of `explain`, one line in: what launchers and loggers put in front of it is
 * stripped (lib/logparse_prefix.c), the message is classified by the table of line kinds
 * (lib/logparse_rows.c), and the line gets the stream of its writer. Pure: no I/O, no
 * allocation. */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "logparse_internal.h"

/* PyTorch's logPrefix(): "[Rank 3] ", "[PG ID 0 PG GUID 0(default_pg) Rank 3] ". */
static void rank_in_brackets(struct span s, struct npf_xp_parsed *p)
{
	const char *r = xp_span_find(s, " Rank "), *end = s.p + s.n;

	if (!r)
		r = xp_span_find(s, "[Rank ");
	if (!r)
		return;
	r += strlen(" Rank ");
	if (r < end && isdigit((unsigned char)*r)) {
		const char *q = r;

		while (q < end && isdigit((unsigned char)*q) && q - r < 6)
			q++;
		if (q < end && *q == ']' && p->rank < 0)
			p->rank = (int)xp_num(r, (size_t)(q - r));
	}
}

static uint32_t fnv(uint32_t h, const void *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)v)[i]) * 16777619u;
	return h;
}

enum npf_xp_kind npf_xp_parse_line(const char *line, size_t len, struct npf_xp_parsed *p)
{
	const char *q = line, *end = line + len;
	struct span s;
	size_t ws = 0;

	memset(p, 0, sizeof(*p));
	p->rank = -1;
	p->pid = -1;
	p->time = -1;
	/* A very long line (a base64 blob, a binary) is cut: messages of interest are short. */
	if (len > 4096)
		end = line + 4096;
	while (end > q && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	for (int round = 0; round < 8; round++) {
		size_t k;

		for (ws = 0; q < end && (*q == ' ' || *q == '\t'); q++)
			ws += *q == '\t' ? 2 : 1;
		if ((k = xp_strip_prefix(q, end, p))) {
			q += k;
			continue;
		}
		break;
	}
	/* Lines of one writer (a rank's launcher tag, a pdsh host, a Ray worker) share a stream:
	 * only they may continue each other's records. */
	p->stream = fnv(fnv(fnv(2166136261u, &p->rank, sizeof(p->rank)), &p->pid, sizeof(p->pid)),
			p->host, strlen(p->host));
	p->indent = ws >= 2;
	q += xp_strip_nccl(q, end, p);
	s.p = q;
	s.n = (size_t)(end - q);
	p->msg = q;
	p->msg_len = s.n;
	rank_in_brackets(s, p);
	{
		/* "Last error:" (PyTorch quoting ncclGetLastError()): what follows on the same line
		 * (or the next one, joined by the line assembly) is the NCCL WARN itself, read as
		 * its own kind. */
		const char *le = xp_span_find(s, "Last error:");

		if (le) {
			struct span rest = {le + strlen("Last error:"), 0};

			rest.n = (size_t)(end - rest.p);
			if (xp_classify(rest, p) != NPF_XL_NONE)
				return p->kind;
			p->kind = NPF_XL_LAST_ERROR;
			return p->kind;
		}
	}
	if (xp_span_find(s, "WARN") || xp_span_find(s, "WARNING") || xp_span_find(s, "Error") ||
	    xp_span_find(s, "ERROR"))
		p->warn = true;
	if (xp_classify(s, p) == NPF_XL_NONE)
		p->kind = xp_python_exception(s);
	return p->kind;
}
