// SPDX-License-Identifier: MIT
/* Output formats of a recommendation. Every byte that reaches a shell or a parser that
 * does no quoting is checked here, since node names and details come from the network. */
#include "envfmt.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int npf_envfmt_parse(const char *name)
{
	if (!name)
		return -EINVAL;
	if (strcmp(name, "shell") == 0)
		return NPF_ENVFMT_SHELL;
	if (strcmp(name, "taskprolog") == 0)
		return NPF_ENVFMT_TASKPROLOG;
	if (strcmp(name, "nccl-conf") == 0)
		return NPF_ENVFMT_NCCL_CONF;
	return -EINVAL;
}

static bool valid_name(const char *s)
{
	if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* No quoting exists in TaskProlog output or nccl.conf: a value is the rest of the line,
 * so whitespace would change its meaning and a newline would inject a second line. */
static bool bare_value_ok(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

/* "# text" with control characters replaced, so no comment can end early. */
static void put_comment(FILE *f, const char *prefix, const char *text)
{
	fputs("# ", f);
	fputs(prefix, f);
	for (const char *p = text ? text : ""; *p; p++)
		fputc((unsigned char)*p < ' ' || *p == 0x7f ? '?' : *p, f);
	fputc('\n', f);
}

/* 'value' with every ' written as '\'' : nothing inside single quotes is special. */
static void put_shell_quoted(FILE *f, const char *v)
{
	fputc('\'', f);
	for (; *v; v++) {
		if (*v == '\'')
			fputs("'\\''", f);
		else
			fputc(*v, f);
	}
	fputc('\'', f);
}

static void put_comments(FILE *f, const struct npf_recommendation *rec)
{
	put_comment(f, "netpreflight: ", rec->summary);
	if (rec->nccl_default_text[0])
		put_comment(f, "", rec->nccl_default_text);
	for (size_t i = 0; i < rec->n_notes; i++)
		put_comment(f, "note: ", rec->notes[i].text);
	for (size_t i = 0; i < rec->n_rejections; i++) {
		char line[IFNAMSIZ + NPF_REC_REASON_MAX + 16];

		snprintf(line, sizeof(line), "%.*s: %.*s", IFNAMSIZ - 1, rec->rejections[i].ifname,
			 NPF_REC_REASON_MAX - 1, rec->rejections[i].reason);
		put_comment(f, "not chosen: ", line);
	}
}

int npf_env_format(const struct npf_recommendation *rec, enum npf_envfmt fmt, char **out,
		   size_t *n_omitted)
{
	char *buf = NULL;
	size_t len = 0, omitted = 0;
	FILE *f;

	if (!rec || !out || (unsigned int)fmt > NPF_ENVFMT_NCCL_CONF)
		return -EINVAL;
	*out = NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	if (fmt != NPF_ENVFMT_TASKPROLOG)
		put_comments(f, rec);
	/* Only a verified answer carries variables; this check keeps it so even for a
	 * hand-built struct. */
	for (size_t i = 0; npf_verdict_publishes(rec->verdict) && i < rec->n_vars; i++) {
		const struct npf_envvar *v = &rec->vars[i];

		if (!valid_name(v->name) || !v->value) {
			omitted++;
			continue;
		}
		switch (fmt) {
		case NPF_ENVFMT_SHELL:
			fprintf(f, "export %s=", v->name);
			put_shell_quoted(f, v->value);
			fputc('\n', f);
			break;
		case NPF_ENVFMT_TASKPROLOG:
			if (!bare_value_ok(v->value)) {
				omitted++;
				break;
			}
			fprintf(f, "export %s=%s\n", v->name, v->value);
			break;
		case NPF_ENVFMT_NCCL_CONF:
			if (strcmp(v->name, "NETPREFLIGHT_NODE") == 0 && bare_value_ok(v->value)) {
				/* NCCL would export every line of the file; the marker
				 * stays a comment so the file remains NCCL's alone. */
				fprintf(f, "# %s=%s\n", v->name, v->value);
				break;
			}
			if (strncmp(v->name, "NCCL_", 5) != 0)
				break; /* not an omission: the file is NCCL's alone */
			if (!bare_value_ok(v->value)) {
				omitted++;
				break;
			}
			fprintf(f, "%s=%s\n", v->name, v->value);
			break;
		}
	}
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return -ENOMEM;
	}
	if (len > INT32_MAX) {
		free(buf);
		return -EOVERFLOW;
	}
	*out = buf;
	if (n_omitted)
		*n_omitted = omitted;
	return (int)len;
}

/* ---- JSON ------------------------------------------------------------------------------ */

/* json_object_set_new that records failure instead of leaking or crashing. */
static void jset(json_t *o, const char *key, json_t *v, bool *ok)
{
	if (!v || json_object_set_new(o, key, v) < 0)
		*ok = false;
}

static void jpush(json_t *a, json_t *v, bool *ok)
{
	if (!v || json_array_append_new(a, v) < 0)
		*ok = false;
}

static json_t *jaddr(const struct npf_addr *a)
{
	char ip[INET6_ADDRSTRLEN];

	if (a->family != AF_INET && a->family != AF_INET6)
		return json_null();
	return json_string(npf_addr_str(a, ip, sizeof(ip)));
}

/* Strings from peers need not be UTF-8, which jansson refuses; such a string is passed
 * with every byte outside printable ASCII replaced. max bounds fixed-size fields. */
static json_t *jstr(const char *s, size_t max)
{
	size_t n = s ? strnlen(s, max) : 0;
	json_t *j = json_stringn(s ? s : "", n);
	char *buf;

	if (j)
		return j;
	buf = malloc(n + 1);
	if (!buf)
		return NULL;
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)s[i] < ' ' || (unsigned char)s[i] >= 0x7f ? '?' : s[i];
	buf[n] = '\0';
	j = json_stringn(buf, n);
	free(buf);
	return j;
}

