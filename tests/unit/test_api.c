// SPDX-License-Identifier: MIT
/* Unit tests of the local API codec, the check <-> JSON mapping with the decision's verdict,
 * the per-interface evidence, and the env request/reply (also against the SPANK plugin's
 * parser). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "api.h"
#include "recommend.h"
#include "verdict.h"

/* The SPANK plugin is a Slurm module, not a library: its pure request/reply part is
 * compiled in here to prove the daemon's env reply is what the plugin accepts. */
#include "../../slurm/envreply.c"

static int parse_str(const char *s, struct npf_api_request *req, struct npf_api_error *err)
{
	return npf_api_request_parse(s, strlen(s), req, err);
}

static void test_frame_len(void **state)
{
	const uint8_t zero[4] = { 0, 0, 0, 0 };
	const uint8_t ok[4] = { 0, 0, 0x01, 0x02 };
	const uint8_t max[4] = { 0, 1, 0, 0 };
	const uint8_t over[4] = { 0, 1, 0, 1 };
	const uint8_t huge[4] = { 0xff, 0xff, 0xff, 0xff };
	uint32_t len;

	(void)state;
	assert_int_equal(npf_api_frame_len(zero, NPF_API_MAX_REQUEST, &len), -EBADMSG);
	assert_int_equal(npf_api_frame_len(ok, NPF_API_MAX_REQUEST, &len), 0);
	assert_int_equal(len, 0x102);
	assert_int_equal(npf_api_frame_len(max, NPF_API_MAX_REQUEST, &len), 0);
	assert_int_equal(len, 65536);
	assert_int_equal(npf_api_frame_len(over, NPF_API_MAX_REQUEST, &len), -EMSGSIZE);
	assert_int_equal(npf_api_frame_len(huge, NPF_API_MAX_REPLY, &len), -EMSGSIZE);
}

static void test_frame_encode_roundtrip(void **state)
{
	struct npf_api_request req = { 0 }, back;
	struct npf_api_error err;
	char (*peers)[NPF_NAME_MAX] = calloc(2, NPF_NAME_MAX);
	char *buf;
	size_t len;
	uint32_t plen;
	json_t *j;

	(void)state;
	assert_non_null(peers);
	strcpy(peers[0], "node2");
	strcpy(peers[1], "node3");
	req.type = NPF_API_REQ_CHECK;
	req.peers = peers;
	req.n_peers = 2;
	req.timeout_ms = 2500;
	strcpy(req.job, "4242.0");
	req.settle = true;
	j = npf_api_request_to_json(&req);
	assert_non_null(j);
	assert_int_equal(npf_api_frame_encode(j, NPF_API_MAX_REQUEST, &buf, &len), 0);
	assert_int_equal(npf_api_frame_len((const uint8_t *)buf, NPF_API_MAX_REQUEST, &plen), 0);
	assert_int_equal(plen + NPF_API_HDR_LEN, len);
	assert_int_equal(npf_api_request_parse(buf + 4, plen, &back, &err), 0);
	assert_int_equal(back.type, NPF_API_REQ_CHECK);
	assert_int_equal(back.n_peers, 2);
	assert_string_equal(back.peers[1], "node3");
	assert_int_equal(back.timeout_ms, 2500);
	assert_int_equal(back.max_age_ms, 0);
	assert_string_equal(back.job, "4242.0"); /* the job tag travels (docs/decision.md §10) */
	assert_true(back.settle);		  /* and the Prolog's last try (issue 18) */
	npf_api_request_clear(&back);
	free(buf);
	json_decref(j);
	npf_api_request_clear(&req);
}

static void test_frame_encode_oversized(void **state)
{
	json_t *j = json_object();
	char *big = malloc(NPF_API_MAX_REQUEST + 1), *buf = NULL;
	size_t len = 0;

	(void)state;
	assert_non_null(big);
	memset(big, 'a', NPF_API_MAX_REQUEST);
	big[NPF_API_MAX_REQUEST] = '\0';
	json_object_set_new(j, "x", json_string(big));
	assert_int_equal(npf_api_frame_encode(j, NPF_API_MAX_REQUEST, &buf, &len), -EMSGSIZE);
	assert_null(buf);
	/* The reply cap is larger: the same message fits there. */
	assert_int_equal(npf_api_frame_encode(j, NPF_API_MAX_REPLY, &buf, &len), 0);
	free(buf);
	free(big);
	json_decref(j);
}

/* The growing buffer crosses several reallocations; the cap is exact. */
static void test_json_text(void **state)
{
	json_t *j = json_array();
	char *text = NULL, *ref;
	size_t len = 0, n;

	(void)state;
	for (int i = 0; i < 3000; i++)
		json_array_append_new(j, json_pack("{s:i, s:s}", "i", i, "s", "caf\u00e9 \"x\""));
	ref = json_dumps(j, JSON_COMPACT);
	assert_non_null(ref);
	n = strlen(ref);
	assert_true(n > 3 * 4096);
	assert_int_equal(npf_api_json_text(j, n, &text, &len), 0);
	assert_int_equal(len, n);
	assert_string_equal(text, ref);
	free(text);
	text = (char *)1;
	assert_int_equal(npf_api_json_text(j, n - 1, &text, &len), -EMSGSIZE);
	assert_null(text);
	assert_int_equal(len, 0);
	free(ref);
	json_decref(j);
}

