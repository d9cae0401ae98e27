// SPDX-License-Identifier: MIT
/* Probe protocol codec: frame header, cursor reader and strict JSON messages. */
#include "wire.h"

#include "addr_json.h"
#include "auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void npf_cursor_init(struct npf_cursor *c, const void *p, size_t len)
{
	c->p = p;
	c->len = p ? len : 0;
	c->off = 0;
}

size_t npf_cursor_left(const struct npf_cursor *c)
{
	return c->len - c->off;
}

int npf_cursor_get_u16(struct npf_cursor *c, uint16_t *v)
{
	if (npf_cursor_left(c) < 2)
		return -EBADMSG;
	*v = (uint16_t)((uint16_t)c->p[c->off] << 8 | c->p[c->off + 1]);
	c->off += 2;
	return 0;
}

int npf_cursor_get_u32(struct npf_cursor *c, uint32_t *v)
{
	if (npf_cursor_left(c) < 4)
		return -EBADMSG;
	*v = (uint32_t)c->p[c->off] << 24 | (uint32_t)c->p[c->off + 1] << 16 |
	     (uint32_t)c->p[c->off + 2] << 8 | c->p[c->off + 3];
	c->off += 4;
	return 0;
}

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

void npf_wire_hdr_encode(uint8_t out[NPF_WIRE_HDR_LEN], uint16_t type, uint32_t length)
{
	out[0] = (uint8_t)(NPF_WIRE_VERSION >> 8);
	out[1] = (uint8_t)(NPF_WIRE_VERSION & 0xff);
	out[2] = (uint8_t)(type >> 8);
	out[3] = (uint8_t)(type & 0xff);
	out[4] = (uint8_t)(length >> 24);
	out[5] = (uint8_t)(length >> 16);
	out[6] = (uint8_t)(length >> 8);
	out[7] = (uint8_t)length;
}

int npf_wire_frame(uint16_t type, const json_t *obj, uint8_t **out, size_t *out_len)
{
	char *s = json_dumps(obj, JSON_COMPACT);
	size_t n;
	uint8_t *f;

	if (!s)
		return -ENOMEM;
	n = strlen(s);
	if (n > NPF_WIRE_MAX_PAYLOAD) {
		free(s);
		return -EMSGSIZE;
	}
	f = malloc(NPF_WIRE_HDR_LEN + n);
	if (!f) {
		free(s);
		return -ENOMEM;
	}
	npf_wire_hdr_encode(f, type, (uint32_t)n);
	memcpy(f + NPF_WIRE_HDR_LEN, s, n);
	free(s);
	*out = f;
	*out_len = NPF_WIRE_HDR_LEN + n;
	return 0;
}

int npf_wire_parse_json(const uint8_t *payload, size_t len, json_t **out)
{
	json_error_t err;
	json_t *j;

	if (!payload || len == 0 || len > NPF_WIRE_MAX_PAYLOAD)
		return -EBADMSG;
	/* json_loadb rejects trailing garbage and \u0000 by default. */
	j = json_loadb((const char *)payload, len, JSON_REJECT_DUPLICATES, &err);
	if (!j)
		return -EBADMSG;
	if (!json_is_object(j)) {
		json_decref(j);
		return -EBADMSG;
	}
	*out = j;
	return 0;
}

static bool ifname_valid(const char *s)
{
	size_t n = strnlen(s, IFNAMSIZ);

	if (n == 0 || n >= IFNAMSIZ)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f || s[i] == '/')
			return false;
	return true;
}

int npf_wire_addr_parse(const char *s, struct npf_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (!s)
		return -EINVAL;
	if (inet_pton(AF_INET, s, out->addr) == 1) {
		out->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, out->addr) == 1) {
		out->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

static void instance_hex(uint64_t v, char out[17])
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (56 - 8 * i));
	sodium_bin2hex(out, 17, b, sizeof(b));
}