static json_t *rejections_json(const struct npf_recommendation *rec, bool *ok)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < rec->n_rejections; i++) {
		const struct npf_rejection *j = &rec->rejections[i];
		json_t *o = json_object();

		if (!o) {
			*ok = false;
			break;
		}
		jset(o, "ifname", jstr(j->ifname, IFNAMSIZ - 1), ok);
		jset(o, "reason", jstr(j->reason, NPF_REC_REASON_MAX - 1), ok);
		jset(o, "peer", j->peer >= 0 ? jstr(j->peer_name, NPF_NAME_MAX - 1) : json_null(),
		     ok);
		jset(o, "outcome", json_string(npf_outcome_name(j->outcome)), ok);
		jset(o, "direction",
		     j->peer >= 0 ? json_string(npf_direction_name(j->dir)) : json_null(), ok);
		jpush(a, o, ok);
	}
	return a;
}

/* The notes as data: {code, variable, consumer, node, interface, text}. */
static json_t *notes_json(const struct npf_recommendation *rec, bool *ok)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < rec->n_notes; i++) {
		const struct npf_note *n = &rec->notes[i];
		const struct npf_var_info *vi = npf_var_info((enum npf_var)n->var);
		json_t *o = json_object();

		if (!o) {
			*ok = false;
			break;
		}
		jset(o, "code", json_string(npf_note_code_name(n->code)), ok);
		jset(o, "variable", vi ? json_string(vi->name) : json_null(), ok);
		jset(o, "consumer", vi ? json_string(npf_consumer_name(vi->consumer)) : json_null(),
		     ok);
		jset(o, "node", n->node[0] ? jstr(n->node, NPF_NAME_MAX - 1) : json_null(), ok);
		jset(o, "interface", n->ifname[0] ? jstr(n->ifname, IFNAMSIZ - 1) : json_null(), ok);
		jset(o, "text", jstr(n->text, SIZE_MAX), ok);
		jpush(a, o, ok);
	}
	return a;
}

static json_t *hcas_json(const struct npf_recommendation *rec, bool *ok)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < rec->n_hcas; i++) {
		const struct npf_hca *h = &rec->hcas[i];
		json_t *o = json_object();

		if (!o) {
			*ok = false;
			break;
		}
		jset(o, "dev", jstr(h->dev, NPF_NAME_MAX - 1), ok);
		jset(o, "port", json_integer(h->port), ok);
		jset(o, "netdev", h->netdev[0] ? jstr(h->netdev, IFNAMSIZ - 1) : json_null(), ok);
		jset(o, "link_layer", json_string(npf_link_layer_name(h->link_layer)), ok);
		jset(o, "gid_index", h->gid_index >= 0 ? json_integer(h->gid_index) : json_null(),
		     ok);
		jset(o, "nccl_gid_index",
		     h->auto_gid >= 0 ? json_integer(h->auto_gid) : json_null(), ok);
		jset(o, "published", json_boolean(h->published), ok);
		jset(o, "why", h->published ? json_null() : jstr(h->why, NPF_REC_REASON_MAX - 1),
		     ok);
		jpush(a, o, ok);
	}
	return a;
}

