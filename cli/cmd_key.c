// SPDX-License-Identifier: MIT
/* netpreflight key generate: a new cluster key on stdout, in the file format
 * netpreflightd reads ([probe] key_file); --json wraps the key line. */
#include "cli.h"

#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"

/* --json: {"schema": "netpreflight.key", "version": 1, "key": "npf-key-v1 <hex>", "id": "<hex>"}
 * (the key line is the file's content without the comments; id names it on the wire). */
static int print_json(char *text, size_t len)
{
	struct npf_auth_keys k;
	char line[128] = "", id[2 * NPF_AUTH_ID_LEN + 1];
	const char *p = strstr(text, NPF_AUTH_KEY_TAG);
	json_t *o;
	int r = CLI_EXIT_ERROR;

	if (!p || npf_auth_keys_parse(text, len, &k, NULL, 0) < 0) {
		sodium_memzero(text, len);
		return CLI_EXIT_ERROR;
	}
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
	sodium_bin2hex(id, sizeof(id), k.k[0].id, sizeof(k.k[0].id));
	o = json_pack("{s:s, s:i, s:s, s:s}", "schema", "netpreflight.key", "version", 1, "key",
		      line, "id", id);
	if (o && json_dumpf(o, stdout, JSON_COMPACT) == 0 && fputc('\n', stdout) != EOF &&
	    fflush(stdout) == 0)
		r = CLI_EXIT_OK;
	else
		cli_err("cannot write the key");
	json_decref(o);
	sodium_memzero(&k, sizeof(k));
	sodium_memzero(line, sizeof(line));
	sodium_memzero(text, len);
	return r;
}

int cmd_key(int argc, char **argv, const struct cli_global *g)
{
	char buf[512];
	int n;

	if (argc != 2 || strcmp(argv[1], "generate") != 0) {
		cli_err("usage: netpreflight key generate > FILE");
		return CLI_EXIT_ERROR;
	}
	if (sodium_init() < 0) {
		cli_err("libsodium failed to initialise");
		return CLI_EXIT_ERROR;
	}
	n = npf_auth_key_generate(buf, sizeof(buf));
	if (n > 0 && g->json)
		return print_json(buf, (size_t)n);
	if (n < 0 || fwrite(buf, 1, (size_t)n, stdout) != (size_t)n || fflush(stdout) != 0) {
		sodium_memzero(buf, sizeof(buf));
		cli_err("cannot write the key");
		return CLI_EXIT_ERROR;
	}
	sodium_memzero(buf, sizeof(buf));
	return 0;
}
