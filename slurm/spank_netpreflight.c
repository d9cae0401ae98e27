// SPDX-License-Identifier: MIT
/* SPANK plugin: sets the environment verified by netpreflightd in each job step; user settings win,
 * another node's values (NETPREFLIGHT_NODE) do not. */
/*
 * plugstack.conf:   optional /usr/lib/.../spank_netpreflight.so [socket=PATH] [timeout_ms=N]
 *                                                              [default=off|warn|on]
 *                   (PATH may contain %n: this node's Slurm name)
 * srun/sbatch:      --netpreflight=off|warn|on
 *
 * In slurm_spank_user_init (remote context, once per step per node, as the user)
 * it asks the local daemon for the cached environment of the job's node set and
 * applies it by the rules of envmarker.h: a variable the user set is kept, one carried
 * from another node (srun --export=ALL, mpirun) is replaced. The query is bounded by
 * timeout_ms (default 1000): a daemon that is down, slow or has no verdict only
 * produces a log line, never a failed or stuck step.
 *   off   nothing is asked or set;
 *   warn  (default) variables are set when the daemon has them; a node set that
 *         is not verified ok is logged;
 *   on    as warn, and a definite "fail" verdict from the daemon fails the step
 *         (an unreachable daemon still does not).
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "client.h"
#include "envmarker.h"
#include "envreply.h"
#include "hostlist.h"
#include "model.h"

SPANK_PLUGIN(netpreflight, 1);

#define NPF_SPANK_SOCKET "/run/netpreflight/netpreflight.sock"
#define NPF_SPANK_TIMEOUT_MS 1000
#define NPF_SPANK_TIMEOUT_MAX_MS 10000
#define NPF_SPANK_NODELIST_MAX 65536

enum mode { MODE_OFF = 0, MODE_WARN, MODE_ON };

/* Plugin configuration (plugstack.conf arguments and the user's option); set
 * before any step callback runs, only read afterwards. */
static struct {
	char socket[108]; /* sun_path size */
	int timeout_ms;
	enum mode mode;
	bool user_mode; /* --netpreflight given */
} cfg = { NPF_SPANK_SOCKET, NPF_SPANK_TIMEOUT_MS, MODE_WARN, false };

static int parse_mode(const char *s, enum mode *out)
{
	if (!s)
		return -EINVAL;
	if (strcmp(s, "off") == 0)
		*out = MODE_OFF;
	else if (strcmp(s, "warn") == 0)
		*out = MODE_WARN;
	else if (strcmp(s, "on") == 0)
		*out = MODE_ON;
	else
		return -EINVAL;
	return 0;
}

static int opt_cb(int val, const char *arg, int remote)
{
	enum mode m;

	(void)val;
	(void)remote;
	if (parse_mode(arg, &m) < 0) {
		slurm_error("netpreflight: --netpreflight takes off, warn or on, not '%s'",
			    arg ? arg : "");
		return -1;
	}
	cfg.mode = m;
	cfg.user_mode = true;
	return 0;
}

/* struct spank_option has non-const char pointers. */
static char opt_name[] = "netpreflight";
static char opt_arginfo[] = "off|warn|on";
static char opt_usage[] = "Set the network environment verified by netpreflightd "
			  "(NCCL_SOCKET_IFNAME, ...): off, warn (default: set it, log "
			  "problems) or on (also fail the step when the network check failed).";

static struct spank_option opt = { opt_name, opt_arginfo, opt_usage, 1, 0, opt_cb };

