// SPDX-License-Identifier: MIT
/* Unit tests for the probe protocol codec (lib/wire): header, cursor, strict JSON, messages. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "npf_test.h"

#include "auth.h"
#include "candidates.h"
#include "wire.h"

static json_t *parse(const char *s)
{
	json_t *j = NULL;

	if (npf_wire_parse_json((const uint8_t *)s, strlen(s), &j) < 0)
		return NULL;
	return j;
}

static void test_header(void **state)
{
	uint8_t b[NPF_WIRE_HDR_LEN];
	struct npf_wire_hdr h;

	(void)state;
	npf_wire_hdr_encode(b, NPF_MSG_REVERSE_REQ, 1234);
	assert_int_equal(b[0], 0);
	assert_int_equal(b[1], NPF_WIRE_VERSION);
	assert_int_equal(npf_wire_hdr_decode(b, sizeof(b), NPF_WIRE_MAX_PAYLOAD, &h), 0);
	assert_int_equal(h.version, NPF_WIRE_VERSION);
	assert_int_equal(h.type, NPF_MSG_REVERSE_REQ);
	assert_int_equal(h.length, 1234);
	/* truncated */
	for (size_t i = 0; i < NPF_WIRE_HDR_LEN; i++)
		assert_int_equal(npf_wire_hdr_decode(b, i, NPF_WIRE_MAX_PAYLOAD, &h), -EAGAIN);
	/* a caller's smaller cap */
	assert_int_equal(npf_wire_hdr_decode(b, sizeof(b), 1000, &h), -EMSGSIZE);
	/* oversized */
	npf_wire_hdr_encode(b, NPF_MSG_HELLO, NPF_WIRE_MAX_PAYLOAD + 1);
	assert_int_equal(npf_wire_hdr_decode(b, sizeof(b), UINT32_MAX, &h), -EMSGSIZE);
	npf_wire_hdr_encode(b, NPF_MSG_HELLO, NPF_WIRE_MAX_PAYLOAD);
	assert_int_equal(npf_wire_hdr_decode(b, sizeof(b), NPF_WIRE_MAX_PAYLOAD, &h), 0);
	/* unknown types */
	npf_wire_hdr_encode(b, 0, 10);
	assert_int_equal(npf_wire_hdr_decode(b, sizeof(b), NPF_WIRE_MAX_PAYLOAD, &h), -EBADMSG);
	npf_wire_hdr_encode(b, 10, 10); /* no row: unknown */
	assert_int_equal(npf_wire_hdr_decode(b, sizeof(b), NPF_WIRE_MAX_PAYLOAD, &h), -EBADMSG);
	/* wrong version wins over everything else and still reports the header */
	npf_wire_hdr_encode(b, 0xffff, UINT32_MAX);
	b[1] = NPF_WIRE_VERSION + 1;
	assert_int_equal(npf_wire_hdr_decode(b, sizeof(b), NPF_WIRE_MAX_PAYLOAD, &h),
			 -EPROTONOSUPPORT);
	assert_int_equal(h.version, NPF_WIRE_VERSION + 1);
	/* the previous version (a mixed cluster during a rolling upgrade) is another one */
	npf_wire_hdr_encode(b, NPF_MSG_HELLO, 10);
	b[1] = NPF_WIRE_VERSION - 1;
	assert_int_equal(npf_wire_hdr_decode(b, sizeof(b), NPF_WIRE_MAX_PAYLOAD, &h),
			 -EPROTONOSUPPORT);
	assert_int_equal(h.version, NPF_WIRE_VERSION - 1);
}

static void test_cursor(void **state)
{
	const uint8_t b[] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde };
	struct npf_cursor c;
	uint16_t v16;
	uint32_t v32;

	(void)state;
	npf_cursor_init(&c, b, sizeof(b));
	assert_int_equal(npf_cursor_get_u16(&c, &v16), 0);
	assert_int_equal(v16, 0x1234);
	assert_int_equal(npf_cursor_get_u32(&c, &v32), 0);
	assert_int_equal(v32, 0x56789abc);
	assert_int_equal(npf_cursor_left(&c), 1);
	assert_int_equal(npf_cursor_get_u16(&c, &v16), -EBADMSG);
	assert_int_equal(npf_cursor_get_u32(&c, &v32), -EBADMSG);
	assert_int_equal(npf_cursor_left(&c), 1);
	npf_cursor_init(&c, NULL, 100);
	assert_int_equal(npf_cursor_get_u16(&c, &v16), -EBADMSG);
}

