// SPDX-License-Identifier: MIT
/* npf_attack: a hostile peer for the netns hostile suite. Every mode is bounded
 * in connections and time and talks only to the address it is given (the test
 * passes addresses inside its own namespaces). Prints "ready" once the attack is
 * in place (the suite waits for it), then one "inputs N" line with how many
 * hostile inputs it sent, and exits 0 unless the daemon answered in a way the
 * mode forbids (then 1, with the reason on stderr).
 *
 *   npf_attack MODE ADDR PORT [N] [HOLD_MS] [KEYFILE]
 *   idle N HOLD        N connections that never say anything
 *   flood N            N connect + close, as fast as possible
 *   exhaust N HOLD     N x (HELLO + 4 OPEN_DATA), held (the issue-12 attack)
 *   exhaust-close N    the same, each connection closed at once
 *   garbage            malformed, oversized, truncated, wrong-version and wrong-state frames
 *   slowloris N HOLD   N connections dribbling one byte every 200 ms
 *   reverse N HOLD     N x (HELLO + 2 REVERSE_REQ of 64 targets, 16 MiB each)
 *   unauth             HELLO to a keyed daemon: only a "forbidden" ERROR may come back
 *   replay KEYFILE     authenticate, send a tagged HELLO, replay it: must be refused
 *   squat HOLD         bind ADDR:PORT first and hold it (port squatting)
 * Issue 19 (data ports, eviction):
 *   race HOLD          a local user on the probed node: watches for new listeners on ADDR
 *                      (not PORT), as /proc/net/tcp shows them but faster (sock_diag
 *                      netlink, open to any user), and connects to each at once with a
 *                      bogus DATA_AUTH; prints "raced N" (connections that got in before
 *                      the listener closed) and "late N" (refused: it was gone)
 *   churn N HOLD       keeps N unauthenticated idle connections open, replacing the
 *                      oldest, in bursts of 16: run from a prober's own address it makes
 *                      the daemon evict that prober's pre-auth connections too
 *   tokenreplay KEYFILE  a key holder: checks the data port's reply MAC, then replays the
 *                      first listener's token to the next one: it must be dropped unread,
 *                      and the right token must still get in
 *   fakedata HOLD NODE INSTANCE  listens on ADDR:PORT (where nftables sends a prober's
 *                      data connections) and answers DATA_AUTH as NODE/INSTANCE without a
 *                      valid MAC (none, or zeros), then echoes: an on-path impostor */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "keyfile.h"
#include "wire.h"

#define MAX_CONNS 20000
#define HELLO_JSON "{\"node\":\"mallory\",\"instance\":\"00000000000000ee\",\"candidates\":true}"

static struct sockaddr_in dst;
/* OPEN_DATA (protocol version 3) for a listener on the target's address: set in main(). */
static char od_big[128], od_small[128];

static void open_data_json(void)
{
	snprintf(od_big, sizeof(od_big), "{\"id\":1,\"bytes\":16777216,\"addr\":\"%s\"}",
		 inet_ntoa(dst.sin_addr));
	snprintf(od_small, sizeof(od_small), "{\"id\":1,\"bytes\":65536,\"addr\":\"%s\"}",
		 inet_ntoa(dst.sin_addr));
}
static long inputs;
static volatile sig_atomic_t stop; /* SIGTERM: end the attack, still print the figures */

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Blocking connect with a 2 s bound; returns the fd or -errno. */
static int dial(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd p;
	int err = 0;
	socklen_t l = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0 && errno != EINPROGRESS) {
		err = -errno;
		close(fd);
		return err;
	}
	p = (struct pollfd){.fd = fd, .events = POLLOUT};
	if (poll(&p, 1, 2000) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err) {
		close(fd);
		return -(err ? err : ETIMEDOUT);
	}
	return fd;
}

static void put(int fd, const void *b, size_t n)
{
	(void)!send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	inputs++;
}

static void frame(int fd, uint16_t version, uint16_t type, const char *json)
{
	uint8_t f[NPF_WIRE_HDR_LEN + 8192];
	size_t n = strlen(json);

	if (n > 8192)
		n = 8192;
	npf_wire_hdr_encode(f, type, (uint32_t)n);
	f[0] = (uint8_t)(version >> 8);
	f[1] = (uint8_t)version;
	memcpy(f + NPF_WIRE_HDR_LEN, json, n);
	put(fd, f, NPF_WIRE_HDR_LEN + n);
}

