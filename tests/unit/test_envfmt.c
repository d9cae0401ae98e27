// SPDX-License-Identifier: MIT
/* Output formats: shell output survives eval with hostile values, TaskProlog refuses what it
 * cannot carry, nccl.conf holds NCCL_* only, JSON carries verdict, env and reasons. */
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
#include <unistd.h>

#include "envfmt.h"

static void add_var(struct npf_recommendation *r, const char *name, const char *value)
{
	struct npf_envvar *n = realloc(r->vars, (r->n_vars + 1) * sizeof(*n));

	assert_non_null(n);
	r->vars = n;
	snprintf(n[r->n_vars].name, sizeof(n[r->n_vars].name), "%s", name);
	n[r->n_vars].value = strdup(value);
	assert_non_null(n[r->n_vars].value);
	r->n_vars++;
}

static void add_note(struct npf_recommendation *r, const char *text)
{
	struct npf_note *n = realloc(r->notes, (r->n_notes + 1) * sizeof(*n));

	assert_non_null(n);
	r->notes = n;
	memset(&n[r->n_notes], 0, sizeof(*n));
	n[r->n_notes].code = NPF_NOTE_CAVEAT;
	n[r->n_notes].var = NPF_VAR_NONE;
	n[r->n_notes].text = strdup(text);
	assert_non_null(n[r->n_notes].text);
	r->n_notes++;
}

/* A verified answer with the usual variables. */
static void base_rec(struct npf_recommendation *r)
{
	memset(r, 0, sizeof(*r));
	r->verdict = NPF_VERDICT_OK;
	snprintf(r->summary, sizeof(r->summary),
		 "ok: ens1f0 (198.18.2.0/24) works to and from 2 peers");
	r->have_choice = true;
	snprintf(r->ifname, sizeof(r->ifname), "ens1f0");
	r->addr.family = AF_INET;
	inet_pton(AF_INET, "198.18.2.1", r->addr.addr);
	snprintf(r->cidr, sizeof(r->cidr), "198.18.2.0/24");
	r->nccl_version = NPF_NCCL_VERSION(2, 21, 5);
	add_var(r, "NCCL_SOCKET_IFNAME", "=ens1f0");
	add_var(r, "NCCL_IB_HCA", "=mlx5_0:1");
	add_var(r, "GLOO_SOCKET_IFNAME", "ens1f0");
	add_var(r, "OMPI_MCA_btl_tcp_if_include", "198.18.2.0/24");
}

static char *render(const struct npf_recommendation *r, enum npf_envfmt fmt, size_t *omitted)
{
	char *out = NULL;
	int n = npf_env_format(r, fmt, &out, omitted);

	assert_true(n >= 0);
	assert_non_null(out);
	assert_int_equal((size_t)n, strlen(out));
	return out;
}

/* Runs text with sh, then prints each variable of the space-separated names as "value|". */
static char *sh_eval(const char *text, const char *names)
{
	char path[] = "/tmp/npf-envfmt-XXXXXX";
	char cmd[128], buf[256], *res, *tok, *save = NULL;
	int fd = mkstemp(path);
	FILE *f, *p;
	size_t n;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	snprintf(buf, sizeof(buf), "%s", names);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		fprintf(f, "\nprintf '%%s|' \"$%s\"", tok);
	fputc('\n', f);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "cd /tmp && sh %s", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	res = calloc(1, 4096);
	assert_non_null(res);
	n = fread(res, 1, 4095, p);
	res[n] = '\0';
	assert_int_equal(pclose(p), 0);
	unlink(path);
	return res;
}

