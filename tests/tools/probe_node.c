// SPDX-License-Identifier: MIT
/* probe_node: runs the probe engine alone (no daemon) in a namespace, serving the
 * probe port and optionally running one check, for the netns engine tests. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <systemd/sd-event.h>

#include "check.h"
#include "log.h"
#include "model.h"
#include "netlink.h"
#include "probe.h"

#define MAX_LIST 256

struct tool {
	sd_event *ev;
	struct npf_inventory inv;
	struct npf_probe_ctx *ctx;
	const char *peers[MAX_LIST];
	size_t n_peers;
	uint32_t timeout_ms;
	uint64_t linger_ms;
	bool serve;
	int exit_code;
	sd_event_source *quit, *start;
};

static const struct npf_inventory *tool_inventory(void *ud)
{
	struct tool *t = ud;

	return &t->inv;
}

static void refresh(struct tool *t)
{
	struct npf_inventory n = { 0 };

	if (nlsys_dump_ifaces(&n, NULL) < 0) {
		npf_inventory_clear(&n);
		return;
	}
	npf_inventory_clear(&t->inv);
	t->inv = n;
	if (t->ctx)
		(void)npf_probe_ctx_refresh(t->ctx);
}

static int refresh_timer(sd_event_source *s, uint64_t usec, void *ud)
{
	refresh(ud);
	(void)sd_event_source_set_time(s, usec + 1000000);
	return 0;
}

static int quit_timer(sd_event_source *s, uint64_t usec, void *ud)
{
	struct tool *t = ud;

	(void)s;
	(void)usec;
	return sd_event_exit(t->ev, t->exit_code);
}

static void print_addr(const char *key, const struct npf_addr *a)
{
	char buf[64];

	if (a->family)
		printf(" %s=%s", key, npf_addr_str(a, buf, sizeof(buf)));
	else
		printf(" %s=-", key);
}

static void print_check(const struct npf_check *c)
{
	printf("check duration_ms=%u timeout_ms=%u sparse=%d nodes=%zu paths=%zu links=%zu\n",
	       c->duration_ms, c->timeout_ms, c->sparse, c->n_nodes, c->n_paths, c->n_links);
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct npf_node *n = &c->nodes[i];

		printf("node %zu %s available=%d probed=%d cands=%zu ifnames=%zu error=\"%s\"\n", i,
		       n->name, n->available, n->probed, n->n_cands, n->n_ifnames, n->error);
	}
	for (size_t i = 0; i < c->n_paths; i++) {
		const struct npf_path *p = &c->paths[i];

		printf("path %s peer=%s local_if=%s peer_if=%s", npf_direction_name(p->dir),
		       c->nodes[p->peer].name, p->local_if[0] ? p->local_if : "-",
		       p->peer_if[0] ? p->peer_if : "-");
		print_addr("addr", p->dir == NPF_DIR_FORWARD ? &p->peer_addr : &p->local_addr);
		printf(" outcome=%s rtt_us=%u detail=\"%s\"\n", npf_outcome_name(p->outcome),
		       p->rtt_us, p->detail);
	}
	for (size_t i = 0; i < c->n_links; i++) {
		const struct npf_link *l = &c->links[i];

		printf("link %s %s fwd=%s rev=%s fwd_rtt_us=%u rev_rtt_us=%u peer_if=%s "
		       "fwd_detail=\"%s\" rev_detail=\"%s\"\n",
		       l->ifname, c->nodes[l->peer].name, npf_outcome_name(l->fwd),
		       npf_outcome_name(l->rev), l->fwd_rtt_us, l->rev_rtt_us,
		       l->peer_if[0] ? l->peer_if : "-", l->fwd_detail, l->rev_detail);
	}
	fflush(stdout);
}

static void check_done(struct npf_check *res, int err, void *ud)
{
	struct tool *t = ud;

	if (err < 0) {
		fprintf(stderr, "probe_node: check failed: %s\n", strerror(-err));
		t->exit_code = 1;
	} else {
		print_check(res);
		npf_check_clear(res);
		free(res);
	}
	/* --serve: keep answering the other nodes' probes until SIGTERM, so a test can stop
	 * every node once all have their results instead of guessing a linger time. */
	if (t->serve)
		return;
	if (sd_event_add_time_relative(t->ev, &t->quit, CLOCK_MONOTONIC, t->linger_ms * 1000, 1000,
				       quit_timer, t) < 0)
		sd_event_exit(t->ev, t->exit_code);
}