static void test_strict_json(void **state)
{
	static const char *const bad[] = {
		"",
		"[1,2]",
		"\"str\"",
		"{\"a\":1} x",
		"{\"a\":1}{\"b\":2}",
		"{\"a\":1,\"a\":2}",
		"{\"a\":\"x\\u0000y\"}",
		"{\"a\":",
		"{'a':1}",
	};
	json_t *j = NULL;
	const uint8_t nul[] = { '{', '}', 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(npf_wire_parse_json((const uint8_t *)bad[i], strlen(bad[i]), &j),
				 -EBADMSG);
	assert_int_equal(npf_wire_parse_json(nul, sizeof(nul), &j), -EBADMSG);
	assert_int_equal(npf_wire_parse_json(NULL, 0, &j), -EBADMSG);
	assert_int_equal(npf_wire_parse_json((const uint8_t *)"{}", 2, &j), 0);
	json_decref(j);
}

static void test_hello(void **state)
{
	struct npf_msg_hello h = { .node = "node1", .instance = 0x0123456789abcdefull,
				   .want_candidates = true };
	struct npf_msg_hello out;
	json_t *j;

	(void)state;
	j = npf_wire_hello_to_json(&h);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "instance")), "0123456789abcdef");
	assert_int_equal(npf_wire_hello_from_json(j, &out), 0);
	assert_string_equal(out.node, "node1");
	assert_true(out.instance == h.instance);
	assert_true(out.want_candidates);
	/* No list sent: an older peer's HELLO, no reverse targets. */
	assert_null(json_object_get(j, "addrs"));
	assert_false(out.addrs_present);
	assert_int_equal(out.n_addrs, 0);
	json_decref(j);

	/* The announced addresses (issue 12) survive the round trip, in order. */
	h.addrs_present = true;
	assert_int_equal(npf_wire_addr_parse("198.18.0.1", &h.addrs[0]), 0);
	assert_int_equal(npf_wire_addr_parse("2001:db8::1", &h.addrs[1]), 0);
	h.n_addrs = 2;
	j = npf_wire_hello_to_json(&h);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "addrs")), 2);
	assert_int_equal(npf_wire_hello_from_json(j, &out), 0);
	assert_true(out.addrs_present);
	assert_int_equal(out.n_addrs, 2);
	assert_true(npf_addr_equal(&out.addrs[0], &h.addrs[0]));
	assert_true(npf_addr_equal(&out.addrs[1], &h.addrs[1]));
	json_decref(j);
	/* An empty list is present (and announces nothing). */
	h.n_addrs = 0;
	j = npf_wire_hello_to_json(&h);
	assert_int_equal(npf_wire_hello_from_json(j, &out), 0);
	assert_true(out.addrs_present);
	assert_int_equal(out.n_addrs, 0);
	json_decref(j);
	/* The bound: NPF_WIRE_MAX_CANDS distinct addresses parse, one more does not. */
	for (int extra = 0; extra < 2; extra++) {
		json_t *arr = json_array();
		char a[32];

		j = json_pack("{s:s, s:s, s:b, s:o}", "node", "n", "instance", "0123456789abcdef",
			      "candidates", 0, "addrs", arr);
		for (int i = 0; i < NPF_WIRE_MAX_CANDS + extra; i++) {
			snprintf(a, sizeof(a), "10.0.%d.%d", i / 250, 1 + i % 250);
			json_array_append_new(arr, json_string(a));
		}
		assert_int_equal(npf_wire_hello_from_json(j, &out), extra ? -EBADMSG : 0);
		if (!extra)
			assert_int_equal(out.n_addrs, NPF_WIRE_MAX_CANDS);
		json_decref(j);
	}

	static const char *const bad[] = {
		"{\"node\":\"n\",\"instance\":\"0123456789abcdef\",\"candidates\":true,"
		"\"addrs\":[\"10.0.0.1\",\"10.0.0.1\"]}",
		"{\"node\":\"n\",\"instance\":\"0123456789abcdef\",\"candidates\":true,"
		"\"addrs\":[\"10.0.0.1/24\"]}",
		"{\"node\":\"n\",\"instance\":\"0123456789abcdef\",\"candidates\":true,"
		"\"addrs\":[\"eth0\"]}",
		"{\"node\":\"n\",\"instance\":\"0123456789abcdef\",\"candidates\":true,"
		"\"addrs\":[1]}",
		"{\"node\":\"n\",\"instance\":\"0123456789abcdef\",\"candidates\":true,"
		"\"addrs\":\"10.0.0.1\"}",
		"{\"node\":\"n\",\"instance\":\"0123456789abcdef\",\"candidates\":true,"
		"\"addrs\":null}",
		"{\"node\":\"n\",\"instance\":\"0123456789abcdef\"}",
		"{\"node\":\"n\",\"instance\":\"0123456789abcdef\",\"candidates\":true,\"x\":1}",
		"{\"node\":\"n\",\"instance\":81985529216486895,\"candidates\":true}",
		"{\"node\":\"n\",\"instance\":\"0000000000000000\",\"candidates\":true}",
		"{\"node\":\"n\",\"instance\":\"0123456789ABCDEF\",\"candidates\":true}",
		"{\"node\":\"n\",\"instance\":\"0123456789abcde\",\"candidates\":true}",
		"{\"node\":\"n\",\"instance\":\"0123456789abcdeg\",\"candidates\":true}",
		"{\"node\":\"n\",\"instance\":\"0123456789abcdef\",\"candidates\":1}",
		"{\"node\":\"a b\",\"instance\":\"0123456789abcdef\",\"candidates\":true}",
		"{\"node\":\"\",\"instance\":\"0123456789abcdef\",\"candidates\":true}",
		"{\"node\":5,\"instance\":\"0123456789abcdef\",\"candidates\":true}",
		("{\"node\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\","
		 "\"instance\":\"0123456789abcdef\",\"candidates\":true}"),
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = parse(bad[i]);
		assert_non_null(j);
		assert_int_equal(npf_wire_hello_from_json(j, &out), -EBADMSG);
		json_decref(j);
	}
}

/* Bytes one frame of type t takes on the wire, with the authentication tag it carries
 * once a cluster key is in use (the handshake frames themselves carry none, but counting
 * it for every frame is the stricter bound). Takes j. */
static size_t wire_len(uint16_t t, json_t *j)
{
	uint8_t *f = NULL;
	size_t len = 0;

	assert_non_null(j);
	assert_int_equal(npf_wire_frame(t, j, &f, &len), 0);
	json_decref(j);
	free(f);
	return len + NPF_AUTH_TAG_LEN;
}

/* Issue 18: every frame of one path probe before its bulk phase fits in
 * NPF_WIRE_PATH_FRAME_MAX bytes of TCP payload, for a node with 64 addresses (the longest
 * IPv6 text), 256 interfaces and the longest names: a switch port with a smaller MTU than
 * the NICs' cannot eat a path's control exchange. The same node's discovery answer (the
 * per-peer facts) is far larger: it must never be what a path probe gets. */