/* Reads until EOF or 2 s; returns bytes read (-1 on timeout). */
static long read_to_eof(int fd, uint8_t *buf, size_t len)
{
	uint64_t end = now_ms() + 2000;
	size_t got = 0;

	while (now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, buf + got, got < len ? len - got : 0, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return (long)got;
		if (n > 0)
			got += (size_t)n;
		if (got >= len)
			return (long)got;
	}
	return -1;
}

static void hold(uint64_t ms)
{
	uint64_t end = now_ms() + ms;

	while (now_ms() < end && !stop)
		usleep(50000);
}

static int many(long n, uint64_t hold_ms, int what)
{
	static int fds[MAX_CONNS];
	long k = 0;

	raise_nofile();
	if (n > MAX_CONNS)
		n = MAX_CONNS;
	for (; k < n && !stop; k++) {
		fds[k] = dial();
		if (fds[k] < 0)
			break; /* out of descriptors or the backlog is full: enough */
		inputs++;
		if (what == 1) {
			frame(fds[k], NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO_JSON);
			for (int i = 0; i < 4; i++)
				frame(fds[k], NPF_WIRE_VERSION, NPF_MSG_OPEN_DATA, od_big);
		} else if (what == 2) {
			char req[8192];

			snprintf(
			    req, sizeof(req),
			    "{\"id\":%ld,\"timeout_ms\":60000,\"bytes\":16777216,\"targets\":[", k);
			for (int i = 0; i < NPF_WIRE_MAX_TARGETS; i++) {
				char t[128];

				snprintf(t, sizeof(t),
					 "%s{\"addr\":\"%s\",\"port\":1029,\"token\":"
					 "\"00112233445566778899aabbccddeeff\"}",
					 i ? "," : "",
					 inet_ntoa((struct in_addr){
					     htonl(ntohl(dst.sin_addr.s_addr) + 1 + (uint32_t)i)}));
				strcat(req, t);
			}
			strcat(req, "]}");
			frame(fds[k], NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO_JSON);
			frame(fds[k], NPF_WIRE_VERSION, NPF_MSG_REVERSE_REQ, req);
			frame(fds[k], NPF_WIRE_VERSION, NPF_MSG_REVERSE_REQ, req);
		}
	}
	printf("ready %ld connections\n", k);
	fflush(stdout);
	if (what == 3) {
		/* slowloris: one byte of a header at a time */
		uint64_t end = now_ms() + hold_ms;

		for (int step = 0; now_ms() < end && !stop; step++) {
			for (long i = 0; i < k; i++)
				put(fds[i], step % 8 == 0 ? "\x00" : "\x01", 1);
			usleep(200000);
		}
	} else {
		hold(hold_ms);
	}
	for (long i = 0; i < k; i++)
		close(fds[i]);
	return 0;
}

static int flood(long n, bool talk)
{
	raise_nofile();
	printf("ready\n");
	fflush(stdout);
	for (long k = 0; k < n && !stop; k++) {
		int fd = dial();

		if (fd < 0) {
			usleep(1000);
			continue;
		}
		inputs++;
		if (talk) {
			frame(fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO_JSON);
			for (int i = 0; i < 4; i++)
				frame(fd, NPF_WIRE_VERSION, NPF_MSG_OPEN_DATA, od_small);
		}
		close(fd);
	}
	return 0;
}

/* One hostile input per connection; the daemon must answer with an ERROR or
 * close, never hang (bounded read) and never crash (the suite checks). */
