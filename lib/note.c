// SPDX-License-Identifier: MIT
/* The decision's notes: one structured note (code, variable, node, interface, text; lib/
 * recommend.h) appended to the recommendation, for every stage. */
#include "decide.h"

#include <errno.h>
#include <stdlib.h>

const char *npf_note_code_name(enum npf_note_code c)
{
	static const char *const names[NPF_NOTE__COUNT] = {
		[NPF_NOTE_OMITTED] = "omitted",
		[NPF_NOTE_NARROWED] = "narrowed",
		[NPF_NOTE_CONSUMER_ADDRESS] = "consumer-address",
		[NPF_NOTE_RDMA_DISABLED] = "rdma-disabled",
		[NPF_NOTE_UNTESTED] = "untested",
		[NPF_NOTE_GID_VERSIONS] = "gid-versions",
		[NPF_NOTE_JOB_WIDE] = "job-wide",
		[NPF_NOTE_SPARSE] = "sparse",
		[NPF_NOTE_UNVERIFIED] = "unverified",
		[NPF_NOTE_CAPPED] = "capped",
		[NPF_NOTE_CAVEAT] = "caveat",
	};

	return (unsigned int)c < NPF_NOTE__COUNT ? names[c] : "?";
}

static void vnote(struct ctx *c, enum npf_note_code code, int var, const char *node,
		  const char *ifname, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

static void vnote(struct ctx *c, enum npf_note_code code, int var, const char *node,
		  const char *ifname, const char *fmt, va_list ap)
{
	struct npf_recommendation *r = c->out;
	struct npf_note *n;
	char *s;

	if (c->err)
		return;
	if (vasprintf(&s, fmt, ap) < 0) {
		c->err = -ENOMEM;
		return;
	}
	n = realloc(r->notes, (r->n_notes + 1) * sizeof(*n));
	if (!n) {
		free(s);
		c->err = -ENOMEM;
		return;
	}
	r->notes = n;
	n = &n[r->n_notes++];
	memset(n, 0, sizeof(*n));
	n->code = code;
	n->var = var;
	copy_str(n->node, sizeof(n->node), node);
	copy_str(n->ifname, sizeof(n->ifname), ifname);
	n->text = s;
}

void dec_note(struct ctx *c, enum npf_note_code code, int var, const char *node,
	      const char *ifname, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(c, code, var, node, ifname, fmt, ap);
	va_end(ap);
}

void dec_add_note(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(c, NPF_NOTE_CAVEAT, NPF_VAR_NONE, NULL, NULL, fmt, ap);
	va_end(ap);
}