static void test_path_frames_fit(void **state)
{
	struct npf_candidate *c = calloc(64, sizeof(*c));
	char(*names)[IFNAMSIZ] = calloc(NPF_WIRE_MAX_IFNAMES, IFNAMSIZ);
	char node[NPF_NAME_MAX], msg[128], a[64];
	struct npf_msg_hello h, disc;
	struct npf_msg_hello_reply rep;
	struct npf_msg_open_data od = { .id = UINT32_MAX, .bytes = NPF_WIRE_MAX_BULK };
	struct npf_msg_open_data_reply odr = { .id = UINT32_MAX, .port = 65535, .has_nonce = true };
	struct npf_msg_data_auth da;
	struct npf_msg_data_auth_reply dar = { .has_mac = true }; /* with a key: the larger */
	struct npf_msg_error e = { .code = NPF_WERR_UNSUPPORTED_VERSION };
	struct npf_auth_hello ah = { .n_ids = NPF_AUTH_MAX_KEYS };
	struct npf_auth_challenge ac;
	struct npf_auth_finish af;
	const uint64_t inst = 0xffffffffffffffffull;
	size_t worst = 0, n;

	(void)state;
	assert_non_null(c);
	assert_non_null(names);
	memset(node, 'n', sizeof(node) - 1);
	node[sizeof(node) - 1] = '\0';
	for (int i = 0; i < 64; i++) {
		snprintf(a, sizeof(a), "2001:db8:ffff:ffff:ffff:ffff:ffff:ff%02x", i);
		assert_int_equal(npf_wire_addr_parse(a, &c[i].addr), 0);
		c[i].addr.prefixlen = 128;
		snprintf(c[i].ifname, IFNAMSIZ, "ens1f0np%07d", i);
		c[i].kind = NPF_KIND_PHYSICAL;
		c[i].mtu = 9000;
		c[i].speed_mbps = 400000;
		snprintf(c[i].rdma_dev, sizeof(c[i].rdma_dev), "mlx5_%d", i);
		c[i].rdma_port = 1;
		c[i].rdma_ll = NPF_LL_ETHERNET;
		c[i].rdma_active = true;
	}
	for (size_t i = 0; i < NPF_WIRE_MAX_IFNAMES; i++)
		snprintf(names[i], IFNAMSIZ, "enp%012zu", i);
	memset(msg, 0x01, sizeof(msg) - 1); /* every byte escaped as \u0001 */
	msg[sizeof(msg) - 1] = '\0';
	snprintf(e.message, sizeof(e.message), "%s", msg);
	memset(&da, 0xff, sizeof(da));
	memset(odr.token, 0xff, sizeof(odr.token));
	memset(odr.nonce, 0xff, sizeof(odr.nonce));
	memset(dar.mac, 0xff, sizeof(dar.mac));
	snprintf(dar.node, sizeof(dar.node), "%s", node);
	dar.instance = inst;
	snprintf(ah.node, sizeof(ah.node), "%s", node);
	memset(&ac, 0xff, sizeof(ac));
	snprintf(ac.node, sizeof(ac.node), "%s", node);
	memset(&af, 0xff, sizeof(af));

	od.addr = c[63].addr; /* the longest address text */
	npf_wire_path_hello(node, inst, &h);
	npf_wire_hello_answer(&h, node, inst, c, 64, names, NPF_WIRE_MAX_IFNAMES, &rep);
	{
		const struct {
			uint16_t type;
			json_t *j;
		} f[] = {
			{ NPF_MSG_HELLO, npf_wire_hello_to_json(&h) },
			{ NPF_MSG_HELLO_REPLY, npf_wire_hello_reply_to_json(&rep) },
			{ NPF_MSG_OPEN_DATA, npf_wire_open_data_to_json(&od) },
			{ NPF_MSG_OPEN_DATA_REPLY, npf_wire_open_data_reply_to_json(&odr) },
			{ NPF_MSG_DATA_AUTH, npf_wire_data_auth_to_json(&da) },
			{ NPF_MSG_DATA_AUTH_REPLY, npf_wire_data_auth_reply_to_json(&dar) },
			{ NPF_MSG_ERROR, npf_wire_error_to_json(&e) },
			{ NPF_MSG_AUTH_HELLO, npf_auth_hello_to_json(&ah) },
			{ NPF_MSG_AUTH_CHALLENGE, npf_auth_challenge_to_json(&ac) },
			{ NPF_MSG_AUTH_FINISH, npf_auth_finish_to_json(&af) },
		};

		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			n = wire_len(f[i].type, f[i].j);
			worst = n > worst ? n : worst;
		}
	}
	print_message("largest pre-bulk path frame: %zu bytes (limit %u)\n", worst,
		      NPF_WIRE_PATH_FRAME_MAX);
	assert_true(worst <= NPF_WIRE_PATH_FRAME_MAX);

	/* The discovery HELLO and its answer carry the per-peer facts: several kB here,
	 * which is why a path never asks for them. */
	disc = h;
	disc.want_candidates = true;
	disc.addrs_present = true;
	for (int i = 0; i < 64; i++)
		disc.addrs[disc.n_addrs++] = c[i].addr;
	assert_true(wire_len(NPF_MSG_HELLO, npf_wire_hello_to_json(&disc)) >
		    NPF_WIRE_PATH_FRAME_MAX);
	npf_wire_hello_answer(&disc, node, inst, c, 64, names, NPF_WIRE_MAX_IFNAMES, &rep);
	assert_true(rep.lists && rep.n_cands == 64);
	assert_true(wire_len(NPF_MSG_HELLO_REPLY, npf_wire_hello_reply_to_json(&rep)) >
		    4 * NPF_WIRE_PATH_FRAME_MAX);
	free(names);
	free(c);
}