static int hex_exact(const char *s, uint8_t *out, size_t n)
{
	size_t got = 0;
	const char *end = NULL;

	if (!s || strlen(s) != 2 * n)
		return -EBADMSG;
	for (size_t i = 0; i < 2 * n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return -EBADMSG;
	if (sodium_hex2bin(out, n, s, 2 * n, NULL, &got, &end) != 0 || got != n)
		return -EBADMSG;
	return 0;
}

static int instance_parse(const char *s, uint64_t *v)
{
	uint8_t b[8];

	if (hex_exact(s, b, sizeof(b)) < 0)
		return -EBADMSG;
	*v = 0;
	for (int i = 0; i < 8; i++)
		*v = *v << 8 | b[i];
	return *v ? 0 : -EBADMSG;
}

static int copy_str(char *dst, size_t dstsz, const char *src)
{
	size_t n = strnlen(src, dstsz);

	if (n >= dstsz)
		return -EBADMSG;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

/* ---- HELLO ---- */

/* Distinct addresses (family and bytes), as in REVERSE_REQ targets. */
static bool addr_seen(const struct npf_addr *a, size_t n, const struct npf_addr *x)
{
	for (size_t k = 0; k < n; k++)
		if (a[k].family == x->family && memcmp(a[k].addr, x->addr, 16) == 0)
			return true;
	return false;
}

/* A JSON array of 0..max distinct address strings into out[]. Returns the
 * count or -EBADMSG. */
static int addr_list_parse(json_t *arr, struct npf_addr *out, size_t max)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr) || json_array_size(arr) > max)
		return -EBADMSG;
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v) || npf_wire_addr_parse(json_string_value(v), &out[i]) < 0 ||
		    addr_seen(out, i, &out[i]))
			return -EBADMSG;
	}
	return (int)json_array_size(arr);
}

json_t *npf_wire_hello_to_json(const struct npf_msg_hello *m)
{
	char inst[17];
	json_t *o, *arr;

	instance_hex(m->instance, inst);
	o = json_pack("{s:s, s:s, s:b}", "node", m->node, "instance", inst, "candidates",
		      m->want_candidates);
	if (!o || !m->addrs_present)
		return o;
	arr = json_array();
	if (!arr || json_object_set_new(o, "addrs", arr) < 0)
		goto err;
	for (size_t i = 0; i < m->n_addrs && i < NPF_WIRE_MAX_CANDS; i++)
		if (json_array_append_new(arr, npf_addr_json(&m->addrs[i], NPF_ADDR_JSON_IP)) < 0)
			goto err;
	return o;
err:
	json_decref(o);
	return NULL;
}

int npf_wire_hello_from_json(json_t *j, struct npf_msg_hello *m)
{
	const char *node, *inst;
	json_t *addrs = NULL;
	int want, n;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:s, s:s, s:b, s?o !}", "node", &node, "instance", &inst, "candidates",
			&want, "addrs", &addrs) < 0)
		return -EBADMSG;
	if (!npf_wire_name_valid(node) || instance_parse(inst, &m->instance) < 0)
		return -EBADMSG;
	if (addrs) {
		n = addr_list_parse(addrs, m->addrs, NPF_WIRE_MAX_CANDS);
		if (n < 0) {
			memset(m, 0, sizeof(*m));
			return -EBADMSG;
		}
		m->n_addrs = (size_t)n;
		m->addrs_present = true;
	}
	copy_str(m->node, sizeof(m->node), node);
	m->want_candidates = want;
	return 0;
}

/* ---- HELLO_REPLY ---- */