static int garbage(void)
{
	static const struct {
		uint16_t version, type;
		const char *json;
	} frames[] = {
	    {NPF_WIRE_VERSION + 1, NPF_MSG_HELLO, HELLO_JSON}, /* unknown version */
	    {NPF_WIRE_VERSION - 1, NPF_MSG_HELLO, HELLO_JSON}, /* the previous one */
	    {0xffff, NPF_MSG_HELLO, HELLO_JSON},
	    {NPF_WIRE_VERSION, 0, "{}"}, /* unknown types */
	    {NPF_WIRE_VERSION, 99, "{}"},
	    {NPF_WIRE_VERSION, 0xffff, "{}"},
	    {NPF_WIRE_VERSION, NPF_MSG_HELLO, "{\"node\":\"a\",\"node\":\"b\"}"},
	    {NPF_WIRE_VERSION, NPF_MSG_HELLO, "[]"},
	    {NPF_WIRE_VERSION, NPF_MSG_HELLO, "{\"node\":\"\\u0000\",\"instance\":\"1\",\"candidates\":1}"},
	    {NPF_WIRE_VERSION, NPF_MSG_HELLO,
	     "{\"node\":\"x\",\"instance\":\"0000000000000000\",\"candidates\":false}"},
	    {NPF_WIRE_VERSION, NPF_MSG_HELLO, "not json at all"},
	    {NPF_WIRE_VERSION, NPF_MSG_OPEN_DATA, "{\"id\":1,\"bytes\":65536,\"addr\":\"127.0.0.1\"}"}, /* before HELLO */
	    {NPF_WIRE_VERSION, NPF_MSG_REVERSE_REQ, "{\"id\":1}"},	 /* before HELLO */
	    {NPF_WIRE_VERSION, NPF_MSG_HELLO_REPLY, "{}"},		 /* a reply, unasked */
	    {NPF_WIRE_VERSION, NPF_MSG_REVERSE_RESULT, "{\"id\":1,\"results\":[]}"},
	    {NPF_WIRE_VERSION, NPF_MSG_DATA_AUTH, "{\"token\":\"00000000000000000000000000000000\"}"},
	    {NPF_WIRE_VERSION, NPF_MSG_ERROR, "{\"code\":\"busy\",\"message\":\"\\u001b[2J\"}"},
	    {NPF_WIRE_VERSION, NPF_MSG_AUTH_FINISH, "{\"mac\":\"00\"}"}, /* auth out of order */
	    {NPF_WIRE_VERSION, NPF_MSG_AUTH_CHALLENGE, "{}"},
	};
	uint8_t buf[4096], hdr[NPF_WIRE_HDR_LEN];
	int fd, bad = 0;

	printf("ready\n");
	fflush(stdout);
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		fd = dial();
		if (fd < 0)
			continue;
		frame(fd, frames[i].version, frames[i].type, frames[i].json);
		if (read_to_eof(fd, buf, sizeof(buf)) < 0) {
			fprintf(stderr, "garbage %zu: no answer and no close within 2 s\n", i);
			bad = 1;
		}
		close(fd);
	}
	/* valid HELLO twice; oversized header; truncated frame then EOF; random bytes */
	fd = dial();
	if (fd >= 0) {
		frame(fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO_JSON);
		frame(fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO_JSON);
		if (read_to_eof(fd, buf, sizeof(buf)) < 0)
			bad = 1;
		close(fd);
	}
	fd = dial();
	if (fd >= 0) {
		npf_wire_hdr_encode(hdr, NPF_MSG_HELLO, 0xffffffffu);
		put(fd, hdr, sizeof(hdr));
		if (read_to_eof(fd, buf, sizeof(buf)) < 0)
			bad = 1;
		close(fd);
	}
	fd = dial();
	if (fd >= 0) {
		npf_wire_hdr_encode(hdr, NPF_MSG_HELLO, 200);
		put(fd, hdr, sizeof(hdr));
		put(fd, "{\"node\":", 8);
		shutdown(fd, SHUT_WR);
		if (read_to_eof(fd, buf, sizeof(buf)) < 0)
			bad = 1;
		close(fd);
	}
	for (int r = 0; r < 200; r++) {
		uint8_t junk[512];
		size_t n = 1 + randombytes_uniform(sizeof(junk));

		fd = dial();
		if (fd < 0)
			continue;
		randombytes_buf(junk, n);
		if (r % 2)
			junk[0] = 0, junk[1] = NPF_WIRE_VERSION; /* our version: the parser goes deeper */
		put(fd, junk, n);
		shutdown(fd, SHUT_WR);
		if (read_to_eof(fd, buf, sizeof(buf)) < 0)
			bad = 1;
		close(fd);
	}
	return bad;
}

