// SPDX-License-Identifier: MIT
/* Every command's synopsis, once: `netpreflight help` lists them and each command's own
 * usage line prints its row, so the two cannot drift (issue 21). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name, *synopsis;
} synopses[] = {
	{ "interfaces", "interfaces [--json] [--capture FILE]" },
	{ "rdma", "rdma [--json] [--sysfs-root DIR]" },
	{ "check", "check --nodes HOSTLIST [--timeout S] [--max-timeout S] [--job TAG [--settle]] "
		   "[--json]" },
	{ "status", "status [--json]" },
	{ "key", "key generate [-o FILE] [--json]" },
	{ "env", "env --nodes HOSTLIST [--format shell|taskprolog|nccl-conf|json] [--job-wide] "
		 "[--timeout S] [--max-age S] [--cached] [--job TAG]" },
	{ "run", "run [--nodes HOSTLIST | --hostfile FILE] [--job TAG] [--timeout S] "
		 "[--max-timeout S] [--standalone [--port N] [--key-file FILE] [--node-name NAME]] "
		 "[--json] -- CMD [ARGS...]" },
	{ "explain", "explain [--nodes HOSTLIST] [--no-daemon] [--max-age S] [--timeout S] "
		     "[--node-env] [--verbose] [--json] [FILE...]" },
};

const char *cli_synopsis(const char *cmd)
{
	for (size_t i = 0; i < sizeof(synopses) / sizeof(synopses[0]); i++)
		if (strcmp(synopses[i].name, cmd) == 0)
			return synopses[i].synopsis;
	return cmd;
}

void cli_usage(FILE *f, const char *cmd)
{
	fprintf(f, "usage: netpreflight [--socket PATH] %s\n", cli_synopsis(cmd));
}