static void test_hello_reply(void **state)
{
	struct npf_candidate c[2] = { 0 };
	char names[3][IFNAMSIZ] = { "lo", "eth0", "docker0" };
	struct npf_msg_hello_reply m = { .node = "node2", .instance = 42, .proto = 1,
					 .cands = c, .n_cands = 2, .ifnames = names,
					 .n_ifnames = 3, .lists = true };
	struct npf_msg_hello_reply out;
	json_t *j, *cj;

	(void)state;
	strcpy(c[0].ifname, "eth0");
	npf_wire_addr_parse("198.18.1.2", &c[0].addr);
	c[0].addr.prefixlen = 24;
	c[0].kind = NPF_KIND_PHYSICAL;
	c[0].mtu = 9000;
	c[0].speed_mbps = 100000;
	strcpy(c[0].rdma_dev, "mlx5_0");
	c[0].rdma_port = 1;
	c[0].rdma_ll = NPF_LL_ETHERNET;
	c[0].rdma_active = true;
	strcpy(c[1].ifname, "docker0");
	npf_wire_addr_parse("2001:db8::1", &c[1].addr);
	c[1].addr.prefixlen = 64;
	c[1].kind = NPF_KIND_BRIDGE;
	c[1].roles = 1;
	c[1].speed_mbps = NPF_SPEED_UNKNOWN;

	j = npf_wire_hello_reply_to_json(&m);
	assert_non_null(j);
	assert_int_equal(npf_wire_hello_reply_from_json(j, &out), 0);
	assert_true(out.lists);
	assert_int_equal(out.n_cands, 2);
	assert_int_equal(out.n_ifnames, 3);
	assert_string_equal(out.ifnames[2], "docker0");
	assert_string_equal(out.cands[0].ifname, "eth0");
	assert_int_equal(out.cands[0].addr.prefixlen, 24);
	assert_int_equal(out.cands[0].mtu, 9000);
	assert_true(out.cands[0].speed_mbps == 100000);
	assert_string_equal(out.cands[0].rdma_dev, "mlx5_0");
	assert_int_equal(out.cands[0].rdma_ll, NPF_LL_ETHERNET);
	assert_true(out.cands[0].rdma_active);
	assert_int_equal(out.cands[1].addr.family, AF_INET6);
	assert_int_equal(out.cands[1].kind, NPF_KIND_BRIDGE);
	assert_true(out.cands[1].speed_mbps == NPF_SPEED_UNKNOWN);
	/* No gid_index unless asked for (m.gids): an older requester rejects the key. */
	assert_null(
	    json_object_get(json_array_get(json_object_get(j, "candidates"), 0), "gid_index"));
	assert_false(out.cands[0].has_gid);
	npf_wire_hello_reply_clear(&out);

	/* The RoCE GID index of a candidate's address (issue 10), when asked for. */
	{
		json_t *g, *gc;

		c[0].has_gid = true;
		c[0].gid_index = 3;
		m.gids = true;
		g = npf_wire_hello_reply_to_json(&m);
		assert_non_null(g);
		gc = json_array_get(json_object_get(g, "candidates"), 0);
		assert_int_equal(json_integer_value(json_object_get(gc, "gid_index")), 3);
		/* c[1] has none: the key is left out, not sent as a sentinel. */
		assert_null(json_object_get(json_array_get(json_object_get(g, "candidates"), 1),
					    "gid_index"));
		assert_int_equal(npf_wire_hello_reply_from_json(g, &out), 0);
		assert_true(out.gids);
		assert_true(out.cands[0].has_gid);
		assert_int_equal(out.cands[0].gid_index, 3);
		assert_false(out.cands[1].has_gid);
		npf_wire_hello_reply_clear(&out);
		json_object_set_new(gc, "gid_index", json_integer(65535));
		assert_int_equal(npf_wire_hello_reply_from_json(g, &out), 0);
		assert_int_equal(out.cands[0].gid_index, 65535);
		npf_wire_hello_reply_clear(&out);
		json_object_set_new(gc, "gid_index", json_integer(65536));
		assert_int_equal(npf_wire_hello_reply_from_json(g, &out), -EBADMSG);
		json_object_set_new(gc, "gid_index", json_integer(-1));
		assert_int_equal(npf_wire_hello_reply_from_json(g, &out), -EBADMSG);
		json_object_set_new(gc, "gid_index", json_string("3"));
		assert_int_equal(npf_wire_hello_reply_from_json(g, &out), -EBADMSG);
		json_object_set_new(gc, "gid_index", json_null());
		assert_int_equal(npf_wire_hello_reply_from_json(g, &out), -EBADMSG);
		json_decref(g);
		m.gids = false;
		c[0].has_gid = false;
	}

	/* Wrong prefix for the family, an unknown kind, candidates without ifnames. */
	cj = json_array_get(json_object_get(j, "candidates"), 0);
	json_object_set_new(cj, "prefixlen", json_integer(33));
	assert_int_equal(npf_wire_hello_reply_from_json(j, &out), -EBADMSG);
	assert_null(out.cands);
	json_object_set_new(cj, "prefixlen", json_integer(24));
	json_object_set_new(cj, "kind", json_string("warp-drive"));
	assert_int_equal(npf_wire_hello_reply_from_json(j, &out), -EBADMSG);
	json_object_set_new(cj, "kind", json_string("physical"));
	json_object_set_new(cj, "if", json_string("a/b"));
	assert_int_equal(npf_wire_hello_reply_from_json(j, &out), -EBADMSG);
	json_object_set_new(cj, "if", json_string("eth0"));
	json_object_set_new(cj, "mtu", json_integer(-1));
	assert_int_equal(npf_wire_hello_reply_from_json(j, &out), -EBADMSG);
	json_object_set_new(cj, "mtu", json_integer(1500));
	assert_int_equal(npf_wire_hello_reply_from_json(j, &out), 0);
	npf_wire_hello_reply_clear(&out);
	json_object_del(j, "ifnames");
	assert_int_equal(npf_wire_hello_reply_from_json(j, &out), -EBADMSG);
	json_decref(j);

	/* Without lists: an identity-only reply. */
	m.lists = false;
	j = npf_wire_hello_reply_to_json(&m);
	assert_null(json_object_get(j, "candidates"));
	assert_int_equal(npf_wire_hello_reply_from_json(j, &out), 0);
	assert_false(out.lists);
	assert_int_equal(out.n_cands, 0);
	json_decref(j);

	/* Too many candidates. */
	j = parse("{\"node\":\"n\",\"instance\":\"0000000000000001\",\"proto\":1,"
		  "\"candidates\":[],\"ifnames\":[]}");
	cj = json_object_get(j, "candidates");
	for (int i = 0; i <= NPF_WIRE_MAX_CANDS; i++)
		json_array_append_new(cj, json_object());
	assert_int_equal(npf_wire_hello_reply_from_json(j, &out), -EBADMSG);
	json_decref(j);
}

