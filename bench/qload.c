// SPDX-License-Identifier: MIT
/* qload: load generator for the daemon's local API (cached verdict queries), used by bench/run. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/*
 * Several client threads, each a blocking Unix stream socket, each with one request in flight
 * (the protocol allows no pipelining: the daemon reads the next frame only after replying).
 * Latency is measured around one write of the request frame and the read of the whole reply
 * frame, so it includes the daemon's work and both kernel crossings, as a TaskProlog or SPANK
 * plugin would see it. With --reconnect every query also pays connect()+close(), which is what
 * a one-shot client (netpreflight, the TaskProlog) does.
 *
 * Replies are checked without a JSON parser in the hot loop (the parser would compete with the
 * daemon for the two cores): the first reply of every thread is decoded fully with jansson, the
 * rest must carry the same compact "ok":true and "cached":true markers.
 */

#define QL_MAX_REPLY (16u << 20)  /* the API's reply cap (NPF_API_MAX_REPLY) */
#define QL_MAX_CLIENTS 64	  /* the daemon's connection cap */
#define QL_MAX_SAMPLES (4u << 20) /* latency samples kept over all clients */
#define QL_IO_TIMEOUT_S 5

struct ql_opts {
	const char *socket;
	const char *peers;
	unsigned clients;
	double duration_s;
	unsigned long max_requests;
	bool reconnect;
	long check_timeout_ms; /* >= 0: send one "check" before measuring */
};

