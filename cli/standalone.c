// SPDX-License-Identifier: MIT
/* run --standalone: no netpreflightd on the node. The daemon's own program (the same probe
 * engine, protocol, decision and job exchange) runs as the calling user on a private socket
 * and a port derived from the job, for as long as the job check needs it.
 *
 * Processes: run forks a keeper (double fork: not run's child once run execs CMD, so no
 * zombie is left to CMD), the keeper starts the daemon and holds it. run talks to the daemon
 * over the private socket; when run execs CMD (or exits) the hold pipe closes, and the keeper
 * lets the daemon serve the slower nodes of the job a while longer (their probes of us, the
 * coordinator's answers), then stops it and removes the private directory. */
#include <dirent.h>
#include <netdb.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cli.h"
#include "client.h"
#include "hostlist.h"

#define READY_WAIT_MS 15000  /* the daemon's first inventory and listeners */
#define LINGER_DEFAULT_MS 30000
#define LINGER_MAX_MS 300000
#define STOP_WAIT_MS 5000
#define DAEMON_ARGS_MAX 16
#define PEERS_AT_ONCE 256

/* Removes the private directory: only the plain files the daemon made there. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Waits up to ms for pid to end; true when it did. */
static bool wait_child(pid_t pid, uint32_t ms)
{
	uint64_t end = (npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC) + ms;

	do {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return true;
		poll(NULL, 0, 20);
	} while ((npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC) < end);
	return false;
}

/* The keeper: starts the daemon, waits for run to let go (EOF on hold; run may first write
 * how long to linger, 4 bytes), lingers, stops the daemon, cleans up. Never returns. */
static void keeper(struct cli_standalone *s, const char *const *args, int hold, int alive)
{
	uint32_t linger = LINGER_DEFAULT_MS, v;
	size_t got = 0;
	uint64_t end;
	pid_t pid;
	int fd;

	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	pid = fork();
	if (pid == 0) {
		fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		/* execv wants mutable strings. */
		char *argv[DAEMON_ARGS_MAX + 1] = { NULL };

		for (size_t i = 0; i < DAEMON_ARGS_MAX && args[i]; i++)
			argv[i] = strdup(args[i]);
		execv(argv[0], argv);
		dprintf(STDERR_FILENO, "netpreflight run --standalone: cannot run %s: %s\n",
			args[0], strerror(errno));
		_exit(127);
	}
	/* run holds the other end: EOF when it has exec'd CMD or is gone. */
	for (;;) {
		struct pollfd p = { .fd = hold, .events = POLLIN };
		char extra;
		ssize_t r;

		if (pid < 0 || waitpid(pid, NULL, WNOHANG) == pid) {
			pid = -1;
			break;
		}
		if (poll(&p, 1, 200) <= 0)
			continue;
		r = got < sizeof(v) ? read(hold, (char *)&v + got, sizeof(v) - got) :
				      read(hold, &extra, 1);
		if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
			break;
		/* 0 is "stop now" (the daemon never came up, or run refused). */
		if (r > 0 && got < sizeof(v) && (got += (size_t)r) == sizeof(v) &&
		    v <= LINGER_MAX_MS)
			linger = v;
	}
	if (pid < 0) {
		char c;

		/* Tell a run still waiting for the daemon that it is gone, and keep the log
		 * until it has read why (it lets go then). */
		close(alive);
		while (read(hold, &c, 1) > 0 || errno == EINTR)
			;
	}
	end = (npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC) + linger;
	while (pid > 0 && (npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC) < end) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			pid = -1;
		else
			poll(NULL, 0, 100);
	}
	if (pid > 0) {
		kill(pid, SIGTERM);
		if (!wait_child(pid, STOP_WAIT_MS)) {
			kill(pid, SIGKILL);
			wait_child(pid, STOP_WAIT_MS);
		}
	}
	remove_dir(s->dir);
	_exit(0);
}

