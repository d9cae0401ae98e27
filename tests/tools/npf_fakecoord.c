// SPDX-License-Identifier: MIT
/* npf_fakecoord: a cluster-key holder that answers as a job's coordinator (issue 19,
 * netns.fakecoord). It serves the probe port on every address of the namespace it runs in
 * with the probe engine's own server (the real authenticated handshake, proving the key as
 * NODE), takes every ROW a participant sends it, and answers each with a forged
 * JOB_DECISION for that row's job (the job id and size copied from the row, so only the
 * participant's coordinator check can refuse it). It also answers probes as NODE, like any
 * daemon. It starts no check and connects nowhere.
 *
 *   npf_fakecoord KEYFILE NODE SECONDS VERDICT NET NODES REASON
 *     KEYFILE  the cluster key, or "-" for a cluster without one
 *     NODE     the name it proves the key as (its own node's, or the coordinator's)
 *     SECONDS  how long it serves (bounded: the test's cleanup never waits on it)
 *     VERDICT  ok | degraded | fail | unknown, the forged job verdict
 *     NET      the forged job network, e.g. "198.19.0.0/24"
 *     NODES    one character per hostlist node: '.' fine, 's' suspect, 'm' missing
 *     REASON   the forged reason line
 *
 * Prints "listening as NODE" once serving, then per ROW "row from N index I: answered"
 * (or "...: answer failed: WHY"). Exits 0 after SECONDS or SIGTERM, 2 on bad arguments. */
#include <errno.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "jobcheck.h"
#include "keyfile.h"
#include "model.h"
#include "netlink.h"
#include "probe.h"

#define PORT 7718

struct fake {
	struct npf_inventory inv; /* this namespace's interfaces: where it listens */
	struct npf_probe_ctx *ctx;
	struct npf_msg_job_decision d; /* the forgery; job and n_nodes from each row */
};

static const struct npf_inventory *fake_inventory(void *ud)
{
	return &((struct fake *)ud)->inv;
}

static void on_row(void *ud, struct npf_msg_row *row, uint64_t waiter)
{
	struct fake *f = ud;
	int r;

	memcpy(f->d.job, row->job, sizeof(f->d.job));
	f->d.n_nodes = row->n_nodes;
	f->d.n_rows = row->n_nodes;
	r = strlen(f->d.nodes) == row->n_nodes ? npf_probe_job_answer(f->ctx, waiter, &f->d)
					       : -EINVAL;
	printf("row from %s index %u: %s%s\n", row->node, (unsigned)row->index,
	       r == 0 ? "answered" : "answer failed: ", r == 0 ? "" : strerror(-r));
	fflush(stdout);
	npf_wire_row_clear(row);
	free(row);
}

/* The verdict's name into its enum. Returns 0 or -EINVAL. */
static int verdict_of(const char *s, uint8_t *out)
{
	for (int v = NPF_JOB_OK; v <= NPF_JOB_UNKNOWN; v++)
		if (strcmp(s, npf_job_verdict_name((enum npf_job_verdict)v)) == 0) {
			*out = (uint8_t)v;
			return 0;
		}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	struct fake f = {0};
	struct npf_auth_keys keys;
	sd_event *ev = NULL;
	sigset_t ss;
	char err[256] = "";
	int r = 2;

	if (argc != 8) {
		fprintf(stderr, "usage: npf_fakecoord KEYFILE NODE SECONDS VERDICT NET NODES "
				"REASON\n");
		return 2;
	}
	memset(&keys, 0, sizeof(keys));
	if (sodium_init() < 0 ||
	    (strcmp(argv[1], "-") != 0 && npf_keyfile_load(argv[1], &keys, err, sizeof(err)) < 0)) {
		fprintf(stderr, "npf_fakecoord: key: %s\n", err);
		return 2;
	}
	f.d.nodes = argv[6];
	snprintf(f.d.net, sizeof(f.d.net), "%s", argv[5]);
	snprintf(f.d.best, sizeof(f.d.best), "%s", argv[5]);
	snprintf(f.d.reason, sizeof(f.d.reason), "%s", argv[7]);
	if (verdict_of(argv[4], &f.d.verdict) < 0 || !npf_wire_net_key_valid(f.d.net) ||
	    atoi(argv[3]) <= 0) {
		fprintf(stderr, "npf_fakecoord: bad verdict, network or seconds\n");
		goto out;
	}
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (sd_event_new(&ev) < 0 || nlsys_dump_ifaces(&f.inv, NULL) < 0 ||
	    sd_event_add_signal(ev, NULL, SIGTERM, NULL, NULL) < 0 ||
	    sd_event_add_signal(ev, NULL, SIGINT, NULL, NULL) < 0 ||
	    sd_event_add_time_relative(ev, NULL, CLOCK_MONOTONIC,
				       (uint64_t)atoi(argv[3]) * 1000000, 1000, NULL, NULL) < 0)
		goto out;
	{
		struct npf_probe_params p = {
		    .event = ev,
		    .port = PORT,
		    .node_name = argv[2],
		    .inventory = fake_inventory,
		    .userdata = &f,
		    .keys = strcmp(argv[1], "-") != 0 ? &keys : NULL,
		};

		randombytes_buf(&p.instance, sizeof(p.instance));
		p.instance |= 1;
		if (npf_probe_ctx_new(&f.ctx, &p) < 0 || npf_probe_listen_error(f.ctx)) {
			fprintf(stderr, "npf_fakecoord: cannot serve port %u: %s\n", PORT,
				f.ctx ? npf_probe_listen_error(f.ctx) : "no context");
			goto out;
		}
	}
	npf_probe_set_job_handler(f.ctx, on_row);
	printf("listening as %s\n", argv[2]);
	fflush(stdout);
	r = sd_event_loop(ev) < 0 ? 2 : 0;
out:
	npf_probe_ctx_free(f.ctx);
	npf_inventory_clear(&f.inv);
	sd_event_unref(ev);
	sodium_memzero(&keys, sizeof(keys));
	return r;
}
