// SPDX-License-Identifier: MIT
/* Local API codec, the frame: names, errors, framing, JSON text, replies. Pure functions
 * over bytes and jansson values, shared by the daemon, the CLI, the SPANK plugin, the unit
 * tests and the fuzzer; the request codec is api_request.c, the check JSON check_json.c,
 * the env replies api_env.c. */
#include "api.h"
#include "api_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void __attribute__((format(printf, 3, 4)))
api_seterr(struct npf_api_error *err, enum npf_api_errcode code, const char *fmt, ...)
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

void api_put_hdr(char *buf, size_t n)
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
	api_put_hdr(*out, n);
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
	api_put_hdr(buf, n);
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
		api_seterr(err, NPF_API_E_BAD_REQUEST, "invalid JSON at offset %d: %s", jerr.position,
		       jerr.text);
		return -EBADMSG;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		api_seterr(err, NPF_API_E_BAD_REQUEST, "message is not a JSON object");
		return -EBADMSG;
	}
	*out = j;
	return 0;
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
		api_seterr(err, NPF_API_E_INTERNAL, "malformed reply (no version/ok)");
		return -EPROTO;
	}
	if (json_integer_value(v) != NPF_API_VERSION) {
		api_seterr(err, NPF_API_E_UNSUPPORTED_VERSION,
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
	api_seterr(err, c < 0 ? NPF_API_E_INTERNAL : (enum npf_api_errcode)c, "%s",
	       msg ? msg : (code ? code : "unspecified error"));
	return -EREMOTEIO;
}
/* A string that may quote peer-supplied bytes: as is when it is valid UTF-8, else with
 * every byte outside printable ASCII replaced by '?' (jansson refuses invalid UTF-8). */
json_t *api_safe_string(const char *s, size_t n)
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