/* The reply made around the cached text is the reply the JSON path makes. */
static void test_check_reply_frame(void **state)
{
	json_t *check = json_pack("{s:s, s:[{s:s, s:b}], s:{s:s}}", "self", "node1", "paths",
				  "to", "n\u00f6de2", "ok", 1, "verdict", "verdict", "ok");
	json_t *reply = npf_api_reply_new();
	char *text, *a, *b;
	size_t tlen, alen, blen;

	(void)state;
	assert_non_null(check);
	assert_int_equal(npf_api_json_text(check, NPF_API_MAX_REPLY, &text, &tlen), 0);
	assert_int_equal(json_object_set(reply, "check", check), 0);
	assert_int_equal(json_object_set_new(reply, "cached", json_true()), 0);
	assert_int_equal(json_object_set_new(reply, "age_ms", json_integer(123456789012)), 0);
	assert_int_equal(npf_api_frame_encode(reply, NPF_API_MAX_REPLY, &a, &alen), 0);
	assert_int_equal(npf_api_check_reply_frame(text, tlen, true, 123456789012u,
						   NPF_API_MAX_REPLY, &b, &blen), 0);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(b);
	assert_int_equal(npf_api_check_reply_frame(text, tlen, false, 0, NPF_API_MAX_REPLY, &b,
						   &blen), 0);
	assert_non_null(strstr(b + NPF_API_HDR_LEN, ",\"cached\":false,\"age_ms\":0}"));
	free(b);
	/* The cap covers the whole payload, not only the check. */
	assert_int_equal(npf_api_check_reply_frame(text, tlen, true, 1, (uint32_t)alen - 4, &b,
						   &blen), 0);
	free(b);
	assert_int_equal(npf_api_check_reply_frame(text, tlen, true, 1, (uint32_t)tlen + 10, &b,
						   &blen), -EMSGSIZE);
	assert_null(b);
	assert_int_equal(npf_api_check_reply_frame(text, 0, true, 1, NPF_API_MAX_REPLY, &b,
						   &blen), -EINVAL);
	free(a);
	free(text);
	json_decref(reply);
	json_decref(check);
}

static void test_request_valid(void **state)
{
	struct npf_api_request req;
	struct npf_api_error err;

	(void)state;
	assert_int_equal(parse_str("{\"version\":1,\"request\":\"status\"}", &req, &err), 0);
	assert_int_equal(req.type, NPF_API_REQ_STATUS);
	npf_api_request_clear(&req);
	assert_int_equal(parse_str("{\"request\":\"inventory\",\"version\":1}", &req, &err), 0);
	assert_int_equal(req.type, NPF_API_REQ_INVENTORY);
	npf_api_request_clear(&req);
	assert_int_equal(parse_str("{\"version\":1,\"request\":\"check\",\"peers\":[\"n1\",\"n2\","
				   "\"n1\",\"gpu-001.ib\"],\"timeout_ms\":3000,\"max_age_ms\":0}",
				   &req, &err),
			 0);
	assert_int_equal(req.type, NPF_API_REQ_CHECK);
	assert_int_equal(req.n_peers, 3); /* duplicate dropped, order kept */
	assert_string_equal(req.peers[0], "n1");
	assert_string_equal(req.peers[1], "n2");
	assert_string_equal(req.peers[2], "gpu-001.ib");
	assert_int_equal(req.timeout_ms, 3000);
	npf_api_request_clear(&req);
	assert_int_equal(parse_str("{\"version\":1,\"request\":\"verdict\",\"peers\":[\"a\"]}",
				   &req, &err),
			 0);
	assert_int_equal(req.type, NPF_API_REQ_VERDICT);
	assert_int_equal(req.n_peers, 1);
	npf_api_request_clear(&req);
}

struct bad_case {
	const char *json;
	int ret;
	enum npf_api_errcode code;
};

static void test_request_malformed(void **state)
{
	static const struct bad_case cases[] = {
		{ "", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "[1,2]", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "\"status\"", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"status\"} {}", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"status\"}x", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"version\":1,\"request\":\"status\"}", -EBADMSG,
		  NPF_API_E_BAD_REQUEST },
		{ "{\"request\":\"status\"}", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":\"1\",\"request\":\"status\"}", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1.0,\"request\":\"status\"}", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1}", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":7}", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"reboot\"}", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"status\",\"peers\":[\"a\"]}", -EBADMSG,
		  NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\"}", -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[]}", -EBADMSG,
		  NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":\"n[1-3]\"}", -EBADMSG,
		  NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[1]}", -EBADMSG,
		  NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"-rf\"]}", -EBADMSG,
		  NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a b\"]}", -EBADMSG,
		  NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\\u0000b\"]}", -EBADMSG,
		  NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"\"]}", -EBADMSG,
		  NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"timeout_ms\":99}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"timeout_ms\":300001}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"timeout_ms\":\"3s\"}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"max_age_ms\":-1}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"verdict\",\"peers\":[\"a\"],\"timeout_ms\":1000}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		/* Job tags: 1..64 characters of [A-Za-z0-9._-], check and env only. */
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"job\":\"\"}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"job\":\"a b\"}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"job\":42}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"job\":"
		  "\"12345678901234567890123456789012345678901234567890123456789012345\"}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"verdict\",\"peers\":[\"a\"],\"job\":\"1\"}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		/* settle: a check's, a boolean, and only with a job. */
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"settle\":true}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"job\":\"1\","
		  "\"settle\":1}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":1,\"request\":\"env\",\"peers\":[\"a\"],\"job\":\"1\","
		  "\"settle\":true}",
		  -EBADMSG, NPF_API_E_BAD_REQUEST },
		{ "{\"version\":2,\"request\":\"status\"}", -EPROTONOSUPPORT,
		  NPF_API_E_UNSUPPORTED_VERSION },
		{ "{\"version\":0,\"request\":\"frobnicate\",\"new\":true}", -EPROTONOSUPPORT,
		  NPF_API_E_UNSUPPORTED_VERSION },
		{ "{\"version\":-1}", -EPROTONOSUPPORT, NPF_API_E_UNSUPPORTED_VERSION },
	};
	struct npf_api_request req;
	struct npf_api_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&err, 0, sizeof(err));
		int r = parse_str(cases[i].json, &req, &err);

		if (r != cases[i].ret || err.code != cases[i].code)
			fail_msg("case %zu '%s': got %d/%s", i, cases[i].json, r,
				 npf_api_errcode_name(err.code));
		assert_true(err.message[0] != '\0');
		assert_null(req.peers);
		assert_int_equal(req.n_peers, 0);
	}
}

