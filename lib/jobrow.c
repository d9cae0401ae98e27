// SPDX-License-Identifier: MIT
/* This node's row of a job check (wire message ROW): the pair states of the decision's
 * networks, through the same evaluation as npf_recommend() (docs/decision.md §10). */
#include "jobrow.h"

#include "decide.h"
#include "jobrows.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char pair_char(enum npf_pair_state s)
{
	switch (s) {
	case NPF_PAIR_OK: return 'o';
	case NPF_PAIR_FAIL: return 'f';
	case NPF_PAIR_OUTSIDE: return '-';
	case NPF_PAIR_UNKNOWN: break;
	}
	return 'u';
}

int npf_recommend_row(const struct npf_inventory *inv, const struct npf_check *chk,
		      const struct npf_policy *pol, const char *const *hostlist, size_t n,
		      uint64_t instance, struct npf_msg_row *out)
{
	struct npf_recommendation scratch = { 0 };
	struct ctx c = { 0 };
	size_t self = n;
	int *at = NULL, r;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!inv || !chk || chk->n_nodes == 0 || !chk->nodes || !hostlist || n < 2 ||
	    n > NPF_WIRE_MAX_ROW_NODES || !instance)
		return -EINVAL;
	for (size_t j = 0; j < n; j++)
		if (hostlist[j] && strcmp(hostlist[j], chk->nodes[0].name) == 0)
			self = j;
	if (self == n || npf_job_id(hostlist, n, out->job) < 0)
		return -EINVAL;
	at = malloc(n * sizeof(*at));
	if (!at)
		return -ENOMEM;
	/* Hostlist position -> index in chk->nodes (-1: not in this node's evidence). */
	for (size_t j = 0; j < n; j++) {
		at[j] = -1;
		for (size_t k = 1; k < chk->n_nodes && j != self; k++)
			if (strcmp(chk->nodes[k].name, hostlist[j]) == 0)
				at[j] = (int)k;
	}
	r = dec_ctx_prepare(&c, inv, chk, pol, &scratch);
	if (r < 0)
		goto out;
	copy_str(out->node, sizeof(out->node), chk->nodes[0].name);
	out->instance = instance;
	out->index = (uint32_t)self;
	out->n_nodes = (uint32_t)n;
	for (size_t k = 0; k < c.n_nets && out->n_nets < NPF_WIRE_MAX_ROW_NETS; k++) {
		const struct net *net = &c.nets[k];
		struct npf_row_net *x = &out->nets[out->n_nets];
		bool multi;

		/* No address of ours there: absent from the row, fail for the job. */
		if (net->ifc < 0)
			continue;
		x->states = malloc(n + 1);
		if (!x->states) {
			r = -ENOMEM;
			goto out;
		}
		out->n_nets++;
		copy_str(x->key, sizeof(x->key), net->key);
		dec_net_row_keys(net, &x->rank, &x->quality);
		multi = dec_iface_multi(&c, (size_t)net->ifc);
		for (size_t j = 0; j < n; j++) {
			char detail[96];

			if (j == self)
				x->states[j] = '.';
			else if (at[j] < 0)
				x->states[j] = c.sparse ? '-' : 'u';
			else
				x->states[j] = pair_char(dec_pair(&c, (size_t)net->ifc, net, multi,
								  (size_t)at[j], detail, sizeof(detail))
								 .state);
		}
		x->states[n] = '\0';
	}
out:
	dec_ctx_free(&c);
	npf_recommendation_clear(&scratch);
	free(at);
	if (r < 0)
		npf_wire_row_clear(out);
	return r < 0 ? r : 0;
}
