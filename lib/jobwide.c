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
	char (*n)[TOK_MAX];

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
	JW_IB,     /* NCCL_IB_HCA "=dev:port,..." */
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
	struct tokset u = { 0 };
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
		dec_add_note(c, "%s: no job-wide value: %zu distinct names exceed the %zu NCCL reads",
			 name, u.n, max);
		goto out;
	}
	/* "=" makes every NCCL token an exact match; plain lists are exact by nature. */
	snprintf(value, sizeof(value), "%s", kind == JW_EXACT ? "" : "=");
	for (size_t i = 0, skip = strlen(value); i < u.n; i++)
		if (!list_append(value + skip, sizeof(value) - skip, u.t[i])) {
			dec_add_note(c, "%s: no job-wide value: the list is too long", name);
			goto out;
		}
	if (kind != JW_EXACT &&
	    ncclmatch_parse(value, kind == JW_IB ? NCCLMATCH_IB : NCCLMATCH_SOCKET, &l) < 0) {
		dec_add_note(c, "%s: no job-wide value: '%s' does not parse as NCCL reads it", name,
			 value);
		goto out;
	}
	for (size_t k = 0; k < nn; k++) {
		const char *node = node_name(c, (int)k);

		for (size_t i = 0; i < sets[k].n; i++)
			if (!tok_has(&known[k], sets[k].t[i]) ||
			    !jw_selects(&l, kind, &u, sets[k].t[i])) {
				dec_add_note(c, "%s: no job-wide value: '%s' would miss %s on %s", name,
					 value, sets[k].t[i], node);
				goto out;
			}
		for (size_t i = 0; i < known[k].n; i++)
			if (!tok_has(&sets[k], known[k].t[i]) &&
			    jw_selects(&l, kind, &u, known[k].t[i])) {
				dec_add_note(c,
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
		/* A peer's port counts when it sits on a network that works here. */
		for (size_t n = 0; n < c->n_nets; n++)
			if (c->nets[n].state == EST_WORKS && in_net(&cd->addr, &c->nets[n])) {
				r = tok_add(works, tok);
				break;
			}
	}
	return r;
}

int dec_job_wide(struct ctx *c, char **vals)
{
	const struct npf_recommendation *out = c->out;
	size_t nn = c->chk->n_nodes;
	struct tokset *names = calloc(nn, sizeof(*names));
	struct tokset *chosen = calloc(nn, sizeof(*chosen));
	struct tokset *hw = calloc(nn, sizeof(*hw));
	struct tokset *hk = calloc(nn, sizeof(*hk));
	struct tokset *ucx = calloc(nn, sizeof(*ucx));
	struct tokset *uk = calloc(nn, sizeof(*uk));
	bool same_name = true;
	int r = -ENOMEM;

	if (!names || !chosen || !hw || !hk || !ucx || !uk)
		goto out;
	for (size_t k = 0; k < nn; k++) {
		if ((r = node_known_names(c, k, &names[k])) < 0 ||
		    (r = tok_add(&chosen[k], out->nodes[k].ifname)) < 0 ||
		    (r = node_rdma_sets(c, k, &hw[k], &hk[k])) < 0)
			goto out;
		for (size_t i = 0; i < hk[k].n && r == 0; i++)
			r = tok_add(&uk[k], hk[k].t[i]);
		for (size_t i = 0; i < names[k].n && r == 0; i++)
			r = tok_add(&uk[k], names[k].t[i]);
		for (size_t i = 0; i < hw[k].n && r == 0; i++)
			r = tok_add(&ucx[k], hw[k].t[i]);
		if (r == 0 && hw[k].n == 0)
			r = tok_add(&ucx[k], out->nodes[k].ifname);
		if (r < 0)
			goto out;
		same_name = same_name && strcmp(out->nodes[k].ifname, out->nodes[0].ifname) == 0;
	}
	r = 0;
	for (size_t k = 0; k < nn; k++)
		if (!out->nodes[k].ifname[0]) {
			dec_add_note(c, "%s announced no address on %s: no job-wide interface names",
				 node_name(c, (int)k), out->cidr);
			dec_drop_var(vals, NPF_VAR_NCCL_SOCKET_IFNAME);
			dec_drop_var(vals, NPF_VAR_GLOO_SOCKET_IFNAME);
			dec_drop_var(vals, NPF_VAR_TP_SOCKET_IFNAME);
			dec_drop_var(vals, NPF_VAR_UCX_NET_DEVICES);
			dec_drop_var(vals, NPF_VAR_NCCL_IB_HCA);
			/* On IPv6 Open MPI's value is a name too (ompi_if_include). */
			if (c->nets[c->chosen].prefix.family == AF_INET6) {
				dec_drop_var(vals, NPF_VAR_OMPI_MCA_BTL_TCP_IF_INCLUDE);
				dec_drop_var(vals, NPF_VAR_OMPI_MCA_OOB_TCP_IF_INCLUDE);
			}
			goto gid;
		}
	if (vals[NPF_VAR_NCCL_SOCKET_IFNAME])
		jw_exact(c, vals, NPF_VAR_NCCL_SOCKET_IFNAME, JW_SOCKET, chosen, names,
			 NCCLMATCH_SOCKET_MAX);
	if (dec_var_wanted(c, NPF_VAR_NCCL_IB_HCA))
		jw_exact(c, vals, NPF_VAR_NCCL_IB_HCA, JW_IB, hw, hk, NCCLMATCH_IB_MAX);
	if (vals[NPF_VAR_UCX_NET_DEVICES])
		jw_exact(c, vals, NPF_VAR_UCX_NET_DEVICES, JW_EXACT, ucx, uk, SIZE_MAX);
	/* Gloo and TensorPipe take one exact name that must exist on the node. */
	if (!same_name) {
		if (vals[NPF_VAR_GLOO_SOCKET_IFNAME])
			dec_add_note(c, "GLOO_SOCKET_IFNAME: no job-wide value: the nodes use "
				    "different interface names and Gloo needs one that exists on "
				    "each node");
		if (vals[NPF_VAR_TP_SOCKET_IFNAME])
			dec_add_note(c, "TP_SOCKET_IFNAME: no job-wide value: the nodes use different "
				    "interface names and TensorPipe needs one that exists on each "
				    "node");
		dec_drop_var(vals, NPF_VAR_GLOO_SOCKET_IFNAME);
		dec_drop_var(vals, NPF_VAR_TP_SOCKET_IFNAME);
	}
	dec_ompi_job_wide(c, vals, same_name);
gid:
	if (vals[NPF_VAR_NCCL_IB_GID_INDEX]) {
		dec_add_note(c, "NCCL_IB_GID_INDEX: no job-wide value: GID indices are per node and "
			    "the peers' GID tables are not known here");
		dec_drop_var(vals, NPF_VAR_NCCL_IB_GID_INDEX);
	}
	if (vals[NPF_VAR_NCCL_IB_ADDR_FAMILY] || vals[NPF_VAR_NCCL_IB_ADDR_RANGE])
		dec_add_note(c, "NCCL_IB_ADDR_FAMILY/NCCL_IB_ADDR_RANGE follow from the chosen "
			    "network, but only this node's GID tables were checked");
	if (c->err)
		r = c->err;
out:
	tok_free_all(names, nn);
	tok_free_all(chosen, nn);
	tok_free_all(hw, nn);
	tok_free_all(hk, nn);
	tok_free_all(ucx, nn);
	tok_free_all(uk, nn);
	return r;
}