/* Reads one frame header + payload (bounded). Returns its type or -1. */
static int read_frame(int fd, uint8_t *pl, size_t cap, struct npf_wire_hdr *h, uint8_t *hdr)
{
	size_t got = 0;
	uint64_t end = now_ms() + 2000;

	while (got < NPF_WIRE_HDR_LEN + (got >= NPF_WIRE_HDR_LEN ? h->length : 0) &&
	       now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;
		size_t want;

		if (poll(&p, 1, 100) <= 0)
			continue;
		want = got < NPF_WIRE_HDR_LEN ? NPF_WIRE_HDR_LEN - got
					      : NPF_WIRE_HDR_LEN + h->length - got;
		n = recv(fd, got < NPF_WIRE_HDR_LEN ? hdr + got : pl + (got - NPF_WIRE_HDR_LEN),
			 want, MSG_DONTWAIT);
		if (n <= 0)
			return -1;
		got += (size_t)n;
		if (got == NPF_WIRE_HDR_LEN &&
		    (npf_wire_hdr_decode(hdr, NPF_WIRE_HDR_LEN, (uint32_t)cap, h) < 0))
			return -1;
	}
	return got >= NPF_WIRE_HDR_LEN && got == NPF_WIRE_HDR_LEN + h->length ? h->type : -1;
}

static int unauth(void)
{
	uint8_t pl[65536], hdr[NPF_WIRE_HDR_LEN], buf[64];
	struct npf_wire_hdr h;
	json_t *j = NULL;
	int fd = dial(), t, bad = 0;

	printf("ready\n");
	fflush(stdout);
	if (fd < 0) {
		fprintf(stderr, "unauth: connect: %s\n", strerror(-fd));
		return 1;
	}
	frame(fd, NPF_WIRE_VERSION, NPF_MSG_HELLO, HELLO_JSON);
	t = read_frame(fd, pl, sizeof(pl), &h, hdr);
	if (t != NPF_MSG_ERROR || npf_wire_parse_json(pl, h.length, &j) < 0 ||
	    !json_string_value(json_object_get(j, "code")) ||
	    strcmp(json_string_value(json_object_get(j, "code")), "forbidden") != 0) {
		fprintf(stderr, "unauth: wanted a forbidden ERROR, got type %d\n", t);
		bad = 1;
	}
	json_decref(j);
	if (read_to_eof(fd, buf, sizeof(buf)) != 0) {
		fprintf(stderr, "unauth: more than the ERROR came back\n");
		bad = 1;
	}
	close(fd);
	return bad;
}

/* The client side of the handshake on fd as "mallory" with k's first key. Returns 0 or -1. */
static int keyed_session(int fd, const struct npf_auth_keys *k, struct npf_auth_session *s)
{
	struct npf_auth_hello hl = {.n_ids = 1};
	struct npf_auth_challenge ch;
	struct npf_auth_finish fin;
	struct npf_wire_hdr h;
	uint8_t pl[65536], hdr[NPF_WIRE_HDR_LEN];
	json_t *j = NULL;
	char *txt;

	strcpy(hl.node, "mallory");
	memcpy(hl.ids[0], k->k[0].id, NPF_AUTH_ID_LEN);
	randombytes_buf(hl.nonce, sizeof(hl.nonce));
	j = npf_auth_hello_to_json(&hl);
	txt = json_dumps(j, JSON_COMPACT);
	frame(fd, NPF_WIRE_VERSION, NPF_MSG_AUTH_HELLO, txt);
	free(txt);
	json_decref(j);
	j = NULL;
	if (read_frame(fd, pl, sizeof(pl), &h, hdr) != NPF_MSG_AUTH_CHALLENGE ||
	    npf_wire_parse_json(pl, h.length, &j) < 0 || npf_auth_challenge_from_json(j, &ch) < 0 ||
	    npf_auth_proof_check(&k->k[0], &hl, ch.node, ch.nonce, true, ch.mac) < 0) {
		json_decref(j);
		return -1;
	}
	json_decref(j);
	npf_auth_proof(&k->k[0], &hl, ch.node, ch.nonce, false, fin.mac);
	j = npf_auth_finish_to_json(&fin);
	txt = json_dumps(j, JSON_COMPACT);
	frame(fd, NPF_WIRE_VERSION, NPF_MSG_AUTH_FINISH, txt);
	free(txt);
	json_decref(j);
	npf_auth_session_init(s, &k->k[0], &hl, ch.node, ch.nonce, true);
	return 0;
}

