// SPDX-License-Identifier: MIT
/* `explain`, the per-process table: which process each record belongs to, what it says
 * about that process (bootstrap, environment, first failure), and the job's story (who failed
 * first, who failed only because another did). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain_internal.h"

/* Recognised lines kept for evidence, per kind; later ones are only counted. The per-process
 * kinds (bootstrap, env, NET) have room for every process; chatty INFO kinds little. */
static size_t kind_cap(enum npf_xp_kind k)
{
	switch (k) {
	case NPF_XL_BOOTSTRAP:
	case NPF_XL_NET_IB:
	case NPF_XL_NET_SOCKET:
	case NPF_XL_NCCL_VERSION:
		return NPF_XP_MAX_PROCS + 16;
	case NPF_XL_ENV:
		return 4 * NPF_XP_MAX_PROCS;
	case NPF_XL_CHANNEL:
	case NPF_XL_INIT_RANK:
	case NPF_XL_INIT_DONE:
	case NPF_XL_USING_NET:
		return 64;
	default:
		return 2048;
	}
}

/* How a failure line counts (failure_class()). */
enum fclass {
	FC_NONE = 0,
	FC_ECHO,    /* a consequence: a timeout, an abort, a wrapper around another failure */
	FC_WEAK,    /* a Python exception no row knows: a cause only when nothing else is */
	FC_CAUSE,   /* a network failure of its own */
	FC_NOT_NET, /* a failure of its own that is not the network's (OOM, duplicate GPU) */
};

bool npf_xp_kind_not_network(enum npf_xp_kind k)
{
	switch (k) {
	case NPF_XL_CUDA_OOM:
	case NPF_XL_KILLED:
	case NPF_XL_DUP_GPU:
	case NPF_XL_COLL_MISMATCH:
	case NPF_XL_CUDA_ERROR:
	case NPF_XL_SHM:
	case NPF_XL_VERSION:
	case NPF_XL_NO_BARRIER:
	case NPF_XL_PY_EXCEPTION:
		return true;
	default:
		return false;
	}
}

/* Failure lines: a cause (primary) or the echo of one elsewhere (a consequence). */
static int failure_class(const struct npf_xp_parsed *p)
{
	if (p->kind == NPF_XL_PY_EXCEPTION)
		return FC_WEAK;
	if (npf_xp_kind_not_network(p->kind))
		return FC_NOT_NET;
	switch (p->kind) {
	case NPF_XL_OMPI_WRONG_PEER:
	case NPF_XL_IB_ASYNC:
	case NPF_XL_NO_FAMILY:
	case NPF_XL_UNRESOLVED:
	case NPF_XL_NO_IFACE:
	case NPF_XL_NO_SUBNET:
	case NPF_XL_CONNECT_FAIL:
	case NPF_XL_IB_COMPLETION:
	case NPF_XL_IB_MODIFY_QP:
	case NPF_XL_GLOO_CONNECT:
	case NPF_XL_GLOO_NOADDR:
	case NPF_XL_STORE_FAIL:
	case NPF_XL_OMPI_NOPROC:
	case NPF_XL_OMPI_UNREACH:
	case NPF_XL_OMPI_CONNECT:
	case NPF_XL_OMPI_NOIF:
		return FC_CAUSE;
	case NPF_XL_CONNECT_RETRY:
		return p->err != NPF_XE_NONE ? FC_CAUSE : FC_NONE;
	case NPF_XL_WATCHDOG:
	case NPF_XL_REMOTE_CLOSED:
	case NPF_XL_NCCL_ERROR_IN:
	case NPF_XL_LAST_ERROR:
	case NPF_XL_ABORTED:
		return FC_ECHO;
	default:
		return 0;
	}
}

