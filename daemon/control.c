// SPDX-License-Identifier: MIT
/* Local API server: accepts on the Unix socket (bounded clients), reads length-prefixed JSON
 * frames and dispatches each request to the module that answers it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "clock.h"
#include "daemon.h"
#include "probe.h"
#include "iface_json.h"
#include "log.h"
#include "rdma_json.h"

#define ACCEPT_BATCH 16
#define ACCEPT_RETRY_MS 1000
#define READ_BATCH 16
#define MAX_GROUPS 65536

static void client_free(struct ctl_client *c);

static void reply_error(struct ctl_client *c, const struct npf_api_error *err)
{
	ctl_reply(c, npf_api_reply_error(err->code, "%s", err->message));
}

static json_t *status_reply(struct npf_daemon *d)
{
	json_t *r = npf_api_reply_new(), *daemon;
	char inst[17];

	if (!r)
		return NULL;
	snprintf(inst, sizeof(inst), "%016" PRIx64, d->instance);
	daemon = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:i, s:s, s:I, s:I}", "version",
			   NPF_VERSION, "node", d->node_name, "instance", inst, "pid",
			   (json_int_t)getpid(), "uptime_s",
			   (json_int_t)((npf_now(CLOCK_MONOTONIC) - d->start_mono_us) / USEC_PER_SEC),
			   "started_unix_ms", (json_int_t)d->start_unix_ms, "socket",
			   d->cfg.daemon.socket, "probe_port", (int)d->cfg.probe.port, "config",
			   d->config_path, "clients", (json_int_t)d->n_clients,
			   "default_timeout_ms", (json_int_t)d->cfg.probe.timeout_ms);
	/* Unauthenticated mode is said out loud: anyone reaching the probe port is trusted. */
	if (daemon && (json_object_set_new(daemon, "probe_auth",
					   json_string(d->keys.n ? "cluster-key" : "none")) < 0 ||
		       json_object_set_new(daemon, "probe_listen_error",
					   npf_probe_listen_error(d->probe)
						   ? json_string(npf_probe_listen_error(d->probe))
						   : json_null()) < 0)) {
		json_decref(daemon);
		daemon = NULL;
	}
	if (json_object_set_new(r, "daemon", daemon) < 0 ||
	    json_object_set_new(r, "inventory", d->inv ? snap_status_json(d) : json_null()) < 0 ||
	    json_object_set_new(r, "checks", dchk_status_json(d)) < 0 ||
	    json_object_set_new(r, "jobs", jround_status_json(d)) < 0) {
		json_decref(r);
		return NULL;
	}
	return r;
}

static json_t *inventory_reply(struct npf_daemon *d)
{
	json_t *r;

	if (!d->inv)
		return npf_api_reply_error(NPF_API_E_NOT_READY, "no inventory yet");
	r = npf_api_reply_new();
	if (r && json_object_set_new(r, "inventory",
				     json_pack("{s:s, s:I, s:I, s:o, s:o}", "node", d->node_name,
					       "generation", (json_int_t)d->inv_generation,
					       "updated_unix_ms", (json_int_t)d->inv_unix_ms,
					       "interfaces", npf_ifaces_to_json(d->inv), "rdma",
					       npf_rdma_to_json(d->inv))) < 0) {
		json_decref(r);
		return NULL;
	}
	return r;
}

