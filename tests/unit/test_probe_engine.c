// SPDX-License-Identifier: MIT
/* Probe engine tests on one sd-event loop inside a private network namespace:
 * checks between contexts on loopback addresses, wrong-peer, unavailable and silent
 * peers, cancellation, and a hostile client against the control and data ports.
 * Skipped when the namespace cannot be created (not root). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "npf_test.h"

#include <sodium.h>

#include "auth.h"
#include "clock.h"
#include "probe.h"
#include "wire.h"

/* A reverse target of version 3: the requester's address and its data listener there. */
#define RT(a) "{\"addr\":\"" a "\",\"port\":1029,\"token\":\"00112233445566778899aabbccddeeff\"}"
/* OPEN_DATA (version 3) for a data listener on bravo's address. */
#define OPEN_DATA_B "{\"id\":1,\"bytes\":65536,\"addr\":\"198.18.0.2\"}"

#define PORT 7718
/* Every check ends by its own deadline and every reply comes at loop speed: these bounds
 * only catch a hang, with room for ASan on a loaded 2-core machine. Durations are
 * benchmark figures (bench/), never asserted here. */
#define HANG_MS 30000

struct node {
	const char *name;
	const char *addr; /* announced candidate */
	struct npf_inventory inv;
	struct npf_probe_ctx *ctx;
	uint64_t instance;
	/* As a job check's coordinator: the last ROW received and who waits for it. */
	struct npf_msg_row *job_row;
	uint64_t job_waiter;
};

struct env {
	sd_event *ev;
	struct node a, b, c, d;
};

struct result {
	bool done;
	int err;
	struct npf_check *chk;
};

static int ifreq_addr(int fd, const char *label, const char *addr)
{
	struct ifreq ifr = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", label);
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, addr, &sin->sin_addr);
	if (ioctl(fd, SIOCSIFADDR, &ifr) < 0)
		return -errno;
	inet_pton(AF_INET, "255.255.255.255", &sin->sin_addr);
	if (ioctl(fd, SIOCSIFNETMASK, &ifr) < 0)
		return -errno;
	return 0;
}

/* lo up with 198.18.0.{1,2,3}/32 as secondary labels in a fresh namespace. */
static int make_netns(void)
{
	struct ifreq ifr = { 0 };
	int fd, r = 0;

	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		r = -errno;
		goto out;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
		r = -errno;
		goto out;
	}
	if ((r = ifreq_addr(fd, "lo:1", "198.18.0.1")) < 0 ||
	    (r = ifreq_addr(fd, "lo:2", "198.18.0.2")) < 0 ||
	    (r = ifreq_addr(fd, "lo:3", "198.18.0.3")) < 0 ||
	    (r = ifreq_addr(fd, "lo:4", "198.18.0.4")) < 0 ||
	    (r = ifreq_addr(fd, "lo:5", "198.18.0.5")) < 0 ||
	    (r = ifreq_addr(fd, "lo:9", "198.18.0.9")) < 0) /* the attacker's */
		goto out;
out:
	close(fd);
	return r;
}

/* One fake interface "fab0" that carries lo's ifindex but not its flags: the
 * kernel routes these loopback addresses through lo, and the engine then sees an
 * ordinary interface, so paths between contexts on one host can succeed. */
static void fake_inventory(struct node *n)
{
	struct npf_addr a = { 0 };

	memset(&n->inv, 0, sizeof(n->inv));
	n->inv.ifaces = calloc(1, sizeof(*n->inv.ifaces));
	assert_non_null(n->inv.ifaces);
	n->inv.n_ifaces = 1;
	strcpy(n->inv.ifaces[0].name, "fab0");
	n->inv.ifaces[0].ifindex = (int)if_nametoindex("lo");
	n->inv.ifaces[0].flags = IFF_UP | IFF_RUNNING;
	n->inv.ifaces[0].kind = NPF_KIND_PHYSICAL;
	n->inv.ifaces[0].mtu = 65536;
	n->inv.ifaces[0].speed_mbps = NPF_SPEED_UNKNOWN;
	assert_int_equal(npf_wire_addr_parse(n->addr, &a), 0);
	a.prefixlen = 32;
	assert_int_equal(npf_iface_add_addr(&n->inv.ifaces[0], &a), 0);
	/* A RoCE port behind fab0 whose RoCE v2 GID of the address is index 3: its
	 * index travels in the announcement (issue 10, job-wide GID). */
	n->inv.rdma = calloc(1, sizeof(*n->inv.rdma));
	assert_non_null(n->inv.rdma);
	n->inv.n_rdma = 1;
	strcpy(n->inv.rdma[0].name, "mlx5_0");
	n->inv.rdma[0].ports = calloc(1, sizeof(*n->inv.rdma[0].ports));
	assert_non_null(n->inv.rdma[0].ports);
	n->inv.rdma[0].n_ports = 1;
	n->inv.rdma[0].ports[0].port = 1;
	n->inv.rdma[0].ports[0].state = NPF_PORT_ACTIVE;
	n->inv.rdma[0].ports[0].link_layer = NPF_LL_ETHERNET;
	strcpy(n->inv.rdma[0].ports[0].netdev, "fab0");
	n->inv.rdma[0].ports[0].gids = calloc(1, sizeof(struct npf_gid));
	assert_non_null(n->inv.rdma[0].ports[0].gids);
	n->inv.rdma[0].ports[0].n_gids = 1;
	n->inv.rdma[0].ports[0].gids[0].index = 3;
	n->inv.rdma[0].ports[0].gids[0].type = NPF_GID_ROCE_V2;
	n->inv.rdma[0].ports[0].gids[0].raw[10] = 0xff;
	n->inv.rdma[0].ports[0].gids[0].raw[11] = 0xff;
	memcpy(n->inv.rdma[0].ports[0].gids[0].raw + 12, a.addr, 4);
}

static const struct npf_inventory *inv_cb(void *ud)
{
	return &((struct node *)ud)->inv;
}

static void node_start_key(struct env *e, struct node *n, const char *name, const char *addr,
			   uint64_t instance, uint32_t max_conns, const struct npf_auth_keys *keys)
{
	struct npf_probe_params p = {
		.event = e->ev, .port = PORT, .node_name = name, .instance = instance,
		.inventory = inv_cb, .userdata = n, .bulk_bytes = 65536, .max_conns = max_conns,
		.keys = keys,
	};

	n->name = name;
	n->addr = addr;
	n->instance = instance;
	fake_inventory(n);
	p.userdata = n;
	assert_int_equal(npf_probe_ctx_new(&n->ctx, &p), 0);
}

static void node_start_max(struct env *e, struct node *n, const char *name, const char *addr,
			   uint64_t instance, uint32_t max_conns)
{
	node_start_key(e, n, name, addr, instance, max_conns, NULL);
}

static void node_start(struct env *e, struct node *n, const char *name, const char *addr,
		       uint64_t instance)
{
	node_start_max(e, n, name, addr, instance, 0);
}

static void node_stop(struct node *n)
{
	npf_probe_ctx_free(n->ctx);
	n->ctx = NULL;
	npf_inventory_clear(&n->inv);
}

static int setup(void **state)
{
	struct env *e;
	int r = make_netns();

	if (r < 0) {
		fprintf(stderr, "test_probe_engine: no private network namespace (%s), skipping\n",
			strerror(-r));
		*state = NULL;
		return 0;
	}
	e = calloc(1, sizeof(*e));
	assert_non_null(e);
	assert_int_equal(sd_event_new(&e->ev), 0);
	node_start(e, &e->a, "alpha", "198.18.0.1", 0x1111);
	node_start(e, &e->b, "bravo", "198.18.0.2", 0x2222);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	if (!e)
		return 0;
	node_stop(&e->a);
	node_stop(&e->b);
	sd_event_unref(e->ev);
	free(e);
	return 0;
}

#define NEED_ENV(state)                         \
	do {                                    \
		if (!*(state))                  \
			npf_skip("no private network namespace (needs root)"); \
	} while (0)

static void on_check(struct npf_check *chk, int err, void *ud)
{
	struct result *r = ud;

	r->done = true;
	r->err = err;
	r->chk = chk;
}

static void run_until(struct env *e, const bool *flag, uint64_t max_ms)
{
	uint64_t end = npf_now(CLOCK_MONOTONIC) + max_ms * USEC_PER_MSEC;

	while (!*flag && npf_now(CLOCK_MONOTONIC) < end)
		assert_true(sd_event_run(e->ev, 10000) >= 0);
	if (!*flag)
		fail_msg("hang: not done after %" PRIu64 " ms", max_ms);
}

