// SPDX-License-Identifier: MIT
/* The probe context's lifecycle: parameters, the candidate snapshot, teardown. The top of
 * probe/: it calls the modules (inventory, server, check, jobx) and none of them calls it. */
#include "internal.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "netlink.h"

#define LISTEN_RETRY_USEC (1000ull * 1000)

static int listen_retry_cb(sd_event_source *s, uint64_t usec, void *ud)
{
	struct npf_probe_ctx *ctx = ud;

	(void)s;
	(void)usec;
	ctx->listen_retry = sd_event_source_disable_unref(ctx->listen_retry);
	(void)npf_probe_ctx_refresh(ctx);
	return 0;
}

int npf_probe_ctx_refresh(struct npf_probe_ctx *ctx)
{
	struct npf_candidate *cands;
	char(*names)[IFNAMSIZ];
	size_t nc, nn;
	bool had_error;
	int r;

	if (!ctx)
		return -EINVAL;
	r = inventory_candidates(ctx, &cands, &nc, &names, &nn);
	if (r < 0)
		return r;
	free(ctx->cands);
	free(ctx->ifnames);
	ctx->cands = cands;
	ctx->n_cands = nc;
	ctx->ifnames = names;
	ctx->n_ifnames = nn;
	had_error = ctx->listen_error[0] != '\0';
	r = server_sync_listeners(ctx);
	if (ctx->listen_error[0] && !ctx->listen_retry)
		(void)sd_event_add_time_relative(ctx->event, &ctx->listen_retry, CLOCK_MONOTONIC,
						 LISTEN_RETRY_USEC, 100000, listen_retry_cb, ctx);
	if (had_error != (ctx->listen_error[0] != '\0') && ctx->listen_changed)
		ctx->listen_changed(ctx->userdata);
	return r < 0 ? r : 0;
}

const char *npf_probe_listen_error(const struct npf_probe_ctx *ctx)
{
	return ctx && ctx->listen_error[0] ? ctx->listen_error : NULL;
}

static void free_exclude(struct npf_probe_ctx *ctx)
{
	for (size_t i = 0; i < ctx->n_exclude; i++)
		free(ctx->exclude[i]);
	free(ctx->exclude);
	ctx->exclude = NULL;
	ctx->n_exclude = 0;
}

int npf_probe_ctx_set_exclude(struct npf_probe_ctx *ctx, const char *const *globs, size_t n)
{
	char **ex;

	if (!ctx || (n && !globs))
		return -EINVAL;
	ex = calloc(n + 1, sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		ex[i] = strdup(globs[i] ? globs[i] : "");
		if (!ex[i]) {
			for (size_t j = 0; j < i; j++)
				free(ex[j]);
			free(ex);
			return -ENOMEM;
		}
	}
	free_exclude(ctx);
	ctx->exclude = ex;
	ctx->n_exclude = n;
	return 0;
}

int npf_probe_ctx_new(struct npf_probe_ctx **out, const struct npf_probe_params *p)
{
	struct npf_probe_ctx *ctx;
	struct npf_config defs;
	int r;

	if (!out || !p || !p->event || !p->port || !p->inventory || !p->instance ||
	    !npf_wire_name_valid(p->node_name))
		return -EINVAL;
	if (p->bulk_bytes &&
	    (p->bulk_bytes < NPF_WIRE_MIN_BULK || p->bulk_bytes > NPF_WIRE_MAX_BULK))
		return -EINVAL;
	if (sodium_init() < 0)
		return -EIO;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	LIST_INIT(&ctx->submits);
	LIST_INIT(&ctx->listeners);
	LIST_INIT(&ctx->sconns);
	LIST_INIT(&ctx->dlisteners);
	LIST_INIT(&ctx->revjobs);
	LIST_INIT(&ctx->checks);
	TAILQ_INIT(&ctx->queue);
	TAILQ_INIT(&ctx->doneq);
	LIST_INIT(&ctx->tprobes);
	ctx->event = p->event;
	ctx->port = p->port;
	snprintf(ctx->node, sizeof(ctx->node), "%s", p->node_name);
	ctx->instance = p->instance;
	ctx->inventory = p->inventory;
	ctx->userdata = p->userdata;
	ctx->listen_changed = p->listen_changed;
	/* The defaults are the config key table's, so the engine and netpreflightd.conf(5)
	 * cannot drift apart. */
	npf_config_defaults(&defs);
	ctx->max_conns = p->max_conns ? p->max_conns : defs.probe.max_conns;
	ctx->full_mesh_max = p->full_mesh_max ? p->full_mesh_max : defs.probe.full_mesh_max;
	ctx->sparse_k = p->sparse_k ? p->sparse_k : defs.probe.sparse_k;
	ctx->bulk_bytes = p->bulk_bytes ? p->bulk_bytes : defs.probe.bulk_bytes;
	ctx->default_timeout_ms = defs.probe.timeout_ms;
	if (p->keys && p->keys->n <= NPF_AUTH_MAX_KEYS)
		ctx->keys = *p->keys;
	if (p->n_exclude) {
		r = npf_probe_ctx_set_exclude(ctx, p->exclude, p->n_exclude);
		if (r < 0) {
			free(ctx);
			return r;
		}
	}
	r = npf_probe_ctx_refresh(ctx);
	if (r < 0) {
		npf_probe_ctx_free(ctx);
		return r;
	}
	*out = ctx;
	return 0;
}

void npf_probe_ctx_free(struct npf_probe_ctx *ctx)
{
	if (!ctx)
		return;
	ctx->shutting_down = true;
	while (!LIST_EMPTY(&ctx->checks))
		check_cancel(LIST_FIRST(&ctx->checks));
	jobx_cancel_all(ctx);
	server_shutdown(ctx);
	ctx->listen_retry = sd_event_source_disable_unref(ctx->listen_retry);
	nlsys_routes_close(ctx->routes);
	ctx->done_defer = sd_event_source_disable_unref(ctx->done_defer);
	free(ctx->cands);
	free(ctx->ifnames);
	free(ctx->recent);
	free_exclude(ctx);
	sodium_memzero(&ctx->keys, sizeof(ctx->keys));
	free(ctx);
}
