// SPDX-License-Identifier: MIT
/* Cluster-key authentication: key file format, handshake messages, transcript
 * proofs, per-frame tags. libsodium does every primitive (HMAC-SHA-256 via
 * crypto_auth_hmacsha256, subkeys via crypto_kdf, BLAKE2b for key ids). */
#include "auth.h"

#include <errno.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define KDF_CTX "npfsess1" /* crypto_kdf context: exactly 8 bytes */

void npf_auth_key_id(struct npf_auth_key *k)
{
	static const uint8_t label[] = "npf-key-id";

	crypto_generichash(k->id, sizeof(k->id), k->key, sizeof(k->key), label, sizeof(label) - 1);
}

static int hex_exact(const char *s, size_t slen, uint8_t *out, size_t n)
{
	size_t got = 0;

	if (slen != 2 * n)
		return -EBADMSG;
	for (size_t i = 0; i < slen; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return -EBADMSG;
	if (sodium_hex2bin(out, n, s, slen, NULL, &got, NULL) != 0 || got != n)
		return -EBADMSG;
	return 0;
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	if (err && errsz) {
		va_start(ap, fmt);
		vsnprintf(err, errsz, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int npf_auth_keys_parse(const char *text, size_t len, struct npf_auth_keys *out, char *err,
			size_t errsz)
{
	const size_t tag_len = sizeof(NPF_AUTH_KEY_TAG) - 1;
	size_t off = 0, lineno = 0;

	memset(out, 0, sizeof(*out));
	while (off < len) {
		const char *line = text + off, *nl = memchr(line, '\n', len - off);
		size_t n = nl ? (size_t)(nl - line) : len - off;
		struct npf_auth_key *k;

		off += n + (nl ? 1 : 0);
		lineno++;
		while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
			n--;
		while (n && (*line == ' ' || *line == '\t')) {
			line++;
			n--;
		}
		if (!n || *line == '#')
			continue;
		if (memchr(line, '\0', n))
			return fail(err, errsz, "line %zu: NUL byte", lineno);
		if (n < tag_len + 1 || memcmp(line, NPF_AUTH_KEY_TAG, tag_len) != 0 ||
		    (line[tag_len] != ' ' && line[tag_len] != '\t'))
			return fail(err, errsz, "line %zu: expected \"%s <64 hex digits>\"", lineno,
				    NPF_AUTH_KEY_TAG);
		if (out->n == NPF_AUTH_MAX_KEYS) {
			sodium_memzero(out, sizeof(*out));
			return fail(err, errsz, "line %zu: at most %d keys (current and previous)",
				    lineno, NPF_AUTH_MAX_KEYS);
		}
		line += tag_len;
		n -= tag_len;
		while (n && (*line == ' ' || *line == '\t')) {
			line++;
			n--;
		}
		k = &out->k[out->n];
		if (hex_exact(line, n, k->key, sizeof(k->key)) < 0) {
			sodium_memzero(out, sizeof(*out));
			return fail(err, errsz, "line %zu: the key must be 64 lowercase hex digits",
				    lineno);
		}
		npf_auth_key_id(k);
		for (size_t i = 0; i < out->n; i++) {
			if (sodium_memcmp(out->k[i].key, k->key, sizeof(k->key)) == 0) {
				sodium_memzero(out, sizeof(*out));
				return fail(err, errsz, "line %zu: the same key twice", lineno);
			}
		}
		out->n++;
	}
	if (!out->n)
		return fail(err, errsz, "no key in the file");
	return 0;
}

int npf_auth_key_generate(char *buf, size_t sz)
{
	uint8_t key[NPF_AUTH_KEY_LEN];
	char hex[2 * NPF_AUTH_KEY_LEN + 1];
	int n;

	randombytes_buf(key, sizeof(key));
	sodium_bin2hex(hex, sizeof(hex), key, sizeof(key));
	n = snprintf(buf, sz,
		     "# netpreflight cluster key: install with mode 0600 (or 0640), owned by the\n"
		     "# daemon's user, on every node; set [probe] key_file to its path.\n"
		     "%s %s\n",
		     NPF_AUTH_KEY_TAG, hex);
	sodium_memzero(key, sizeof(key));
	sodium_memzero(hex, sizeof(hex));
	if (n < 0 || (size_t)n >= sz) {
		if (sz)
			sodium_memzero(buf, sz);
		return -ENOSPC;
	}
	return n;
}

/* ---- messages ---- */

static json_t *hex_json(const uint8_t *b, size_t n)
{
	char s[2 * NPF_AUTH_NONCE_LEN + 1];

	sodium_bin2hex(s, sizeof(s), b, n);
	return json_string(s);
}

static int hex_field(const char *s, uint8_t *out, size_t n)
{
	return s ? hex_exact(s, strlen(s), out, n) : -EBADMSG;
}

static int node_field(const char *s, char out[NPF_NAME_MAX])
{
	if (!npf_wire_name_valid(s))
		return -EBADMSG;
	snprintf(out, NPF_NAME_MAX, "%s", s);
	return 0;
}

json_t *npf_auth_hello_to_json(const struct npf_auth_hello *m)
{
	json_t *ids = json_array();

	for (size_t i = 0; ids && i < m->n_ids; i++) {
		if (json_array_append_new(ids, hex_json(m->ids[i], NPF_AUTH_ID_LEN)) < 0) {
			json_decref(ids);
			return NULL;
		}
	}
	if (!ids)
		return NULL;
	return json_pack("{s:i, s:s, s:o, s:o}", "v", 1, "node", m->node, "keys", ids, "nonce",
			 hex_json(m->nonce, sizeof(m->nonce)));
}

int npf_auth_hello_from_json(json_t *j, struct npf_auth_hello *m)
{
	const char *node, *nonce;
	json_t *ids, *v;
	int ver;
	size_t i;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:i, s:s, s:o, s:s !}", "v", &ver, "node", &node, "keys", &ids,
			"nonce", &nonce) < 0)
		return -EBADMSG;
	if (ver != 1 || !json_is_array(ids) || json_array_size(ids) < 1 ||
	    json_array_size(ids) > NPF_AUTH_MAX_KEYS)
		return -EBADMSG;
	if (node_field(node, m->node) < 0 || hex_field(nonce, m->nonce, sizeof(m->nonce)) < 0)
		return -EBADMSG;
	json_array_foreach(ids, i, v)
	{
		if (hex_field(json_string_value(v), m->ids[i], NPF_AUTH_ID_LEN) < 0)
			return -EBADMSG;
	}
	m->n_ids = json_array_size(ids);
	return 0;
}

json_t *npf_auth_challenge_to_json(const struct npf_auth_challenge *m)
{
	return json_pack(
	    "{s:s, s:o, s:o, s:o}", "node", m->node, "key", hex_json(m->id, sizeof(m->id)), "nonce",
	    hex_json(m->nonce, sizeof(m->nonce)), "mac", hex_json(m->mac, sizeof(m->mac)));
}

int npf_auth_challenge_from_json(json_t *j, struct npf_auth_challenge *m)
{
	const char *node, *id, *nonce, *mac;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:s, s:s, s:s, s:s !}", "node", &node, "key", &id, "nonce", &nonce,
			"mac", &mac) < 0)
		return -EBADMSG;
	if (node_field(node, m->node) < 0 || hex_field(id, m->id, sizeof(m->id)) < 0 ||
	    hex_field(nonce, m->nonce, sizeof(m->nonce)) < 0 ||
	    hex_field(mac, m->mac, sizeof(m->mac)) < 0)
		return -EBADMSG;
	return 0;
}