static void shell_quoting_survives_eval(void **state)
{
	struct npf_recommendation r;
	const char *marker = "/tmp/npf-envfmt-pwned";
	char *out, *got;
	size_t omitted = 99;
	(void)state;

	unlink(marker);
	base_rec(&r);
	add_var(&r, "QUOTE", "it's");
	add_var(&r, "SUBST", "$(touch /tmp/npf-envfmt-pwned)`touch /tmp/npf-envfmt-pwned`");
	add_var(&r, "NL", "a b\nc");
	add_var(&r, "BAD-NAME", "x");
	/* A peer's name ends up in notes: it must not end the comment. */
	add_note(&r, "node\n touch /tmp/npf-envfmt-pwned\n# x");
	out = render(&r, NPF_ENVFMT_SHELL, &omitted);
	assert_int_equal(omitted, 1);
	assert_non_null(strstr(out, "export NCCL_SOCKET_IFNAME='=ens1f0'\n"));
	assert_non_null(strstr(out, "export QUOTE='it'\\''s'\n"));
	assert_null(strstr(out, "BAD-NAME"));
	assert_non_null(strstr(out, "# netpreflight: ok: ens1f0"));
	got = sh_eval(out, "NCCL_SOCKET_IFNAME QUOTE SUBST NL OMPI_MCA_btl_tcp_if_include");
	assert_string_equal(got, "=ens1f0|it's|$(touch /tmp/npf-envfmt-pwned)`touch "
				 "/tmp/npf-envfmt-pwned`|a b\nc|198.18.2.0/24|");
	assert_int_equal(access(marker, F_OK), -1);
	free(got);
	free(out);
	npf_recommendation_clear(&r);
}

static void taskprolog_refuses_unsafe(void **state)
{
	struct npf_recommendation r;
	char *out;
	size_t omitted = 0;
	(void)state;

	base_rec(&r);
	add_var(&r, "SPACE", "a b");
	add_var(&r, "NEWLINE", "a\nexport LD_PRELOAD=/x.so");
	add_var(&r, "TAB", "a\tb");
	add_var(&r, "EMPTY", "");
	add_note(&r, "a note that TaskProlog must not print");
	out = render(&r, NPF_ENVFMT_TASKPROLOG, &omitted);
	assert_int_equal(omitted, 4);
	/* Exactly what slurmstepd reads: export lines, no quoting, nothing else. */
	assert_string_equal(out, "export NCCL_SOCKET_IFNAME==ens1f0\n"
				 "export NCCL_IB_HCA==mlx5_0:1\n"
				 "export GLOO_SOCKET_IFNAME=ens1f0\n"
				 "export OMPI_MCA_btl_tcp_if_include=198.18.2.0/24\n");
	free(out);
	npf_recommendation_clear(&r);
}

static void nccl_conf_only_nccl(void **state)
{
	struct npf_recommendation r;
	char *out, *line, *save = NULL;
	size_t omitted = 0, nccl = 0;
	(void)state;

	base_rec(&r);
	add_var(&r, "NCCL_IB_ADDR_RANGE", "198.18.2.0/24 ");
	add_note(&r, "bad\nNCCL_SOCKET_IFNAME=lo");
	out = render(&r, NPF_ENVFMT_NCCL_CONF, &omitted);
	assert_int_equal(omitted, 1);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		/* KEY=VALUE split at the first '=', as NCCL's setEnvFile does. */
		assert_true(strncmp(line, "NCCL_", 5) == 0);
		nccl++;
		if (strncmp(line, "NCCL_SOCKET_IFNAME=", 19) == 0)
			assert_string_equal(line + 19, "=ens1f0");
	}
	assert_int_equal(nccl, 2);
	free(out);
	npf_recommendation_clear(&r);
}

static void no_env_unless_ok(void **state)
{
	struct npf_recommendation r;
	char *out;
	(void)state;

	for (int v = NPF_VERDICT_UNKNOWN; v <= NPF_VERDICT_FAIL; v++) {
		if (v == NPF_VERDICT_OK)
			continue;
		base_rec(&r);
		r.verdict = (enum npf_verdict)v;
		out = render(&r, NPF_ENVFMT_SHELL, NULL);
		assert_null(strstr(out, "export"));
		assert_non_null(strstr(out, "# netpreflight:"));
		free(out);
		out = render(&r, NPF_ENVFMT_TASKPROLOG, NULL);
		assert_string_equal(out, "");
		free(out);
		out = render(&r, NPF_ENVFMT_NCCL_CONF, NULL);
		assert_null(strstr(out, "NCCL_SOCKET_IFNAME="));
		free(out);
		npf_recommendation_clear(&r);
	}
	assert_int_equal(npf_env_format(NULL, NPF_ENVFMT_SHELL, &out, NULL), -EINVAL);
	base_rec(&r);
	assert_int_equal(npf_env_format(&r, (enum npf_envfmt)7, &out, NULL), -EINVAL);
	npf_recommendation_clear(&r);
}