static int parse_args(int ac, char **av)
{
	for (int i = 0; i < ac; i++) {
		const char *a = av[i];

		if (strncmp(a, "socket=", 7) == 0) {
			size_t n = strlen(a + 7);

			if (n == 0 || n >= sizeof(cfg.socket) || a[7] != '/') {
				slurm_error("netpreflight: bad socket= '%s'", a + 7);
				return -1;
			}
			memcpy(cfg.socket, a + 7, n + 1);
		} else if (strncmp(a, "timeout_ms=", 11) == 0) {
			char *end;
			long v = strtol(a + 11, &end, 10);

			if (*end || end == a + 11 || v < 1 || v > NPF_SPANK_TIMEOUT_MAX_MS) {
				slurm_error("netpreflight: bad timeout_ms= '%s' (1..%d)", a + 11,
					    NPF_SPANK_TIMEOUT_MAX_MS);
				return -1;
			}
			cfg.timeout_ms = (int)v;
		} else if (strncmp(a, "default=", 8) == 0) {
			if (parse_mode(a + 8, &cfg.mode) < 0) {
				slurm_error("netpreflight: bad default= '%s'", a + 8);
				return -1;
			}
		} else {
			slurm_error("netpreflight: unknown plugstack.conf argument '%s'", a);
			return -1;
		}
	}
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	if (parse_args(ac, av) < 0)
		return -1;
	/* Options exist for srun (local), sbatch/salloc (allocator) and in slurmstepd
	 * (remote), where the user's value arrives; slurmd itself has none. */
	if (ctx == S_CTX_LOCAL || ctx == S_CTX_REMOTE || ctx == S_CTX_ALLOCATOR) {
		if (spank_option_register(sp, &opt) != ESPANK_SUCCESS) {
			slurm_error("netpreflight: cannot register --netpreflight");
			return -1;
		}
	}
	return 0;
}

/* This node's Slurm name: the job's node list is in node-id order, so entry
 * S_JOB_NODEID is us. SLURMD_NODENAME is only added to each task's environment
 * later, and the host name differs from the Slurm name with several slurmd per
 * machine. */
static void node_name(spank_t sp, char **names, size_t n, char *out, size_t len)
{
	uint32_t id = 0;

	if (spank_get_item(sp, S_JOB_NODEID, &id) == ESPANK_SUCCESS && id < n) {
		snprintf(out, len, "%s", names[id]);
		return;
	}
	if (spank_getenv(sp, "SLURMD_NODENAME", out, (int)len) == ESPANK_SUCCESS && out[0])
		return;
	if (gethostname(out, len) < 0)
		out[0] = '\0';
	out[len - 1] = '\0';
	out[strcspn(out, ".")] = '\0';
}

/* The socket path with "%n" replaced by the node's Slurm name, as in slurm.conf's
 * own %n paths: several slurmd on one machine (test clusters, multiple-slurmd
 * setups) each talk to their own daemon. Returns 0 or -ENAMETOOLONG. */
static int socket_path(const char *node, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = cfg.socket; *p; p++) {
		const char *add = p[0] == '%' && p[1] == 'n' ? node : NULL;
		size_t n = add ? strlen(add) : 1;

		if (o + n >= len)
			return -ENAMETOOLONG;
		memcpy(out + o, add ? add : p, n);
		o += n;
		if (add)
			p++;
	}
	out[o] = '\0';
	return 0;
}

/* SLURM_JOB_NODELIST from the step's environment, SLURM_NODELIST as a fallback. */
static int job_nodelist(spank_t sp, char *buf, int len)
{
	if (spank_getenv(sp, "SLURM_JOB_NODELIST", buf, len) == ESPANK_SUCCESS && buf[0])
		return 0;
	if (spank_getenv(sp, "SLURM_NODELIST", buf, len) == ESPANK_SUCCESS && buf[0])
		return 0;
	return -ENOENT;
}

static json_t *build_request(char **names, size_t n)
{
	json_t *peers = json_array();

	for (size_t i = 0; peers && i < n; i++) {
		if (json_array_append_new(peers, json_string(names[i])) < 0) {
			json_decref(peers);
			peers = NULL;
		}
	}
	return peers ? npf_envreply_request(peers) : NULL;
}

/* The task's environment for the marker rules (envmarker.h). The buffer is per
 * lookup: the planner copies what it keeps before the next call. */
struct env_lookup {
	spank_t sp;
	char buf[NPF_ENVREPLY_VALUE_MAX];
};

static const char *lookup_env(const char *name, void *userdata)
{
	struct env_lookup *l = userdata;

	if (spank_getenv(l->sp, name, l->buf, (int)sizeof(l->buf)) != ESPANK_SUCCESS)
		return NULL;
	return l->buf;
}

/* Applies the plan: our values replace another node's (NETPREFLIGHT_NODE), a user's
 * own values are kept (never in the plan). */