json_t *npf_auth_finish_to_json(const struct npf_auth_finish *m)
{
	return json_pack("{s:o}", "mac", hex_json(m->mac, sizeof(m->mac)));
}

int npf_auth_finish_from_json(json_t *j, struct npf_auth_finish *m)
{
	const char *mac;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:s !}", "mac", &mac) < 0)
		return -EBADMSG;
	return hex_field(mac, m->mac, sizeof(m->mac));
}

/* ---- keys, proofs, sessions ---- */

const struct npf_auth_key *npf_auth_find(const struct npf_auth_keys *ours,
					 const uint8_t id[NPF_AUTH_ID_LEN])
{
	for (size_t i = 0; i < ours->n; i++)
		if (memcmp(ours->k[i].id, id, NPF_AUTH_ID_LEN) == 0)
			return &ours->k[i];
	return NULL;
}

const struct npf_auth_key *npf_auth_choose(const struct npf_auth_keys *ours,
					   const struct npf_auth_hello *h)
{
	/* Our order first: during a rotation the new key wins once both have it. */
	for (size_t i = 0; i < ours->n; i++)
		for (size_t j = 0; j < h->n_ids; j++)
			if (memcmp(ours->k[i].id, h->ids[j], NPF_AUTH_ID_LEN) == 0)
				return &ours->k[i];
	return NULL;
}

