/* SPDX-License-Identifier: MIT */
/* The SPANK plugin's exchange with netpreflightd: the "env" request and its reply, validated. */
#ifndef NPF_SLURM_ENVREPLY_H
#define NPF_SLURM_ENVREPLY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define NPF_ENVREPLY_MAX_VARS 64
#define NPF_ENVREPLY_NAME_MAX 64
#define NPF_ENVREPLY_VALUE_MAX 1024

struct npf_envreply_var {
	char name[NPF_ENVREPLY_NAME_MAX];
	char value[NPF_ENVREPLY_VALUE_MAX];
};

struct npf_envreply {
	char verdict[16];  /* a verdict name (npf_verdict_parse): "ok", "degraded", ... */
	char summary[256]; /* one human line, may be "" */
	struct npf_envreply_var *vars; /* owned, n_vars entries */
	size_t n_vars;
};

/* {"version":1,"request":"env","peers":[...],"cached":true}: the environment for the
 * job's node set from the daemon's cache, never a new probe. Takes the reference
 * to peers (a JSON array of node names). Returns a new reference or NULL (ENOMEM). */
json_t *npf_envreply_request(json_t *peers);

/* Validates a decoded reply: an {"ok":true} reply of our API version with a
 * "verdict" string and a "variables" array of {"name","value"} (or an object
 * NAME -> value), either at the top level or inside an "env" object. Names must
 * be shell identifiers, values printable without newlines (they end up in a
 * process environment and, for the TaskProlog, in a line protocol), at most
 * NPF_ENVREPLY_MAX_VARS of them. On success out owns its vars (free with
 * npf_envreply_clear). Returns 0, -EREMOTEIO when the daemon answered an error,
 * -EBADMSG for a malformed reply (err says why), -ENOMEM. */
int npf_envreply_parse(const json_t *reply, struct npf_envreply *out, char *err, size_t errlen);

/* True for a shell identifier shorter than NPF_ENVREPLY_NAME_MAX. */
bool npf_envreply_name_ok(const char *s);

/* Frees out->vars and zeroes out; safe on a zeroed struct. */
void npf_envreply_clear(struct npf_envreply *out);

#endif