static void test_request_long_name_and_many_peers(void **state)
{
	char name[NPF_NAME_MAX + 1];
	struct npf_api_request req;
	struct npf_api_error err;
	json_t *j, *arr;
	char *s;

	(void)state;
	memset(name, 'a', sizeof(name));
	name[NPF_NAME_MAX - 1] = '\0'; /* 63 chars: fits */
	j = json_pack("{s:i, s:s, s:[s]}", "version", 1, "request", "verdict", "peers", name);
	s = json_dumps(j, 0);
	assert_int_equal(parse_str(s, &req, &err), 0);
	npf_api_request_clear(&req);
	free(s);
	json_decref(j);
	name[NPF_NAME_MAX - 1] = 'a'; /* 64 chars: too long */
	name[NPF_NAME_MAX] = '\0';
	j = json_pack("{s:i, s:s, s:[s]}", "version", 1, "request", "verdict", "peers", name);
	s = json_dumps(j, 0);
	assert_int_equal(parse_str(s, &req, &err), -EBADMSG);
	free(s);
	json_decref(j);

	arr = json_array();
	for (unsigned i = 0; i <= NPF_API_MAX_PEERS; i++) {
		char n[16];

		snprintf(n, sizeof(n), "n%u", i);
		json_array_append_new(arr, json_string(n));
	}
	j = json_pack("{s:i, s:s, s:o}", "version", 1, "request", "check", "peers", arr);
	s = json_dumps(j, JSON_COMPACT);
	assert_int_equal(parse_str(s, &req, &err), -EBADMSG);
	assert_non_null(strstr(err.message, "too many peers"));
	free(s);
	json_decref(j);
}

static void test_reply_status(void **state)
{
	struct npf_api_error err;
	json_t *ok = npf_api_reply_new(), *e, *bad;

	(void)state;
	assert_int_equal(npf_api_reply_status(ok, &err), 0);
	e = npf_api_reply_error(NPF_API_E_FORBIDDEN, "uid %d may not start probes", 1000);
	assert_non_null(e);
	assert_int_equal(npf_api_reply_status(e, &err), -EREMOTEIO);
	assert_int_equal(err.code, NPF_API_E_FORBIDDEN);
	assert_string_equal(err.message, "uid 1000 may not start probes");
	assert_string_equal(json_string_value(json_object_get(json_object_get(e, "error"), "code")),
			    "forbidden");
	json_decref(e);
	/* Split UTF-8 in a message must not lose the reply. */
	e = npf_api_reply_error(NPF_API_E_BAD_REQUEST, "bad \"%.1s\"", "\xc3\xa9");
	assert_non_null(e);
	json_decref(e);
	bad = json_pack("{s:i, s:b}", "version", 2, "ok", 1);
	assert_int_equal(npf_api_reply_status(bad, &err), -EPROTO);
	assert_int_equal(err.code, NPF_API_E_UNSUPPORTED_VERSION);
	json_decref(bad);
	bad = json_pack("{s:i}", "version", 1);
	assert_int_equal(npf_api_reply_status(bad, &err), -EPROTO);
	json_decref(bad);
	bad = json_pack("[]");
	assert_int_equal(npf_api_reply_status(bad, &err), -EPROTO);
	json_decref(bad);
	json_decref(ok);
	for (int c = 0; c < NPF_API_E__COUNT; c++)
		assert_int_equal(npf_api_errcode_parse(npf_api_errcode_name((enum npf_api_errcode)c)),
				 c);
	assert_int_equal(npf_api_errcode_parse("nope"), -EINVAL);
}

static void set_addr(struct npf_addr *a, const char *ip, int prefix)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, ip, a->addr) == 1)
		a->family = AF_INET;
	else {
		assert_int_equal(inet_pton(AF_INET6, ip, a->addr), 1);
		a->family = AF_INET6;
	}
	a->prefixlen = (uint8_t)prefix;
}

static void add_link(struct npf_check *c, const char *ifname, int peer, enum npf_outcome fwd,
		     enum npf_outcome rev)
{
	struct npf_link *l = &c->links[c->n_links++];

	snprintf(l->ifname, sizeof(l->ifname), "%s", ifname);
	l->peer = peer;
	l->fwd = fwd;
	l->rev = rev;
	l->fwd_rtt_us = fwd == NPF_OUT_OK ? 210 : 0;
	l->rev_rtt_us = rev == NPF_OUT_OK ? 330 : 0;
	snprintf(l->fwd_detail, sizeof(l->fwd_detail), "%s", npf_outcome_name(fwd));
}

/* A 3-node check from node1: fab0 ok everywhere, docker0 wrong-peer, part0
 * ok to node2 and timing out to node3. */
static void make_check(struct npf_check *c, size_t cap_links)
{
	static const char *const names[] = { "node1", "node2", "node3" };

	memset(c, 0, sizeof(*c));
	c->started_unix_ms = 1700000000123ull;
	c->duration_ms = 812;
	c->timeout_ms = 3000;
	c->nodes = calloc(3, sizeof(*c->nodes));
	c->n_nodes = 3;
	for (int i = 0; i < 3; i++) {
		struct npf_node *n = &c->nodes[i];

		snprintf(n->name, sizeof(n->name), "%s", names[i]);
		n->instance = 0xfedcba9876543210ull + (uint64_t)i;
		n->available = true;
		n->probed = i > 0;
		n->cands = calloc(2, sizeof(*n->cands));
		n->n_cands = 2;
		snprintf(n->cands[0].ifname, IFNAMSIZ, "fab0");
		set_addr(&n->cands[0].addr, i == 0 ? "198.18.1.1" : i == 1 ? "198.18.1.2" :
							     "198.18.1.3", 24);
		n->cands[0].kind = NPF_KIND_VETH;
		n->cands[0].mtu = 1500;
		n->cands[0].speed_mbps = NPF_SPEED_UNKNOWN;
		snprintf(n->cands[1].ifname, IFNAMSIZ, "docker0");
		set_addr(&n->cands[1].addr, "172.17.0.1", 16);
		n->cands[1].kind = NPF_KIND_BRIDGE;
		n->cands[1].roles = NPF_ROLE_CONTAINER_BRIDGE;
		n->cands[1].mtu = 1500;
		n->cands[1].speed_mbps = 10000;
		snprintf(n->cands[1].rdma_dev, NPF_NAME_MAX, "mlx5_%d", i);
		n->cands[1].rdma_port = 1;
		n->cands[1].rdma_ll = NPF_LL_ETHERNET;
		n->cands[1].rdma_active = true;
		/* Node 1 announced its GID index, node 0 did not (null in the JSON). */
		n->cands[1].has_gid = i == 1;
		n->cands[1].gid_index = i == 1 ? 3 : 0;
		n->ifnames = calloc(3, sizeof(*n->ifnames));
		n->n_ifnames = 3;
		strcpy(n->ifnames[0], "lo");
		strcpy(n->ifnames[1], "fab0");
		strcpy(n->ifnames[2], "docker0");
	}
	c->paths = calloc(2, sizeof(*c->paths));
	c->n_paths = 2;
	c->paths[0].peer = 1;
	c->paths[0].dir = NPF_DIR_FORWARD;
	strcpy(c->paths[0].local_if, "fab0");
	strcpy(c->paths[0].peer_if, "fab0");
	set_addr(&c->paths[0].peer_addr, "198.18.1.2", 24);
	c->paths[0].outcome = NPF_OUT_OK;
	c->paths[0].rtt_us = 123;
	c->paths[1].peer = 2;
	c->paths[1].dir = NPF_DIR_REVERSE;
	strcpy(c->paths[1].local_if, "docker0");
	set_addr(&c->paths[1].local_addr, "2001:db8::1", 64);
	c->paths[1].outcome = NPF_OUT_WRONG_PEER;
	strcpy(c->paths[1].detail, "answered by node3");
	c->links = calloc(cap_links, sizeof(*c->links));
	add_link(c, "fab0", 1, NPF_OUT_OK, NPF_OUT_OK);
	add_link(c, "fab0", 2, NPF_OUT_OK, NPF_OUT_OK);
	add_link(c, "docker0", 1, NPF_OUT_WRONG_PEER, NPF_OUT_WRONG_PEER);
	add_link(c, "docker0", 2, NPF_OUT_WRONG_PEER, NPF_OUT_WRONG_PEER);
	add_link(c, "part0", 1, NPF_OUT_OK, NPF_OUT_OK);
	add_link(c, "part0", 2, NPF_OUT_TIMEOUT, NPF_OUT_UNREACHABLE);
	set_addr(&c->links[0].peer_addr, "198.18.1.2", 24);
	strcpy(c->links[0].peer_if, "fab0");
}