static void absorb_str(crypto_auth_hmacsha256_state *st, const char *s)
{
	uint8_t n = (uint8_t)strnlen(s, NPF_NAME_MAX - 1);

	crypto_auth_hmacsha256_update(st, &n, 1);
	crypto_auth_hmacsha256_update(st, (const uint8_t *)s, n);
}

/* HMAC(key, label || transcript): the transcript is length-prefixed, so no two
 * different handshakes absorb the same bytes. */
static void transcript_mac(const uint8_t key[NPF_AUTH_KEY_LEN], const char *label,
			   const struct npf_auth_key *k, const struct npf_auth_hello *h,
			   const char *server_node, const uint8_t server_nonce[NPF_AUTH_NONCE_LEN],
			   uint8_t out[NPF_AUTH_TAG_LEN])
{
	crypto_auth_hmacsha256_state st;
	static const uint8_t proto[] = "npf-auth-v2";
	uint8_t n_ids = (uint8_t)(h->n_ids < NPF_AUTH_MAX_KEYS ? h->n_ids : NPF_AUTH_MAX_KEYS);

	crypto_auth_hmacsha256_init(&st, key, NPF_AUTH_KEY_LEN);
	crypto_auth_hmacsha256_update(&st, proto, sizeof(proto) - 1);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, 3);
	absorb_str(&st, h->node);
	crypto_auth_hmacsha256_update(&st, h->nonce, sizeof(h->nonce));
	/* The offer as the client made it: a middle cannot drop the new key from it to
	 * push both sides onto the old one. */
	crypto_auth_hmacsha256_update(&st, &n_ids, 1);
	for (size_t i = 0; i < n_ids; i++)
		crypto_auth_hmacsha256_update(&st, h->ids[i], NPF_AUTH_ID_LEN);
	absorb_str(&st, server_node);
	crypto_auth_hmacsha256_update(&st, server_nonce, NPF_AUTH_NONCE_LEN);
	crypto_auth_hmacsha256_update(&st, k->id, sizeof(k->id));
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

void npf_auth_proof(const struct npf_auth_key *k, const struct npf_auth_hello *h,
		    const char *server_node, const uint8_t server_nonce[NPF_AUTH_NONCE_LEN],
		    bool server, uint8_t mac[NPF_AUTH_TAG_LEN])
{
	transcript_mac(k->key, server ? "srv" : "cli", k, h, server_node, server_nonce, mac);
}

int npf_auth_proof_check(const struct npf_auth_key *k, const struct npf_auth_hello *h,
			 const char *server_node, const uint8_t server_nonce[NPF_AUTH_NONCE_LEN],
			 bool server, const uint8_t mac[NPF_AUTH_TAG_LEN])
{
	uint8_t want[NPF_AUTH_TAG_LEN];
	int r;

	npf_auth_proof(k, h, server_node, server_nonce, server, want);
	r = sodium_memcmp(want, mac, sizeof(want)) == 0 ? 0 : -EKEYREJECTED;
	sodium_memzero(want, sizeof(want));
	return r;
}

void npf_auth_session_init(struct npf_auth_session *s, const struct npf_auth_key *k,
			   const struct npf_auth_hello *h, const char *server_node,
			   const uint8_t server_nonce[NPF_AUTH_NONCE_LEN], bool client)
{
	uint8_t master[crypto_kdf_KEYBYTES];
	uint8_t c2s[NPF_AUTH_KEY_LEN], s2c[NPF_AUTH_KEY_LEN];

	memset(s, 0, sizeof(*s));
	transcript_mac(k->key, "ses", k, h, server_node, server_nonce, master);
	crypto_kdf_derive_from_key(c2s, sizeof(c2s), 1, KDF_CTX, master);
	crypto_kdf_derive_from_key(s2c, sizeof(s2c), 2, KDF_CTX, master);
	crypto_kdf_derive_from_key(s->k_data, sizeof(s->k_data), 3, KDF_CTX, master);
	memcpy(s->k_send, client ? c2s : s2c, NPF_AUTH_KEY_LEN);
	memcpy(s->k_recv, client ? s2c : c2s, NPF_AUTH_KEY_LEN);
	sodium_memzero(master, sizeof(master));
	sodium_memzero(c2s, sizeof(c2s));
	sodium_memzero(s2c, sizeof(s2c));
}