/* Builds one sealed frame of json into f (room for 1024 bytes); returns its length. */
static size_t sealed_frame(struct npf_auth_session *s, uint16_t type, const char *json, uint8_t *f)
{
	size_t n = strlen(json);

	npf_wire_hdr_encode(f, type, (uint32_t)(n + NPF_AUTH_TAG_LEN));
	memcpy(f + NPF_WIRE_HDR_LEN, json, n);
	npf_auth_seal(s, f, NPF_WIRE_HDR_LEN + n, f + NPF_WIRE_HDR_LEN + n);
	npf_auth_sealed(s);
	return NPF_WIRE_HDR_LEN + n + NPF_AUTH_TAG_LEN;
}

/* Reads one sealed frame of type want and parses it into *j (caller decrefs). 0 or -1. */
static int read_sealed(int fd, struct npf_auth_session *s, int want, json_t **j)
{
	uint8_t pl[65536], hdr[NPF_WIRE_HDR_LEN];
	struct npf_wire_hdr h;
	size_t jl;

	*j = NULL;
	if (read_frame(fd, pl, sizeof(pl), &h, hdr) != want ||
	    npf_auth_open(s, hdr, pl, h.length, &jl) < 0 || npf_wire_parse_json(pl, jl, j) < 0)
		return -1;
	return 0;
}