static json_t *cand_json(const struct npf_candidate *c, bool gids)
{
	json_t *a = npf_addr_json(&c->addr, NPF_ADDR_JSON_IP), *o;

	if (!a)
		return NULL;
	o = json_pack("{s:s, s:o, s:i, s:s, s:I, s:I, s:I, s:s, s:i, s:s, s:b}", "if", c->ifname,
		      "addr", a, "prefixlen", (int)c->addr.prefixlen, "kind",
		      npf_kind_name(c->kind), "roles", (json_int_t)c->roles, "mtu",
		      (json_int_t)c->mtu, "speed_mbps", (json_int_t)c->speed_mbps, "rdma_dev",
		      c->rdma_dev, "rdma_port", c->rdma_port, "rdma_link_layer",
		      npf_link_layer_name(c->rdma_ll), "rdma_active", c->rdma_active);
	if (o && gids && c->has_gid &&
	    json_object_set_new(o, "gid_index", json_integer(c->gid_index)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int kind_parse(const char *s, enum npf_kind *k)
{
	for (int i = 0; i < NPF_KIND__COUNT; i++) {
		if (strcmp(s, npf_kind_name((enum npf_kind)i)) == 0) {
			*k = (enum npf_kind)i;
			return 0;
		}
	}
	return -EBADMSG;
}

static int ll_parse(const char *s, enum npf_link_layer *ll)
{
	static const enum npf_link_layer all[] = { NPF_LL_UNKNOWN, NPF_LL_INFINIBAND,
						   NPF_LL_ETHERNET };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcmp(s, npf_link_layer_name(all[i])) == 0) {
			*ll = all[i];
			return 0;
		}
	}
	return -EBADMSG;
}

static int cand_from_json(json_t *j, struct npf_candidate *c)
{
	const char *ifn, *addr, *kind, *rdev, *ll;
	json_int_t prefix, roles, mtu, speed, rport, gid = -1;
	int active;
	unsigned maxpfx;

	memset(c, 0, sizeof(*c));
	if (json_unpack(j, "{s:s, s:s, s:I, s:s, s:I, s:I, s:I, s:s, s:I, s:s, s:b, s?I !}", "if",
			&ifn, "addr", &addr, "prefixlen", &prefix, "kind", &kind, "roles", &roles,
			"mtu", &mtu, "speed_mbps", &speed, "rdma_dev", &rdev, "rdma_port", &rport,
			"rdma_link_layer", &ll, "rdma_active", &active, "gid_index", &gid) < 0)
		return -EBADMSG;
	/* Present means a real index: a GID table slot (ibv_query_gid takes an int,
	 * sysfs tables are far shorter than 65536). */
	if (json_object_get(j, "gid_index") && (gid < 0 || gid > UINT16_MAX))
		return -EBADMSG;
	c->has_gid = gid >= 0;
	c->gid_index = c->has_gid ? (uint16_t)gid : 0;
	if (!ifname_valid(ifn) || copy_str(c->ifname, sizeof(c->ifname), ifn) < 0)
		return -EBADMSG;
	if (npf_wire_addr_parse(addr, &c->addr) < 0)
		return -EBADMSG;
	maxpfx = c->addr.family == AF_INET ? 32 : 128;
	if (prefix < 0 || prefix > maxpfx)
		return -EBADMSG;
	c->addr.prefixlen = (uint8_t)prefix;
	if (kind_parse(kind, &c->kind) < 0 || ll_parse(ll, &c->rdma_ll) < 0)
		return -EBADMSG;
	if (roles < 0 || roles > UINT32_MAX || mtu < 0 || mtu > UINT32_MAX)
		return -EBADMSG;
	if (speed < NPF_SPEED_UNKNOWN || rport < 0 || rport > 255)
		return -EBADMSG;
	if (copy_str(c->rdma_dev, sizeof(c->rdma_dev), rdev) < 0)
		return -EBADMSG;
	c->roles = (uint32_t)roles;
	c->mtu = (uint32_t)mtu;
	c->speed_mbps = speed;
	c->rdma_port = (int)rport;
	c->rdma_active = active;
	return 0;
}

void npf_wire_path_hello(const char *node, uint64_t instance, struct npf_msg_hello *h)
{
	memset(h, 0, sizeof(*h));
	copy_str(h->node, sizeof(h->node), node);
	h->instance = instance;
}

void npf_wire_hello_answer(const struct npf_msg_hello *h, const char *node, uint64_t instance,
			   struct npf_candidate *cands, size_t n_cands,
			   char (*ifnames)[IFNAMSIZ], size_t n_ifnames,
			   struct npf_msg_hello_reply *rep)
{
	memset(rep, 0, sizeof(*rep));
	copy_str(rep->node, sizeof(rep->node), node);
	rep->instance = instance;
	rep->proto = NPF_WIRE_VERSION;
	if (!h->want_candidates)
		return; /* a path probe: identity only, one small frame */
	rep->cands = cands;
	rep->n_cands = n_cands;
	rep->ifnames = ifnames;
	rep->n_ifnames = n_ifnames;
	rep->lists = true;
	/* A requester that announces its addresses is new enough to read the candidates'
	 * GID indices. */
	rep->gids = h->addrs_present;
}

json_t *npf_wire_hello_reply_to_json(const struct npf_msg_hello_reply *m)
{
	char inst[17];
	json_t *o, *cands = NULL, *names = NULL;

	instance_hex(m->instance, inst);
	o = json_pack("{s:s, s:s, s:I}", "node", m->node, "instance", inst, "proto",
		      (json_int_t)m->proto);
	if (!o)
		return NULL;
	if (m->lists) {
		cands = json_array();
		if (!cands || json_object_set_new(o, "candidates", cands) < 0)
			goto err;
		for (size_t i = 0; i < m->n_cands && i < NPF_WIRE_MAX_CANDS; i++)
			if (json_array_append_new(cands, cand_json(&m->cands[i], m->gids)) < 0)
				goto err;
	}
	if (m->lists) {
		names = json_array();
		if (!names || json_object_set_new(o, "ifnames", names) < 0)
			goto err;
		for (size_t i = 0; i < m->n_ifnames && i < NPF_WIRE_MAX_IFNAMES; i++)
			if (json_array_append_new(names, json_string(m->ifnames[i])) < 0)
				goto err;
	}
	return o;
err:
	json_decref(o);
	return NULL;
}

void npf_wire_hello_reply_clear(struct npf_msg_hello_reply *m)
{
	if (!m)
		return;
	free(m->cands);
	free(m->ifnames);
	m->cands = NULL;
	m->ifnames = NULL;
	m->n_cands = m->n_ifnames = 0;
}

int npf_wire_hello_reply_from_json(json_t *j, struct npf_msg_hello_reply *m)
{
	const char *node, *inst;
	json_int_t proto;
	json_t *cands = NULL, *names = NULL;
	size_t i;
	json_t *v;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:s, s:s, s:I, s?o, s?o !}", "node", &node, "instance", &inst,
			"proto", &proto, "candidates", &cands, "ifnames", &names) < 0)
		return -EBADMSG;
	if (!npf_wire_name_valid(node) || instance_parse(inst, &m->instance) < 0)
		return -EBADMSG;
	if (proto < 1 || proto > UINT16_MAX)
		return -EBADMSG;
	copy_str(m->node, sizeof(m->node), node);
	m->proto = (uint32_t)proto;
	if (!cands != !names)
		return -EBADMSG;
	m->lists = cands != NULL;
	if (cands) {
		if (!json_is_array(cands) || json_array_size(cands) > NPF_WIRE_MAX_CANDS)
			goto bad;
		/* calloc(0) may return NULL; one spare slot keeps "present" distinct. */
		m->cands = calloc(json_array_size(cands) + 1, sizeof(*m->cands));
		if (!m->cands)
			return -ENOMEM;
		json_array_foreach(cands, i, v) {
			if (cand_from_json(v, &m->cands[i]) < 0)
				goto bad;
			m->gids = m->gids || m->cands[i].has_gid;
			m->n_cands++;
		}
	}
	if (names) {
		if (!json_is_array(names) || json_array_size(names) > NPF_WIRE_MAX_IFNAMES)
			goto bad;
		m->ifnames = calloc(json_array_size(names) + 1, sizeof(*m->ifnames));
		if (!m->ifnames) {
			npf_wire_hello_reply_clear(m);
			return -ENOMEM;
		}
		json_array_foreach(names, i, v) {
			if (!json_is_string(v) || !ifname_valid(json_string_value(v)))
				goto bad;
			copy_str(m->ifnames[i], IFNAMSIZ, json_string_value(v));
			m->n_ifnames++;
		}
	}
	return 0;