static void free_result(struct result *r)
{
	if (r->chk) {
		npf_check_clear(r->chk);
		free(r->chk);
	}
	memset(r, 0, sizeof(*r));
}

static const struct npf_link *find_link(const struct npf_check *c, const char *peer)
{
	for (size_t i = 0; i < c->n_links; i++)
		if (strcmp(c->nodes[c->links[i].peer].name, peer) == 0)
			return &c->links[i];
	fail_msg("no link toward %s", peer);
	abort();
}

static void on_job_row(void *ud, struct npf_msg_row *row, uint64_t waiter)
{
	struct node *n = ud;

	if (n->job_row) {
		npf_wire_row_clear(n->job_row);
		free(n->job_row);
	}
	n->job_row = row;
	n->job_waiter = waiter;
}

struct job_result {
	bool done;
	int err;
	char verdict_nodes[8];
	char net[NPF_WIRE_NET_KEY_MAX];
};

static void on_job_done(void *ud, const struct npf_msg_job_decision *d, int err)
{
	struct job_result *r = ud;

	r->done = true;
	r->err = err;
	if (d) {
		snprintf(r->verdict_nodes, sizeof(r->verdict_nodes), "%s", d->nodes);
		snprintf(r->net, sizeof(r->net), "%s", d->net);
	}
}

/* A 2-node job's row of node (index 1) and a decision for it, on 198.18.0.0/24; states and
 * nodes are the caller's buffers. */
static void job_pair(struct npf_msg_row *row, struct npf_msg_job_decision *dec, char fill,
		     const char *node, char states[3], char nodes[3])
{
	memset(row, 0, sizeof(*row));
	memset(dec, 0, sizeof(*dec));
	row->instance = 0x1111;
	row->index = 1;
	row->n_nodes = 2;
	row->wait_ms = 5000;
	memset(row->job, fill, NPF_WIRE_JOB_ID_LEN);
	snprintf(row->node, sizeof(row->node), "%s", node);
	strcpy(row->nets[0].key, "198.18.0.0/24");
	memcpy(states, "o.", 3);
	row->nets[0].states = states;
	row->n_nets = 1;
	dec->n_nodes = 2;
	dec->n_rows = 2;
	dec->nodes = nodes;
	memcpy(dec->job, row->job, sizeof(dec->job));
	strcpy(dec->net, "198.18.0.0/24");
}

/* The row exchange of a job check (probe/jobx.c, server.c on_row): alpha's ROW reaches
 * bravo's handler, bravo's JOB_DECISION reaches alpha; an answer for another job, no
 * answer, a coordinator without job checks and a cancelled submission are not decisions. */
static void test_job_exchange(void **state)
{
	struct env *e = *state;
	struct npf_msg_row row;
	char nodes[3] = "s.", states[3];
	struct npf_msg_job_decision dec;
	struct job_result jr = { 0 };
	struct npf_job_submit *js = NULL;

	NEED_ENV(state);
	job_pair(&row, &dec, 'a', "alpha", states, nodes);
	strcpy(dec.reason, "bravo fails 198.18.0.0/24 with alpha");

	/* Without a handler the coordinator refuses: not a decision. */
	assert_int_equal(npf_probe_job_submit(e->a.ctx, "198.18.0.2", &row, 5000, on_job_done, &jr,
					      &js),
			 0);
	assert_false(jr.done);
	run_until(e, &jr.done, HANG_MS);
	assert_int_equal(jr.err, -EPROTO);

	npf_probe_set_job_handler(e->b.ctx, on_job_row);
	memset(&jr, 0, sizeof(jr));
	assert_int_equal(npf_probe_job_submit(e->a.ctx, "198.18.0.2", &row, 5000, on_job_done, &jr,
					      &js),
			 0);
	while (!e->b.job_row && !jr.done)
		assert_true(sd_event_run(e->ev, 10000) >= 0);
	assert_non_null(e->b.job_row);
	assert_string_equal(e->b.job_row->node, "alpha");
	assert_int_equal(e->b.job_row->wait_ms, 5000);
	assert_int_equal(npf_probe_job_answer(e->b.ctx, e->b.job_waiter, &dec), 0);
	/* One answer per waiter. */
	assert_int_equal(npf_probe_job_answer(e->b.ctx, e->b.job_waiter, &dec), -ENOENT);
	run_until(e, &jr.done, HANG_MS);
	assert_int_equal(jr.err, 0);
	assert_string_equal(jr.verdict_nodes, "s.");
	assert_string_equal(jr.net, "198.18.0.0/24");

	/* An answer for another job is no answer. */
	memset(&jr, 0, sizeof(jr));
	assert_int_equal(npf_probe_job_submit(e->a.ctx, "198.18.0.2", &row, 5000, on_job_done, &jr,
					      &js),
			 0);
	e->b.job_waiter = 0;
	while (!e->b.job_waiter && !jr.done)
		assert_true(sd_event_run(e->ev, 10000) >= 0);
	dec.job[0] = 'b';
	assert_int_equal(npf_probe_job_answer(e->b.ctx, e->b.job_waiter, &dec), 0);
	run_until(e, &jr.done, HANG_MS);
	assert_int_equal(jr.err, -EPROTO);

	/* No answer within the wait: timed out, not a decision. */
	memset(&jr, 0, sizeof(jr));
	assert_int_equal(npf_probe_job_submit(e->a.ctx, "198.18.0.2", &row, 300, on_job_done, &jr,
					      &js),
			 0);
	run_until(e, &jr.done, HANG_MS);
	assert_int_equal(jr.err, -ETIMEDOUT);

	/* Cancelled: done never runs. */
	memset(&jr, 0, sizeof(jr));
	assert_int_equal(npf_probe_job_submit(e->a.ctx, "198.18.0.2", &row, 5000, on_job_done, &jr,
					      &js),
			 0);
	npf_probe_job_cancel(js);
	for (int i = 0; i < 20; i++)
		(void)sd_event_run(e->ev, 10000);
	assert_false(jr.done);
	assert_int_equal(npf_probe_job_submit(e->a.ctx, "", &row, 5000, on_job_done, &jr, &js),
			 -EINVAL);
	if (e->b.job_row) {
		npf_wire_row_clear(e->b.job_row);
		free(e->b.job_row);
		e->b.job_row = NULL;
	}
	npf_probe_set_job_handler(e->b.ctx, NULL);
}

static void test_check_ok(void **state)
{
	struct env *e = *state;
	const char *peers[] = { "alpha", "198.18.0.2", "198.18.0.2" };
	struct result r = { 0 };
	const struct npf_link *l;

	NEED_ENV(state);
	assert_int_equal(npf_probe_check_start(e->a.ctx, peers, 3, 2000, on_check, &r), 0);
	assert_false(r.done); /* never synchronous */
	run_until(e, &r.done, HANG_MS);
	assert_true(r.done);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.chk->n_nodes, 2); /* self + the deduplicated peer */
	assert_string_equal(r.chk->nodes[0].name, "alpha");
	assert_true(r.chk->nodes[1].available);
	assert_true(r.chk->nodes[1].probed);
	assert_true(r.chk->nodes[1].instance == 0x2222);
	assert_int_equal(r.chk->nodes[1].n_cands, 1);
	/* The peer's GID index came over the wire (alpha's HELLO announced addrs). */
	assert_string_equal(r.chk->nodes[1].cands[0].rdma_dev, "mlx5_0");
	assert_true(r.chk->nodes[1].cands[0].has_gid);
	assert_int_equal(r.chk->nodes[1].cands[0].gid_index, 3);
	l = find_link(r.chk, "198.18.0.2");
	assert_string_equal(l->ifname, "fab0");
	assert_int_equal(l->fwd, NPF_OUT_OK);
	assert_int_equal(l->rev, NPF_OUT_OK);
	assert_true(l->fwd_rtt_us > 0);
	free_result(&r);
}

/* alpha and bravo check each other at the same moment, as a job's Prolog does: alpha's
 * forward probe of bravo and bravo's reverse request for the same path are one probe (and
 * vice versa), both checks are ok, and the results say which were shared. */
