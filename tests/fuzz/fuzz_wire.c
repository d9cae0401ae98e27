// SPDX-License-Identifier: MIT
/* Fuzz target for the probe protocol codec: header decode, strict JSON, every
 * message parser of the registry, and re-encoding of whatever parsed (must parse again). */
#include <stdint.h>
#include <stdlib.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whatever a row's parser accepted must survive its own encoder, the framing and its parser
 * again, to the same object (every message of the registry, lib/wire.c). */
static void roundtrip(const struct npf_wire_msg *m, json_t *j)
{
	void *a = calloc(1, m->size), *b = calloc(1, m->size);
	json_t *o = NULL, *p = NULL, *o2 = NULL;
	uint8_t *f = NULL;
	size_t l = 0;

	if (!a || !b)
		abort();
	if (m->from_json(j, a) == 0) {
		o = m->to_json(a);
		if (!o || npf_wire_frame(m->type, o, &f, &l) != 0 ||
		    npf_wire_parse_json(f + NPF_WIRE_HDR_LEN, l - NPF_WIRE_HDR_LEN, &p) != 0 ||
		    m->from_json(p, b) != 0)
			abort();
		o2 = m->to_json(b);
		if (!o2 || !json_equal(o, o2))
			abort();
		if (m->clear) {
			m->clear(a);
			m->clear(b);
		}
	}
	json_decref(o2);
	json_decref(p);
	json_decref(o);
	free(f);
	free(a);
	free(b);
}

static void messages(json_t *j)
{
	size_t n;
	const struct npf_wire_msg *m = npf_wire_msgs(&n);

	for (size_t i = 0; i < n; i++)
		roundtrip(&m[i], j);
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