static void inv_add(struct npf_inventory *inv, const char *name, enum npf_kind kind,
		    uint32_t roles, const char *ip, int prefix)
{
	struct npf_iface *ifc = &inv->ifaces[inv->n_ifaces++];
	struct npf_addr a;

	memset(ifc, 0, sizeof(*ifc));
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	ifc->ifindex = (int)inv->n_ifaces;
	ifc->flags = IFF_UP | IFF_RUNNING | (kind == NPF_KIND_LOOPBACK ? IFF_LOOPBACK : 0);
	ifc->kind = kind;
	ifc->roles = roles;
	ifc->mtu = 1500;
	ifc->speed_mbps = NPF_SPEED_UNKNOWN;
	set_addr(&a, ip, prefix);
	assert_int_equal(npf_iface_add_addr(ifc, &a), 0);
}

/* node1 as make_check() has it: lo, fab0 198.18.1.1/24, docker0 172.17.0.1/16. */
static void make_inventory(struct npf_inventory *inv)
{
	memset(inv, 0, sizeof(*inv));
	inv->ifaces = calloc(3, sizeof(*inv->ifaces));
	assert_non_null(inv->ifaces);
	inv_add(inv, "lo", NPF_KIND_LOOPBACK, 0, "127.0.0.1", 8);
	inv_add(inv, "fab0", NPF_KIND_VETH, 0, "198.18.1.1", 24);
	inv_add(inv, "docker0", NPF_KIND_BRIDGE, NPF_ROLE_CONTAINER_BRIDGE, "172.17.0.1", 16);
}

static void assert_addr_equal(const struct npf_addr *a, const struct npf_addr *b)
{
	assert_int_equal(a->family, b->family);
	assert_int_equal(a->prefixlen, b->prefixlen);
	assert_memory_equal(a->addr, b->addr, 16);
}