bad:
	npf_wire_hello_reply_clear(m);
	return -EBADMSG;
}

/* ---- OPEN_DATA ---- */

json_t *npf_wire_open_data_to_json(const struct npf_msg_open_data *m)
{
	return json_pack("{s:I}", "bytes", (json_int_t)m->bytes);
}

static bool bulk_valid(json_int_t b)
{
	return b >= NPF_WIRE_MIN_BULK && b <= NPF_WIRE_MAX_BULK;
}

int npf_wire_open_data_from_json(json_t *j, struct npf_msg_open_data *m)
{
	json_int_t b;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:I !}", "bytes", &b) < 0 || !bulk_valid(b))
		return -EBADMSG;
	m->bytes = (uint32_t)b;
	return 0;
}

/* Adds key: hex of b[0..n) to o when present; o is kept either way (NULL-safe). */
static json_t *add_hex(json_t *o, bool present, const char *key, const uint8_t *b, size_t n)
{
	char hex[2 * NPF_WIRE_MAC_LEN + 1];

	if (!o || !present)
		return o;
	sodium_bin2hex(hex, sizeof(hex), b, n);
	if (json_object_set_new(o, key, json_string(hex)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* An optional hex field (NULL = absent): exactly n bytes when present. */
static int opt_hex(const char *s, uint8_t *out, size_t n, bool *present)
{
	*present = s != NULL;
	return s ? hex_exact(s, out, n) : 0;
}

json_t *npf_wire_open_data_reply_to_json(const struct npf_msg_open_data_reply *m)
{
	char tok[2 * NPF_WIRE_TOKEN_LEN + 1];

	sodium_bin2hex(tok, sizeof(tok), m->token, sizeof(m->token));
	return add_hex(json_pack("{s:i, s:s}", "port", (int)m->port, "token", tok), m->has_nonce,
		       "nonce", m->nonce, sizeof(m->nonce));
}

int npf_wire_open_data_reply_from_json(json_t *j, struct npf_msg_open_data_reply *m)
{
	json_int_t port;
	const char *tok, *nonce = NULL;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:I, s:s, s?:s !}", "port", &port, "token", &tok, "nonce", &nonce) < 0)
		return -EBADMSG;
	if (port < 1 || port > 65535 || hex_exact(tok, m->token, sizeof(m->token)) < 0 ||
	    opt_hex(nonce, m->nonce, sizeof(m->nonce), &m->has_nonce) < 0)
		return -EBADMSG;
	m->port = (uint16_t)port;
	return 0;
}

/* ---- DATA_AUTH ---- */

json_t *npf_wire_data_auth_to_json(const struct npf_msg_data_auth *m)
{
	char tok[2 * NPF_WIRE_TOKEN_LEN + 1];

	sodium_bin2hex(tok, sizeof(tok), m->token, sizeof(m->token));
	return json_pack("{s:s}", "token", tok);
}

int npf_wire_data_auth_from_json(json_t *j, struct npf_msg_data_auth *m)
{
	const char *tok;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:s !}", "token", &tok) < 0 ||
	    hex_exact(tok, m->token, sizeof(m->token)) < 0)
		return -EBADMSG;
	return 0;
}

