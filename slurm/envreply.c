// SPDX-License-Identifier: MIT
/* The "env" request of the SPANK plugin and strict validation of the daemon's reply. */
#include "envreply.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

static int bad(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

json_t *npf_envreply_request(json_t *peers)
{
	if (!json_is_array(peers)) {
		json_decref(peers);
		return NULL;
	}
	return json_pack("{s:i, s:s, s:o, s:b}", "version", NPF_API_VERSION, "request", "env",
			 "peers", peers, "cached", 1);
}

bool npf_envreply_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= NPF_ENVREPLY_NAME_MAX)
		return false;
	if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

/* Printable ASCII only: values are interface names, CIDRs, device:port lists and
 * numbers. A newline would split a TaskProlog line into a second command. */
static bool value_ok(const char *s, size_t len)
{
	if (len >= NPF_ENVREPLY_VALUE_MAX || strlen(s) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

static int add_var(struct npf_envreply *out, const char *name, const json_t *val, char *err,
		   size_t errlen)
{
	struct npf_envreply_var *v;

	if (!json_is_string(val))
		return bad(err, errlen, "value of %.64s is not a string", name);
	if (!npf_envreply_name_ok(name))
		return bad(err, errlen, "bad variable name '%.64s'", name);
	if (!value_ok(json_string_value(val), json_string_length(val)))
		return bad(err, errlen, "bad value for %s", name);
	for (size_t i = 0; i < out->n_vars; i++)
		if (strcmp(out->vars[i].name, name) == 0)
			return bad(err, errlen, "%s given twice", name);
	if (out->n_vars >= NPF_ENVREPLY_MAX_VARS)
		return bad(err, errlen, "more than %d variables", NPF_ENVREPLY_MAX_VARS);
	v = &out->vars[out->n_vars++];
	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(v->value, sizeof(v->value), "%s", json_string_value(val));
	return 0;
}

static int parse_vars(const json_t *vars, struct npf_envreply *out, char *err, size_t errlen)
{
	const char *key;
	const json_t *val;
	size_t i;
	int r;

	if (json_is_object(vars)) {
		json_object_foreach((json_t *)(uintptr_t)vars, key, val) {
			r = add_var(out, key, val, err, errlen);
			if (r < 0)
				return r;
		}
		return 0;
	}
	if (!json_is_array(vars))
		return bad(err, errlen, "\"variables\" is neither an array nor an object");
	json_array_foreach(vars, i, val) {
		const char *name = json_string_value(json_object_get(val, "name"));

		if (!name)
			return bad(err, errlen, "variable %zu has no name", i);
		r = add_var(out, name, json_object_get(val, "value"), err, errlen);
		if (r < 0)
			return r;
	}
	return 0;
}

int npf_envreply_parse(const json_t *reply, struct npf_envreply *out, char *err, size_t errlen)
{
	struct npf_api_error aerr;
	const json_t *env, *vars;
	const char *verdict, *summary;
	int r;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	r = npf_api_reply_status(reply, &aerr);
	if (r == -EREMOTEIO) {
		snprintf(err, errlen, "%s: %s", npf_api_errcode_name(aerr.code), aerr.message);
		return r;
	}
	if (r < 0)
		return bad(err, errlen, "%s", aerr.message);
	env = json_object_get(reply, "env");
	if (!json_is_object(env))
		env = reply;
	verdict = json_string_value(json_object_get(env, "verdict"));
	if (!verdict) {
		/* The check object nests its verdict: {"verdict":{"verdict":"ok",...}}. */
		const json_t *vo = json_object_get(env, "verdict");

		verdict = json_string_value(json_object_get(vo, "verdict"));
		summary = json_string_value(json_object_get(vo, "summary"));
	} else {
		summary = json_string_value(json_object_get(env, "summary"));
	}
	if (npf_verdict_parse(verdict) < 0)
		return bad(err, errlen, "reply has no verdict");
	snprintf(out->verdict, sizeof(out->verdict), "%s", verdict);
	snprintf(out->summary, sizeof(out->summary), "%s", summary ? summary : "");
	vars = json_object_get(env, "variables");
	if (!vars)
		return 0; /* nothing published (not ok): a valid answer */
	out->vars = calloc(NPF_ENVREPLY_MAX_VARS, sizeof(*out->vars));
	if (!out->vars)
		return -ENOMEM;
	r = parse_vars(vars, out, err, errlen);
	if (r < 0)
		npf_envreply_clear(out);
	return r;
}

void npf_envreply_clear(struct npf_envreply *out)
{
	free(out->vars);
	memset(out, 0, sizeof(*out));
}
