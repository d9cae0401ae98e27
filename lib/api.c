// SPDX-License-Identifier: MIT
/* Local API codec: pure functions over bytes and jansson values, shared by the
 * daemon, the CLI, the SPANK plugin, the unit tests and the fuzzer. */
#include "api.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "addr_json.h"
#include "envfmt.h"
#include "verdict.h"

/* Upper bounds on decoded arrays, far above anything real, so a hostile or
 * corrupt reply cannot make the client allocate without limit. */
#define MAX_CANDS 1024u
#define MAX_IFNAMES 4096u
#define MAX_PATHS (1u << 20)
#define MAX_LINKS (1u << 20)

static const char *const req_names[NPF_API_REQ__COUNT] = {
	[NPF_API_REQ_STATUS] = "status",
	[NPF_API_REQ_INVENTORY] = "inventory",
	[NPF_API_REQ_CHECK] = "check",
	[NPF_API_REQ_VERDICT] = "verdict",
	[NPF_API_REQ_ENV] = "env",
};

static const char *const err_names[NPF_API_E__COUNT] = {
	[NPF_API_E_BAD_REQUEST] = "bad-request",
	[NPF_API_E_UNSUPPORTED_VERSION] = "unsupported-version",
	[NPF_API_E_TOO_LARGE] = "too-large",
	[NPF_API_E_FORBIDDEN] = "forbidden",
	[NPF_API_E_BUSY] = "busy",
	[NPF_API_E_NO_VERDICT] = "no-verdict",
	[NPF_API_E_NOT_READY] = "not-ready",
	[NPF_API_E_CHECK_FAILED] = "check-failed",
	[NPF_API_E_INTERNAL] = "internal",
	[NPF_API_E_FOREIGN_NETNS] = "foreign-netns",
};

/* Bit order of enum npf_role. */
static const char *const role_names[] = {
	"container-bridge", "overlay", "vpn", "link-local-only", "virtual-port", "rdma", "management",
};
#define N_ROLES (sizeof(role_names) / sizeof(role_names[0]))

const char *npf_api_req_name(enum npf_api_req r)
{
	if ((unsigned)r >= NPF_API_REQ__COUNT)
		return "unknown";
	return req_names[r];
}

const char *npf_api_errcode_name(enum npf_api_errcode c)
{
	if ((unsigned)c >= NPF_API_E__COUNT)
		return "internal";
	return err_names[c];
}

int npf_api_errcode_parse(const char *s)
{
	for (int i = 0; i < NPF_API_E__COUNT; i++)
		if (s && strcmp(s, err_names[i]) == 0)
			return i;
	return -EINVAL;
}

static void __attribute__((format(printf, 3, 4)))
seterr(struct npf_api_error *err, enum npf_api_errcode code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

void npf_api_request_clear(struct npf_api_request *req)
{
	if (!req)
		return;
	free(req->peers);
	memset(req, 0, sizeof(*req));
}

bool npf_api_job_valid(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	return n >= 1 && n < NPF_API_JOB_MAX &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

bool npf_api_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_';
}

bool npf_api_name_valid(const char *s)
{
	size_t n = 0;

	if (!s || !*s || *s == '-' || *s == '.')
		return false;
	for (; s[n]; n++)
		if (n >= NPF_NAME_MAX - 1 || !npf_api_name_char(s[n]))
			return false;
	return true;
}

int npf_api_frame_len(const uint8_t hdr[NPF_API_HDR_LEN], uint32_t max, uint32_t *len)
{
	uint32_t n = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];

	*len = n;
	if (n == 0)
		return -EBADMSG;
	if (n > max)
		return -EMSGSIZE;
	return 0;
}

/* A growing buffer for json_dump_callback: one serialisation pass instead of one to size
 * the text and one to fill it. */
struct dumpbuf {
	char *p;
	size_t len, cap, max; /* len counts only the text, after head reserved bytes */
	size_t head;
	bool too_large;
};

static int dumpbuf_add(const char *buf, size_t size, void *data)
{
	struct dumpbuf *b = data;
	size_t need;

	if (size > b->max - b->len) {
		b->too_large = true;
		return -1;
	}
	need = b->head + b->len + size;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < need)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->head + b->len, buf, size);
	b->len += size;
	return 0;
}

/* Compact text of j behind head reserved bytes. Returns 0 (*out owned by the caller,
 * free(); *len = text bytes), -EMSGSIZE when the text exceeds max, -ENOMEM. */