/* degraded (the job check moved the whole job to a worse network, docs/decision.md §10)
 * publishes exactly as ok does, in every format and in JSON, and shows no failure. */
static void degraded_publishes(void **state)
{
	struct npf_recommendation r;
	json_t *j;
	char *out;
	(void)state;

	base_rec(&r);
	r.verdict = NPF_VERDICT_DEGRADED;
	snprintf(r.summary, sizeof(r.summary),
		 "degraded: ens1f0 (198.18.2.0/24) works to and from 3 peers; the job moved from "
		 "198.18.9.0/24: node4 fails there");
	/* A stray failure field must not surface next to a published environment. */
	snprintf(r.fail_node, sizeof(r.fail_node), "node4");
	out = render(&r, NPF_ENVFMT_SHELL, NULL);
	assert_non_null(strstr(out, "export NCCL_SOCKET_IFNAME='=ens1f0'\n"));
	assert_non_null(strstr(out, "# netpreflight: degraded: ens1f0"));
	free(out);
	out = render(&r, NPF_ENVFMT_TASKPROLOG, NULL);
	assert_non_null(strstr(out, "export NCCL_SOCKET_IFNAME==ens1f0\n"));
	free(out);
	out = render(&r, NPF_ENVFMT_NCCL_CONF, NULL);
	assert_non_null(strstr(out, "NCCL_SOCKET_IFNAME==ens1f0"));
	free(out);
	j = npf_recommendation_to_json(&r);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "degraded");
	assert_int_equal(json_object_size(json_object_get(j, "env")), 4);
	assert_true(json_is_true(json_object_get(json_object_get(j, "choice"), "verified")));
	assert_true(json_is_null(json_object_get(j, "failure")));
	json_decref(j);
	npf_recommendation_clear(&r);
}

static void format_names(void **state)
{
	(void)state;
	assert_int_equal(npf_envfmt_parse("shell"), NPF_ENVFMT_SHELL);
	assert_int_equal(npf_envfmt_parse("taskprolog"), NPF_ENVFMT_TASKPROLOG);
	assert_int_equal(npf_envfmt_parse("nccl-conf"), NPF_ENVFMT_NCCL_CONF);
	assert_int_equal(npf_envfmt_parse("json"), -EINVAL);
	assert_int_equal(npf_envfmt_parse(NULL), -EINVAL);
}

