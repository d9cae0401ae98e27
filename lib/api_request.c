// SPDX-License-Identifier: MIT
/* Local API codec, the request: parse and build a request (peers, timeouts, flags, format,
 * job), and the key of a peer set. */
#include "api.h"
#include "api_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envfmt.h"

struct peer_ref {
	const char *name;
	size_t idx;
};

static int peer_ref_cmp(const void *a, const void *b)
{
	const struct peer_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Drops repeated names, keeping each name's first position: sort by (name,
 * position), mark the later copies, compact in request order. O(n log n): 4096
 * names cost ~50k comparisons, not 8M. */
static int peers_dedup(struct npf_api_request *req, size_t n)
{
	struct peer_ref *refs = malloc(n * sizeof(*refs));
	bool *drop = calloc(n, sizeof(*drop));
	size_t k = 0;

	if (!refs || !drop) {
		free(refs);
		free(drop);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		refs[i] = (struct peer_ref){ req->peers[i], i };
	qsort(refs, n, sizeof(*refs), peer_ref_cmp);
	for (size_t i = 1; i < n; i++)
		if (strcmp(refs[i].name, refs[i - 1].name) == 0)
			drop[refs[i].idx] = true;
	free(refs);
	for (size_t i = 0; i < n; i++) {
		if (drop[i])
			continue;
		if (k != i)
			memcpy(req->peers[k], req->peers[i], NPF_NAME_MAX);
		k++;
	}
	free(drop);
	req->n_peers = k;
	return 0;
}

static int peers_from_json(const json_t *arr, struct npf_api_request *req,
			   struct npf_api_error *err)
{
	size_t n = json_array_size(arr), i;
	const json_t *v;

	if (!json_is_array(arr) || n == 0) {
		api_seterr(err, NPF_API_E_BAD_REQUEST, "\"peers\" must be a non-empty array of names");
		return -EBADMSG;
	}
	if (n > NPF_API_MAX_PEERS) {
		api_seterr(err, NPF_API_E_BAD_REQUEST, "too many peers (%zu > %u)", n,
		       NPF_API_MAX_PEERS);
		return -EBADMSG;
	}
	req->peers = calloc(n, sizeof(*req->peers));
	if (!req->peers) {
		api_seterr(err, NPF_API_E_INTERNAL, "out of memory");
		return -ENOMEM;
	}
	json_array_foreach (arr, i, v) {
		const char *s = json_string_value(v);

		if (!s || !npf_api_name_valid(s)) {
			api_seterr(err, NPF_API_E_BAD_REQUEST,
			       "peers[%zu] is not a valid node name (1-%d of [A-Za-z0-9._-])", i,
			       NPF_NAME_MAX - 1);
			return -EBADMSG;
		}
		snprintf(req->peers[req->n_peers++], NPF_NAME_MAX, "%s", s);
	}
	if (peers_dedup(req, req->n_peers) < 0) {
		api_seterr(err, NPF_API_E_INTERNAL, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int get_ms(const json_t *obj, const char *key, uint32_t lo, uint32_t hi, uint32_t *out,
		  struct npf_api_error *err)
{
	const json_t *v = json_object_get(obj, key);
	json_int_t x;

	if (!v)
		return 0;
	if (!json_is_integer(v)) {
		api_seterr(err, NPF_API_E_BAD_REQUEST, "\"%s\" must be an integer", key);
		return -EBADMSG;
	}
	x = json_integer_value(v);
	if (x < (json_int_t)lo || x > (json_int_t)hi) {
		api_seterr(err, NPF_API_E_BAD_REQUEST, "\"%s\" must be within %u..%u", key, lo, hi);
		return -EBADMSG;
	}
	*out = (uint32_t)x;
	return 0;
}

static int get_flag(const json_t *obj, const char *key, bool *out, struct npf_api_error *err)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_boolean(v)) {
		api_seterr(err, NPF_API_E_BAD_REQUEST, "\"%s\" must be true or false", key);
		return -EBADMSG;
	}
	*out = json_is_true(v);
	return 0;
}

static bool format_valid(const char *s)
{
	return strcmp(s, "json") == 0 || npf_envfmt_parse(s) >= 0;
}

static int get_format(const json_t *obj, struct npf_api_request *req, struct npf_api_error *err)
{
	const json_t *v = json_object_get(obj, "format");
	const char *s = json_string_value(v);

	if (!v)
		return 0;
	if (!s || json_string_length(v) >= sizeof(req->format) || !format_valid(s)) {
		api_seterr(err, NPF_API_E_BAD_REQUEST,
		       "\"format\" must be one of json, shell, taskprolog, nccl-conf");
		return -EBADMSG;
	}
	memcpy(req->format, s, strlen(s) + 1);
	return 0;
}

/* The job tag: a Slurm job id, or any short name a launcher gives one job start. */
static int get_job(const json_t *obj, struct npf_api_request *req, struct npf_api_error *err)
{
	const json_t *v = json_object_get(obj, "job");
	const char *s = json_string_value(v);

	if (!v)
		return 0;
	/* The length check first: an embedded NUL would hide the rest from strlen. */
	if (!s || json_string_length(v) != strlen(s) || !npf_api_job_valid(s)) {
		api_seterr(err, NPF_API_E_BAD_REQUEST,
		       "\"job\" must be 1..%d characters of [A-Za-z0-9._-]", NPF_API_JOB_MAX - 1);
		return -EBADMSG;
	}
	memcpy(req->job, s, strlen(s) + 1);
	return 0;
}

#define MAX_FIELDS 11

static int request_fields(json_t *j, struct npf_api_request *req, struct npf_api_error *err)
{
	static const char *const allowed[NPF_API_REQ__COUNT][MAX_FIELDS] = {
		[NPF_API_REQ_STATUS] = { "version", "request" },
		[NPF_API_REQ_INVENTORY] = { "version", "request" },
		[NPF_API_REQ_CHECK] = { "version", "request", "peers", "timeout_ms", "max_age_ms",
					"max_timeout_ms", "job", "settle" },
		[NPF_API_REQ_VERDICT] = { "version", "request", "peers" },
		[NPF_API_REQ_ENV] = { "version", "request", "peers", "timeout_ms", "max_age_ms",
				      "format", "job_wide", "cached", "max_timeout_ms", "job" },
	};
	bool timed = req->type == NPF_API_REQ_CHECK || req->type == NPF_API_REQ_ENV;
	const char *key;
	const json_t *v;
	int r;

	json_object_foreach (j, key, v) {
		bool ok = false;

		for (size_t i = 0; i < MAX_FIELDS && allowed[req->type][i] && !ok; i++)
			ok = strcmp(key, allowed[req->type][i]) == 0;
		if (!ok) {
			api_seterr(err, NPF_API_E_BAD_REQUEST, "unknown field \"%.64s\" in %s request",
			       key, npf_api_req_name(req->type));
			return -EBADMSG;
		}
	}
	if (timed || req->type == NPF_API_REQ_VERDICT) {
		r = peers_from_json(json_object_get(j, "peers"), req, err);
		if (r < 0)
			return r;
	}
	if (timed) {
		r = get_ms(j, "timeout_ms", NPF_API_TIMEOUT_MIN_MS, NPF_API_TIMEOUT_MAX_MS,
			   &req->timeout_ms, err);
		if (r < 0)
			return r;
		r = get_ms(j, "max_age_ms", 0, UINT32_MAX, &req->max_age_ms, err);
		if (r < 0)
			return r;
		r = get_ms(j, "max_timeout_ms", NPF_API_TIMEOUT_MIN_MS, NPF_API_TIMEOUT_MAX_MS,
			   &req->max_timeout_ms, err);
		if (r < 0)
			return r;
		req->max_age_set = json_object_get(j, "max_age_ms") != NULL;
		r = get_job(j, req, err);
		if (r < 0)
			return r;
	}
	if (req->type == NPF_API_REQ_CHECK) {
		r = get_flag(j, "settle", &req->settle, err);
		if (r == 0 && req->settle && !req->job[0]) {
			api_seterr(err, NPF_API_E_BAD_REQUEST, "\"settle\" needs \"job\"");
			r = -EBADMSG;
		}
		if (r < 0)
			return r;
	}
	if (req->type == NPF_API_REQ_ENV) {
		r = get_format(j, req, err);
		if (r == 0)
			r = get_flag(j, "job_wide", &req->job_wide, err);
		if (r == 0)
			r = get_flag(j, "cached", &req->cached, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int npf_api_request_parse(const void *buf, size_t len, struct npf_api_request *req,
			  struct npf_api_error *err)
{
	const json_t *v;
	const char *name;
	json_t *j;
	int r, type = -1;

	memset(req, 0, sizeof(*req));
	r = npf_api_json_decode(buf, len, &j, err);
	if (r < 0)
		return r;
	/* The version is judged first so that a newer client gets
	 * "unsupported-version", not a complaint about fields we do not know. */
	v = json_object_get(j, "version");
	if (!json_is_integer(v)) {
		api_seterr(err, NPF_API_E_BAD_REQUEST, "\"version\" (integer) is required");
		r = -EBADMSG;
		goto out;
	}
	if (json_integer_value(v) != NPF_API_VERSION) {
		api_seterr(err, NPF_API_E_UNSUPPORTED_VERSION,
		       "version %" JSON_INTEGER_FORMAT " not supported (this daemon speaks %d)",
		       json_integer_value(v), NPF_API_VERSION);
		r = -EPROTONOSUPPORT;
		goto out;
	}
	name = json_string_value(json_object_get(j, "request"));
	for (int i = 0; name && i < NPF_API_REQ__COUNT; i++)
		if (strcmp(name, npf_api_req_name((enum npf_api_req)i)) == 0)
			type = i;
	if (type < 0) {
		if (name)
			api_seterr(err, NPF_API_E_BAD_REQUEST, "unknown request \"%.64s\"", name);
		else
			api_seterr(err, NPF_API_E_BAD_REQUEST, "\"request\" (string) is required");
		r = -EBADMSG;
		goto out;
	}
	req->type = (enum npf_api_req)type;
	r = request_fields(j, req, err);
out:
	json_decref(j);
	if (r < 0)
		npf_api_request_clear(req);
	return r;
}

json_t *npf_api_request_to_json(const struct npf_api_request *req)
{
	bool timed = req->type == NPF_API_REQ_CHECK || req->type == NPF_API_REQ_ENV;
	json_t *j = json_object(), *arr;

	if (!j)
		return NULL;
	if (json_object_set_new(j, "version", json_integer(NPF_API_VERSION)) < 0 ||
	    json_object_set_new(j, "request", json_string(npf_api_req_name(req->type))) < 0)
		goto err;
	if (timed || req->type == NPF_API_REQ_VERDICT) {
		arr = json_array();
		if (json_object_set_new(j, "peers", arr) < 0)
			goto err;
		for (size_t i = 0; i < req->n_peers; i++)
			if (json_array_append_new(arr, json_string(req->peers[i])) < 0)
				goto err;
	}
	if (timed && req->timeout_ms &&
	    json_object_set_new(j, "timeout_ms", json_integer(req->timeout_ms)) < 0)
		goto err;
	if (timed && req->max_timeout_ms &&
	    json_object_set_new(j, "max_timeout_ms", json_integer(req->max_timeout_ms)) < 0)
		goto err;
	if (timed && req->job[0] && json_object_set_new(j, "job", json_string(req->job)) < 0)
		goto err;
	if (req->type == NPF_API_REQ_CHECK && req->settle &&
	    json_object_set_new(j, "settle", json_true()) < 0)
		goto err;
	/* For env an explicit 0 means "always probe", so it is sent when set. */
	if (timed && (req->max_age_ms || (req->type == NPF_API_REQ_ENV && req->max_age_set)) &&
	    json_object_set_new(j, "max_age_ms", json_integer(req->max_age_ms)) < 0)
		goto err;
	if (req->type == NPF_API_REQ_ENV) {
		if (req->format[0] &&
		    json_object_set_new(j, "format", json_string(req->format)) < 0)
			goto err;
		if (req->job_wide && json_object_set_new(j, "job_wide", json_true()) < 0)
			goto err;
		if (req->cached && json_object_set_new(j, "cached", json_true()) < 0)
			goto err;
	}
	return j;
err:
	json_decref(j);
	return NULL;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

int npf_api_peers_key(const char (*peers)[NPF_NAME_MAX], size_t n, const char *self, char **out)
{
	char (*s)[NPF_NAME_MAX];
	size_t m = 0, len = 0;
	char *key, *p;

	*out = NULL;
	if (n == 0)
		return -EINVAL;
	s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (self && strcmp(peers[i], self) == 0)
			continue;
		memcpy(s[m++], peers[i], NPF_NAME_MAX);
		s[m - 1][NPF_NAME_MAX - 1] = '\0';
	}
	qsort(s, m, sizeof(*s), cmp_name);
	for (size_t i = 0; i < m; i++)
		len += strlen(s[i]) + 1;
	if (m == 0) {
		free(s);
		return -EINVAL;
	}
	key = malloc(len);
	if (!key) {
		free(s);
		return -ENOMEM;
	}
	p = key;
	for (size_t i = 0; i < m; i++) {
		/* Duplicates are adjacent after sorting. */
		if (i && strcmp(s[i], s[i - 1]) == 0)
			continue;
		if (p != key)
			*p++ = ',';
		p = stpcpy(p, s[i]);
	}
	*p = '\0';
	free(s);
	*out = key;
	return 0;
}