static void test_job_check_shares_paths(void **state)
{
	struct env *e = *state;
	const char *pa[] = {"198.18.0.2"}, *pb[] = {"198.18.0.1"};
	struct result ra = {0}, rb = {0};
	struct npf_probe_stats a0, b0, a1, b1;
	bool both = false;
	uint64_t end;

	NEED_ENV(state);
	npf_probe_get_stats(e->a.ctx, &a0);
	npf_probe_get_stats(e->b.ctx, &b0);
	assert_int_equal(npf_probe_check_start(e->a.ctx, pa, 1, 2000, on_check, &ra), 0);
	assert_int_equal(npf_probe_check_start(e->b.ctx, pb, 1, 2000, on_check, &rb), 0);
	end = npf_now(CLOCK_MONOTONIC) + HANG_MS * USEC_PER_MSEC;
	while (!(ra.done && rb.done) && npf_now(CLOCK_MONOTONIC) < end)
		assert_true(sd_event_run(e->ev, 10000) >= 0);
	both = ra.done && rb.done;
	assert_true(both);
	assert_int_equal(ra.err, 0);
	assert_int_equal(rb.err, 0);
	assert_int_equal(find_link(ra.chk, "198.18.0.2")->fwd, NPF_OUT_OK);
	assert_int_equal(find_link(ra.chk, "198.18.0.2")->rev, NPF_OUT_OK);
	assert_int_equal(find_link(rb.chk, "198.18.0.1")->fwd, NPF_OUT_OK);
	assert_int_equal(find_link(rb.chk, "198.18.0.1")->rev, NPF_OUT_OK);
	/* Two directed paths, four consumers (two checks, two reverse requests): each
	 * consumer started a probe or joined one running on the same path, never both. */
	npf_probe_get_stats(e->a.ctx, &a1);
	npf_probe_get_stats(e->b.ctx, &b1);
	assert_int_equal(a1.started - a0.started + b1.started - b0.started + a1.joined -
				 a0.joined + b1.joined - b0.joined,
			 4);
	assert_true(a1.started - a0.started >= 1 && b1.started - b0.started >= 1);
	assert_int_equal(ra.chk->n_inconclusive + rb.chk->n_inconclusive, 0);
	assert_true(ra.chk->nodes[1].hello_rtt_us > 0);
	assert_true(ra.chk->tick_us > 0);
	free_result(&ra);
	free_result(&rb);
	/* A new check right after reuses nothing that ended: it probes. */
	assert_int_equal(npf_probe_check_start(e->a.ctx, pa, 1, 2000, on_check, &ra), 0);
	run_until(e, &ra.done, HANG_MS);
	assert_true(ra.done);
	assert_int_equal(find_link(ra.chk, "198.18.0.2")->fwd, NPF_OUT_OK);
	assert_int_equal(ra.chk->n_shared, 0);
	npf_probe_get_stats(e->a.ctx, &a0);
	assert_int_equal(a0.started, a1.started + 1);
	free_result(&ra);
}

/* bravo holds an address whose probe port another process (charlie) bound
 * first, as a local user squatting the port would: bravo does not announce it,
 * says which address failed, and is checked on the rest. */
static void test_wrong_peer(void **state)
{
	struct env *e = *state;
	const char *peers[] = { "198.18.0.2" };
	struct result r = { 0 };
	struct npf_addr a;
	const struct npf_link *l;

	NEED_ENV(state);
	node_start(e, &e->c, "charlie", "198.18.0.3", 0x3333);
	assert_int_equal(npf_wire_addr_parse("198.18.0.3", &a), 0);
	a.prefixlen = 32;
	assert_int_equal(npf_iface_add_addr(&e->b.inv.ifaces[0], &a), 0);
	(void)npf_probe_ctx_refresh(e->b.ctx);
	assert_non_null(npf_probe_listen_error(e->b.ctx));
	assert_non_null(strstr(npf_probe_listen_error(e->b.ctx), "198.18.0.3 port 7718"));
	assert_null(npf_probe_listen_error(e->a.ctx));
	assert_int_equal(npf_probe_check_start(e->a.ctx, peers, 1, 2000, on_check, &r), 0);
	run_until(e, &r.done, HANG_MS);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.chk->nodes[1].n_cands, 1);
	for (size_t i = 0; i < r.chk->n_paths; i++) {
		char buf[64];

		npf_addr_str(&r.chk->paths[i].peer_addr, buf, sizeof(buf));
		assert_string_not_equal(buf, "198.18.0.3");
	}
	l = find_link(r.chk, "198.18.0.2");
	assert_int_equal(l->fwd, NPF_OUT_OK);
	free_result(&r);
	node_stop(&e->c);
	e->b.inv.ifaces[0].n_addrs = 1;
	(void)npf_probe_ctx_refresh(e->b.ctx);
	assert_null(npf_probe_listen_error(e->b.ctx));

	/* Our own address as a peer name: it resolves to this node. */
	peers[0] = "198.18.0.1";
	assert_int_equal(npf_probe_check_start(e->a.ctx, peers, 1, 1000, on_check, &r), 0);
	run_until(e, &r.done, HANG_MS);
	assert_false(r.chk->nodes[1].available);
	assert_non_null(strstr(r.chk->nodes[1].error, "resolves to this node"));
	free_result(&r);
}

/* A daemon of the previous protocol version: it answers whatever arrives with its own
 * version's header (what a version-1 daemon sends for our HELLO) and keeps the connection
 * (fds[], closed by the test), so no reset races the answer. */
struct old_daemon {
	int fds[8];
	size_t n;
};

static int old_daemon_accept(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	static const char j[] = "{\"code\":\"unsupported-version\",\"message\":\"unsupported "
				"protocol version\",\"max_version\":1}";
	struct old_daemon *od = ud;
	uint8_t hdr[NPF_WIRE_HDR_LEN];
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

	(void)s;
	(void)revents;
	if (c < 0)
		return 0;
	npf_wire_hdr_encode(hdr, NPF_MSG_ERROR, (uint32_t)strlen(j));
	hdr[0] = 0;
	hdr[1] = NPF_WIRE_VERSION - 1;
	(void)!send(c, hdr, sizeof(hdr), MSG_NOSIGNAL);
	(void)!send(c, j, strlen(j), MSG_NOSIGNAL);
	if (od->n < sizeof(od->fds) / sizeof(od->fds[0]))
		od->fds[od->n++] = c;
	else
		close(c);
	return 0;
}

static void test_unavailable(void **state)
{
	struct env *e = *state;
	const char *peers[] = { "198.18.0.3", "no-such-host.invalid", "198.51.100.7" };
	struct result r = { 0 };
	int silent, conn = -1;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PORT) };

	NEED_ENV(state);
	/* Nothing on 198.18.0.3 yet: refused. Unresolvable name. No route. */
	assert_int_equal(npf_probe_check_start(e->a.ctx, peers, 3, 1500, on_check, &r), 0);
	run_until(e, &r.done, HANG_MS);
	assert_int_equal(r.err, 0);
	for (size_t i = 1; i < 4; i++) {
		assert_false(r.chk->nodes[i].available);
		assert_true(r.chk->nodes[i].error[0] != '\0');
	}
	assert_non_null(strstr(r.chk->nodes[1].error, "no daemon answering on 198.18.0.3"));
	assert_non_null(strstr(r.chk->nodes[2].error, "cannot resolve no-such-host.invalid"));
	for (size_t i = 0; i < r.chk->n_links; i++) {
		assert_int_equal(r.chk->links[i].fwd, NPF_OUT_PEER_UNAVAILABLE);
		assert_int_equal(r.chk->links[i].rev, NPF_OUT_PEER_UNAVAILABLE);
	}
	free_result(&r);

	/* A listener that accepts and never speaks: the check still ends (by its deadline)
	 * and says why the peer is unavailable. */
	silent = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, "198.18.0.3", &sin.sin_addr);
	assert_int_equal(bind(silent, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(silent, 4), 0);
	assert_int_equal(npf_probe_check_start(e->a.ctx, peers, 1, 800, on_check, &r), 0);
	run_until(e, &r.done, HANG_MS);
	assert_false(r.chk->nodes[1].available);
	assert_non_null(strstr(r.chk->nodes[1].error, "no HELLO reply"));
	free_result(&r);
	conn = accept(silent, NULL, NULL);
	if (conn >= 0)
		close(conn);
	close(silent);

	/* A daemon of the previous protocol version (a rolling upgrade): a clear error naming
	 * both versions, the node unavailable, its paths unknown, never a verdict. */
	{
		struct old_daemon od = {.n = 0};
		sd_event_source *src = NULL;

		silent = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		assert_int_equal(bind(silent, (struct sockaddr *)&sin, sizeof(sin)), 0);
		assert_int_equal(listen(silent, 4), 0);
		assert_int_equal(
		    sd_event_add_io(e->ev, &src, silent, EPOLLIN, old_daemon_accept, &od), 0);
		assert_int_equal(npf_probe_check_start(e->a.ctx, peers, 1, 1500, on_check, &r), 0);
		run_until(e, &r.done, HANG_MS);
		assert_int_equal(r.err, 0);
		assert_true(od.n >= 1); /* it was asked */
		assert_false(r.chk->nodes[1].available);
		assert_non_null(strstr(r.chk->nodes[1].error, "another probe protocol version"));
		{
			char both[64];

			snprintf(both, sizeof(both), "version %d; this node speaks %d",
				 NPF_WIRE_VERSION - 1, NPF_WIRE_VERSION);
			assert_non_null(strstr(r.chk->nodes[1].error, both));
		}
		assert_true(r.chk->n_links > 0);
		for (size_t i = 0; i < r.chk->n_links; i++) {
			assert_int_equal(r.chk->links[i].fwd, NPF_OUT_PEER_UNAVAILABLE);
			assert_int_equal(r.chk->links[i].rev, NPF_OUT_PEER_UNAVAILABLE);
		}
		free_result(&r);
		sd_event_source_disable_unref(src);
		for (size_t i = 0; i < od.n; i++)
			close(od.fds[i]);
		close(silent);
	}
}

