// SPDX-License-Identifier: MIT
/* lib/auth.c: key files, handshake proofs, frame tags, replays. */
#include <errno.h>
#include <setjmp.h>
#include <sodium.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "auth.h"

static void gen_keys(struct npf_auth_keys *k, size_t n)
{
	char buf[256], all[512] = "";

	for (size_t i = 0; i < n; i++) {
		assert_true(npf_auth_key_generate(buf, sizeof(buf)) > 0);
		strcat(all, buf);
	}
	assert_int_equal(npf_auth_keys_parse(all, strlen(all), k, NULL, 0), 0);
	assert_int_equal(k->n, n);
}

static void test_keyfile(void **state)
{
	struct npf_auth_keys k;
	char err[128], buf[256];
	const char *hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	char good[256];

	(void)state;
	snprintf(good, sizeof(good), "# comment\n\n  npf-key-v1 %s  \r\n", hex);
	assert_int_equal(npf_auth_keys_parse(good, strlen(good), &k, err, sizeof(err)), 0);
	assert_int_equal(k.n, 1);
	assert_int_equal(k.k[0].key[1], 0x11);
	/* generated files parse */
	assert_true(npf_auth_key_generate(buf, sizeof(buf)) > 0);
	assert_int_equal(npf_auth_keys_parse(buf, strlen(buf), &k, err, sizeof(err)), 0);
	assert_int_equal(npf_auth_key_generate(buf, 10), -ENOSPC);

#define K64 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	static const char twice[] = "npf-key-v1 " K64 "\nnpf-key-v1 " K64 "\n";
	static const char *bad[] = {
	    "",
	    "# only a comment\n",
	    "npf-key-v1 0011\n",
	    "npf-key-v2 " K64 "\n",
	    "npf-key-v1 00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff\n",
	    "npf-key-v1" K64 "\n",
	    twice,
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(npf_auth_keys_parse(bad[i], strlen(bad[i]), &k, err, sizeof(err)),
				 -EINVAL);
		assert_true(err[0] != '\0');
		assert_int_equal(k.n, 0);
	}
	/* three keys: at most two */
	{
		char three[1024] = "";

		for (int i = 0; i < 3; i++) {
			assert_true(npf_auth_key_generate(buf, sizeof(buf)) > 0);
			strcat(three, buf);
		}
		assert_int_equal(npf_auth_keys_parse(three, strlen(three), &k, err, sizeof(err)),
				 -EINVAL);
	}
	/* a NUL inside */
	assert_int_equal(npf_auth_keys_parse("npf-key-v1 \0", 12, &k, err, sizeof(err)), -EINVAL);
}

/* A full handshake between two key sets, through the JSON codecs. */
static int handshake(const struct npf_auth_keys *cli, const struct npf_auth_keys *srv,
		     struct npf_auth_session *cs, struct npf_auth_session *ss)
{
	struct npf_auth_hello h = {.n_ids = cli->n}, h2;
	struct npf_auth_challenge ch = {0}, ch2;
	struct npf_auth_finish fin, fin2;
	const struct npf_auth_key *sk, *ck;
	json_t *j;

	strcpy(h.node, "alpha");
	for (size_t i = 0; i < cli->n; i++)
		memcpy(h.ids[i], cli->k[i].id, NPF_AUTH_ID_LEN);
	randombytes_buf(h.nonce, sizeof(h.nonce));
	j = npf_auth_hello_to_json(&h);
	assert_int_equal(npf_auth_hello_from_json(j, &h2), 0);
	json_decref(j);
	sk = npf_auth_choose(srv, &h2);
	if (!sk)
		return -ENOKEY;
	strcpy(ch.node, "bravo");
	memcpy(ch.id, sk->id, sizeof(ch.id));
	randombytes_buf(ch.nonce, sizeof(ch.nonce));
	npf_auth_proof(sk, &h2, ch.node, ch.nonce, true, ch.mac);
	j = npf_auth_challenge_to_json(&ch);
	assert_int_equal(npf_auth_challenge_from_json(j, &ch2), 0);
	json_decref(j);
	ck = npf_auth_find(cli, ch2.id);
	if (!ck)
		return -ENOKEY;
	if (npf_auth_proof_check(ck, &h, ch2.node, ch2.nonce, true, ch2.mac) < 0)
		return -EKEYREJECTED;
	npf_auth_proof(ck, &h, ch2.node, ch2.nonce, false, fin.mac);
	j = npf_auth_finish_to_json(&fin);
	assert_int_equal(npf_auth_finish_from_json(j, &fin2), 0);
	json_decref(j);
	if (npf_auth_proof_check(sk, &h2, ch.node, ch.nonce, false, fin2.mac) < 0)
		return -EKEYREJECTED;
	npf_auth_session_init(cs, ck, &h, ch2.node, ch2.nonce, true);
	npf_auth_session_init(ss, sk, &h2, ch.node, ch.nonce, false);
	return 0;
}