struct ql_worker {
	pthread_t tid;
	const struct ql_opts *o;
	const char *frame; /* request frame, shared read-only */
	size_t frame_len;
	pthread_barrier_t *start;
	uint64_t deadline_ns;
	uint32_t *lat_ns; /* owned by main; this worker's slice */
	size_t cap;
	size_t n;	      /* answered queries */
	unsigned long errors; /* bad or error replies */
	int err;	      /* first I/O error (-errno), 0 if none */
	size_t reply_len;     /* length of the last good reply */
	char errmsg[160];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int ql_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = QL_IO_TIMEOUT_S};
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A stuck daemon must not hang the benchmark: bound every read and write. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, char *buf, size_t len)
{
	while (len) {
		ssize_t r = read(fd, buf, len);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		if (r == 0)
			return -ECONNRESET;
		buf += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Reads one reply frame into *buf (grown as needed, caller frees); returns its length or -errno. */
static long read_frame(int fd, char **buf, size_t *cap)
{
	unsigned char hdr[4];
	uint32_t n;
	int r;

	r = read_all(fd, (char *)hdr, sizeof(hdr));
	if (r < 0)
		return r;
	n = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
	if (n == 0 || n > QL_MAX_REPLY)
		return -EMSGSIZE;
	if (n > *cap) {
		char *nb = realloc(*buf, n);

		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = n;
	}
	r = read_all(fd, *buf, n);
	return r < 0 ? r : (long)n;
}

/* Builds a framed request; returns a malloc'ed frame (caller frees) or NULL. */
static char *make_frame(const char *request, const char *peers, long timeout_ms, size_t *len)
{
	json_t *req = json_pack("{s:i, s:s, s:[]}", "version", 1, "request", request, "peers");
	json_t *arr;
	char *frame = NULL, *list = NULL, *save = NULL, *tok;
	size_t n;

	if (!req)
		return NULL;
	arr = json_object_get(req, "peers");
	list = strdup(peers);
	if (!list)
		goto out;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (*tok && json_array_append_new(arr, json_string(tok)) < 0)
			goto out;
	if (timeout_ms > 0 && json_object_set_new(req, "timeout_ms", json_integer(timeout_ms)) < 0)
		goto out;
	n = json_dumpb(req, NULL, 0, JSON_COMPACT);
	if (n == 0 || n > 65536)
		goto out;
	frame = malloc(n + 4);
	if (!frame)
		goto out;
	frame[0] = (char)(n >> 24);
	frame[1] = (char)(n >> 16);
	frame[2] = (char)(n >> 8);
	frame[3] = (char)n;
	json_dumpb(req, frame + 4, n, JSON_COMPACT);
	*len = n + 4;
out:
	free(list);
	json_decref(req);
	return frame;
}

/* Full check of a verdict reply: ok, from the cache, with a verdict inside. */
static bool reply_valid_full(const char *buf, size_t len, char *why, size_t whylen)
{
	json_error_t jerr;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr), *e;
	bool good = false;

	if (!j) {
		snprintf(why, whylen, "reply is not JSON: %.100s", jerr.text);
		return false;
	}
	if (!json_is_true(json_object_get(j, "ok"))) {
		e = json_object_get(json_object_get(j, "error"), "code");
		snprintf(why, whylen, "daemon answered error %.60s",
			 json_is_string(e) ? json_string_value(e) : "(none)");
	} else if (!json_is_true(json_object_get(j, "cached"))) {
		snprintf(why, whylen, "reply is not from the cache");
	} else if (!json_is_string(json_object_get(
		       json_object_get(json_object_get(j, "check"), "verdict"), "verdict"))) {
		snprintf(why, whylen, "reply has no check.verdict.verdict");
	} else {
		good = true;
	}
	json_decref(j);
	return good;
}

static bool reply_valid_fast(const char *buf, size_t len)
{
	return memmem(buf, len, "\"ok\":true", 9) && memmem(buf, len, "\"cached\":true", 13);
}

static void *worker_run(void *arg)
{
	struct ql_worker *w = arg;
	char *buf = NULL;
	size_t cap = 0;
	bool first = true;
	int fd = -1;

	pthread_barrier_wait(w->start);
	while (w->n < w->cap && now_ns() < w->deadline_ns) {
		uint64_t t0 = now_ns(), t1;
		long len;
		int r;

		if (fd < 0) {
			fd = ql_connect(w->o->socket);
			if (fd < 0) {
				w->err = fd;
				break;
			}
		}
		r = write_all(fd, w->frame, w->frame_len);
		len = r < 0 ? r : read_frame(fd, &buf, &cap);
		t1 = now_ns();
		if (len < 0) {
			w->err = (int)len;
			break;
		}
		if (first ? !reply_valid_full(buf, (size_t)len, w->errmsg, sizeof(w->errmsg))
			  : !reply_valid_fast(buf, (size_t)len)) {
			w->errors++;
			if (first)
				break;
		} else {
			w->reply_len = (size_t)len;
		}
		first = false;
		w->lat_ns[w->n++] = t1 - t0 > UINT32_MAX ? UINT32_MAX : (uint32_t)(t1 - t0);
		if (w->o->reconnect) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v (n > 0), in microseconds. */
static double pct_us(const uint32_t *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1] / 1000.0;
}

/* One "check" so the verdict cache holds the peer set; reports its duration. */
static int warm_up(const struct ql_opts *o, double *ms)
{
	size_t flen = 0, cap = 0;
	char *frame = make_frame("check", o->peers, o->check_timeout_ms, &flen), *buf = NULL;
	struct timeval tv = {.tv_sec = 600};
	uint64_t t0 = now_ns();
	long len;
	int fd, r;

	if (!frame)
		return -ENOMEM;
	fd = ql_connect(o->socket);
	if (fd < 0) {
		free(frame);
		return fd;
	}
	/* A check may take its whole timeout; the 5 s I/O bound is for queries only. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = write_all(fd, frame, flen);
	len = r < 0 ? r : read_frame(fd, &buf, &cap);
	*ms = (double)(now_ns() - t0) / 1e6;
	if (len >= 0 && !memmem(buf, (size_t)len, "\"ok\":true", 9))
		len = -EPROTO;
	close(fd);
	free(frame);
	free(buf);
	return len < 0 ? (int)len : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: qload --socket PATH --peers NAME,NAME... [--clients N] [--duration S]\n"
		"             [--requests N] [--reconnect] [--check TIMEOUT_MS]\n"
		"Sends 'verdict' requests for one peer set from N concurrent clients and prints\n"
		"one JSON object: qps, latency percentiles (us), errors.\n");
}

static int parse_opts(int argc, char **argv, struct ql_opts *o)
{
	static const struct option lo[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"peers", required_argument, NULL, 'p'},
	    {"clients", required_argument, NULL, 'c'},
	    {"duration", required_argument, NULL, 'd'},
	    {"requests", required_argument, NULL, 'n'},
	    {"reconnect", no_argument, NULL, 'r'},
	    {"check", required_argument, NULL, 'k'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	char *end;
	int c;

	*o = (struct ql_opts){.clients = 4,
			      .duration_s = 3.0,
			      .max_requests = QL_MAX_SAMPLES,
			      .check_timeout_ms = -1};
	while ((c = getopt_long(argc, argv, "s:p:c:d:n:rk:h", lo, NULL)) != -1) {
		errno = 0;
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case 'p':
			o->peers = optarg;
			break;
		case 'c':
			o->clients = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || o->clients < 1 || o->clients > QL_MAX_CLIENTS)
				goto bad;
			break;
		case 'd':
			o->duration_s = strtod(optarg, &end);
			if (errno || *end || !(o->duration_s > 0 && o->duration_s <= 600))
				goto bad;
			break;
		case 'n':
			o->max_requests = strtoul(optarg, &end, 10);
			if (errno || *end || o->max_requests < 1 ||
			    o->max_requests > QL_MAX_SAMPLES)
				goto bad;
			break;
		case 'r':
			o->reconnect = true;
			break;
		case 'k':
			o->check_timeout_ms = strtol(optarg, &end, 10);
			if (errno || *end || o->check_timeout_ms < 0 ||
			    o->check_timeout_ms > 300000)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!o->socket || !o->peers || optind != argc) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;
bad:
	fprintf(stderr, "qload: bad value '%s'\n", optarg);
	return -EINVAL;
}

int main(int argc, char **argv)
{
	struct ql_opts o;
	struct ql_worker *w = NULL;
	pthread_barrier_t start;
	uint32_t *lat = NULL;
	size_t per, total = 0, reply_len = 0, flen = 0;
	unsigned long errors = 0;
	char *frame = NULL;
	double check_ms = -1, elapsed_s;
	uint64_t t0;
	int rc = 1, ioerr = 0;
	unsigned i, started = 0;

	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	if (o.check_timeout_ms >= 0) {
		int r = warm_up(&o, &check_ms);

		if (r < 0) {
			fprintf(stderr, "qload: check on %s failed: %s\n", o.socket, strerror(-r));
			return 1;
		}
	}
	frame = make_frame("verdict", o.peers, 0, &flen);
	per = o.max_requests / o.clients;
	if (per < 1)
		per = 1;
	lat = calloc((size_t)o.clients * per, sizeof(*lat));
	w = calloc(o.clients, sizeof(*w));
	if (!frame || !lat || !w) {
		fprintf(stderr, "qload: out of memory\n");
		goto out;
	}
	if (pthread_barrier_init(&start, NULL, o.clients + 1) != 0)
		goto out;
	for (i = 0; i < o.clients; i++) {
		w[i] = (struct ql_worker){.o = &o,
					  .frame = frame,
					  .frame_len = flen,
					  .start = &start,
					  .lat_ns = lat + (size_t)i * per,
					  .cap = per};
	}
	for (i = 0; i < o.clients; i++) {
		if (pthread_create(&w[i].tid, NULL, worker_run, &w[i]) != 0)
			break;
		started++;
	}
	if (started < o.clients) {
		/* The barrier counts every client: without them the started ones would wait
		 * forever. */
		fprintf(stderr, "qload: could not start %u client threads\n", o.clients);
		exit(1);
	}
	/* Written before the barrier, which orders it before every worker's first read. */
	t0 = now_ns();
	for (i = 0; i < o.clients; i++)
		w[i].deadline_ns = t0 + (uint64_t)(o.duration_s * 1e9);
	pthread_barrier_wait(&start);
	for (i = 0; i < o.clients; i++)
		pthread_join(w[i].tid, NULL);
	elapsed_s = (double)(now_ns() - t0) / 1e9;
	pthread_barrier_destroy(&start);

	/* Compact the per-thread slices into one array for the percentiles. */
	for (i = 0; i < o.clients; i++) {
		memmove(lat + total, w[i].lat_ns, w[i].n * sizeof(*lat));
		total += w[i].n;
		errors += w[i].errors;
		if (w[i].reply_len)
			reply_len = w[i].reply_len;
		if (w[i].err && !ioerr)
			ioerr = w[i].err;
		if (w[i].errmsg[0])
			fprintf(stderr, "qload: client %u: %s\n", i, w[i].errmsg);
	}
	if (ioerr)
		fprintf(stderr, "qload: I/O error on %s: %s\n", o.socket, strerror(-ioerr));
	if (total == 0) {
		fprintf(stderr, "qload: no query answered\n");
		goto out;
	}
	qsort(lat, total, sizeof(*lat), cmp_u32);
	printf("{\"clients\":%u,\"mode\":\"%s\",\"duration_s\":%.3f,\"requests\":%zu,"
	       "\"errors\":%lu,\"io_error\":%s,\"qps\":%.0f,\"p50_us\":%.1f,\"p90_us\":%.1f,"
	       "\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,\"reply_bytes\":%zu",
	       o.clients, o.reconnect ? "reconnect" : "persistent", elapsed_s, total, errors,
	       ioerr ? "true" : "false", (double)total / elapsed_s, pct_us(lat, total, 50),
	       pct_us(lat, total, 90), pct_us(lat, total, 99), pct_us(lat, total, 99.9),
	       lat[total - 1] / 1000.0, reply_len);
	if (check_ms >= 0)
		printf(",\"check_ms\":%.1f", check_ms);
	printf("}\n");
	rc = errors || ioerr ? 1 : 0;
out:
	free(frame);
	free(lat);
	free(w);
	return rc;
}