static void test_check_roundtrip(void **state)
{
	struct npf_check c, back = { 0 };
	struct npf_inventory inv;
	struct npf_recommendation rec = { 0 };
	json_t *j, *re, *plain;
	char *s;

	(void)state;
	make_check(&c, 8);
	make_inventory(&inv);
	/* Where node2's name resolved (the management network); unknown for the others. */
	set_addr(&c.nodes[1].name_addr, "10.9.0.2", 32);
	assert_int_equal(npf_recommend(&inv, &c, NULL, &rec), 0);
	assert_int_equal(rec.verdict, NPF_VERDICT_OK);
	j = npf_check_to_json(&c, &rec);
	assert_non_null(j);
	/* Without a decision there is neither a verdict nor a recommendation. */
	plain = npf_check_to_json(&c, NULL);
	assert_non_null(plain);
	assert_null(json_object_get(plain, "verdict"));
	assert_null(json_object_get(plain, "recommendation"));
	json_decref(plain);
	s = json_dumps(j, JSON_COMPACT);
	assert_non_null(s);
	re = json_loads(s, JSON_REJECT_DUPLICATES, NULL);
	assert_non_null(re);
	assert_int_equal(npf_check_from_json(re, &back), 0);

	assert_int_equal(back.started_unix_ms, c.started_unix_ms);
	assert_int_equal(back.duration_ms, c.duration_ms);
	assert_int_equal(back.timeout_ms, c.timeout_ms);
	assert_int_equal(back.n_nodes, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(back.nodes[i].name, c.nodes[i].name);
		assert_true(back.nodes[i].instance == c.nodes[i].instance);
		assert_int_equal(back.nodes[i].probed, c.nodes[i].probed);
		assert_addr_equal(&back.nodes[i].name_addr, &c.nodes[i].name_addr);
		assert_int_equal(back.nodes[i].n_cands, 2);
		assert_int_equal(back.nodes[i].n_ifnames, 3);
		assert_string_equal(back.nodes[i].ifnames[2], "docker0");
		for (size_t k = 0; k < 2; k++) {
			const struct npf_candidate *a = &c.nodes[i].cands[k];
			const struct npf_candidate *b = &back.nodes[i].cands[k];

			assert_string_equal(a->ifname, b->ifname);
			assert_addr_equal(&a->addr, &b->addr);
			assert_int_equal(a->kind, b->kind);
			assert_int_equal(a->roles, b->roles);
			assert_int_equal(a->mtu, b->mtu);
			assert_int_equal(a->speed_mbps, b->speed_mbps);
			assert_string_equal(a->rdma_dev, b->rdma_dev);
			assert_int_equal(a->rdma_port, b->rdma_port);
			assert_int_equal(a->rdma_ll, b->rdma_ll);
			assert_int_equal(a->rdma_active, b->rdma_active);
			assert_int_equal(a->has_gid, b->has_gid);
			assert_int_equal(a->gid_index, b->gid_index);
		}
	}
	assert_int_equal(back.n_paths, 2);
	assert_int_equal(back.paths[1].peer, 2);
	assert_int_equal(back.paths[1].dir, NPF_DIR_REVERSE);
	assert_int_equal(back.paths[1].outcome, NPF_OUT_WRONG_PEER);
	assert_string_equal(back.paths[1].detail, "answered by node3");
	assert_addr_equal(&back.paths[1].local_addr, &c.paths[1].local_addr);
	assert_int_equal(back.paths[0].peer_addr.family, AF_INET);
	assert_int_equal(back.paths[1].peer_addr.family, 0);
	assert_int_equal(back.n_links, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(back.links[i].ifname, c.links[i].ifname);
		assert_int_equal(back.links[i].peer, c.links[i].peer);
		assert_int_equal(back.links[i].fwd, c.links[i].fwd);
		assert_int_equal(back.links[i].rev, c.links[i].rev);
		assert_int_equal(back.links[i].fwd_rtt_us, c.links[i].fwd_rtt_us);
		assert_int_equal(back.links[i].rev_rtt_us, c.links[i].rev_rtt_us);
		assert_string_equal(back.links[i].fwd_detail, c.links[i].fwd_detail);
	}
	assert_addr_equal(&back.links[0].peer_addr, &c.links[0].peer_addr);

	/* The embedded verdict is the decision's; it is what the CLI prints and what the
	 * Prolog queries with jq, together with the per-interface evidence. */
	json_t *v = json_object_get(j, "verdict");
	json_t *ifs = json_object_get(v, "interfaces");

	assert_string_equal(json_string_value(json_object_get(v, "verdict")), "ok");
	assert_string_equal(json_string_value(json_object_get(v, "summary")), rec.summary);
	assert_int_equal(json_integer_value(json_object_get(v, "peers")), 2);
	assert_int_equal(json_array_size(ifs), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(ifs, 1), "ifname")),
			    "docker0");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_array_get(ifs, 1), "failure"), "outcome")),
			    "wrong-peer");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(j, "recommendation"), "choice"),
				    "ifname")),
			    "fab0");
	assert_string_equal(json_string_value(json_object_get(j, "self")), "node1");
	free(s);
	json_decref(re);
	json_decref(j);
	npf_recommendation_clear(&rec);
	npf_inventory_clear(&inv);
	npf_check_clear(&back);
	npf_check_clear(&c);
}

static void test_check_from_json_malformed(void **state)
{
	static const char *const edits[][2] = {
		{ "\"peer\":\"node2\"", "\"peer\":\"node9\"" },  /* unknown peer */
		{ "\"peer\":\"node3\"", "\"peer\":\"node1\"" },  /* self as peer */
		{ "\"fwd\":\"ok\"", "\"fwd\":\"fine\"" },        /* unknown outcome */
		{ "\"ifname\":\"fab0\"", "\"ifname\":\"abcdefghijklmnopq\"" }, /* > IFNAMSIZ */
		{ "\"address\":\"198.18.1.1/24\"", "\"address\":\"198.18.1.1/33\"" },
		{ "\"address\":\"198.18.1.1/24\"", "\"address\":\"198.18.1/24\"" },
		{ "\"instance\":\"fedcba9876543210\"", "\"instance\":\"-1\"" },
		{ "\"rtt_us\":123", "\"rtt_us\":-5" },
		{ "\"rtt_us\":123", "\"rtt_us\":4294967296" },
		{ "\"direction\":\"forward\"", "\"direction\":\"sideways\"" },
		{ "\"name\":\"node2\"", "\"name\":\"node1\"" },  /* duplicate node */
		{ "\"sparse\":false", "\"sparse\":0" },
		{ "\"probed\":true", "\"probed\":\"yes\"" },
		{ "\"speed_mbps\":null", "\"speed_mbps\":-1" },
	};
	struct npf_check c;
	json_t *j;
	char *s;

	(void)state;
	make_check(&c, 8);
	j = npf_check_to_json(&c, NULL);
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		char *at = strstr(s, edits[i][0]), *mod;
		struct npf_check back = { 0 };
		size_t a = strlen(edits[i][0]), b = strlen(edits[i][1]);

		if (!at)
			fail_msg("edit %zu: '%s' not in output", i, edits[i][0]);
		mod = malloc(strlen(s) + b + 1);
		memcpy(mod, s, (size_t)(at - s));
		strcpy(mod + (at - s), edits[i][1]);
		strcat(mod, at + a);
		j = json_loads(mod, 0, NULL);
		assert_non_null(j);
		if (npf_check_from_json(j, &back) != -EBADMSG)
			fail_msg("edit %zu accepted: %s", i, edits[i][1]);
		assert_null(back.nodes);
		assert_int_equal(back.n_nodes, 0);
		json_decref(j);
		free(mod);
	}
	j = json_array();
	struct npf_check back = { 0 };

	assert_int_equal(npf_check_from_json(j, &back), -EBADMSG);
	json_decref(j);
	free(s);
	npf_check_clear(&c);
}

