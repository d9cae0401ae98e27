// SPDX-License-Identifier: MIT
/* Fuzz target: the local API request parser, frame header, reply check, check<->JSON codec,
 * and the decision + env reply over whatever check the bytes decode to. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "recommend.h"
#include "verdict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A decoded check must survive its own encoding: to_json(from_json(x)) parses
 * back to the same shape. A mismatch is a codec bug, so crash loudly. */
static void check_roundtrip(const json_t *j)
{
	static const char *const formats[] = { "", "json", "shell", "taskprolog", "nccl-conf" };
	struct npf_check c = { 0 }, again = { 0 };
	struct npf_inventory inv = { 0 };
	struct npf_recommendation rec = { 0 };
	struct npf_verdict_report r;
	json_t *out;

	if (npf_check_from_json(j, &c) < 0)
		return;
	if (npf_verdict_compute(&c, &r) == 0)
		npf_verdict_report_clear(&r);
	/* A node with no interfaces: the decision must still hold up on any peer data. */
	if (npf_recommend(&inv, &c, NULL, &rec) == 0) {
		out = npf_check_to_json(&c, &rec);
		json_decref(out);
		for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
			json_decref(npf_api_env_reply(&rec, formats[i], i & 1, i));
	}
	npf_recommendation_clear(&rec);
	out = npf_check_to_json(&c, NULL);
	if (out) {
		if (npf_check_from_json(out, &again) < 0 || again.n_nodes != c.n_nodes ||
		    again.n_paths != c.n_paths || again.n_links != c.n_links)
			abort();
		npf_check_clear(&again);
		json_decref(out);
	}
	npf_check_clear(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npf_api_request req;
	struct npf_api_error err;
	uint32_t len;
	json_t *j;

	if (size > NPF_API_MAX_REQUEST + NPF_API_HDR_LEN)
		return 0;
	if (size >= NPF_API_HDR_LEN)
		(void)npf_api_frame_len(data, NPF_API_MAX_REQUEST, &len);

	if (npf_api_request_parse(data, size, &req, &err) == 0) {
		json_t *back = npf_api_request_to_json(&req);
		char *buf;
		size_t n;
		struct npf_api_request again;

		/* What we accept we must be able to re-encode and re-accept. */
		if (!back || npf_api_frame_encode(back, NPF_API_MAX_REPLY, &buf, &n) < 0)
			abort();
		if (npf_api_request_parse(buf + NPF_API_HDR_LEN, n - NPF_API_HDR_LEN, &again,
					  &err) < 0 ||
		    again.type != req.type || again.n_peers != req.n_peers)
			abort();
		npf_api_request_clear(&again);
		free(buf);
		json_decref(back);
		npf_api_request_clear(&req);
	}

	if (npf_api_json_decode(data, size, &j, &err) == 0) {
		(void)npf_api_reply_status(j, &err);
		check_roundtrip(j);
		check_roundtrip(json_object_get(j, "check"));
		json_decref(j);
	}
	return 0;
}