static void apply_plan(spank_t sp, uint32_t job, const struct npf_envreply *env, const char *node)
{
	struct env_lookup *l = malloc(sizeof(*l));
	struct npf_envplan plan = { 0 };
	int r;

	if (!l)
		return;
	l->sp = sp;
	r = npf_envmarker_plan(env, node, lookup_env, l, &plan);
	free(l);
	if (r < 0) {
		slurm_info("netpreflight: job %u: %s; environment not set", job, strerror(-r));
		return;
	}
	for (size_t i = 0; i < plan.n_ops; i++) {
		const struct npf_envop *op = &plan.ops[i];
		spank_err_t e = op->kind == NPF_ENVOP_SET ? spank_setenv(sp, op->name, op->value, 1)
							  : spank_unsetenv(sp, op->name);

		if (e != ESPANK_SUCCESS)
			slurm_info("netpreflight: job %u: cannot %s %s: %s", job,
				   op->kind == NPF_ENVOP_SET ? "set" : "unset", op->name,
				   spank_strerror(e));
	}
	if (plan.other_node[0])
		slurm_info("netpreflight: job %u: replaced %zu value(s) inherited from node %.64s "
			   "with this node's (%.64s)",
			   job, plan.n_replaced, plan.other_node, node);
	npf_envplan_clear(&plan);
}

/* Logs the verdict; returns -1 only in mode "on" for a definite failure. */
static int judge(uint32_t job, const struct npf_envreply *env)
{
	if (strcmp(env->verdict, "ok") == 0)
		return 0;
	/* Only fail refuses; degraded (the whole job moved to a worse network, alike on
	 * every node: docs/decision.md §10) publishes its env like ok and is logged below. */
	if (cfg.mode == MODE_ON && strcmp(env->verdict, "fail") == 0) {
		slurm_error("netpreflight: job %u: network check failed: %s", job, env->summary);
		return -1;
	}
	slurm_info("netpreflight: job %u: network verdict %s: %s", job, env->verdict,
		   env->summary);
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	char *nodelist = NULL, **names = NULL, err[256] = "", why[256], node[NPF_NAME_MAX];
	char sock[sizeof(cfg.socket) + NPF_NAME_MAX];
	json_t *req = NULL, *reply = NULL;
	struct npf_envreply env = { 0 };
	uint32_t job = 0;
	size_t n = 0;
	int r, rc = 0;

	(void)ac;
	(void)av;
	if (!spank_remote(sp) || cfg.mode == MODE_OFF)
		return 0;
	spank_get_item(sp, S_JOB_ID, &job);
	nodelist = malloc(NPF_SPANK_NODELIST_MAX);
	if (!nodelist)
		return 0;
	if (job_nodelist(sp, nodelist, NPF_SPANK_NODELIST_MAX) < 0) {
		slurm_info("netpreflight: job %u: no SLURM_JOB_NODELIST, nothing set", job);
		goto out;
	}
	if (npf_hostlist_expand(nodelist, &names, &n, err, sizeof(err)) < 0) {
		slurm_error("netpreflight: job %u: bad node list '%.64s': %s", job, nodelist, err);
		goto out;
	}
	node_name(sp, names, n, node, sizeof(node));
	if (socket_path(node, sock, sizeof(sock)) < 0) {
		slurm_error("netpreflight: job %u: socket path too long: %s", job, cfg.socket);
		goto out;
	}
	req = build_request(names, n);
	if (!req)
		goto out;
	r = npf_client_request(sock, req, &reply, cfg.timeout_ms);
	if (r < 0) {
		/* Never block or fail the step because of our own daemon. */
		slurm_info("netpreflight: job %u: %s; environment not set", job,
			   npf_client_strerror(r, sock, why, sizeof(why)));
		goto unverified;
	}
	r = npf_envreply_parse(reply, &env, err, sizeof(err));
	if (r < 0) {
		slurm_info("netpreflight: job %u: no environment: %s", job, err);
		goto unverified;
	}
	apply_plan(sp, job, &env, node);
	rc = judge(job, &env);
	goto out;
unverified:
	/* Nothing verified here: another node's values, if inherited, must still go. */
	npf_envreply_clear(&env);
	apply_plan(sp, job, NULL, node);
out:
	npf_envreply_clear(&env);
	json_decref(reply);
	json_decref(req);
	npf_hostlist_free(names, n);
	free(nodelist);
	return rc;
}
