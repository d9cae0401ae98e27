// SPDX-License-Identifier: MIT
/* Where a job's node list and job id come from: one table row per launcher, and the parsers
 * of the node lists they write (docs/run.md, ../shared/reference/launchers.md). */
#include "launcher.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

/* One row per launcher (and per node list form it offers); the first row whose job id and
 * node list are both set wins, so a Slurm job started inside an LSF one is Slurm's. */
static const struct launcher_row {
	const char *name;
	const char *job_vars[3];   /* the job id: the first one set (NULL-terminated) */
	const char *nodes_vars[3]; /* the node list: the first one set */
	enum npf_nodes_form form;
	const char *restart_var; /* a requeued job's start count, or NULL */
} rows[] = {
	{ "slurm", { "SLURM_JOB_ID", "SLURM_JOBID" }, { "SLURM_JOB_NODELIST", "SLURM_NODELIST" },
	  NPF_NODES_HOSTLIST, "SLURM_RESTART_COUNT" },
	/* PBS Professional, OpenPBS, Torque: one line per slot. */
	{ "pbs", { "PBS_JOBID" }, { "PBS_NODEFILE" }, NPF_NODES_FILE, NULL },
	/* LSF: "hostA 4 hostB 4"; LSB_DJOB_HOSTFILE (one line per slot) when that is all. */
	{ "lsf", { "LSB_JOBID" }, { "LSB_MCPU_HOSTS" }, NPF_NODES_MCPU, NULL },
	{ "lsf", { "LSB_JOBID" }, { "LSB_DJOB_HOSTFILE" }, NPF_NODES_FILE, NULL },
};

static const char *first_set(const char *const *vars, npf_launcher_getenv_fn get, void *ud,
			     const char **which)
{
	for (; *vars; vars++) {
		const char *v = get(*vars, ud);

		if (v && *v) {
			if (which)
				*which = *vars;
			return v;
		}
	}
	return NULL;
}

int npf_launcher_tag(const char *job_id, const char *restart, char *out, size_t len)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";
	size_t n;
	int w;

	if (!job_id || !job_id[0] || !out || len == 0)
		return -EINVAL;
	if (restart && (!restart[0] || strspn(restart, "0123456789") != strlen(restart)))
		restart = NULL;
	w = restart ? snprintf(out, len, "%s.r%s", job_id, restart) : snprintf(out, len, "%s", job_id);
	if (w < 0 || (size_t)w >= len || (size_t)w >= NPF_API_JOB_MAX) {
		out[0] = '\0';
		return -EINVAL;
	}
	/* Deterministic on every node: the same id always makes the same tag. */
	for (n = 0; out[n]; n++)
		if (!strchr(ok, out[n]))
			out[n] = '_';
	return 0;
}

uint16_t npf_launcher_port(const char *tag)
{
	uint64_t n = 0;
	uint32_t h = 2166136261u; /* FNV-1a: small, and the same on every node */
	size_t i;

	for (i = 0; tag && tag[i] >= '0' && tag[i] <= '9' && i < 18; i++)
		n = n * 10 + (uint64_t)(tag[i] - '0');
	if (i == 0) {
		for (i = 0; tag && tag[i]; i++)
			h = (h ^ (unsigned char)tag[i]) * 16777619u;
		n = h;
	}
	return (uint16_t)(NPF_RUN_PORT_BASE + n % NPF_RUN_PORT_SPAN);
}

int npf_launcher_detect(npf_launcher_getenv_fn get, void *userdata, struct npf_launch *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!get)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct launcher_row *r = &rows[i];
		const char *nodes_var = NULL, *v, *restart;
		char id[NPF_API_JOB_MAX * 2];
		int rc;

		/* Copied: a lookup's string need only live until the next lookup. */
		v = first_set(r->job_vars, get, userdata, NULL);
		if (!v || strlen(v) >= sizeof(id))
			continue;
		snprintf(id, sizeof(id), "%s", v);
		v = first_set(r->nodes_vars, get, userdata, &nodes_var);
		if (!v)
			continue;
		out->nodes = strdup(v);
		if (!out->nodes)
			return -ENOMEM;
		restart = r->restart_var ? get(r->restart_var, userdata) : NULL;
		rc = npf_launcher_tag(id, restart, out->job, sizeof(out->job));
		if (rc < 0) {
			npf_launch_clear(out);
			return rc;
		}
		out->launcher = r->name;
		out->form = r->form;
		out->nodes_var = nodes_var;
		return 0;
	}
	return -ENOENT;
}

void npf_launch_clear(struct npf_launch *out)
{
	if (!out)
		return;
	free(out->nodes);
	memset(out, 0, sizeof(*out));
}

/* The unique names parsed so far, in first-appearance order. */
struct names {
	char **v;
	size_t n, cap;
	char *err;
	size_t errlen;
};

static int fail(struct names *s, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct names *s, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, s->errlen, fmt, ap);
	va_end(ap);
	return rc;
}