static int start_check(sd_event_source *s, uint64_t usec, void *ud)
{
	struct tool *t = ud;
	int r;

	(void)s;
	(void)usec;
	refresh(t);
	r = npf_probe_check_start(t->ctx, t->peers, t->n_peers, t->timeout_ms, check_done, t);
	if (r < 0) {
		fprintf(stderr, "probe_node: check_start: %s\n", strerror(-r));
		sd_event_exit(t->ev, 2);
	}
	return 0;
}

/* SIGUSR1 with --go: the test starts every node's check once all of them listen. */
static int go_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *ud)
{
	(void)si;
	sd_event_source_set_enabled(s, SD_EVENT_OFF);
	return start_check(s, 0, ud);
}

static size_t split(char *s, const char **out, size_t max)
{
	size_t n = 0;

	for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
		out[n++] = tok;
	return n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "node", required_argument, NULL, 'n' },  { "port", required_argument, NULL, 'p' },
		{ "check", required_argument, NULL, 'c' }, { "timeout", required_argument, NULL, 't' },
		{ "bulk", required_argument, NULL, 'b' },  { "linger", required_argument, NULL, 'l' },
		{ "delay", required_argument, NULL, 'd' }, { "exclude", required_argument, NULL, 'x' },
		{ "k", required_argument, NULL, 'k' },     { "mesh", required_argument, NULL, 'm' },
		{ "go", no_argument, NULL, 'g' },          { "serve", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct tool t = { .timeout_ms = 3000 };
	struct npf_probe_params p = { .port = 7718 };
	const char *excl[MAX_LIST];
	size_t n_excl = 0;
	uint64_t delay_ms = 0;
	bool do_check = false, go = false;
	sd_event_source *s = NULL;
	sigset_t ss;
	int c, r;

	log_init("probe_node", NPF_LOG_STDERR, getenv("PROBE_NODE_DEBUG") ? 1 : 0);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': p.node_name = optarg; break;
		case 'p': p.port = (uint16_t)strtoul(optarg, NULL, 10); break;
		case 'c': do_check = true; t.n_peers = split(optarg, t.peers, MAX_LIST); break;
		case 't': t.timeout_ms = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'b': p.bulk_bytes = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'l': t.linger_ms = strtoull(optarg, NULL, 10); break;
		case 'd': delay_ms = strtoull(optarg, NULL, 10); break;
		case 'x': if (n_excl < MAX_LIST) excl[n_excl++] = optarg; break;
		case 'k': p.sparse_k = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'm': p.full_mesh_max = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'g': go = true; break;
		case 's': t.serve = true; break;
		default:
			fprintf(stderr, "usage: probe_node --node NAME [--port N] [--bulk N] "
					"[--exclude GLOB] [--check A,B --timeout MS --linger MS "
					"--delay MS | --go] [--serve]\n");
			return 2;
		}
	}
	if (!p.node_name || sodium_init() < 0)
		return 2;
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGUSR1);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (sd_event_default(&t.ev) < 0)
		return 1;
	(void)sd_event_add_signal(t.ev, NULL, SIGTERM, NULL, NULL);
	(void)sd_event_add_signal(t.ev, NULL, SIGINT, NULL, NULL);
	refresh(&t);
	randombytes_buf(&p.instance, sizeof(p.instance));
	p.instance |= 1;
	p.event = t.ev;
	p.inventory = tool_inventory;
	p.userdata = &t;
	p.exclude = excl;
	p.n_exclude = n_excl;
	r = npf_probe_ctx_new(&t.ctx, &p);
	if (r < 0) {
		fprintf(stderr, "probe_node: ctx_new: %s\n", strerror(-r));
		return 1;
	}
	(void)sd_event_add_time_relative(t.ev, &s, CLOCK_MONOTONIC, 1000000, 1000, refresh_timer,
					 &t);
	(void)sd_event_source_set_enabled(s, SD_EVENT_ON);
	if (do_check && go)
		(void)sd_event_add_signal(t.ev, &t.start, SIGUSR1, go_signal, &t);
	else if (do_check)
		(void)sd_event_add_time_relative(t.ev, &t.start, CLOCK_MONOTONIC, delay_ms * 1000,
						 1000, start_check, &t);
	fprintf(stderr, "probe_node: %s listening on port %u\n", p.node_name, p.port);
	r = sd_event_loop(t.ev);
	npf_probe_ctx_free(t.ctx);
	sd_event_source_unref(s);
	sd_event_source_unref(t.start);
	sd_event_source_unref(t.quit);
	npf_inventory_clear(&t.inv);
	sd_event_unref(t.ev);
	return r < 0 ? 1 : r;
}
