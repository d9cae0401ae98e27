// SPDX-License-Identifier: MIT
/* `explain`: from classified lines (lib/logparse.c) to a per-process table, the job's story
 * (who failed first, who failed only because another did) and one root cause chosen by the
 * rule table below. Every rule names its evidence lines; with none, the answer is "unknown". */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

#define HT_SIZE 8192 /* > 2 * NPF_XP_MAX_PROCS */

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

/* Bounded copy of text that is already clean UTF-8: cuts before a character that does not fit. */
static void cpy(char *dst, size_t len, const char *src)
{
	npf_xp_clean_text(dst, len, src ? src : "", src ? strlen(src) : 0);
}

/* snprintf() into a fixed buffer may cut inside a UTF-8 character: mend the end. */
static void mend(char *s, size_t len)
{
	char tmp[512];

	npf_xp_clean_text(tmp, sizeof(tmp) < len ? sizeof(tmp) : len, s, strlen(s));
	memcpy(s, tmp, strlen(tmp) + 1);
}

struct ctx {
	struct npf_xp_report *rep;
	struct npf_xp_line *lines; /* recognised lines, in input order */
	size_t n_lines, cap_lines;
	size_t procs_cap;
	int job;	/* the "job" pseudo-process for lines that name nobody, -1 none yet */
	size_t pending; /* index+1 of an Open MPI help-box line waiting for its host, 0 none */
	size_t pending_lineno;
	char box_host[64]; /* the "Local host:" of the Open MPI help box being read */
	size_t box_until;  /* its last line number */
	/* Lookups by host:pid and by rank (open addressing, index+1, 0 = empty): a log of 4096
	 * ranks interleaved must not cost a scan of every process per line. */
	int by_pid[HT_SIZE], by_rank[HT_SIZE];
	size_t kept[NPF_XL__COUNT]; /* lines kept per kind */
	unsigned cur_cont;	    /* continuation lines of the record being fed */
	/* Records being assembled (a line and the lines that continue it), one per writer. */
	struct pend {
		bool used, last_error;
		uint32_t stream;
		size_t lineno, len;
		unsigned n_cont;
		char buf[4096];
	} pend[4];
};

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

static int new_proc(struct ctx *c, int rank, const char *host, long pid)
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
	cpy(pr->host, sizeof(pr->host), host ? host : "");
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
	for (uint32_t k = 0; k < HT_SIZE; k++) {
		int *slot = &t[(h + k) % HT_SIZE];

		if (*slot == idx + 1)
			return;
		if (*slot == 0) {
			*slot = idx + 1;
			return;
		}
	}
}

static void index_proc(struct ctx *c, int i)
{
	const struct npf_xp_proc *pr = &c->rep->procs[i];

	if (pr->host[0] && pr->pid >= 0)
		ht_put(c->by_pid, hash_pid(pr->host, pr->pid), i);
	if (pr->rank >= 0)
		ht_put(c->by_rank, (uint32_t)pr->rank * 2654435761u, i);
}

/* Which process a line belongs to. NCCL lines name host:pid, launcher tags name a rank, and
 * NCCL's "rank N nranks" lines tie the two together. Returns an index, or -1 for "job". */