static void frame_tag(const uint8_t key[NPF_AUTH_KEY_LEN], uint64_t seq, const uint8_t *hdr,
		      const uint8_t *payload, size_t len, uint8_t tag[NPF_AUTH_TAG_LEN])
{
	crypto_auth_hmacsha256_state st;
	uint8_t sb[8];

	for (int i = 0; i < 8; i++)
		sb[i] = (uint8_t)(seq >> (56 - 8 * i));
	crypto_auth_hmacsha256_init(&st, key, NPF_AUTH_KEY_LEN);
	crypto_auth_hmacsha256_update(&st, sb, sizeof(sb));
	crypto_auth_hmacsha256_update(&st, hdr, NPF_WIRE_HDR_LEN);
	crypto_auth_hmacsha256_update(&st, payload, len);
	crypto_auth_hmacsha256_final(&st, tag);
	sodium_memzero(&st, sizeof(st));
}

void npf_auth_seal(const struct npf_auth_session *s, const uint8_t *frame, size_t len,
		   uint8_t tag[NPF_AUTH_TAG_LEN])
{
	frame_tag(s->k_send, s->seq_send, frame, frame + NPF_WIRE_HDR_LEN, len - NPF_WIRE_HDR_LEN,
		  tag);
}

void npf_auth_sealed(struct npf_auth_session *s)
{
	s->seq_send++;
}

int npf_auth_open(struct npf_auth_session *s, const uint8_t hdr[NPF_WIRE_HDR_LEN],
		  const uint8_t *payload, size_t len, size_t *json_len)
{
	uint8_t want[NPF_AUTH_TAG_LEN];
	size_t n;
	int r;

	if (len <= NPF_AUTH_TAG_LEN)
		return -EBADMSG;
	n = len - NPF_AUTH_TAG_LEN;
	frame_tag(s->k_recv, s->seq_recv, hdr, payload, n, want);
	r = sodium_memcmp(want, payload + n, sizeof(want)) == 0 ? 0 : -EKEYREJECTED;
	if (r == 0) {
		s->seq_recv++;
		*json_len = n;
	}
	return r;
}

/* HMAC(k_data, label || port || nonce [|| node || instance]), the labels keeping
 * tokens and reply MACs apart. */
static void data_mac(const struct npf_auth_session *s, const char *label, uint16_t port,
		     const uint8_t nonce[NPF_WIRE_NONCE_LEN], const char *node, uint64_t instance,
		     uint8_t out[crypto_auth_hmacsha256_BYTES])
{
	crypto_auth_hmacsha256_state st;
	uint8_t pb[2] = {(uint8_t)(port >> 8), (uint8_t)port}, ib[8];

	crypto_auth_hmacsha256_init(&st, s->k_data, sizeof(s->k_data));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, 4);
	crypto_auth_hmacsha256_update(&st, pb, sizeof(pb));
	crypto_auth_hmacsha256_update(&st, nonce, NPF_WIRE_NONCE_LEN);
	if (node) {
		for (int i = 0; i < 8; i++)
			ib[i] = (uint8_t)(instance >> (56 - 8 * i));
		absorb_str(&st, node);
		crypto_auth_hmacsha256_update(&st, ib, sizeof(ib));
	}
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

void npf_auth_data_token(const struct npf_auth_session *s, uint16_t port,
			 const uint8_t nonce[NPF_WIRE_NONCE_LEN], uint8_t token[NPF_WIRE_TOKEN_LEN])
{
	uint8_t full[crypto_auth_hmacsha256_BYTES];

	data_mac(s, "data", port, nonce, NULL, 0, full);
	memcpy(token, full, NPF_WIRE_TOKEN_LEN);
	sodium_memzero(full, sizeof(full));
}

void npf_auth_data_reply_mac(const struct npf_auth_session *s, uint16_t port,
			     const uint8_t nonce[NPF_WIRE_NONCE_LEN], const char *node,
			     uint64_t instance, uint8_t mac[NPF_WIRE_MAC_LEN])
{
	uint8_t full[crypto_auth_hmacsha256_BYTES];

	data_mac(s, "drep", port, nonce, node, instance, full);
	memcpy(mac, full, NPF_WIRE_MAC_LEN);
	sodium_memzero(full, sizeof(full));
}