static int load_key(const char *keyfile, struct npf_auth_keys *k, const char *mode)
{
	char err[256];

	if (!keyfile || npf_keyfile_load(keyfile, k, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: key: %s\n", mode, keyfile ? err : "no key file");
		return -1;
	}
	return 0;
}

static int replay(const char *keyfile)
{
	struct npf_auth_keys k;
	struct npf_auth_session s;
	uint8_t f[1024], buf[4096];
	json_t *j = NULL;
	size_t n;
	long got;
	int fd;

	if (load_key(keyfile, &k, "replay") < 0)
		return 1;
	fd = dial();
	printf("ready\n");
	fflush(stdout);
	if (fd < 0)
		return 1;
	if (keyed_session(fd, &k, &s) < 0) {
		fprintf(stderr, "replay: handshake failed\n");
		return 1;
	}
	n = sealed_frame(&s, NPF_MSG_HELLO, HELLO_JSON, f);
	put(fd, f, n);
	if (read_sealed(fd, &s, NPF_MSG_HELLO_REPLY, &j) < 0) {
		fprintf(stderr, "replay: the genuine tagged HELLO was not answered\n");
		return 1;
	}
	json_decref(j);
	put(fd, f, n); /* the replay */
	/* Only a refusal may follow, then EOF: never a second HELLO_REPLY. */
	got = read_to_eof(fd, buf, sizeof(buf));
	close(fd);
	if (got < 0) {
		fprintf(stderr, "replay: no close after the replay\n");
		return 1;
	}
	if (got >= NPF_WIRE_HDR_LEN && buf[3] == NPF_MSG_HELLO_REPLY) {
		fprintf(stderr, "replay: the replayed HELLO was answered\n");
		return 1;
	}
	sodium_memzero(&k, sizeof(k));
	return 0;
}

/* ---- issue 19: data ports ---- */

static int dial_port(uint16_t port)
{
	uint16_t keep = dst.sin_port;
	int fd;

	dst.sin_port = htons(port);
	fd = dial();
	dst.sin_port = keep;
	return fd;
}

static void data_auth(int fd, const uint8_t token[NPF_WIRE_TOKEN_LEN])
{
	char hex[2 * NPF_WIRE_TOKEN_LEN + 1], js[64];

	sodium_bin2hex(hex, sizeof(hex), token, NPF_WIRE_TOKEN_LEN);
	snprintf(js, sizeof(js), "{\"token\":\"%s\"}", hex);
	frame(fd, NPF_WIRE_VERSION, NPF_MSG_DATA_AUTH, js);
}

/* OPEN_DATA on the keyed control connection: the listener's port and nonce. 0 or -1. */
static int open_data(int fd, struct npf_auth_session *s, uint16_t *port,
		     uint8_t nonce[NPF_WIRE_NONCE_LEN])
{
	struct npf_msg_open_data_reply r;
	uint8_t f[1024];
	json_t *j;
	int ok;

	char js[128];

	snprintf(js, sizeof(js), "{\"id\":1,\"bytes\":16384,\"addr\":\"%s\"}",
		 inet_ntoa(dst.sin_addr));
	put(fd, f, sealed_frame(s, NPF_MSG_OPEN_DATA, js, f));
	if (read_sealed(fd, s, NPF_MSG_OPEN_DATA_REPLY, &j) < 0)
		return -1;
	ok = npf_wire_open_data_reply_from_json(j, &r) == 0 && r.has_nonce;
	json_decref(j);
	if (!ok)
		return -1;
	*port = r.port;
	memcpy(nonce, r.nonce, NPF_WIRE_NONCE_LEN);
	return 0;
}

/* A data connection with token; the DATA_AUTH_REPLY parsed into *ar. 0, or -1 when none
 * came (EOF, reset or 2 s of silence). */
static int data_try(uint16_t port, const uint8_t token[NPF_WIRE_TOKEN_LEN],
		    struct npf_msg_data_auth_reply *ar)
{
	uint8_t pl[4096], hdr[NPF_WIRE_HDR_LEN];
	struct npf_wire_hdr h;
	json_t *j = NULL;
	int fd = dial_port(port), r = -1;

	if (fd < 0)
		return -1;
	data_auth(fd, token);
	if (read_frame(fd, pl, sizeof(pl), &h, hdr) == NPF_MSG_DATA_AUTH_REPLY &&
	    npf_wire_parse_json(pl, h.length, &j) == 0 &&
	    npf_wire_data_auth_reply_from_json(j, ar) == 0)
		r = 0;
	json_decref(j);
	close(fd);
	return r;
}

static int tokenreplay(const char *keyfile)
{
	struct npf_auth_keys k;
	struct npf_auth_session s;
	struct npf_msg_data_auth_reply ar;
	uint8_t f[1024], n1[NPF_WIRE_NONCE_LEN], n2[NPF_WIRE_NONCE_LEN];
	uint8_t t1[NPF_WIRE_TOKEN_LEN], t2[NPF_WIRE_TOKEN_LEN], mac[NPF_WIRE_MAC_LEN];
	uint16_t p1, p2;
	json_t *j;
	int fd, bad = 0;

	if (load_key(keyfile, &k, "tokenreplay") < 0)
		return 1;
	fd = dial();
	printf("ready\n");
	fflush(stdout);
	if (fd < 0 || keyed_session(fd, &k, &s) < 0) {
		fprintf(stderr, "tokenreplay: handshake failed\n");
		return 1;
	}
	put(fd, f, sealed_frame(&s, NPF_MSG_HELLO, HELLO_JSON, f));
	if (read_sealed(fd, &s, NPF_MSG_HELLO_REPLY, &j) < 0) {
		fprintf(stderr, "tokenreplay: no HELLO_REPLY\n");
		return 1;
	}
	json_decref(j);
	/* The genuine exchange: the reply proves the daemon with a MAC. */
	if (open_data(fd, &s, &p1, n1) < 0) {
		fprintf(stderr, "tokenreplay: OPEN_DATA_REPLY without a nonce\n");
		return 1;
	}
	npf_auth_data_token(&s, p1, n1, t1);
	if (data_try(p1, t1, &ar) < 0) {
		fprintf(stderr, "tokenreplay: the right token got no reply\n");
		bad = 1;
	} else {
		npf_auth_data_reply_mac(&s, p1, n1, ar.node, ar.instance, mac);
		if (!ar.has_mac || sodium_memcmp(mac, ar.mac, sizeof(mac)) != 0) {
			fprintf(stderr, "tokenreplay: DATA_AUTH_REPLY without a valid MAC\n");
			bad = 1;
		}
	}
	/* The next listener: the token seen on the wire is worth nothing there. */
	if (open_data(fd, &s, &p2, n2) < 0) {
		fprintf(stderr, "tokenreplay: second OPEN_DATA failed\n");
		return 1;
	}
	inputs++;
	if (data_try(p2, t1, &ar) == 0) {
		fprintf(stderr,
			"tokenreplay: the replayed token was answered (port %u, first %u)\n", p2,
			p1);
		bad = 1;
	}
	npf_auth_data_token(&s, p2, n2, t2);
	if (data_try(p2, t2, &ar) < 0) {
		fprintf(stderr, "tokenreplay: after the replay the right token got no reply\n");
		bad = 1;
	}
	printf("ports %u %u nonces %s\n", p1, p2, memcmp(n1, n2, sizeof(n1)) ? "differ" : "EQUAL");
	close(fd);
	sodium_memzero(&k, sizeof(k));
	return bad;
}

/* LISTEN sockets on dst's address (any port but dst's), as /proc/net/tcp lists them, from
 * sock_diag (the same table, without the text formatting: a racer polls it faster): calls fn
 * for each with its port and inode. */
static void diag_listeners(int nl, void (*fn)(uint16_t port, unsigned long inode))
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
	    .nlh = {.nlmsg_len = sizeof(req),
		    .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		    .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
	    .r = {.sdiag_family = AF_INET,
		  .sdiag_protocol = IPPROTO_TCP,
		  .idiag_states = 1u << TCP_LISTEN},
	};
	static uint8_t buf[65536];

	if (send(nl, &req, sizeof(req), 0) < 0)
		return;
	for (;;) {
		ssize_t n = recv(nl, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n <= 0)
			return;
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				return;
			if (m->id.idiag_src[0] == dst.sin_addr.s_addr &&
			    m->id.idiag_sport != dst.sin_port)
				fn(ntohs(m->id.idiag_sport), m->idiag_inode);
		}
	}
}