static int find_proc(struct ctx *c, const struct npf_xp_parsed *p)
{
	struct npf_xp_report *r = c->rep;
	int i;

	if (p->host[0] && p->pid >= 0) {
		uint32_t h = hash_pid(p->host, p->pid);

		for (uint32_t k = 0; k < HT_SIZE && c->by_pid[(h + k) % HT_SIZE]; k++) {
			int idx = c->by_pid[(h + k) % HT_SIZE] - 1;
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

		for (uint32_t k = 0; k < HT_SIZE && c->by_rank[(h + k) % HT_SIZE]; k++) {
			int idx = c->by_rank[(h + k) % HT_SIZE] - 1;
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
				cpy(pr->host, sizeof(pr->host), p->host);
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

static int keep_line(struct ctx *c, size_t lineno, const struct npf_xp_parsed *p, int proc)
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
	cpy(l->addr, sizeof(l->addr), p->a);
	npf_xp_clean_text(l->text, sizeof(l->text), p->msg, p->msg_len);
	return 0;
}

static void set_env(struct npf_xp_proc *pr, const char *name, const char *value)
{
	for (size_t i = 0; i < pr->n_env; i++)
		if (strcmp(pr->env[i].name, name) == 0) {
			cpy(pr->env[i].value, sizeof(pr->env[i].value), value);
			return;
		}
	if (pr->n_env < NPF_XP_MAX_ENV) {
		cpy(pr->env[pr->n_env].name, sizeof(pr->env[0].name), name);
		cpy(pr->env[pr->n_env].value, sizeof(pr->env[0].value), value);
		pr->n_env++;
	}
}

static bool is_connect_kind(enum npf_xp_kind k);

static void apply(struct ctx *c, struct npf_xp_proc *pr, const struct npf_xp_parsed *p,
		  size_t lineno)
{
	int fc = failure_class(p);

	switch (p->kind) {
	case NPF_XL_NCCL_VERSION:
		cpy(pr->nccl_version, sizeof(pr->nccl_version), p->a);
		break;
	case NPF_XL_ENV:
		if (p->a[0])
			set_env(pr, p->a, p->b);
		break;
	case NPF_XL_BOOTSTRAP:
		if (!pr->boot_if[0] || !pr->boot_addr[0]) {
			cpy(pr->boot_if, sizeof(pr->boot_if), p->a);
			cpy(pr->boot_addr, sizeof(pr->boot_addr), p->b);
		}
		break;
	case NPF_XL_NET_SOCKET:
		snprintf(pr->net, sizeof(pr->net), "Socket");
		npf_xp_clean_text(pr->net_devs, sizeof(pr->net_devs), p->msg, p->msg_len);
		break;
	case NPF_XL_NET_IB:
		snprintf(pr->net, sizeof(pr->net), "IB");
		npf_xp_clean_text(pr->net_devs, sizeof(pr->net_devs), p->msg, p->msg_len);
		cpy(pr->oob_if, sizeof(pr->oob_if), p->a);
		cpy(pr->oob_addr, sizeof(pr->oob_addr), p->b);
		break;
	case NPF_XL_IB_NONE:
		pr->ib_none = true;
		break;
	case NPF_XL_USING_NET:
		cpy(pr->net, sizeof(pr->net), p->a);
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
	if (is_connect_kind(p->kind) && !pr->peer_addr[0])
		cpy(pr->peer_addr, sizeof(pr->peer_addr), p->a);
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
static void apply_kept(struct ctx *c, const struct npf_xp_line *l)
{
	struct npf_xp_parsed again;

	if (l->proc < 0)
		return;
	npf_xp_parse_line(l->text, strlen(l->text), &again);
	again.kind = l->kind;
	again.err = l->err;
	cpy(again.a, sizeof(again.a), l->addr);
	c->cur_cont = l->n_cont;
	apply(c, &c->rep->procs[l->proc], &again, l->lineno);
	c->cur_cont = 0;
}

/* A help box whose host never came (or came too late) is charged to "job". */
static int flush_pending(struct ctx *c, size_t lineno)
{
	if (!c->pending || (lineno && lineno - c->pending_lineno <= 12))
		return 0;
	apply_kept(c, &c->lines[c->pending - 1]);
	c->pending = 0;
	return 0;
}

/* A record, already parsed into p (its message points into the record's text). */
static int feed_parsed(struct ctx *c, struct npf_xp_parsed *pp, size_t lineno)
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
		cpy(p.host, sizeof(p.host),
		    c->box_host); /* "Message: connect() to ..." in the box */
	if (p.kind == NPF_XL_HOSTLIST) {
		if (!c->rep->hostlist[0])
			cpy(c->rep->hostlist, sizeof(c->rep->hostlist), p.a);
		return 0;
	}
	if (p.kind == NPF_XL_OMPI_HOST) {
		cpy(c->box_host, sizeof(c->box_host), p.host);
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
			cpy(q.host, sizeof(q.host), p.host);
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

/* ---- rules: pure tests over the assembled evidence ---- */

/* What the rules read: the per-process table and the kept lines, never written while the
 * rules run (the const is the proof). */
struct xp_evidence {
	const struct npf_xp_report *rep;
	const struct npf_xp_line *lines;
	size_t n_lines;
	int job; /* the "job" pseudo-process, -1 none */
};

/* What a rule found: the lines that show it, what it is about (borrowed from the evidence)
 * and one sentence. fix is "" when the row's fix applies as written. */
struct xp_finding {
	const struct npf_xp_line *lines[8];
	size_t n_lines;
	const char *ifname, *addr, *host;
	char summary[sizeof(((struct npf_xp_report *)0)->summary)];
	char fix[sizeof(((struct npf_xp_report *)0)->fix_hint)];
};

/* One root cause: a pure test over the evidence and what to do about it. */
struct xp_rule {
	enum npf_xp_cause cause;
	const char *name; /* stable (docs/explain.md) */
	int tier;
	bool (*test)(const struct xp_evidence *e, struct xp_finding *f);
	uint64_t evidence; /* the kinds of line the test cites, one bit per kind */
	const char *fix;
	unsigned compat; /* causes that commonly come with this one (bit per cause) */
};

/* Cites a line (NULL: nothing to cite). */
static void cite(struct xp_finding *f, const struct npf_xp_line *l)
{
	if (l && f->n_lines < sizeof(f->lines) / sizeof(f->lines[0]))
		f->lines[f->n_lines++] = l;
}

static void about(struct xp_finding *f, const char *ifname, const char *addr, const char *host)
{
	f->ifname = ifname;
	f->addr = addr;
	f->host = host;
}

/* The host of a process, NULL for a line that names none. */
static const char *host_of(const struct xp_evidence *e, int proc)
{
	return proc >= 0 ? e->rep->procs[proc].host : NULL;
}

static bool is_loopback_addr(const char *a)
{
	return strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0;
}

static bool is_link_local_addr(const char *a)
{
	return strncmp(a, "169.254.", 8) == 0 || strncasecmp(a, "fe80:", 5) == 0;
}

/* Addresses that bridges hold with the same value on every node (Docker's docker0 and its
 * user bridges, libvirt's virbr0, Podman's CNI bridge): a connect to one reaches the
 * connecting node itself. One row per default. */
static const char *const bridge_defaults[] = {
    "172.17.0.1", "172.18.0.1", "172.19.0.1", "172.20.0.1",    "172.21.0.1", "172.22.0.1",
    "172.23.0.1", "172.24.0.1", "172.25.0.1", "172.26.0.1",    "172.27.0.1", "172.28.0.1",
    "172.29.0.1", "172.30.0.1", "172.31.0.1", "192.168.122.1", "10.88.0.1",
};

/* The address without an IPv4-mapped prefix ("::ffff:10.0.0.1" -> "10.0.0.1"). */
static const char *unmapped(const char *a)
{
	return strncasecmp(a, "::ffff:", 7) == 0 && strchr(a + 7, '.') ? a + 7 : a;
}

/* An address of Docker's default bridge network (172.17.0.0/16): a container's own address,
 * which no other node can reach without host networking. */
static bool is_docker_bridge_net(const char *a)
{
	return strncmp(unmapped(a), "172.17.", 7) == 0;
}

static bool is_bridge_default(const char *a)
{
	a = unmapped(a);
	for (size_t i = 0; i < sizeof(bridge_defaults) / sizeof(bridge_defaults[0]); i++)
		if (strcmp(a, bridge_defaults[i]) == 0)
			return true;
	return false;
}

/* An address no host has: unspecified, a netmask, a network or broadcast address, multicast.
 * Returns what it is, or NULL for a plausible unicast address (or a name). */
static const char *impossible_addr(const char *a)
{
	unsigned o[4];
	char tail;

	a = unmapped(a);
	if (strcmp(a, "0.0.0.0") == 0 || strcmp(a, "::") == 0)
		return "the unspecified address";
	if (sscanf(a, "%u.%u.%u.%u%c", &o[0], &o[1], &o[2], &o[3], &tail) != 4 || o[0] > 255 ||
	    o[1] > 255 || o[2] > 255 || o[3] > 255)
		return strncasecmp(a, "ff", 2) == 0 && strchr(a, ':') ? "a multicast address"
								      : NULL;
	if (o[0] == 255)
		return "a netmask";
	if (o[0] >= 224 && o[0] <= 239)
		return "a multicast address";
	if (o[0] == 0)
		return "the unspecified address";
	if (o[3] == 0)
		return "a network address";
	if (o[3] == 255)
		return "a broadcast address";
	return NULL;
}

static bool looks_ipv4(const char *a)
{
	return strchr(unmapped(a), '.') && !strchr(unmapped(a), ':');
}

/* s, or dflt when s is NULL or "". */
static const char *or_else(const char *s, const char *dflt)
{
	return s && s[0] ? s : dflt;
}

/* The first kept line of a kind (for proc, or any when proc < -1) whose text holds needle. */
static const struct npf_xp_line *line_of(const struct xp_evidence *e, enum npf_xp_kind k, int proc,
					 const char *needle)
{
	for (size_t i = 0; i < e->n_lines; i++) {
		const struct npf_xp_line *l = &e->lines[i];

		if (l->kind != k || (proc >= -1 && l->proc != proc))
			continue;
		if (needle && !strstr(l->text, needle))
			continue;
		return l;
	}
	return NULL;
}

static const char *env_of(const struct npf_xp_proc *pr, const char *name)
{
	for (size_t i = 0; i < pr->n_env; i++)
		if (strcmp(pr->env[i].name, name) == 0)
			return pr->env[i].value;
	return NULL;
}

/* Any process's value of an NCCL variable, and which process. */
static const char *env_any(const struct xp_evidence *e, const char *name, int *who)
{
	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const char *v = env_of(&e->rep->procs[i], name);

		if (v) {
			if (who)
				*who = (int)i;
			return v;
		}
	}
	return NULL;
}

/* The bound (bootstrap, else OOB) interface of a process. */
static void bound(const struct npf_xp_proc *pr, const char **ifn, const char **addr,
		  enum npf_xp_kind *kind)
{
	if (pr->boot_if[0] && pr->boot_addr[0]) {
		*ifn = pr->boot_if;
		*addr = pr->boot_addr;
		*kind = NPF_XL_BOOTSTRAP;
	} else if (pr->oob_if[0]) {
		*ifn = pr->oob_if;
		*addr = pr->oob_addr;
		*kind = NPF_XL_NET_IB;
	} else {
		*ifn = *addr = NULL;
		*kind = NPF_XL_NONE;
	}
}

/* The first failing process's first failure (story()), as evidence. */
static const struct npf_xp_line *first_failure_line(const struct xp_evidence *e)
{
	const struct npf_xp_report *r = e->rep;

	if (r->first_proc < 0 || !r->procs[r->first_proc].has_error)
		return NULL;
	return &r->procs[r->first_proc].first_error;
}

static bool any_failure(const struct npf_xp_report *r)
{
	for (size_t i = 0; i < r->n_procs; i++)
		if (r->procs[i].has_error)
			return true;
	return false;
}

static bool r_comm_id(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *l = line_of(e, NPF_XL_NO_SUBNET, -2, NULL);
	int who = -1;
	const char *cid = env_any(e, "NCCL_COMM_ID", &who);
	const struct npf_xp_report *r = e->rep;

	if (!l && cid) {
		/* 2.29.2-2.29.7 inverted matchSubnet() (NVIDIA/nccl PR #2047): with NCCL_COMM_ID
		 * the bootstrap binds a non-matching interface, typically lo. */
		for (size_t i = 0; i < r->n_procs && !l; i++)
			if (strncmp(r->procs[i].nccl_version, "2.29.", 5) == 0 &&
			    (strcmp(r->procs[i].boot_if, "lo") == 0 ||
			     is_loopback_addr(r->procs[i].boot_addr)))
				l = line_of(e, NPF_XL_BOOTSTRAP, (int)i, NULL);
		if (l) {
			cite(f, line_of(e, NPF_XL_NCCL_VERSION, l->proc, NULL));
			snprintf(
			    f->summary, sizeof(f->summary),
			    "NCCL_COMM_ID=%s with NCCL %s: its inverted subnet match bound the "
			    "bootstrap to loopback",
			    cid, r->procs[l->proc].nccl_version);
		}
	} else if (l) {
		snprintf(f->summary, sizeof(f->summary),
			 "NCCL_COMM_ID%s%s: no local interface in its subnet on %s", cid ? "=" : "",
			 cid ? cid : "",
			 r->procs[l->proc < 0 ? 0 : l->proc].host[0] ? r->procs[l->proc].host
								     : "one node");
	}
	if (!l)
		return false;
	cite(f, l);
	cite(f, line_of(e, NPF_XL_ENV, -2, "NCCL_COMM_ID"));
	about(f, NULL, cid, host_of(e, l->proc));
	return true;
}

static bool r_gid_forced(const struct xp_evidence *e, struct xp_finding *f)
{
	int who = -1;
	const char *gi = env_any(e, "NCCL_IB_GID_INDEX", &who);
	const struct npf_xp_line *l = line_of(e, NPF_XL_IB_GID_HINT, -2, NULL);

	if (!l)
		l = line_of(e, NPF_XL_IB_MODIFY_QP, -2, NULL);
	if (!l && gi)
		l = line_of(e, NPF_XL_IB_COMPLETION, -2, NULL);
	if (!l || (!gi && l->kind != NPF_XL_IB_GID_HINT))
		return false;
	cite(f, line_of(e, NPF_XL_ENV, -2, "NCCL_IB_GID_INDEX"));
	cite(f, l);
	about(f, NULL, NULL, host_of(e, l->proc));
	if (gi)
		snprintf(f->summary, sizeof(f->summary),
			 "NCCL_IB_GID_INDEX=%s forces one GID index on every RoCE port, and it is "
			 "wrong on at least one",
			 gi);
	else
		snprintf(f->summary, sizeof(f->summary),
			 "NCCL's own hint: the QP setup failed the way a forced wrong "
			 "NCCL_IB_GID_INDEX makes it fail (set in a file such as /etc/nccl.conf?)");
	return true;
}

static bool r_gid(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *l = NULL;

	for (size_t i = 0; i < e->n_lines && !l; i++)
		if (e->lines[i].kind == NPF_XL_IB_COMPLETION &&
		    (strstr(e->lines[i].text, "(12)") || strstr(e->lines[i].text, "status=12") ||
		     strstr(e->lines[i].text, "error 12") || strstr(e->lines[i].text, "RETRY_EXC")))
			l = &e->lines[i];
	if (!l)
		return false;
	cite(f, l);
	if (l->proc >= 0)
		cite(f, line_of(e, NPF_XL_NET_IB, l->proc, NULL));
	about(f, NULL, NULL, host_of(e, l->proc));
	snprintf(f->summary, sizeof(f->summary),
		 "RoCE completion status 12 (retry exceeded): the TCP exchange worked but the RDMA "
		 "path did not%s",
		 strstr(l->text, "fe80:") ? ", and the GID used is link-local (fe80::)"
					  : " (a link-local or RoCE v1 GID, VLAN/PFC or routing)");
	return true;
}

static bool r_gloo_hostname(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *l = line_of(e, NPF_XL_GLOO_LOOPBACK, -2, NULL);
	const struct npf_xp_line *g = NULL;

	for (size_t i = 0; i < e->n_lines && !g; i++)
		if (e->lines[i].kind == NPF_XL_GLOO_CONNECT &&
		    (strstr(e->lines[i].text, "[127.") || strstr(e->lines[i].text, " 127.")))
			g = &e->lines[i];
	if (!l && !g)
		return false;
	cite(f, l);
	cite(f, g);
	if (!g)
		cite(f, line_of(e, NPF_XL_GLOO_CONNECT, -2, NULL));
	{
		const struct npf_xp_line *w = l ? l : g;

		about(f, NULL, g && strstr(g->text, "127.0.1.1") ? "127.0.1.1" : "127.0.0.1",
		      w ? host_of(e, w->proc) : NULL);
	}
	snprintf(f->summary, sizeof(f->summary),
		 "Gloo bound loopback: the hostname resolves to %s (or not at all), so peers "
		 "connect to themselves",
		 f->addr);
	return true;
}

static bool r_names_differ(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	const struct npf_xp_line *l = line_of(e, NPF_XL_NO_IFACE, -2, NULL);
	const char *var = "NCCL_SOCKET_IFNAME", *val;
	int who = -1;

	if (!l) {
		l = line_of(e, NPF_XL_GLOO_NOADDR, -2, NULL);
		var = "GLOO_SOCKET_IFNAME";
	}
	if (!l) {
		l = line_of(e, NPF_XL_OMPI_NOIF, -2, NULL);
		var = "OMPI_MCA_btl_tcp_if_include";
	}
	if (!l)
		return false;
	val = env_any(e, "NCCL_SOCKET_IFNAME", &who);
	cite(f, l);
	cite(f, line_of(e, NPF_XL_ENV, -2, "NCCL_SOCKET_IFNAME"));
	/* A rank that did find the name shows the names differ (not a typo everywhere). */
	for (size_t i = 0; i < r->n_procs; i++)
		if ((int)i != l->proc && r->procs[i].boot_if[0]) {
			cite(f, line_of(e, NPF_XL_BOOTSTRAP, (int)i, NULL));
			break;
		}
	about(f, NULL, NULL, host_of(e, l->proc));
	if (val && strcmp(var, "NCCL_SOCKET_IFNAME") == 0)
		snprintf(f->summary, sizeof(f->summary),
			 "NCCL_SOCKET_IFNAME=%s names no interface on %s: interface names differ "
			 "between nodes",
			 val, or_else(f->host, "some node"));
	else
		snprintf(f->summary, sizeof(f->summary),
			 "the interface %s names does not exist on %s: interface names differ "
			 "between nodes",
			 var, or_else(f->host, "some node"));
	return true;
}

/* A process bound an address pred accepts (or the interface ifname_eq): what it means. */
static bool bound_range(const struct xp_evidence *e, struct xp_finding *f,
			bool (*pred)(const char *), const char *ifname_eq, const char *what)
{
	const struct npf_xp_report *r = e->rep;

	for (size_t i = 0; i < r->n_procs; i++) {
		const char *ifn, *addr;
		enum npf_xp_kind k;

		bound(&r->procs[i], &ifn, &addr, &k);
		if (!ifn || !((ifname_eq && strcmp(ifn, ifname_eq) == 0) || pred(addr)))
			continue;
		cite(f, line_of(e, k, (int)i, NULL));
		cite(f, line_of(e, NPF_XL_ENV, (int)i, "NCCL_SOCKET_IFNAME"));
		cite(f, first_failure_line(e));
		about(f, ifn, addr, r->procs[i].host);
		snprintf(f->summary, sizeof(f->summary), "%s bound %s %s: %s",
			 r->procs[i].host[0] ? r->procs[i].host : "a rank", ifn, addr, what);
		return true;
	}
	return false;
}

static bool r_loopback(const struct xp_evidence *e, struct xp_finding *f)
{
	return bound_range(e, f, is_loopback_addr, "lo", "loopback reaches only the node itself");
}

/* True when the log shows an IPv4 address anywhere (bound, OOB or a peer). */
static bool log_has_ipv4(const struct xp_evidence *e)
{
	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const struct npf_xp_proc *pr = &e->rep->procs[i];

		if (looks_ipv4(pr->boot_addr) || looks_ipv4(pr->oob_addr) ||
		    looks_ipv4(pr->peer_addr))
			return true;
	}
	return false;
}

/* True when some process bound a global IPv6 address: the cluster routes IPv6. */
static bool log_has_global_ipv6(const struct xp_evidence *e)
{
	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const char *a[] = {e->rep->procs[i].boot_addr, e->rep->procs[i].oob_addr};

		for (size_t k = 0; k < 2; k++)
			if (strchr(a[k], ':') && !looks_ipv4(a[k]) && !is_link_local_addr(a[k]) &&
			    strcmp(a[k], "::1") != 0)
				return true;
	}
	return false;
}

static bool r_link_local(const struct xp_evidence *e, struct xp_finding *f)
{
	/* NCCL_SOCKET_FAMILY=AF_INET is no fix on an IPv6-only cluster: global IPv6 bound
	 * somewhere and no IPv4 anywhere in the log. */
	if (!bound_range(e, f, is_link_local_addr, NULL,
			 "a link-local address is not routed between nodes"))
		return false;
	if (!log_has_ipv4(e) && log_has_global_ipv6(e))
		snprintf(f->fix, sizeof(f->fix),
			 "name the interface with the global IPv6 address on every node "
			 "(NCCL_SOCKET_IFNAME==<if>); the log shows no IPv4 to fall back to");
	return true;
}

static bool is_connect_kind(enum npf_xp_kind k)
{
	return k == NPF_XL_CONNECT_FAIL || k == NPF_XL_CONNECT_RETRY || k == NPF_XL_OMPI_CONNECT ||
	       k == NPF_XL_GLOO_CONNECT || k == NPF_XL_STORE_FAIL;
}

static bool r_same_address(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	const struct npf_xp_line *l;

	for (size_t i = 0; i < r->n_procs; i++) {
		const char *ai, *ii;
		enum npf_xp_kind ki;

		bound(&r->procs[i], &ii, &ai, &ki);
		if (!ai || !ai[0] || !r->procs[i].host[0])
			continue;
		for (size_t j = i + 1; j < r->n_procs; j++) {
			const char *aj, *ij;
			enum npf_xp_kind kj;

			bound(&r->procs[j], &ij, &aj, &kj);
			if (!aj || strcmp(ai, aj) != 0 || !r->procs[j].host[0] ||
			    strcmp(r->procs[i].host, r->procs[j].host) == 0)
				continue;
			cite(f, line_of(e, ki, (int)i, NULL));
			cite(f, line_of(e, kj, (int)j, NULL));
			cite(f, first_failure_line(e));
			about(f, ii, ai, NULL);
			snprintf(
			    f->summary, sizeof(f->summary),
			    "%s and %s both bound %s %s: the same address on several nodes, so a "
			    "connect to it reaches the connecting node itself",
			    r->procs[i].host, r->procs[j].host, ii, ai);
			snprintf(f->fix, sizeof(f->fix),
				 "exclude %s: name the fabric interface (NCCL_SOCKET_IFNAME==<if>; "
				 "Open MPI: the fabric CIDR in OMPI_MCA_btl_tcp_if_include)",
				 ii);
			return true;
		}
	}
	/* A connect to an address a bridge holds on every node (docker0's 172.17.0.1): it went
	 * to the connecting node's own bridge, where nothing of the job listens. */
	for (size_t i = 0; i < e->n_lines; i++) {
		const struct npf_xp_line *k = &e->lines[i];

		if (!is_connect_kind(k->kind) || !is_bridge_default(k->addr))
			continue;
		cite(f, k);
		about(f, NULL, unmapped(k->addr), NULL);
		snprintf(f->summary, sizeof(f->summary),
			 "connects to %s failed: that is a bridge's default address (docker0, "
			 "virbr0), the same on every node, so the connect reached the connecting "
			 "node's own bridge",
			 unmapped(k->addr));
		return true;
	}
	/* Open MPI: a process accepted a connection from "another Open MPI process" it does not
	 * know, or the process that answered a connect is not the one expected: a peer
	 * connected to an address that is local to the acceptor's node too (btl_tcp_proc.c
	 * mca_btl_tcp_proc_accept(), btl_tcp_endpoint.c recv_connect_ack(); the bridge
	 * addresses every node has). */
	l = line_of(e, NPF_XL_OMPI_NOPROC, -2, NULL);
	if (!l)
		l = line_of(e, NPF_XL_OMPI_WRONG_PEER, -2, NULL);
	if (!l)
		return false;
	cite(f, l);
	cite(f, line_of(e, NPF_XL_OMPI_CONNECT, -2, NULL));
	about(f, NULL, NULL, NULL);
	snprintf(f->summary, sizeof(f->summary),
		 "Open MPI processes connected to an address their own node also holds (a bridge "
		 "such as docker0 with the same address on every node): the connection reached the "
		 "wrong process");
	snprintf(f->fix, sizeof(f->fix),
		 "restrict the TCP BTL to the fabric: OMPI_MCA_btl_tcp_if_include=<fabric CIDR> "
		 "(a CIDR holds on every node whatever the interface is called)");
	return true;
}

static bool r_bridge(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;

	for (size_t i = 0; i < r->n_procs; i++) {
		const char *ifn, *addr;
		enum npf_xp_kind k;

		bound(&r->procs[i], &ifn, &addr, &k);
		if (!ifn || !npf_xp_bridge_name(ifn))
			continue;
		cite(f, line_of(e, k, (int)i, NULL));
		cite(f, first_failure_line(e));
		about(f, ifn, addr, r->procs[i].host);
		snprintf(f->summary, sizeof(f->summary),
			 "%s bound the container/virtual bridge %s %s, which other nodes cannot "
			 "reach",
			 r->procs[i].host[0] ? r->procs[i].host : "a rank", ifn, addr);
		return true;
	}
	/* Connects to an address of Docker's default bridge network: the ranks run in
	 * containers without host networking and advertise their container addresses. */
	for (size_t i = 0; i < e->n_lines; i++) {
		const struct npf_xp_line *l = &e->lines[i];

		if (!is_connect_kind(l->kind) || !is_docker_bridge_net(l->addr) ||
		    is_bridge_default(l->addr))
			continue;
		cite(f, l);
		about(f, NULL, unmapped(l->addr), NULL);
		snprintf(f->summary, sizeof(f->summary),
			 "connects to %s failed: an address of Docker's default bridge network, a "
			 "container's own address that other nodes cannot reach",
			 unmapped(l->addr));
		snprintf(
		    f->fix, sizeof(f->fix),
		    "run the containers with host networking (docker --network host, "
		    "hostNetwork: true) and name the fabric interface (NCCL_SOCKET_IFNAME==<if>)");
		return true;
	}
	return false;
}

static bool r_prefix(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;

	for (size_t i = 0; i < r->n_procs; i++) {
		const char *v = env_of(&r->procs[i], "NCCL_SOCKET_IFNAME");
		char tok[96], *save = NULL, *t;

		if (!v || v[0] == '^' || v[0] == '=' || !r->procs[i].boot_if[0])
			continue;
		cpy(tok, sizeof(tok), v);
		for (t = strtok_r(tok, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			char *colon = strchr(t, ':');
			size_t n;

			if (colon)
				*colon = '\0';
			n = strlen(t);
			/* matchIf(): without '=' a token matches every name it prefixes
			 * (src/misc/utils.cc); a bound name that is longer than the token was
			 * selected by prefix. */
			if (n && strncmp(r->procs[i].boot_if, t, n) == 0 &&
			    strlen(r->procs[i].boot_if) > n) {
				cite(f, line_of(e, NPF_XL_ENV, (int)i, "NCCL_SOCKET_IFNAME"));
				cite(f, line_of(e, NPF_XL_BOOTSTRAP, (int)i, NULL));
				cite(f, line_of(e, NPF_XL_NET_SOCKET, (int)i, NULL));
				about(f, r->procs[i].boot_if, r->procs[i].boot_addr,
				      r->procs[i].host);
				snprintf(f->summary, sizeof(f->summary),
					 "NCCL_SOCKET_IFNAME=%s is a prefix: %s bound %s %s", v,
					 r->procs[i].host[0] ? r->procs[i].host : "a rank",
					 r->procs[i].boot_if, r->procs[i].boot_addr);
				snprintf(f->fix, sizeof(f->fix),
					 "write the exact name with '=': NCCL_SOCKET_IFNAME==%s",
					 t);
				return true;
			}
		}
	}
	return false;
}

/* The host whose bound address is addr (the connect target), "" none. */
static const char *host_of_addr(const struct xp_evidence *e, const char *addr)
{
	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const struct npf_xp_proc *pr = &e->rep->procs[i];

		if (addr[0] && pr->host[0] &&
		    (strcmp(pr->boot_addr, addr) == 0 || strcmp(pr->oob_addr, addr) == 0))
			return pr->host;
	}
	return "";
}

/* The address was bound by a bridge or by processes on two hosts. */
static bool bad_target(const struct xp_evidence *e, const char *addr)
{
	const char *host = NULL;

	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const struct npf_xp_proc *pr = &e->rep->procs[i];

		if (!addr[0] || strcmp(pr->boot_addr, addr) != 0)
			continue;
		if (npf_xp_bridge_name(pr->boot_if))
			return true;
		if (host && pr->host[0] && strcmp(host, pr->host) != 0)
			return true;
		if (pr->host[0])
			host = pr->host;
	}
	return false;
}

/* A peer a firewall can stand in front of: a unicast address of another host. A connect to
 * loopback, link-local, a bridge's default or an address bound on several hosts failed
 * because of what was bound there (the rules above); one to a netmask or a network address
 * because the address is wrong (bad-address). */
static bool plausible_peer(const struct xp_evidence *e, const char *a)
{
	return a[0] && !is_loopback_addr(unmapped(a)) && !is_link_local_addr(a) &&
	       !is_bridge_default(a) && !is_docker_bridge_net(a) && !impossible_addr(a) &&
	       strcmp(a, "localhost") != 0 && !bad_target(e, a);
}

/* A connect line that names no peer (NCCL 2.24-2.26 "connect returned ..."): its peer is one
 * of the addresses the processes bound, and every one of them must be plausible. */
static bool all_bound_plausible(const struct xp_evidence *e)
{
	size_t n = 0;

	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const char *ifn, *addr;
		enum npf_xp_kind k;

		bound(&e->rep->procs[i], &ifn, &addr, &k);
		if (!addr || !addr[0])
			continue;
		if (!plausible_peer(e, addr) || npf_xp_bridge_name(ifn))
			return false;
		n++;
	}
	return n >= 1;
}

static bool r_connect(const struct xp_evidence *e, struct xp_finding *f, bool refused)
{
	const struct npf_xp_report *r = e->rep;

	for (size_t i = 0; i < e->n_lines; i++) {
		const struct npf_xp_line *l = &e->lines[i];
		const char *h;

		if (!is_connect_kind(l->kind))
			continue;
		if (refused ? (l->err != NPF_XE_REFUSED && l->err != NPF_XE_NOROUTE)
			    : l->err != NPF_XE_TIMEOUT)
			continue;
		/* A connect to loopback, link-local or a bridge address failed because of what
		 * was bound there (the rules above), not because of a firewall on the path. */
		if (l->addr[0] ? !plausible_peer(e, l->addr) : !all_bound_plausible(e))
			continue;
		cite(f, l);
		h = host_of_addr(e, l->addr);
		if (h[0]) {
			for (size_t k = 0; k < r->n_procs; k++)
				if (strcmp(r->procs[k].host, h) == 0 &&
				    strcmp(r->procs[k].boot_addr, l->addr) == 0) {
					cite(f, line_of(e, NPF_XL_BOOTSTRAP, (int)k, NULL));
					break;
				}
		}
		about(f, NULL, l->addr, h);
		snprintf(f->summary, sizeof(f->summary),
			 refused ? "connections to %s%s%s%s were %s: a firewall rejects them (or "
				   "nothing listens there)"
				 : "connections to %s%s%s%s timed out: packets are dropped on the "
				   "way (a silent firewall or a missing path)",
			 l->addr[0] ? l->addr : "a peer", h[0] ? " (" : "", h, h[0] ? ")" : "",
			 l->err == NPF_XE_NOROUTE ? "rejected (no route to host)" : "refused");
		return true;
	}
	return false;
}

static bool r_refused(const struct xp_evidence *e, struct xp_finding *f)
{
	return r_connect(e, f, true);
}

static bool r_silent(const struct xp_evidence *e, struct xp_finding *f)
{
	return r_connect(e, f, false);
}

static bool r_mtu(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	const struct npf_xp_line *w = line_of(e, NPF_XL_WATCHDOG, -2, NULL);
	const struct npf_xp_line *ok = line_of(e, NPF_XL_INIT_DONE, -2, NULL);

	if (!ok)
		ok = line_of(e, NPF_XL_CHANNEL, -2, NULL);
	/* Connected (init complete or channels over NET), then collectives time out, and no
	 * connect ever failed: the small packets passed and the large ones did not. */
	for (size_t i = 0; i < r->n_procs; i++)
		if (r->procs[i].primary)
			return false;
	if (!w || !ok)
		return false;
	cite(f, ok);
	cite(f, w);
	about(f, NULL, NULL, NULL);
	snprintf(f->summary, sizeof(f->summary),
		 "every connection was set up, then the first collective hung until the watchdog "
		 "fired: full-size packets are lost on the path (MTU black hole suspected)");
	return true;
}

static bool r_ib_fallback(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *n = line_of(e, NPF_XL_IB_NONE, -2, NULL);
	const struct npf_xp_line *u = line_of(e, NPF_XL_USING_NET, -2, "Socket");

	if (!n || !u)
		return false;
	cite(f, n);
	cite(f, u);
	cite(f, line_of(e, NPF_XL_ENV, -2, "NCCL_IB_HCA"));
	about(f, NULL, NULL, host_of(e, n->proc));
	snprintf(f->summary, sizeof(f->summary),
		 "NET/IB found no usable device on %s and NCCL silently fell back to TCP sockets",
		 or_else(f->host, "a node"));
	return true;
}

static bool r_env_differs(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	static const char *const vars[] = {"NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX",
					   "NCCL_SOCKET_FAMILY"};

	for (size_t v = 0; v < sizeof(vars) / sizeof(vars[0]); v++) {
		int first = -1;
		const char *val0 = NULL;

		for (size_t i = 0; i < r->n_procs; i++) {
			const char *val = env_of(&r->procs[i], vars[v]);

			if (!val)
				continue;
			if (!val0) {
				val0 = val;
				first = (int)i;
			} else if (strcmp(val0, val) != 0) {
				cite(f, line_of(e, NPF_XL_ENV, first, vars[v]));
				cite(f, line_of(e, NPF_XL_ENV, (int)i, vars[v]));
				about(f, NULL, NULL, r->procs[i].host);
				snprintf(
				    f->summary, sizeof(f->summary),
				    "ranks ran with different %s (%s vs %s): the job's environment "
				    "is not one published setting",
				    vars[v], val0, val);
				return true;
			}
		}
	}
	return false;
}

/* ---- new causes: a name that is not there, an address that is no host's, IB MTU ---- */

/* "dgx-1.ai", "node1.cluster": a host name, not an interface name (those have no dot
 * followed by a letter; a VLAN is "eth0.100"). */
static bool looks_hostname(const char *n)
{
	for (const char *d = strchr(n, '.'); d; d = strchr(d + 1, '.'))
		if (isalpha((unsigned char)d[1]))
			return true;
	return false;
}

static bool any_bound(const struct xp_evidence *e)
{
	for (size_t i = 0; i < e->rep->n_procs; i++)
		if (e->rep->procs[i].boot_if[0] || e->rep->procs[i].oob_if[0])
			return true;
	return false;
}

static bool r_ifname_missing(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *l = line_of(e, NPF_XL_NO_IFACE, -2, NULL);
	const char *val = env_any(e, "NCCL_SOCKET_IFNAME", NULL);

	/* NCCL 2.27 with a name that matches nothing fails later, with an address it never
	 * filled in (NVIDIA/nccl#1837): that too, when the log shows the variable. */
	if (!l && val)
		l = line_of(e, NPF_XL_NO_FAMILY, -2, NULL);
	if (!l) {
		l = line_of(e, NPF_XL_GLOO_NOADDR, -2, NULL);
		if (l && looks_hostname(l->addr))
			l = NULL;
	}
	/* A rank that did bind an interface: the names differ between nodes (next rule). */
	if (!l || any_bound(e))
		return false;
	cite(f, line_of(e, NPF_XL_ENV, -2, "NCCL_SOCKET_IFNAME"));
	cite(f, l);
	about(f, l->kind == NPF_XL_GLOO_NOADDR ? l->addr : val, NULL, host_of(e, l->proc));
	if (l->kind == NPF_XL_GLOO_NOADDR || val)
		snprintf(
		    f->summary, sizeof(f->summary),
		    "%s%s names an interface that does not exist on %s (no rank found it)",
		    l->kind == NPF_XL_GLOO_NOADDR ? "GLOO_SOCKET_IFNAME=" : "NCCL_SOCKET_IFNAME=",
		    l->kind == NPF_XL_GLOO_NOADDR ? l->addr : val, or_else(f->host, "the nodes"));
	else
		snprintf(f->summary, sizeof(f->summary),
			 "NCCL found no usable interface on %s: the one NCCL_SOCKET_IFNAME names "
			 "does not exist there, or the node (a container without host networking) "
			 "has none",
			 or_else(f->host, "a node"));
	return true;
}

static bool r_bad_address(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	const struct npf_xp_line *l = line_of(e, NPF_XL_UNRESOLVED, -2, NULL);
	const char *what = NULL;

	if (!l) {
		l = line_of(e, NPF_XL_GLOO_NOADDR, -2, NULL);
		if (l && !looks_hostname(l->addr))
			l = NULL;
	}
	for (size_t i = 0; i < e->n_lines && !l; i++)
		if (is_connect_kind(e->lines[i].kind) &&
		    (what = impossible_addr(e->lines[i].addr)) != NULL)
			l = &e->lines[i];
	if (!l)
		return false;
	cite(f, l);
	about(f, NULL, unmapped(l->addr), NULL);
	if (what)
		snprintf(f->summary, sizeof(f->summary),
			 "the job connects to %s, which is %s, no host's address: the rendezvous "
			 "address (MASTER_ADDR) is wrong",
			 f->addr, what);
	else
		snprintf(f->summary, sizeof(f->summary),
			 "the name %s does not resolve on %s: the rendezvous address "
			 "(MASTER_ADDR, the host name) cannot be reached",
			 or_else(f->addr, "given"),
			 l->proc >= 0 && r->procs[l->proc].host[0] ? r->procs[l->proc].host
								   : "a node");
	return true;
}

static bool r_ib_mtu(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *l = line_of(e, NPF_XL_IB_ASYNC, -2, "access violation");

	if (!l)
		l = line_of(e, NPF_XL_IB_COMPLETION, -2, "LOC_LEN");
	if (!l)
		return false;
	cite(f, l);
	if (l->proc >= 0)
		cite(f, line_of(e, NPF_XL_NET_IB, l->proc, NULL));
	about(f, NULL, NULL, host_of(e, l->proc));
	snprintf(f->summary, sizeof(f->summary),
		 "an IB/RoCE queue pair failed with a local access/length error on %s: the ports' "
		 "MTUs differ between nodes (NCCL >= 2.20.3 no longer lowers it to the peer's)",
		 or_else(f->host, "a node"));
	return true;
}

/* The non-network failure kinds: what to say about the process, and what to do. */
static const struct {
	enum npf_xp_kind kind;
	const char *what, *fix;
} not_network[] = {
    {NPF_XL_CUDA_OOM, "ran out of GPU memory",
     "lower the batch or model shard size on that rank (PYTORCH_CUDA_ALLOC_CONF=expandable_"
     "segments:True against fragmentation); the other ranks' timeouts follow from it"},
    {NPF_XL_KILLED,
     "was killed with SIGKILL (the kernel's OOM killer when host memory runs out, "
     "or the scheduler)",
     "check dmesg / the job's memory limit on that node; fewer data loader workers or more "
     "host memory"},
    {NPF_XL_DUP_GPU, "shares its GPU with another rank (Duplicate GPU)",
     "give each rank its own device: torch.cuda.set_device(local_rank), one process per GPU, "
     "CUDA_VISIBLE_DEVICES per rank"},
    {NPF_XL_COLL_MISMATCH,
     "called another collective than its peers (the ranks took different "
     "code paths)",
     "make every rank call the same collectives in the same order and shapes"},
    {NPF_XL_CUDA_ERROR, "hit a CUDA error",
     "debug the kernel on that rank (CUDA_LAUNCH_BLOCKING=1)"},
    {NPF_XL_SHM,
     "could not create NCCL's shared memory segment (/dev/shm too small, e.g. a "
     "container's 64 MB default)",
     "give the container a larger /dev/shm (docker --shm-size, a memory-backed emptyDir)"},
    {NPF_XL_VERSION, "runs another version (driver, CUDA or NCCL) than it needs or than its peers",
     "install one matching NCCL/CUDA/driver set on every node (one container image)"},
    {NPF_XL_NO_BARRIER, "never reached the barrier the other ranks waited at",
     "find what that rank was doing (py-spy dump); a rank stuck in data loading or I/O"},
    {NPF_XL_PY_EXCEPTION, "raised an exception", "fix the exception that rank raised"},
};

/* Names a non-network failure: "not a network cause: rank 2 ran out of GPU memory". */
static bool name_not_network(const struct xp_evidence *e, struct xp_finding *f, int proc)
{
	const struct npf_xp_report *r = e->rep;
	const struct npf_xp_line *l = &r->procs[proc].first_error;
	char who[96];

	for (size_t i = 0; i < sizeof(not_network) / sizeof(not_network[0]); i++) {
		if (not_network[i].kind != l->kind)
			continue;
		cite(f, l);
		about(f, NULL, NULL, r->procs[proc].host);
		npf_xp_proc_label(r, proc, who, sizeof(who));
		if (l->kind == NPF_XL_PY_EXCEPTION)
			snprintf(f->summary, sizeof(f->summary),
				 "not a network cause: %s raised %.*s",
				 proc == e->job ? "a process" : who, (int)strcspn(l->text, ":"),
				 l->text);
		else
			snprintf(f->summary, sizeof(f->summary), "not a network cause: %s %s",
				 proc == e->job ? "a process" : who, not_network[i].what);
		cpy(f->fix, sizeof(f->fix), not_network[i].fix);
		return true;
	}
	return false;
}

/* The first failing process failed of itself, and not because of the network. */
static bool r_not_network_first(const struct xp_evidence *e, struct xp_finding *f)
{
	int fp = e->rep->first_proc;

	return fp >= 0 && e->rep->procs[fp].primary &&
	       npf_xp_kind_not_network(e->rep->procs[fp].first_error.kind) &&
	       name_not_network(e, f, fp);
}

/* No network rule found its evidence, but some process failed of itself (the earliest). */
static bool r_not_network_any(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	int best = -1;

	bool net = false;

	/* An exception no row knows is the end of a network failure's traceback as often as
	 * not: it counts only when no process shows a network failure. */
	for (size_t i = 0; i < r->n_procs; i++)
		net |=
		    r->procs[i].primary && !npf_xp_kind_not_network(r->procs[i].first_error.kind);
	for (size_t i = 0; i < r->n_procs; i++) {
		const struct npf_xp_proc *pr = &r->procs[i];

		if (pr->has_error && pr->primary && npf_xp_kind_not_network(pr->first_error.kind) &&
		    !(net && pr->first_error.kind == NPF_XL_PY_EXCEPTION) &&
		    (best < 0 || pr->first_error.lineno < r->procs[best].first_error.lineno))
			best = (int)i;
	}
	return best >= 0 && name_not_network(e, f, best);
}

/* The line kinds a row may cite, as a bit set (one bit per enum npf_xp_kind). */
#define K(k) (1ull << NPF_XL_##k)
_Static_assert(NPF_XL__COUNT <= 64, "npf_xp_kind no longer fits a 64-bit evidence set");
#define CONNECTS                                                                                   \
	(K(CONNECT_FAIL) | K(CONNECT_RETRY) | K(OMPI_CONNECT) | K(GLOO_CONNECT) | K(STORE_FAIL))
#define NOT_NET                                                                                    \
	(K(CUDA_OOM) | K(KILLED) | K(DUP_GPU) | K(COLL_MISMATCH) | K(CUDA_ERROR) | K(SHM) |        \
	 K(VERSION) | K(NO_BARRIER) | K(PY_EXCEPTION))
#define ANY_FIRST ~0ull /* also the first failing process's first failure, whatever it is */
#define C(c) (1u << NPF_XC_##c)

/* One row per root cause, in precedence order: the first whose test fires is the cause, the
 * others that fire are reported as "also". tier: rules of one tier are alternatives; when two
 * fire that do not go together (compat), the answer is marked ambiguous. evidence: the kinds
 * of line the test cites. fix: what to change, unless the test wrote a fix of its own (NULL:
 * the test always does). "none" and "unknown" have no test: they are what is left. */
static const struct xp_rule xp_rules[] = {
    /* Tier 0: the first failure is not the network's; no network rule is consulted. */
    {NPF_XC_NOT_NETWORK, "not-network", 0, r_not_network_first, NOT_NET, NULL, 0},
    {NPF_XC_COMM_ID_SUBNET, "comm-id-subnet", 1, r_comm_id,
     K(NO_SUBNET) | K(BOOTSTRAP) | K(NCCL_VERSION) | K(ENV),
     "give NCCL_COMM_ID an address of rank 0's node on a network every node has "
     "(or unset it and let the launcher pass the unique id)",
     C(LOOPBACK)},
    {NPF_XC_BAD_ADDRESS, "bad-address", 1, r_bad_address, K(UNRESOLVED) | K(GLOO_NOADDR) | CONNECTS,
     "give MASTER_ADDR (--rdzv-endpoint, --dist-init-addr) rank 0's node's address on "
     "the fabric, or a name every node resolves to it",
     0},
    {NPF_XC_IB_MTU, "ib-mtu-mismatch", 1, r_ib_mtu, K(IB_ASYNC) | K(IB_COMPLETION) | K(NET_IB),
     "make the MTU equal on every port and switch (ibv_devinfo: active_mtu; RoCE: the "
     "netdev MTU, e.g. 4200 for 4096)",
     C(ROCE_GID)},
    {NPF_XC_ROCE_GID_FORCED, "roce-gid-forced", 1, r_gid_forced,
     K(ENV) | K(IB_GID_HINT) | K(IB_MODIFY_QP) | K(IB_COMPLETION),
     "unset NCCL_IB_GID_INDEX (NCCL >= 2.21.5 picks the RoCE v2 IPv4 GID per port); "
     "on older NCCL pin the index show_gids reports as RoCE v2 + IPv4",
     C(ROCE_GID)},
    {NPF_XC_ROCE_GID, "roce-gid", 1, r_gid, K(IB_COMPLETION) | K(NET_IB),
     "use a RoCE v2 GID with an IPv4 address on every port: NCCL >= 2.21.5 unset "
     "NCCL_IB_GID_INDEX (set NCCL_IB_ADDR_FAMILY/NCCL_IB_ADDR_RANGE if needed), older "
     "NCCL pin the RoCE v2 index",
     0},
    {NPF_XC_GLOO_HOSTNAME, "gloo-hostname-loopback", 1, r_gloo_hostname,
     K(GLOO_LOOPBACK) | K(GLOO_CONNECT),
     "set GLOO_SOCKET_IFNAME to the fabric interface (exact name), or make the "
     "hostname resolve to the fabric address in /etc/hosts",
     C(LOOPBACK)},
    {NPF_XC_IFNAME_MISSING, "interface-missing", 1, r_ifname_missing,
     K(ENV) | K(NO_IFACE) | K(NO_FAMILY) | K(GLOO_NOADDR),
     "set the variable to an interface the nodes have (ip -br addr), or unset it and "
     "let NCCL pick; `netpreflight env` publishes the one that works",
     0},
    {NPF_XC_NAMES_DIFFER, "interface-names-differ", 1, r_names_differ,
     K(NO_IFACE) | K(GLOO_NOADDR) | K(OMPI_NOIF) | K(ENV) | K(BOOTSTRAP),
     "set the variable per node (each node's own name), or list every node's name, "
     "or use an address-based setting (CIDR for Open MPI)",
     C(ENV_DIFFERS)},
    {NPF_XC_PREFIX_MATCH, "prefix-match", 2, r_prefix, K(ENV) | K(BOOTSTRAP) | K(NET_SOCKET), NULL,
     C(FIREWALL_REFUSED) | C(FIREWALL_SILENT)},
    {NPF_XC_LOOPBACK, "loopback", 2, r_loopback, ANY_FIRST,
     "exclude lo: a '^' list replaces NCCL's defaults, so write ^docker,lo,... "
     "or better name the fabric interface with '='",
     C(FIREWALL_REFUSED) | C(SAME_ADDRESS)},
    {NPF_XC_LINK_LOCAL, "link-local", 2, r_link_local, ANY_FIRST,
     "name an interface with a routable address (NCCL_SOCKET_IFNAME==<if>), or "
     "NCCL_SOCKET_FAMILY=AF_INET if the nodes have IPv4",
     C(FIREWALL_REFUSED) | C(FIREWALL_SILENT) | C(SAME_ADDRESS)},
    {NPF_XC_SAME_ADDRESS, "same-address", 2, r_same_address, ANY_FIRST,
     "exclude the bridges: name the fabric interface (NCCL_SOCKET_IFNAME==<if>, "
     "GLOO_SOCKET_IFNAME; Open MPI: the fabric CIDR in "
     "OMPI_MCA_btl_tcp_if_include)",
     C(CONTAINER_BRIDGE) | C(FIREWALL_REFUSED)},
    {NPF_XC_CONTAINER_BRIDGE, "container-bridge", 2, r_bridge, ANY_FIRST,
     "name the fabric interface: NCCL_SOCKET_IFNAME==<if> (NCCL's defaults "
     "exclude docker* and lo only, never br-<id> or veth)",
     C(FIREWALL_REFUSED) | C(FIREWALL_SILENT)},
    {NPF_XC_FIREWALL_REFUSED, "firewall-refused", 3, r_refused, CONNECTS | K(BOOTSTRAP),

     "open the job's ports between the nodes on that network, or use a network "
     "that works to every peer",
     0},
    {NPF_XC_FIREWALL_SILENT, "firewall-silent", 3, r_silent, CONNECTS | K(BOOTSTRAP),

     "open the job's ports between the nodes on that network, or use a network "
     "that works to every peer",
     0},
    {NPF_XC_MTU_BLACKHOLE, "mtu-blackhole", 3, r_mtu, K(INIT_DONE) | K(CHANNEL) | K(WATCHDOG),

     "make the MTU equal on every NIC and switch port of the path (ping -M do -s "
     "<mtu-28> finds the hop), or use a network without the mismatch",
     0},
    {NPF_XC_ENV_DIFFERS, "env-differs", 4, r_env_differs, K(ENV),
     "give every rank the environment `netpreflight env` publishes "
     "(TaskProlog or the launcher's env file)",
     0},
    {NPF_XC_IB_FALLBACK, "ib-socket-fallback", 4, r_ib_fallback, K(IB_NONE) | K(USING_NET) | K(ENV),
     "fix NCCL_IB_HCA (verbs names, '=' for exact: =mlx5_0:1) or the port state; set "
     "NCCL_NET=IB so a fallback fails loudly",
     0},
    {NPF_XC_NOT_NETWORK, "not-network", 5, r_not_network_any, NOT_NET, NULL, 0},
    {NPF_XC_NONE, "none", 6, NULL, 0, NULL, 0},
    {NPF_XC_UNKNOWN, "unknown", 6, NULL, 0, NULL, 0},
};

static const struct xp_rule *rule_of(enum npf_xp_cause c)
{
	for (size_t i = 0; i < sizeof(xp_rules) / sizeof(xp_rules[0]); i++)
		if (xp_rules[i].cause == c)
			return &xp_rules[i];
	return NULL;
}

const char *npf_xp_cause_name(enum npf_xp_cause c)
{
	const struct xp_rule *row = rule_of(c);

	return row ? row->name : "unknown";
}

int npf_xp_cause_parse(const char *s)
{
	for (size_t i = 0; s && i < sizeof(xp_rules) / sizeof(xp_rules[0]); i++)
		if (strcmp(s, xp_rules[i].name) == 0)
			return (int)xp_rules[i].cause;
	return -EINVAL;
}

/* Adds an evidence line once (by line number), while there is room. */
static void add_evidence(struct npf_xp_report *r, const struct npf_xp_line *l)
{
	if (!l || r->n_evidence >= NPF_XP_MAX_EVIDENCE)
		return;
	for (size_t i = 0; i < r->n_evidence; i++)
		if (r->evidence[i].lineno == l->lineno)
			return;
	r->evidence[r->n_evidence++] = *l;
}

/* The one step that writes the report: the winning row and what its test found. */
static void report_finding(struct npf_xp_report *r, const struct xp_rule *row,
			   const struct xp_finding *f)
{
	r->cause = row->cause;
	for (size_t i = 0; i < f->n_lines; i++)
		add_evidence(r, f->lines[i]);
	cpy(r->subject_if, sizeof(r->subject_if), f->ifname);
	cpy(r->subject_addr, sizeof(r->subject_addr), f->addr);
	cpy(r->subject_host, sizeof(r->subject_host), f->host);
	snprintf(r->summary, sizeof(r->summary), "%s", f->summary);
	snprintf(r->fix_hint, sizeof(r->fix_hint), "%s",
		 f->fix[0]  ? f->fix
		 : row->fix ? row->fix
			    : "");
}

static void diagnose(struct ctx *c)
{
	struct npf_xp_report *r = c->rep;
	const struct xp_evidence e = {r, c->lines, c->n_lines, c->job};
	const struct xp_rule *top = NULL;
	struct xp_finding found, also;

	for (size_t i = 0; i < sizeof(xp_rules) / sizeof(xp_rules[0]); i++) {
		const struct xp_rule *row = &xp_rules[i];

		if (!row->test)
			continue;
		if (!top) {
			memset(&found, 0, sizeof(found));
			if (row->test(&e, &found)) {
				top = row;
				if (row->tier == 0)
					break;
			}
			continue;
		}
		/* Later rules only tell whether they also fire. */
		memset(&also, 0, sizeof(also));
		if (!row->test(&e, &also))
			continue;
		if (r->n_also < sizeof(r->also) / sizeof(r->also[0]))
			r->also[r->n_also++] = row->cause;
		if (row->tier == top->tier && !(top->compat & (1u << row->cause)) &&
		    !(row->compat & (1u << top->cause)))
			r->ambiguous = true;
	}
	if (top)
		report_finding(r, top, &found);
	mend(r->summary, sizeof(r->summary));
	mend(r->fix_hint, sizeof(r->fix_hint));
	if (!top && any_failure(r)) {
		r->cause = NPF_XC_UNKNOWN;
		snprintf(r->summary, sizeof(r->summary),
			 "the job failed, but no line shows a network cause this tool knows");
		for (size_t i = 0; i < r->n_procs; i++)
			if (r->procs[i].has_error)
				add_evidence(r, &r->procs[i].first_error);
	}
}

/* The story: the first process whose failure is a cause (by time when every candidate has a
 * timestamp, else by line), and how many failed only as a consequence. A Python exception no
 * row knows counts as a cause only when no process shows a known one. */
static void story(struct ctx *c)
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

/* ---- line assembly: a record is a line and the lines that continue it ---- */

/* Ends with suffix (trailing blanks ignored). */
static bool ends_with(const char *p, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	return n >= k && memcmp(p + n - k, suffix, k) == 0;
}

/* A line that the next lines of its writer may continue: PyTorch's "Last error:" (the NCCL
 * WARN follows on its own line), a header that ends in ':' with an indented block below
 * (torchelastic's "[0]:" failure summary), Gloo's wrapped errors and warnings. A Python
 * traceback header is not one: its frames are no part of the error. */
static bool record_head(const struct npf_xp_parsed *p, bool *last_error)
{
	*last_error = ends_with(p->msg, p->msg_len, "Last error:");
	if (*last_error)
		return true;
	if (ends_with(p->msg, p->msg_len, "(most recent call last):"))
		return false;
	return ends_with(p->msg, p->msg_len, ":") || ends_with(p->msg, p->msg_len, "failed with") ||
	       p->kind == NPF_XL_GLOO_CONNECT || p->kind == NPF_XL_GLOO_LOOPBACK;
}

static int feed_record(struct ctx *c, struct pend *r)
{
	struct npf_xp_parsed p;
	int rc;

	c->cur_cont = r->n_cont;
	npf_xp_parse_line(r->buf, r->len, &p);
	rc = feed_parsed(c, &p, r->lineno);
	c->cur_cont = 0;
	r->used = false;
	return rc;
}

/* Feeds the records still being assembled, oldest first. */
static int flush_records(struct ctx *c)
{
	for (;;) {
		struct pend *o = NULL;

		for (size_t i = 0; i < sizeof(c->pend) / sizeof(c->pend[0]); i++)
			if (c->pend[i].used && (!o || c->pend[i].lineno < o->lineno))
				o = &c->pend[i];
		if (!o)
			return 0;
		if (feed_record(c, o) < 0)
			return -ENOMEM;
	}
}

/* One physical line: continues a record of its writer, starts one, or is a record itself. */
static int assemble(struct ctx *c, const char *line, size_t n, size_t lineno)
{
	struct npf_xp_parsed p;
	struct pend *r = NULL, *free_slot = NULL, *oldest = NULL;
	bool last_error;

	if (n > sizeof(c->pend[0].buf) - 1)
		n = sizeof(c->pend[0].buf) - 1;
	npf_xp_parse_line(line, n, &p);
	for (size_t i = 0; i < sizeof(c->pend) / sizeof(c->pend[0]); i++) {
		struct pend *s = &c->pend[i];

		if (!s->used) {
			free_slot = free_slot ? free_slot : s;
			continue;
		}
		if (s->stream == p.stream)
			r = s;
		if (!oldest || s->lineno < oldest->lineno)
			oldest = s;
	}
	if (r && p.msg_len && (r->last_error || (p.indent && r->n_cont < 8))) {
		/* Joined with one blank: the continuation without its prefixes and indent. */
		size_t k = p.msg_len;

		if (r->len + 1 + k > sizeof(r->buf) - 1)
			k = sizeof(r->buf) - 1 - r->len - (r->len < sizeof(r->buf) - 1);
		if (r->len < sizeof(r->buf) - 1) {
			r->buf[r->len++] = ' ';
			memcpy(r->buf + r->len, p.msg, k);
			r->len += k;
		}
		r->n_cont++;
		return r->last_error ? feed_record(c, r) : 0;
	}
	if (r && feed_record(c, r) < 0)
		return -ENOMEM;
	if (!record_head(&p, &last_error))
		return feed_parsed(c, &p, lineno); /* a record of one line: parsed once */
	if (!r)
		r = free_slot;
	if (!r) {
		if (feed_record(c, oldest) < 0)
			return -ENOMEM;
		r = oldest;
	}
	memcpy(r->buf, line, n);
	r->len = n;
	r->used = true;
	r->last_error = last_error;
	r->stream = p.stream;
	r->lineno = lineno;
	r->n_cont = 0;
	return 0;
}

int npf_explain(const char *buf, size_t len, struct npf_xp_report *rep)
{
	struct ctx *c = calloc(1, sizeof(*c));
	size_t lineno = 0, i = 0;
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	rep->first_proc = -1;
	if (!c)
		return -ENOMEM;
	c->rep = rep;
	c->job = -1;
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;

		lineno++;
		rep->n_lines++;
		if (!nl)
			rep->truncated = true;
		rc = assemble(c, buf + i, n, lineno);
		if (rc < 0)
			break;
		i += n + (nl ? 1 : 0);
	}
	if (rc == 0)
		rc = flush_records(c);
	if (rc == 0) {
		c->pending_lineno = 0;
		if (c->pending)
			apply_kept(c, &c->lines[c->pending - 1]);
		story(c);
		diagnose(c);
	}
	free(c->lines);
	free(c);
	if (rc < 0)
		npf_xp_report_clear(rep);
	return rc;
}