static void test_verdict(void **state)
{
	struct npf_verdict_report r;
	struct npf_check c;

	(void)state;
	make_check(&c, 8);
	assert_int_equal(npf_verdict_compute(&c, &r), 0);
	assert_int_equal(r.n_ifaces, 3);
	assert_string_equal(r.ifaces[0].ifname, "fab0");
	assert_true(r.ifaces[0].works);
	assert_int_equal(r.ifaces[0].n_ok, 2);
	assert_false(r.ifaces[1].works);
	assert_int_equal(r.ifaces[1].fail_peer, 1);
	assert_int_equal(r.ifaces[1].fail_outcome, NPF_OUT_WRONG_PEER);
	assert_false(r.ifaces[2].works);
	assert_int_equal(r.ifaces[2].fail_peer, 2);
	assert_int_equal(r.ifaces[2].fail_outcome, NPF_OUT_TIMEOUT);
	assert_int_equal(r.ifaces[2].fail_dir, NPF_DIR_FORWARD);
	npf_verdict_report_clear(&r);

	/* fab0 fails only in reverse toward node3: nothing works both ways. */
	c.links[1].rev = NPF_OUT_REFUSED;
	assert_int_equal(npf_verdict_compute(&c, &r), 0);
	assert_false(r.ifaces[0].works);
	assert_int_equal(r.ifaces[0].fail_dir, NPF_DIR_REVERSE);
	assert_int_equal(r.ifaces[0].fail_peer, 2);
	assert_int_equal(r.ifaces[0].fail_outcome, NPF_OUT_REFUSED);
	npf_verdict_report_clear(&r);
	c.links[1].rev = NPF_OUT_OK;

	/* An unavailable peer leaves every interface unproven, never working. */
	c.nodes[2].available = false;
	strcpy(c.nodes[2].error, "connection refused");
	assert_int_equal(npf_verdict_compute(&c, &r), 0);
	assert_int_equal(r.n_unavailable, 1);
	assert_false(r.ifaces[0].works);
	assert_true(r.ifaces[0].unproven);
	assert_int_equal(r.ifaces[0].n_ok, 1);
	npf_verdict_report_clear(&r);
	c.nodes[2].available = true;

	/* Sparse: pairs outside the plan (node3 not planned) do not count against an
	 * interface. */
	c.sparse = true;
	c.links[5].fwd = NPF_OUT_NOT_PROBED;
	c.links[5].rev = NPF_OUT_NOT_PROBED;
	c.nodes[2].probed = false;
	assert_int_equal(npf_verdict_compute(&c, &r), 0);
	assert_true(r.ifaces[2].works);
	assert_int_equal(r.ifaces[2].n_ok, 1);
	npf_verdict_report_clear(&r);

	/* But a planned peer needs ok both ways: not-probed is unknown (lib/pairstate.h). */
	c.nodes[2].probed = true;
	assert_int_equal(npf_verdict_compute(&c, &r), 0);
	assert_false(r.ifaces[2].works);
	assert_true(r.ifaces[2].unproven);
	assert_int_equal(r.ifaces[2].fail_peer, -1);
	npf_verdict_report_clear(&r);

	/* Full mesh: a not-probed pair is missing evidence, unknown, never a failure. */
	c.sparse = false;
	assert_int_equal(npf_verdict_compute(&c, &r), 0);
	assert_false(r.ifaces[2].works);
	assert_true(r.ifaces[2].unproven);
	assert_int_equal(r.ifaces[2].fail_peer, -1);
	npf_verdict_report_clear(&r);
	npf_check_clear(&c);

	/* No peers at all: nothing to reduce. */
	memset(&c, 0, sizeof(c));
	c.nodes = calloc(1, sizeof(*c.nodes));
	c.n_nodes = 1;
	assert_int_equal(npf_verdict_compute(&c, &r), 0);
	assert_int_equal(r.n_peers, 0);
	assert_int_equal(r.n_ifaces, 0);
	npf_verdict_report_clear(&r);
	npf_check_clear(&c);
}

/* The check object's verdict is the decision's, not the links' alone: with node3's
 * daemon silent and every interface failing with node2, the per-interface evidence
 * cannot be ok, and the decision is a failure that names node2. */
static void test_check_json_verdict_is_the_decision(void **state)
{
	struct npf_check c;
	struct npf_inventory inv;
	struct npf_recommendation rec = { 0 };
	json_t *j, *v;

	(void)state;
	make_check(&c, 8);
	make_inventory(&inv);
	c.links[0].fwd = NPF_OUT_TIMEOUT; /* fab0 -> node2 */
	c.nodes[2].available = false;
	strcpy(c.nodes[2].error, "connection refused");
	assert_int_equal(npf_recommend(&inv, &c, NULL, &rec), 0);
	assert_int_equal(rec.verdict, NPF_VERDICT_FAIL);
	assert_string_equal(rec.fail_node, "node2");
	j = npf_check_to_json(&c, &rec);
	assert_non_null(j);
	v = json_object_get(j, "verdict");
	assert_string_equal(json_string_value(json_object_get(v, "verdict")), "fail");
	assert_int_equal(json_integer_value(json_object_get(v, "unavailable")), 1);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(j, "recommendation"), "failure"),
				    "node")),
			    "node2");
	json_decref(j);
	npf_recommendation_clear(&rec);

	/* Only node3 silent, the rest fine: unknown, never ok. */
	c.links[0].fwd = NPF_OUT_OK;
	assert_int_equal(npf_recommend(&inv, &c, NULL, &rec), 0);
	assert_int_equal(rec.verdict, NPF_VERDICT_UNKNOWN);
	j = npf_check_to_json(&c, &rec);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "verdict"),
							      "verdict")),
			    "unknown");
	json_decref(j);
	npf_recommendation_clear(&rec);
	npf_inventory_clear(&inv);
	npf_check_clear(&c);
}

/* Both halves around cached/age_ms give the bytes of the reply built as JSON, for every
 * format and for a verdict without variables. */
static void assert_split_matches(const struct npf_recommendation *rec, const char *format)
{
	struct npf_api_env_split sp;
	bool cached[] = { true, false };
	uint64_t ages[] = { 0, 987654321012u };

	assert_int_equal(npf_api_env_split_make(rec, format, &sp), 0);
	for (size_t i = 0; i < 2; i++) {
		json_t *j = npf_api_env_reply(rec, format, cached[i], ages[i]);
		char *a, *b;
		size_t alen, blen;

		assert_non_null(j);
		assert_int_equal(npf_api_frame_encode(j, NPF_API_MAX_REPLY, &a, &alen), 0);
		assert_int_equal(npf_api_env_split_frame(&sp, cached[i], ages[i],
							 NPF_API_MAX_REPLY, &b, &blen), 0);
		assert_int_equal(alen, blen);
		assert_memory_equal(a, b, alen);
		free(b);
		assert_int_equal(npf_api_env_split_frame(&sp, cached[i], ages[i],
							 (uint32_t)alen - 5, &b, &blen),
				 -EMSGSIZE);
		assert_null(b);
		free(a);
		json_decref(j);
	}
	npf_api_env_split_clear(&sp);
	assert_null(sp.head);
}