static void test_open_data(void **state)
{
	struct npf_msg_open_data od = { .id = 77, .bytes = 65536 }, odo;
	struct npf_msg_open_data_reply r = { .id = 77, .port = 40000 }, ro;
	struct npf_msg_data_auth a, ao;
	struct npf_msg_data_auth_reply ar = { .node = "n3", .instance = 7 }, aro;
	json_t *j;

	(void)state;
	for (int i = 0; i < NPF_WIRE_TOKEN_LEN; i++)
		r.token[i] = a.token[i] = (uint8_t)(i * 17);
	npf_wire_addr_parse("2001:db8::7", &od.addr);
	j = npf_wire_open_data_to_json(&od);
	assert_int_equal(npf_wire_open_data_from_json(j, &odo), 0);
	assert_int_equal(odo.bytes, 65536);
	assert_int_equal(odo.id, 77);
	assert_int_equal(odo.addr.family, AF_INET6);
	assert_memory_equal(odo.addr.addr, od.addr.addr, 16);
	/* Version 3: the path's address and the id are required, the address is an address. */
	json_object_set_new(j, "addr", json_string("node3"));
	assert_int_equal(npf_wire_open_data_from_json(j, &odo), -EBADMSG);
	json_object_del(j, "addr");
	assert_int_equal(npf_wire_open_data_from_json(j, &odo), -EBADMSG);
	json_object_set_new(j, "addr", json_string("198.18.1.3"));
	assert_int_equal(npf_wire_open_data_from_json(j, &odo), 0);
	json_object_set_new(j, "id", json_integer(-1));
	assert_int_equal(npf_wire_open_data_from_json(j, &odo), -EBADMSG);
	json_object_set_new(j, "id", json_integer(1));
	json_object_set_new(j, "bytes", json_integer((json_int_t)NPF_WIRE_MIN_BULK - 1));
	assert_int_equal(npf_wire_open_data_from_json(j, &odo), -EBADMSG);
	json_object_set_new(j, "bytes", json_integer((json_int_t)NPF_WIRE_MAX_BULK + 1));
	assert_int_equal(npf_wire_open_data_from_json(j, &odo), -EBADMSG);
	json_object_set_new(j, "bytes", json_real(70000.0));
	assert_int_equal(npf_wire_open_data_from_json(j, &odo), -EBADMSG);
	json_decref(j);

	j = npf_wire_open_data_reply_to_json(&r);
	assert_int_equal(npf_wire_open_data_reply_from_json(j, &ro), 0);
	assert_int_equal(ro.port, 40000);
	assert_int_equal(ro.id, 77);
	assert_memory_equal(ro.token, r.token, NPF_WIRE_TOKEN_LEN);
	/* Port 0: the peer declined this path's listener (version 3). */
	json_object_set_new(j, "port", json_integer(0));
	assert_int_equal(npf_wire_open_data_reply_from_json(j, &ro), 0);
	assert_int_equal(ro.port, 0);
	json_object_set_new(j, "port", json_integer(-1));
	assert_int_equal(npf_wire_open_data_reply_from_json(j, &ro), -EBADMSG);
	json_object_set_new(j, "port", json_integer(65536));
	assert_int_equal(npf_wire_open_data_reply_from_json(j, &ro), -EBADMSG);
	json_object_set_new(j, "port", json_integer(1));
	json_object_set_new(j, "token", json_string("00"));
	assert_int_equal(npf_wire_open_data_reply_from_json(j, &ro), -EBADMSG);
	json_decref(j);
	/* Without a key no nonce travels (an older peer's strict parser sees the same keys). */
	j = npf_wire_open_data_reply_to_json(&r);
	assert_null(json_object_get(j, "nonce"));
	assert_int_equal(npf_wire_open_data_reply_from_json(j, &ro), 0);
	assert_false(ro.has_nonce);
	json_decref(j);
	/* With one, the listener's nonce: exactly 16 bytes of lowercase hex. */
	r.has_nonce = true;
	for (int i = 0; i < NPF_WIRE_NONCE_LEN; i++)
		r.nonce[i] = (uint8_t)(0xf0 - i);
	j = npf_wire_open_data_reply_to_json(&r);
	assert_int_equal(npf_wire_open_data_reply_from_json(j, &ro), 0);
	assert_true(ro.has_nonce);
	assert_memory_equal(ro.nonce, r.nonce, NPF_WIRE_NONCE_LEN);
	json_object_set_new(j, "nonce", json_string("f0ef"));
	assert_int_equal(npf_wire_open_data_reply_from_json(j, &ro), -EBADMSG);
	json_object_set_new(j, "nonce", json_string("F0EFEEEDECEBEAE9E8E7E6E5E4E3E2E1"));
	assert_int_equal(npf_wire_open_data_reply_from_json(j, &ro), -EBADMSG);
	json_object_set_new(j, "nonce", json_integer(1));
	assert_int_equal(npf_wire_open_data_reply_from_json(j, &ro), -EBADMSG);
	json_decref(j);

	j = npf_wire_data_auth_to_json(&a);
	assert_int_equal(npf_wire_data_auth_from_json(j, &ao), 0);
	assert_memory_equal(ao.token, a.token, NPF_WIRE_TOKEN_LEN);
	json_object_set_new(j, "extra", json_true());
	assert_int_equal(npf_wire_data_auth_from_json(j, &ao), -EBADMSG);
	json_decref(j);

	j = npf_wire_data_auth_reply_to_json(&ar);
	assert_int_equal(npf_wire_data_auth_reply_from_json(j, &aro), 0);
	assert_string_equal(aro.node, "n3");
	assert_true(aro.instance == 7);
	assert_false(aro.has_mac);
	assert_null(json_object_get(j, "mac"));
	json_decref(j);
	/* The reply's MAC (authenticated sessions): 32 bytes, round trip, strict. */
	ar.has_mac = true;
	for (int i = 0; i < NPF_WIRE_MAC_LEN; i++)
		ar.mac[i] = (uint8_t)(i * 5 + 1);
	j = npf_wire_data_auth_reply_to_json(&ar);
	assert_int_equal(npf_wire_data_auth_reply_from_json(j, &aro), 0);
	assert_true(aro.has_mac);
	assert_memory_equal(aro.mac, ar.mac, NPF_WIRE_MAC_LEN);
	json_object_set_new(j, "mac", json_string("0102"));
	assert_int_equal(npf_wire_data_auth_reply_from_json(j, &aro), -EBADMSG);
	json_object_set_new(j, "mac", json_null());
	assert_int_equal(npf_wire_data_auth_reply_from_json(j, &aro), -EBADMSG);
	json_decref(j);
}

