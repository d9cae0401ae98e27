// SPDX-License-Identifier: MIT
/* Probe protocol codec: frame header encoding, cursor reader and the strict JSON messages
 * of the probe session; the job check's messages are wire_job.c, the message registry
 * (and header decoding, which consults it) wire_registry.c. */
#include "wire.h"

#include "addr_json.h"
#include "auth.h"
#include "wire_internal.h"

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
	json_t *a = npf_addr_json(&m->addr, NPF_ADDR_JSON_IP);

	return a ? json_pack("{s:I, s:I, s:o}", "id", (json_int_t)m->id, "bytes",
			     (json_int_t)m->bytes, "addr", a)
		 : NULL;
}

static bool bulk_valid(json_int_t b)
{
	return b >= NPF_WIRE_MIN_BULK && b <= NPF_WIRE_MAX_BULK;
}

int npf_wire_open_data_from_json(json_t *j, struct npf_msg_open_data *m)
{
	json_int_t id, b;
	const char *addr;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:I, s:I, s:s !}", "id", &id, "bytes", &b, "addr", &addr) < 0 ||
	    id < 0 || id > UINT32_MAX || !bulk_valid(b) || npf_wire_addr_parse(addr, &m->addr) < 0)
		return -EBADMSG;
	m->id = (uint32_t)id;
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
	return add_hex(json_pack("{s:I, s:i, s:s}", "id", (json_int_t)m->id, "port", (int)m->port,
				 "token", tok),
		       m->has_nonce, "nonce", m->nonce, sizeof(m->nonce));
}

int npf_wire_open_data_reply_from_json(json_t *j, struct npf_msg_open_data_reply *m)
{
	json_int_t id, port;
	const char *tok, *nonce = NULL;

	memset(m, 0, sizeof(*m));
	if (json_unpack(j, "{s:I, s:I, s:s, s?:s !}", "id", &id, "port", &port, "token", &tok,
			"nonce", &nonce) < 0)
		return -EBADMSG;
	if (id < 0 || id > UINT32_MAX || port < 0 || port > 65535 ||
	    hex_exact(tok, m->token, sizeof(m->token)) < 0 ||
	    opt_hex(nonce, m->nonce, sizeof(m->nonce), &m->has_nonce) < 0)
		return -EBADMSG;
	m->id = (uint32_t)id;
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
		const struct npf_rev_target *x = &m->targets[i];
		json_t *a = npf_addr_json(&x->addr, NPF_ADDR_JSON_IP);
		char tok[2 * NPF_WIRE_TOKEN_LEN + 1];

		sodium_bin2hex(tok, sizeof(tok), x->token, sizeof(x->token));
		if (!a || json_array_append_new(
			      t, add_hex(json_pack("{s:o, s:i, s:s}", "addr", a, "port",
						   (int)x->port, "token", tok),
					 x->has_nonce, "nonce", x->nonce, sizeof(x->nonce))) < 0) {
			json_decref(t);
			return NULL;
		}
	}
	o = json_pack("{s:I, s:I, s:I, s:o}", "id", (json_int_t)m->id, "timeout_ms",
		      (json_int_t)m->timeout_ms, "bytes", (json_int_t)m->bytes, "targets", t);
	return o;
}

static bool target_seen(const struct npf_rev_target *t, size_t n, const struct npf_addr *x)
{
	for (size_t i = 0; i < n; i++)
		if (addr_seen(&t[i].addr, 1, x))
			return true;
	return false;
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
		struct npf_rev_target *x = &m->targets[i];
		const char *addr, *tok, *nonce = NULL;
		json_int_t port;

		if (json_unpack(v, "{s:s, s:I, s:s, s?:s !}", "addr", &addr, "port", &port,
				"token", &tok, "nonce", &nonce) < 0 ||
		    npf_wire_addr_parse(addr, &x->addr) < 0 || port < 1 || port > 65535 ||
		    hex_exact(tok, x->token, sizeof(x->token)) < 0 ||
		    opt_hex(nonce, x->nonce, sizeof(x->nonce), &x->has_nonce) < 0)
			return -EBADMSG;
		x->port = (uint16_t)port;
		/* Distinct targets: a request must not multiply connections to one host. */
		if (target_seen(m->targets, i, &x->addr))
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