json_t *npf_wire_data_auth_reply_to_json(const struct npf_msg_data_auth_reply *m)
{
	char inst[17];

	instance_hex(m->instance, inst);
	return add_hex(json_pack("{s:s, s:s}", "node", m->node, "instance", inst), m->has_mac,
		       "mac", m->mac, sizeof(m->mac));
}

int npf_wire_data_auth_reply_from_json(json_t *j, struct npf_msg_data_auth_reply *m)
{
	const char *node, *inst, *mac = NULL;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:s, s:s, s?:s !}", "node", &node, "instance", &inst, "mac", &mac) < 0)
		return -EBADMSG;
	if (!npf_wire_name_valid(node) || instance_parse(inst, &m->instance) < 0 ||
	    opt_hex(mac, m->mac, sizeof(m->mac), &m->has_mac) < 0)
		return -EBADMSG;
	copy_str(m->node, sizeof(m->node), node);
	return 0;
}

/* ---- REVERSE_REQ / REVERSE_RESULT ---- */

json_t *npf_wire_reverse_req_to_json(const struct npf_msg_reverse_req *m)
{
	json_t *o, *t;

	t = json_array();
	if (!t)
		return NULL;
	for (size_t i = 0; i < m->n_targets && i < NPF_WIRE_MAX_TARGETS; i++) {
		if (json_array_append_new(t, npf_addr_json(&m->targets[i], NPF_ADDR_JSON_IP)) < 0) {
			json_decref(t);
			return NULL;
		}
	}
	o = json_pack("{s:I, s:I, s:I, s:o}", "id", (json_int_t)m->id, "timeout_ms",
		      (json_int_t)m->timeout_ms, "bytes", (json_int_t)m->bytes, "targets", t);
	return o;
}

int npf_wire_reverse_req_from_json(json_t *j, struct npf_msg_reverse_req *m)
{
	json_int_t id, tmo, bytes;
	json_t *t, *v;
	size_t i;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:I, s:I, s:I, s:o !}", "id", &id, "timeout_ms", &tmo, "bytes",
			&bytes, "targets", &t) < 0)
		return -EBADMSG;
	if (id < 0 || id > UINT32_MAX || tmo < 1 || tmo > NPF_WIRE_MAX_TIMEOUT_MS ||
	    !bulk_valid(bytes))
		return -EBADMSG;
	if (!json_is_array(t) || json_array_size(t) < 1 ||
	    json_array_size(t) > NPF_WIRE_MAX_TARGETS)
		return -EBADMSG;
	json_array_foreach(t, i, v) {
		if (!json_is_string(v) ||
		    npf_wire_addr_parse(json_string_value(v), &m->targets[i]) < 0)
			return -EBADMSG;
		/* Distinct targets: a request must not multiply connections to one host. */
		if (addr_seen(m->targets, i, &m->targets[i]))
			return -EBADMSG;
	}
	m->n_targets = json_array_size(t);
	m->id = (uint32_t)id;
	m->timeout_ms = (uint32_t)tmo;
	m->bytes = (uint32_t)bytes;
	return 0;
}

/* A result's evidence (struct npf_evidence), every key present. */
static json_t *evidence_json(const struct npf_evidence *e)
{
	return json_pack("{s:b, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "deadline",
			 e->by_deadline, "phase", npf_phase_name(e->phase), "connected",
			 e->connected, "bulk", (json_int_t)e->bulk, "sent", (json_int_t)e->sent,
			 "echoed", (json_int_t)e->echoed, "phase_us", (json_int_t)e->phase_us,
			 "ctl_us", (json_int_t)e->ctl_us, "unacked", (json_int_t)e->unacked,
			 "retrans", (json_int_t)e->retrans);
}

