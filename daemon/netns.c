// SPDX-License-Identifier: MIT
/* Which network namespace a local API client lives in, compared with the daemon's own. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71 /* Linux 5.14, asm-generic/socket.h */
#endif

/*
 * Two sources, both read by the daemon without any privilege of the client's say-so:
 *
 * 1. SO_NETNS_COOKIE of the accepted socket. For AF_UNIX the kernel creates the
 *    server's end of a stream connection in the *connecting* socket's namespace
 *    (net/unix/af_unix.c unix_stream_connect: unix_create1(sock_net(sk), ...)), so
 *    the cookie of the fd that accept() returned names the client's namespace. It
 *    needs no access to the client's /proc entry, which the daemon, an unprivileged
 *    user under ProtectProc=invisible, does not have for other users' processes.
 * 2. Fallback for kernels before 5.14 (ENOPROTOOPT): stat() of /proc/PID/ns/net for
 *    the SO_PEERCRED pid, st_dev/st_ino as namespace identity (namespaces(7)). This
 *    works for clients of the daemon's own uid or when the daemon runs as root.
 *
 * When neither works the answer is "cannot tell" and the caller serves the request
 * as before this check existed (docs/containers.md).
 */

static int id_from_cookie(int fd, struct dmn_netns_id *out)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);

	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) < 0)
		return -errno;
	if (len != sizeof(cookie))
		return -EPROTO;
	out->cookie = cookie;
	out->have_cookie = true;
	return 0;
}

static int id_from_proc(const char *path, struct dmn_netns_id *out)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	out->have_inode = true;
	return 0;
}

int dmn_netns_self(struct dmn_netns_id *out)
{
	int fd, r1, r2;

	memset(out, 0, sizeof(*out));
	/* Any socket the daemon creates lives in the daemon's namespace. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		r1 = -errno;
	else {
		r1 = id_from_cookie(fd, out);
		close(fd);
	}
	r2 = id_from_proc("/proc/self/ns/net", out);
	return r1 == 0 || r2 == 0 ? 0 : r1;
}

int dmn_netns_client(int fd, pid_t pid, struct dmn_netns_id *out)
{
	char path[64];
	int r1, r2 = -ESRCH;

	memset(out, 0, sizeof(*out));
	r1 = id_from_cookie(fd, out);
	if (r1 == 0)
		return 0;
	/* pid 0: the client is in a pid namespace we cannot see into. */
	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
		r2 = id_from_proc(path, out);
	}
	return r2 == 0 ? 0 : r2;
}

int dmn_netns_compare(const struct dmn_netns_id *self, const struct dmn_netns_id *client)
{
	if (self->have_cookie && client->have_cookie)
		return self->cookie == client->cookie ? DMN_NETNS_SAME : DMN_NETNS_FOREIGN;
	if (self->have_inode && client->have_inode)
		return self->dev == client->dev && self->ino == client->ino ? DMN_NETNS_SAME
									    : DMN_NETNS_FOREIGN;
	return DMN_NETNS_UNKNOWN;
}