static void dispatch(struct ctl_client *c)
{
	struct npf_daemon *d = c->d;
	struct npf_api_request req;
	struct npf_api_error err;

	if (npf_api_request_parse(c->in, c->in_len, &req, &err) < 0) {
		log_debug("client pid %d uid %u: %s: %s", (int)c->pid, (unsigned)c->uid,
			  npf_api_errcode_name(err.code), err.message);
		reply_error(c, &err);
		return;
	}
	log_debug("client pid %d uid %u: %s", (int)c->pid, (unsigned)c->uid,
		  npf_api_req_name(req.type));
	/* Interface names and addresses are only true in our namespace: a container
	 * on a bridge or an ordinary pod would get names that do not exist there.
	 * status stays open, it only says that the daemon runs. */
	if (c->netns == DMN_NETNS_FOREIGN && req.type != NPF_API_REQ_STATUS &&
	    !d->cfg.daemon.allow_foreign_netns) {
		log_debug("client pid %d: refused, other network namespace", (int)c->pid);
		ctl_reply(c, npf_api_reply_error(NPF_API_E_FOREIGN_NETNS,
						 "client pid %d is in another network namespace "
						 "than netpreflightd; its interfaces and addresses "
						 "are not the host's (use the host network)",
						 (int)c->pid));
		npf_api_request_clear(&req);
		return;
	}
	switch (req.type) {
	case NPF_API_REQ_STATUS:
		ctl_reply(c, status_reply(d));
		break;
	case NPF_API_REQ_INVENTORY:
		ctl_reply(c, inventory_reply(d));
		break;
	case NPF_API_REQ_VERDICT:
		dchk_verdict(d, c, &req);
		break;
	case NPF_API_REQ_CHECK:
		if (!ctl_refuse_probe(d, c, &req, ""))
			dchk_check(d, c, &req);
		break;
	case NPF_API_REQ_ENV:
		/* Anyone may read a fresh cached answer (as for verdict); a new probe
		 * needs the same permission as check. */
		if (!dchk_env_cached(d, c, &req) &&
		    !ctl_refuse_probe(d, c, &req, "nothing cached for these peers and "))
			dchk_env_start(d, c, &req);
		break;
	case NPF_API_REQ__COUNT:
		break;
	}
	npf_api_request_clear(&req);
}

/* Reads what is available of the current frame. Returns 1 when a whole frame
 * was dispatched, 0 when more bytes are needed, -errno to drop the client. */
static int read_frame(struct ctl_client *c)
{
	ssize_t n;
	int r;

	if (c->hdr_got < sizeof(c->hdr)) {
		n = recv(c->fd, c->hdr + c->hdr_got, sizeof(c->hdr) - c->hdr_got, 0);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		c->hdr_got += (size_t)n;
		if (c->hdr_got < sizeof(c->hdr))
			return 0;
		r = npf_api_frame_len(c->hdr, NPF_API_MAX_REQUEST, &c->in_len);
		if (r < 0) {
			/* The stream cannot be resynchronised: answer, then close. */
			struct npf_api_error err = { .code = r == -EMSGSIZE ? NPF_API_E_TOO_LARGE :
									      NPF_API_E_BAD_REQUEST };

			if (r == -EMSGSIZE)
				snprintf(err.message, sizeof(err.message),
					 "frame of %u bytes exceeds the %u byte limit", c->in_len,
					 NPF_API_MAX_REQUEST);
			else
				snprintf(err.message, sizeof(err.message), "empty frame");
			c->close_after_write = true;
			reply_error(c, &err);
			return 1;
		}
		c->in = malloc(c->in_len);
		if (!c->in)
			return -ENOMEM;
		c->in_got = 0;
	}
	n = recv(c->fd, c->in + c->in_got, c->in_len - c->in_got, 0);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	c->in_got += (uint32_t)n;
	if (c->in_got < c->in_len)
		return 0;
	dispatch(c);
	free(c->in);
	c->in = NULL;
	c->hdr_got = 0;
	return 1;
}

static int on_client_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct ctl_client *c = userdata;
	int r;

	(void)s;
	(void)fd;
	if (c->out) {
		if (!(revents & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return 0;
		r = ctl_write_out(c);
		if (r < 0)
			goto drop;
		if (r == 0)
			return 0;
		if (c->close_after_write)
			goto drop;
		ctl_state_reading(c);
		return 0;
	}
	if (c->waiting) {
		/* Only HUP/ERR are subscribed while waiting. */
		goto drop;
	}
	for (int i = 0; i < READ_BATCH; i++) {
		r = read_frame(c);
		if (r < 0)
			goto drop;
		if (r == 0)
			break;
		/* One request at a time: its reply (or check) comes before the next read. */
		if (!c->waiting && !c->out)
			ctl_state_reading(c);
		return 0;
	}
	if (revents & (EPOLLHUP | EPOLLERR))
		goto drop;
	return 0;
drop:
	client_free(c);
	return 0;
}

static int on_client_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct ctl_client *c = userdata;

	(void)s;
	(void)usec;
	if (c->waiting) {
		/* The engine promised to finish within the timeout; don't trust it blindly. */
		dchk_client_gone(c->d, c);
		ctl_reply(c, npf_api_reply_error(NPF_API_E_CHECK_FAILED,
						 "the check did not complete in time"));
		return 0;
	}
	log_debug("client pid %d: %s deadline passed, closing", (int)c->pid,
		  c->out ? "write" : "request");
	client_free(c);
	return 0;
}

