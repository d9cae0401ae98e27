// SPDX-License-Identifier: MIT
/* netpreflight: table-driven CLI front end (iproute2 rd_exec_cmd style). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

struct cli_cmd {
	const char *name;
	cli_cmd_fn fn;
};

/* Each command's synopsis is cli/usage.c's (one source for this list and its own help). */
static const struct cli_cmd cmds[] = {
	{ "interfaces", cmd_interfaces }, { "rdma", cmd_rdma },	      { "check", cmd_check },
	{ "status", cmd_status },	  { "key", cmd_key },	      { "env", cmd_env },
	{ "run", cmd_run },		  { "explain", cmd_explain },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: netpreflight [--socket PATH] [--sysfs-root DIR] [--json] COMMAND ...\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  netpreflight %s\n", cli_synopsis(cmds[i].name));
}

/* Global options may come before the command; --json and --sysfs-root are also
 * accepted after it, so "netpreflight rdma --json" and "netpreflight --json rdma"
 * mean the same. Consumed options are removed from argv. */
static int take_globals(int *argc, char **argv, struct cli_global *g)
{
	int out = 0;

	for (int i = 0; i < *argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		size_t n;

		if (strcmp(a, "--json") == 0) {
			g->json = true;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		n = strcmp(a, "--socket") == 0 || strncmp(a, "--socket=", 9) == 0 ? 8 :
		    strcmp(a, "--sysfs-root") == 0 || strncmp(a, "--sysfs-root=", 13) == 0 ? 12 : 0;
		if (n) {
			if (a[n] == '=')
				val = a + n + 1;
			else if (i + 1 < *argc)
				val = argv[++i];
			if (!val || !*val) {
				cli_err("%.*s needs a value", (int)n, a);
				return -1;
			}
			if (n == 8)
				g->socket_path = val;
			else
				g->sysfs_root = val;
			continue;
		}
		argv[out++] = argv[i];
	}
	argv[out] = NULL;
	*argc = out;
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_global g = { .socket_path = NPF_DEFAULT_SOCKET };
	const char *env = getenv("NETPREFLIGHT_SOCKET");
	int ac = argc - 1;
	char **av = argv + 1;

	if (env && *env)
		g.socket_path = env;
	if (take_globals(&ac, av, &g) < 0)
		return CLI_EXIT_ERROR;
	if (ac < 1) {
		usage(stderr);
		return CLI_EXIT_ERROR;
	}
	if (strcmp(av[0], "help") == 0 || strcmp(av[0], "--help") == 0 || strcmp(av[0], "-h") == 0) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(av[0], "version") == 0 || strcmp(av[0], "--version") == 0) {
		printf("netpreflight %s\n", NPF_VERSION);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(av[0], cmds[i].name) == 0)
			return cmds[i].fn(ac, av, &g);
	cli_err("unknown command '%s'", av[0]);
	usage(stderr);
	return CLI_EXIT_ERROR;
}
