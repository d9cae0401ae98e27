// SPDX-License-Identifier: MIT
/* netpreflight key generate: a new cluster key on stdout, in the file format
 * netpreflightd reads ([probe] key_file). */
#include "cli.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"

int cmd_key(int argc, char **argv, const struct cli_global *g)
{
	char buf[512];
	int n;

	if (argc != 2 || strcmp(argv[1], "generate") != 0) {
		cli_err("usage: netpreflight key generate > FILE");
		return CLI_EXIT_ERROR;
	}
	if (g->json) {
		cli_err("key generate writes the key file format only (no --json)");
		return CLI_EXIT_ERROR;
	}
	if (sodium_init() < 0) {
		cli_err("libsodium failed to initialise");
		return CLI_EXIT_ERROR;
	}
	n = npf_auth_key_generate(buf, sizeof(buf));
	if (n < 0 || fwrite(buf, 1, (size_t)n, stdout) != (size_t)n || fflush(stdout) != 0) {
		sodium_memzero(buf, sizeof(buf));
		cli_err("cannot write the key");
		return CLI_EXIT_ERROR;
	}
	sodium_memzero(buf, sizeof(buf));
	return 0;
}