static bool u32_valid(json_int_t v)
{
	return v >= 0 && v <= UINT32_MAX;
}

static int evidence_from_json(json_t *j, struct npf_evidence *e)
{
	const char *phase;
	json_int_t bulk, sent, echoed, phase_us, ctl_us, unacked, retrans;
	int deadline, connected, ph;

	memset(e, 0, sizeof(*e));
	if (json_unpack(j, "{s:b, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I !}", "deadline",
			&deadline, "phase", &phase, "connected", &connected, "bulk", &bulk, "sent",
			&sent, "echoed", &echoed, "phase_us", &phase_us, "ctl_us", &ctl_us,
			"unacked", &unacked, "retrans", &retrans) < 0)
		return -EBADMSG;
	ph = npf_phase_parse(phase);
	/* Bytes within the bulk, the bulk within the protocol's: a peer's numbers feed the
	 * load rule. */
	if (ph < 0 || bulk < 0 || bulk > NPF_WIRE_MAX_BULK || sent < 0 || sent > bulk ||
	    echoed < 0 || echoed > bulk || !u32_valid(phase_us) || !u32_valid(ctl_us) ||
	    !u32_valid(unacked) || !u32_valid(retrans))
		return -EBADMSG;
	e->by_deadline = deadline;
	e->phase = (enum npf_phase)ph;
	e->connected = connected;
	e->bulk = (uint32_t)bulk;
	e->sent = (uint32_t)sent;
	e->echoed = (uint32_t)echoed;
	e->phase_us = (uint32_t)phase_us;
	e->ctl_us = (uint32_t)ctl_us;
	e->unacked = (uint32_t)unacked;
	e->retrans = (uint32_t)retrans;
	return 0;
}

json_t *npf_wire_reverse_result_to_json(const struct npf_msg_reverse_result *m)
{
	json_t *arr = json_array();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < m->n_results && i < NPF_WIRE_MAX_TARGETS; i++) {
		const struct npf_rev_result *r = &m->results[i];
		json_t *a = npf_addr_json(&r->addr, NPF_ADDR_JSON_IP);

		if (!a || json_array_append_new(arr, json_pack("{s:o, s:s, s:I, s:s, s:s, s:o}", "addr",
							       a, "outcome",
							       npf_outcome_name(r->outcome),
							       "rtt_us", (json_int_t)r->rtt_us,
							       "egress", r->egress, "detail",
							       r->detail, "evidence",
							       evidence_json(&r->ev))) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return json_pack("{s:I, s:o}", "id", (json_int_t)m->id, "results", arr);
}

int npf_wire_reverse_result_from_json(json_t *j, struct npf_msg_reverse_result *m)
{
	json_int_t id;
	json_t *arr, *v;
	size_t i;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:I, s:o !}", "id", &id, "results", &arr) < 0)
		return -EBADMSG;
	if (id < 0 || id > UINT32_MAX || !json_is_array(arr) ||
	    json_array_size(arr) > NPF_WIRE_MAX_TARGETS)
		return -EBADMSG;
	json_array_foreach(arr, i, v) {
		struct npf_rev_result *r = &m->results[i];
		const char *addr, *out, *egress, *detail;
		json_t *ev;
		json_int_t rtt;
		int o;

		if (json_unpack(v, "{s:s, s:s, s:I, s:s, s:s, s:o !}", "addr", &addr, "outcome",
				&out, "rtt_us", &rtt, "egress", &egress, "detail", &detail,
				"evidence", &ev) < 0 ||
		    evidence_from_json(ev, &r->ev) < 0)
			return -EBADMSG;
		o = npf_outcome_parse(out);
		if (o < 0 || npf_wire_addr_parse(addr, &r->addr) < 0 || rtt < 0 ||
		    rtt > UINT32_MAX)
			return -EBADMSG;
		if ((*egress && !ifname_valid(egress)) ||
		    copy_str(r->egress, sizeof(r->egress), egress) < 0 ||
		    copy_str(r->detail, sizeof(r->detail), detail) < 0)
			return -EBADMSG;
		r->outcome = (enum npf_outcome)o;
		r->rtt_us = (uint32_t)rtt;
	}
	m->n_results = json_array_size(arr);
	m->id = (uint32_t)id;
	return 0;
}

/* ---- ROW ---- */

