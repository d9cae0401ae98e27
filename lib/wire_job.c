// SPDX-License-Identifier: MIT
/* Probe protocol codec, the job check's messages: ROW (one node's pair states per network)
 * and JOB_DECISION (the coordinator's answer), strict JSON both ways. */
#include "wire.h"
#include "wire_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
