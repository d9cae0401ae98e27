// SPDX-License-Identifier: MIT
/* netpreflight key generate [-o FILE]: a new cluster key in the file format
 * netpreflightd reads ([probe] key_file), on stdout or into a new file created 0600;
 * --json wraps the key line (or, with -o, names the file and the key id). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"

/* --json: {"schema": "netpreflight.key", "version": 1, "key": "npf-key-v1 <hex>", "id": "<hex>"}
 * (the key line is the file's content without the comments; id names it on the wire). With
 * -o FILE the key stays in the file: "file" replaces "key". */
static int print_json(char *text, size_t len, const char *file)
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
	o = json_pack("{s:s, s:i, s:s, s:s}", "schema", "netpreflight.key", "version", 1,
		      file ? "file" : "key", file ? file : line, "id", id);
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

/* Creates path for the key: O_EXCL (never over an existing file, nor through a symlink
 * planted there), mode 0600 whatever the umask, the content flushed to disk. The secret
 * never exists with looser permissions, as it would with "> FILE" under umask 022.
 * Returns 0 or -errno (a file it created is removed again). */
static int write_new_file(const char *path, const char *buf, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t off = 0;
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0600) < 0)
		r = -errno;
	while (!r && off < n) {
		ssize_t w = write(fd, buf + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			r = w < 0 ? -errno : -EIO;
		else
			off += (size_t)w;
	}
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (r)
		(void)unlink(path);
	return r;
}

int cmd_key(int argc, char **argv, const struct cli_global *g)
{
	const char *out = NULL;
	char buf[512];
	int n, r;

	if (argc == 4 && strcmp(argv[1], "generate") == 0 &&
	    (strcmp(argv[2], "-o") == 0 || strcmp(argv[2], "--output") == 0) && argv[3][0])
		out = argv[3];
	else if (argc != 2 || strcmp(argv[1], "generate") != 0) {
		cli_usage(stderr, "key");
		return CLI_EXIT_ERROR;
	}
	if (sodium_init() < 0) {
		cli_err("libsodium failed to initialise");
		return CLI_EXIT_ERROR;
	}
	n = npf_auth_key_generate(buf, sizeof(buf));
	if (n > 0 && out) {
		r = write_new_file(out, buf, (size_t)n);
		if (r < 0) {
			sodium_memzero(buf, sizeof(buf));
			cli_err("cannot create %s: %s%s", out, strerror(-r),
				r == -EEXIST ? " (a key file is never overwritten)" : "");
			return CLI_EXIT_ERROR;
		}
		if (g->json)
			return print_json(buf, (size_t)n, out);
		sodium_memzero(buf, sizeof(buf));
		return CLI_EXIT_OK;
	}
	if (n > 0 && g->json)
		return print_json(buf, (size_t)n, NULL);
	if (n < 0 || fwrite(buf, 1, (size_t)n, stdout) != (size_t)n || fflush(stdout) != 0) {
		sodium_memzero(buf, sizeof(buf));
		cli_err("cannot write the key");
		return CLI_EXIT_ERROR;
	}
	sodium_memzero(buf, sizeof(buf));
	return 0;
}