static void client_free(struct ctl_client *c)
{
	struct npf_daemon *d = c->d;

	dchk_client_gone(d, c);
	c->io = sd_event_source_disable_unref(c->io);
	c->timer = sd_event_source_disable_unref(c->timer);
	if (c->fd >= 0)
		close(c->fd);
	LIST_REMOVE(c, link);
	d->n_clients--;
	free(c->in);
	free(c->out);
	free(c->groups);
	free(c);
}

static void reject_busy(int fd, const char *why)
{
	json_t *e = npf_api_reply_error(NPF_API_E_BUSY, "%s", why);
	char *buf = NULL;
	size_t len;

	/* Best effort: a fresh socket's buffer takes this small frame at once. */
	if (e && npf_api_frame_encode(e, NPF_API_MAX_REPLY, &buf, &len) == 0 &&
	    send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("busy reply: %s", strerror(errno));
	free(buf);
	json_decref(e);
	close(fd);
}

/* Decided once per connection, at accept, like the credentials. */
static enum dmn_netns_cmp client_netns(const struct npf_daemon *d, int fd, pid_t pid)
{
	struct dmn_netns_id id;
	int r;

	if (!d->netns_known)
		return DMN_NETNS_UNKNOWN;
	r = dmn_netns_client(fd, pid, &id);
	if (r < 0) {
		log_debug("client pid %d: network namespace unknown: %s", (int)pid, strerror(-r));
		return DMN_NETNS_UNKNOWN;
	}
	return (enum dmn_netns_cmp)dmn_netns_compare(&d->netns, &id);
}

/* The client's supplementary groups as the kernel recorded them at connect
 * (SO_PEERGROUPS, Linux 4.13+). Without them only SO_PEERCRED's gid counts. */
static void peer_groups(struct ctl_client *c)
{
	socklen_t len = 64 * sizeof(gid_t);

	for (int tries = 0; tries < 2; tries++) {
		gid_t *g = realloc(c->groups, len ? len : sizeof(gid_t));

		if (!g)
			break;
		c->groups = g;
		if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) == 0) {
			c->n_groups = len / sizeof(gid_t);
			return;
		}
		/* ERANGE: len now says how much it needs. */
		if (errno != ERANGE || len > MAX_GROUPS * sizeof(gid_t))
			break;
	}
	free(c->groups);
	c->groups = NULL;
	c->n_groups = 0;
}

static int add_client(struct npf_daemon *d, int fd)
{
	struct ctl_client *c = calloc(1, sizeof(*c));
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int r;

	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->d = d;
	c->fd = fd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		r = -errno;
		goto err;
	}
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->pid = cred.pid;
	peer_groups(c);
	c->netns = client_netns(d, fd, cred.pid);
	if (cred.uid != 0) {
		const struct ctl_client *o;
		unsigned int same = 0;

		/* One user holding every slot would starve the TaskPrologs; root (the
		 * Prolog) has a reserve beyond the common cap. */
		LIST_FOREACH(o, &d->clients, link)
			same += o->uid == cred.uid;
		if (same >= DMN_MAX_CLIENTS_PER_UID ||
		    d->n_clients >= DMN_MAX_CLIENTS - DMN_ROOT_RESERVE) {
			free(c);
			reject_busy(fd, same >= DMN_MAX_CLIENTS_PER_UID ? "too many clients of this uid"
									 : "too many clients");
			return 0;
		}
	}
	r = sd_event_add_io(d->event, &c->io, fd, EPOLLIN | EPOLLRDHUP, on_client_io, c);
	if (r < 0)
		goto err;
	r = sd_event_add_time_relative(d->event, &c->timer, CLOCK_MONOTONIC,
				       DMN_CLIENT_IDLE_MS * 1000ull, 0, on_client_timer, c);
	if (r < 0)
		goto err;
	LIST_INSERT_HEAD(&d->clients, c, link);
	d->n_clients++;
	return 0;