static void test_bad_args_and_cancel(void **state)
{
	struct env *e = *state;
	const char *peers[] = { "198.18.0.2" };
	const char *bad[] = { "has space" };
	struct result r = { 0 };
	struct npf_probe_params p = { 0 };
	struct npf_probe_ctx *ctx = NULL;

	NEED_ENV(state);
	assert_int_equal(npf_probe_check_start(e->a.ctx, peers, 1, 50, on_check, &r), -EINVAL);
	assert_int_equal(npf_probe_check_start(e->a.ctx, bad, 1, 1000, on_check, &r), -EINVAL);
	assert_int_equal(npf_probe_check_start(e->a.ctx, peers, 1, 1000, NULL, &r), -EINVAL);
	assert_int_equal(npf_probe_ctx_new(&ctx, &p), -EINVAL);
	p = (struct npf_probe_params){ .event = e->ev, .port = PORT, .node_name = "x",
				       .instance = 1, .inventory = inv_cb, .userdata = &e->c,
				       .bulk_bytes = 1000 };
	assert_int_equal(npf_probe_ctx_new(&ctx, &p), -EINVAL);

	/* No peers at all: completes from the loop with just ourselves. */
	assert_int_equal(npf_probe_check_start(e->a.ctx, NULL, 0, 1000, on_check, &r), 0);
	assert_false(r.done);
	run_until(e, &r.done, HANG_MS);
	assert_int_equal(r.chk->n_nodes, 1);
	assert_int_equal(r.chk->n_links, 0);
	free_result(&r);

	/* Freeing the context cancels its checks. */
	node_start(e, &e->c, "charlie", "198.18.0.3", 0x3333);
	assert_int_equal(npf_probe_check_start(e->c.ctx, peers, 1, 2000, on_check, &r), 0);
	(void)sd_event_run(e->ev, 1000);
	node_stop(&e->c);
	assert_true(r.done);
	assert_int_equal(r.err, -ECANCELED);
	assert_null(r.chk);
}

/* ---- a hostile client against bravo's control and data ports ---- */

static int client_connect(const char *addr, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 2 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	inet_pton(AF_INET, addr, &sin.sin_addr);
	assert_true(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 || errno == EINPROGRESS);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Runs the loop until it has nothing left to dispatch right now (bounded in count). */
static void run_idle(struct env *e)
{
	for (int i = 0; i < 10000; i++) {
		int r = sd_event_run(e->ev, 0);

		assert_true(r >= 0);
		if (r == 0)
			return;
	}
	fail_msg("the loop never went idle");
}

/* Runs the loop until fd has data or EOF; returns what recv got (0 = EOF). */
static ssize_t pump_recv(struct env *e, int fd, uint8_t *buf, size_t len, uint64_t max_ms)
{
	uint64_t end = npf_now(CLOCK_MONOTONIC) + max_ms * USEC_PER_MSEC;

	while (npf_now(CLOCK_MONOTONIC) < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		(void)sd_event_run(e->ev, 5000);
		if (poll(&pfd, 1, 0) <= 0)
			continue;
		n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return n;
	}
	return -ETIMEDOUT;
}

static void send_all(struct env *e, int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t end = npf_now(CLOCK_MONOTONIC) + HANG_MS * USEC_PER_MSEC;

	while (len && npf_now(CLOCK_MONOTONIC) < end) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else {
			(void)sd_event_run(e->ev, 1000);
		}
	}
	assert_int_equal(len, 0);
}

static void send_frame(struct env *e, int fd, uint16_t version, uint16_t type, const char *json)
{
	uint8_t hdr[NPF_WIRE_HDR_LEN];

	npf_wire_hdr_encode(hdr, type, (uint32_t)strlen(json));
	hdr[0] = (uint8_t)(version >> 8);
	hdr[1] = (uint8_t)version;
	send_all(e, fd, hdr, sizeof(hdr));
	send_all(e, fd, json, strlen(json));
}

/* Reads one frame; returns its type and the parsed payload in *out (caller decrefs). */
static int recv_frame(struct env *e, int fd, json_t **out)
{
	uint8_t hdr[NPF_WIRE_HDR_LEN], *pl;
	struct npf_wire_hdr h;
	size_t got = 0;

	while (got < sizeof(hdr)) {
		ssize_t n = pump_recv(e, fd, hdr + got, sizeof(hdr) - got, HANG_MS);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	assert_int_equal(npf_wire_hdr_decode(hdr, sizeof(hdr), NPF_WIRE_MAX_PAYLOAD, &h), 0);
	pl = malloc(h.length);
	assert_non_null(pl);
	for (got = 0; got < h.length;) {
		ssize_t n = pump_recv(e, fd, pl + got, h.length - got, HANG_MS);

		assert_true(n > 0);
		got += (size_t)n;
	}
	assert_int_equal(npf_wire_parse_json(pl, h.length, out), 0);
	free(pl);
	return h.type;
}

static void expect_error(struct env *e, int fd, const char *code)
{
	json_t *j = NULL;
	uint8_t b[16];

	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_ERROR);
	assert_string_equal(json_string_value(json_object_get(j, "code")), code);
	json_decref(j);
	/* ...and the daemon hangs up after it. */
	assert_int_equal(pump_recv(e, fd, b, sizeof(b), HANG_MS), 0);
}

#define HELLO "{\"node\":\"evil\",\"instance\":\"00000000000000ee\",\"candidates\":false}"

static void test_hostile_control(void **state)
{
	struct env *e = *state;
	uint8_t hdr[NPF_WIRE_HDR_LEN];
	json_t *j = NULL;
	int fd;

	NEED_ENV(state);
	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION + 1, NPF_MSG_HELLO, HELLO);
	expect_error(e, fd, "unsupported-version");
	close(fd);
	/* The version before this one (a daemon not yet upgraded) likewise. */
	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION - 1, NPF_MSG_HELLO, HELLO);
	expect_error(e, fd, "unsupported-version");
	close(fd);

	fd = client_connect("198.18.0.2", PORT);
	npf_wire_hdr_encode(hdr, NPF_MSG_HELLO, NPF_WIRE_MAX_PAYLOAD + 1);
	send_all(e, fd, hdr, sizeof(hdr));
	expect_error(e, fd, "too-large");
	close(fd);

	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_HELLO,
		   "{\"node\":\"a\",\"node\":\"b\",\"instance\":\"00000000000000ee\","
		   "\"candidates\":false}");
	expect_error(e, fd, "bad-request");
	close(fd);

	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_OPEN_DATA, OPEN_DATA_B);
	expect_error(e, fd, "forbidden");
	close(fd);

	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO);
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_HELLO_REPLY);
	assert_string_equal(json_string_value(json_object_get(j, "node")), "bravo");
	assert_null(json_object_get(j, "candidates"));
	json_decref(j);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO);
	expect_error(e, fd, "unexpected");
	close(fd);

	/* Out of their rows' stages or senders (lib/wire.c msgs[]): a daemon's answer sent to
	 * the daemon, a data-port message on the control connection. */
	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO);
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_HELLO_REPLY);
	json_decref(j);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_REVERSE_RESULT, "{\"id\":1,\"results\":[]}");
	expect_error(e, fd, "unexpected");
	close(fd);

	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_DATA_AUTH, "{\"token\":\"00112233445566778899aabbccddeeff\"}");
	expect_error(e, fd, "unexpected");
	close(fd);

	/* 65 reverse targets. */
	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO);
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_HELLO_REPLY);
	json_decref(j);
	{
		char buf[8192] = "{\"id\":1,\"timeout_ms\":500,\"bytes\":65536,\"targets\":[";

		for (int i = 0; i <= NPF_WIRE_MAX_TARGETS; i++)
			strcat(buf, i ? ("," RT("198.18.0.9")) : (RT("198.18.0.9")));
		strcat(buf, "]}");
		send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_REVERSE_REQ, buf);
	}
	expect_error(e, fd, "bad-request");
	close(fd);

	/* Garbage then EOF mid-frame: the daemon just closes. */
	fd = client_connect("198.18.0.2", PORT);
	send_all(e, fd, "\x00\x02\x00", 3);
	shutdown(fd, SHUT_WR);
	{
		uint8_t b[16];

		assert_int_equal(pump_recv(e, fd, b, sizeof(b), HANG_MS), 0);
	}
	close(fd);
}