/* The last line of the daemon's log, for the message when it did not come up. */
static void log_tail(const char *path, char *buf, size_t len)
{
	char chunk[512], *line;
	ssize_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	buf[0] = '\0';
	if (fd < 0)
		return;
	if (lseek(fd, 0, SEEK_END) > (off_t)sizeof(chunk) - 1)
		lseek(fd, -(off_t)sizeof(chunk) + 1, SEEK_END);
	else
		lseek(fd, 0, SEEK_SET);
	n = read(fd, chunk, sizeof(chunk) - 1);
	close(fd);
	if (n <= 0)
		return;
	chunk[n] = '\0';
	while (n > 0 && chunk[n - 1] == '\n')
		chunk[--n] = '\0';
	line = strrchr(chunk, '\n') ? strrchr(chunk, '\n') + 1 : chunk;
	n = (ssize_t)strlen(line) < (ssize_t)len ? (ssize_t)strlen(line) : (ssize_t)len - 1;
	memcpy(buf, line, (size_t)n);
	buf[n] = '\0';
}

/* Polls the daemon's status until it answers, the keeper says it is gone, or time is up. */
static int wait_ready(struct cli_standalone *s, int alive)
{
	uint64_t end = (npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC) + READY_WAIT_MS;
	json_t *rq = json_pack("{s:i, s:s}", "version", NPF_API_VERSION, "request", "status");
	int r = -ETIMEDOUT;

	if (!rq)
		return -ENOMEM;
	while ((npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC) < end) {
		struct pollfd p = { .fd = alive, .events = POLLIN };
		json_t *reply = NULL;
		struct npf_api_error aerr;

		if (access(s->sock, F_OK) == 0 &&
		    npf_client_request(s->sock, rq, &reply, 1000) == 0 &&
		    npf_api_reply_status(reply, &aerr) == 0) {
			json_decref(reply);
			r = 0;
			break;
		}
		json_decref(reply);
		/* EOF: the keeper saw the daemon exit. */
		if (poll(&p, 1, 50) > 0) {
			r = -ESRCH;
			break;
		}
	}
	json_decref(rq);
	return r;
}