json_t *npf_recommendation_to_json(const struct npf_recommendation *rec)
{
	json_t *o, *env, *notes, *nodes, *def, *choice = NULL, *fail = NULL;
	bool ok = true;

	if (!rec)
		return NULL;
	o = json_object();
	if (!o)
		return NULL;
	jset(o, "verdict", json_string(npf_verdict_name(rec->verdict)), &ok);
	jset(o, "summary", jstr(rec->summary, sizeof(rec->summary) - 1), &ok);
	jset(o, "nccl_version",
	     rec->nccl_version >= NPF_NCCL_VERSION_CURRENT ? json_string("current") :
							     json_integer(rec->nccl_version),
	     &ok);
	if (rec->have_choice) {
		choice = json_object();
		if (choice) {
			jset(choice, "ifname", jstr(rec->ifname, IFNAMSIZ - 1), &ok);
			jset(choice, "address", jaddr(&rec->addr), &ok);
			jset(choice, "network", json_string(rec->cidr), &ok);
			jset(choice, "verified", json_boolean(npf_verdict_publishes(rec->verdict)),
			     &ok);
		}
	}
	jset(o, "choice", rec->have_choice ? choice : json_null(), &ok);
	nodes = json_array();
	for (size_t i = 0; nodes && i < rec->n_nodes; i++) {
		const struct npf_node_choice *ch = &rec->nodes[i];
		json_t *n = json_object();

		if (!n) {
			ok = false;
			break;
		}
		jset(n, "node", jstr(ch->node, NPF_NAME_MAX - 1), &ok);
		jset(n, "ifname", ch->ifname[0] ? jstr(ch->ifname, IFNAMSIZ - 1) : json_null(),
		     &ok);
		jset(n, "address", ch->ifname[0] ? jaddr(&ch->addr) : json_null(), &ok);
		jpush(nodes, n, &ok);
	}
	jset(o, "nodes", nodes, &ok);
	env = json_object();
	for (size_t i = 0; env && npf_verdict_publishes(rec->verdict) && i < rec->n_vars; i++)
		jset(env, rec->vars[i].name, jstr(rec->vars[i].value, SIZE_MAX), &ok);
	jset(o, "env", env, &ok);
	jset(o, "hcas", hcas_json(rec, &ok), &ok);
	def = json_object();
	if (def) {
		jset(def, "found", json_boolean(rec->nccl_default_found), &ok);
		jset(def, "ifname",
		     rec->nccl_default_found ? jstr(rec->nccl_default.ifname, IFNAMSIZ - 1) :
					       json_null(),
		     &ok);
		jset(def, "address",
		     rec->nccl_default_found ? jaddr(&rec->nccl_default.addr) : json_null(), &ok);
		jset(def, "list",
		     rec->nccl_default_found && rec->nccl_default.list ?
			     jstr(rec->nccl_default.list, 64) :
			     json_null(),
		     &ok);
		jset(def, "passed", json_boolean(rec->nccl_default_passed), &ok);
		jset(def, "text", jstr(rec->nccl_default_text, sizeof(rec->nccl_default_text) - 1),
		     &ok);
	}
	jset(o, "nccl_default", def, &ok);
	jset(o, "rejected", rejections_json(rec, &ok), &ok);
	notes = json_array();
	for (size_t i = 0; notes && i < rec->n_notes; i++)
		jpush(notes, jstr(rec->notes[i].text, SIZE_MAX), &ok);
	jset(o, "notes", notes, &ok);
	jset(o, "note_details", notes_json(rec, &ok), &ok);
	if (!npf_verdict_publishes(rec->verdict) && rec->fail_node[0]) {
		const char *o_name = npf_outcome_name(rec->fail_outcome);
		const char *d_name = npf_direction_name(rec->fail_dir);

		fail = json_object();
		if (fail) {
			jset(fail, "node", jstr(rec->fail_node, NPF_NAME_MAX - 1), &ok);
			jset(fail, "ifname",
			     rec->fail_ifname[0] ? jstr(rec->fail_ifname, IFNAMSIZ - 1) :
						   json_null(),
			     &ok);
			jset(fail, "outcome", json_string(o_name), &ok);
			jset(fail, "direction", json_string(d_name), &ok);
		}
	}
	jset(o, "failure", fail ? fail : json_null(), &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
