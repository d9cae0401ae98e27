/* SPDX-License-Identifier: MIT */
/* Sub-command interface of the netpreflight CLI. */
#ifndef NPF_CLI_H
#define NPF_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api.h"

/* Exit codes shared by every command (documented in docs/json.md). */
enum {
	CLI_EXIT_OK = 0,     /* success; for check/env: a verified answer (verdict ok or
			      * degraded) */
	CLI_EXIT_FAIL = 1,   /* check/env: verdict fail, no network works for this node */
	CLI_EXIT_ERROR = 2,  /* usage, daemon not running, bad input */
	CLI_EXIT_UNKNOWN = 3 /* check/env: verdict unknown (peers not answering): not ok,
			      * and not a failure to drain a node for either */
};

struct cli_global {
	const char *socket_path; /* --socket, default NPF_DEFAULT_SOCKET */
	const char *sysfs_root;  /* --sysfs-root, NULL = /sys */
	bool json;               /* --json anywhere on the line */
};

#define NPF_DEFAULT_SOCKET "/run/netpreflight/netpreflight.sock"

/* Each command gets argv after its own name (getopt-ready: argv[0] is the
 * command name) and returns one of the exit codes above. */
typedef int (*cli_cmd_fn)(int argc, char **argv, const struct cli_global *g);

int cmd_interfaces(int argc, char **argv, const struct cli_global *g);
int cmd_rdma(int argc, char **argv, const struct cli_global *g);
int cmd_check(int argc, char **argv, const struct cli_global *g);
int cmd_status(int argc, char **argv, const struct cli_global *g);
int cmd_key(int argc, char **argv, const struct cli_global *g);
int cmd_env(int argc, char **argv, const struct cli_global *g);
int cmd_explain(int argc, char **argv, const struct cli_global *g);
int cmd_run(int argc, char **argv, const struct cli_global *g);

/* usage.c: a command's synopsis ("check --nodes HOSTLIST ..."; the name itself for an
 * unknown command), and its usage line on f. */
const char *cli_synopsis(const char *cmd);
void cli_usage(FILE *f, const char *cmd);

/* common.c: "3", "2.5", "3s" -> milliseconds within the API's timeout bounds.
 * Returns 0, -EINVAL or -ERANGE. */
int cli_parse_seconds(const char *s, uint32_t *ms);
/* common.c: req->job = job after checking it (1..NPF_API_JOB_MAX-1 of [A-Za-z0-9._-]);
 * prints the error itself. Returns 0 or -EINVAL. */
int cli_set_job(const char *job, struct npf_api_request *req);
/* cmd_check.c: the JSON of a "check" request for the hostlist nodes (job: a tag or NULL;
 * settle: the job's last try, which may settle on a verified network, needs job;
 * checked here, the error printed). *out is a new reference. Returns 0 or -errno. */
int cli_check_request(const char *nodes, uint32_t timeout_ms, uint32_t max_timeout_ms,
		      const char *job, bool settle, json_t **out, size_t *n_nodes);
/* How long a client waits for a check's reply: its budget (0, 0: the daemon's largest
 * default), twice for a job check, plus slack. */
int cli_check_wait_ms(uint32_t timeout_ms, uint32_t max_timeout_ms, bool job);
/* Expands a Slurm hostlist into req->peers (owned by req: npf_api_request_clear),
 * order kept. Prints the error itself. Returns 0 or -errno. */
int cli_hostlist_peers(const char *nodes, struct npf_api_request *req);
/* Prints a daemon's error reply; a foreign-netns refusal gets what to do about it. */
void cli_daemon_err(const struct npf_api_error *aerr);
/* The exit code for a verdict name ("ok" and "degraded" 0, "fail", "unknown"; anything
 * else: error). */
int cli_verdict_exit(const char *verdict);
/* The prefix of the human verdict line: "netpreflight: ", "netpreflight: DEGRADED: ",
 * "netpreflight: NOT OK: ". */
const char *cli_verdict_line(const char *verdict);

/* report.c: the human report of a recommendation object (docs/decision.md): NCCL's
 * default pick, the choice and how far it was verified, one line per rejected
 * interface, the notes. n_peers/duration_ms < 0: unknown. Control characters
 * from peers are printed as '?'. */
void cli_print_recommendation(FILE *f, const json_t *rec, long long n_peers,
			      long long duration_ms);
/* fputs with every control character but '\n' written as '?'. */
void cli_put_clean(FILE *f, const char *s);

/* "checking N nodes... 1.2s of 3.0s" on stderr once a request takes more than a
 * moment; an npf_client_request_progress() callback. timeout_ms 0 = no bound shown. */
struct cli_progress {
	size_t n_nodes;
	uint32_t timeout_ms;
	bool shown; /* a line was drawn: the caller ends it */
};
void cli_show_progress(uint32_t elapsed_ms, void *userdata);

/* standalone.c: run --standalone, the daemon's program run as the calling user on a private
 * socket (docs/run.md). */
struct cli_standalone {
	char dir[256];	/* private directory (mode 0700): socket, log, state */
	char sock[280];
	char log[280];
	int hold;	/* write end of the keeper's hold pipe (O_CLOEXEC), -1 when released */
};
/* Starts netpreflightd (the program at daemon) on port, with key_file or unauthenticated
 * (NULL, warned about on stderr), named node_name (NULL: its default, the host name), and
 * waits until it answers on s->sock. Prints the error itself. Returns 0 (release with
 * cli_standalone_release(), or exec: the exec closes the hold) or -errno (nothing left
 * running). */
int cli_standalone_start(struct cli_standalone *s, const char *daemon, uint16_t port,
			 const char *key_file, const char *node_name);
/* This node's name as the job's hostlist spells it: the entry equal to the host name, or
 * one of them the other plus a domain (a pod "job-w-1" listed as "job-w-1.job"). Returns 0
 * (out, len bytes), -ENOENT, or -errno. */
int cli_standalone_self(const char *hostlist, char *out, size_t len);
/* Waits until the probe port of every node of hostlist accepts a connection (their runs
 * started their daemons too), up to wait_ms: a check started before a peer's engine is up
 * would find it unavailable. Returns how many never answered (their names, comma-separated,
 * in missing), or -errno. */
int cli_standalone_wait_peers(const char *hostlist, uint16_t port, uint32_t wait_ms,
			      char *missing, size_t len);
/* How long the daemon keeps serving the job's other nodes once this process has exec'd
 * CMD or exited (0: stop at once). */
void cli_standalone_linger(struct cli_standalone *s, uint32_t linger_ms);
/* cli_standalone_linger(), then lets go: the keeper stops the daemon after linger_ms and
 * removes the directory. No-op once released. */
void cli_standalone_release(struct cli_standalone *s, uint32_t linger_ms);

/* Prints "netpreflight: <msg>" to stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