bool npf_wire_net_key_valid(const char *s)
{
	char buf[NPF_WIRE_NET_KEY_MAX], canon[64];
	struct npf_addr a;
	const char *slash;
	size_t alen;
	long prefix = 0;

	if (!s || strnlen(s, sizeof(buf)) >= sizeof(buf))
		return false;
	slash = strchr(s, '/');
	if (!slash || slash == s)
		return false;
	alen = (size_t)(slash - s);
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	if (npf_wire_addr_parse(buf, &a) < 0)
		return false;
	/* Canonical text only: two spellings of one network must not be two networks. */
	if (strcmp(npf_addr_str(&a, canon, sizeof(canon)), buf) != 0)
		return false;
	slash++;
	if (!*slash || strlen(slash) > 3 || (slash[0] == '0' && slash[1]))
		return false;
	for (const char *p = slash; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		prefix = prefix * 10 + (*p - '0');
	}
	return prefix <= (a.family == AF_INET ? 32 : 128);
}

void npf_wire_row_clear(struct npf_msg_row *m)
{
	for (size_t i = 0; i < m->n_nets && i < NPF_WIRE_MAX_ROW_NETS; i++) {
		free(m->nets[i].states);
		m->nets[i].states = NULL;
	}
	m->n_nets = 0;
}

json_t *npf_wire_row_to_json(const struct npf_msg_row *m)
{
	char inst[17];
	json_t *arr = json_array(), *o;

	if (!arr)
		return NULL;
	for (size_t i = 0; i < m->n_nets && i < NPF_WIRE_MAX_ROW_NETS; i++) {
		const struct npf_row_net *n = &m->nets[i];

		if (!n->states ||
		    json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:s}", "key", n->key,
							 "rank", (json_int_t)n->rank, "quality",
							 (json_int_t)n->quality, "states",
							 n->states)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	instance_hex(m->instance, inst);
	o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o, s:I}", "job", m->job, "node", m->node,
		      "instance", inst, "index", (json_int_t)m->index, "n_nodes",
		      (json_int_t)m->n_nodes, "nets", arr, "wait_ms", (json_int_t)m->wait_ms);
	/* Only when set: a coordinator from before the key rejects it (strict keys), and only
	 * a Prolog's last try sends it. */
	if (o && m->settle && json_object_set_new(o, "settle", json_true()) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* One state string of a ROW: n characters of "ofu-", '.' exactly at self. */
static bool states_valid(const char *s, size_t n, size_t self)
{
	if (strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if ((s[i] == '.') != (i == self))
			return false;
		if (i != self && !strchr("ofu-", s[i]))
			return false;
	}
	return true;
}

int npf_wire_row_from_json(json_t *j, struct npf_msg_row *m)
{
	const char *job, *node, *inst;
	json_int_t index, n_nodes, wait_ms = 0;
	uint8_t jb[NPF_WIRE_JOB_ID_LEN / 2];
	json_t *arr, *v, *settle = NULL;
	size_t i;

	memset(m, 0, sizeof(*m));
	/* wait_ms is optional: a row shown in a check JSON (job_row) is the same object. */
	if (json_unpack(j, "{s:s, s:s, s:s, s:I, s:I, s:o, s?I, s?o !}", "job", &job, "node",
			&node, "instance", &inst, "index", &index, "n_nodes", &n_nodes, "nets",
			&arr, "wait_ms", &wait_ms, "settle", &settle) < 0)
		return -EBADMSG;
	if (settle && !json_is_true(settle))
		return -EBADMSG; /* present only as true */
	m->settle = settle != NULL;
	if (wait_ms < 0 || wait_ms > NPF_WIRE_MAX_TIMEOUT_MS)
		return -EBADMSG;
	m->wait_ms = (uint32_t)wait_ms;
	if (hex_exact(job, jb, sizeof(jb)) < 0 || !npf_wire_name_valid(node) ||
	    instance_parse(inst, &m->instance) < 0 || n_nodes < 2 ||
	    n_nodes > NPF_WIRE_MAX_ROW_NODES || index < 0 || index >= n_nodes ||
	    !json_is_array(arr) || json_array_size(arr) > NPF_WIRE_MAX_ROW_NETS)
		return -EBADMSG;
	memcpy(m->job, job, NPF_WIRE_JOB_ID_LEN + 1);
	snprintf(m->node, sizeof(m->node), "%s", node);
	m->index = (uint32_t)index;
	m->n_nodes = (uint32_t)n_nodes;
	json_array_foreach(arr, i, v) {
		struct npf_row_net *n = &m->nets[i];
		const char *key, *states;
		json_int_t rank, quality;

		if (json_unpack(v, "{s:s, s:I, s:I, s:s !}", "key", &key, "rank", &rank, "quality",
				&quality, "states", &states) < 0 ||
		    !npf_wire_net_key_valid(key) || !states_valid(states, m->n_nodes, m->index))
			goto bad;
		for (size_t k = 0; k < i; k++)
			if (strcmp(m->nets[k].key, key) == 0)
				goto bad;
		snprintf(n->key, sizeof(n->key), "%s", key);
		n->rank = rank;
		n->quality = quality;
		n->states = strdup(states);
		if (!n->states)
			goto bad;
		m->n_nets = i + 1;
	}
	return 0;
bad:
	npf_wire_row_clear(m);
	return -EBADMSG;
}

/* ---- JOB_DECISION ---- */

void npf_wire_job_decision_clear(struct npf_msg_job_decision *m)
{
	free(m->nodes);
	m->nodes = NULL;
}

json_t *npf_wire_job_decision_to_json(const struct npf_msg_job_decision *m)
{
	if (!m->nodes)
		return NULL;
	return json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:I, s:s}", "job", m->job, "n_nodes",
			 (json_int_t)m->n_nodes, "verdict", (json_int_t)m->verdict, "net", m->net,
			 "best", m->best, "nodes", m->nodes, "rows", (json_int_t)m->n_rows,
			 "reason", m->reason);
}

