// SPDX-License-Identifier: MIT
/* A check <-> JSON: the nodes, their candidates, the paths and links of one check, the
 * verdict rows; the reply the daemon caches and the CLI decodes. */
#include "api.h"
#include "api_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "addr_json.h"
#include "envfmt.h"
#include "verdict.h"


/* Upper bounds on decoded arrays, far above anything real, so a hostile or
 * corrupt reply cannot make the client allocate without limit. */
#define MAX_CANDS 1024u
#define MAX_IFNAMES 4096u
#define MAX_PATHS (1u << 20)
#define MAX_LINKS (1u << 20)

/* Bit order of enum npf_role. */
static const char *const role_names[] = {
	"container-bridge", "overlay", "vpn", "link-local-only", "virtual-port", "rdma", "management",
};
#define N_ROLES (sizeof(role_names) / sizeof(role_names[0]))

/* ---- check <-> JSON ---- */

static int addr_parse(const json_t *v, struct npf_addr *a)
{
	char ip[INET6_ADDRSTRLEN + 1];
	const char *s = json_string_value(v), *slash;
	unsigned long pl;
	char *end;
	size_t n;

	memset(a, 0, sizeof(*a));
	if (!v || json_is_null(v))
		return 0;
	if (!s)
		return -EBADMSG;
	slash = strchr(s, '/');
	n = slash ? (size_t)(slash - s) : strlen(s);
	if (n == 0 || n >= sizeof(ip))
		return -EBADMSG;
	memcpy(ip, s, n);
	ip[n] = '\0';
	if (inet_pton(AF_INET, ip, a->addr) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, ip, a->addr) == 1)
		a->family = AF_INET6;
	else
		return -EBADMSG;
	if (slash) {
		if (slash[1] < '0' || slash[1] > '9')
			return -EBADMSG;
		errno = 0;
		pl = strtoul(slash + 1, &end, 10);
		if (errno || *end || pl > (a->family == AF_INET ? 32u : 128u))
			return -EBADMSG;
		a->prefixlen = (uint8_t)pl;
	}
	return 0;
}

static int get_str(const json_t *o, const char *key, char *dst, size_t cap)
{
	const json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	if (!s || n >= cap || strlen(s) != n)
		return -EBADMSG;
	memcpy(dst, s, n + 1);
	return 0;
}

static int get_u64(const json_t *o, const char *key, uint64_t max, uint64_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return -EBADMSG;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_u32(const json_t *o, const char *key, uint32_t *out)
{
	uint64_t x;
	int r = get_u64(o, key, UINT32_MAX, &x);

	if (r == 0)
		*out = (uint32_t)x;
	return r;
}

static int get_bool(const json_t *o, const char *key, bool *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_boolean(v))
		return -EBADMSG;
	*out = json_is_true(v);
	return 0;
}

static int get_outcome(const json_t *o, const char *key, enum npf_outcome *out)
{
	int r = npf_outcome_parse(json_string_value(json_object_get(o, key)));

	if (r < 0)
		return -EBADMSG;
	*out = (enum npf_outcome)r;
	return 0;
}