/* A HELLO announcing the requester's own addresses (its reverse targets). */
#define HELLO_ADDRS(list)                                                                          \
	"{\"node\":\"evil\",\"instance\":\"00000000000000ee\",\"candidates\":false,"               \
	"\"addrs\":[" list "]}"

/* A reverse request for an address with no daemon: answered with per-target outcomes. */
static void test_reverse_request(void **state)
{
	struct env *e = *state;
	json_t *j = NULL, *res;
	int fd;

	NEED_ENV(state);
	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_HELLO,
		   HELLO_ADDRS("\"198.18.0.3\",\"198.18.0.2\",\"198.18.0.1\""));
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_HELLO_REPLY);
	json_decref(j);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_REVERSE_REQ,
		   "{\"id\":7,\"timeout_ms\":500,\"bytes\":65536,"
		   "\"targets\":[" RT("198.18.0.3") "," RT("198.18.0.2") "," RT("198.18.0.1") "]}");
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_REVERSE_RESULT);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 7);
	res = json_object_get(j, "results");
	assert_int_equal(json_array_size(res), 3);
	/* nothing listens there */
	assert_string_equal(json_string_value(json_object_get(json_array_get(res, 0), "outcome")),
			    "refused");
	/* bravo's own address */
	assert_string_equal(json_string_value(json_object_get(json_array_get(res, 1), "outcome")),
			    "wrong-peer");
	/* alpha answers, but it is not the requester ("evil") */
	assert_string_equal(json_string_value(json_object_get(json_array_get(res, 2), "outcome")),
			    "wrong-peer");
	assert_string_equal(json_string_value(json_object_get(json_array_get(res, 2), "detail")),
			    "answered by alpha");
	json_decref(j);
	close(fd);
}

/* A listener on addr:PORT standing in for a third party. */
static int bystander_listen(const char *addr)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(PORT)};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	inet_pton(AF_INET, addr, &sin.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(fd, 64), 0);
	return fd;
}

static const char *result_field(json_t *res, const char *addr, const char *key)
{
	size_t i;
	json_t *v;

	json_array_foreach(res, i, v) {
		if (strcmp(json_string_value(json_object_get(v, "addr")), addr) == 0)
			return json_string_value(json_object_get(v, key));
	}
	fail_msg("no result for %s", addr);
	return NULL;
}

/* Issue 12: a requester can have probed only the addresses its HELLO announced.
 * Any other target is answered not-probed, and nothing connects to it; a HELLO
 * without the list (an older peer, a scanner) gets no reverse work at all. */
static void test_reverse_unannounced(void **state)
{
	struct env *e = *state;
	json_t *j = NULL, *res;
	int fd, lfd, afd;

	NEED_ENV(state);
	lfd = bystander_listen("198.18.0.4");
	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO_ADDRS("\"198.18.0.3\""));
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_HELLO_REPLY);
	json_decref(j);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_REVERSE_REQ,
		   "{\"id\":8,\"timeout_ms\":500,\"bytes\":65536,"
		   "\"targets\":[" RT("198.18.0.4") "," RT("198.18.0.3") "]}");
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_REVERSE_RESULT);
	res = json_object_get(j, "results");
	assert_int_equal(json_array_size(res), 2);
	assert_string_equal(result_field(res, "198.18.0.4", "outcome"), "not-probed");
	assert_string_equal(result_field(res, "198.18.0.4", "detail"),
			    "not announced by the requester");
	/* the announced one is really probed (nothing listens there) */
	assert_string_equal(result_field(res, "198.18.0.3", "outcome"), "refused");
	json_decref(j);
	/* A data listener's port is ephemeral: an announced address with a privileged port
	 * (a service, not a listener) gets no probe. */
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_REVERSE_REQ,
		   "{\"id\":10,\"timeout_ms\":500,\"bytes\":65536,\"targets\":[{\"addr\":"
		   "\"198.18.0.3\",\"port\":22,\"token\":\"00112233445566778899aabbccddeeff\"}]}");
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_REVERSE_RESULT);
	res = json_object_get(j, "results");
	assert_string_equal(result_field(res, "198.18.0.3", "outcome"), "not-probed");
	assert_string_equal(result_field(res, "198.18.0.3", "detail"),
			    "reverse target port below 1024 (not a data listener)");
	json_decref(j);
	/* The result comes after every probe ended: a connection to the bystander
	 * would be in its backlog by now. */
	afd = accept(lfd, NULL, NULL);
	assert_int_equal(afd, -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	close(fd);

	/* No list at all: every target not-probed, the bystander untouched. */
	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO);
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_HELLO_REPLY);
	json_decref(j);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_REVERSE_REQ,
		   "{\"id\":9,\"timeout_ms\":500,\"bytes\":65536,"
		   "\"targets\":[" RT("198.18.0.4") "]}");
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_REVERSE_RESULT);
	res = json_object_get(j, "results");
	assert_int_equal(json_array_size(res), 1);
	assert_string_equal(result_field(res, "198.18.0.4", "outcome"), "not-probed");
	assert_string_equal(result_field(res, "198.18.0.4", "detail"),
			    "not announced by the requester (its HELLO lists no addresses)");
	json_decref(j);
	afd = accept(lfd, NULL, NULL);
	assert_int_equal(afd, -1);
	close(fd);
	close(lfd);
}

static int attacker_connect(const char *addr, uint16_t port);

/* The connection ends (EOF or a reset) without a frame, never silence. */
static void expect_silent_close(struct env *e, int fd)
{
	uint8_t b[8];
	ssize_t n = pump_recv(e, fd, b, sizeof(b), HANG_MS);

	assert_true(n <= 0 && n != -ETIMEDOUT);
}

static void pump(struct env *e, uint64_t ms);