static void test_env_split(void **state)
{
	struct npf_check c;
	struct npf_inventory inv;
	struct npf_recommendation rec = { 0 };
	struct npf_api_env_split sp = { 0 };
	const char *formats[] = { "", "json", "shell", "taskprolog", "nccl-conf" };
	char *out = (char *)1;
	size_t len = 1;

	(void)state;
	make_check(&c, 8);
	make_inventory(&inv);
	assert_int_equal(npf_recommend(&inv, &c, NULL, &rec), 0);
	assert_int_equal(rec.verdict, NPF_VERDICT_OK);
	assert_true(rec.n_vars > 0);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		assert_split_matches(&rec, formats[i]);
	npf_recommendation_clear(&rec);
	c.links[0].fwd = NPF_OUT_TIMEOUT;
	c.nodes[2].available = false;
	assert_int_equal(npf_recommend(&inv, &c, NULL, &rec), 0);
	assert_int_not_equal(rec.verdict, NPF_VERDICT_OK);
	assert_split_matches(&rec, "");
	assert_split_matches(&rec, "shell");
	assert_int_equal(npf_api_env_split_make(&rec, "bogus", &sp), -ENOMEM);
	assert_null(sp.head);
	assert_int_equal(npf_api_env_split_frame(&sp, true, 1, NPF_API_MAX_REPLY, &out, &len),
			 -EINVAL);
	assert_null(out);
	npf_recommendation_clear(&rec);
	npf_inventory_clear(&inv);
	npf_check_clear(&c);
}

static void test_env_request(void **state)
{
	struct npf_api_request req, back;
	struct npf_api_error err;
	json_t *j;
	char *s;

	(void)state;
	assert_int_equal(parse_str("{\"version\":1,\"request\":\"env\",\"peers\":[\"n2\",\"n1\"],"
				   "\"format\":\"shell\",\"job_wide\":true,\"timeout_ms\":2000,"
				   "\"max_age_ms\":0}",
				   &req, &err),
			 0);
	assert_int_equal(req.type, NPF_API_REQ_ENV);
	assert_string_equal(req.peers[0], "n2"); /* the job's first node: request order */
	assert_string_equal(req.format, "shell");
	assert_true(req.job_wide);
	assert_false(req.cached);
	assert_int_equal(req.timeout_ms, 2000);
	assert_true(req.max_age_set);
	assert_int_equal(req.max_age_ms, 0);
	/* An explicit max_age_ms 0 ("always probe") survives re-encoding. */
	j = npf_api_request_to_json(&req);
	s = json_dumps(j, JSON_COMPACT);
	assert_int_equal(parse_str(s, &back, &err), 0);
	assert_true(back.max_age_set);
	assert_true(back.job_wide);
	assert_string_equal(back.format, "shell");
	npf_api_request_clear(&back);
	free(s);
	json_decref(j);
	npf_api_request_clear(&req);

	assert_int_equal(parse_str("{\"version\":1,\"request\":\"env\",\"peers\":[\"a\"]}", &req,
				   &err),
			 0);
	assert_false(req.max_age_set);
	assert_string_equal(req.format, "");
	npf_api_request_clear(&req);

	/* What the SPANK plugin sends is a valid request. */
	j = npf_envreply_request(json_pack("[s, s]", "node1", "node2"));
	s = json_dumps(j, JSON_COMPACT);
	assert_int_equal(parse_str(s, &req, &err), 0);
	assert_int_equal(req.type, NPF_API_REQ_ENV);
	assert_true(req.cached);
	assert_int_equal(req.n_peers, 2);
	npf_api_request_clear(&req);
	free(s);
	json_decref(j);

	static const char *const bad[] = {
		"{\"version\":1,\"request\":\"env\"}",
		"{\"version\":1,\"request\":\"env\",\"peers\":[\"a\"],\"format\":\"yaml\"}",
		"{\"version\":1,\"request\":\"env\",\"peers\":[\"a\"],\"format\":7}",
		"{\"version\":1,\"request\":\"env\",\"peers\":[\"a\"],\"job_wide\":1}",
		"{\"version\":1,\"request\":\"env\",\"peers\":[\"a\"],\"cached\":\"yes\"}",
		"{\"version\":1,\"request\":\"env\",\"peers\":[\"a\"],\"timeout_ms\":5}",
		"{\"version\":1,\"request\":\"env\",\"peers\":[\"a\"],\"variables\":[]}",
		"{\"version\":1,\"request\":\"check\",\"peers\":[\"a\"],\"format\":\"shell\"}",
		"{\"version\":1,\"request\":\"verdict\",\"peers\":[\"a\"],\"job_wide\":true}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		if (parse_str(bad[i], &req, &err) != -EBADMSG || err.code != NPF_API_E_BAD_REQUEST)
			fail_msg("accepted: %s", bad[i]);
		assert_null(req.peers);
	}
}