static json_t *roles_json(uint32_t roles)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < N_ROLES; i++)
		if (roles & (1u << i) && json_array_append_new(a, json_string(role_names[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static int roles_parse(const json_t *a, uint32_t *roles)
{
	size_t i;
	const json_t *v;

	*roles = 0;
	if (!json_is_array(a))
		return -EBADMSG;
	json_array_foreach (a, i, v) {
		const char *s = json_string_value(v);
		size_t k;

		for (k = 0; s && k < N_ROLES; k++)
			if (strcmp(s, role_names[k]) == 0)
				break;
		/* Unknown role names from a newer daemon are not an error. */
		if (!s)
			return -EBADMSG;
		if (k < N_ROLES)
			*roles |= 1u << k;
	}
	return 0;
}

static int kind_parse(const char *s)
{
	for (int k = 0; s && k < NPF_KIND__COUNT; k++)
		if (strcmp(s, npf_kind_name((enum npf_kind)k)) == 0)
			return k;
	return NPF_KIND_UNKNOWN;
}

static json_t *cand_json(const struct npf_candidate *c)
{
	json_t *rdma = json_null();

	if (c->rdma_dev[0])
		rdma = json_pack("{s:s, s:i, s:s, s:b, s:o}", "device", c->rdma_dev, "port",
				 c->rdma_port, "link_layer", npf_link_layer_name(c->rdma_ll),
				 "active", c->rdma_active, "gid_index",
				 c->has_gid ? json_integer(c->gid_index) : json_null());
	return json_pack("{s:s, s:o, s:s, s:o, s:I, s:o, s:o}", "ifname", c->ifname, "address",
			 npf_addr_json(&c->addr, NPF_ADDR_JSON_CIDR), "kind", npf_kind_name(c->kind), "roles",
			 roles_json(c->roles), "mtu", (json_int_t)c->mtu, "speed_mbps",
			 c->speed_mbps < 0 ? json_null() : json_integer((json_int_t)c->speed_mbps),
			 "rdma", rdma);
}

static int cand_parse(const json_t *o, struct npf_candidate *c)
{
	const json_t *rdma = json_object_get(o, "rdma"), *v;
	uint64_t port;
	int ll;

	if (!json_is_object(o) || get_str(o, "ifname", c->ifname, sizeof(c->ifname)) < 0 ||
	    addr_parse(json_object_get(o, "address"), &c->addr) < 0 ||
	    roles_parse(json_object_get(o, "roles"), &c->roles) < 0 ||
	    get_u32(o, "mtu", &c->mtu) < 0)
		return -EBADMSG;
	c->kind = (enum npf_kind)kind_parse(json_string_value(json_object_get(o, "kind")));
	v = json_object_get(o, "speed_mbps");
	if (json_is_null(v))
		c->speed_mbps = NPF_SPEED_UNKNOWN;
	else if (json_is_integer(v) && json_integer_value(v) >= 0)
		c->speed_mbps = json_integer_value(v);
	else
		return -EBADMSG;
	if (!rdma || json_is_null(rdma))
		return 0;
	if (!json_is_object(rdma) || get_str(rdma, "device", c->rdma_dev, sizeof(c->rdma_dev)) < 0 ||
	    get_u64(rdma, "port", 255, &port) < 0 || get_bool(rdma, "active", &c->rdma_active) < 0)
		return -EBADMSG;
	c->rdma_port = (int)port;
	/* Optional (older replies lack it); null: not known. */
	v = json_object_get(rdma, "gid_index");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > UINT16_MAX)
			return -EBADMSG;
		c->has_gid = true;
		c->gid_index = (uint16_t)json_integer_value(v);
	}
	c->rdma_ll = NPF_LL_UNKNOWN;
	v = json_object_get(rdma, "link_layer");
	for (ll = 0; json_is_string(v) && ll <= NPF_LL_ETHERNET; ll++)
		if (strcmp(npf_link_layer_name((enum npf_link_layer)ll), json_string_value(v)) == 0)
			c->rdma_ll = (enum npf_link_layer)ll;
	return 0;
}

static json_t *node_json(const struct npf_node *n)
{
	json_t *cands = json_array(), *names = json_array();
	char inst[17];

	snprintf(inst, sizeof(inst), "%016" PRIx64, n->instance);
	for (size_t i = 0; cands && i < n->n_cands; i++)
		if (json_array_append_new(cands, cand_json(&n->cands[i])) < 0)
			goto err;
	for (size_t i = 0; names && i < n->n_ifnames; i++)
		if (json_array_append_new(names, json_string(n->ifnames[i])) < 0)
			goto err;
	return json_pack("{s:s, s:s, s:b, s:b, s:s, s:o, s:o, s:I, s:I, s:I, s:o}", "name",
			 n->name, "instance", inst, "available", n->available, "probed", n->probed,
			 "error", n->error, "candidates", cands, "interfaces", names,
			 "hello_rtt_us", (json_int_t)n->hello_rtt_us, "reverse_ms",
			 (json_int_t)n->rev_ms, "inconclusive", (json_int_t)n->n_inconclusive,
			 "name_address", npf_addr_json(&n->name_addr, NPF_ADDR_JSON_CIDR));
err:
	json_decref(cands);
	json_decref(names);
	return NULL;
}

static int node_parse(const json_t *o, struct npf_node *n)
{
	const json_t *cands = json_object_get(o, "candidates"), *names, *v;
	const char *inst;
	char *end;
	size_t i;

	if (!json_is_object(o) || get_str(o, "name", n->name, sizeof(n->name)) < 0 ||
	    get_bool(o, "available", &n->available) < 0 ||
	    get_str(o, "error", n->error, sizeof(n->error)) < 0)
		return -EBADMSG;
	/* Optional: state files written before the field existed still load. */
	if (json_object_get(o, "probed") && get_bool(o, "probed", &n->probed) < 0)
		return -EBADMSG;
	if ((json_object_get(o, "hello_rtt_us") && get_u32(o, "hello_rtt_us", &n->hello_rtt_us) < 0) ||
	    (json_object_get(o, "reverse_ms") && get_u32(o, "reverse_ms", &n->rev_ms) < 0) ||
	    (json_object_get(o, "inconclusive") &&
	     get_u32(o, "inconclusive", &n->n_inconclusive) < 0))
		return -EBADMSG;
	/* Optional, as above; null when unknown. */
	if (addr_parse(json_object_get(o, "name_address"), &n->name_addr) < 0)
		return -EBADMSG;
	inst = json_string_value(json_object_get(o, "instance"));
	if (!inst || strlen(inst) != 16 || inst[0] == '-' || inst[0] == '+')
		return -EBADMSG;
	errno = 0;
	n->instance = strtoull(inst, &end, 16);
	if (errno || *end)
		return -EBADMSG;
	names = json_object_get(o, "interfaces");
	if (!json_is_array(cands) || json_array_size(cands) > MAX_CANDS || !json_is_array(names) ||
	    json_array_size(names) > MAX_IFNAMES)
		return -EBADMSG;
	if (json_array_size(cands)) {
		n->cands = calloc(json_array_size(cands), sizeof(*n->cands));
		if (!n->cands)
			return -ENOMEM;
	}
	json_array_foreach (cands, i, v) {
		if (cand_parse(v, &n->cands[i]) < 0)
			return -EBADMSG;
		n->n_cands++;
	}
	if (json_array_size(names)) {
		n->ifnames = calloc(json_array_size(names), sizeof(*n->ifnames));
		if (!n->ifnames)
			return -ENOMEM;
	}
	json_array_foreach (names, i, v) {
		const char *s = json_string_value(v);

		if (!s || json_string_length(v) >= IFNAMSIZ || strlen(s) != json_string_length(v))
			return -EBADMSG;
		memcpy(n->ifnames[i], s, strlen(s) + 1);
		n->n_ifnames++;
	}
	return 0;
}

static const char *peer_name(const struct npf_check *c, int peer)
{
	if (peer < 0 || (size_t)peer >= c->n_nodes)
		return "";
	return c->nodes[peer].name;
}

static int peer_parse(const struct npf_check *c, const json_t *o, int *peer)
{
	const char *s = json_string_value(json_object_get(o, "peer"));

	for (size_t i = 1; s && i < c->n_nodes; i++)
		if (strcmp(c->nodes[i].name, s) == 0) {
			*peer = (int)i;
			return 0;
		}
	return -EBADMSG;
}

static json_t *path_json(const struct npf_check *c, const struct npf_path *p)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:s, s:o, s:s, s:I, s:s}", "peer",
			 peer_name(c, p->peer), "direction", npf_direction_name(p->dir), "local_if",
			 p->local_if, "local_addr", npf_addr_json(&p->local_addr, NPF_ADDR_JSON_CIDR), "peer_if", p->peer_if,
			 "peer_addr", npf_addr_json(&p->peer_addr, NPF_ADDR_JSON_CIDR), "outcome",
			 npf_outcome_name(p->outcome), "rtt_us", (json_int_t)p->rtt_us, "detail",
			 p->detail);
}