int cli_standalone_start(struct cli_standalone *s, const char *daemon, uint16_t port,
			 const char *key_file, const char *node_name)
{
	const char *tmp = getenv("TMPDIR");
	char portbuf[8], why[256];
	int hold[2] = { -1, -1 }, alive[2] = { -1, -1 }, r;
	pid_t pid;

	memset(s, 0, sizeof(*s));
	s->hold = -1;
	if (snprintf(s->dir, sizeof(s->dir), "%s/netpreflight-run.XXXXXX",
		     tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(s->dir) ||
	    !mkdtemp(s->dir)) {
		cli_err("--standalone: cannot make a private directory in %s: %s",
			tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return -errno;
	}
	snprintf(s->sock, sizeof(s->sock), "%s/sock", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/daemon.log", s->dir);
	snprintf(portbuf, sizeof(portbuf), "%u", port);
	/* Options win over a config file the user can read: [daemon] paths are ours, and the
	 * key is the one given or none (a configured key the user cannot read would stop the
	 * daemon, and running without one is then what the warning below says). */
	const char *const args[DAEMON_ARGS_MAX + 1] = {
		daemon,		   "--foreground", "--port",	    portbuf,   "--socket", s->sock,
		"--state-dir",	   s->dir,	   "--textfile-dir", "",	     "--check-group", "",
		"--key-file",	   key_file ? key_file : "", node_name ? "--node-name" : NULL,
		node_name, NULL
	};
	if (pipe2(hold, O_CLOEXEC) < 0 || pipe2(alive, O_CLOEXEC) < 0) {
		r = -errno;
		cli_err("--standalone: pipe: %s", strerror(errno));
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		cli_err("--standalone: fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		/* Double fork: the keeper is nobody's child once this one exits. */
		close(hold[1]);
		close(alive[0]);
		setsid();
		pid = fork();
		if (pid == 0)
			keeper(s, args, hold[0], alive[1]);
		_exit(pid < 0 ? 1 : 0);
	}
	close(hold[0]);
	close(alive[1]);
	waitpid(pid, NULL, 0);
	s->hold = hold[1];
	r = wait_ready(s, alive[0]);
	close(alive[0]);
	if (r < 0) {
		log_tail(s->log, why, sizeof(why));
		cli_err("--standalone: %s did not come up on port %u%s%s", daemon, port,
			why[0] ? ": " : "", why);
		cli_standalone_release(s, 0);
		return r;
	}
	if (!key_file)
		cli_err("--standalone: no cluster key (--key-file): peers are NOT authenticated; "
			"anyone who reaches port %u can answer this job's probes",
			port);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (hold[i] >= 0)
			close(hold[i]);
		if (alive[i] >= 0)
			close(alive[i]);
	}
	remove_dir(s->dir);
	return r;
}

void cli_standalone_linger(struct cli_standalone *s, uint32_t linger_ms)
{
	/* One 4-byte write to a pipe is atomic; the keeper reads it before the EOF. */
	if (s->hold >= 0 && write(s->hold, &linger_ms, sizeof(linger_ms)) != (ssize_t)sizeof(linger_ms))
		cli_err("--standalone: cannot tell the keeper how long to linger: %s",
			strerror(errno));
}

void cli_standalone_release(struct cli_standalone *s, uint32_t linger_ms)
{
	if (s->hold < 0)
		return;
	cli_standalone_linger(s, linger_ms);
	close(s->hold);
	s->hold = -1;
}

/* One connect attempt to name:port; returns a socket connecting (nonblocking) or -1. */
static int connect_start(const char *name, uint16_t port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char service[8];
	int fd = -1;

	snprintf(service, sizeof(service), "%u", port);
	if (getaddrinfo(name, service, &hints, &ai) != 0 || !ai)
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

int cli_standalone_wait_peers(const char *hostlist, uint16_t port, uint32_t wait_ms,
			      char *missing, size_t len)
{
	uint64_t end = (npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC) + wait_ms;
	char **names = NULL, err[160];
	bool *up;
	size_t n = 0, left;
	int r;

	missing[0] = '\0';
	r = npf_hostlist_expand(hostlist, &names, &n, err, sizeof(err));
	if (r < 0)
		return r;
	up = calloc(n, sizeof(*up));
	if (!up) {
		npf_hostlist_free(names, n);
		return -ENOMEM;
	}
	left = n;
	/* Rounds of nonblocking connects to the peers not seen yet; a refusal is a daemon
	 * not up yet there, tried again next round. */
	while (left && (npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC) < end) {
		struct pollfd pf[PEERS_AT_ONCE];
		size_t idx[PEERS_AT_ONCE], k = 0;

		for (size_t i = 0; i < n && k < PEERS_AT_ONCE; i++) {
			int fd = up[i] ? -1 : connect_start(names[i], port);

			if (fd >= 0) {
				pf[k] = (struct pollfd){ .fd = fd, .events = POLLOUT };
				idx[k++] = i;
			}
		}
		if (k)
			poll(pf, (nfds_t)k, 500);
		for (size_t j = 0; j < k; j++) {
			int so = -1;
			socklen_t sl = sizeof(so);

			if ((pf[j].revents & POLLOUT) &&
			    getsockopt(pf[j].fd, SOL_SOCKET, SO_ERROR, &so, &sl) == 0 && so == 0) {
				up[idx[j]] = true;
				left--;
			}
			close(pf[j].fd);
		}
		if (left)
			poll(NULL, 0, 100);
	}
	for (size_t i = 0, off = 0; i < n && left; i++)
		if (!up[i] && off < len)
			off += (size_t)snprintf(missing + off, len - off, "%s%s", off ? "," : "",
						names[i]);
	free(up);
	npf_hostlist_free(names, n);
	return (int)left;
}

/* The rule the probe engine names peers by (probe/check_disc.c node_name_matches): the same name,
 * or one is the other plus a domain. */
static bool same_node(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la == lb)
		return strcasecmp(a, b) == 0;
	if (la > lb)
		return a[lb] == '.' && strncasecmp(a, b, lb) == 0;
	return b[la] == '.' && strncasecmp(a, b, la) == 0;
}

int cli_standalone_self(const char *hostlist, char *out, size_t len)
{
	char host[256], **names = NULL, err[160];
	size_t n = 0;
	int r;

	out[0] = '\0';
	if (gethostname(host, sizeof(host)) < 0)
		return -errno;
	host[sizeof(host) - 1] = '\0';
	r = npf_hostlist_expand(hostlist, &names, &n, err, sizeof(err));
	if (r < 0)
		return r;
	r = -ENOENT;
	for (size_t i = 0; i < n && r < 0; i++)
		if (same_node(host, names[i]) && strlen(names[i]) < len) {
			memcpy(out, names[i], strlen(names[i]) + 1);
			r = 0;
		}
	npf_hostlist_free(names, n);
	return r;
}