/* Adds the name of len bytes at p unless it is there already (a line per slot). */
static int add_name(struct names *s, const char *p, size_t len, const char *unit, size_t where)
{
	char name[NPF_NAME_MAX];

	if (len == 0 || len >= sizeof(name))
		return fail(s, -EINVAL, "%s %zu: a host name of %zu bytes (1..%d)", unit, where,
			    len, NPF_NAME_MAX - 1);
	memcpy(name, p, len);
	name[len] = '\0';
	if (!npf_api_name_valid(name))
		return fail(s, -EINVAL, "%s %zu: bad host name (only [A-Za-z0-9._-], not first '-' or '.')",
			    unit, where);
	/* Slots of one host come in a row: the last name first. */
	if (s->n && strcmp(s->v[s->n - 1], name) == 0)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return 0;
	if (s->n >= NPF_API_MAX_PEERS)
		return fail(s, -E2BIG, "more than %u hosts", NPF_API_MAX_PEERS);
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = strdup(name);
	if (!s->v[s->n])
		return -ENOMEM;
	s->n++;
	return 0;
}

/* A slot count: 1..9 digits (the bytes are not NUL-terminated: no strspn). */
static bool is_count(const char *p, size_t n)
{
	if (n == 0 || n > 9)
		return false;
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The next word of [*p, end), or false at the end. */
static bool next_word(const char **p, const char *end, const char **w, size_t *wlen)
{
	const char *q = *p;

	while (q < end && is_space(*q))
		q++;
	if (q == end) {
		*p = q;
		return false;
	}
	*w = q;
	while (q < end && !is_space(*q))
		q++;
	*wlen = (size_t)(q - *w);
	*p = q;
	return true;
}

/* One line of a node file or hostfile (its comment already cut off). */
static int file_line(struct names *s, const char *p, const char *end, size_t lineno)
{
	const char *w, *colon;
	size_t wl;
	int rc;

	if (!next_word(&p, end, &w, &wl))
		return 0; /* blank */
	colon = memchr(w, ':', wl);
	if (colon) {
		/* Hydra's "host:N": the slot count must be a count. */
		size_t cl = wl - (size_t)(colon - w) - 1;

		if (!is_count(colon + 1, cl))
			return fail(s, -EINVAL, "line %zu: bad slot count after ':'", lineno);
		wl = (size_t)(colon - w);
	}
	rc = add_name(s, w, wl, "line", lineno);
	if (rc < 0)
		return rc;
	/* Open MPI / DeepSpeed: "slots=N", "max_slots=M", ... */
	while (next_word(&p, end, &w, &wl)) {
		const char *eq = memchr(w, '=', wl);

		if (!eq || eq == w || eq == w + wl - 1)
			return fail(s, -EINVAL, "line %zu: '%.*s' is not key=value", lineno,
				    (int)(wl > 32 ? 32 : wl), w);
	}
	return 0;
}

static int parse_file(struct names *s, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	for (size_t lineno = 1; p < end; lineno++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *hash = memchr(p, '#', (size_t)(le - p));
		int rc = file_line(s, p, hash ? hash : le, lineno);

		if (rc < 0)
			return rc;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

static int parse_mcpu(struct names *s, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *w, *c;
	size_t wl, cl;

	for (size_t word = 1; next_word(&p, end, &w, &wl); word += 2) {
		int rc = add_name(s, w, wl, "word", word);

		if (rc < 0)
			return rc;
		if (!next_word(&p, end, &c, &cl) || !is_count(c, cl))
			return fail(s, -EINVAL, "word %zu: host '%.*s' without a slot count",
				    word, (int)(wl > 32 ? 32 : wl), w);
	}
	return 0;
}

static int parse_hostlist(struct names *s, const char *buf, size_t len)
{
	char *expr = strndup(buf, len), **v = NULL;
	size_t n = 0;
	int rc;

	if (!expr)
		return -ENOMEM;
	rc = npf_hostlist_expand(expr, &v, &n, s->err, s->errlen);
	free(expr);
	for (size_t i = 0; rc >= 0 && i < n; i++)
		rc = add_name(s, v[i], strlen(v[i]), "name", i + 1);
	npf_hostlist_free(v, n);
	return rc;
}

int npf_launcher_nodes(enum npf_nodes_form form, const char *buf, size_t len, char ***names,
		       size_t *n, char *err, size_t errlen)
{
	char dummy[1];
	struct names s = { .err = err && errlen ? err : dummy,
			   .errlen = err && errlen ? errlen : sizeof(dummy) };
	int rc;

	s.err[0] = '\0';
	if (names)
		*names = NULL;
	if (n)
		*n = 0;
	if (!names || !n || (!buf && len))
		return -EINVAL;
	if (memchr(buf, '\0', len))
		return fail(&s, -EINVAL, "a NUL byte in the node list");
	switch (form) {
	case NPF_NODES_HOSTLIST:
		rc = parse_hostlist(&s, buf, len);
		break;
	case NPF_NODES_FILE:
		rc = parse_file(&s, buf, len);
		break;
	case NPF_NODES_MCPU:
		rc = parse_mcpu(&s, buf, len);
		break;
	default:
		rc = fail(&s, -EINVAL, "unknown node list form");
	}
	if (rc >= 0 && s.n == 0)
		rc = fail(&s, -EINVAL, "no host in the node list");
	if (rc < 0) {
		if (rc == -ENOMEM)
			fail(&s, rc, "out of memory");
		npf_hostlist_free(s.v, s.n);
		return rc;
	}
	s.err[0] = '\0';
	*names = s.v;
	*n = s.n;
	return (int)s.n;
}
