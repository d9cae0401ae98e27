/* SPDX-License-Identifier: MIT */
/* Client side of the local API: one framed request, one framed reply, bounded in time. */
#ifndef NPF_SYS_CLIENT_H
#define NPF_SYS_CLIENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Called about every 250 ms while waiting for the reply (e.g. a terminal
 * progress line); elapsed_ms counts from the start of the request. */
typedef void (*npf_client_progress_fn)(uint32_t elapsed_ms, void *userdata);

/* Connects to the daemon's Unix socket, sends req (framed), reads one framed
 * reply of at most NPF_API_MAX_REPLY bytes and decodes it strictly. The whole
 * exchange is bounded by timeout_ms. On success *reply is a new reference
 * (caller json_decref) that may still be an {"ok":false} error reply: check
 * it with npf_api_reply_status(). Returns 0 or -errno: -ENOENT/-ECONNREFUSED
 * (no daemon), -EACCES, -ETIMEDOUT, -ECONNRESET (closed early), -EPROTO
 * (undecodable reply), -EMSGSIZE, -ENAMETOOLONG (socket path), -ENOMEM. */
int npf_client_request(const char *socket_path, json_t *req, json_t **reply, int timeout_ms);

/* Same, with a progress callback (may be NULL). */
int npf_client_request_progress(const char *socket_path, json_t *req, json_t **reply,
				int timeout_ms, npf_client_progress_fn progress, void *userdata);

/* A human sentence for a npf_client_request error, naming the socket, e.g.
 * "daemon not running at /run/netpreflight/netpreflight.sock". Returns buf. */
char *npf_client_strerror(int err, const char *socket_path, char *buf, size_t len);

#endif