static int dump_reserved(const json_t *j, size_t head, size_t max, char **out, size_t *len)
{
	struct dumpbuf b = { .max = max, .head = head };

	*out = NULL;
	*len = 0;
	/* jansson reports every failure, incl. allocation, as -1. */
	if (json_dump_callback(j, dumpbuf_add, &b, JSON_COMPACT) < 0 || b.len == 0) {
		free(b.p);
		return b.too_large ? -EMSGSIZE : -ENOMEM;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

static void put_hdr(char *buf, size_t n)
{
	buf[0] = (char)(n >> 24);
	buf[1] = (char)(n >> 16);
	buf[2] = (char)(n >> 8);
	buf[3] = (char)n;
}

int npf_api_frame_encode(const json_t *msg, uint32_t max, char **out, size_t *out_len)
{
	size_t n;
	int r = dump_reserved(msg, NPF_API_HDR_LEN, max, out, &n);

	*out_len = 0;
	if (r < 0)
		return r;
	put_hdr(*out, n);
	*out_len = NPF_API_HDR_LEN + n;
	return 0;
}

int npf_api_json_text(const json_t *j, size_t max, char **out, size_t *len)
{
	int r = dump_reserved(j, 0, max, out, len);
	char *p;

	if (r < 0)
		return r;
	/* Room for the terminating NUL; the buffer may already have it. */
	p = realloc(*out, *len + 1);
	if (!p) {
		free(*out);
		*out = NULL;
		*len = 0;
		return -ENOMEM;
	}
	p[*len] = '\0';
	*out = p;
	return 0;
}

int npf_api_check_reply_frame(const char *check, size_t check_len, bool cached, uint64_t age_ms,
			      uint32_t max, char **out, size_t *out_len)
{
	char head[48], tail[64];
	size_t hl, tl, n;
	char *buf;

	*out = NULL;
	*out_len = 0;
	if (!check || check_len == 0)
		return -EINVAL;
	/* The same bytes npf_api_reply_new() + "check", "cached", "age_ms" would encode to. */
	hl = (size_t)snprintf(head, sizeof(head), "{\"version\":%d,\"ok\":true,\"check\":",
			      NPF_API_VERSION);
	tl = (size_t)snprintf(tail, sizeof(tail), ",\"cached\":%s,\"age_ms\":%" PRIu64 "}",
			      cached ? "true" : "false", age_ms);
	if (check_len > max || hl + tl > max - check_len)
		return -EMSGSIZE;
	n = hl + check_len + tl;
	buf = malloc(NPF_API_HDR_LEN + n);
	if (!buf)
		return -ENOMEM;
	put_hdr(buf, n);
	memcpy(buf + NPF_API_HDR_LEN, head, hl);
	memcpy(buf + NPF_API_HDR_LEN + hl, check, check_len);
	memcpy(buf + NPF_API_HDR_LEN + hl + check_len, tail, tl);
	*out = buf;
	*out_len = NPF_API_HDR_LEN + n;
	return 0;
}

int npf_api_json_decode(const void *buf, size_t len, json_t **out, struct npf_api_error *err)
{
	json_error_t jerr;
	json_t *j;

	*out = NULL;
	/* Without JSON_DECODE_ANY only an object or array is accepted; without
	 * JSON_DISABLE_EOF_CHECK trailing bytes are an error. */
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j) {
		seterr(err, NPF_API_E_BAD_REQUEST, "invalid JSON at offset %d: %s", jerr.position,
		       jerr.text);
		return -EBADMSG;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		seterr(err, NPF_API_E_BAD_REQUEST, "message is not a JSON object");
		return -EBADMSG;
	}
	*out = j;
	return 0;
}

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
		seterr(err, NPF_API_E_BAD_REQUEST, "\"peers\" must be a non-empty array of names");
		return -EBADMSG;
	}
	if (n > NPF_API_MAX_PEERS) {
		seterr(err, NPF_API_E_BAD_REQUEST, "too many peers (%zu > %u)", n,
		       NPF_API_MAX_PEERS);
		return -EBADMSG;
	}
	req->peers = calloc(n, sizeof(*req->peers));
	if (!req->peers) {
		seterr(err, NPF_API_E_INTERNAL, "out of memory");
		return -ENOMEM;
	}
	json_array_foreach (arr, i, v) {
		const char *s = json_string_value(v);

		if (!s || !npf_api_name_valid(s)) {
			seterr(err, NPF_API_E_BAD_REQUEST,
			       "peers[%zu] is not a valid node name (1-%d of [A-Za-z0-9._-])", i,
			       NPF_NAME_MAX - 1);
			return -EBADMSG;
		}
		snprintf(req->peers[req->n_peers++], NPF_NAME_MAX, "%s", s);
	}
	if (peers_dedup(req, req->n_peers) < 0) {
		seterr(err, NPF_API_E_INTERNAL, "out of memory");
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
		seterr(err, NPF_API_E_BAD_REQUEST, "\"%s\" must be an integer", key);
		return -EBADMSG;
	}
	x = json_integer_value(v);
	if (x < (json_int_t)lo || x > (json_int_t)hi) {
		seterr(err, NPF_API_E_BAD_REQUEST, "\"%s\" must be within %u..%u", key, lo, hi);
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
		seterr(err, NPF_API_E_BAD_REQUEST, "\"%s\" must be true or false", key);
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
		seterr(err, NPF_API_E_BAD_REQUEST,
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
		seterr(err, NPF_API_E_BAD_REQUEST,
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
			seterr(err, NPF_API_E_BAD_REQUEST, "unknown field \"%.64s\" in %s request",
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
			seterr(err, NPF_API_E_BAD_REQUEST, "\"settle\" needs \"job\"");
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
		seterr(err, NPF_API_E_BAD_REQUEST, "\"version\" (integer) is required");
		r = -EBADMSG;
		goto out;
	}
	if (json_integer_value(v) != NPF_API_VERSION) {
		seterr(err, NPF_API_E_UNSUPPORTED_VERSION,
		       "version %" JSON_INTEGER_FORMAT " not supported (this daemon speaks %d)",
		       json_integer_value(v), NPF_API_VERSION);
		r = -EPROTONOSUPPORT;
		goto out;
	}
	name = json_string_value(json_object_get(j, "request"));
	for (int i = 0; name && i < NPF_API_REQ__COUNT; i++)
		if (strcmp(name, req_names[i]) == 0)
			type = i;
	if (type < 0) {
		if (name)
			seterr(err, NPF_API_E_BAD_REQUEST, "unknown request \"%.64s\"", name);
		else
			seterr(err, NPF_API_E_BAD_REQUEST, "\"request\" (string) is required");
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

json_t *npf_api_reply_new(void)
{
	return json_pack("{s:i, s:b}", "version", NPF_API_VERSION, "ok", 1);
}

json_t *npf_api_reply_error(enum npf_api_errcode code, const char *fmt, ...)
{
	char msg[NPF_API_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Messages may quote client input cut at a byte count, which can split a
	 * UTF-8 sequence; jansson would then refuse the whole reply. */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
			*p = '?';
	return json_pack("{s:i, s:b, s:{s:s, s:s}}", "version", NPF_API_VERSION, "ok", 0, "error",
			 "code", npf_api_errcode_name(code), "message", msg);
}

int npf_api_reply_status(const json_t *reply, struct npf_api_error *err)
{
	const json_t *v = json_object_get(reply, "version");
	const json_t *ok = json_object_get(reply, "ok");
	const json_t *e;
	const char *code, *msg;
	int c;

	if (!json_is_object(reply) || !json_is_integer(v) || !json_is_boolean(ok)) {
		seterr(err, NPF_API_E_INTERNAL, "malformed reply (no version/ok)");
		return -EPROTO;
	}
	if (json_integer_value(v) != NPF_API_VERSION) {
		seterr(err, NPF_API_E_UNSUPPORTED_VERSION,
		       "daemon speaks API version %" JSON_INTEGER_FORMAT ", this client %d",
		       json_integer_value(v), NPF_API_VERSION);
		return -EPROTO;
	}
	if (json_is_true(ok))
		return 0;
	e = json_object_get(reply, "error");
	code = json_string_value(json_object_get(e, "code"));
	msg = json_string_value(json_object_get(e, "message"));
	c = npf_api_errcode_parse(code);
	seterr(err, c < 0 ? NPF_API_E_INTERNAL : (enum npf_api_errcode)c, "%s",
	       msg ? msg : (code ? code : "unspecified error"));
	return -EREMOTEIO;
}

/* ---- check <-> JSON ---- */

static int addr_parse(const json_t *v, struct npf_addr *a)
{
	char ip[INET6_ADDRSTRLEN + 1];
	const char *s = json_string_value(v), *slash;
	unsigned long pl;
	char *end;
	size_t n;

	memset(a, 0, sizeof(*a));
	if (!v || json_is_null(v))
		return 0;
	if (!s)
		return -EBADMSG;
	slash = strchr(s, '/');
	n = slash ? (size_t)(slash - s) : strlen(s);
	if (n == 0 || n >= sizeof(ip))
		return -EBADMSG;
	memcpy(ip, s, n);
	ip[n] = '\0';
	if (inet_pton(AF_INET, ip, a->addr) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, ip, a->addr) == 1)
		a->family = AF_INET6;
	else
		return -EBADMSG;
	if (slash) {
		if (slash[1] < '0' || slash[1] > '9')
			return -EBADMSG;
		errno = 0;
		pl = strtoul(slash + 1, &end, 10);
		if (errno || *end || pl > (a->family == AF_INET ? 32u : 128u))
			return -EBADMSG;
		a->prefixlen = (uint8_t)pl;
	}
	return 0;
}

static int get_str(const json_t *o, const char *key, char *dst, size_t cap)
{
	const json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	if (!s || n >= cap || strlen(s) != n)
		return -EBADMSG;
	memcpy(dst, s, n + 1);
	return 0;
}

static int get_u64(const json_t *o, const char *key, uint64_t max, uint64_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return -EBADMSG;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_u32(const json_t *o, const char *key, uint32_t *out)
{
	uint64_t x;
	int r = get_u64(o, key, UINT32_MAX, &x);

	if (r == 0)
		*out = (uint32_t)x;
	return r;
}

static int get_bool(const json_t *o, const char *key, bool *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_boolean(v))
		return -EBADMSG;
	*out = json_is_true(v);
	return 0;
}

static int get_outcome(const json_t *o, const char *key, enum npf_outcome *out)
{
	int r = npf_outcome_parse(json_string_value(json_object_get(o, key)));

	if (r < 0)
		return -EBADMSG;
	*out = (enum npf_outcome)r;
	return 0;
}

static json_t *roles_json(uint32_t roles)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < N_ROLES; i++)
		if (roles & (1u << i) && json_array_append_new(a, json_string(role_names[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static int roles_parse(const json_t *a, uint32_t *roles)
{
	size_t i;
	const json_t *v;

	*roles = 0;
	if (!json_is_array(a))
		return -EBADMSG;
	json_array_foreach (a, i, v) {
		const char *s = json_string_value(v);
		size_t k;

		for (k = 0; s && k < N_ROLES; k++)
			if (strcmp(s, role_names[k]) == 0)
				break;
		/* Unknown role names from a newer daemon are not an error. */
		if (!s)
			return -EBADMSG;
		if (k < N_ROLES)
			*roles |= 1u << k;
	}
	return 0;
}

static int kind_parse(const char *s)
{
	for (int k = 0; s && k < NPF_KIND__COUNT; k++)
		if (strcmp(s, npf_kind_name((enum npf_kind)k)) == 0)
			return k;
	return NPF_KIND_UNKNOWN;
}

static json_t *cand_json(const struct npf_candidate *c)
{
	json_t *rdma = json_null();

	if (c->rdma_dev[0])
		rdma = json_pack("{s:s, s:i, s:s, s:b, s:o}", "device", c->rdma_dev, "port",
				 c->rdma_port, "link_layer", npf_link_layer_name(c->rdma_ll),
				 "active", c->rdma_active, "gid_index",
				 c->has_gid ? json_integer(c->gid_index) : json_null());
	return json_pack("{s:s, s:o, s:s, s:o, s:I, s:o, s:o}", "ifname", c->ifname, "address",
			 npf_addr_json(&c->addr, NPF_ADDR_JSON_CIDR), "kind",
			 npf_kind_name(c->kind), "roles", roles_json(c->roles), "mtu",
			 (json_int_t)c->mtu, "speed_mbps",
			 c->speed_mbps < 0 ? json_null() : json_integer((json_int_t)c->speed_mbps),
			 "rdma", rdma);
}

static int cand_parse(const json_t *o, struct npf_candidate *c)
{
	const json_t *rdma = json_object_get(o, "rdma"), *v;
	uint64_t port;
	int ll;

	if (!json_is_object(o) || get_str(o, "ifname", c->ifname, sizeof(c->ifname)) < 0 ||
	    addr_parse(json_object_get(o, "address"), &c->addr) < 0 ||
	    roles_parse(json_object_get(o, "roles"), &c->roles) < 0 ||
	    get_u32(o, "mtu", &c->mtu) < 0)
		return -EBADMSG;
	c->kind = (enum npf_kind)kind_parse(json_string_value(json_object_get(o, "kind")));
	v = json_object_get(o, "speed_mbps");
	if (json_is_null(v))
		c->speed_mbps = NPF_SPEED_UNKNOWN;
	else if (json_is_integer(v) && json_integer_value(v) >= 0)
		c->speed_mbps = json_integer_value(v);
	else
		return -EBADMSG;
	if (!rdma || json_is_null(rdma))
		return 0;
	if (!json_is_object(rdma) || get_str(rdma, "device", c->rdma_dev, sizeof(c->rdma_dev)) < 0 ||
	    get_u64(rdma, "port", 255, &port) < 0 || get_bool(rdma, "active", &c->rdma_active) < 0)
		return -EBADMSG;
	c->rdma_port = (int)port;
	/* Optional (older replies lack it); null: not known. */
	v = json_object_get(rdma, "gid_index");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > UINT16_MAX)
			return -EBADMSG;
		c->has_gid = true;
		c->gid_index = (uint16_t)json_integer_value(v);
	}
	c->rdma_ll = NPF_LL_UNKNOWN;
	v = json_object_get(rdma, "link_layer");
	for (ll = 0; json_is_string(v) && ll <= NPF_LL_ETHERNET; ll++)
		if (strcmp(npf_link_layer_name((enum npf_link_layer)ll), json_string_value(v)) == 0)
			c->rdma_ll = (enum npf_link_layer)ll;
	return 0;
}

static json_t *node_json(const struct npf_node *n)
{
	json_t *cands = json_array(), *names = json_array();
	char inst[17];

	snprintf(inst, sizeof(inst), "%016" PRIx64, n->instance);
	for (size_t i = 0; cands && i < n->n_cands; i++)
		if (json_array_append_new(cands, cand_json(&n->cands[i])) < 0)
			goto err;
	for (size_t i = 0; names && i < n->n_ifnames; i++)
		if (json_array_append_new(names, json_string(n->ifnames[i])) < 0)
			goto err;
	return json_pack("{s:s, s:s, s:b, s:b, s:s, s:o, s:o, s:I, s:I, s:I, s:o}", "name",
			 n->name, "instance", inst, "available", n->available, "probed", n->probed,
			 "error", n->error, "candidates", cands, "interfaces", names,
			 "hello_rtt_us", (json_int_t)n->hello_rtt_us, "reverse_ms",
			 (json_int_t)n->rev_ms, "inconclusive", (json_int_t)n->n_inconclusive,
			 "name_address", npf_addr_json(&n->name_addr, NPF_ADDR_JSON_CIDR));
err:
	json_decref(cands);
	json_decref(names);
	return NULL;
}

static int node_parse(const json_t *o, struct npf_node *n)
{
	const json_t *cands = json_object_get(o, "candidates"), *names, *v;
	const char *inst;
	char *end;
	size_t i;

	if (!json_is_object(o) || get_str(o, "name", n->name, sizeof(n->name)) < 0 ||
	    get_bool(o, "available", &n->available) < 0 ||
	    get_str(o, "error", n->error, sizeof(n->error)) < 0)
		return -EBADMSG;
	/* Optional: state files written before the field existed still load. */
	if (json_object_get(o, "probed") && get_bool(o, "probed", &n->probed) < 0)
		return -EBADMSG;
	if ((json_object_get(o, "hello_rtt_us") && get_u32(o, "hello_rtt_us", &n->hello_rtt_us) < 0) ||
	    (json_object_get(o, "reverse_ms") && get_u32(o, "reverse_ms", &n->rev_ms) < 0) ||
	    (json_object_get(o, "inconclusive") &&
	     get_u32(o, "inconclusive", &n->n_inconclusive) < 0))
		return -EBADMSG;
	/* Optional, as above; null when unknown. */
	if (addr_parse(json_object_get(o, "name_address"), &n->name_addr) < 0)
		return -EBADMSG;
	inst = json_string_value(json_object_get(o, "instance"));
	if (!inst || strlen(inst) != 16 || inst[0] == '-' || inst[0] == '+')
		return -EBADMSG;
	errno = 0;
	n->instance = strtoull(inst, &end, 16);
	if (errno || *end)
		return -EBADMSG;
	names = json_object_get(o, "interfaces");
	if (!json_is_array(cands) || json_array_size(cands) > MAX_CANDS || !json_is_array(names) ||
	    json_array_size(names) > MAX_IFNAMES)
		return -EBADMSG;
	if (json_array_size(cands)) {
		n->cands = calloc(json_array_size(cands), sizeof(*n->cands));
		if (!n->cands)
			return -ENOMEM;
	}
	json_array_foreach (cands, i, v) {
		if (cand_parse(v, &n->cands[i]) < 0)
			return -EBADMSG;
		n->n_cands++;
	}
	if (json_array_size(names)) {
		n->ifnames = calloc(json_array_size(names), sizeof(*n->ifnames));
		if (!n->ifnames)
			return -ENOMEM;
	}
	json_array_foreach (names, i, v) {
		const char *s = json_string_value(v);

		if (!s || json_string_length(v) >= IFNAMSIZ || strlen(s) != json_string_length(v))
			return -EBADMSG;
		memcpy(n->ifnames[i], s, strlen(s) + 1);
		n->n_ifnames++;
	}
	return 0;
}

static const char *peer_name(const struct npf_check *c, int peer)
{
	if (peer < 0 || (size_t)peer >= c->n_nodes)
		return "";
	return c->nodes[peer].name;
}

static int peer_parse(const struct npf_check *c, const json_t *o, int *peer)
{
	const char *s = json_string_value(json_object_get(o, "peer"));

	for (size_t i = 1; s && i < c->n_nodes; i++)
		if (strcmp(c->nodes[i].name, s) == 0) {
			*peer = (int)i;
			return 0;
		}
	return -EBADMSG;
}

static json_t *path_json(const struct npf_check *c, const struct npf_path *p)
{
	return json_pack(
	    "{s:s, s:s, s:s, s:o, s:s, s:o, s:s, s:I, s:s}", "peer", peer_name(c, p->peer),
	    "direction", npf_direction_name(p->dir), "local_if", p->local_if, "local_addr",
	    npf_addr_json(&p->local_addr, NPF_ADDR_JSON_CIDR), "peer_if", p->peer_if, "peer_addr",
	    npf_addr_json(&p->peer_addr, NPF_ADDR_JSON_CIDR), "outcome",
	    npf_outcome_name(p->outcome), "rtt_us", (json_int_t)p->rtt_us, "detail", p->detail);
}

static int path_parse(const struct npf_check *c, const json_t *o, struct npf_path *p)
{
	const char *dir = json_string_value(json_object_get(o, "direction"));

	if (!json_is_object(o) || peer_parse(c, o, &p->peer) < 0 || !dir ||
	    get_str(o, "local_if", p->local_if, sizeof(p->local_if)) < 0 ||
	    addr_parse(json_object_get(o, "local_addr"), &p->local_addr) < 0 ||
	    get_str(o, "peer_if", p->peer_if, sizeof(p->peer_if)) < 0 ||
	    addr_parse(json_object_get(o, "peer_addr"), &p->peer_addr) < 0 ||
	    get_outcome(o, "outcome", &p->outcome) < 0 || get_u32(o, "rtt_us", &p->rtt_us) < 0 ||
	    get_str(o, "detail", p->detail, sizeof(p->detail)) < 0)
		return -EBADMSG;
	if (strcmp(dir, "forward") == 0)
		p->dir = NPF_DIR_FORWARD;
	else if (strcmp(dir, "reverse") == 0)
		p->dir = NPF_DIR_REVERSE;
	else
		return -EBADMSG;
	return 0;
}

static json_t *link_json(const struct npf_check *c, const struct npf_link *l)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:o, s:s, s:s}", "ifname", l->ifname,
			 "peer", peer_name(c, l->peer), "fwd", npf_outcome_name(l->fwd), "rev",
			 npf_outcome_name(l->rev), "fwd_rtt_us", (json_int_t)l->fwd_rtt_us,
			 "rev_rtt_us", (json_int_t)l->rev_rtt_us, "peer_if", l->peer_if,
			 "peer_addr", npf_addr_json(&l->peer_addr, NPF_ADDR_JSON_CIDR),
			 "fwd_detail", l->fwd_detail, "rev_detail", l->rev_detail);
}

static int link_parse(const struct npf_check *c, const json_t *o, struct npf_link *l)
{
	if (!json_is_object(o) || get_str(o, "ifname", l->ifname, sizeof(l->ifname)) < 0 ||
	    peer_parse(c, o, &l->peer) < 0 || get_outcome(o, "fwd", &l->fwd) < 0 ||
	    get_outcome(o, "rev", &l->rev) < 0 || get_u32(o, "fwd_rtt_us", &l->fwd_rtt_us) < 0 ||
	    get_u32(o, "rev_rtt_us", &l->rev_rtt_us) < 0 ||
	    get_str(o, "peer_if", l->peer_if, sizeof(l->peer_if)) < 0 ||
	    addr_parse(json_object_get(o, "peer_addr"), &l->peer_addr) < 0 ||
	    get_str(o, "fwd_detail", l->fwd_detail, sizeof(l->fwd_detail)) < 0 ||
	    get_str(o, "rev_detail", l->rev_detail, sizeof(l->rev_detail)) < 0)
		return -EBADMSG;
	return 0;
}

/* A string that may quote peer-supplied bytes: as is when it is valid UTF-8, else with
 * every byte outside printable ASCII replaced by '?' (jansson refuses invalid UTF-8). */
static json_t *safe_string(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	char *buf;

	if (j)
		return j;
	buf = malloc(n + 1);
	if (!buf)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		buf[i] = (ch < ' ' && ch != '\n') || ch >= 0x7f ? '?' : s[i];
	}
	j = json_stringn(buf, n);
	free(buf);
	return j;
}

/* The verdict is the decision's (npf_recommend); the per-interface rows are the
 * evidence behind it, as the matrix shows them (lib/verdict.h). */
static json_t *verdict_json(const struct npf_check *c, const struct npf_recommendation *rec)
{
	struct npf_verdict_report r;
	json_t *ifs, *out = NULL;

	if (npf_verdict_compute(c, &r) < 0)
		return NULL;
	ifs = json_array();
	for (size_t i = 0; ifs && i < r.n_ifaces; i++) {
		const struct npf_verdict_iface *vi = &r.ifaces[i];
		json_t *fail = json_null();

		if (vi->fail_peer >= 0)
			fail = json_pack("{s:s, s:s, s:s, s:s}", "peer", peer_name(c, vi->fail_peer),
					 "direction", npf_direction_name(vi->fail_dir), "outcome",
					 npf_outcome_name(vi->fail_outcome), "detail",
					 vi->fail_detail);
		if (json_array_append_new(ifs, json_pack("{s:s, s:b, s:I, s:o}", "ifname",
							 vi->ifname, "works", vi->works,
							 "ok_peers", (json_int_t)vi->n_ok,
							 "failure", fail)) < 0) {
			json_decref(ifs);
			ifs = NULL;
		}
	}
	/* The summary may quote peer-supplied names. */
	if (ifs)
		out = json_pack("{s:s, s:o, s:I, s:I, s:o}", "verdict",
				npf_verdict_name(rec->verdict), "summary",
				safe_string(rec->summary, strnlen(rec->summary, sizeof(rec->summary))),
				"peers", (json_int_t)r.n_peers, "unavailable",
				(json_int_t)r.n_unavailable, "interfaces", ifs);
	npf_verdict_report_clear(&r);
	return out;
}

/* What load did to the check (docs/json.md "load"). */
static json_t *load_json(const struct npf_check *c)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "tick_us", (json_int_t)c->tick_us,
			 "loop_samples", (json_int_t)c->loop_samples, "loop_late_max_us",
			 (json_int_t)c->loop_late_max_us, "loop_late_50ms",
			 (json_int_t)c->loop_late_50ms, "inconclusive_paths",
			 (json_int_t)c->n_inconclusive, "retried_paths", (json_int_t)c->n_retried,
			 "shared_paths", (json_int_t)c->n_shared);
}

