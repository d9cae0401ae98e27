// SPDX-License-Identifier: MIT
/* mesh: the floor under a path probe (issue 20). The least a probe of one directed path can
 * cost: one TCP connection from the source node's address to the target node's, a bulk
 * payload sent and echoed back, closed. No protocol, no authentication, no JSON, one
 * epoll thread for the whole lab: sockets are created inside each node's network
 * namespace (setns before socket(); a socket stays in the namespace it was made in), so
 * one process drives every path of the mesh. bench/run runs it over the same addresses
 * as the daemons' job check and reports the ratio of the two.
 *
 * Input (stdin): one line per address, "NETNS ADDRESS NET": the namespace name (as under
 * /run/netns), an IPv4 or IPv6 address of that node, and a network label. Every ordered
 * pair of addresses with the same label in different namespaces is one path; with --pairs
 * FILE (lines "NETNS_FROM NETNS_TO", e.g. a sparse probe plan from bench/plan) only the
 * paths between the listed ordered pairs of namespaces are.
 * Usage: mesh [--port P] [--bytes B] [--inflight K] [--timeout S] [--pairs FILE]
 * Output: one JSON object: paths, ok, failed, wall_ms, cpu_ms (user + system of this
 * process), bytes. Exit 0 when every path completed, 1 when some failed, 2 on bad input. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_ADDRS 4096

struct addr {
	char ns[64], net[32];
	int nsfd;
	size_t nsi; /* index of its namespace among the distinct ones, in input order */
	struct sockaddr_storage ss;
	socklen_t len;
};

/* One connection end: a client (sends, then reads the echo) or a server (echoes). Every
 * open end is on one list, so the ends still open when the run stops are closed too. */
struct conn {
	int fd;
	int client;
	size_t sent, got, total;
	struct conn *prev, *next;
};

static struct addr addrs[MAX_ADDRS];
static size_t n_addrs, n_ns;
static char *payload;
/* n_ns x n_ns: may a path go from namespace a to b (NULL: every pair may). */
static unsigned char *allowed;

static double now_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Is i -> j one of the paths: same network, different nodes, a pair the plan allows. */
static int is_path(size_t i, size_t j)
{
	return i != j && addrs[i].nsi != addrs[j].nsi && strcmp(addrs[i].net, addrs[j].net) == 0 &&
	       (!allowed || allowed[addrs[i].nsi * n_ns + addrs[j].nsi]);
}

static int ns_index(const char *ns, size_t *out)
{
	for (size_t i = 0; i < n_addrs; i++)
		if (strcmp(addrs[i].ns, ns) == 0) {
			*out = addrs[i].nsi;
			return 0;
		}
	return -ENOENT;
}

/* Reads "NETNS_FROM NETNS_TO" lines into allowed[]. Returns 0 or -errno. */
static int read_pairs(const char *file)
{
	char line[256];
	FILE *f = fopen(file, "r");
	int r = 0;

	if (!f)
		return -errno;
	allowed = calloc(n_ns * n_ns + 1, 1);
	if (!allowed) {
		fclose(f);
		return -ENOMEM;
	}
	while (r == 0 && fgets(line, sizeof(line), f)) {
		char a[64], b[64];
		size_t ia, ib;

		if (sscanf(line, "%63s %63s", a, b) != 2)
			continue;
		if (ns_index(a, &ia) < 0 || ns_index(b, &ib) < 0) {
			fprintf(stderr, "mesh: pair '%s %s' names a namespace without addresses\n",
				a, b);
			r = -EINVAL;
		} else {
			allowed[ia * n_ns + ib] = 1;
		}
	}
	fclose(f);
	return r;
}

static int parse_addr(const char *s, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		return 0;
	}
	return -EINVAL;
}

/* A socket of the given family inside namespace nsfd; back to home afterwards. */
static int socket_in(int nsfd, int home, int family)
{
	int fd, e;

	if (setns(nsfd, CLONE_NEWNET) < 0)
		return -errno;
	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	e = errno;
	if (setns(home, CLONE_NEWNET) < 0) {
		perror("mesh: setns back");
		exit(2);
	}
	return fd < 0 ? -e : fd;
}