static int path_parse(const struct npf_check *c, const json_t *o, struct npf_path *p)
{
	const char *dir = json_string_value(json_object_get(o, "direction"));

	if (!json_is_object(o) || peer_parse(c, o, &p->peer) < 0 || !dir ||
	    get_str(o, "local_if", p->local_if, sizeof(p->local_if)) < 0 ||
	    addr_parse(json_object_get(o, "local_addr"), &p->local_addr) < 0 ||
	    get_str(o, "peer_if", p->peer_if, sizeof(p->peer_if)) < 0 ||
	    addr_parse(json_object_get(o, "peer_addr"), &p->peer_addr) < 0 ||
	    get_outcome(o, "outcome", &p->outcome) < 0 || get_u32(o, "rtt_us", &p->rtt_us) < 0 ||
	    get_str(o, "detail", p->detail, sizeof(p->detail)) < 0)
		return -EBADMSG;
	if (strcmp(dir, "forward") == 0)
		p->dir = NPF_DIR_FORWARD;
	else if (strcmp(dir, "reverse") == 0)
		p->dir = NPF_DIR_REVERSE;
	else
		return -EBADMSG;
	return 0;
}

static json_t *link_json(const struct npf_check *c, const struct npf_link *l)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:o, s:s, s:s}", "ifname", l->ifname,
			 "peer", peer_name(c, l->peer), "fwd", npf_outcome_name(l->fwd), "rev",
			 npf_outcome_name(l->rev), "fwd_rtt_us", (json_int_t)l->fwd_rtt_us,
			 "rev_rtt_us", (json_int_t)l->rev_rtt_us, "peer_if", l->peer_if, "peer_addr",
			 npf_addr_json(&l->peer_addr, NPF_ADDR_JSON_CIDR), "fwd_detail", l->fwd_detail, "rev_detail",
			 l->rev_detail);
}