#define RACE_FDS 256
static struct {
	int fd;
	bool counted;
} race_fd[RACE_FDS];
static unsigned long race_seen[4096];
static size_t race_n_seen, race_next;
static long race_raced, race_late, race_listeners;

static void race_one(uint16_t port, unsigned long inode)
{
	static const uint8_t bogus[NPF_WIRE_TOKEN_LEN];
	struct sockaddr_in a = dst;
	int fd;

	for (size_t i = 0; i < race_n_seen && i < 4096; i++)
		if (race_seen[i] == inode)
			return;
	race_seen[race_n_seen++ % 4096] = inode;
	race_listeners++;
	a.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
		race_late++;
		close(fd);
		return;
	}
	data_auth(fd, bogus);
	if (race_fd[race_next].fd > 0)
		close(race_fd[race_next].fd);
	race_fd[race_next].fd = fd;
	race_fd[race_next].counted = false;
	race_next = (race_next + 1) % RACE_FDS;
}

/* Settles the connections made: in (connected before the listener closed) or late. */
static void race_settle(void)
{
	for (size_t i = 0; i < RACE_FDS; i++) {
		struct pollfd p = {.fd = race_fd[i].fd, .events = POLLOUT};
		int err = 0;
		socklen_t l = sizeof(err);

		if (race_fd[i].fd <= 0 || race_fd[i].counted || poll(&p, 1, 0) != 1)
			continue;
		race_fd[i].counted = true;
		if (getsockopt(race_fd[i].fd, SOL_SOCKET, SO_ERROR, &err, &l) == 0 && !err)
			race_raced++;
		else
			race_late++;
	}
}

static int race(uint64_t hold_ms)
{
	uint64_t end = now_ms() + (hold_ms > 120000 ? 120000 : hold_ms);
	int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	if (nl < 0) {
		perror("race: sock_diag");
		return 1;
	}
	raise_nofile();
	diag_listeners(nl, race_one); /* what listens already is not new */
	race_listeners = 0;
	for (size_t i = 0; i < RACE_FDS; i++)
		if (race_fd[i].fd > 0) {
			close(race_fd[i].fd);
			race_fd[i].fd = 0;
		}
	printf("ready uid %u\n", (unsigned)getuid());
	fflush(stdout);
	while (now_ms() < end && !stop) {
		diag_listeners(nl, race_one);
		race_settle();
	}
	close(nl);
	race_settle();
	inputs = race_listeners;
	printf("listeners %ld raced %ld late %ld\n", race_listeners, race_raced, race_late);
	for (size_t i = 0; i < RACE_FDS; i++)
		if (race_fd[i].fd > 0)
			close(race_fd[i].fd);
	return 0;
}

static int churn(long n, uint64_t hold_ms)
{
	static int fds[1024];
	uint64_t end = now_ms() + hold_ms;
	long k = 0;

	if (n < 1 || n > 1024)
		n = 1024;
	raise_nofile();
	printf("ready\n");
	fflush(stdout);
	while (now_ms() < end && !stop) {
		int fd = dial();

		if (fd >= 0) {
			if (k >= n)
				close(fds[k % n]);
			fds[k % n] = fd;
			k++;
			inputs++;
		}
		/* Bursts of 16: more than the per-address pre-auth cap (8) arrive within a
		 * prober's handshake, so its connection is evicted too, not only our oldest. */
		if (k % 16 == 0)
			usleep(1000);
	}
	for (long i = 0; i < (k < n ? k : n); i++)
		close(fds[i]);
	return 0;
}