/* Takes fd (closed on failure): a new connection end on *head, watched for events. Returns 0
 * or -errno. The end is owned by the list; conn_close() frees it. */
static int conn_add(int ep, int fd, int client, size_t total, struct conn **head)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct epoll_event ev = { .events = client ? EPOLLOUT | EPOLLIN : EPOLLIN };

	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	*c = (struct conn){ .fd = fd, .client = client, .total = total, .next = *head };
	ev.data.ptr = c;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = -errno;

		close(fd);
		free(c);
		return e;
	}
	if (*head)
		(*head)->prev = c;
	*head = c;
	return 0;
}

static void conn_close(struct conn *c, struct conn **head)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		*head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	close(c->fd);
	free(c);
}

static int start_path(int ep, int home, size_t from, size_t to, size_t bytes, struct conn **head)
{
	struct sockaddr_storage src = addrs[from].ss;
	int fd;

	fd = socket_in(addrs[from].nsfd, home, src.ss_family);
	if (fd < 0)
		return fd;
	/* From the source address, as a probe of that interface binds it. */
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	if (bind(fd, (struct sockaddr *)&src, addrs[from].len) < 0 ||
	    (connect(fd, (struct sockaddr *)&addrs[to].ss, addrs[to].len) < 0 &&
	     errno != EINPROGRESS)) {
		int e = -errno;

		close(fd);
		return e;
	}
	return conn_add(ep, fd, 1, bytes, head);
}

/* Advances c; returns 1 when a client path completed, -1 when it failed, 0 otherwise. A
 * server end that sees EOF closes quietly. */