void npf_xp_report_clear(struct npf_xp_report *rep)
{
	free(rep->procs);
	memset(rep, 0, sizeof(*rep));
	rep->first_proc = -1;
}

static json_t *jstr_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

static json_t *line_json(const struct npf_xp_report *rep, const struct npf_xp_line *l)
{
	char who[96];

	return json_pack("{s:I, s:I, s:s, s:s, s:s}", "line", (json_int_t)l->lineno, "continued",
			 (json_int_t)l->n_cont, "kind", npf_xp_kind_name(l->kind), "process",
			 npf_xp_proc_label(rep, l->proc, who, sizeof(who)), "text", l->text);
}

json_t *npf_xp_report_to_json(const struct npf_xp_report *rep)
{
	json_t *o = json_object(), *procs = json_array(), *ev = json_array(), *also = json_array();
	char who[96];

	if (!o || !procs || !ev || !also)
		goto fail;
	for (size_t i = 0; i < rep->n_procs; i++) {
		const struct npf_xp_proc *pr = &rep->procs[i];
		json_t *env, *p;

		if (npf_xp_proc_empty(pr))
			continue;
		env = json_object();
		if (!env)
			goto fail;
		for (size_t k = 0; k < pr->n_env; k++)
			if (json_object_set_new(env, pr->env[k].name,
						json_string(pr->env[k].value)))
				break;
		p = json_pack(
		    "{s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o}, s:o, s:o, s:{s:o, s:o}, "
		    "s:b, s:I}",
		    "rank", pr->rank >= 0 ? json_integer(pr->rank) : json_null(), "host",
		    jstr_or_null(pr->host), "pid",
		    pr->pid >= 0 ? json_integer(pr->pid) : json_null(), "label",
		    json_string(npf_xp_proc_label(rep, (int)i, who, sizeof(who))), "nccl_version",
		    jstr_or_null(pr->nccl_version), "env", env, "bootstrap", "ifname",
		    jstr_or_null(pr->boot_if), "address", jstr_or_null(pr->boot_addr), "net",
		    jstr_or_null(pr->net), "net_devices", jstr_or_null(pr->net_devs), "ib_oob",
		    "ifname", jstr_or_null(pr->oob_if), "address", jstr_or_null(pr->oob_addr),
		    "init_complete", pr->init_done, "errors", (json_int_t)pr->n_errors);
		if (!p)
			goto fail;
		if (pr->has_error) {
			json_t *fe = line_json(rep, &pr->first_error);

			if (fe && pr->first_error_time >= 0)
				json_object_set_new(fe, "time", json_real(pr->first_error_time));
			json_object_set_new(p, "first_error", fe ? fe : json_null());
			json_object_set_new(p, "failed_because",
					    json_string(pr->primary ? "cause" : "consequence"));
		} else {
			json_object_set_new(p, "first_error", json_null());
			json_object_set_new(p, "failed_because", json_null());
		}
		json_object_set_new(p, "peer_address", jstr_or_null(pr->peer_addr));
		if (json_array_append_new(procs, p))
			goto fail;
	}
	for (size_t i = 0; i < rep->n_evidence; i++)
		if (json_array_append_new(ev, line_json(rep, &rep->evidence[i])))
			goto fail;
	for (size_t i = 0; i < rep->n_also; i++)
		if (json_array_append_new(also, json_string(npf_xp_cause_name(rep->also[i]))))
			goto fail;
	if (json_object_set_new(o, "cause", json_string(npf_xp_cause_name(rep->cause))) ||
	    json_object_set_new(o, "ambiguous", json_boolean(rep->ambiguous)) ||
	    json_object_set_new(o, "summary", jstr_or_null(rep->summary)) ||
	    json_object_set_new(o, "fix_hint", jstr_or_null(rep->fix_hint)) ||
	    json_object_set_new(o, "subject",
				json_pack("{s:o, s:o, s:o}", "ifname",
					  jstr_or_null(rep->subject_if), "address",
					  jstr_or_null(rep->subject_addr), "host",
					  jstr_or_null(rep->subject_host))) ||
	    json_object_set(o, "also", also) ||
	    json_object_set_new(o, "first_failure",
				rep->first_proc >= 0 ? json_string(npf_xp_proc_label(
							   rep, rep->first_proc, who, sizeof(who)))
						     : json_null()) ||
	    json_object_set_new(o, "failed_as_cause", json_integer((json_int_t)rep->n_primary)) ||
	    json_object_set_new(o, "failed_as_consequence",
				json_integer((json_int_t)rep->n_secondary)) ||
	    json_object_set(o, "evidence", ev) ||
	    json_object_set_new(o, "lines", json_integer((json_int_t)rep->n_lines)) ||
	    json_object_set_new(o, "recognised", json_integer((json_int_t)rep->n_recognised)) ||
	    json_object_set_new(o, "timestamps", json_boolean(rep->has_times)) ||
	    json_object_set_new(o, "truncated", json_boolean(rep->truncated)) ||
	    json_object_set_new(o, "hostlist", jstr_or_null(rep->hostlist)) ||
	    json_object_set(o, "processes", procs))
		goto fail;
	json_decref(procs);
	json_decref(ev);
	json_decref(also);
	return o;
fail:
	json_decref(o);
	json_decref(procs);
	json_decref(ev);
	json_decref(also);
	return NULL;
}
