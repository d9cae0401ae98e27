// SPDX-License-Identifier: MIT
/* The probe protocol's message registry: every message once (type, name, codec, the states
 * it is allowed in, who may send it), and the frame header decoder that refuses a type the
 * registry does not know. Above the codecs (wire.c, wire_job.c, auth.c), which never call it. */
#include "wire.h"

#include "auth.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int npf_wire_hdr_decode(const uint8_t *buf, size_t len, uint32_t max_payload,
			struct npf_wire_hdr *h)
{
	struct npf_cursor c;

	if (len < NPF_WIRE_HDR_LEN)
		return -EAGAIN;
	npf_cursor_init(&c, buf, NPF_WIRE_HDR_LEN);
	if (npf_cursor_get_u16(&c, &h->version) < 0 || npf_cursor_get_u16(&c, &h->type) < 0 ||
	    npf_cursor_get_u32(&c, &h->length) < 0)
		return -EBADMSG;
	/* Version first: a newer peer must get "unsupported-version", not "bad-request". */
	if (h->version != NPF_WIRE_VERSION)
		return -EPROTONOSUPPORT;
	if (h->length > max_payload || h->length > NPF_WIRE_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (!npf_wire_msg_find(h->type))
		return -EBADMSG;
	return 0;
}

/* ---- The message registry ---- */

/* Typed codecs behind the registry's untyped pointers (one line per message). */
#define CODEC(tag, st, enc, dec)                                                               \
	static json_t *tag##_enc(const void *m) { return enc((const st *)m); }                  \
	static int tag##_dec(json_t *j, void *m) { return dec(j, (st *)m); }
CODEC(hello, struct npf_msg_hello, npf_wire_hello_to_json, npf_wire_hello_from_json)
CODEC(hello_reply, struct npf_msg_hello_reply, npf_wire_hello_reply_to_json,
      npf_wire_hello_reply_from_json)
CODEC(open_data, struct npf_msg_open_data, npf_wire_open_data_to_json,
      npf_wire_open_data_from_json)
CODEC(open_data_reply, struct npf_msg_open_data_reply, npf_wire_open_data_reply_to_json,
      npf_wire_open_data_reply_from_json)
CODEC(data_auth, struct npf_msg_data_auth, npf_wire_data_auth_to_json,
      npf_wire_data_auth_from_json)
CODEC(data_auth_reply, struct npf_msg_data_auth_reply, npf_wire_data_auth_reply_to_json,
      npf_wire_data_auth_reply_from_json)
CODEC(reverse_req, struct npf_msg_reverse_req, npf_wire_reverse_req_to_json,
      npf_wire_reverse_req_from_json)
CODEC(reverse_result, struct npf_msg_reverse_result, npf_wire_reverse_result_to_json,
      npf_wire_reverse_result_from_json)
CODEC(error, struct npf_msg_error, npf_wire_error_to_json, npf_wire_error_from_json)
CODEC(row, struct npf_msg_row, npf_wire_row_to_json, npf_wire_row_from_json)
CODEC(job_decision, struct npf_msg_job_decision, npf_wire_job_decision_to_json,
      npf_wire_job_decision_from_json)
CODEC(auth_hello, struct npf_auth_hello, npf_auth_hello_to_json, npf_auth_hello_from_json)
CODEC(auth_challenge, struct npf_auth_challenge, npf_auth_challenge_to_json,
      npf_auth_challenge_from_json)
CODEC(auth_finish, struct npf_auth_finish, npf_auth_finish_to_json, npf_auth_finish_from_json)
#undef CODEC

static void hello_reply_clr(void *m) { npf_wire_hello_reply_clear(m); }
static void row_clr(void *m) { npf_wire_row_clear(m); }
static void job_decision_clr(void *m) { npf_wire_job_decision_clear(m); }

#define P NPF_WROLE_PROBER
#define D NPF_WROLE_DAEMON
#define CTL (NPF_WST_OPEN | NPF_WST_SESSION)
#define ANY (NPF_WST_HANDSHAKE | CTL | NPF_WST_DATA)
#define ROW(T, tag, st, clr, states, from)                                                      \
	{ NPF_MSG_##T, #T, sizeof(st), tag##_enc, tag##_dec, clr, states, from }

/* Every message of the protocol: where it may arrive and who may send it. HELLO opens the
 * session; a ROW needs none (a job participant sends it alone); ERROR ends any stage. */
static const struct npf_wire_msg msgs[] = {
    ROW(HELLO, hello, struct npf_msg_hello, NULL, NPF_WST_OPEN, P),
    ROW(HELLO_REPLY, hello_reply, struct npf_msg_hello_reply, hello_reply_clr,
	NPF_WST_SESSION, D),
    ROW(OPEN_DATA, open_data, struct npf_msg_open_data, NULL, NPF_WST_SESSION, P),
    ROW(OPEN_DATA_REPLY, open_data_reply, struct npf_msg_open_data_reply, NULL,
	NPF_WST_SESSION, D),
    ROW(DATA_AUTH, data_auth, struct npf_msg_data_auth, NULL, NPF_WST_DATA, P),
    ROW(DATA_AUTH_REPLY, data_auth_reply, struct npf_msg_data_auth_reply, NULL, NPF_WST_DATA,
	D),
    ROW(REVERSE_REQ, reverse_req, struct npf_msg_reverse_req, NULL, NPF_WST_SESSION, P),
    ROW(REVERSE_RESULT, reverse_result, struct npf_msg_reverse_result, NULL, NPF_WST_SESSION,
	D),
    ROW(ERROR, error, struct npf_msg_error, NULL, ANY, P | D),
    ROW(ROW, row, struct npf_msg_row, row_clr, CTL, P),
    ROW(JOB_DECISION, job_decision, struct npf_msg_job_decision, job_decision_clr, CTL, D),
    ROW(AUTH_HELLO, auth_hello, struct npf_auth_hello, NULL, NPF_WST_HANDSHAKE, P),
    ROW(AUTH_CHALLENGE, auth_challenge, struct npf_auth_challenge, NULL, NPF_WST_HANDSHAKE, D),
    ROW(AUTH_FINISH, auth_finish, struct npf_auth_finish, NULL, NPF_WST_HANDSHAKE, P),
};
#undef ROW
#undef ANY
#undef CTL
#undef D
#undef P

const struct npf_wire_msg *npf_wire_msgs(size_t *n)
{
	*n = sizeof(msgs) / sizeof(msgs[0]);
	return msgs;
}

const struct npf_wire_msg *npf_wire_msg_find(uint16_t type)
{
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		if (msgs[i].type == type)
			return &msgs[i];
	return NULL;
}

int npf_wire_msg_allowed(uint16_t type, unsigned state, unsigned sender)
{
	const struct npf_wire_msg *m = npf_wire_msg_find(type);

	if (!m)
		return -EBADMSG;
	return (m->states & state) && (m->from & sender) ? 0 : -EPROTO;
}

const char *npf_wire_type_name(uint16_t type)
{
	const struct npf_wire_msg *m = npf_wire_msg_find(type);

	return m ? m->name : "UNKNOWN";
}