static int step(struct conn *c, uint32_t events)
{
	char buf[65536];

	if (c->client) {
		if (events & EPOLLERR)
			return -1;
		while (c->sent < c->total) {
			ssize_t n = send(c->fd, payload + c->sent, c->total - c->sent, MSG_NOSIGNAL);

			if (n < 0)
				return errno == EAGAIN ? 0 : -1;
			c->sent += (size_t)n;
		}
		for (;;) {
			ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

			if (n < 0)
				return errno == EAGAIN ? 0 : -1;
			if (n == 0)
				return -1;
			c->got += (size_t)n;
			if (c->got >= c->total)
				return 1;
		}
	}
	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

		if (n <= 0)
			return n == 0 || errno != EAGAIN ? -1 : 0;
		/* Echo: a short write of a 16 KiB echo never happens on an idle socket here;
		 * treat it as a failure of the path rather than buffer it. */
		if (send(c->fd, buf, (size_t)n, MSG_NOSIGNAL) != n)
			return -1;
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' }, { "bytes", required_argument, NULL, 'b' },
		{ "inflight", required_argument, NULL, 'k' }, { "timeout", required_argument, NULL, 't' },
		{ "pairs", required_argument, NULL, 'P' }, { NULL, 0, NULL, 0 },
	};
	unsigned port = 7799, inflight = 512;
	size_t bytes = 16384, paths = 0, ok = 0, failed = 0, active = 0;
	struct conn *conns = NULL;
	double timeout_s = 30, w0, c0;
	const char *pairs_file = NULL;
	char line[256];
	int c, ep, home;
	struct rlimit rl;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': port = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'b': bytes = strtoul(optarg, NULL, 10); break;
		case 'k': inflight = (unsigned)strtoul(optarg, NULL, 10); break;
		case 't': timeout_s = strtod(optarg, NULL); break;
		case 'P': pairs_file = optarg; break;
		default:
			fprintf(stderr, "usage: mesh [--port P] [--bytes B] [--inflight K] "
					"[--timeout S] [--pairs FILE] < 'NETNS ADDRESS NET' lines\n");
			return 2;
		}
	}
	if (port == 0 || port > 65535 || bytes == 0 || inflight == 0 || timeout_s <= 0)
		return 2;
	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0) {
		perror("mesh: /proc/self/ns/net");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		char ns[64], ad[64], net[32], path[128];
		struct addr *a;

		if (sscanf(line, "%63s %63s %31s", ns, ad, net) != 3)
			continue;
		if (n_addrs == MAX_ADDRS) {
			fprintf(stderr, "mesh: more than %d addresses\n", MAX_ADDRS);
			return 2;
		}
		a = &addrs[n_addrs];
		snprintf(a->ns, sizeof(a->ns), "%s", ns);
		snprintf(a->net, sizeof(a->net), "%s", net);
		if (parse_addr(ad, (uint16_t)port, &a->ss, &a->len) < 0) {
			fprintf(stderr, "mesh: bad address '%s'\n", ad);
			return 2;
		}
		a->nsfd = -1;
		for (size_t i = 0; i < n_addrs; i++)
			if (strcmp(addrs[i].ns, ns) == 0) {
				a->nsfd = addrs[i].nsfd;
				a->nsi = addrs[i].nsi;
			}
		if (a->nsfd < 0) {
			a->nsi = n_ns++;
			snprintf(path, sizeof(path), "/run/netns/%s", ns);
			a->nsfd = open(path, O_RDONLY | O_CLOEXEC);
			if (a->nsfd < 0) {
				fprintf(stderr, "mesh: %s: %s\n", path, strerror(errno));
				return 2;
			}
		}
		n_addrs++;
	}
	if (pairs_file) {
		int e = read_pairs(pairs_file);

		if (e < 0) {
			fprintf(stderr, "mesh: %s: %s\n", pairs_file, strerror(-e));
			return 2;
		}
	}
	/* Every socket of the mesh at once: raise the descriptor limit to the hard one. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	payload = malloc(bytes);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!payload || ep < 0)
		return 2;
	memset(payload, 0x5a, bytes);
	for (size_t i = 0; i < n_addrs; i++) {
		int one = 1, fd = socket_in(addrs[i].nsfd, home, addrs[i].ss.ss_family);
		struct epoll_event ev = { .events = EPOLLIN };

		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(fd, (struct sockaddr *)&addrs[i].ss, addrs[i].len) < 0 ||
		    listen(fd, 4096) < 0) {
			fprintf(stderr, "mesh: listen on address %zu in %s: %s\n", i + 1, addrs[i].ns,
				strerror(fd < 0 ? -fd : errno));
			return 2;
		}
		ev.data.u64 = ((uint64_t)1 << 63) | (uint64_t)fd; /* a listener, not a conn */
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			return 2;
	}
	for (size_t i = 0; i < n_addrs; i++)
		for (size_t j = 0; j < n_addrs; j++)
			paths += (size_t)is_path(i, j);

	w0 = now_ms(CLOCK_MONOTONIC);
	c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
	size_t fi = 0, fj = 0; /* the next path to start, as a position in the pair loop */
	while (ok + failed < paths) {
		struct epoll_event evs[256];
		int n;

		/* Start paths up to the in-flight bound. */
		while (active < inflight && fi < n_addrs) {
			if (fj == n_addrs) {
				fi++;
				fj = 0;
				continue;
			}
			size_t i = fi, j = fj++;

			if (!is_path(i, j))
				continue;
			if (start_path(ep, home, i, j, bytes, &conns) < 0)
				failed++;
			else
				active++;
		}
		if (now_ms(CLOCK_MONOTONIC) - w0 > timeout_s * 1e3)
			break;
		n = epoll_wait(ep, evs, 256, 100);
		for (int k = 0; k < n; k++) {
			if (evs[k].data.u64 >> 63) {
				int lfd = (int)(evs[k].data.u64 & 0x7fffffff);

				for (;;) {
					int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

					if (fd < 0)
						break;
					(void)conn_add(ep, fd, 0, 0, &conns);
				}
				continue;
			}
			struct conn *cn = evs[k].data.ptr;
			int r = step(cn, evs[k].events);

			if (r == 0)
				continue;
			if (cn->client) {
				active--;
				if (r > 0)
					ok++;
				else
					failed++;
			}
			conn_close(cn, &conns);
		}
	}
	double wall = now_ms(CLOCK_MONOTONIC) - w0, cpu = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;

	while (conns)
		conn_close(conns, &conns);
	free(allowed);
	free(payload);
	printf("{\"paths\":%zu,\"ok\":%zu,\"failed\":%zu,\"unfinished\":%zu,\"wall_ms\":%.1f,"
	       "\"cpu_ms\":%.1f,\"bytes\":%zu}\n",
	       paths, ok, failed, paths - ok - failed, wall, cpu, bytes);
	return ok == paths ? 0 : 1;
}