char *npf_xp_proc_label(const struct npf_xp_report *rep, int proc, char *buf, size_t len)
{
	const struct npf_xp_proc *pr;

	if (proc < 0 || (size_t)proc >= rep->n_procs) {
		snprintf(buf, len, "unnamed process");
		return buf;
	}
	pr = &rep->procs[proc];
	if (pr->rank >= 0 && pr->host[0])
		snprintf(buf, len, "rank %d (%s)", pr->rank, pr->host);
	else if (pr->rank >= 0)
		snprintf(buf, len, "rank %d", pr->rank);
	else if (pr->host[0] && pr->pid >= 0)
		snprintf(buf, len, "%s pid %ld", pr->host, pr->pid);
	else if (pr->host[0])
		snprintf(buf, len, "%s", pr->host);
	else /* lines that name no rank, host or pid */
		snprintf(buf, len, "unnamed process");
	return buf;
}

bool npf_xp_proc_empty(const struct npf_xp_proc *pr)
{
	return !pr->has_error && !pr->n_env && !pr->boot_if[0] && !pr->oob_if[0] &&
	       !pr->nccl_version[0] && !pr->net[0] && !pr->init_done && !pr->ib_none;
}

static int new_proc(struct xp_ctx *c, int rank, const char *host, long pid)
{
	struct npf_xp_report *r = c->rep;
	struct npf_xp_proc *pr;

	if (r->n_procs >= NPF_XP_MAX_PROCS)
		return -1;
	if (r->n_procs == c->procs_cap) {
		size_t cap = c->procs_cap ? c->procs_cap * 2 : 16;
		struct npf_xp_proc *np = realloc(r->procs, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		r->procs = np;
		c->procs_cap = cap;
	}
	pr = &r->procs[r->n_procs];
	memset(pr, 0, sizeof(*pr));
	pr->rank = rank;
	pr->pid = pid;
	xp_cpy(pr->host, sizeof(pr->host), host ? host : "");
	pr->first_error_time = -1;
	return (int)r->n_procs++;
}

static uint32_t hash_pid(const char *host, long pid)
{
	uint32_t h = 2166136261u ^ (uint32_t)pid;

	for (; *host; host++)
		h = (h ^ (unsigned char)*host) * 16777619u;
	return h * 2654435761u;
}

static void ht_put(int *t, uint32_t h, int idx)
{
	for (uint32_t k = 0; k < XP_HT_SIZE; k++) {
		int *slot = &t[(h + k) % XP_HT_SIZE];

		if (*slot == idx + 1)
			return;
		if (*slot == 0) {
			*slot = idx + 1;
			return;
		}
	}
}

static void index_proc(struct xp_ctx *c, int i)
{
	const struct npf_xp_proc *pr = &c->rep->procs[i];

	if (pr->host[0] && pr->pid >= 0)
		ht_put(c->by_pid, hash_pid(pr->host, pr->pid), i);
	if (pr->rank >= 0)
		ht_put(c->by_rank, (uint32_t)pr->rank * 2654435761u, i);
}

/* Which process a line belongs to. NCCL lines name host:pid, launcher tags name a rank, and
 * NCCL's "rank N nranks" lines tie the two together. Returns an index, or -1 for "job". */
static int find_proc(struct xp_ctx *c, const struct npf_xp_parsed *p)
{
	struct npf_xp_report *r = c->rep;
	int i;

	if (p->host[0] && p->pid >= 0) {
		uint32_t h = hash_pid(p->host, p->pid);

		for (uint32_t k = 0; k < XP_HT_SIZE && c->by_pid[(h + k) % XP_HT_SIZE]; k++) {
			int idx = c->by_pid[(h + k) % XP_HT_SIZE] - 1;
			struct npf_xp_proc *pr = &r->procs[idx];

			if (pr->pid == p->pid && strcmp(pr->host, p->host) == 0) {
				if (pr->rank < 0 && p->rank >= 0) {
					pr->rank = p->rank;
					index_proc(c, idx);
				}
				return idx;
			}
		}
	}
	if (p->rank >= 0) {
		uint32_t h = (uint32_t)p->rank * 2654435761u;

		for (uint32_t k = 0; k < XP_HT_SIZE && c->by_rank[(h + k) % XP_HT_SIZE]; k++) {
			int idx = c->by_rank[(h + k) % XP_HT_SIZE] - 1;
			struct npf_xp_proc *pr = &r->procs[idx];

			if (pr->rank != p->rank)
				continue;
			if (p->pid >= 0 && pr->pid >= 0 && pr->pid != p->pid)
				continue;
			if (p->host[0] && pr->host[0] && strcmp(pr->host, p->host) != 0)
				continue;
			if (pr->pid < 0 && p->pid >= 0)
				pr->pid = p->pid;
			if (!pr->host[0] && p->host[0])
				xp_cpy(pr->host, sizeof(pr->host), p->host);
			index_proc(c, idx);
			return idx;
		}
	}
	if (p->rank < 0 && p->pid < 0 && !p->host[0])
		goto job;
	if (p->rank < 0 && p->pid < 0) {
		/* Only a host (an Open MPI help box): the host's unnamed process. Rare: a scan. */
		for (size_t k = 0; k < r->n_procs; k++)
			if (r->procs[k].rank < 0 && r->procs[k].pid < 0 &&
			    strcmp(r->procs[k].host, p->host) == 0)
				return (int)k;
	}
	i = new_proc(c, p->rank, p->host, p->pid);
	if (i >= 0) {
		index_proc(c, i);
		return i;
	}
	if (i == -ENOMEM)
		return -2;
job:
	if (c->job < 0) {
		c->job = new_proc(c, -1, "", -1);
		if (c->job == -ENOMEM)
			return c->job = -1, -2;
	}
	return c->job;
}

static int keep_line(struct xp_ctx *c, size_t lineno, const struct npf_xp_parsed *p, int proc)
{
	struct npf_xp_line *l;

	if ((unsigned)p->kind >= NPF_XL__COUNT || c->kept[p->kind] >= kind_cap(p->kind))
		return 0;
	c->kept[p->kind]++;
	if (c->n_lines == c->cap_lines) {
		size_t cap = c->cap_lines ? c->cap_lines * 2 : 64;
		struct npf_xp_line *nl = realloc(c->lines, cap * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		c->lines = nl;
		c->cap_lines = cap;
	}
	l = &c->lines[c->n_lines++];
	l->lineno = lineno;
	l->n_cont = c->cur_cont;
	l->kind = p->kind;
	l->proc = proc;
	l->err = p->err;
	xp_cpy(l->addr, sizeof(l->addr), p->a);
	npf_xp_clean_text(l->text, sizeof(l->text), p->msg, p->msg_len);
	return 0;
}

static void set_env(struct npf_xp_proc *pr, const char *name, const char *value)
{
	for (size_t i = 0; i < pr->n_env; i++)
		if (strcmp(pr->env[i].name, name) == 0) {
			xp_cpy(pr->env[i].value, sizeof(pr->env[i].value), value);
			return;
		}
	if (pr->n_env < NPF_XP_MAX_ENV) {
		xp_cpy(pr->env[pr->n_env].name, sizeof(pr->env[0].name), name);
		xp_cpy(pr->env[pr->n_env].value, sizeof(pr->env[0].value), value);
		pr->n_env++;
	}
}

static void apply(struct xp_ctx *c, struct npf_xp_proc *pr, const struct npf_xp_parsed *p,
		  size_t lineno)
{
	int fc = failure_class(p);

	switch (p->kind) {
	case NPF_XL_NCCL_VERSION:
		xp_cpy(pr->nccl_version, sizeof(pr->nccl_version), p->a);
		break;
	case NPF_XL_ENV:
		if (p->a[0])
			set_env(pr, p->a, p->b);
		break;
	case NPF_XL_BOOTSTRAP:
		if (!pr->boot_if[0] || !pr->boot_addr[0]) {
			xp_cpy(pr->boot_if, sizeof(pr->boot_if), p->a);
			xp_cpy(pr->boot_addr, sizeof(pr->boot_addr), p->b);
		}
		break;
	case NPF_XL_NET_SOCKET:
		snprintf(pr->net, sizeof(pr->net), "Socket");
		npf_xp_clean_text(pr->net_devs, sizeof(pr->net_devs), p->msg, p->msg_len);
		break;
	case NPF_XL_NET_IB:
		snprintf(pr->net, sizeof(pr->net), "IB");
		npf_xp_clean_text(pr->net_devs, sizeof(pr->net_devs), p->msg, p->msg_len);
		xp_cpy(pr->oob_if, sizeof(pr->oob_if), p->a);
		xp_cpy(pr->oob_addr, sizeof(pr->oob_addr), p->b);
		break;
	case NPF_XL_IB_NONE:
		pr->ib_none = true;
		break;
	case NPF_XL_USING_NET:
		xp_cpy(pr->net, sizeof(pr->net), p->a);
		break;
	case NPF_XL_INIT_DONE:
		pr->init_done = true;
		break;
	case NPF_XL_CHANNEL:
		pr->channels = true;
		break;
	default:
		break;
	}
	for (size_t i = 0; i < pr->n_env; i++) /* scrub values for printing */
		for (char *v = pr->env[i].value; *v; v++)
			if ((unsigned char)*v < ' ')
				*v = '?';
	if (!fc)
		return;
	pr->n_errors++;
	if (xp_is_connect_kind(p->kind) && !pr->peer_addr[0])
		xp_cpy(pr->peer_addr, sizeof(pr->peer_addr), p->a);
	/* The first failure, but a cause beats an earlier consequence, and a known cause an
	 * earlier exception no row knows (the traceback that a network failure ends in). */
	if (!pr->has_error || (fc >= FC_WEAK && !pr->primary) ||
	    (fc > FC_WEAK && pr->first_error.kind == NPF_XL_PY_EXCEPTION)) {
		pr->has_error = true;
		pr->primary = fc >= FC_WEAK;
		pr->first_error.lineno = lineno;
		pr->first_error.n_cont = c->cur_cont;
		pr->first_error.kind = p->kind;
		pr->first_error.proc = (int)(pr - c->rep->procs);
		npf_xp_clean_text(pr->first_error.text, sizeof(pr->first_error.text), p->msg,
				  p->msg_len);
		pr->first_error_time = p->time;
	}
}

/* Applies a kept line to its process (the line's own fields are re-read from its text). */
static void apply_kept(struct xp_ctx *c, const struct npf_xp_line *l)
{
	struct npf_xp_parsed again;

	if (l->proc < 0)
		return;
	npf_xp_parse_line(l->text, strlen(l->text), &again);
	again.kind = l->kind;
	again.err = l->err;
	xp_cpy(again.a, sizeof(again.a), l->addr);
	c->cur_cont = l->n_cont;
	apply(c, &c->rep->procs[l->proc], &again, l->lineno);
	c->cur_cont = 0;
}

/* A help box whose host never came (or came too late) is charged to "job". */
static int flush_pending(struct xp_ctx *c, size_t lineno)
{
	if (!c->pending || (lineno && lineno - c->pending_lineno <= 12))
		return 0;
	apply_kept(c, &c->lines[c->pending - 1]);
	c->pending = 0;
	return 0;
}

/* A record, already parsed into p (its message points into the record's text). */
int xp_feed_parsed(struct xp_ctx *c, struct npf_xp_parsed *pp, size_t lineno)
{
	struct npf_xp_parsed p = *pp;
	int proc;

	if (p.kind == NPF_XL_NONE)
		return 0;
	c->rep->n_recognised++;
	if (p.time >= 0)
		c->rep->has_times = true;
	if (p.kind != NPF_XL_OMPI_HOST && p.rank < 0 && p.pid < 0 && !p.host[0] && c->box_host[0] &&
	    lineno <= c->box_until)
		xp_cpy(p.host, sizeof(p.host),
		       c->box_host); /* "Message: connect() to ..." in the box */
	if (p.kind == NPF_XL_HOSTLIST) {
		if (!c->rep->hostlist[0])
			xp_cpy(c->rep->hostlist, sizeof(c->rep->hostlist), p.a);
		return 0;
	}
	if (p.kind == NPF_XL_OMPI_HOST) {
		xp_cpy(c->box_host, sizeof(c->box_host), p.host);
		c->box_until = lineno + 8;
		/* "Local host: node1" inside a help box names the box's process: the box's first
		 * line (within a dozen lines) goes to that host instead of "job". */
		if (c->pending && lineno - c->pending_lineno <= 12 && p.host[0]) {
			struct npf_xp_line *l = &c->lines[c->pending - 1];
			struct npf_xp_parsed q;
			int np;

			memset(&q, 0, sizeof(q));
			q.rank = -1;
			q.pid = -1;
			xp_cpy(q.host, sizeof(q.host), p.host);
			np = find_proc(c, &q);
			if (np == -2)
				return -ENOMEM;
			l->proc = np;
			c->pending = 0;
			apply_kept(c, l);
		}
		return 0;
	}
	if (flush_pending(c, lineno) < 0)
		return -ENOMEM;
	proc = find_proc(c, &p);
	if (proc == -2)
		return -ENOMEM;
	if (keep_line(c, lineno, &p, proc) < 0)
		return -ENOMEM;
	if ((p.kind == NPF_XL_OMPI_NOPROC || p.kind == NPF_XL_OMPI_UNREACH ||
	     p.kind == NPF_XL_OMPI_NOIF || p.kind == NPF_XL_OMPI_CONNECT) &&
	    proc == c->job && c->n_lines && c->lines[c->n_lines - 1].lineno == lineno) {
		/* Wait for the box's "Local host:" line before charging "job". */
		if (c->pending)
			apply_kept(c, &c->lines[c->pending - 1]);
		c->pending = c->n_lines;
		c->pending_lineno = lineno;
		return 0;
	}
	if (proc >= 0)
		apply(c, &c->rep->procs[proc], &p, lineno);
	return 0;
}

/* The input ended: a help box still waiting for its host is charged to "job". */
void xp_flush_box(struct xp_ctx *c)
{
	c->pending_lineno = 0;
	if (c->pending)
		apply_kept(c, &c->lines[c->pending - 1]);
}

/* The story: the first process whose failure is a cause (by time when every candidate has a
 * timestamp, else by line), and how many failed only as a consequence. A Python exception no
 * row knows counts as a cause only when no process shows a known one. */
void xp_story(struct xp_ctx *c)
{
	struct npf_xp_report *r = c->rep;
	bool all_times = true;

	r->first_proc = -1;
	for (size_t i = 0; i < r->n_procs; i++) {
		if (!r->procs[i].has_error)
			continue;
		if (r->procs[i].primary) {
			r->n_primary++;
			if (r->procs[i].first_error_time < 0)
				all_times = false;
		} else {
			r->n_secondary++;
		}
	}
	for (int pass = 0; pass < 6 && r->first_proc < 0; pass++)
		for (size_t i = 0; i < r->n_procs; i++) {
			const struct npf_xp_proc *pr = &r->procs[i], *b;
			int level = !pr->primary				  ? 2
				    : pr->first_error.kind == NPF_XL_PY_EXCEPTION ? 1
										  : 0;

			/* Passes 0-2: known causes, other exceptions, consequences of named
			 * processes; 3-5: the same for lines that name nobody ("job"). */
			if (!pr->has_error || level != pass % 3 ||
			    ((int)i == c->job) != (pass >= 3))
				continue;
			if (r->first_proc < 0) {
				r->first_proc = (int)i;
				continue;
			}
			b = &r->procs[r->first_proc];
			if (all_times && r->has_times
				? pr->first_error_time < b->first_error_time
				: pr->first_error.lineno < b->first_error.lineno)
				r->first_proc = (int)i;
		}
}