static void seal_frame(struct npf_auth_session *s, const char *json, uint8_t *out, size_t *len)
{
	size_t n = strlen(json);

	npf_wire_hdr_encode(out, 1, (uint32_t)(n + NPF_AUTH_TAG_LEN));
	memcpy(out + NPF_WIRE_HDR_LEN, json, n);
	npf_auth_seal(s, out, NPF_WIRE_HDR_LEN + n, out + NPF_WIRE_HDR_LEN + n);
	npf_auth_sealed(s);
	*len = NPF_WIRE_HDR_LEN + n + NPF_AUTH_TAG_LEN;
}

static void test_handshake_and_frames(void **state)
{
	struct npf_auth_keys a, b, both;
	struct npf_auth_session cs, ss, cs2, ss2;
	uint8_t f[256], g[256], t1[16], t2[16];
	size_t len, glen, jl;

	(void)state;
	gen_keys(&a, 1);
	gen_keys(&b, 1);
	assert_int_equal(handshake(&a, &a, &cs, &ss), 0);
	/* no common key, and a forged proof */
	assert_int_equal(handshake(&a, &b, &cs2, &ss2), -ENOKEY);
	/* rotation: the server holds the new and the old key */
	both.n = 2;
	both.k[0] = b.k[0];
	both.k[1] = a.k[0];
	assert_int_equal(handshake(&a, &both, &cs2, &ss2), 0);

	/* frames both ways */
	seal_frame(&cs, "{\"x\":1}", f, &len);
	assert_int_equal(npf_auth_open(&ss, f, f + 8, len - 8, &jl), 0);
	assert_int_equal(jl, 7);
	seal_frame(&ss, "{\"y\":2}", g, &glen);
	assert_int_equal(npf_auth_open(&cs, g, g + 8, glen - 8, &jl), 0);
	/* replay of the same frame: the sequence number moved on */
	assert_int_equal(npf_auth_open(&ss, f, f + 8, len - 8, &jl), -EKEYREJECTED);
	/* reflected back to its sender */
	seal_frame(&cs, "{\"x\":1}", f, &len);
	assert_int_equal(npf_auth_open(&cs, f, f + 8, len - 8, &jl), -EKEYREJECTED);
	assert_int_equal(npf_auth_open(&ss, f, f + 8, len - 8, &jl), 0);
	/* carried into another session */
	seal_frame(&cs, "{\"x\":1}", f, &len);
	assert_int_equal(npf_auth_open(&ss2, f, f + 8, len - 8, &jl), -EKEYREJECTED);
	/* one flipped bit, header or payload */
	seal_frame(&cs, "{\"x\":1}", f, &len);
	f[3] ^= 1;
	assert_int_equal(npf_auth_open(&ss, f, f + 8, len - 8, &jl), -EKEYREJECTED);
	f[3] ^= 1;
	f[10] ^= 1;
	assert_int_equal(npf_auth_open(&ss, f, f + 8, len - 8, &jl), -EKEYREJECTED);
	/* too short for a tag */
	assert_int_equal(npf_auth_open(&ss, f, f + 8, NPF_AUTH_TAG_LEN, &jl), -EBADMSG);
	/* data tokens agree on both sides, differ per port, per listener nonce and per
	 * session (issue 19: a token seen on the wire opens no later listener) */
	{
		uint8_t n1[NPF_WIRE_NONCE_LEN], n2[NPF_WIRE_NONCE_LEN];

		randombytes_buf(n1, sizeof(n1));
		randombytes_buf(n2, sizeof(n2));
		npf_auth_data_token(&cs, 4000, n1, t1);
		npf_auth_data_token(&ss, 4000, n1, t2);
		assert_memory_equal(t1, t2, sizeof(t1));
		npf_auth_data_token(&ss, 4001, n1, t2);
		assert_memory_not_equal(t1, t2, sizeof(t1));
		npf_auth_data_token(&ss, 4000, n2, t2);
		assert_memory_not_equal(t1, t2, sizeof(t1));
		npf_auth_data_token(&cs2, 4000, n1, t2);
		assert_memory_not_equal(t1, t2, sizeof(t1));
	}
}