static void test_reverse(void **state)
{
	struct npf_msg_reverse_req *rq = calloc(1, sizeof(*rq)), *rqo = calloc(1, sizeof(*rqo));
	struct npf_msg_reverse_result *rr = calloc(1, sizeof(*rr)), *rro = calloc(1, sizeof(*rro));
	json_t *j, *t;

	(void)state;
	assert_non_null(rq);
	assert_non_null(rqo);
	assert_non_null(rr);
	assert_non_null(rro);
	rq->id = 9;
	rq->timeout_ms = 2500;
	rq->bytes = 1u << 20;
	npf_wire_addr_parse("198.18.1.1", &rq->targets[0].addr);
	npf_wire_addr_parse("2001:db8::7", &rq->targets[1].addr);
	rq->targets[0].port = 40001;
	rq->targets[1].port = 65535;
	rq->targets[1].has_nonce = true;
	memset(rq->targets[1].nonce, 0xab, NPF_WIRE_NONCE_LEN);
	rq->n_targets = 2;
	j = npf_wire_reverse_req_to_json(rq);
	assert_int_equal(npf_wire_reverse_req_from_json(j, rqo), 0);
	assert_int_equal(rqo->n_targets, 2);
	assert_int_equal(rqo->targets[1].addr.family, AF_INET6);
	assert_int_equal(rqo->targets[0].port, 40001);
	assert_false(rqo->targets[0].has_nonce);
	assert_true(rqo->targets[1].has_nonce);
	assert_memory_equal(rqo->targets[1].nonce, rq->targets[1].nonce, NPF_WIRE_NONCE_LEN);
	assert_int_equal(rqo->timeout_ms, 2500);

	t = json_object_get(j, "targets");
	/* Version 2's bare address strings are refused: a target names its listener. */
	json_array_append_new(t, json_string("198.18.1.9"));
	assert_int_equal(npf_wire_reverse_req_from_json(j, rqo), -EBADMSG);
	json_array_remove(t, 2);
	json_object_set_new(json_array_get(t, 0), "port", json_integer(0));
	assert_int_equal(npf_wire_reverse_req_from_json(j, rqo), -EBADMSG);
	json_object_set_new(json_array_get(t, 0), "port", json_integer(1));
	json_object_set_new(json_array_get(t, 0), "addr", json_string("not-an-address"));
	assert_int_equal(npf_wire_reverse_req_from_json(j, rqo), -EBADMSG);
	json_array_clear(t);
	assert_int_equal(npf_wire_reverse_req_from_json(j, rqo), -EBADMSG);
	for (int i = 0; i <= NPF_WIRE_MAX_TARGETS; i++) {
		char a[32];

		snprintf(a, sizeof(a), "198.18.0.%d", i + 1);
		json_array_append_new(t, json_pack("{s:s, s:i, s:s}", "addr", a, "port", 4000 + i,
						   "token", "00112233445566778899aabbccddeeff"));
	}
	assert_int_equal(npf_wire_reverse_req_from_json(j, rqo), -EBADMSG);
	json_array_remove(t, 0);
	assert_int_equal(npf_wire_reverse_req_from_json(j, rqo), 0);
	assert_int_equal(rqo->n_targets, NPF_WIRE_MAX_TARGETS);
	/* duplicates */
	json_object_set_new(json_array_get(t, 5), "addr", json_string("198.18.0.3"));
	assert_int_equal(npf_wire_reverse_req_from_json(j, rqo), -EBADMSG);
	json_object_set_new(json_array_get(t, 5), "addr", json_string("198.18.0.7"));
	json_object_set_new(j, "timeout_ms", json_integer(0));
	assert_int_equal(npf_wire_reverse_req_from_json(j, rqo), -EBADMSG);
	json_object_set_new(j, "timeout_ms", json_integer(NPF_WIRE_MAX_TIMEOUT_MS + 1));
	assert_int_equal(npf_wire_reverse_req_from_json(j, rqo), -EBADMSG);
	json_decref(j);

	rr->id = 9;
	rr->n_results = 2;
	rr->results[0].addr = rq->targets[0].addr;
	rr->results[0].outcome = NPF_OUT_OK;
	rr->results[0].rtt_us = 120;
	strcpy(rr->results[0].egress, "eth0");
	rr->results[1].addr = rq->targets[1].addr;
	rr->results[1].outcome = NPF_OUT_WRONG_PEER;
	strcpy(rr->results[1].detail, "answered by node3");
	j = npf_wire_reverse_result_to_json(rr);
	assert_int_equal(npf_wire_reverse_result_from_json(j, rro), 0);
	assert_int_equal(rro->n_results, 2);
	assert_int_equal(rro->results[0].rtt_us, 120);
	assert_string_equal(rro->results[0].egress, "eth0");
	assert_int_equal(rro->results[1].outcome, NPF_OUT_WRONG_PEER);
	assert_string_equal(rro->results[1].detail, "answered by node3");
	json_object_set_new(json_array_get(json_object_get(j, "results"), 1), "outcome",
			    json_string("fine"));
	assert_int_equal(npf_wire_reverse_result_from_json(j, rro), -EBADMSG);
	json_decref(j);

	/* Typed evidence travels as it was recorded; the requester judges it, never the text. */
	rr->results[1].outcome = NPF_OUT_BULK_STALL;
	strcpy(rr->results[1].detail, "whatever a human reads");
	rr->results[1].ev = (struct npf_evidence){.by_deadline = true,
						  .phase = NPF_PHASE_BULK,
						  .bulk = 72000,
						  .sent = 72000,
						  .echoed = 1448,
						  .phase_us = 900000,
						  .ctl_us = 4000,
						  .unacked = 7,
						  .retrans = 3};
	j = npf_wire_reverse_result_to_json(rr);
	assert_int_equal(npf_wire_reverse_result_from_json(j, rro), 0);
	assert_memory_equal(&rro->results[1].ev, &rr->results[1].ev, sizeof(rr->results[1].ev));
	assert_false(rro->results[0].ev.by_deadline);
	{
		json_t *ev = json_object_get(json_array_get(json_object_get(j, "results"), 1),
					     "evidence");

		/* More echoed or sent than the bulk, an unknown phase, a bulk over the cap. */
		json_object_set_new(ev, "echoed", json_integer(72001));
		assert_int_equal(npf_wire_reverse_result_from_json(j, rro), -EBADMSG);
		json_object_set_new(ev, "echoed", json_integer(0));
		json_object_set_new(ev, "sent", json_integer(72001));
		assert_int_equal(npf_wire_reverse_result_from_json(j, rro), -EBADMSG);
		json_object_set_new(ev, "sent", json_integer(0));
		json_object_set_new(ev, "phase", json_string("BULK"));
		assert_int_equal(npf_wire_reverse_result_from_json(j, rro), -EBADMSG);
		json_object_set_new(ev, "phase", json_string("bulk"));
		json_object_set_new(ev, "bulk", json_integer(NPF_WIRE_MAX_BULK + 1));
		assert_int_equal(npf_wire_reverse_result_from_json(j, rro), -EBADMSG);
		json_object_set_new(ev, "bulk", json_integer(72000));
		json_object_set_new(ev, "retrans", json_integer(-1));
		assert_int_equal(npf_wire_reverse_result_from_json(j, rro), -EBADMSG);
		json_object_set_new(ev, "retrans", json_integer(0));
		assert_int_equal(npf_wire_reverse_result_from_json(j, rro), 0);
		/* A result of the previous version (no evidence) is not this version's. */
		json_object_del(json_array_get(json_object_get(j, "results"), 1), "evidence");
		assert_int_equal(npf_wire_reverse_result_from_json(j, rro), -EBADMSG);
	}
	json_decref(j);
	free(rq);
	free(rqo);
	free(rr);
	free(rro);
}