static int link_parse(const struct npf_check *c, const json_t *o, struct npf_link *l)
{
	if (!json_is_object(o) || get_str(o, "ifname", l->ifname, sizeof(l->ifname)) < 0 ||
	    peer_parse(c, o, &l->peer) < 0 || get_outcome(o, "fwd", &l->fwd) < 0 ||
	    get_outcome(o, "rev", &l->rev) < 0 || get_u32(o, "fwd_rtt_us", &l->fwd_rtt_us) < 0 ||
	    get_u32(o, "rev_rtt_us", &l->rev_rtt_us) < 0 ||
	    get_str(o, "peer_if", l->peer_if, sizeof(l->peer_if)) < 0 ||
	    addr_parse(json_object_get(o, "peer_addr"), &l->peer_addr) < 0 ||
	    get_str(o, "fwd_detail", l->fwd_detail, sizeof(l->fwd_detail)) < 0 ||
	    get_str(o, "rev_detail", l->rev_detail, sizeof(l->rev_detail)) < 0)
		return -EBADMSG;
	return 0;
}


/* The verdict is the decision's (npf_recommend); the per-interface rows are the
 * evidence behind it, as the matrix shows them (lib/verdict.h). */
static json_t *verdict_json(const struct npf_check *c, const struct npf_recommendation *rec)
{
	struct npf_verdict_report r;
	json_t *ifs, *out = NULL;

	if (npf_verdict_compute(c, &r) < 0)
		return NULL;
	ifs = json_array();
	for (size_t i = 0; ifs && i < r.n_ifaces; i++) {
		const struct npf_verdict_iface *vi = &r.ifaces[i];
		json_t *fail = json_null();

		if (vi->fail_peer >= 0)
			fail = json_pack("{s:s, s:s, s:s, s:s}", "peer", peer_name(c, vi->fail_peer),
					 "direction", npf_direction_name(vi->fail_dir), "outcome",
					 npf_outcome_name(vi->fail_outcome), "detail",
					 vi->fail_detail);
		if (json_array_append_new(ifs, json_pack("{s:s, s:b, s:I, s:o}", "ifname",
							 vi->ifname, "works", vi->works,
							 "ok_peers", (json_int_t)vi->n_ok,
							 "failure", fail)) < 0) {
			json_decref(ifs);
			ifs = NULL;
		}
	}
	/* The summary may quote peer-supplied names. */
	if (ifs)
		out = json_pack("{s:s, s:o, s:I, s:I, s:o}", "verdict",
				npf_verdict_name(rec->verdict), "summary",
				api_safe_string(rec->summary, strnlen(rec->summary, sizeof(rec->summary))),
				"peers", (json_int_t)r.n_peers, "unavailable",
				(json_int_t)r.n_unavailable, "interfaces", ifs);
	npf_verdict_report_clear(&r);
	return out;
}

/* What load did to the check (docs/json.md "load"). */
static json_t *load_json(const struct npf_check *c)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "tick_us", (json_int_t)c->tick_us,
			 "loop_samples", (json_int_t)c->loop_samples, "loop_late_max_us",
			 (json_int_t)c->loop_late_max_us, "loop_late_50ms",
			 (json_int_t)c->loop_late_50ms, "inconclusive_paths",
			 (json_int_t)c->n_inconclusive, "retried_paths", (json_int_t)c->n_retried,
			 "shared_paths", (json_int_t)c->n_shared);
}

static int load_parse(const json_t *o, struct npf_check *c)
{
	if (!o)
		return 0; /* written before the field existed */
	if (!json_is_object(o) || get_u32(o, "tick_us", &c->tick_us) < 0 ||
	    get_u32(o, "loop_samples", &c->loop_samples) < 0 ||
	    get_u32(o, "loop_late_max_us", &c->loop_late_max_us) < 0 ||
	    get_u32(o, "loop_late_50ms", &c->loop_late_50ms) < 0 ||
	    get_u32(o, "inconclusive_paths", &c->n_inconclusive) < 0 ||
	    get_u32(o, "retried_paths", &c->n_retried) < 0 ||
	    get_u32(o, "shared_paths", &c->n_shared) < 0)
		return -EBADMSG;
	return 0;
}