/* DATA_AUTH_REPLY's MAC: both sides agree; another listener, node, instance or session
 * gives another MAC. */
static void test_data_reply_mac(void **state)
{
	struct npf_auth_keys a;
	struct npf_auth_session cs, ss, cs2, ss2;
	uint8_t n1[NPF_WIRE_NONCE_LEN], n2[NPF_WIRE_NONCE_LEN];
	uint8_t m1[NPF_WIRE_MAC_LEN], m2[NPF_WIRE_MAC_LEN], tok[NPF_WIRE_TOKEN_LEN];

	(void)state;
	gen_keys(&a, 1);
	assert_int_equal(handshake(&a, &a, &cs, &ss), 0);
	assert_int_equal(handshake(&a, &a, &cs2, &ss2), 0);
	randombytes_buf(n1, sizeof(n1));
	randombytes_buf(n2, sizeof(n2));
	npf_auth_data_reply_mac(&ss, 4000, n1, "bravo", 0x2222, m1);
	npf_auth_data_reply_mac(&cs, 4000, n1, "bravo", 0x2222, m2);
	assert_memory_equal(m1, m2, sizeof(m1));
	npf_auth_data_reply_mac(&cs, 4000, n2, "bravo", 0x2222, m2);
	assert_memory_not_equal(m1, m2, sizeof(m1));
	npf_auth_data_reply_mac(&cs, 4001, n1, "bravo", 0x2222, m2);
	assert_memory_not_equal(m1, m2, sizeof(m1));
	npf_auth_data_reply_mac(&cs, 4000, n1, "bravox", 0x2222, m2);
	assert_memory_not_equal(m1, m2, sizeof(m1));
	npf_auth_data_reply_mac(&cs, 4000, n1, "bravo", 0x2223, m2);
	assert_memory_not_equal(m1, m2, sizeof(m1));
	npf_auth_data_reply_mac(&cs2, 4000, n1, "bravo", 0x2222, m2);
	assert_memory_not_equal(m1, m2, sizeof(m1));
	/* the token is not the MAC's prefix: one cannot be made from the other */
	npf_auth_data_token(&cs, 4000, n1, tok);
	assert_memory_not_equal(tok, m1, sizeof(tok));
}

/* The send counter moves only when the sender says the frame left (npf_auth_sealed): a
 * frame sealed and then dropped (a full output queue) leaves no gap. */
static void test_seal_counter(void **state)
{
	struct npf_auth_keys a;
	struct npf_auth_session cs, ss;
	uint8_t f[256], g[256];
	size_t n = 7, jl;

	(void)state;
	gen_keys(&a, 1);
	assert_int_equal(handshake(&a, &a, &cs, &ss), 0);
	npf_wire_hdr_encode(f, 1, (uint32_t)(n + NPF_AUTH_TAG_LEN));
	memcpy(f + NPF_WIRE_HDR_LEN, "{\"x\":1}", n);
	memcpy(g, f, NPF_WIRE_HDR_LEN + n);
	/* sealed, never queued */
	npf_auth_seal(&cs, f, NPF_WIRE_HDR_LEN + n, f + NPF_WIRE_HDR_LEN + n);
	assert_int_equal(cs.seq_send, 0);
	/* the next frame takes the same number and opens in order */
	npf_auth_seal(&cs, g, NPF_WIRE_HDR_LEN + n, g + NPF_WIRE_HDR_LEN + n);
	npf_auth_sealed(&cs);
	assert_int_equal(cs.seq_send, 1);
	assert_int_equal(npf_auth_open(&ss, g, g + 8, n + NPF_AUTH_TAG_LEN, &jl), 0);
}