err:
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	close(fd);
	free(c);
	return r;
}

static int on_accept_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct npf_daemon *d = userdata;

	(void)s;
	(void)usec;
	sd_event_source_set_enabled(d->listen_src, SD_EVENT_ON);
	return 0;
}

static int on_accept(sd_event_source *s, int lfd, uint32_t revents, void *userdata)
{
	struct npf_daemon *d = userdata;

	(void)s;
	(void)revents;
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		int r;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				/* Out of descriptors: stop accepting for a while instead of spinning. */
				log_warn("accept");
				sd_event_source_set_enabled(d->listen_src, SD_EVENT_OFF);
				sd_event_source_set_time_relative(d->accept_retry_src,
								  ACCEPT_RETRY_MS * 1000ull);
				sd_event_source_set_enabled(d->accept_retry_src, SD_EVENT_ONESHOT);
			} else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
				log_warn("accept");
			}
			break;
		}
		if (d->n_clients >= DMN_MAX_CLIENTS) {
			reject_busy(fd, "too many clients");
			continue;
		}
		r = add_client(d, fd);
		if (r < 0)
			log_errc(r, "new client");
	}
	return 0;
}

/* An existing path is reused only if it is a socket nobody answers on. */
static int clear_stale(const char *path, const struct sockaddr_un *sun)
{
	struct stat st;
	int fd, r;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	close(fd);
	if (r == 0)
		return -EADDRINUSE;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int bind_socket(struct npf_daemon *d)
{
	const char *path = d->cfg.daemon.socket;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[sizeof(sun.sun_path)];
	char *slash;
	int fd, r;

	if (strlen(path) >= sizeof(sun.sun_path) || path[0] != '/')
		return -EINVAL;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	memcpy(dir, path, strlen(path) + 1);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		r = dmn_mkdir_p(dir, 0755);
		if (r < 0)
			return r;
	}
	r = clear_stale(path, &sun);
	if (r == -EADDRINUSE)
		log_warnx("another daemon answers on %s", path);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		goto err;
	d->listen_bound = true;
	/* Who may connect is decided by the directory (and the systemd socket
	 * unit); what they may do is decided per request with SO_PEERCRED. */
	if (chmod(path, 0666) < 0 || listen(fd, SOMAXCONN) < 0)
		goto err;
	d->listen_fd = fd;
	return 0;
err:
	r = -errno;
	close(fd);
	return r;
}

static int take_activated(struct npf_daemon *d)
{
	int n = sd_listen_fds(1);

	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;

		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0) {
			int fl = fcntl(fd, F_GETFL);

			if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
				return -errno;
			d->listen_fd = fd;
			return 1;
		}
	}
	return 0;
}

int ctl_open(struct npf_daemon *d)
{
	int r;

	r = dmn_netns_self(&d->netns);
	d->netns_known = r == 0;
	if (r < 0)
		log_warnx("own network namespace unknown (%s): clients in other namespaces "
			  "cannot be told apart",
			  strerror(-r));

	r = take_activated(d);
	if (r < 0)
		return r;
	if (r > 0)
		log_info("using the socket passed by the service manager (fd %d)", d->listen_fd);
	else if ((r = bind_socket(d)) < 0)
		return r;
	r = sd_event_add_io(d->event, &d->listen_src, d->listen_fd, EPOLLIN, on_accept, d);
	if (r < 0)
		return r;
	r = sd_event_add_time_relative(d->event, &d->accept_retry_src, CLOCK_MONOTONIC,
				       ACCEPT_RETRY_MS * 1000ull, 0, on_accept_retry, d);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(d->accept_retry_src, SD_EVENT_OFF);
}

void ctl_close(struct npf_daemon *d)
{
	while (!LIST_EMPTY(&d->clients))
		client_free(LIST_FIRST(&d->clients));
	d->listen_src = sd_event_source_disable_unref(d->listen_src);
	d->accept_retry_src = sd_event_source_disable_unref(d->accept_retry_src);
	if (d->listen_fd >= 0)
		close(d->listen_fd);
	d->listen_fd = -1;
	if (d->listen_bound)
		unlink(d->cfg.daemon.socket);
	d->listen_bound = false;
}