json_t *npf_check_to_json(const struct npf_check *c, const struct npf_recommendation *rec)
{
	json_t *nodes = json_array(), *paths = json_array(), *links = json_array(), *j;

	if (!nodes || !paths || !links)
		goto err;
	for (size_t i = 0; i < c->n_nodes; i++)
		if (json_array_append_new(nodes, node_json(&c->nodes[i])) < 0)
			goto err;
	for (size_t i = 0; i < c->n_paths; i++)
		if (json_array_append_new(paths, path_json(c, &c->paths[i])) < 0)
			goto err;
	for (size_t i = 0; i < c->n_links; i++)
		if (json_array_append_new(links, link_json(c, &c->links[i])) < 0)
			goto err;
	/* json_pack steals the "o" references even when it fails. */
	j = json_pack("{s:I, s:I, s:I, s:b, s:s, s:o, s:o, s:o}", "started_unix_ms",
		      (json_int_t)c->started_unix_ms, "duration_ms", (json_int_t)c->duration_ms,
		      "timeout_ms", (json_int_t)c->timeout_ms, "sparse", c->sparse, "self",
		      c->n_nodes ? c->nodes[0].name : "", "nodes", nodes, "paths", paths, "links",
		      links);
	if (j && json_object_set_new(j, "load", load_json(c)) < 0) {
		json_decref(j);
		return NULL;
	}
	if (j && rec &&
	    (json_object_set_new(j, "verdict", verdict_json(c, rec)) < 0 ||
	     json_object_set_new(j, "recommendation", npf_recommendation_to_json(rec)) < 0)) {
		json_decref(j);
		return NULL;
	}
	return j;
err:
	json_decref(nodes);
	json_decref(paths);
	json_decref(links);
	return NULL;
}

static int check_parse(const json_t *j, struct npf_check *c)
{
	const json_t *nodes = json_object_get(j, "nodes"), *paths = json_object_get(j, "paths");
	const json_t *links = json_object_get(j, "links"), *v;
	size_t i;

	if (!json_is_object(j) || get_u64(j, "started_unix_ms", INT64_MAX, &c->started_unix_ms) < 0 ||
	    get_u32(j, "duration_ms", &c->duration_ms) < 0 ||
	    get_u32(j, "timeout_ms", &c->timeout_ms) < 0 || get_bool(j, "sparse", &c->sparse) < 0 ||
	    load_parse(json_object_get(j, "load"), c) < 0)
		return -EBADMSG;
	if (!json_is_array(nodes) || json_array_size(nodes) == 0 ||
	    json_array_size(nodes) > NPF_API_MAX_PEERS + 1 || !json_is_array(paths) ||
	    json_array_size(paths) > MAX_PATHS || !json_is_array(links) ||
	    json_array_size(links) > MAX_LINKS)
		return -EBADMSG;
	c->nodes = calloc(json_array_size(nodes), sizeof(*c->nodes));
	if (!c->nodes)
		return -ENOMEM;
	json_array_foreach (nodes, i, v) {
		/* Count first so npf_check_clear frees a half-parsed node. */
		c->n_nodes++;
		if (node_parse(v, &c->nodes[i]) < 0)
			return -EBADMSG;
		for (size_t k = 0; k < i; k++)
			if (strcmp(c->nodes[k].name, c->nodes[i].name) == 0)
				return -EBADMSG;
	}
	if (json_array_size(paths)) {
		c->paths = calloc(json_array_size(paths), sizeof(*c->paths));
		if (!c->paths)
			return -ENOMEM;
	}
	json_array_foreach (paths, i, v) {
		if (path_parse(c, v, &c->paths[i]) < 0)
			return -EBADMSG;
		c->n_paths++;
	}
	if (json_array_size(links)) {
		c->links = calloc(json_array_size(links), sizeof(*c->links));
		if (!c->links)
			return -ENOMEM;
	}
	json_array_foreach (links, i, v) {
		if (link_parse(c, v, &c->links[i]) < 0)
			return -EBADMSG;
		c->n_links++;
	}
	return 0;
}

int npf_check_from_json(const json_t *j, struct npf_check *c)
{
	int r = check_parse(j, c);

	if (r < 0)
		npf_check_clear(c);
	return r;
}