static void test_data_port(void **state)
{
	struct env *e = *state;
	json_t *j = NULL;
	int fd, dfd, racers[4];
	uint16_t port;
	char auth[128];
	uint8_t *buf;
	size_t got = 0;

	NEED_ENV(state);
	fd = client_connect("198.18.0.2", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO);
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_HELLO_REPLY);
	json_decref(j);

	/* Whoever connects first does not decide (issue 19): the listener accepts until the
	 * prober's DATA_AUTH. Since version 3 a source other than the asker's own addresses
	 * is taken only into a slot no known source needs: four such racers waiting push out
	 * nothing of the prober's; a wrong token is dropped without a word; the prober still
	 * gets in on the same listener, and the racers are closed. */
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_OPEN_DATA, OPEN_DATA_B);
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_OPEN_DATA_REPLY);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 1);
	port = (uint16_t)json_integer_value(json_object_get(j, "port"));
	assert_true(port > 0);
	snprintf(auth, sizeof(auth), "{\"token\":\"%s\"}",
		 json_string_value(json_object_get(j, "token")));
	json_decref(j);
	for (int i = 0; i < 4; i++) {
		racers[i] = attacker_connect("198.18.0.2", port);
		assert_true(racers[i] >= 0);
	}
	pump(e, 50);
	dfd = client_connect("198.18.0.2", port);
	send_frame(e, dfd, NPF_WIRE_VERSION, NPF_MSG_DATA_AUTH, "{\"token\":\"00000000000000000000000000000000\"}");
	expect_silent_close(e, dfd);
	close(dfd);
	dfd = client_connect("198.18.0.2", port);
	send_frame(e, dfd, NPF_WIRE_VERSION, NPF_MSG_DATA_AUTH, auth);
	assert_int_equal(recv_frame(e, dfd, &j), NPF_MSG_DATA_AUTH_REPLY);
	json_decref(j);
	close(dfd);
	for (int i = 0; i < 4; i++) {
		expect_silent_close(e, racers[i]);
		close(racers[i]);
	}

	/* Right token: identity, then the echo of exactly what was sent. */
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_OPEN_DATA, OPEN_DATA_B);
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_OPEN_DATA_REPLY);
	port = (uint16_t)json_integer_value(json_object_get(j, "port"));
	snprintf(auth, sizeof(auth), "{\"token\":\"%s\"}",
		 json_string_value(json_object_get(j, "token")));
	json_decref(j);
	dfd = client_connect("198.18.0.2", port);
	send_frame(e, dfd, NPF_WIRE_VERSION, NPF_MSG_DATA_AUTH, auth);
	assert_int_equal(recv_frame(e, dfd, &j), NPF_MSG_DATA_AUTH_REPLY);
	assert_string_equal(json_string_value(json_object_get(j, "instance")), "0000000000002222");
	json_decref(j);
	buf = malloc(65536);
	assert_non_null(buf);
	for (size_t i = 0; i < 65536; i++)
		buf[i] = (uint8_t)(i * 7);
	send_all(e, dfd, buf, 65536);
	while (got < 65536) {
		uint8_t r[4096];
		ssize_t n = pump_recv(e, dfd, r, sizeof(r), HANG_MS);

		assert_true(n > 0);
		for (ssize_t i = 0; i < n; i++)
			assert_int_equal(r[i], (uint8_t)((got + (size_t)i) * 7));
		got += (size_t)n;
	}
	/* then the data port closes */
	assert_int_equal(pump_recv(e, dfd, buf, 16, HANG_MS), 0);
	close(dfd);
	free(buf);

	/* Once the prober proved the token the listener is gone: a second connect is refused. */
	dfd = client_connect("198.18.0.2", port);
	expect_silent_close(e, dfd);
	close(dfd);

	/* A listener on an address that is not bravo's is declined (port 0), for that path
	 * only: the connection carries the prober's other paths. */
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_OPEN_DATA,
		   "{\"id\":5,\"bytes\":65536,\"addr\":\"198.18.0.9\"}");
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_OPEN_DATA_REPLY);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 5);
	assert_int_equal(json_integer_value(json_object_get(j, "port")), 0);
	json_decref(j);
	/* Listeners per connection and per asker are capped: past the cap, port 0, and the
	 * connection still answers. */
	{
		bool declined = false;

		for (int i = 0; i < 4 * 32 && !declined; i++) {
			send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_OPEN_DATA, OPEN_DATA_B);
			assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_OPEN_DATA_REPLY);
			declined = json_integer_value(json_object_get(j, "port")) == 0;
			json_decref(j);
		}
		assert_true(declined);
	}
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_OPEN_DATA, OPEN_DATA_B);
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_OPEN_DATA_REPLY);
	json_decref(j);
	close(fd);
}

/* A peer announcing 41 addresses gets 32 probed and the rest reported not-probed. */
static void test_many_candidates(void **state)
{
	struct env *e = *state;
	const char *peers[] = { "198.18.0.2" };
	struct result r = { 0 };
	struct npf_probe_stats a0, a1, b0, b1;
	size_t n_np = 0, n_fwd = 0;

	NEED_ENV(state);
	/* A second address bravo really holds (on lo), probed after 198.18.0.2, then 39 that
	 * route nowhere. */
	for (int i = 0; i <= 39; i++) {
		struct npf_addr a;
		char txt[32];

		if (i == 0)
			snprintf(txt, sizeof(txt), "198.18.0.5");
		else
			snprintf(txt, sizeof(txt), "198.51.100.%d", i);
		assert_int_equal(npf_wire_addr_parse(txt, &a), 0);
		a.prefixlen = 32;
		assert_int_equal(npf_iface_add_addr(&e->b.inv.ifaces[0], &a), 0);
	}
	(void)npf_probe_ctx_refresh(e->b.ctx);
	npf_probe_get_stats(e->a.ctx, &a0);
	npf_probe_get_stats(e->b.ctx, &b0);
	assert_int_equal(npf_probe_check_start(e->a.ctx, peers, 1, 1000, on_check, &r), 0);
	run_until(e, &r.done, HANG_MS);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.chk->nodes[1].n_cands, 41);
	/* Issue 20, one control connection per peer: bravo accepted alpha's session and
	 * nothing else on its probe port, and one data connection per path that routes (its
	 * two addresses); bravo's reverse probe of alpha's address used alpha's own listener
	 * (no control connection to alpha). Version 2 made one control connection per path. */
	npf_probe_get_stats(e->a.ctx, &a1);
	npf_probe_get_stats(e->b.ctx, &b1);
	assert_int_equal(b1.ctl_accepted - b0.ctl_accepted, 1);
	assert_int_equal(a1.ctl_accepted - a0.ctl_accepted, 0);
	assert_int_equal(b1.data_won - b0.data_won, 2);
	assert_int_equal(a1.data_won - a0.data_won, 1);
	for (size_t i = 0; i < r.chk->n_paths; i++) {
		const struct npf_path *p = &r.chk->paths[i];

		if (p->dir != NPF_DIR_FORWARD)
			continue;
		n_fwd++;
		if (p->outcome == NPF_OUT_NOT_PROBED) {
			assert_non_null(strstr(p->detail, "announced more than 32 addresses"));
			n_np++;
		}
	}
	assert_int_equal(n_fwd, 41);
	assert_int_equal(n_np, 9);
	assert_int_equal(find_link(r.chk, "198.18.0.2")->fwd, NPF_OUT_OK);
	free_result(&r);
	e->b.inv.ifaces[0].n_addrs = 1;
	(void)npf_probe_ctx_refresh(e->b.ctx);
}

