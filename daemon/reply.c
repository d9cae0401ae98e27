// SPDX-License-Identifier: MIT
/* A local API client's side of the conversation: replies framed and written, the deadlines
 * of reading, waiting and writing. Calls no other daemon module, so the checks answer
 * through it without depending on the server (control.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon.h"

#define WAIT_SLACK_MS 5000 /* on top of the check timeout before we give up on the engine */

static int arm_timer(struct ctl_client *c, uint32_t ms)
{
	int r = sd_event_source_set_time_relative(c->timer, (uint64_t)ms * 1000);

	if (r >= 0)
		r = sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
	return r;
}

/* Waiting for a request: the whole frame must arrive within the idle deadline. */
void ctl_state_reading(struct ctl_client *c)
{
	sd_event_source_set_io_events(c->io, EPOLLIN | EPOLLRDHUP);
	arm_timer(c, DMN_CLIENT_IDLE_MS);
}

void ctl_wait(struct ctl_client *c, uint32_t ms)
{
	/* No EPOLLIN: a client cannot queue more work while it waits. HUP and
	 * ERR are always reported, so a client that goes away is still seen. */
	sd_event_source_set_io_events(c->io, 0);
	arm_timer(c, ms + WAIT_SLACK_MS);
}

int ctl_write_out(struct ctl_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return -errno;
		}
		c->out_off += (size_t)n;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	return 1;
}

/* Sends what the socket takes now, so a short reply costs one send() and no epoll_ctl;
 * only the rest waits for EPOLLOUT. Never frees c: an error is left for the loop to see
 * (the client is still writing, so EPOLLOUT/EPOLLERR end it there). */
static void start_write(struct ctl_client *c)
{
	if (!c->close_after_write && ctl_write_out(c) > 0) {
		ctl_state_reading(c);
		return;
	}
	sd_event_source_set_io_events(c->io, EPOLLOUT);
	arm_timer(c, DMN_CLIENT_WRITE_MS);
}

/* Replaces c's pending output with an internal-error reply; closes after it when even
 * that cannot be made. */
static void out_internal_error(struct ctl_client *c, int err)
{
	json_t *e = npf_api_reply_error(NPF_API_E_INTERNAL, "cannot encode reply: %s",
					strerror(-err));

	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	if (!e || npf_api_frame_encode(e, NPF_API_MAX_REPLY, &c->out, &c->out_len) < 0)
		c->close_after_write = true;
	json_decref(e);
}

void ctl_reply(struct ctl_client *c, json_t *reply)
{
	int r = -ENOMEM;

	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	if (reply)
		r = npf_api_frame_encode(reply, NPF_API_MAX_REPLY, &c->out, &c->out_len);
	json_decref(reply);
	if (r < 0)
		out_internal_error(c, r);
	start_write(c);
}

void ctl_reply_frame(struct ctl_client *c, int err, char *frame, size_t len)
{
	free(c->out);
	c->out = frame;
	c->out_len = frame ? len : 0;
	c->out_off = 0;
	if (err < 0 || !frame)
		out_internal_error(c, err < 0 ? err : -ENOMEM);
	start_write(c);
}