static int load_parse(const json_t *o, struct npf_check *c)
{
	if (!o)
		return 0; /* written before the field existed */
	if (!json_is_object(o) || get_u32(o, "tick_us", &c->tick_us) < 0 ||
	    get_u32(o, "loop_samples", &c->loop_samples) < 0 ||
	    get_u32(o, "loop_late_max_us", &c->loop_late_max_us) < 0 ||
	    get_u32(o, "loop_late_50ms", &c->loop_late_50ms) < 0 ||
	    get_u32(o, "inconclusive_paths", &c->n_inconclusive) < 0 ||
	    get_u32(o, "retried_paths", &c->n_retried) < 0 ||
	    get_u32(o, "shared_paths", &c->n_shared) < 0)
		return -EBADMSG;
	return 0;
}

json_t *npf_check_to_json(const struct npf_check *c, const struct npf_recommendation *rec)
{
	json_t *nodes = json_array(), *paths = json_array(), *links = json_array(), *j;

	if (!nodes || !paths || !links)
		goto err;
	for (size_t i = 0; i < c->n_nodes; i++)
		if (json_array_append_new(nodes, node_json(&c->nodes[i])) < 0)
			goto err;
	for (size_t i = 0; i < c->n_paths; i++)
		if (json_array_append_new(paths, path_json(c, &c->paths[i])) < 0)
			goto err;
	for (size_t i = 0; i < c->n_links; i++)
		if (json_array_append_new(links, link_json(c, &c->links[i])) < 0)
			goto err;
	/* json_pack steals the "o" references even when it fails. */
	j = json_pack("{s:I, s:I, s:I, s:b, s:s, s:o, s:o, s:o}", "started_unix_ms",
		      (json_int_t)c->started_unix_ms, "duration_ms", (json_int_t)c->duration_ms,
		      "timeout_ms", (json_int_t)c->timeout_ms, "sparse", c->sparse, "self",
		      c->n_nodes ? c->nodes[0].name : "", "nodes", nodes, "paths", paths, "links",
		      links);
	if (j && json_object_set_new(j, "load", load_json(c)) < 0) {
		json_decref(j);
		return NULL;
	}
	if (j && rec &&
	    (json_object_set_new(j, "verdict", verdict_json(c, rec)) < 0 ||
	     json_object_set_new(j, "recommendation", npf_recommendation_to_json(rec)) < 0)) {
		json_decref(j);
		return NULL;
	}
	return j;
err:
	json_decref(nodes);
	json_decref(paths);
	json_decref(links);
	return NULL;
}

