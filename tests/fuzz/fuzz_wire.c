// SPDX-License-Identifier: MIT
/* Fuzz target for the probe protocol codec: header decode, strict JSON, every
 * message parser, and re-encoding of whatever parsed (must parse again). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whatever a parser accepted must survive its own encoder and parser again. */
#define ROUNDTRIP(to_json, from_json, type, msg, out)                     \
	do {                                                               \
		json_t *o_ = to_json(msg);                                 \
		uint8_t *f_ = NULL;                                        \
		size_t l_ = 0;                                             \
		json_t *p_ = NULL;                                         \
		if (!o_)                                                   \
			abort();                                           \
		if (npf_wire_frame(type, o_, &f_, &l_) != 0 ||             \
		    npf_wire_parse_json(f_ + NPF_WIRE_HDR_LEN, l_ - NPF_WIRE_HDR_LEN, &p_) != 0 || \
		    from_json(p_, out) != 0)                               \
			abort();                                           \
		json_decref(p_);                                           \
		free(f_);                                                  \
		json_decref(o_);                                           \
	} while (0)

static void messages(json_t *j)
{
	struct npf_msg_hello h, h2;
	struct npf_msg_hello_reply hr, hr2;
	struct npf_msg_open_data od, od2;
	struct npf_msg_open_data_reply odr, odr2;
	struct npf_msg_data_auth da, da2;
	struct npf_msg_data_auth_reply dar, dar2;
	struct npf_msg_error e, e2;
	struct npf_msg_job_decision jd, jd2;
	struct npf_msg_reverse_req *rq = malloc(sizeof(*rq)), *rq2 = malloc(sizeof(*rq2));
	struct npf_msg_reverse_result *rr = malloc(sizeof(*rr)), *rr2 = malloc(sizeof(*rr2));
	struct npf_msg_row *row = malloc(sizeof(*row)), *row2 = malloc(sizeof(*row2));

	if (!rq || !rq2 || !rr || !rr2 || !row || !row2)
		abort();
	if (npf_wire_hello_from_json(j, &h) == 0) {
		ROUNDTRIP(npf_wire_hello_to_json, npf_wire_hello_from_json, NPF_MSG_HELLO, &h, &h2);
		if (h2.addrs_present != h.addrs_present || h2.n_addrs != h.n_addrs)
			abort();
	}
	if (npf_wire_hello_reply_from_json(j, &hr) == 0) {
		ROUNDTRIP(npf_wire_hello_reply_to_json, npf_wire_hello_reply_from_json,
			  NPF_MSG_HELLO_REPLY, &hr, &hr2);
		if (hr2.n_cands != hr.n_cands || hr2.n_ifnames != hr.n_ifnames)
			abort();
		npf_wire_hello_reply_clear(&hr2);
		npf_wire_hello_reply_clear(&hr);
	}
	if (npf_wire_open_data_from_json(j, &od) == 0)
		ROUNDTRIP(npf_wire_open_data_to_json, npf_wire_open_data_from_json,
			  NPF_MSG_OPEN_DATA, &od, &od2);
	if (npf_wire_open_data_reply_from_json(j, &odr) == 0)
		ROUNDTRIP(npf_wire_open_data_reply_to_json, npf_wire_open_data_reply_from_json,
			  NPF_MSG_OPEN_DATA_REPLY, &odr, &odr2);
	if (npf_wire_data_auth_from_json(j, &da) == 0)
		ROUNDTRIP(npf_wire_data_auth_to_json, npf_wire_data_auth_from_json,
			  NPF_MSG_DATA_AUTH, &da, &da2);
	if (npf_wire_data_auth_reply_from_json(j, &dar) == 0)
		ROUNDTRIP(npf_wire_data_auth_reply_to_json, npf_wire_data_auth_reply_from_json,
			  NPF_MSG_DATA_AUTH_REPLY, &dar, &dar2);
	if (npf_wire_reverse_req_from_json(j, rq) == 0)
		ROUNDTRIP(npf_wire_reverse_req_to_json, npf_wire_reverse_req_from_json,
			  NPF_MSG_REVERSE_REQ, rq, rq2);
	if (npf_wire_reverse_result_from_json(j, rr) == 0)
		ROUNDTRIP(npf_wire_reverse_result_to_json, npf_wire_reverse_result_from_json,
			  NPF_MSG_REVERSE_RESULT, rr, rr2);
	if (npf_wire_row_from_json(j, row) == 0) {
		ROUNDTRIP(npf_wire_row_to_json, npf_wire_row_from_json, NPF_MSG_ROW, row, row2);
		if (row2->n_nets != row->n_nets)
			abort();
		npf_wire_row_clear(row2);
		npf_wire_row_clear(row);
	}
	if (npf_wire_job_decision_from_json(j, &jd) == 0) {
		ROUNDTRIP(npf_wire_job_decision_to_json, npf_wire_job_decision_from_json,
			  NPF_MSG_JOB_DECISION, &jd, &jd2);
		if (jd2.n_nodes != jd.n_nodes || strcmp(jd2.nodes, jd.nodes) != 0)
			abort();
		npf_wire_job_decision_clear(&jd2);
		npf_wire_job_decision_clear(&jd);
	}
	if (npf_wire_error_from_json(j, &e) == 0)
		ROUNDTRIP(npf_wire_error_to_json, npf_wire_error_from_json, NPF_MSG_ERROR, &e,
			  &e2);
	free(rq);
	free(rq2);
	free(rr);
	free(rr2);
	free(row);
	free(row2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npf_wire_hdr h;
	json_t *j = NULL;
	size_t off = 0;

	/* A stream of frames, as a connection would deliver them. */
	while (size - off >= NPF_WIRE_HDR_LEN) {
		if (npf_wire_hdr_decode(data + off, size - off, NPF_WIRE_MAX_PAYLOAD, &h) != 0)
			break;
		off += NPF_WIRE_HDR_LEN;
		if (h.length > size - off)
			break;
		if (npf_wire_parse_json(data + off, h.length, &j) == 0) {
			messages(j);
			json_decref(j);
		}
		off += h.length;
	}
	/* And the raw bytes as a payload on their own. */
	if (size && size <= NPF_WIRE_MAX_PAYLOAD && npf_wire_parse_json(data, size, &j) == 0) {
		messages(j);
		json_decref(j);
	}
	return 0;
}