static void test_error_and_frame(void **state)
{
	struct npf_msg_error e = { .code = NPF_WERR_UNSUPPORTED_VERSION, .message = "v2?" }, eo;
	struct npf_wire_hdr h;
	uint8_t *f = NULL;
	size_t len = 0;
	json_t *j, *big;
	char *s;

	(void)state;
	j = npf_wire_error_to_json(&e);
	assert_int_equal(npf_wire_error_from_json(j, &eo), 0);
	assert_int_equal(eo.code, NPF_WERR_UNSUPPORTED_VERSION);
	assert_string_equal(eo.message, "v2?");
	assert_int_equal(npf_wire_frame(NPF_MSG_ERROR, j, &f, &len), 0);
	assert_int_equal(npf_wire_hdr_decode(f, len, NPF_WIRE_MAX_PAYLOAD, &h), 0);
	assert_int_equal(h.type, NPF_MSG_ERROR);
	assert_int_equal(h.length + NPF_WIRE_HDR_LEN, len);
	free(f);
	json_object_set_new(j, "code", json_string("teapot"));
	assert_int_equal(npf_wire_error_from_json(j, &eo), -EBADMSG);
	json_decref(j);

	/* A payload over the maximum is refused at encode time. */
	s = malloc(NPF_WIRE_MAX_PAYLOAD + 1);
	assert_non_null(s);
	memset(s, 'x', NPF_WIRE_MAX_PAYLOAD);
	s[NPF_WIRE_MAX_PAYLOAD] = '\0';
	big = json_pack("{s:s}", "a", s);
	assert_int_equal(npf_wire_frame(NPF_MSG_ERROR, big, &f, &len), -EMSGSIZE);
	json_decref(big);
	free(s);
}

static void test_names(void **state)
{
	struct npf_addr a;

	(void)state;
	assert_true(npf_wire_name_valid("gpu-node017.cluster"));
	assert_false(npf_wire_name_valid(""));
	assert_false(npf_wire_name_valid("a\tb"));
	assert_false(npf_wire_name_valid(NULL));
	assert_string_equal(npf_wire_err_name(NPF_WERR_BUSY), "busy");
	assert_string_equal(npf_wire_err_name((enum npf_wire_err)99), "unknown");
	assert_string_equal(npf_wire_type_name(NPF_MSG_OPEN_DATA), "OPEN_DATA");
	assert_string_equal(npf_wire_type_name(77), "UNKNOWN");
	assert_int_equal(npf_wire_addr_parse("198.18.0.300", &a), -EINVAL);
	assert_int_equal(npf_wire_addr_parse("fe80::1%eth0", &a), -EINVAL);
	assert_int_equal(npf_wire_addr_parse(NULL, &a), -EINVAL);
}

/* The registry: every message has its row, and a sample of each row round-trips through
 * the row's own codec (decode, encode, the same object; decode of garbage refused). */
#define H32 "00112233445566778899aabbccddeeff"
#define INST "00000000000000aa"
static const struct {
	uint16_t type;
	const char *json;
} samples[] = {
    {NPF_MSG_HELLO, "{\"node\":\"n1\",\"instance\":\"" INST "\",\"candidates\":false,"
		    "\"addrs\":[\"198.18.1.2\"]}"},
    {NPF_MSG_HELLO_REPLY, "{\"node\":\"n2\",\"instance\":\"" INST "\",\"proto\":2,"
			  "\"candidates\":[],\"ifnames\":[\"eth1\"]}"},
    {NPF_MSG_OPEN_DATA, "{\"id\":1,\"bytes\":16384,\"addr\":\"198.18.1.2\"}"},
    {NPF_MSG_OPEN_DATA_REPLY, "{\"id\":1,\"port\":40000,\"token\":\"" H32 "\",\"nonce\":\"" H32 "\"}"},
    {NPF_MSG_DATA_AUTH, "{\"token\":\"" H32 "\"}"},
    {NPF_MSG_DATA_AUTH_REPLY, "{\"node\":\"n2\",\"instance\":\"" INST "\",\"mac\":\"" H32 H32
			      "\"}"},
    {NPF_MSG_REVERSE_REQ, "{\"id\":7,\"timeout_ms\":1000,\"bytes\":16384,"
			  "\"targets\":[{\"addr\":\"198.18.1.2\",\"port\":40000,\"token\":\"" H32 "\"},"
			  "{\"addr\":\"2001:db8::2\",\"port\":40001,\"token\":\"" H32 "\","
			  "\"nonce\":\"" H32 "\"}]}"},
    {NPF_MSG_REVERSE_RESULT, "{\"id\":7,\"results\":[{\"addr\":\"198.18.1.2\",\"outcome\":"
			     "\"bulk-stall\",\"rtt_us\":10,\"egress\":\"eth1\",\"detail\":\"\","
			     "\"evidence\":{\"deadline\":true,\"phase\":\"bulk\",\"connected\":false,"
			     "\"bulk\":16384,\"sent\":16384,\"echoed\":0,\"phase_us\":900000,"
			     "\"ctl_us\":400,\"unacked\":0,\"retrans\":0}}]}"},
    {NPF_MSG_ERROR, NULL}, /* carries our version: built below */
    {NPF_MSG_ROW, "{\"job\":\"" H32 "\",\"node\":\"n1\",\"instance\":\"" INST "\",\"index\":0,"
		  "\"n_nodes\":2,\"nets\":[{\"key\":\"198.18.1.0/24\",\"rank\":5,\"quality\":3,"
		  "\"states\":\".o\"}],\"wait_ms\":1000}"},
    {NPF_MSG_JOB_DECISION, "{\"job\":\"" H32 "\",\"n_nodes\":2,\"verdict\":0,\"net\":"
			   "\"198.18.1.0/24\",\"best\":\"198.18.1.0/24\",\"nodes\":\"..\","
			   "\"rows\":2,\"reason\":\"ok\"}"},
    {NPF_MSG_AUTH_HELLO, "{\"v\":1,\"node\":\"n1\",\"keys\":[\"0011223344556677\"],"
			 "\"nonce\":\"" H32 H32 "\"}"},
    {NPF_MSG_AUTH_CHALLENGE, "{\"node\":\"n2\",\"key\":\"0011223344556677\",\"nonce\":\"" H32 H32
			     "\",\"mac\":\"" H32 H32 "\"}"},
    {NPF_MSG_AUTH_FINISH, "{\"mac\":\"" H32 H32 "\"}"},
};