static void json_ok(void **state)
{
	struct npf_recommendation r;
	json_t *j, *env, *rej, *def, *hca;
	char *dump;
	(void)state;

	base_rec(&r);
	add_note(&r, "bytes \xff\xfe from a peer");
	r.rejections = calloc(1, sizeof(*r.rejections));
	assert_non_null(r.rejections);
	r.n_rejections = 1;
	snprintf(r.rejections[0].ifname, IFNAMSIZ, "docker0");
	snprintf(r.rejections[0].reason, NPF_REC_REASON_MAX, "172.17.0.0/16: wrong-peer");
	r.rejections[0].peer = 1;
	snprintf(r.rejections[0].peer_name, NPF_NAME_MAX, "node2");
	r.rejections[0].outcome = NPF_OUT_WRONG_PEER;
	r.hcas = calloc(1, sizeof(*r.hcas));
	assert_non_null(r.hcas);
	r.n_hcas = 1;
	snprintf(r.hcas[0].dev, NPF_NAME_MAX, "mlx5_0");
	r.hcas[0].port = 1;
	r.hcas[0].gid_index = 3;
	r.hcas[0].auto_gid = 3;
	r.hcas[0].published = true;
	r.nccl_default_found = true;
	snprintf(r.nccl_default.ifname, IFNAMSIZ, "docker0");
	r.nccl_default.addr.family = AF_INET;
	inet_pton(AF_INET, "172.17.0.1", r.nccl_default.addr.addr);
	r.nccl_default.list = "^docker,lo";
	snprintf(r.nccl_default_text, sizeof(r.nccl_default_text), "NCCL's default ...");

	j = npf_recommendation_to_json(&r);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "ok");
	assert_int_equal(json_integer_value(json_object_get(j, "nccl_version")), 22105);
	env = json_object_get(j, "env");
	assert_string_equal(json_string_value(json_object_get(env, "NCCL_SOCKET_IFNAME")),
			    "=ens1f0");
	assert_int_equal(json_object_size(env), 4);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "choice"),
							      "network")),
			    "198.18.2.0/24");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "choice"),
							      "address")),
			    "198.18.2.1");
	rej = json_array_get(json_object_get(j, "rejected"), 0);
	assert_string_equal(json_string_value(json_object_get(rej, "outcome")), "wrong-peer");
	assert_string_equal(json_string_value(json_object_get(rej, "peer")), "node2");
	assert_string_equal(json_string_value(json_object_get(rej, "direction")), "forward");
	def = json_object_get(j, "nccl_default");
	assert_string_equal(json_string_value(json_object_get(def, "ifname")), "docker0");
	assert_string_equal(json_string_value(json_object_get(def, "address")), "172.17.0.1");
	assert_false(json_is_true(json_object_get(def, "passed")));
	hca = json_array_get(json_object_get(j, "hcas"), 0);
	assert_int_equal(json_integer_value(json_object_get(hca, "gid_index")), 3);
	assert_true(json_is_null(json_object_get(hca, "why")));
	/* Invalid UTF-8 from a peer is replaced, not a reason to lose the whole answer. */
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "notes"), 0)),
			    "bytes ?? from a peer");
	assert_true(json_is_null(json_object_get(j, "failure")));
	dump = json_dumps(j, JSON_COMPACT);
	assert_non_null(dump);
	free(dump);
	json_decref(j);
	npf_recommendation_clear(&r);
}

static void json_fail_and_current(void **state)
{
	struct npf_recommendation r;
	json_t *j, *fail;
	(void)state;

	base_rec(&r);
	r.verdict = NPF_VERDICT_FAIL;
	r.have_choice = false;
	r.nccl_version = NPF_NCCL_VERSION_CURRENT;
	snprintf(r.fail_node, sizeof(r.fail_node), "node3");
	snprintf(r.fail_ifname, sizeof(r.fail_ifname), "ens1f0");
	r.fail_outcome = NPF_OUT_TIMEOUT;
	r.fail_dir = NPF_DIR_REVERSE;
	j = npf_recommendation_to_json(&r);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "fail");
	assert_string_equal(json_string_value(json_object_get(j, "nccl_version")), "current");
	/* No variables leave a failed verdict, even if the struct holds some. */
	assert_int_equal(json_object_size(json_object_get(j, "env")), 0);
	assert_true(json_is_null(json_object_get(j, "choice")));
	fail = json_object_get(j, "failure");
	assert_string_equal(json_string_value(json_object_get(fail, "node")), "node3");
	assert_string_equal(json_string_value(json_object_get(fail, "outcome")), "timeout");
	assert_string_equal(json_string_value(json_object_get(fail, "direction")), "reverse");
	json_decref(j);
	npf_recommendation_clear(&r);
	assert_null(npf_recommendation_to_json(NULL));
}

