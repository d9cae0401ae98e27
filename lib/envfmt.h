/* SPDX-License-Identifier: MIT */
/* Renders a recommendation for its consumers: eval-safe shell, Slurm TaskProlog output,
 * /etc/nccl.conf lines, and the JSON object of the local API. */
#ifndef NPF_ENVFMT_H
#define NPF_ENVFMT_H

#include <jansson.h>
#include <stddef.h>

#include "recommend.h"

enum npf_envfmt {
	NPF_ENVFMT_SHELL = 0,  /* "export NAME='value'" + "# ..." comments; safe to eval */
	NPF_ENVFMT_TASKPROLOG, /* "export NAME=value" only, as slurmstepd reads it (no quoting) */
	NPF_ENVFMT_NCCL_CONF,  /* "NAME=value" for NCCL_* only + "# ..." comments */
};

/* "shell" | "taskprolog" | "nccl-conf" -> the enum, or -EINVAL. */
int npf_envfmt_parse(const char *name);

/* Renders rec. Variables only exist when the verdict is ok; other verdicts render
 * comments only (nothing at all for taskprolog). A variable the format cannot carry
 * safely (taskprolog/nccl-conf values with whitespace or control characters, names
 * that are not identifiers, non-NCCL names in nccl-conf) is left out and counted in
 * *n_omitted (may be NULL). On success *out is a malloc'd NUL-terminated string owned
 * by the caller (free()). Returns its length, or -EINVAL / -ENOMEM. */
int npf_env_format(const struct npf_recommendation *rec, enum npf_envfmt fmt, char **out,
		   size_t *n_omitted);

/* The recommendation as a JSON object (shape in docs/decision.md). Returns a new
 * reference owned by the caller (json_decref), or NULL on allocation failure. */
json_t *npf_recommendation_to_json(const struct npf_recommendation *rec);

#endif
