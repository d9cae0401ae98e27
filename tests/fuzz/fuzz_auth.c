// SPDX-License-Identifier: MIT
/* Fuzz target for the authentication framing (lib/auth.c): the key file parser,
 * the three handshake messages (whatever parses must survive its encoder), and
 * opening a tagged frame in a fixed session (only the genuine tag may pass). */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void session(struct npf_auth_session *s, bool client)
{
	struct npf_auth_key k = {.key = {1, 2, 3}};
	struct npf_auth_hello h = {.node = "a", .n_ids = 1};

	npf_auth_key_id(&k);
	npf_auth_session_init(s, &k, &h, "b", h.nonce, client);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npf_auth_keys keys;
	struct npf_auth_hello h;
	struct npf_auth_challenge c;
	struct npf_auth_finish f;
	struct npf_auth_session srv;
	json_t *j = NULL, *o;
	char err[160];
	size_t jl;

	if (sodium_init() < 0)
		abort();
	(void)npf_auth_keys_parse((const char *)data, size, &keys, err, sizeof(err));

	if (npf_wire_parse_json(data, size, &j) == 0) {
		if (npf_auth_hello_from_json(j, &h) == 0) {
			struct npf_auth_hello h2;

			o = npf_auth_hello_to_json(&h);
			if (!o || npf_auth_hello_from_json(o, &h2) != 0 ||
			    memcmp(&h, &h2, sizeof(h)) != 0)
				abort();
			json_decref(o);
			(void)npf_auth_choose(&keys, &h);
		}
		if (npf_auth_challenge_from_json(j, &c) == 0) {
			struct npf_auth_challenge c2;

			o = npf_auth_challenge_to_json(&c);
			if (!o || npf_auth_challenge_from_json(o, &c2) != 0 ||
			    memcmp(&c, &c2, sizeof(c)) != 0)
				abort();
			json_decref(o);
		}
		if (npf_auth_finish_from_json(j, &f) == 0) {
			o = npf_auth_finish_to_json(&f);
			if (!o)
				abort();
			json_decref(o);
		}
		json_decref(j);
	}

	/* A frame: 8-byte header, then payload + tag. Random bytes must never open. */
	if (size >= NPF_WIRE_HDR_LEN) {
		session(&srv, false);
		if (npf_auth_open(&srv, data, data + NPF_WIRE_HDR_LEN, size - NPF_WIRE_HDR_LEN,
				  &jl) == 0)
			abort();
	}
	/* ...and a genuine one always does, whatever the (non-empty) payload. */
	if (size >= 1 && size <= 4096) {
		struct npf_auth_session cli;
		uint8_t *fr = malloc(NPF_WIRE_HDR_LEN + size + NPF_AUTH_TAG_LEN);

		if (!fr)
			abort();
		session(&cli, true);
		session(&srv, false);
		npf_wire_hdr_encode(fr, NPF_MSG_HELLO, (uint32_t)(size + NPF_AUTH_TAG_LEN));
		memcpy(fr + NPF_WIRE_HDR_LEN, data, size);
		npf_auth_seal(&cli, fr, NPF_WIRE_HDR_LEN + size, fr + NPF_WIRE_HDR_LEN + size);
		npf_auth_sealed(&cli);
		if (npf_auth_open(&srv, fr, fr + NPF_WIRE_HDR_LEN, size + NPF_AUTH_TAG_LEN, &jl) !=
			0 ||
		    jl != size)
			abort();
		/* the same frame twice: a replay */
		if (npf_auth_open(&srv, fr, fr + NPF_WIRE_HDR_LEN, size + NPF_AUTH_TAG_LEN, &jl) ==
		    0)
			abort();
		free(fr);
	}
	return 0;
}
