// SPDX-License-Identifier: MIT
/* Local API codec, the env replies: the variables as JSON and text, and the split
 * (shared prefix, per-node part) the daemon caches. */
#include "api.h"
#include "api_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envfmt.h"

/* Variables as an object NAME -> value, in publication order (jansson keeps insertion
 * order), the form the SPANK plugin's parser accepts. */
static json_t *vars_json(const struct npf_recommendation *rec)
{
	json_t *o = json_object();

	for (size_t i = 0; o && npf_verdict_publishes(rec->verdict) && i < rec->n_vars; i++) {
		json_t *v;

		if (!rec->vars[i].value)
			continue;
		/* A value that is not UTF-8 cannot be carried; replacing bytes would
		 * publish a different value, so it is left out. */
		v = json_string(rec->vars[i].value);
		if (!v)
			continue;
		if (json_object_set_new(o, rec->vars[i].name, v) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

json_t *npf_api_env_reply(const struct npf_recommendation *rec, const char *format, bool cached,
			  uint64_t age_ms)
{
	json_t *r;
	int fmt = -1;

	if (!rec)
		return NULL;
	if (format && format[0] && strcmp(format, "json") != 0) {
		fmt = npf_envfmt_parse(format);
		if (fmt < 0)
			return NULL;
	}
	r = npf_api_reply_new();
	if (!r)
		return NULL;
	if (json_object_set_new(r, "verdict", json_string(npf_verdict_name(rec->verdict))) < 0 ||
	    json_object_set_new(r, "summary",
				api_safe_string(rec->summary,
					    strnlen(rec->summary, sizeof(rec->summary)))) < 0 ||
	    json_object_set_new(r, "variables", vars_json(rec)) < 0 ||
	    json_object_set_new(r, "cached", json_boolean(cached)) < 0 ||
	    json_object_set_new(r, "age_ms", json_integer((json_int_t)age_ms)) < 0 ||
	    json_object_set_new(r, "recommendation", npf_recommendation_to_json(rec)) < 0)
		goto err;
	if (fmt >= 0) {
		char *text = NULL;
		size_t omitted = 0;
		int n = npf_env_format(rec, (enum npf_envfmt)fmt, &text, &omitted);

		if (n < 0)
			goto err;
		if (json_object_set_new(r, "format", json_string(format)) < 0 ||
		    json_object_set_new(r, "text", api_safe_string(text, (size_t)n)) < 0 ||
		    json_object_set_new(r, "omitted", json_integer((json_int_t)omitted)) < 0) {
			free(text);
			goto err;
		}
		free(text);
	}
	return r;
err:
	json_decref(r);
	return NULL;
}

void npf_api_env_split_clear(struct npf_api_env_split *sp)
{
	free(sp->head);
	free(sp->tail);
	memset(sp, 0, sizeof(*sp));
}

int npf_api_env_split_make(const struct npf_recommendation *rec, const char *format,
			   struct npf_api_env_split *sp)
{
	json_t *reply, *a = NULL, *b = NULL, *v;
	const char *k;
	bool after = false, seen_cached = false;
	size_t alen = 0, blen = 0;
	int r = -ENOMEM;

	memset(sp, 0, sizeof(*sp));
	reply = npf_api_env_reply(rec, format, true, 0);
	if (!reply)
		return -ENOMEM;
	a = json_object();
	b = json_object();
	if (!a || !b)
		goto out;
	/* jansson keeps insertion order, so the two halves are the fields before "cached"
	 * and after "age_ms", whatever npf_api_env_reply() puts around them. */
	json_object_foreach(reply, k, v) {
		if (strcmp(k, "cached") == 0) {
			seen_cached = true;
			continue;
		}
		if (strcmp(k, "age_ms") == 0) {
			after = seen_cached;
			continue;
		}
		if (json_object_set(after ? b : a, k, v) < 0)
			goto out;
	}
	r = -EPROTO;
	if (!after)
		goto out;
	r = npf_api_json_text(a, NPF_API_MAX_REPLY, &sp->head, &alen);
	if (r == 0)
		r = npf_api_json_text(b, NPF_API_MAX_REPLY, &sp->tail, &blen);
	if (r < 0)
		goto out;
	/* head: "{...", without its closing brace; tail: "...}" without its opening one. */
	sp->head_len = alen - 1;
	sp->tail_len = blen - 1;
	memmove(sp->tail, sp->tail + 1, blen);
out:
	if (r < 0)
		npf_api_env_split_clear(sp);
	json_decref(a);
	json_decref(b);
	json_decref(reply);
	return r;
}

int npf_api_env_split_frame(const struct npf_api_env_split *sp, bool cached, uint64_t age_ms,
			    uint32_t max, char **out, size_t *out_len)
{
	char mid[80];
	size_t ml, n, off;
	bool more;
	char *buf;

	*out = NULL;
	*out_len = 0;
	if (!sp->head || !sp->tail || sp->head_len < 2 || sp->tail_len < 1)
		return -EINVAL;
	more = sp->tail_len > 1; /* fields follow "age_ms" */
	ml = (size_t)snprintf(mid, sizeof(mid), ",\"cached\":%s,\"age_ms\":%" PRIu64 "%s",
			      cached ? "true" : "false", age_ms, more ? "," : "");
	n = sp->head_len + ml + sp->tail_len;
	if (n > max)
		return -EMSGSIZE;
	buf = malloc(NPF_API_HDR_LEN + n);
	if (!buf)
		return -ENOMEM;
	api_put_hdr(buf, n);
	off = NPF_API_HDR_LEN;
	memcpy(buf + off, sp->head, sp->head_len);
	off += sp->head_len;
	memcpy(buf + off, mid, ml);
	off += ml;
	memcpy(buf + off, sp->tail, sp->tail_len);
	*out = buf;
	*out_len = NPF_API_HDR_LEN + n;
	return 0;
}
