/* SPDX-License-Identifier: MIT */
/* Where a job's node list and job id come from, per launcher (docs/run.md): Slurm, PBS, LSF,
 * hostfiles. Pure: the environment comes through a lookup, files as bytes. */
#ifndef NPF_LAUNCHER_H
#define NPF_LAUNCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"

/* How a launcher writes its node list. */
enum npf_nodes_form {
	NPF_NODES_HOSTLIST, /* the variable holds a Slurm hostlist expression */
	NPF_NODES_FILE,	    /* the variable names a file: one host per line (per slot), or
			     * an mpirun/DeepSpeed "host slots=N" or Hydra "host:N" line */
	NPF_NODES_MCPU,	    /* the variable holds "hostA 4 hostB 4": name, slot count */
};

/* What a job's environment says about it. */
struct npf_launch {
	const char *launcher;	    /* "slurm", "pbs", "lsf" (static) */
	enum npf_nodes_form form;
	const char *nodes_var;	    /* the variable the node list came from (static) */
	char *nodes;		    /* owned: its value (an expression, a file's path, ...) */
	char job[NPF_API_JOB_MAX];  /* the job tag every node derives alike (npf_launcher_tag) */
};

/* Looks a variable up: its value or NULL when unset. The string need only stay valid
 * until the next call. */
typedef const char *(*npf_launcher_getenv_fn)(const char *name, void *userdata);

/*
 * Finds the launcher whose job id and node list are both set (the table in launcher.c,
 * first row wins) and fills out. Returns 0 (out->nodes owned: npf_launch_clear), -ENOENT
 * when no launcher's pair is set, -EINVAL when the job id cannot make a tag
 * (npf_launcher_tag), -ENOMEM. out is zeroed first.
 */
int npf_launcher_detect(npf_launcher_getenv_fn get, void *userdata, struct npf_launch *out);

/* Frees out->nodes and zeroes out; safe on a zeroed struct. */
void npf_launch_clear(struct npf_launch *out);

/*
 * The job tag of a job id: every character outside [A-Za-z0-9._-] becomes '_' (a PBS
 * array job "123[4].srv" -> "123_4_.srv"), then ".r<restart>" when restart is all digits
 * (a requeued Slurm job: each start its own job check, as the Prolog does). restart may
 * be NULL. Returns 0, -EINVAL for an empty id or a tag of NPF_API_JOB_MAX or more bytes.
 */
int npf_launcher_tag(const char *job_id, const char *restart, char *out, size_t len);

/* The probe port of a standalone run (docs/run.md): every node of a job derives the
 * same one from the tag alone, and two jobs on the same nodes get different ones. A tag that
 * starts with a number (Slurm, PBS, LSF job ids: consecutive) takes it modulo the span, so
 * jobs whose ids differ by less than NPF_RUN_PORT_SPAN never collide; any other tag is
 * hashed. Below Linux's ephemeral range (32768-60999), where outgoing connections take
 * their local ports. */
#define NPF_RUN_PORT_BASE 20000u
#define NPF_RUN_PORT_SPAN 12000u
uint16_t npf_launcher_port(const char *tag);

/*
 * Parses a node list of the given form from len bytes (not NUL-terminated; a NUL inside
 * is an error). Names keep the order of their first appearance, duplicates (one line per
 * slot) are dropped. FILE: '#' starts a comment, blank lines are skipped, the first word
 * of a line is the host (a Hydra ":N" suffix removed), the other words must be
 * "key=value" (slots=, max_slots=). Every name must pass npf_api_name_valid().
 *
 * Returns the number of names (>= 1). Ownership: *names is a new array of *n new strings
 * (free with npf_hostlist_free(*names, *n)). On failure *names is NULL, *n 0 and err
 * (errlen bytes, always terminated) says why with the line or word: -EINVAL for bad
 * input or no name at all, -E2BIG past NPF_HOSTLIST_MAX names, -ENOMEM.
 */
int npf_launcher_nodes(enum npf_nodes_form form, const char *buf, size_t len, char ***names,
		       size_t *n, char *err, size_t errlen);

#endif