/* At max_conns the daemon stops accepting; the next client waits, then is served. */
static void test_conn_cap(void **state)
{
	struct env *e = *state;
	json_t *j = NULL;
	uint8_t b[16];
	int c1, c2;

	NEED_ENV(state);
	node_start_max(e, &e->c, "charlie", "198.18.0.3", 0x3333, 1);
	c1 = client_connect("198.18.0.3", PORT);
	send_frame(e, c1, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO);
	assert_int_equal(recv_frame(e, c1, &j), NPF_MSG_HELLO_REPLY);
	json_decref(j);
	c2 = client_connect("198.18.0.3", PORT);
	send_frame(e, c2, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO);
	/* Condition, not a stopwatch: once the loop has handled everything pending (the new
	 * connection is in the kernel's backlog, its HELLO sent over loopback), an accepting
	 * server would have replied already; a capped one has not. */
	run_idle(e);
	assert_int_equal(recv(c2, b, sizeof(b), MSG_DONTWAIT), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	close(c1);
	assert_int_equal(recv_frame(e, c2, &j), NPF_MSG_HELLO_REPLY);
	json_decref(j);
	close(c2);
	node_stop(&e->c);
}

/* A client socket bound to the attacker's address 198.18.0.9, so that per-peer
 * caps tell it from the healthy nodes on the same loopback. */
static int attacker_connect(const char *addr, uint16_t port)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	inet_pton(AF_INET, "198.18.0.9", &src.sin_addr);
	inet_pton(AF_INET, addr, &sin.sin_addr);
	if (bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0 ||
	    (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 && errno != EINPROGRESS)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* Best effort: a full socket buffer or a closed connection is the attacker's problem. */
static void blast_frame(int fd, uint16_t type, const char *json)
{
	uint8_t f[512];
	size_t n = strlen(json);

	npf_wire_hdr_encode(f, type, (uint32_t)n);
	memcpy(f + NPF_WIRE_HDR_LEN, json, n);
	(void)!send(fd, f, NPF_WIRE_HDR_LEN + n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void pump(struct env *e, uint64_t ms)
{
	uint64_t end = npf_now(CLOCK_MONOTONIC) + ms * USEC_PER_MSEC;

	while (npf_now(CLOCK_MONOTONIC) < end)
		(void)sd_event_run(e->ev, 1000);
}

/* alpha checks bravo; the pair must come out ok both ways whatever else runs. */
static void expect_healthy(struct env *e)
{
	const char *peers[] = { "198.18.0.2" };
	struct result r = { 0 };
	const struct npf_link *l;

	assert_int_equal(npf_probe_check_start(e->a.ctx, peers, 1, 3000, on_check, &r), 0);
	run_until(e, &r.done, HANG_MS);
	assert_true(r.done);
	assert_int_equal(r.err, 0);
	assert_true(r.chk->nodes[1].available);
	l = find_link(r.chk, "198.18.0.2");
	assert_int_equal(l->fwd, NPF_OUT_OK);
	assert_int_equal(l->rev, NPF_OUT_OK);
	free_result(&r);
}

#define ATTACK_CONNS 256

/* The attack of issue 12: 256 connections, each HELLO + 4 OPEN_DATA, from one
 * host. Kept open, then closed: neither changes a healthy pair's verdict. */
static void test_listener_exhaustion(void **state)
{
	struct env *e = *state;
	int fds[ATTACK_CONNS];

	NEED_ENV(state);
	for (int i = 0; i < ATTACK_CONNS; i++) {
		fds[i] = attacker_connect("198.18.0.2", PORT);
		assert_true(fds[i] >= 0);
		pump(e, 0);
		blast_frame(fds[i], NPF_MSG_HELLO, HELLO);
		for (int k = 0; k < 4; k++)
			blast_frame(fds[i], NPF_MSG_OPEN_DATA, OPEN_DATA_B);
		(void)sd_event_run(e->ev, 1000);
	}
	pump(e, 200);
	expect_healthy(e);
	for (int i = 0; i < ATTACK_CONNS; i++)
		close(fds[i]);
	pump(e, 100);
	/* the same again, closing each at once */
	for (int i = 0; i < ATTACK_CONNS; i++) {
		int fd = attacker_connect("198.18.0.2", PORT);

		assert_true(fd >= 0);
		blast_frame(fd, NPF_MSG_HELLO, HELLO);
		for (int k = 0; k < 4; k++)
			blast_frame(fd, NPF_MSG_OPEN_DATA, OPEN_DATA_B);
		(void)sd_event_run(e->ev, 1000);
		close(fd);
	}
	pump(e, 200);
	expect_healthy(e);
}

/* Idle connections that never say HELLO, far over every cap: accept() keeps
 * serving, the noisy address loses its oldest ones. */
/* Eviction is polite (issue 19): the evicted connection reads a "busy" ERROR and then EOF,
 * never a reset; so does one whose 3 s pre-auth time ran out (before, the timer closed it
 * without a word). A prober reads either as not-probed, never as a refused path. */
static void test_polite_eviction(void **state)
{
	enum { PREAUTH_PER_PEER = 8 }; /* probe/internal.h, docs/protocol.md "Bounds" */
	struct env *e = *state;
	int fds[PREAUTH_PER_PEER + 1], late;

	NEED_ENV(state);
	pump(e, 200); /* the previous test's connections are gone */
	for (int i = 0; i <= PREAUTH_PER_PEER; i++) {
		fds[i] = attacker_connect("198.18.0.2", PORT);
		assert_true(fds[i] >= 0);
		/* half a header: the daemon holds a partial frame of ours when it sheds us */
		if (i == 0)
			(void)!send(fds[0], "\x00\x01", 2, MSG_NOSIGNAL);
		pump(e, 20);
	}
	/* the ninth from this address evicted the oldest */
	expect_error(e, fds[0], "busy");
	for (int i = 0; i <= PREAUTH_PER_PEER; i++)
		close(fds[i]);
	pump(e, 20);
	late = attacker_connect("198.18.0.2", PORT);
	assert_true(late >= 0);
	(void)!send(late, "\x00", 1, MSG_NOSIGNAL);
	/* expect_error waits (bounded) past the 3 s pre-auth deadline */
	expect_error(e, late, "busy");
	close(late);
	expect_healthy(e);
}

static void test_preauth_flood(void **state)
{
	struct env *e = *state;
	enum { N = 600 };
	int *fds = calloc(N, sizeof(int));
	int n = 0;

	NEED_ENV(state);
	assert_non_null(fds);
	for (; n < N; n++) {
		fds[n] = attacker_connect("198.18.0.2", PORT);
		if (fds[n] < 0)
			break; /* out of descriptors here: enough */
		if (n % 16 == 0)
			(void)sd_event_run(e->ev, 0);
	}
	pump(e, 100);
	expect_healthy(e);
	/* slowloris: one header byte at a time on the survivors */
	for (int i = 0; i < n; i++)
		(void)!send(fds[i], "\x00", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	pump(e, 50);
	expect_healthy(e);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
}

/* Reverse-request abuse: 64 targets, 16 MiB asked, repeated; the node's own
 * check keeps its slots. */
static void test_reverse_abuse(void **state)
{
	struct env *e = *state;
	char req[8192];
	int fds[16];

	NEED_ENV(state);
	snprintf(req, sizeof(req), "{\"id\":1,\"timeout_ms\":3000,\"bytes\":16777216,\"targets\":[");
	for (int i = 0; i < NPF_WIRE_MAX_TARGETS; i++) {
		char t[128];

		snprintf(t, sizeof(t), "%s{\"addr\":\"198.18.%d.%d\",\"port\":9,\"token\":\"%s\"}",
			 i ? "," : "", 1 + i / 200, 1 + i % 200, "00112233445566778899aabbccddeeff");
		strcat(req, t);
	}
	strcat(req, "]}");
	for (int i = 0; i < 16; i++) {
		fds[i] = attacker_connect("198.18.0.2", PORT);
		assert_true(fds[i] >= 0);
		blast_frame(fds[i], NPF_MSG_HELLO, HELLO);
	}
	pump(e, 50);
	for (int i = 0; i < 16; i++) {
		uint8_t f[NPF_WIRE_HDR_LEN + 8192];
		size_t n = strlen(req);

		npf_wire_hdr_encode(f, NPF_MSG_REVERSE_REQ, (uint32_t)n);
		memcpy(f + NPF_WIRE_HDR_LEN, req, n);
		(void)!send(fds[i], f, NPF_WIRE_HDR_LEN + n, MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)!send(fds[i], f, NPF_WIRE_HDR_LEN + n, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	pump(e, 50);
	expect_healthy(e);
	for (int i = 0; i < 16; i++)
		close(fds[i]);
	pump(e, 50);
}

static void make_keys(struct npf_auth_keys *k)
{
	char buf[256];

	assert_true(npf_auth_key_generate(buf, sizeof(buf)) > 0);
	assert_int_equal(npf_auth_keys_parse(buf, strlen(buf), k, NULL, 0), 0);
}

/* Speaks the handshake by hand; returns the session or fails the test. */
static void manual_handshake(struct env *e, int fd, const struct npf_auth_keys *k,
			     struct npf_auth_session *s)
{
	struct npf_auth_hello h = { .n_ids = 1 };
	struct npf_auth_challenge ch;
	struct npf_auth_finish fin;
	json_t *j;
	char *txt;

	strcpy(h.node, "evil");
	memcpy(h.ids[0], k->k[0].id, NPF_AUTH_ID_LEN);
	randombytes_buf(h.nonce, sizeof(h.nonce));
	j = npf_auth_hello_to_json(&h);
	txt = json_dumps(j, JSON_COMPACT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_AUTH_HELLO, txt);
	free(txt);
	json_decref(j);
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_AUTH_CHALLENGE);
	assert_int_equal(npf_auth_challenge_from_json(j, &ch), 0);
	json_decref(j);
	assert_int_equal(npf_auth_proof_check(&k->k[0], &h, ch.node, ch.nonce, true, ch.mac), 0);
	npf_auth_proof(&k->k[0], &h, ch.node, ch.nonce, false, fin.mac);
	j = npf_auth_finish_to_json(&fin);
	txt = json_dumps(j, JSON_COMPACT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_AUTH_FINISH, txt);
	free(txt);
	json_decref(j);
	npf_auth_session_init(s, &k->k[0], &h, ch.node, ch.nonce, true);
}

static size_t sealed(struct npf_auth_session *s, uint16_t type, const char *json, uint8_t *f)
{
	size_t n = strlen(json);

	npf_wire_hdr_encode(f, type, (uint32_t)(n + NPF_AUTH_TAG_LEN));
	memcpy(f + NPF_WIRE_HDR_LEN, json, n);
	npf_auth_seal(s, f, NPF_WIRE_HDR_LEN + n, f + NPF_WIRE_HDR_LEN + n);
	return NPF_WIRE_HDR_LEN + n + NPF_AUTH_TAG_LEN;
}

/* With a cluster key: key holders check each other as before; a peer without
 * the key gets "forbidden" and nothing else, and is not-probed (never fail) in
 * the key holders' checks; a replayed authenticated frame is refused. */
static void test_cluster_key(void **state)
{
	struct env *e = *state;
	struct npf_auth_keys k, other;
	struct npf_auth_session s;
	const char *peers[] = { "198.18.0.4", "198.18.0.1" };
	struct result r = { 0 };
	const struct npf_link *l;
	uint8_t f[512], b[16];
	size_t n;
	json_t *j = NULL;
	int fd;

	NEED_ENV(state);
	make_keys(&k);
	make_keys(&other);
	node_start_key(e, &e->c, "charlie", "198.18.0.3", 0x3333, 0, &k);
	node_start_key(e, &e->d, "delta", "198.18.0.4", 0x4444, 0, &k);

	/* charlie checks delta (key) and alpha (no key) */
	assert_int_equal(npf_probe_check_start(e->c.ctx, peers, 2, 3000, on_check, &r), 0);
	run_until(e, &r.done, HANG_MS);
	assert_int_equal(r.err, 0);
	l = find_link(r.chk, "198.18.0.4");
	assert_int_equal(l->fwd, NPF_OUT_OK);
	assert_int_equal(l->rev, NPF_OUT_OK);
	/* The node must be there and unavailable: a loop that found nothing would pass. */
	{
		size_t seen = 0;

		for (size_t i = 1; i < r.chk->n_nodes; i++)
			if (strcmp(r.chk->nodes[i].name, "198.18.0.1") == 0) {
				assert_false(r.chk->nodes[i].available);
				seen++;
			}
		assert_int_equal(seen, 1);
	}
	free_result(&r);

	/* unauthenticated HELLO, wrong key, garbage AUTH_HELLO: forbidden, then EOF */
	fd = client_connect("198.18.0.3", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO);
	assert_int_equal(recv_frame(e, fd, &j), NPF_MSG_ERROR);
	assert_string_equal(json_string_value(json_object_get(j, "code")), "forbidden");
	assert_null(json_object_get(j, "instance"));
	json_decref(j);
	assert_int_equal(pump_recv(e, fd, b, sizeof(b), HANG_MS), 0);
	close(fd);
	fd = client_connect("198.18.0.3", PORT);
	send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_AUTH_HELLO, "{\"v\":1}");
	expect_error(e, fd, "forbidden");
	close(fd);
	fd = client_connect("198.18.0.3", PORT);
	{
		struct npf_auth_hello h = { .n_ids = 1 };
		char *txt;

		strcpy(h.node, "evil");
		memcpy(h.ids[0], other.k[0].id, NPF_AUTH_ID_LEN);
		j = npf_auth_hello_to_json(&h);
		txt = json_dumps(j, JSON_COMPACT);
		send_frame(e, fd, NPF_WIRE_VERSION, NPF_MSG_AUTH_HELLO, txt);
		free(txt);
		json_decref(j);
	}
	expect_error(e, fd, "forbidden");
	close(fd);

	/* a key holder: HELLO answered; the same sealed bytes again are refused */
	fd = client_connect("198.18.0.3", PORT);
	manual_handshake(e, fd, &k, &s);
	n = sealed(&s, NPF_MSG_HELLO, HELLO, f);
	send_all(e, fd, f, n);
	{
		uint8_t hdr[NPF_WIRE_HDR_LEN], pl[4096];
		struct npf_wire_hdr h;
		size_t got = 0;

		while (got < sizeof(hdr)) {
			ssize_t m = pump_recv(e, fd, hdr + got, sizeof(hdr) - got, HANG_MS);

			assert_true(m > 0);
			got += (size_t)m;
		}
		assert_int_equal(npf_wire_hdr_decode(hdr, sizeof(hdr), sizeof(pl), &h), 0);
		assert_int_equal(h.type, NPF_MSG_HELLO_REPLY);
		for (got = 0; got < h.length;) {
			ssize_t m = pump_recv(e, fd, pl + got, h.length - got, HANG_MS);

			assert_true(m > 0);
			got += (size_t)m;
		}
		assert_int_equal(npf_auth_open(&s, hdr, pl, h.length, &got), 0);
	}
	send_all(e, fd, f, n); /* replay */
	{
		/* The refusal is tagged in the session: read past it to EOF. */
		uint8_t buf[512];
		ssize_t m;
		uint64_t end = npf_now(CLOCK_MONOTONIC) + HANG_MS * USEC_PER_MSEC;

		while ((m = pump_recv(e, fd, buf, sizeof(buf), HANG_MS)) > 0 &&
		       npf_now(CLOCK_MONOTONIC) < end)
			;
		assert_int_equal(m, 0);
	}
	close(fd);
	/* still healthy among key holders afterwards */
	{
		const char *p1[] = { "198.18.0.4" };

		assert_int_equal(npf_probe_check_start(e->c.ctx, p1, 1, 3000, on_check, &r), 0);
		run_until(e, &r.done, HANG_MS);
		l = find_link(r.chk, "198.18.0.4");
		assert_int_equal(l->fwd, NPF_OUT_OK);
		assert_int_equal(l->rev, NPF_OUT_OK);
		free_result(&r);
	}
	node_stop(&e->c);
	node_stop(&e->d);
}

/* With a cluster key, only the job's coordinator decides (issue 19): a JOB_DECISION on the
 * connection our row went out on, from a key holder that is not the node we named as the
 * coordinator, is no decision; the row itself reached the handler bound to the key's node. */
static void test_job_decision_bound(void **state)
{
	struct env *e = *state;
	struct npf_auth_keys k;
	struct npf_msg_row row;
	char nodes[3] = "..", states[3];
	struct npf_msg_job_decision dec;
	struct job_result jr = { 0 };
	struct npf_job_submit *js = NULL;

	NEED_ENV(state);
	make_keys(&k);
	node_start_key(e, &e->c, "charlie", "198.18.0.3", 0x3333, 0, &k);
	node_start_key(e, &e->d, "delta", "198.18.0.4", 0x4444, 0, &k);
	npf_probe_set_job_handler(e->d.ctx, on_job_row);
	job_pair(&row, &dec, 'c', "charlie", states, nodes);
	/* The job names its coordinator "198.18.0.4"; the key holder there proves "delta". */
	assert_int_equal(npf_probe_job_submit(e->c.ctx, "198.18.0.4", &row, 5000, on_job_done, &jr,
					      &js),
			 0);
	while (!e->d.job_row && !jr.done)
		assert_true(sd_event_run(e->ev, 10000) >= 0);
	assert_non_null(e->d.job_row);
	assert_string_equal(e->d.job_row->node, "charlie");
	assert_int_equal(npf_probe_job_answer(e->d.ctx, e->d.job_waiter, &dec), 0);
	run_until(e, &jr.done, HANG_MS);
	assert_int_equal(jr.err, -EPROTO);
	/* A row for another node than the key's never reaches the handler. */
	npf_wire_row_clear(e->d.job_row);
	free(e->d.job_row);
	e->d.job_row = NULL;
	strcpy(row.node, "alpha");
	memset(&jr, 0, sizeof(jr));
	assert_int_equal(npf_probe_job_submit(e->c.ctx, "198.18.0.4", &row, 5000, on_job_done, &jr,
					      &js),
			 0);
	run_until(e, &jr.done, HANG_MS);
	assert_int_equal(jr.err, -EPROTO);
	assert_null(e->d.job_row);
	npf_probe_set_job_handler(e->d.ctx, NULL);
	node_stop(&e->c);
	node_stop(&e->d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_ok),
		cmocka_unit_test(test_job_exchange),
		cmocka_unit_test(test_job_decision_bound),
		cmocka_unit_test(test_wrong_peer),
		cmocka_unit_test(test_unavailable),
		cmocka_unit_test(test_bad_args_and_cancel),
		cmocka_unit_test(test_hostile_control),
		cmocka_unit_test(test_reverse_request),
		cmocka_unit_test(test_reverse_unannounced),
		cmocka_unit_test(test_data_port),
		cmocka_unit_test(test_conn_cap),
		cmocka_unit_test(test_listener_exhaustion),
		cmocka_unit_test(test_preauth_flood),
		cmocka_unit_test(test_polite_eviction),
		cmocka_unit_test(test_reverse_abuse),
		cmocka_unit_test(test_cluster_key),
		cmocka_unit_test(test_many_candidates),
		cmocka_unit_test(test_job_check_shares_paths),
	};

	return npf_run_tests(tests, setup, teardown);
}
