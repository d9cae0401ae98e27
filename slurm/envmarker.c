// SPDX-License-Identifier: MIT
/* Per-node values stay per node: the rule table that merges the daemon's reply into a task. */
#include "envmarker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum action { ACT_SET, ACT_KEEP, ACT_REPLACE };

#define ANY (-1)

/* One row per case of a variable of our reply; first match wins. "inherited": the task
 * has it already; "foreign": the inherited NETPREFLIGHT_NODE names another node;
 * "has_list": NETPREFLIGHT_VARS was inherited too; "listed": the name is in it. */
struct rule {
	signed char inherited, foreign, has_list, listed;
	enum action act;
};

/* clang-format off */
static const struct rule rules[] = {
	/* Nothing there: ours. */
	{ 0, ANY, ANY, ANY, ACT_SET },
	/* No marker of another node: the user's explicit value, as before the marker. */
	{ 1, 0,   ANY, ANY, ACT_KEEP },
	/* The other node's netpreflight set it there. */
	{ 1, 1,   1,   1,   ACT_REPLACE },
	/* The other node kept it as the user's value: it still is. */
	{ 1, 1,   1,   0,   ACT_KEEP },
	/* A marker without a list ("eval $(netpreflight env)" on that node, then srun):
	 * the whole set came from that node's daemon. */
	{ 1, 1,   0,   ANY, ACT_REPLACE },
};
/* clang-format on */

static bool row_matches(signed char want, bool have)
{
	return want == ANY || (want != 0) == have;
}

static enum action decide(bool inherited, bool foreign, bool has_list, bool listed)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct rule *r = &rules[i];

		if (row_matches(r->inherited, inherited) && row_matches(r->foreign, foreign) &&
		    row_matches(r->has_list, has_list) && row_matches(r->listed, listed))
			return r->act;
	}
	return ACT_KEEP; /* unreachable: the rows cover every case */
}

/* True when name is one of list's comma-separated entries. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && memcmp(p, name, n) == 0)
			return true;
		p = e ? e + 1 : p + len;
	}
	return false;
}

static bool is_marker(const char *name)
{
	return strcmp(name, NPF_ENVMARKER_NODE) == 0 || strcmp(name, NPF_ENVMARKER_VARS) == 0;
}

static const struct npf_envreply_var *reply_var(const struct npf_envreply *env, const char *name)
{
	for (size_t i = 0; env && i < env->n_vars; i++)
		if (strcmp(env->vars[i].name, name) == 0)
			return &env->vars[i];
	return NULL;
}

static struct npf_envop *add_op(struct npf_envplan *out, enum npf_envop_kind kind, const char *name,
				const char *value)
{
	struct npf_envop *op = &out->ops[out->n_ops++];

	op->kind = kind;
	snprintf(op->name, sizeof(op->name), "%s", name);
	snprintf(op->value, sizeof(op->value), "%s", value ? value : "");
	return op;
}

/* Appends name to the comma list in buf; a list that would not fit is dropped whole
 * (returns false), which a later node reads as "all of ours came from that node". */
static bool list_add(char *buf, size_t len, const char *name)
{
	size_t have = strlen(buf), n = strlen(name);

	if (have + (have ? 1 : 0) + n >= len)
		return false;
	if (have)
		buf[have++] = ',';
	memcpy(buf + have, name, n + 1);
	return true;
}

static bool has_unset(const struct npf_envplan *out, const char *name)
{
	for (size_t i = 0; i < out->n_ops; i++)
		if (out->ops[i].kind == NPF_ENVOP_UNSET && strcmp(out->ops[i].name, name) == 0)
			return true;
	return false;
}

