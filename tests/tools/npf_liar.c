// SPDX-License-Identifier: MIT
/* npf_liar: a cluster-key holder that lies in a job check (issue 19, netns.blameliar). It
 * sends one forged ROW to the job's coordinator through the probe engine's own client
 * (npf_probe_job_submit: the real handshake, so the coordinator sees a genuine key holder)
 * and prints what came back. It listens nowhere (empty inventory) and talks only to the
 * coordinator address it is given.
 *
 *   npf_liar KEYFILE NODE COORDINATOR HOSTLIST TAG INDEX NET...
 *     KEYFILE      the cluster key, or "-" for a cluster without one
 *     NODE         the name it proves the key as (a node of the job: the liar)
 *     COORDINATOR  the coordinator's address (the hostlist's first node)
 *     HOSTLIST     the job's nodes, comma separated, in order; TAG its job tag
 *     INDEX        the hostlist index the row claims (its own, or another node's)
 *     NET          "KEY,RANK,QUALITY,STATES" per network, e.g. "198.18.1.0/24,0,0,of."
 *
 * Prints one line, "decision verdict=V net=N nodes=S reason=R" or "no decision: WHY", and
 * exits 0 once an answer (or a refusal) came; 2 on bad arguments or setup. */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "jobcheck.h"
#include "jobrows.h"
#include "keyfile.h"
#include "model.h"
#include "probe.h"

#define MAX_NODES 64
#define PORT 7718

struct liar {
	sd_event *ev;
	struct npf_inventory inv; /* empty: no listener */
	bool done;
};

static const struct npf_inventory *no_inventory(void *ud)
{
	return &((struct liar *)ud)->inv;
}

static void on_done(void *ud, const struct npf_msg_job_decision *d, int err)
{
	struct liar *l = ud;

	if (d)
		printf("decision verdict=%s net=%s nodes=%s reason=%s\n",
		       npf_job_verdict_name((enum npf_job_verdict)d->verdict),
		       d->net[0] ? d->net : "-", d->nodes, d->reason);
	else
		printf("no decision: %s\n", strerror(-err));
	l->done = true;
	sd_event_exit(l->ev, 0);
}

/* "KEY,RANK,QUALITY,STATES" into x (states owned). Returns 0 or -EINVAL. */
static int parse_net(const char *spec, struct npf_row_net *x, size_t n)
{
	char key[NPF_WIRE_NET_KEY_MAX], states[MAX_NODES + 1];
	long long rank, quality;

	if (sscanf(spec, "%51[^,],%lld,%lld,%64s", key, &rank, &quality, states) != 4 ||
	    strlen(states) != n)
		return -EINVAL;
	snprintf(x->key, sizeof(x->key), "%s", key);
	x->rank = rank;
	x->quality = quality;
	x->states = strdup(states);
	return x->states ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	struct liar l = {0};
	struct npf_auth_keys keys;
	struct npf_msg_row row = {0};
	struct npf_probe_ctx *ctx = NULL;
	struct npf_job_submit *sub = NULL;
	const char *names[MAX_NODES];
	char err[256], *list, *save = NULL;
	size_t n = 0;
	int r = 2;

	if (argc < 8) {
		fprintf(stderr,
			"usage: npf_liar KEYFILE NODE COORDINATOR HOSTLIST TAG INDEX NET...\n");
		return 2;
	}
	memset(&keys, 0, sizeof(keys));
	err[0] = '\0';
	if (sodium_init() < 0 ||
	    (strcmp(argv[1], "-") != 0 && npf_keyfile_load(argv[1], &keys, err, sizeof(err)) < 0)) {
		fprintf(stderr, "npf_liar: key: %s\n", err);
		return 2;
	}
	list = strdup(argv[4]);
	for (char *t = list ? strtok_r(list, ",", &save) : NULL; t && n < MAX_NODES;
	     t = strtok_r(NULL, ",", &save))
		names[n++] = t;
	snprintf(row.node, sizeof(row.node), "%s", argv[2]);
	row.instance = 0x11a4;
	row.index = (uint32_t)atoi(argv[6]);
	row.n_nodes = (uint32_t)n;
	row.wait_ms = 8000;
	if (n < 2 || row.index >= n || npf_job_id_tag(names, n, argv[5], row.job) < 0)
		goto out;
	for (int a = 7; a < argc && row.n_nets < NPF_WIRE_MAX_ROW_NETS; a++) {
		if (parse_net(argv[a], &row.nets[row.n_nets], n) < 0) {
			fprintf(stderr, "npf_liar: bad network '%s'\n", argv[a]);
			goto out;
		}
		row.n_nets++;
	}
	if (sd_event_new(&l.ev) < 0)
		goto out;
	{
		struct npf_probe_params p = {
		    .event = l.ev,
		    .port = PORT,
		    .node_name = argv[2],
		    .instance = row.instance,
		    .inventory = no_inventory,
		    .userdata = &l,
		    .keys = strcmp(argv[1], "-") != 0 ? &keys : NULL,
		};

		if (npf_probe_ctx_new(&ctx, &p) < 0 ||
		    npf_probe_job_submit(ctx, argv[3], &row, row.wait_ms + 2000, on_done, &l,
					 &sub) < 0) {
			fprintf(stderr, "npf_liar: cannot submit the row\n");
			goto out;
		}
	}
	(void)sd_event_loop(l.ev);
	r = l.done ? 0 : 2;
out:
	npf_probe_ctx_free(ctx);
	sd_event_unref(l.ev);
	npf_wire_row_clear(&row);
	sodium_memzero(&keys, sizeof(keys));
	free(list);
	return r;
}
