// SPDX-License-Identifier: MIT
/* netpreflight run: the job check the Slurm Prolog runs, on every node of a job at once, then
 * CMD with the verified environment (the TaskProlog's rules), or not at all on a failure.
 * Node list and job id from the options or from the launcher's environment (lib/launcher.c). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../slurm/envmarker.h"
#include "../slurm/envreply.h"
#include "api.h"
#include "cli.h"
#include "client.h"
#include "hostlist.h"
#include "launcher.h"
#include "verdict.h"

#ifndef NPF_DAEMON_PATH
#define NPF_DAEMON_PATH "/usr/sbin/netpreflightd"
#endif

#define NODEFILE_MAX (8u * 1024 * 1024) /* a node file of 64k slots of 128-byte names */
#define ENV_WAIT_MS 5000		/* a cached answer: the daemon replies at once */
#define PEERS_WAIT_MS 20000	/* --standalone: the other nodes' runs starting theirs */

/* What run does with CMD: one row per (this node's verdict, suspects elsewhere in the job).
 * The Prolog's rules: fail refuses, unknown (netpreflight's own trouble, peers that did not
 * answer) never blocks a job. Unlike a Prolog, run has no scheduler to requeue the job
 * without its suspects, and ranks cannot start without them: every node refuses. */
enum run_class { RC_OK, RC_FAIL, RC_UNKNOWN };
enum run_action { RA_EXEC, RA_EXEC_UNVERIFIED, RA_REFUSE };

#define ANY (-1)

static const struct run_rule {
	enum run_class verdict;
	signed char suspects; /* the job check names suspects (this node or others); ANY */
	enum run_action action;
	int json_exit; /* the exit status of run --json (no CMD) */
	const char *why;
} run_rules[] = {
	{ RC_OK, 0, RA_EXEC, CLI_EXIT_OK, "" },
	{ RC_OK, 1, RA_REFUSE, CLI_EXIT_FAIL,
	  "the job check blames other node(s) of the job, which will not start" },
	{ RC_FAIL, ANY, RA_REFUSE, CLI_EXIT_FAIL, "this node failed the job check" },
	{ RC_UNKNOWN, ANY, RA_EXEC_UNVERIFIED, CLI_EXIT_UNKNOWN,
	  "no verified answer: started without the verified environment" },
};

static const char *const action_names[] = {
	[RA_EXEC] = "exec",
	[RA_EXEC_UNVERIFIED] = "exec-unverified",
	[RA_REFUSE] = "refuse",
};

static const struct run_rule *run_rule(enum run_class v, bool suspects)
{
	for (size_t i = 0; i < sizeof(run_rules) / sizeof(run_rules[0]); i++)
		if (run_rules[i].verdict == v &&
		    (run_rules[i].suspects == ANY || (run_rules[i].suspects != 0) == suspects))
			return &run_rules[i];
	return &run_rules[sizeof(run_rules) / sizeof(run_rules[0]) - 1];
}

static enum run_class classify(const char *verdict)
{
	switch (npf_verdict_parse(verdict)) {
	case NPF_VERDICT_OK:
	case NPF_VERDICT_DEGRADED:
		return RC_OK;
	case NPF_VERDICT_FAIL:
		return RC_FAIL;
	default:
		return RC_UNKNOWN;
	}
}

static const char *getenv_fn(const char *name, void *userdata)
{
	(void)userdata;
	return getenv(name);
}

/* Where the job's nodes and tag came from, and the nodes as a hostlist. */
struct run_job {
	const char *source; /* "--nodes", "--hostfile", or a launcher's variable */
	const char *launcher;
	char tag[NPF_API_JOB_MAX];
	char *hostlist; /* owned: the nodes, comma-joined, in launcher order */
};

/* Reads a node file of at most NODEFILE_MAX bytes. *buf owned by the caller (free()).
 * Returns the length or -errno. */
