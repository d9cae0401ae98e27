/* SPDX-License-Identifier: MIT */
/* Cluster-key authentication of probe control connections (pure, no I/O).
 *
 * Handshake, on the framed wire before any other message:
 *   client -> AUTH_HELLO     {node, keys: [key ids], nonce: 32 random bytes}
 *   server -> AUTH_CHALLENGE {node, key: chosen id, nonce, mac: HMAC(K, "srv" || T)}
 *   client -> AUTH_FINISH    {mac: HMAC(K, "cli" || T)}
 * T is the transcript (both node names, both nonces, the key ids the client
 * offered, the key chosen), so each side proves the key over a challenge it did
 * not choose, and nobody can strip a key from the offer unnoticed. Afterwards every frame
 * carries HMAC-SHA-256(direction key, sequence number || header || payload)
 * behind its JSON payload: frames cannot be forged, reordered, replayed within
 * the session or carried into another one (fresh nonces, fresh keys). Data-port
 * tokens are derived from the session and a per-listener nonce, and the data
 * port's reply carries a MAC. All primitives are libsodium's. */
#ifndef NPF_AUTH_H
#define NPF_AUTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "wire.h"

#define NPF_AUTH_KEY_LEN 32
#define NPF_AUTH_ID_LEN 8
#define NPF_AUTH_NONCE_LEN 32
#define NPF_AUTH_TAG_LEN 32
#define NPF_AUTH_MAX_KEYS 2 /* current and previous, for rotation */
#define NPF_AUTH_KEY_TAG "npf-key-v1"

/* Frame types of the handshake: NPF_MSG_AUTH_* in lib/wire.h's registry (48..63). */

struct npf_auth_key {
	uint8_t key[NPF_AUTH_KEY_LEN];
	uint8_t id[NPF_AUTH_ID_LEN]; /* public: a hash of the key, names it on the wire */
};

struct npf_auth_keys {
	struct npf_auth_key k[NPF_AUTH_MAX_KEYS]; /* k[0] is offered first */
	size_t n;
};

/* Parses a key file: '#' comments, blank lines, and 1..2 lines
 * "npf-key-v1 <64 lowercase hex digits>". Returns 0, or -EINVAL with a reason in
 * err. Wipes its temporaries. */
int npf_auth_keys_parse(const char *text, size_t len, struct npf_auth_keys *out, char *err,
			size_t errsz);

/* Writes a new random key in the file format (one comment line + the key line)
 * into buf. Returns the length or -ENOSPC. */
int npf_auth_key_generate(char *buf, size_t sz);

/* Fills k->id from k->key. */
void npf_auth_key_id(struct npf_auth_key *k);

/* Handshake messages (JSON payloads; strict: unknown keys rejected). */
struct npf_auth_hello {
	char node[NPF_NAME_MAX];
	uint8_t ids[NPF_AUTH_MAX_KEYS][NPF_AUTH_ID_LEN];
	size_t n_ids;
	uint8_t nonce[NPF_AUTH_NONCE_LEN];
};

struct npf_auth_challenge {
	char node[NPF_NAME_MAX];
	uint8_t id[NPF_AUTH_ID_LEN];
	uint8_t nonce[NPF_AUTH_NONCE_LEN];
	uint8_t mac[NPF_AUTH_TAG_LEN];
};

struct npf_auth_finish {
	uint8_t mac[NPF_AUTH_TAG_LEN];
};

/* *_to_json: new reference or NULL. *_from_json: 0 or -EBADMSG. */
json_t *npf_auth_hello_to_json(const struct npf_auth_hello *m);
int npf_auth_hello_from_json(json_t *j, struct npf_auth_hello *m);
json_t *npf_auth_challenge_to_json(const struct npf_auth_challenge *m);
int npf_auth_challenge_from_json(json_t *j, struct npf_auth_challenge *m);
json_t *npf_auth_finish_to_json(const struct npf_auth_finish *m);
int npf_auth_finish_from_json(json_t *j, struct npf_auth_finish *m);

/* The key both sides hold, chosen from the client's offer (our order first).
 * Returns the key or NULL. */
const struct npf_auth_key *npf_auth_choose(const struct npf_auth_keys *ours,
					   const struct npf_auth_hello *h);
const struct npf_auth_key *npf_auth_find(const struct npf_auth_keys *ours,
					 const uint8_t id[NPF_AUTH_ID_LEN]);

/* MACs of the transcript: server proof ("srv") and client proof ("cli"). */
void npf_auth_proof(const struct npf_auth_key *k, const struct npf_auth_hello *h,
		    const char *server_node, const uint8_t server_nonce[NPF_AUTH_NONCE_LEN],
		    bool server, uint8_t mac[NPF_AUTH_TAG_LEN]);
/* Constant-time check of a proof; 0 or -EKEYREJECTED. */
int npf_auth_proof_check(const struct npf_auth_key *k, const struct npf_auth_hello *h,
			 const char *server_node, const uint8_t server_nonce[NPF_AUTH_NONCE_LEN],
			 bool server, const uint8_t mac[NPF_AUTH_TAG_LEN]);

/* An established session: per-direction frame keys and counters. */
struct npf_auth_session {
	uint8_t k_send[NPF_AUTH_KEY_LEN], k_recv[NPF_AUTH_KEY_LEN], k_data[NPF_AUTH_KEY_LEN];
	uint64_t seq_send, seq_recv;
};

void npf_auth_session_init(struct npf_auth_session *s, const struct npf_auth_key *k,
			   const struct npf_auth_hello *h, const char *server_node,
			   const uint8_t server_nonce[NPF_AUTH_NONCE_LEN], bool client);

/* Sealing a frame: frame holds the 8-byte header (its length already counting
 * the tag) and the payload, len bytes in all; writes the tag for the next send
 * sequence number. The number moves on only with npf_auth_sealed(), once the
 * frame is really queued: a frame that never leaves must not open a gap the
 * receiver would read as forgery. */
void npf_auth_seal(const struct npf_auth_session *s, const uint8_t *frame, size_t len,
		   uint8_t tag[NPF_AUTH_TAG_LEN]);
void npf_auth_sealed(struct npf_auth_session *s);

/* Opening a received frame: hdr is its 8-byte header, payload its h.length
 * bytes (JSON + tag). On success returns 0, sets *json_len and advances the
 * receive counter; -EBADMSG when too short for a tag, -EKEYREJECTED when the
 * tag is wrong (forged, replayed, reordered or from another session). */
int npf_auth_open(struct npf_auth_session *s, const uint8_t hdr[NPF_WIRE_HDR_LEN],
		  const uint8_t *payload, size_t len, size_t *json_len);

/* The data-port token for the listener on port with the listener's random nonce
 * (sent in OPEN_DATA_REPLY): both sides derive it, so it never travels on the
 * control connection, and a token seen on the data port is worth nothing to the
 * next listener, even on the same port. */
void npf_auth_data_token(const struct npf_auth_session *s, uint16_t port,
			 const uint8_t nonce[NPF_WIRE_NONCE_LEN], uint8_t token[NPF_WIRE_TOKEN_LEN]);

/* The MAC of a DATA_AUTH_REPLY (node, instance) on that listener: the prober
 * knows the data port's answer comes from the daemon it authenticated. */
void npf_auth_data_reply_mac(const struct npf_auth_session *s, uint16_t port,
			     const uint8_t nonce[NPF_WIRE_NONCE_LEN], const char *node,
			     uint64_t instance, uint8_t mac[NPF_WIRE_MAC_LEN]);

#endif
