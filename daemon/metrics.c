// SPDX-License-Identifier: MIT
/* Publication of the Prometheus textfile (atomic, durable: lib/sys/fileio). */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"

int metrics_write(const char *dir, const char *text)
{
	if (!dir || !*dir || !text)
		return -EINVAL;
	/* The service runs with UMask=0077, node_exporter as another user: 0644. The
	 * temporary name does not end in ".prom", so node_exporter never reads a half-written
	 * file. */
	return npf_atomic_write(dir, METRICS_FILE_NAME, text, strlen(text), 0644);
}

int metrics_publish(const char *dir, const struct npf_check *chk,
		    const struct npf_recommendation *rec, const struct npf_metrics_counters *ctr)
{
	char *text = NULL;
	int r;

	if (!dir || !*dir)
		return 0;
	r = npf_metrics_render(chk, rec, ctr, &text);
	if (r < 0) {
		log_errc(r, "metrics: cannot render");
		return r;
	}
	r = metrics_write(dir, text);
	free(text);
	if (r < 0) {
		log_errc(r, "metrics: cannot write %s/%s", dir, METRICS_FILE_NAME);
		return r;
	}
	return 0;
}