int npf_wire_job_decision_from_json(json_t *j, struct npf_msg_job_decision *m)
{
	const char *job, *net, *best, *nodes, *reason;
	json_int_t n_nodes, verdict, rows;
	uint8_t jb[NPF_WIRE_JOB_ID_LEN / 2];

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:s, s:I, s:I, s:s, s:s, s:s, s:I, s:s !}", "job", &job, "n_nodes",
			&n_nodes, "verdict", &verdict, "net", &net, "best", &best, "nodes", &nodes,
			"rows", &rows, "reason", &reason) < 0)
		return -EBADMSG;
	/* verdict is enum npf_job_verdict: 0 ok .. 3 unknown (lib/jobcheck.h). */
	if (hex_exact(job, jb, sizeof(jb)) < 0 || n_nodes < 1 ||
	    n_nodes > NPF_WIRE_MAX_ROW_NODES || verdict < 0 || verdict > 3 || rows < 0 ||
	    rows > n_nodes || (net[0] && !npf_wire_net_key_valid(net)) ||
	    (best[0] && !npf_wire_net_key_valid(best)) || strlen(nodes) != (size_t)n_nodes ||
	    strspn(nodes, ".sm") != (size_t)n_nodes || strlen(reason) >= sizeof(m->reason))
		return -EBADMSG;
	for (const char *p = reason; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return -EBADMSG;
	m->nodes = strdup(nodes);
	if (!m->nodes)
		return -ENOMEM;
	memcpy(m->job, job, NPF_WIRE_JOB_ID_LEN + 1);
	m->n_nodes = (uint32_t)n_nodes;
	m->verdict = (uint8_t)verdict;
	snprintf(m->net, sizeof(m->net), "%s", net);
	snprintf(m->best, sizeof(m->best), "%s", best);
	m->n_rows = (uint32_t)rows;
	snprintf(m->reason, sizeof(m->reason), "%s", reason);
	return 0;
}

/* ---- ERROR ---- */

static const char *const err_names[NPF_WERR__COUNT] = {
	[NPF_WERR_BAD_REQUEST] = "bad-request",
	[NPF_WERR_UNSUPPORTED_VERSION] = "unsupported-version",
	[NPF_WERR_TOO_LARGE] = "too-large",
	[NPF_WERR_BUSY] = "busy",
	[NPF_WERR_FORBIDDEN] = "forbidden",
	[NPF_WERR_UNEXPECTED] = "unexpected",
};

const char *npf_wire_err_name(enum npf_wire_err e)
{
	if ((unsigned)e >= NPF_WERR__COUNT)
		return "unknown";
	return err_names[e];
}

json_t *npf_wire_error_to_json(const struct npf_msg_error *m)
{
	return json_pack("{s:s, s:s, s:i}", "code", npf_wire_err_name(m->code), "message",
			 m->message, "max_version", NPF_WIRE_VERSION);
}

int npf_wire_error_from_json(json_t *j, struct npf_msg_error *m)
{
	const char *code, *msg;
	json_int_t maxv;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:s, s:s, s:I !}", "code", &code, "message", &msg, "max_version",
			&maxv) < 0)
		return -EBADMSG;
	if (maxv < 1 || maxv > UINT16_MAX)
		return -EBADMSG;
	for (int i = 0; i < NPF_WERR__COUNT; i++) {
		if (strcmp(code, err_names[i]) == 0) {
			m->code = (enum npf_wire_err)i;
			/* Long messages are cut, not rejected: they are for humans. */
			snprintf(m->message, sizeof(m->message), "%s", msg);
			return 0;
		}
	}
	return -EBADMSG;
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
