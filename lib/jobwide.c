// SPDX-License-Identifier: MIT
/* Job-wide values: one value that holds on every node of the job. */
#include "decide.h"
#include "gid.h"
#include "ncclmatch.h"

#include <errno.h>
#include <stdlib.h>

/* ---- job-wide values -------------------------------------------------------------------- */

#define TOK_MAX (NPF_NAME_MAX + 16)

struct tokset {
	char (*t)[TOK_MAX];
	size_t n;
};

static bool tok_has(const struct tokset *s, const char *tok)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->t[i], tok) == 0)
			return true;
	return false;
}

static int tok_add(struct tokset *s, const char *tok)
{
	char(*n)[TOK_MAX];

	if (!tok[0] || tok_has(s, tok))
		return 0;
	n = realloc(s->t, (s->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->t = n;
	copy_str(s->t[s->n++], TOK_MAX, tok);
	return 0;
}

static void tok_free_all(struct tokset *s, size_t n)
{
	if (!s)
		return;
	for (size_t i = 0; i < n; i++)
		free(s[i].t);
	free(s);
}

enum jw_kind {
	JW_EXACT,  /* Gloo, TensorPipe, UCX: plain exact names */
	JW_SOCKET, /* NCCL_SOCKET_IFNAME "=a,b" */
	JW_IB,	   /* NCCL_IB_HCA "=dev:port,..." */
};

static bool jw_selects(const struct ncclmatch_list *l, enum jw_kind kind, const struct tokset *u,
		       const char *tok)
{
	char dev[TOK_MAX];
	char *colon;

	if (kind == JW_EXACT)
		return tok_has(u, tok);
	if (kind == JW_SOCKET)
		return ncclmatch_ifname(l, tok);
	copy_str(dev, sizeof(dev), tok);
	colon = strrchr(dev, ':');
	if (!colon)
		return ncclmatch_hca(l, dev, -1);
	*colon = '\0';
	return ncclmatch_hca(l, dev, atoi(colon + 1));
}

/* One value for every node: the union of what each node uses, accepted only when, on
 * every node, it selects exactly that node's own set among the names the node has. */
static void jw_exact(struct ctx *c, char **vals, enum npf_var v, enum jw_kind kind,
		     const struct tokset *sets, const struct tokset *known, size_t max)
{
	const char *name = npf_var_name(v);
	struct tokset u = {0};
	char value[REC_VALUE_MAX];
	struct ncclmatch_list l;
	size_t nn = c->chk->n_nodes;

	if (c->err)
		return;
	dec_drop_var(vals, v);
	for (size_t k = 0; k < nn; k++)
		for (size_t i = 0; i < sets[k].n; i++)
			if ((c->err = tok_add(&u, sets[k].t[i])) < 0)
				goto out;
	if (u.n == 0)
		goto out;
	if (u.n > max) {
		dec_note(c, NPF_NOTE_JOB_WIDE, v, NULL, NULL,
			 "%s: no job-wide value: %zu distinct names exceed the %zu NCCL reads",
			     name, u.n, max);
		goto out;
	}
	/* "=" makes every NCCL token an exact match; plain lists are exact by nature. */
	snprintf(value, sizeof(value), "%s", kind == JW_EXACT ? "" : "=");
	for (size_t i = 0, skip = strlen(value); i < u.n; i++)
		if (!list_append(value + skip, sizeof(value) - skip, u.t[i])) {
			dec_note(c, NPF_NOTE_JOB_WIDE, v, NULL, NULL,
				 "%s: no job-wide value: the list is too long", name);
			goto out;
		}
	if (kind != JW_EXACT &&
	    ncclmatch_parse(value, kind == JW_IB ? NCCLMATCH_IB : NCCLMATCH_SOCKET, &l) < 0) {
		dec_note(c, NPF_NOTE_JOB_WIDE, v, NULL, NULL,
			 "%s: no job-wide value: '%s' does not parse as NCCL reads it", name,
			     value);
		goto out;
	}
	for (size_t k = 0; k < nn; k++) {
		const char *node = node_name(c, (int)k);

		for (size_t i = 0; i < sets[k].n; i++)
			if (!tok_has(&known[k], sets[k].t[i]) ||
			    !jw_selects(&l, kind, &u, sets[k].t[i])) {
				dec_note(c, NPF_NOTE_JOB_WIDE, v, node, sets[k].t[i],
					 "%s: no job-wide value: '%s' would miss %s on %s",
					     name, value, sets[k].t[i], node);
				goto out;
			}
		for (size_t i = 0; i < known[k].n; i++)
			if (!tok_has(&sets[k], known[k].t[i]) &&
			    jw_selects(&l, kind, &u, known[k].t[i])) {
				dec_note(c, NPF_NOTE_JOB_WIDE, v, node, known[k].t[i],
					 "%s: no job-wide value: '%s' would also select %s on %s",
				    name, value, known[k].t[i], node);
				goto out;
			}
	}
	dec_set_var(c, vals, v, value);
out:
	free(u.t);
}

static int node_known_names(const struct ctx *c, size_t k, struct tokset *s)
{
	const struct npf_node *nd = &c->chk->nodes[k];
	int r = 0;

	if (k == 0) {
		for (size_t i = 0; i < c->inv->n_ifaces && r == 0; i++)
			r = tok_add(s, c->inv->ifaces[i].name);
		return r;
	}
	for (size_t i = 0; i < nd->n_ifnames && r == 0; i++) {
		char name[IFNAMSIZ];

		memcpy(name, nd->ifnames[i], IFNAMSIZ);
		name[IFNAMSIZ - 1] = '\0';
		r = tok_add(s, name);
	}
	/* Older announcements without the full list: the candidates are all we know. */
	for (size_t j = 0; j < nd->n_cands && r == 0; j++)
		r = tok_add(s, nd->cands[j].ifname);
	return r;
}

static int node_rdma_sets(const struct ctx *c, size_t k, struct tokset *works, struct tokset *known)
{
	char tok[TOK_MAX];
	int r = 0;

	if (k == 0) {
		for (size_t i = 0; i < c->out->n_hcas && r == 0; i++) {
			snprintf(tok, sizeof(tok), "%s:%d", c->out->hcas[i].dev,
				 c->out->hcas[i].port);
			r = tok_add(known, tok);
			if (r == 0 && c->out->hcas[i].published)
				r = tok_add(works, tok);
		}
		return r;
	}
	for (size_t j = 0; j < c->chk->nodes[k].n_cands && r == 0; j++) {
		const struct npf_candidate *cd = &c->chk->nodes[k].cands[j];

		if (!cd->rdma_dev[0] || cd->rdma_port <= 0)
			continue;
		snprintf(tok, sizeof(tok), "%.*s:%d", NPF_NAME_MAX - 1, cd->rdma_dev,
			 cd->rdma_port);
		r = tok_add(known, tok);
		if (r || !cd->rdma_active || !addr_valid(&cd->addr))
			continue;
		/* A peer's port counts when it sits on the chosen network or a rail of it,
		 * and that network works here. */
		for (size_t n = 0; n < c->n_nets; n++)
			if (c->nets[n].state == EST_WORKS && dec_is_rail(c, n) &&
			    in_net(&cd->addr, &c->nets[n])) {
				r = tok_add(works, tok);
				break;
			}
	}
	return r;
}

/* One rail set on every node (NCCL maps channels to NICs by position; different sets
 * on two sides pair the wrong NICs): the ports that work here and on every node that has
 * them. A rail dead on one node leaves every node, with a note naming the node. rails[k]
 * gets node k's share of the result. Returns 0 or -ENOMEM. */
static int rails_common(struct ctx *c, const struct tokset *works, const struct tokset *known,
			struct tokset *rails)
{
	size_t nn = c->chk->n_nodes;
	int r = 0;

	for (size_t i = 0; i < works[0].n && r == 0; i++) {
		const char *t = works[0].t[i];
		int dead = -1;

		for (size_t k = 1; k < nn && dead < 0; k++)
			if (tok_has(&known[k], t) && !tok_has(&works[k], t))
				dead = (int)k;
		if (dead >= 0) {
			dec_note(c, NPF_NOTE_NARROWED, NPF_VAR_NCCL_IB_HCA, node_name(c, dead), t,
				 "NCCL_IB_HCA: %s left out on every node: it does not work on %s, "
				 "and every node must use the same rails",
				 t, node_name(c, dead));
			continue;
		}
		for (size_t k = 0; k < nn && r == 0; k++)
			if (k == 0 || tok_has(&known[k], t))
				r = tok_add(&rails[k], t);
	}
	for (size_t k = 1; k < nn && r == 0; k++)
		for (size_t i = 0; i < works[k].n; i++)
			if (!tok_has(&works[0], works[k].t[i]) && tok_has(&known[0], works[k].t[i]))
				dec_note(c, NPF_NOTE_NARROWED, NPF_VAR_NCCL_IB_HCA,
					 node_name(c, (int)k), works[k].t[i],
					 "NCCL_IB_HCA: %s of %s left out: it does not work on this "
					 "node, and every node must use the same rails",
					 works[k].t[i], node_name(c, (int)k));
	return r;
}

/* NCCL_IB_HCA job-wide: the common rails, proven per node with NCCL's matcher; none left
 * while some node had working ports: NCCL_IB_DISABLE=1 everywhere rather than NCCL's
 * fallback onto every ACTIVE port. */
static void jw_hcas(struct ctx *c, char **vals, const struct tokset *works,
		    const struct tokset *known, const struct tokset *rails)
{
	bool any = false;

	for (size_t k = 0; k < c->chk->n_nodes; k++)
		any = any || works[k].n > 0;
	if (rails[0].n == 0) {
		dec_drop_var(vals, NPF_VAR_NCCL_IB_HCA);
		if (any && dec_var_wanted(c, NPF_VAR_NCCL_IB_DISABLE) &&
		    !vals[NPF_VAR_NCCL_IB_DISABLE]) {
			dec_set_var(c, vals, NPF_VAR_NCCL_IB_DISABLE, "1");
			dec_note(
			    c, NPF_NOTE_RDMA_DISABLED, NPF_VAR_NCCL_IB_DISABLE, NULL, NULL,
			    "NCCL_IB_DISABLE=1 job-wide: no RDMA rail works on every node that "
			    "has it");
		}
		return;
	}
	jw_exact(c, vals, NPF_VAR_NCCL_IB_HCA, JW_IB, rails, known, NCCLMATCH_IB_MAX);
}

/* The GID index node k's traffic uses on rail tok: for this node the published port's
 * RoCE v2 GID of the probed address; for a peer the index its announcement gave for its
 * address on a working network of that port (lib/candidates fill_rdma). -1: the rail is
 * not RoCE there (IB ignores NCCL_IB_GID_INDEX); -2: RoCE but the index is not known
 * (none announced: an older daemon, or no RoCE v2 GID of that address); -3: two of the
 * port's addresses on the job's networks disagree. */
static int rail_gid(const struct ctx *c, size_t k, const char *tok)
{
	char t[TOK_MAX];
	int g = -1;

	if (k == 0) {
		for (size_t i = 0; i < c->out->n_hcas; i++) {
			const struct npf_hca *h = &c->out->hcas[i];

			snprintf(t, sizeof(t), "%s:%d", h->dev, h->port);
			if (strcmp(t, tok) == 0 && h->link_layer == NPF_LL_ETHERNET)
				return h->gid_index >= 0 ? h->gid_index : -2;
		}
		return -1;
	}
	for (size_t j = 0; j < c->chk->nodes[k].n_cands; j++) {
		const struct npf_candidate *cd = &c->chk->nodes[k].cands[j];
		bool on_job = false;

		snprintf(t, sizeof(t), "%.*s:%d", NPF_NAME_MAX - 1, cd->rdma_dev, cd->rdma_port);
		if (strcmp(t, tok) != 0 || cd->rdma_ll != NPF_LL_ETHERNET || !addr_valid(&cd->addr))
			continue;
		for (size_t n = 0; n < c->n_nets && !on_job; n++)
			on_job = c->nets[n].state == EST_WORKS && dec_is_rail(c, n) &&
				 in_net(&cd->addr, &c->nets[n]);
		if (!on_job)
			continue;
		if (!cd->has_gid)
			return -2;
		if (g >= 0 && g != cd->gid_index)
			return -3;
		g = cd->gid_index;
	}
	return g == -1 ? -2 : g;
}

/* NCCL_IB_GID_INDEX / UCX_IB_GID_INDEX job-wide: one index holds on every node only when
 * every node's RoCE rails carry the job's address at that same index (then it is right
 * for every NCCL version, as per node: ncclIbGetGidIndex honours an explicit index, NCCL
 * <= 2.20 uses it on every port; UCX uses an explicit UCX_IB_GID_INDEX as is,
 * uct_ib_iface_init_roce_gid_info). Otherwise both leave the job-wide environment with a
 * note: NCCL >= 2.21.5 still finds each port's GID itself, older NCCL does not, and the
 * per-node environment keeps each node's own index. */
static void gid_agreement(const struct ctx *c, const struct tokset *rails, int *want, char *why,
			  size_t wlen)
{
	int g;
	size_t other = 0;

	*want = -1;
	why[0] = '\0';
	for (size_t k = 0; k < c->chk->n_nodes && !why[0]; k++) {
		for (size_t i = 0; i < rails[k].n && !why[0]; i++) {
			g = rail_gid(c, k, rails[k].t[i]);
			if (g == -1)
				continue;
			if (g < 0) {
				bfmt(why, wlen, "no GID index of the job's address is known for %s on %s",
				     node_name(c, (int)k), rails[k].t[i]);
			} else if (*want >= 0 && g != *want) {
				bfmt(why, wlen,
				     "the job's address is at GID index %d on %s (%s) but %d on %s",
				     g, node_name(c, (int)k), rails[k].t[i], *want,
				     node_name(c, (int)other));
			} else if (*want < 0) {
				*want = g;
				other = k;
			}
		}
	}
}

/* The facts the job-wide rules share, gathered once per environment. */
struct jw {
	struct tokset *names;  /* [n_nodes] every interface name a node is known by */
	struct tokset *chosen; /* [n_nodes] each node's interface on the chosen network */
	struct tokset *hw;     /* [n_nodes] the RDMA ports that work (node_rdma_sets) */
	struct tokset *hk;     /* [n_nodes] the RDMA ports known */
	struct tokset *rails;  /* [n_nodes] the rails every node has (rails_common) */
	struct tokset *ucx;    /* [n_nodes] UCX's devices: the rails, else the interface */
	struct tokset *uk;     /* [n_nodes] every UCX device name known */
	bool same_name;	       /* every node's interface has the same name */
	bool names_ok;	       /* every node announced an address on the chosen network */
	bool v6;
	bool ompi_done;	       /* dec_ompi_job_wide() decides the Open MPI rows together */
	bool gid_known;	       /* gid_want and gid_why are computed */
	int gid_want;	       /* the GID index every node's RoCE rails agree on, -1 none */
	char gid_why[160];     /* why they do not agree, "" when they do */
};

/* NCCL_IB_GID_INDEX / UCX_IB_GID_INDEX job-wide, one variable at a time (v): one index
 * holds on every node only when every node's RoCE rails carry the job's address at that
 * same index (then it is right for every NCCL version, as per node: ncclIbGetGidIndex
 * honours an explicit index, NCCL <= 2.20 uses it on every port; UCX uses an explicit
 * UCX_IB_GID_INDEX as is, uct_ib_iface_init_roce_gid_info). Otherwise the variable leaves
 * the job-wide environment with a note: NCCL >= 2.21.5 still finds each port's GID
 * itself, older NCCL does not, and the per-node environment keeps each node's own index. */
static void jw_gid(struct ctx *c, struct jw *j, char **vals, enum npf_var v)
{
	bool nccl = npf_var_info(v)->consumer == NPF_CONSUMER_NCCL;

	if (!j->gid_known)
		gid_agreement(c, j->rails, &j->gid_want, j->gid_why, sizeof(j->gid_why));
	j->gid_known = true;
	if (!vals[v])
		return;
	if (!j->gid_why[0]) {
		/* The same everywhere (or no RoCE rail): the per-node value stands when it
		 * is that index. */
		if (j->gid_want < 0)
			return;
		if (atoi(vals[v]) != j->gid_want) {
			dec_note(c, NPF_NOTE_JOB_WIDE, v, NULL, NULL,
				 "%s: no job-wide value: this node publishes %s, every "
				 "node's RoCE rails carry the job's address at index %d",
				 npf_var_name(v), vals[v], j->gid_want);
			dec_drop_var(vals, v);
			return;
		}
		dec_note(c, NPF_NOTE_JOB_WIDE, v, NULL, NULL,
			 "%s=%d job-wide: every node's RoCE rails carry the job's address "
			 "at GID index %d, so it holds for every %s version",
			 npf_var_name(v), j->gid_want, j->gid_want, nccl ? "NCCL" : "UCX");
		return;
	}
	if (nccl)
		dec_note(c, NPF_NOTE_GID_VERSIONS, v, NULL, NULL,
			 "%s: no job-wide value: %s; the job-wide environment holds "
			 "for NCCL >= 2.21.5 only (ncclIbGetGidIndex finds each port's GID), not "
			 "for NCCL <= 2.20 (index 0 on every port unless told): use the per-node "
			 "environment there",
			 npf_var_name(v), j->gid_why);
	else
		dec_note(c, NPF_NOTE_JOB_WIDE, v, NULL, NULL,
			 "%s: no job-wide value: %s; UCX then picks its own GID "
			 "(uct_ib_device_select_gid: the lowest RoCE v2 IPv4 GID first); the "
			 "per-node environment carries each node's index",
			 npf_var_name(v), j->gid_why);
	dec_drop_var(vals, v);
}

/* ---- the job-wide rules of the variable registry (enum npf_jw_rule), one per row -------- */

typedef void (*jw_fn)(struct ctx *c, struct jw *j, char **vals, enum npf_var v);

/* The per-node value already holds on every node (a family, a flag, the marker, MASTER_ADDR). */
static void jw_keep(struct ctx *c, struct jw *j, char **vals, enum npf_var v)
{
	(void)c;
	(void)j;
	(void)vals;
	(void)v;
}

static void jw_nccl_ifnames(struct ctx *c, struct jw *j, char **vals, enum npf_var v)
{
	if (!j->names_ok)
		dec_drop_var(vals, v);
	else if (vals[v])
		jw_exact(c, vals, v, JW_SOCKET, j->chosen, j->names, NCCLMATCH_SOCKET_MAX);
}

static void jw_nccl_hcas(struct ctx *c, struct jw *j, char **vals, enum npf_var v)
{
	if (!j->names_ok)
		dec_drop_var(vals, v);
	else if (dec_var_wanted(c, v))
		jw_hcas(c, vals, j->hw, j->hk, j->rails);
}

static void jw_exact_union(struct ctx *c, struct jw *j, char **vals, enum npf_var v)
{
	if (!j->names_ok)
		dec_drop_var(vals, v);
	else if (vals[v])
		jw_exact(c, vals, v, JW_EXACT, j->ucx, j->uk, SIZE_MAX);
}

/* Gloo and TensorPipe take one exact name that must exist on the node (TensorPipe falls
 * back to 127.0.0.1 without it). */
static void jw_one_name(struct ctx *c, struct jw *j, char **vals, enum npf_var v)
{
	const struct npf_var_info *vi = npf_var_info(v);

	if (vals[v] && j->names_ok && !j->same_name)
		dec_note(c, NPF_NOTE_JOB_WIDE, v, NULL, NULL,
			 "%s: no job-wide value: the nodes use different interface "
			 "names and %s needs one that exists on each node",
			 vi->name, vi->consumer == NPF_CONSUMER_GLOO ? "Gloo" : "TensorPipe");
	if (!j->names_ok || !j->same_name)
		dec_drop_var(vals, v);
}

/* The Open MPI rows are decided together (dec_ompi_job_wide, jobwide_ompi.c), at the
 * first of them. */
static void jw_ompi(struct ctx *c, struct jw *j, char **vals, enum npf_var v)
{
	if (!j->names_ok && j->v6)
		dec_drop_var(vals, v);
	else if (!j->ompi_done)
		dec_ompi_job_wide(c, vals, j->same_name);
	j->ompi_done = true;
}

static const jw_fn jw_rules[] = {
    [NPF_JW_SAME] = jw_keep,
    [NPF_JW_NCCL_IFNAMES] = jw_nccl_ifnames,
    [NPF_JW_NCCL_HCAS] = jw_nccl_hcas,
    [NPF_JW_EXACT_UNION] = jw_exact_union,
    [NPF_JW_ONE_NAME] = jw_one_name,
    [NPF_JW_OMPI] = jw_ompi,
    [NPF_JW_PER_NODE_GID] = jw_gid,
    [NPF_JW_NODE] = jw_keep,
    [NPF_JW_MASTER] = jw_keep,
};

_Static_assert(sizeof(jw_rules) / sizeof(jw_rules[0]) == NPF_JW__COUNT,
	       "a job-wide rule without a function");

int dec_job_wide(struct ctx *c, char **vals)
{
	const struct npf_recommendation *out = c->out;
	size_t nn = c->chk->n_nodes;
	struct jw j = {
	    .names = calloc(nn, sizeof(*j.names)),
	    .chosen = calloc(nn, sizeof(*j.chosen)),
	    .hw = calloc(nn, sizeof(*j.hw)),
	    .hk = calloc(nn, sizeof(*j.hk)),
	    .rails = calloc(nn, sizeof(*j.rails)),
	    .ucx = calloc(nn, sizeof(*j.ucx)),
	    .uk = calloc(nn, sizeof(*j.uk)),
	    .same_name = true,
	    .names_ok = true,
	    .v6 = c->nets[c->chosen].prefix.family == AF_INET6,
	};
	int r = -ENOMEM;

	if (!j.names || !j.chosen || !j.hw || !j.hk || !j.rails || !j.ucx || !j.uk)
		goto out;
	for (size_t k = 0; k < nn; k++) {
		if ((r = node_known_names(c, k, &j.names[k])) < 0 ||
		    (r = tok_add(&j.chosen[k], out->nodes[k].ifname)) < 0 ||
		    (r = node_rdma_sets(c, k, &j.hw[k], &j.hk[k])) < 0)
			goto out;
		j.same_name = j.same_name && strcmp(out->nodes[k].ifname, out->nodes[0].ifname) == 0;
	}
	if ((r = rails_common(c, j.hw, j.hk, j.rails)) < 0)
		goto out;
	for (size_t k = 0; k < nn; k++) {
		for (size_t i = 0; i < j.hk[k].n && r == 0; i++)
			r = tok_add(&j.uk[k], j.hk[k].t[i]);
		for (size_t i = 0; i < j.names[k].n && r == 0; i++)
			r = tok_add(&j.uk[k], j.names[k].t[i]);
		for (size_t i = 0; i < j.rails[k].n && r == 0; i++)
			r = tok_add(&j.ucx[k], j.rails[k].t[i]);
		if (r == 0 && j.rails[0].n == 0)
			r = tok_add(&j.ucx[k], out->nodes[k].ifname);
		if (r < 0)
			goto out;
	}
	for (size_t k = 0; k < nn && j.names_ok; k++)
		if (!out->nodes[k].ifname[0]) {
			dec_note(c, NPF_NOTE_JOB_WIDE, NPF_VAR_NONE, node_name(c, (int)k), NULL,
				 "%s announced no address on %s: no job-wide interface names",
				 node_name(c, (int)k), out->cidr);
			j.names_ok = false;
		}
	r = 0;
	/* One row of the registry at a time: its job-wide rule, as publish.c runs the
	 * per-node ones. */
	for (int v = 0; v < NPF_VAR__COUNT && !c->err; v++)
		jw_rules[npf_var_info((enum npf_var)v)->jw](c, &j, vals, (enum npf_var)v);
	if (vals[NPF_VAR_NCCL_IB_ADDR_FAMILY] || vals[NPF_VAR_NCCL_IB_ADDR_RANGE])
		dec_note(
		    c, NPF_NOTE_JOB_WIDE, NPF_VAR_NCCL_IB_ADDR_RANGE, NULL, NULL,
		    "NCCL_IB_ADDR_FAMILY/NCCL_IB_ADDR_RANGE follow from the chosen network, but "
		    "only this node's GID tables were checked");
	if (c->err)
		r = c->err;
out:
	tok_free_all(j.names, nn);
	tok_free_all(j.chosen, nn);
	tok_free_all(j.hw, nn);
	tok_free_all(j.hk, nn);
	tok_free_all(j.rails, nn);
	tok_free_all(j.ucx, nn);
	tok_free_all(j.uk, nn);
	return r;
}