static ssize_t read_file(const char *path, char **buf)
{
	size_t len = 0, cap = 4096;
	char *b = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*buf = NULL;
	if (fd < 0 || !b) {
		int e = fd < 0 ? errno : ENOMEM;

		if (fd >= 0)
			close(fd);
		free(b);
		return -e;
	}
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *nb = cap >= NODEFILE_MAX ? NULL : realloc(b, 2 * cap);

			if (!nb) {
				close(fd);
				free(b);
				return cap >= NODEFILE_MAX ? -EFBIG : -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			close(fd);
			free(b);
			return -e;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	*buf = b;
	return (ssize_t)len;
}

/* The node list of form from text (file: a path to read) as a comma-joined hostlist in
 * job->hostlist. Prints the error itself. Returns 0 or -errno. */
static int nodes_from(struct run_job *job, enum npf_nodes_form form, const char *text)
{
	char *buf = NULL, **names = NULL, err[200];
	size_t n = 0, len, off = 0;
	ssize_t got;
	int r;

	if (form == NPF_NODES_FILE) {
		got = read_file(text, &buf);
		if (got < 0) {
			cli_err("%s: cannot read '%s': %s", job->source, text, strerror((int)-got));
			return (int)got;
		}
		len = (size_t)got;
	} else {
		len = strlen(text);
	}
	r = npf_launcher_nodes(form, buf ? buf : text, len, &names, &n, err, sizeof(err));
	free(buf);
	if (r < 0) {
		cli_err("%s: %s", job->source, err);
		return r;
	}
	/* Valid names carry no ',' or '[': joined, they are a hostlist of exactly them. */
	len = 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	job->hostlist = malloc(len + 1);
	for (size_t i = 0; job->hostlist && i < n; i++)
		off += (size_t)sprintf(job->hostlist + off, "%s%s", i ? "," : "", names[i]);
	npf_hostlist_free(names, n);
	return job->hostlist ? 0 : -ENOMEM;
}

/* Fills job from the options, and what they leave open from the launcher. */
static int resolve_job(struct run_job *job, const char *nodes, const char *hostfile,
		       const char *tag)
{
	struct npf_launch l = { 0 };
	int r = 0;

	if (!nodes && !hostfile) {
		r = npf_launcher_detect(getenv_fn, NULL, &l);
	} else if (!tag) {
		/* The job id still comes from the launcher (a hostfile of its own). */
		r = npf_launcher_detect(getenv_fn, NULL, &l);
		if (r == -ENOENT)
			r = 0;
	}
	if (r == -ENOENT) {
		cli_err("no node list: give --nodes or --hostfile, or run inside a Slurm, PBS or "
			"LSF job (docs/run.md)");
		return r;
	}
	if (r < 0) {
		cli_err("the launcher's job id makes no job tag (1..%d characters); give --job",
			NPF_API_JOB_MAX - 1);
		return r;
	}
	job->launcher = l.launcher;
	if (nodes) {
		job->source = "--nodes";
		r = nodes_from(job, NPF_NODES_HOSTLIST, nodes);
	} else if (hostfile) {
		job->source = "--hostfile";
		r = nodes_from(job, NPF_NODES_FILE, hostfile);
	} else {
		job->source = l.nodes_var;
		r = nodes_from(job, l.form, l.nodes);
	}
	if (r == 0 && !tag && !l.launcher) {
		cli_err("no job tag: give --job TAG, the same on every node of the job");
		r = -EINVAL;
	}
	if (r == 0)
		snprintf(job->tag, sizeof(job->tag), "%s", tag ? tag : l.job);
	npf_launch_clear(&l);
	return r;
}

/* The node's answer: the job check's, then the environment its decision publishes. */
struct run_answer {
	json_t *check_reply; /* owned; NULL when the check gave no answer */
	json_t *env_reply;   /* owned; NULL when no environment came */
	const char *verdict; /* in one of the replies, or "unknown" */
	const char *summary;
	bool suspects;
	char why[300]; /* why there is no answer, "" when there is one */
};

static void answer_clear(struct run_answer *a)
{
	json_decref(a->check_reply);
	json_decref(a->env_reply);
	memset(a, 0, sizeof(*a));
}

/* One request; *reply only for {"ok":true}. Error text in a->why. */
static int ask(const struct cli_global *g, json_t *rq, int wait_ms, json_t **reply,
	       struct run_answer *a, const char *what)
{
	struct npf_api_error aerr;
	char msg[256];
	int r = npf_client_request(g->socket_path, rq, reply, wait_ms);

	if (r < 0) {
		snprintf(a->why, sizeof(a->why), "%s: %s", what,
			 npf_client_strerror(r, g->socket_path, msg, sizeof(msg)));
		return r;
	}
	r = npf_api_reply_status(*reply, &aerr);
	if (r < 0) {
		snprintf(a->why, sizeof(a->why), "%s: daemon: %s (%s)", what, aerr.message,
			 npf_api_errcode_name(aerr.code));
		if (aerr.code == NPF_API_E_FOREIGN_NETNS)
			cli_daemon_err(&aerr);
		json_decref(*reply);
		*reply = NULL;
		return r == -EREMOTEIO && aerr.code == NPF_API_E_FORBIDDEN ? -EPERM : r;
	}
	return 0;
}

/* The job check, as the Prolog runs it; then, from the daemon's cache, the environment its
 * decision publishes (the TaskProlog's request). A user who may not start probes gets the
 * decision the Prolog left in the cache. */
static void check_and_env(const struct cli_global *g, const struct run_job *job,
			  uint32_t timeout_ms, uint32_t max_timeout_ms, struct run_answer *a)
{
	json_t *rq = NULL, *peers = NULL, *cj, *v;
	char **names = NULL, err[160];
	size_t n = 0;
	int r;

	/* The Prolog's rule (slurm/netpreflight-prolog, docs/decision.md): a job check that
	 * ends unknown gets one more try as the job's last (its own tag, --settle), which may
	 * settle on a network verified between every pair (degraded). */
	for (int attempt = 0; attempt < 2; attempt++) {
		char tag[NPF_API_JOB_MAX + 2];
		bool settle = attempt == 1;

		a->verdict = "unknown";
		a->summary = "";
		snprintf(tag, sizeof(tag), "%s%s", job->tag, settle ? ".s" : "");
		if (strlen(tag) >= NPF_API_JOB_MAX) {
			snprintf(a->why, sizeof(a->why), "job tag too long for the last try");
			return;
		}
		if (cli_check_request(job->hostlist, timeout_ms, max_timeout_ms, tag, settle, &rq,
				      &n) < 0) {
			snprintf(a->why, sizeof(a->why), "cannot build the check request");
			return;
		}
		json_decref(a->check_reply);
		a->check_reply = NULL;
		r = ask(g, rq, cli_check_wait_ms(timeout_ms, max_timeout_ms, true), &a->check_reply,
			a, "job check");
		json_decref(rq);
		rq = NULL;
		if (r < 0 && r != -EPERM)
			return;
		if (!a->check_reply)
			break;
		cj = json_object_get(a->check_reply, "check");
		v = json_object_get(cj, "verdict");
		a->verdict = json_string_value(json_object_get(v, "verdict"));
		a->summary = json_string_value(json_object_get(v, "summary"));
		if (!a->verdict || npf_verdict_parse(a->verdict) < 0) {
			snprintf(a->why, sizeof(a->why), "job check: malformed reply");
			a->verdict = "unknown";
		}
		a->suspects =
			json_array_size(json_object_get(json_object_get(cj, "job"), "suspects")) > 0;
		if (classify(a->verdict) != RC_UNKNOWN)
			break;
	}
	if (a->check_reply && (classify(a->verdict) != RC_OK || a->suspects))
		return;
	a->why[0] = '\0';
	if (npf_hostlist_expand(job->hostlist, &names, &n, err, sizeof(err)) < 0)
		return;
	peers = json_array();
	for (size_t i = 0; peers && i < n; i++)
		if (json_array_append_new(peers, json_string(names[i])) < 0)
			break;
	npf_hostlist_free(names, n);
	rq = peers ? npf_envreply_request(peers) : NULL;
	if (!rq) {
		snprintf(a->why, sizeof(a->why), "out of memory");
		return;
	}
	r = ask(g, rq, ENV_WAIT_MS, &a->env_reply, a, "environment");
	json_decref(rq);
	if (r < 0) {
		a->verdict = "unknown";
		return;
	}
	v = json_object_get(a->env_reply, "verdict");
	if (!a->check_reply && json_is_string(v)) {
		a->verdict = json_string_value(v);
		a->summary = json_string_value(json_object_get(a->env_reply, "summary"));
	}
}

/* This node's name for the marker when the daemon's reply carries none. */
static void self_name(char *buf, size_t len)
{
	char *dot;

	if (gethostname(buf, len) < 0)
		snprintf(buf, len, "localhost");
	buf[len - 1] = '\0';
	dot = strchr(buf, '.');
	if (dot)
		*dot = '\0';
}

/* The environment CMD gets: the marker plan (slurm/envmarker.c) over our own environment. */
static int plan_env(const struct run_answer *a, bool verified, struct npf_envplan *plan)
{
	struct npf_envreply env = { 0 };
	char self[NPF_NAME_MAX], err[200];
	int r;

	self_name(self, sizeof(self));
	if (verified) {
		r = npf_envreply_parse(a->env_reply, &env, err, sizeof(err));
		if (r < 0) {
			cli_err("the daemon's environment: %s", err);
			return r;
		}
	}
	r = npf_envmarker_plan(verified ? &env : NULL, self, getenv_fn, NULL, plan);
	npf_envreply_clear(&env);
	return r;
}

static int apply_plan(const struct npf_envplan *plan)
{
	for (size_t i = 0; i < plan->n_ops; i++) {
		const struct npf_envop *op = &plan->ops[i];
		int r = op->kind == NPF_ENVOP_SET ? setenv(op->name, op->value, 1) :
						    unsetenv(op->name);

		if (r < 0) {
			cli_err("cannot set %s: %s", op->name, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/* run --json: the decision, what CMD would get, and nothing started (docs/json.md). */
static int print_json(const struct run_job *job, const struct run_answer *a,
		      const struct run_rule *rule, const struct npf_envplan *plan, unsigned port)
{
	json_t *doc, *set = json_object(), *unset = json_array();
	int r;

	for (size_t i = 0; set && unset && plan && i < plan->n_ops; i++) {
		const struct npf_envop *op = &plan->ops[i];

		if (op->kind == NPF_ENVOP_SET)
			json_object_set_new(set, op->name, json_string(op->value));
		else
			json_array_append_new(unset, json_string(op->name));
	}
	doc = json_pack("{s:s, s:i, s:s, s:s?, s:s, s:s, s:s, s:s, s:s, s:s, s:O?, s:o*, s:o*}",
			"schema", "netpreflight.run", "version", NPF_API_VERSION, "source",
			job->source, "launcher", job->launcher, "job", job->tag, "nodes",
			job->hostlist, "verdict", a->verdict, "summary",
			a->summary ? a->summary : "", "action", action_names[rule->action],
			"reason", a->why[0] ? a->why : rule->why, "check",
			json_object_get(a->check_reply, "check"), "set", set, "unset", unset);
	/* --standalone: the probe port every node of the job derived. */
	if (doc && port && json_object_set_new(doc, "port", json_integer(port)) < 0) {
		json_decref(doc);
		doc = NULL;
	}
	if (!doc) {
		cli_err("cannot build JSON");
		return -ENOMEM;
	}
	r = json_dumpf(doc, stdout, JSON_INDENT(2));
	json_decref(doc);
	fputc('\n', stdout);
	return r < 0 || fflush(stdout) != 0 ? -EIO : 0;
}

static void usage(FILE *f)
{
	cli_usage(f, "run");
}

int cmd_run(int argc, char **argv, const struct cli_global *g)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "hostfile", required_argument, NULL, 'H' },
		{ "job", required_argument, NULL, 'J' },
		{ "timeout", required_argument, NULL, 't' },
		{ "max-timeout", required_argument, NULL, 'T' },
		{ "standalone", no_argument, NULL, 'S' },
		{ "port", required_argument, NULL, 'p' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "node-name", required_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *nodes = NULL, *hostfile = NULL, *tag = NULL, *key_file = NULL, *daemon;
	const char *node_name = NULL;
	struct cli_standalone sa = { .hold = -1 };
	struct cli_global gl = *g;
	bool standalone = false;
	unsigned long port = 0;
	uint16_t sa_port = 0;
	char self[NPF_NAME_MAX];
	char *end;
	struct run_job job = { 0 };
	struct run_answer a = { 0 };
	struct npf_envplan plan = { 0 };
	const struct run_rule *rule;
	uint32_t timeout_ms = 0, max_timeout_ms = 0;
	bool json = g->json;
	int c, rc = CLI_EXIT_ERROR;

	optind = 1;
	/* '+': the first word that is no option is CMD; its own options are its own. */
	while ((c = getopt_long(argc, argv, "+n:H:J:t:T:Sp:k:N:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			nodes = optarg;
			break;
		case 'H':
			hostfile = optarg;
			break;
		case 'J':
			tag = optarg;
			break;
		case 't':
		case 'T':
			if (cli_parse_seconds(optarg, c == 't' ? &timeout_ms : &max_timeout_ms) <
			    0) {
				cli_err("--%s '%s': seconds between %.1f and %u",
					c == 't' ? "timeout" : "max-timeout", optarg,
					NPF_API_TIMEOUT_MIN_MS / 1000.0,
					NPF_API_TIMEOUT_MAX_MS / 1000);
				return CLI_EXIT_ERROR;
			}
			break;
		case 'S':
			standalone = true;
			break;
		case 'p':
			errno = 0;
			port = strtoul(optarg, &end, 10);
			if (errno || *end || port < 1 || port > 65535) {
				cli_err("--port '%s': 1..65535", optarg);
				return CLI_EXIT_ERROR;
			}
			break;
		case 'k':
			key_file = optarg;
			break;
		case 'N':
			node_name = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_EXIT_OK;
		default:
			usage(stderr);
			return CLI_EXIT_ERROR;
		}
	}
	if ((nodes && hostfile) || (optind >= argc && !json)) {
		usage(stderr);
		return CLI_EXIT_ERROR;
	}
	if ((port || key_file || node_name) && !standalone) {
		cli_err("--port, --key-file and --node-name go with --standalone");
		return CLI_EXIT_ERROR;
	}
	if (node_name && !npf_api_name_valid(node_name)) {
		cli_err("--node-name '%s': 1..%d of [A-Za-z0-9._-]", node_name, NPF_NAME_MAX - 1);
		return CLI_EXIT_ERROR;
	}
	if (key_file && access(key_file, R_OK) < 0) {
		/* Never a silent downgrade to unauthenticated probes. */
		cli_err("--key-file '%s': %s", key_file, strerror(errno));
		return CLI_EXIT_ERROR;
	}
	if (resolve_job(&job, nodes, hostfile, tag) < 0)
		goto out;
	if (standalone) {
		daemon = getenv("NPF_DAEMON");
		if (!daemon || !*daemon)
			daemon = NPF_DAEMON_PATH;
		/* Every node derives the same port from the tag: no talking needed. */
		sa_port = port ? (uint16_t)port : npf_launcher_port(job.tag);
		/* The engine takes the name the job lists us by (Kubernetes: pod names with
		 * the headless service's domain), so the others' probes find us. */
		if (node_name)
			snprintf(self, sizeof(self), "%s", node_name);
		else if (cli_standalone_self(job.hostlist, self, sizeof(self)) < 0)
			self[0] = '\0';
		if (cli_standalone_start(&sa, daemon, sa_port, key_file, self[0] ? self : NULL) ==
		    0) {
			char missing[256];
			int left = cli_standalone_wait_peers(job.hostlist, sa_port,
							     PEERS_WAIT_MS, missing,
							     sizeof(missing));

			gl.socket_path = sa.sock;
			/* The check says what that means (peer-unavailable: unknown). */
			if (left > 0)
				cli_err("--standalone: no probe engine on port %u after %u s on "
					"%d node(s): %s",
					sa_port, PEERS_WAIT_MS / 1000, left, missing);
		} else {
			snprintf(a.why, sizeof(a.why), "--standalone: no probe engine");
		}
	}
	if (!standalone || sa.hold >= 0)
		check_and_env(&gl, &job, timeout_ms, max_timeout_ms, &a);
	else
		a.verdict = "unknown";
	/* The slower nodes may still probe us and wait for the coordinator's answer: up to
	 * this check's budget again, twice over, and slack (cli_check_wait_ms). */
	cli_standalone_linger(&sa, (uint32_t)cli_check_wait_ms(
					   (uint32_t)json_integer_value(json_object_get(
						   json_object_get(a.check_reply, "check"),
						   "timeout_ms")),
					   max_timeout_ms, true));
	rule = run_rule(classify(a.verdict), a.suspects);
	if (rule->action != RA_REFUSE &&
	    plan_env(&a, rule->action == RA_EXEC && a.env_reply, &plan) < 0)
		goto out;
	if (json) {
		if (print_json(&job, &a, rule, rule->action == RA_REFUSE ? NULL : &plan,
			       standalone ? sa_port : 0) == 0)
			rc = rule->json_exit;
		goto out;
	}
	if (rule->action == RA_REFUSE) {
		fputs(cli_verdict_line("fail"), stderr);
		fprintf(stderr, "job %s: %s: ", job.tag, rule->why);
		cli_put_clean(stderr, a.summary && a.summary[0] ? a.summary : a.verdict);
		fputs("; command not started\n", stderr);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (rule->action == RA_EXEC_UNVERIFIED) {
		fprintf(stderr, "netpreflight: job %s: %s: ", job.tag, rule->why);
		cli_put_clean(stderr, a.why[0] ? a.why : a.summary ? a.summary : a.verdict);
		fputc('\n', stderr);
	}
	if (apply_plan(&plan) < 0)
		goto out;
	npf_envplan_clear(&plan);
	answer_clear(&a);
	free(job.hostlist);
	fflush(NULL);
	execvp(argv[optind], argv + optind);
	/* The shell's statuses: 127 not found, 126 found but not runnable. */
	rc = errno == ENOENT ? 127 : 126;
	cli_err("cannot run '%s': %s", argv[optind], strerror(errno));
	return rc;
out:
	/* The linger is told: letting go starts it. */
	if (sa.hold >= 0)
		close(sa.hold);
	npf_envplan_clear(&plan);
	answer_clear(&a);
	free(job.hostlist);
	return rc;
}