/* The key ids the client offered are in the transcript: a server (or a middle) that saw
 * another offer than the client made cannot produce the client's proof. */
static void test_offer_in_transcript(void **state)
{
	struct npf_auth_keys two;
	struct npf_auth_hello h = {.n_ids = 2}, stripped;
	uint8_t mac[NPF_AUTH_TAG_LEN], nonce[NPF_AUTH_NONCE_LEN];

	(void)state;
	gen_keys(&two, 2);
	strcpy(h.node, "alpha");
	memcpy(h.ids[0], two.k[0].id, NPF_AUTH_ID_LEN);
	memcpy(h.ids[1], two.k[1].id, NPF_AUTH_ID_LEN);
	randombytes_buf(h.nonce, sizeof(h.nonce));
	randombytes_buf(nonce, sizeof(nonce));
	/* the new key dropped from the offer: both would settle on the old one */
	stripped = h;
	stripped.n_ids = 1;
	memcpy(stripped.ids[0], two.k[1].id, NPF_AUTH_ID_LEN);
	npf_auth_proof(&two.k[1], &stripped, "bravo", nonce, true, mac);
	assert_int_equal(npf_auth_proof_check(&two.k[1], &h, "bravo", nonce, true, mac),
			 -EKEYREJECTED);
	npf_auth_proof(&two.k[1], &h, "bravo", nonce, true, mac);
	assert_int_equal(npf_auth_proof_check(&two.k[1], &h, "bravo", nonce, true, mac), 0);
}

static void test_messages_strict(void **state)
{
	struct npf_auth_hello h;
	struct npf_auth_challenge c;
	struct npf_auth_finish f;
	static const char *hello_bad[] = {
	    "{}",
	    "{\"v\":2,\"node\":\"a\",\"keys\":[\"0011223344556677\"],\"nonce\":\"00\"}",
	    "{\"v\":1,\"node\":\"a\",\"keys\":[],\"nonce\":"
	    "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}",
	    "{\"v\":1,\"node\":\"a b\",\"keys\":[\"0011223344556677\"],\"nonce\":"
	    "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}",
	    "{\"v\":1,\"node\":\"a\",\"keys\":[1],\"nonce\":"
	    "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}",
	    "{\"v\":1,\"node\":\"a\",\"keys\":[\"0011223344556677\"],\"nonce\":"
	    "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\",\"x\":1}",
	};
	json_t *j;

	(void)state;
	for (size_t i = 0; i < sizeof(hello_bad) / sizeof(hello_bad[0]); i++) {
		j = json_loads(hello_bad[i], 0, NULL);
		assert_non_null(j);
		assert_int_equal(npf_auth_hello_from_json(j, &h), -EBADMSG);
		json_decref(j);
	}
	j = json_loads("{\"v\":1,\"node\":\"a\",\"keys\":[\"0011223344556677\"],\"nonce\":"
		       "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}",
		       0, NULL);
	assert_int_equal(npf_auth_hello_from_json(j, &h), 0);
	assert_int_equal(h.n_ids, 1);
	json_decref(j);
	j = json_loads("{\"node\":\"a\",\"key\":\"00\",\"nonce\":\"00\",\"mac\":\"00\"}", 0, NULL);
	assert_int_equal(npf_auth_challenge_from_json(j, &c), -EBADMSG);
	json_decref(j);
	j = json_loads("{\"mac\":5}", 0, NULL);
	assert_int_equal(npf_auth_finish_from_json(j, &f), -EBADMSG);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keyfile),
	    cmocka_unit_test(test_handshake_and_frames),
	    cmocka_unit_test(test_data_reply_mac),
	    cmocka_unit_test(test_seal_counter),
	    cmocka_unit_test(test_offer_in_transcript),
	    cmocka_unit_test(test_messages_strict),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