/* Unsets the other node's listed values that we have no replacement for. */
static void unset_leftovers(const struct npf_envreply *env, const char *list, npf_envlookup_fn get,
			    void *userdata, struct npf_envplan *out)
{
	char name[NPF_ENVREPLY_NAME_MAX];

	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len > 0 && len < sizeof(name)) {
			memcpy(name, p, len);
			name[len] = '\0';
			/* Anything but a plain name is not one we could have set and must not
			 * reach the TaskProlog's line protocol. */
			if (npf_envreply_name_ok(name) && !is_marker(name) &&
			    !reply_var(env, name) && !has_unset(out, name) && get(name, userdata) &&
			    out->n_ops < NPF_ENVREPLY_MAX_VARS) {
				add_op(out, NPF_ENVOP_UNSET, name, NULL);
				out->n_replaced++;
			}
		}
		p = e ? e + 1 : p + len;
	}
}

int npf_envmarker_plan(const struct npf_envreply *env, const char *self, npf_envlookup_fn get,
		       void *userdata, struct npf_envplan *out)
{
	const struct npf_envreply_var *mv = reply_var(env, NPF_ENVMARKER_NODE);
	const char *me, *inh_node = NULL, *inh_list = NULL, *v;
	char names[NPF_ENVREPLY_VALUE_MAX] = "", node_buf[NPF_ENVREPLY_VALUE_MAX],
	     list_buf[NPF_ENVREPLY_VALUE_MAX];
	bool foreign, mine, list_ok = true, have_env = env && env->n_vars > 0;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!get || !self)
		return -EINVAL;
	/* The daemon's own marker names the node as the daemon knows it; ours otherwise. */
	me = mv ? mv->value : self;
	/* Copied: a lookup's string need only live until the next lookup. */
	if ((v = get(NPF_ENVMARKER_NODE, userdata)) != NULL) {
		snprintf(node_buf, sizeof(node_buf), "%s", v);
		inh_node = node_buf;
	}
	if ((v = get(NPF_ENVMARKER_VARS, userdata)) != NULL) {
		snprintf(list_buf, sizeof(list_buf), "%s", v);
		inh_list = list_buf;
	}
	foreign = inh_node && strcmp(inh_node, me) != 0;
	mine = inh_node && !foreign;
	if (foreign)
		snprintf(out->other_node, sizeof(out->other_node), "%s", inh_node);
	/* Every reply variable, the leftovers of another node and our two markers. */
	out->ops = calloc(2 * NPF_ENVREPLY_MAX_VARS + 2, sizeof(*out->ops));
	if (!out->ops)
		return -ENOMEM;
	for (size_t i = 0; have_env && i < env->n_vars; i++) {
		const struct npf_envreply_var *rv = &env->vars[i];
		bool inherited = get(rv->name, userdata) != NULL;
		bool listed = inh_list && in_list(inh_list, rv->name);

		if (is_marker(rv->name))
			continue;
		switch (decide(inherited, foreign, inh_list != NULL, listed)) {
		case ACT_REPLACE:
			out->n_replaced++;
			/* fall through */
		case ACT_SET:
			add_op(out, NPF_ENVOP_SET, rv->name, rv->value);
			list_ok = list_ok && list_add(names, sizeof(names), rv->name);
			break;
		case ACT_KEEP:
			out->n_kept++;
			/* A nested step on this node: the value is ours from the first step. */
			if (mine && listed)
				list_ok = list_ok && list_add(names, sizeof(names), rv->name);
			break;
		}
	}
	if (foreign)
		unset_leftovers(have_env ? env : NULL, inh_list, get, userdata, out);
	if (have_env) {
		add_op(out, NPF_ENVOP_SET, NPF_ENVMARKER_NODE, me);
		if (list_ok)
			add_op(out, NPF_ENVOP_SET, NPF_ENVMARKER_VARS, names);
		else
			add_op(out, NPF_ENVOP_UNSET, NPF_ENVMARKER_VARS, NULL);
	} else if (foreign) {
		/* Nothing verified here: none of the other node's values may stay. */
		add_op(out, NPF_ENVOP_UNSET, NPF_ENVMARKER_NODE, NULL);
		if (inh_list)
			add_op(out, NPF_ENVOP_UNSET, NPF_ENVMARKER_VARS, NULL);
	}
	return 0;
}

void npf_envplan_clear(struct npf_envplan *out)
{
	if (!out)
		return;
	free(out->ops);
	memset(out, 0, sizeof(*out));
}
