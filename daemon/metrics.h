/* SPDX-License-Identifier: MIT */
/* Publishing the Prometheus metrics: atomic textfile write for node_exporter. */
#ifndef NPF_DAEMON_METRICS_H
#define NPF_DAEMON_METRICS_H

/* The renderer (npf_metrics_render, struct npf_metrics_counters). A quoted include of
 * "metrics.h" from daemon/ finds this file first, so it pulls in lib's by path. */
#include "../lib/metrics.h"

/* The file node_exporter reads; it only collects names ending in ".prom". */
#define METRICS_FILE_NAME "netpreflight.prom"

/* Replaces <dir>/netpreflight.prom with text atomically: writes a temporary file
 * (name not ending in .prom, so a half-written file is never collected) in the
 * same directory, fsyncs it, renames it over the old file and fsyncs the
 * directory. The file is mode 0644 whatever the umask, because node_exporter
 * runs as another user. Returns 0 or -errno (the temporary file is removed on
 * failure). Never logs: the caller decides how loud a failure is. */
int metrics_write(const char *dir, const char *text);

/* Renders (npf_metrics_render) and writes (metrics_write) in one call; a NULL or
 * empty dir means metrics are off and returns 0. Logs a warning on failure and
 * returns -errno. */
int metrics_publish(const char *dir, const struct npf_check *chk,
		    const struct npf_recommendation *rec, const struct npf_metrics_counters *ctr);

#endif
