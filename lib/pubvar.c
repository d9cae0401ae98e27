// SPDX-License-Identifier: MIT
/* The registry rows as data (lib/pubvar.h). */
#include "pubvar.h"

#include <errno.h>
#include <string.h>

static const struct npf_var_info rows[NPF_VAR__COUNT] = {
#define NPF_VAR_ROW(id, nm, gt, cons, wi, rule, jwr, mdl, un)                                  \
	[NPF_VAR_##id] = {.name = nm,                                                              \
			  .gate = NPF_GATE_##gt,                                                   \
			  .bit = NPF_PUBVAR_##id,                                                               \
			  .consumer = NPF_CONSUMER_##cons,                                         \
			  .with = NPF_VAR_##wi,                                                    \
			  .jw = NPF_JW_##jwr,                                                      \
			  .model = NPF_CM_##mdl,                                                   \
			  .unset = un},
    NPF_VAR_TABLE(NPF_VAR_ROW)
#undef NPF_VAR_ROW
};

const struct npf_var_info *npf_var_info(enum npf_var v)
{
	if ((unsigned int)v >= NPF_VAR__COUNT)
		return NULL;
	return &rows[v];
}

const char *npf_var_name(enum npf_var v)
{
	const struct npf_var_info *i = npf_var_info(v);

	return i ? i->name : NULL;
}

int npf_var_parse(const char *name)
{
	for (int v = 0; name && v < NPF_VAR__COUNT; v++)
		if (strcmp(rows[v].name, name) == 0)
			return v;
	return -EINVAL;
}

const char *npf_consumer_name(enum npf_consumer c)
{
	static const char *const names[NPF_CONSUMER__COUNT] = {
	    [NPF_CONSUMER_NCCL] = "nccl",
	    [NPF_CONSUMER_GLOO] = "gloo",
	    [NPF_CONSUMER_TENSORPIPE] = "tensorpipe",
	    [NPF_CONSUMER_UCX] = "ucx",
	    [NPF_CONSUMER_OMPI] = "openmpi",
	    [NPF_CONSUMER_PRRTE] = "prrte",
	    [NPF_CONSUMER_TORCH] = "pytorch",
	    [NPF_CONSUMER_NETPREFLIGHT] = "netpreflight",
	};

	return (unsigned int)c < NPF_CONSUMER__COUNT ? names[c] : "?";
}