/* Answers one data connection as node/instance without a valid MAC, then echoes. */
static void fake_one(int fd, const char *node, const char *instance, bool zero_mac)
{
	uint8_t pl[4096], hdr[NPF_WIRE_HDR_LEN], buf[16384];
	struct npf_wire_hdr h;
	char js[256];
	uint64_t end = now_ms() + 3000;

	if (read_frame(fd, pl, sizeof(pl), &h, hdr) != NPF_MSG_DATA_AUTH)
		return;
	snprintf(js, sizeof(js), "{\"node\":\"%s\",\"instance\":\"%s\"%s}", node, instance,
		 zero_mac ? ",\"mac\":\"000000000000000000000000000000000000000000000000000000"
			    "0000000000\""
			  : "");
	frame(fd, NPF_WIRE_VERSION, NPF_MSG_DATA_AUTH_REPLY, js);
	while (now_ms() < end && !stop) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, 100) <= 0)
			continue;
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r <= 0)
			return;
		(void)!send(fd, buf, (size_t)r, MSG_NOSIGNAL);
	}
}

static int fakedata(uint64_t hold_ms, const char *node, const char *instance)
{
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	uint64_t end = now_ms() + (hold_ms > 120000 ? 120000 : hold_ms);

	(void)setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&dst, sizeof(dst)) < 0 || listen(lfd, 64) < 0) {
		perror("fakedata");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (now_ms() < end && !stop) {
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		int fd;

		if (poll(&p, 1, 100) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		fake_one(fd, node, instance, inputs % 2 == 1);
		inputs++;
		close(fd);
	}
	close(lfd);
	return 0;
}

static int squat(uint64_t hold_ms)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0 || listen(fd, 16) < 0) {
		perror("squat");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	hold(hold_ms);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode;
	long n;
	uint64_t hold_ms;
	int r;

	if (argc < 4) {
		fprintf(stderr, "usage: npf_attack MODE ADDR PORT [N] [HOLD_MS] [KEYFILE]\n");
		return 2;
	}
	if (sodium_init() < 0)
		return 2;
	signal(SIGTERM, on_term);
	mode = argv[1];
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)atoi(argv[3]));
	if (inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1)
		return 2;
	open_data_json();
	n = argc > 4 ? atol(argv[4]) : 1;
	hold_ms = argc > 5 ? strtoull(argv[5], NULL, 10) : 0;
	if (hold_ms > 120000)
		hold_ms = 120000;
	if (strcmp(mode, "idle") == 0)
		r = many(n, hold_ms, 0);
	else if (strcmp(mode, "exhaust") == 0)
		r = many(n, hold_ms, 1);
	else if (strcmp(mode, "reverse") == 0)
		r = many(n, hold_ms, 2);
	else if (strcmp(mode, "slowloris") == 0)
		r = many(n, hold_ms, 3);
	else if (strcmp(mode, "flood") == 0)
		r = flood(n, false);
	else if (strcmp(mode, "exhaust-close") == 0)
		r = flood(n, true);
	else if (strcmp(mode, "garbage") == 0)
		r = garbage();
	else if (strcmp(mode, "unauth") == 0)
		r = unauth();
	else if (strcmp(mode, "replay") == 0)
		r = replay(argc > 4 ? argv[4] : NULL);
	else if (strcmp(mode, "squat") == 0)
		r = squat(argc > 4 ? strtoull(argv[4], NULL, 10) : 0);
	else if (strcmp(mode, "race") == 0)
		r = race(argc > 4 ? strtoull(argv[4], NULL, 10) : 0);
	else if (strcmp(mode, "churn") == 0)
		r = churn(n, hold_ms);
	else if (strcmp(mode, "tokenreplay") == 0)
		r = tokenreplay(argc > 4 ? argv[4] : NULL);
	else if (strcmp(mode, "fakedata") == 0 && argc > 6)
		r = fakedata(strtoull(argv[4], NULL, 10), argv[5], argv[6]);
	else
		return 2;
	printf("inputs %ld\n", inputs);
	return r;
}