static void test_env_reply(void **state)
{
	struct npf_envreply er = { 0 };
	struct npf_recommendation rec = { 0 };
	struct npf_inventory inv;
	struct npf_check c;
	char err[200];
	const char *text;
	json_t *r;

	(void)state;
	make_check(&c, 8);
	make_inventory(&inv);
	assert_int_equal(npf_recommend(&inv, &c, NULL, &rec), 0);
	assert_int_equal(rec.verdict, NPF_VERDICT_OK);

	r = npf_api_env_reply(&rec, "shell", true, 1234);
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), "ok");
	assert_true(json_is_true(json_object_get(r, "cached")));
	assert_int_equal(json_integer_value(json_object_get(r, "age_ms")), 1234);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "variables"),
							      "NCCL_SOCKET_IFNAME")),
			    "=fab0");
	text = json_string_value(json_object_get(r, "text"));
	assert_non_null(text);
	assert_non_null(strstr(text, "export NCCL_SOCKET_IFNAME='=fab0'\n"));
	assert_non_null(strstr(text, "export OMPI_MCA_btl_tcp_if_include='198.18.1.0/24'\n"));
	assert_string_equal(json_string_value(json_object_get(r, "format")), "shell");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(r, "recommendation"), "choice"),
				    "ifname")),
			    "fab0");
	/* The SPANK plugin's parser takes it as it is. */
	assert_int_equal(npf_envreply_parse(r, &er, err, sizeof(err)), 0);
	assert_string_equal(er.verdict, "ok");
	assert_true(er.n_vars == rec.n_vars && er.n_vars > 0);
	assert_string_equal(er.vars[0].name, "NCCL_SOCKET_IFNAME");
	assert_string_equal(er.vars[0].value, "=fab0");
	npf_envreply_clear(&er);
	json_decref(r);

	r = npf_api_env_reply(&rec, "taskprolog", false, 0);
	text = json_string_value(json_object_get(r, "text"));
	assert_non_null(strstr(text, "export NCCL_SOCKET_IFNAME==fab0\n"));
	assert_null(strchr(text, '#'));
	json_decref(r);
	/* json (or none): no text. */
	r = npf_api_env_reply(&rec, "json", false, 0);
	assert_null(json_object_get(r, "text"));
	json_decref(r);
	r = npf_api_env_reply(&rec, "", false, 0);
	assert_null(json_object_get(r, "text"));
	json_decref(r);
	assert_null(npf_api_env_reply(&rec, "yaml", false, 0));
	assert_null(npf_api_env_reply(NULL, "", false, 0));
	/* degraded (the job check moved the job to a worse network) publishes like ok, and
	 * the SPANK plugin's parser takes it. */
	rec.verdict = NPF_VERDICT_DEGRADED;
	r = npf_api_env_reply(&rec, "shell", false, 0);
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), "degraded");
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "variables"),
							      "NCCL_SOCKET_IFNAME")),
			    "=fab0");
	assert_non_null(strstr(json_string_value(json_object_get(r, "text")),
			       "export NCCL_SOCKET_IFNAME='=fab0'\n"));
	assert_int_equal(npf_envreply_parse(r, &er, err, sizeof(err)), 0);
	assert_string_equal(er.verdict, "degraded");
	assert_int_equal(er.n_vars, rec.n_vars);
	npf_envreply_clear(&er);
	json_decref(r);
	npf_recommendation_clear(&rec);

	/* A failure publishes nothing: no variables, no export line. */
	c.links[0].fwd = NPF_OUT_TIMEOUT;
	c.links[1].fwd = NPF_OUT_TIMEOUT;
	assert_int_equal(npf_recommend(&inv, &c, NULL, &rec), 0);
	assert_int_equal(rec.verdict, NPF_VERDICT_FAIL);
	r = npf_api_env_reply(&rec, "shell", false, 0);
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), "fail");
	assert_int_equal(json_object_size(json_object_get(r, "variables")), 0);
	assert_null(strstr(json_string_value(json_object_get(r, "text")), "export"));
	assert_int_equal(npf_envreply_parse(r, &er, err, sizeof(err)), 0);
	assert_string_equal(er.verdict, "fail");
	assert_int_equal(er.n_vars, 0);
	npf_envreply_clear(&er);
	json_decref(r);
	npf_recommendation_clear(&rec);
	npf_inventory_clear(&inv);
	npf_check_clear(&c);
}

static void test_peers_key(void **state)
{
	char peers[5][NPF_NAME_MAX] = { "node3", "node1", "node2", "node3", "a" };
	char *key;

	(void)state;
	assert_int_equal(npf_api_peers_key((const char(*)[NPF_NAME_MAX])peers, 5, "node1", &key), 0);
	assert_string_equal(key, "a,node2,node3");
	free(key);
	assert_int_equal(npf_api_peers_key((const char(*)[NPF_NAME_MAX])peers, 5, NULL, &key), 0);
	assert_string_equal(key, "a,node1,node2,node3");
	free(key);
	assert_int_equal(npf_api_peers_key((const char(*)[NPF_NAME_MAX])peers + 1, 1, "node1", &key),
			 -EINVAL);
	assert_null(key);
}

static void test_name_valid(void **state)
{
	(void)state;
	assert_true(npf_api_name_valid("node1"));
	assert_true(npf_api_name_valid("gpu-001.cluster_a"));
	assert_false(npf_api_name_valid(""));
	assert_false(npf_api_name_valid(NULL));
	assert_false(npf_api_name_valid("-x"));
	assert_false(npf_api_name_valid(".x"));
	assert_false(npf_api_name_valid("a/b"));
	assert_false(npf_api_name_valid("a\nb"));
}

/* One job-tag grammar for the CLI and the daemon (issue 21: one validator per grammar). */
static void test_job_valid(void **state)
{
	char longest[NPF_API_JOB_MAX], too_long[NPF_API_JOB_MAX + 1];
	(void)state;

	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	memset(too_long, 'a', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	assert_true(npf_api_job_valid("4242"));
	assert_true(npf_api_job_valid("4242.r1"));
	assert_true(npf_api_job_valid("-x_y.z"));
	assert_true(npf_api_job_valid(longest));
	assert_false(npf_api_job_valid(too_long));
	assert_false(npf_api_job_valid(""));
	assert_false(npf_api_job_valid(NULL));
	assert_false(npf_api_job_valid("a b"));
	assert_false(npf_api_job_valid("a/b"));
	assert_false(npf_api_job_valid("job\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_len),
		cmocka_unit_test(test_frame_encode_roundtrip),
		cmocka_unit_test(test_frame_encode_oversized),
		cmocka_unit_test(test_json_text),
		cmocka_unit_test(test_check_reply_frame),
		cmocka_unit_test(test_env_split),
		cmocka_unit_test(test_request_valid),
		cmocka_unit_test(test_request_malformed),
		cmocka_unit_test(test_request_long_name_and_many_peers),
		cmocka_unit_test(test_reply_status),
		cmocka_unit_test(test_check_roundtrip),
		cmocka_unit_test(test_check_from_json_malformed),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_check_json_verdict_is_the_decision),
		cmocka_unit_test(test_env_request),
		cmocka_unit_test(test_env_reply),
		cmocka_unit_test(test_peers_key),
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_job_valid),
	};

	return npf_run_tests(tests, NULL, NULL);
}
