// SPDX-License-Identifier: MIT
/* Client side of the local API: non-blocking socket, poll deadlines, strict decode. */
#include "client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"

#define PROGRESS_TICK_MS 250

struct xfer {
	int fd;
	uint64_t start_ms, deadline_ms;
	uint64_t next_tick_ms;
	npf_client_progress_fn progress;
	void *userdata;
};

/* Waits for `events` on x->fd, firing the progress callback on its ticks.
 * Returns 0 when ready, -ETIMEDOUT past the deadline, -errno on poll failure. */
static int wait_fd(struct xfer *x, short events)
{
	for (;;) {
		uint64_t now = npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC;
		struct pollfd pfd = { .fd = x->fd, .events = events };
		uint64_t until = x->deadline_ms;
		int r;

		if (now >= x->deadline_ms)
			return -ETIMEDOUT;
		if (x->progress && x->next_tick_ms < until)
			until = x->next_tick_ms > now ? x->next_tick_ms : now;
		r = poll(&pfd, 1, (int)(until - now));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r > 0)
			return 0;
		now = npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC;
		if (x->progress && now >= x->next_tick_ms) {
			x->progress((uint32_t)(now - x->start_ms), x->userdata);
			x->next_tick_ms = now + PROGRESS_TICK_MS;
		}
	}
}

static int do_connect(struct xfer *x, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t n = strlen(path);
	socklen_t sl = sizeof(int);
	int r, soerr = 0;

	if (n == 0 || n >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, n + 1);
	x->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (x->fd < 0)
		return -errno;
	for (;;) {
		if (connect(x->fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			return 0;
		/* A full listen backlog answers EAGAIN on AF_UNIX; retry until the deadline. */
		if (errno == EAGAIN) {
			if (npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC >= x->deadline_ms)
				return -ETIMEDOUT;
			usleep(10000);
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EINPROGRESS)
			return -errno;
		r = wait_fd(x, POLLOUT);
		if (r < 0)
			return r;
		if (getsockopt(x->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
			return -errno;
		return soerr ? -soerr : 0;
	}
}

static int write_all(struct xfer *x, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(x->fd, buf + off, len - off, MSG_NOSIGNAL);
		int r;

		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return errno == EPIPE ? -ECONNRESET : -errno;
		r = wait_fd(x, POLLOUT);
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_all(struct xfer *x, void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = recv(x->fd, (char *)buf + off, len - off, 0);
		int r;

		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		r = wait_fd(x, POLLIN);
		if (r < 0)
			return r;
	}
	return 0;
}

int npf_client_request_progress(const char *socket_path, json_t *req, json_t **reply,
				int timeout_ms, npf_client_progress_fn progress, void *userdata)
{
	struct xfer x = { .fd = -1, .progress = progress, .userdata = userdata };
	uint8_t hdr[NPF_API_HDR_LEN];
	char *out = NULL, *in = NULL;
	struct npf_api_error err;
	size_t out_len;
	uint32_t len;
	int r;

	*reply = NULL;
	x.start_ms = npf_now(CLOCK_MONOTONIC) / USEC_PER_MSEC;
	x.deadline_ms = x.start_ms + (uint64_t)(timeout_ms > 0 ? timeout_ms : 1);
	x.next_tick_ms = x.start_ms + PROGRESS_TICK_MS;
	r = npf_api_frame_encode(req, NPF_API_MAX_REQUEST, &out, &out_len);
	if (r < 0)
		return r;
	r = do_connect(&x, socket_path);
	if (r < 0)
		goto out;
	r = write_all(&x, out, out_len);
	if (r < 0)
		goto out;
	r = read_all(&x, hdr, sizeof(hdr));
	if (r < 0)
		goto out;
	r = npf_api_frame_len(hdr, NPF_API_MAX_REPLY, &len);
	if (r < 0) {
		r = r == -EMSGSIZE ? -EMSGSIZE : -EPROTO;
		goto out;
	}
	in = malloc(len);
	if (!in) {
		r = -ENOMEM;
		goto out;
	}
	r = read_all(&x, in, len);
	if (r < 0)
		goto out;
	r = npf_api_json_decode(in, len, reply, &err);
	if (r < 0)
		r = -EPROTO;
out:
	free(in);
	free(out);
	if (x.fd >= 0)
		close(x.fd);
	return r;
}

int npf_client_request(const char *socket_path, json_t *req, json_t **reply, int timeout_ms)
{
	return npf_client_request_progress(socket_path, req, reply, timeout_ms, NULL, NULL);
}

char *npf_client_strerror(int err, const char *socket_path, char *buf, size_t len)
{
	switch (-err) {
	case ENOENT:
	case ECONNREFUSED:
		snprintf(buf, len, "daemon not running at %s (%s)", socket_path, strerror(-err));
		break;
	case EACCES:
	case EPERM:
		snprintf(buf, len, "permission denied on %s", socket_path);
		break;
	case ETIMEDOUT:
		snprintf(buf, len, "no reply from the daemon at %s in time", socket_path);
		break;
	case ECONNRESET:
		snprintf(buf, len, "the daemon at %s closed the connection", socket_path);
		break;
	case EPROTO:
		snprintf(buf, len, "malformed reply from the daemon at %s", socket_path);
		break;
	case EMSGSIZE:
		snprintf(buf, len, "message too large for the local API");
		break;
	case ENAMETOOLONG:
		snprintf(buf, len, "socket path too long: %s", socket_path);
		break;
	default:
		snprintf(buf, len, "%s: %s", socket_path, strerror(-err));
		break;
	}
	return buf;
}
