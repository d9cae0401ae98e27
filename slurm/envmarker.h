/* SPDX-License-Identifier: MIT */
/* Per-node values stay per node: which of our variables a task gets, given what it inherited. */
#ifndef NPF_SLURM_ENVMARKER_H
#define NPF_SLURM_ENVMARKER_H

#include <stdbool.h>
#include <stddef.h>

#include "envreply.h"

/* Published with every environment: the node whose daemon produced the values. */
#define NPF_ENVMARKER_NODE "NETPREFLIGHT_NODE"
/* Set next to it by the TaskProlog and the SPANK plugin: the comma-separated names they
 * set from the daemon on that node (not the user's own values, which they kept). */
#define NPF_ENVMARKER_VARS "NETPREFLIGHT_VARS"

enum npf_envop_kind {
	NPF_ENVOP_SET,	/* set name=value, replacing what is there */
	NPF_ENVOP_UNSET /* remove name: another node's value we have no replacement for */
};

struct npf_envop {
	enum npf_envop_kind kind;
	char name[NPF_ENVREPLY_NAME_MAX];
	char value[NPF_ENVREPLY_VALUE_MAX]; /* SET only */
};

struct npf_envplan {
	struct npf_envop *ops; /* owned, n_ops entries, in reply order, markers last */
	size_t n_ops;
	size_t n_kept;				 /* inherited values left alone (the user's own) */
	size_t n_replaced;			 /* another node's values replaced or removed */
	char other_node[NPF_ENVREPLY_VALUE_MAX]; /* the node the inherited marker names when
						  * it is not us, else "" */
};

/* Looks a variable up in the task's environment: its value or NULL when unset. The
 * string need only stay valid until the next call. */
typedef const char *(*npf_envlookup_fn)(const char *name, void *userdata);

/*
 * Plans the task's environment. env is the daemon's validated reply (NULL or without
 * variables when there is nothing verified), self this node's name (used for the marker
 * when the reply carries none), get the task's environment.
 *
 * A variable the task already has is kept, as a user's explicit setting, unless the
 * inherited NETPREFLIGHT_NODE names another node: then it is that node's value, carried by
 * srun --export=ALL or an mpirun inside the allocation, and is replaced by ours (or
 * removed when we publish nothing for it). With NETPREFLIGHT_VARS only the names listed
 * there count as that node's; without it every one of our names does. The rules are the
 * table in envmarker.c. Returns 0 (out owns its ops: npf_envplan_clear), -EINVAL, -ENOMEM.
 */
int npf_envmarker_plan(const struct npf_envreply *env, const char *self, npf_envlookup_fn get,
		       void *userdata, struct npf_envplan *out);

/* Frees out->ops and zeroes out; safe on a zeroed struct. */
void npf_envplan_clear(struct npf_envplan *out);

#endif