static void test_registry(void **state)
{
	size_t n, found;
	const struct npf_wire_msg *m = npf_wire_msgs(&n);
	char err[160];

	(void)state;
	snprintf(err, sizeof(err), "{\"code\":\"busy\",\"message\":\"x\",\"max_version\":%d}",
		 NPF_WIRE_VERSION);
	assert_int_equal(n, sizeof(samples) / sizeof(samples[0]));
	for (size_t i = 0; i < n; i++) {
		const char *txt = NULL;
		json_t *in, *out, *bad;
		void *msg;

		found = 0;
		for (size_t k = 0; k < n; k++)
			if (samples[k].type == m[i].type) {
				txt = samples[k].json ? samples[k].json : err;
				found++;
			}
		assert_int_equal(found, 1); /* a row without a sample fails here */
		assert_ptr_equal(npf_wire_msg_find(m[i].type), &m[i]);
		assert_string_equal(npf_wire_type_name(m[i].type), m[i].name);
		assert_true(m[i].states && m[i].from);
		in = parse(txt);
		assert_non_null(in);
		msg = calloc(1, m[i].size);
		assert_non_null(msg);
		if (m[i].from_json(in, msg) != 0)
			fail_msg("%s: its sample does not decode", m[i].name);
		out = m[i].to_json(msg);
		assert_non_null(out);
		if (!json_equal(in, out))
			fail_msg("%s: does not round-trip", m[i].name);
		if (m[i].clear)
			m[i].clear(msg);
		/* Strict: an unknown key is refused, and leaves nothing allocated. */
		bad = json_deep_copy(in);
		assert_int_equal(json_object_set_new(bad, "zz", json_true()), 0);
		assert_int_equal(m[i].from_json(bad, msg), -EBADMSG);
		free(msg);
		json_decref(bad);
		json_decref(out);
		json_decref(in);
	}
	assert_null(npf_wire_msg_find(0));
	assert_null(npf_wire_msg_find(10));
	assert_string_equal(npf_wire_type_name(10), "UNKNOWN");
}

/* Where each message may arrive: its states and its sender, refused elsewhere. */
static void test_registry_states(void **state)
{
	(void)state;
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_HELLO, NPF_WST_OPEN, NPF_WROLE_PROBER), 0);
	/* a second HELLO, a HELLO on a data port or in the key handshake */
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_HELLO, NPF_WST_SESSION, NPF_WROLE_PROBER),
			 -EPROTO);
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_HELLO, NPF_WST_DATA, NPF_WROLE_PROBER),
			 -EPROTO);
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_HELLO, NPF_WST_HANDSHAKE, NPF_WROLE_PROBER),
			 -EPROTO);
	/* session messages before HELLO */
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_OPEN_DATA, NPF_WST_OPEN, NPF_WROLE_PROBER),
			 -EPROTO);
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_REVERSE_REQ, NPF_WST_OPEN, NPF_WROLE_PROBER),
			 -EPROTO);
	assert_int_equal(
	    npf_wire_msg_allowed(NPF_MSG_REVERSE_REQ, NPF_WST_SESSION, NPF_WROLE_PROBER), 0);
	/* a daemon's answer sent by a prober, a prober's request by a daemon */
	assert_int_equal(
	    npf_wire_msg_allowed(NPF_MSG_REVERSE_RESULT, NPF_WST_SESSION, NPF_WROLE_PROBER),
	    -EPROTO);
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_OPEN_DATA, NPF_WST_SESSION, NPF_WROLE_DAEMON),
			 -EPROTO);
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_JOB_DECISION, NPF_WST_OPEN, NPF_WROLE_PROBER),
			 -EPROTO);
	/* the data port takes DATA_AUTH only; a ROW needs no HELLO */
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_DATA_AUTH, NPF_WST_DATA, NPF_WROLE_PROBER), 0);
	assert_int_equal(
	    npf_wire_msg_allowed(NPF_MSG_DATA_AUTH, NPF_WST_SESSION, NPF_WROLE_PROBER), -EPROTO);
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_ROW, NPF_WST_DATA, NPF_WROLE_PROBER), -EPROTO);
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_ROW, NPF_WST_OPEN, NPF_WROLE_PROBER), 0);
	assert_int_equal(
	    npf_wire_msg_allowed(NPF_MSG_AUTH_FINISH, NPF_WST_SESSION, NPF_WROLE_PROBER), -EPROTO);
	/* ERROR from either end, in any state; unknown types are no message at all */
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_ERROR, NPF_WST_DATA, NPF_WROLE_DAEMON), 0);
	assert_int_equal(npf_wire_msg_allowed(NPF_MSG_ERROR, NPF_WST_HANDSHAKE, NPF_WROLE_PROBER),
			 0);
	assert_int_equal(npf_wire_msg_allowed(10, NPF_WST_OPEN, NPF_WROLE_PROBER), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),     cmocka_unit_test(test_cursor),
		cmocka_unit_test(test_strict_json), cmocka_unit_test(test_hello),
		cmocka_unit_test(test_hello_reply), cmocka_unit_test(test_path_frames_fit),
		cmocka_unit_test(test_open_data),
		cmocka_unit_test(test_reverse),    cmocka_unit_test(test_error_and_frame),
		cmocka_unit_test(test_names),      cmocka_unit_test(test_registry),
		cmocka_unit_test(test_registry_states),
	};

	return npf_run_tests(tests, NULL, NULL);
}
