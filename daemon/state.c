// SPDX-License-Identifier: MIT
/* The last check on disk: [daemon] state_dir/last-check.json, replaced atomically. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dchk.h"
#include "fileio.h"
#include "log.h"

/* Atomic replacement so a reader never sees half a file. The document is written compact with
 * one write(): jansson's fd dumper made one write(2) per token (tens of thousands for a
 * large check); readers (the CLI, jq) pretty-print. */
void dchk_write_state(struct npf_daemon *d, const struct dchk *e)
{
	const char *dir = d->cfg.daemon.state_dir;
	char path[NPF_CONFIG_PATH_MAX + 32];
	static const char mid[] = ",\"check\":";
	char *head = NULL, *buf = NULL;
	size_t hlen = 0, len;
	json_t *doc;
	int r;

	if (!dir[0] || !e->text)
		return;
	snprintf(path, sizeof(path), "%s/last-check.json", dir);
	r = dmn_mkdir_p(dir, 0755);
	if (r < 0) {
		log_errc(r, "state dir %s (last check not saved)", dir);
		return;
	}
	/* The small envelope is encoded here; the check is the cached text, spliced in
	 * before the envelope's closing brace. */
	doc = json_pack("{s:i, s:s, s:s, s:I}", "version", NPF_API_VERSION, "node", d->node_name,
			"peers", e->key, "written_unix_ms",
			(json_int_t)(npf_now(CLOCK_REALTIME) / USEC_PER_MSEC));
	r = doc ? npf_api_json_text(doc, NPF_API_MAX_REPLY, &head, &hlen) : -ENOMEM;
	json_decref(doc);
	if (r < 0 || hlen < 2 || head[hlen - 1] != '}') {
		log_errc(r < 0 ? r : -EPROTO, "%s (last check not saved)", path);
		free(head);
		return;
	}
	hlen--;
	len = hlen + sizeof(mid) - 1 + e->text_len + 2;
	buf = malloc(len);
	if (!buf) {
		log_errc(-ENOMEM, "%s (last check not saved)", path);
		free(head);
		return;
	}
	memcpy(buf, head, hlen);
	memcpy(buf + hlen, mid, sizeof(mid) - 1);
	memcpy(buf + hlen + sizeof(mid) - 1, e->text, e->text_len);
	memcpy(buf + len - 2, "}\n", 2);
	free(head);
	/* After a crash the file is the old or the new one, never empty. */
	r = npf_atomic_write(dir, "last-check.json", buf, len, 0644);
	if (r < 0)
		log_errc(r, "%s (last check not saved)", path);
	free(buf);
}
