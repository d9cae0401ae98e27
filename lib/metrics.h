/* SPDX-License-Identifier: MIT */
/* Prometheus text exposition of the last check (node_exporter textfile collector). */
#ifndef NPF_METRICS_H
#define NPF_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "auth.h"
#include "check.h"
#include "recommend.h"

/* Interfaces rendered per check. Labels stay bounded by the node's own interface
 * count; peers and job ids are never labels. Beyond the cap the rest is dropped and
 * netpreflight_metrics_interfaces_dropped says how many. */
#define NPF_METRICS_MAX_IFACES 64

/* Daemon-lifetime counters; the daemon owns them, the renderer only prints. */
struct npf_metrics_counters {
	uint64_t checks[NPF_VERDICT__COUNT]; /* completed checks by enum npf_verdict (index) */
	uint64_t check_errors;   /* checks the probe engine could not run */
	uint64_t start_unix_ms;  /* when the daemon started, 0 = unknown (not rendered) */
	bool auth_reported;      /* render netpreflight_probe_authenticated */
	bool authenticated;      /* a cluster key is configured */
	/* Per configured cluster key (key file order): its public id and the inbound
	 * sessions that used it (netpreflight_probe_key_sessions_total). */
	size_t n_keys;
	uint8_t key_ids[NPF_AUTH_MAX_KEYS][NPF_AUTH_ID_LEN];
	uint64_t key_sessions[NPF_AUTH_MAX_KEYS];
	bool probe_reported;	 /* render the probe engine's counters below */
	uint64_t data_impostors; /* data-port connections dropped before a valid DATA_AUTH */
};

/* Renders the metrics as Prometheus text exposition format 0.0.4 (no sample
 * timestamps: node_exporter rejects files that carry any). Every argument may be
 * NULL: without chk only build info and counters are rendered; rec (the decision
 * for chk) adds the recommendation info and NCCL's default pick, and with chk the
 * verdict it reached (the only verdict: without rec no verdict series is rendered).
 * On success *out is a NUL-terminated string owned by the caller
 * (free()). Returns its length, -EINVAL when out is NULL or chk is inconsistent
 * (a link or node index out of range), or -ENOMEM. */
int npf_metrics_render(const struct npf_check *chk, const struct npf_recommendation *rec,
		       const struct npf_metrics_counters *ctr, char **out);

#endif