/* End to end: a real decision, rendered and evaluated. */
static void decision_to_shell(void **state)
{
	struct npf_inventory inv = { 0 };
	struct npf_check chk = { 0 };
	struct npf_recommendation rec;
	struct npf_addr a = { .family = AF_INET, .prefixlen = 24 };
	char *out, *got;
	(void)state;

	inv.ifaces = calloc(1, sizeof(*inv.ifaces));
	assert_non_null(inv.ifaces);
	inv.n_ifaces = 1;
	snprintf(inv.ifaces[0].name, IFNAMSIZ, "eth0");
	inv.ifaces[0].ifindex = 2;
	inv.ifaces[0].flags = IFF_UP | IFF_RUNNING;
	inet_pton(AF_INET, "198.18.1.1", a.addr);
	assert_int_equal(npf_iface_add_addr(&inv.ifaces[0], &a), 0);
	chk.n_nodes = 2;
	chk.nodes = calloc(2, sizeof(*chk.nodes));
	assert_non_null(chk.nodes);
	for (int k = 0; k < 2; k++) {
		snprintf(chk.nodes[k].name, NPF_NAME_MAX, "node%d", k + 1);
		chk.nodes[k].available = true;
		chk.nodes[k].cands = calloc(1, sizeof(*chk.nodes[k].cands));
		assert_non_null(chk.nodes[k].cands);
		chk.nodes[k].n_cands = 1;
		snprintf(chk.nodes[k].cands[0].ifname, IFNAMSIZ, "eth0");
		chk.nodes[k].cands[0].addr = a;
		chk.nodes[k].cands[0].addr.addr[3] = (uint8_t)(k + 1);
	}
	chk.links = calloc(1, sizeof(*chk.links));
	assert_non_null(chk.links);
	chk.n_links = 1;
	snprintf(chk.links[0].ifname, IFNAMSIZ, "eth0");
	chk.links[0].peer = 1;
	assert_int_equal(npf_recommend(&inv, &chk, NULL, &rec), 0);
	assert_int_equal(rec.verdict, NPF_VERDICT_OK);
	out = render(&rec, NPF_ENVFMT_SHELL, NULL);
	got = sh_eval(out, "NCCL_SOCKET_IFNAME OMPI_MCA_oob_tcp_if_include");
	assert_string_equal(got, "=eth0|198.18.1.0/24|");
	free(got);
	free(out);
	/* The node marker rides along in every format (nccl.conf: as a comment, the file
	 * stays NCCL's), and the JSON carries the notes as data. */
	out = render(&rec, NPF_ENVFMT_SHELL, NULL);
	got = sh_eval(out, "NETPREFLIGHT_NODE PRTE_MCA_prte_if_include");
	assert_string_equal(got, "node1|198.18.1.0/24|");
	free(got);
	free(out);
	out = render(&rec, NPF_ENVFMT_TASKPROLOG, NULL);
	assert_non_null(strstr(out, "export NETPREFLIGHT_NODE=node1\n"));
	free(out);
	out = render(&rec, NPF_ENVFMT_NCCL_CONF, NULL);
	assert_non_null(strstr(out, "# NETPREFLIGHT_NODE=node1\n"));
	assert_null(strstr(out, "\nNETPREFLIGHT_NODE"));
	free(out);
	{
		json_t *j = npf_recommendation_to_json(&rec);
		json_t *env, *nd;

		assert_non_null(j);
		env = json_object_get(j, "env");
		assert_string_equal(json_string_value(json_object_get(env, "NETPREFLIGHT_NODE")),
				    "node1");
		nd = json_object_get(j, "note_details");
		assert_true(json_is_array(nd));
		assert_int_equal(json_array_size(nd), json_array_size(json_object_get(j, "notes")));
		json_decref(j);
	}
	npf_recommendation_clear(&rec);
	npf_check_clear(&chk);
	npf_inventory_clear(&inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shell_quoting_survives_eval),
		cmocka_unit_test(taskprolog_refuses_unsafe),
		cmocka_unit_test(nccl_conf_only_nccl),
		cmocka_unit_test(no_env_unless_ok),
		cmocka_unit_test(degraded_publishes),
		cmocka_unit_test(format_names),
		cmocka_unit_test(json_ok),
		cmocka_unit_test(json_fail_and_current),
		cmocka_unit_test(decision_to_shell),
	};

	return npf_run_tests(tests, NULL, NULL);
}
