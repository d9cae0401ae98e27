// SPDX-License-Identifier: MIT
/* Helpers every sub-command shares: error lines, argument parsing (seconds, hostlists).
 * Depends on no command, so no call cycle runs through it (tests/support/callcycles.py). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cli.h"
#include "hostlist.h"

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("netpreflight: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_daemon_err(const struct npf_api_error *aerr)
{
	cli_err("daemon: %s (%s)", aerr->message, npf_api_errcode_name(aerr->code));
	if (aerr->code == NPF_API_E_FOREIGN_NETNS)
		cli_err("this process is in another network namespace than netpreflightd, so "
			"the host's interface names and addresses do not apply here; run the "
			"container with the host network (docs/containers.md)");
}

int cli_parse_seconds(const char *s, uint32_t *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || (*end && strcmp(end, "s") != 0) || !isfinite(v))
		return -EINVAL;
	v *= 1000.0;
	if (v < NPF_API_TIMEOUT_MIN_MS || v > NPF_API_TIMEOUT_MAX_MS)
		return -ERANGE;
	*ms = (uint32_t)v;
	return 0;
}

int cli_hostlist_peers(const char *nodes, struct npf_api_request *req)
{
	char err[160], **names = NULL;
	size_t n = 0;
	int r;

	r = npf_hostlist_expand(nodes, &names, &n, err, sizeof(err));
	if (r < 0) {
		cli_err("bad hostlist '%s': %s", nodes, err[0] ? err : strerror(-r));
		return r;
	}
	if (n > NPF_API_MAX_PEERS) {
		cli_err("%zu nodes: at most %u per check", n, NPF_API_MAX_PEERS);
		npf_hostlist_free(names, n);
		return -E2BIG;
	}
	req->peers = calloc(n, sizeof(*req->peers));
	if (!req->peers) {
		npf_hostlist_free(names, n);
		return -ENOMEM;
	}
	req->n_peers = 0;
	for (size_t i = 0; i < n; i++)
		snprintf(req->peers[req->n_peers++], NPF_NAME_MAX, "%s", names[i]);
	npf_hostlist_free(names, n);
	return 0;
}

int cli_set_job(const char *job, struct npf_api_request *req)
{
	if (!npf_api_job_valid(job)) {
		cli_err("--job '%s': 1..%d characters of [A-Za-z0-9._-]", job, NPF_API_JOB_MAX - 1);
		return -EINVAL;
	}
	memcpy(req->job, job, strlen(job) + 1);
	return 0;
}