static int check_parse(const json_t *j, struct npf_check *c)
{
	const json_t *nodes = json_object_get(j, "nodes"), *paths = json_object_get(j, "paths");
	const json_t *links = json_object_get(j, "links"), *v;
	size_t i;

	if (!json_is_object(j) || get_u64(j, "started_unix_ms", INT64_MAX, &c->started_unix_ms) < 0 ||
	    get_u32(j, "duration_ms", &c->duration_ms) < 0 ||
	    get_u32(j, "timeout_ms", &c->timeout_ms) < 0 || get_bool(j, "sparse", &c->sparse) < 0 ||
	    load_parse(json_object_get(j, "load"), c) < 0)
		return -EBADMSG;
	if (!json_is_array(nodes) || json_array_size(nodes) == 0 ||
	    json_array_size(nodes) > NPF_API_MAX_PEERS + 1 || !json_is_array(paths) ||
	    json_array_size(paths) > MAX_PATHS || !json_is_array(links) ||
	    json_array_size(links) > MAX_LINKS)
		return -EBADMSG;
	c->nodes = calloc(json_array_size(nodes), sizeof(*c->nodes));
	if (!c->nodes)
		return -ENOMEM;
	json_array_foreach (nodes, i, v) {
		/* Count first so npf_check_clear frees a half-parsed node. */
		c->n_nodes++;
		if (node_parse(v, &c->nodes[i]) < 0)
			return -EBADMSG;
		for (size_t k = 0; k < i; k++)
			if (strcmp(c->nodes[k].name, c->nodes[i].name) == 0)
				return -EBADMSG;
	}
	if (json_array_size(paths)) {
		c->paths = calloc(json_array_size(paths), sizeof(*c->paths));
		if (!c->paths)
			return -ENOMEM;
	}
	json_array_foreach (paths, i, v) {
		if (path_parse(c, v, &c->paths[i]) < 0)
			return -EBADMSG;
		c->n_paths++;
	}
	if (json_array_size(links)) {
		c->links = calloc(json_array_size(links), sizeof(*c->links));
		if (!c->links)
			return -ENOMEM;
	}
	json_array_foreach (links, i, v) {
		if (link_parse(c, v, &c->links[i]) < 0)
			return -EBADMSG;
		c->n_links++;
	}
	return 0;
}

int npf_check_from_json(const json_t *j, struct npf_check *c)
{
	int r = check_parse(j, c);

	if (r < 0)
		npf_check_clear(c);
	return r;
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
				safe_string(rec->summary,
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
		    json_object_set_new(r, "text", safe_string(text, (size_t)n)) < 0 ||
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
	put_hdr(buf, n);
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
