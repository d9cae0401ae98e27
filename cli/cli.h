/* SPDX-License-Identifier: MIT */
/* Sub-command interface of the netpreflight CLI. */
#ifndef NPF_CLI_H
#define NPF_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Exit codes shared by every command (documented in docs/cli.md). */
enum {
	CLI_EXIT_OK = 0,   /* success; for check/env: a verified answer */
	CLI_EXIT_FAIL = 1, /* check/env: no interface works to and from every peer */
	CLI_EXIT_ERROR = 2 /* usage, daemon not running, bad input */
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

/* Prints "netpreflight: <msg>" to stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
