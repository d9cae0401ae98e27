/* SPDX-License-Identifier: MIT */
/* The probe engine's API to the daemon: serve peers on the probe port, and run
 * checks (peer discovery, forward + reverse probes) on the daemon's sd-event loop. */
#ifndef NPF_PROBE_H
#define NPF_PROBE_H

#include <stdint.h>
#include <systemd/sd-event.h>

#include "auth.h"
#include "check.h"
#include "model.h"
#include "wire.h"

struct npf_probe_ctx;

/* Returns the daemon's current inventory snapshot (borrowed; valid until the
 * next return to the event loop). */
typedef const struct npf_inventory *(*npf_probe_inventory_fn)(void *userdata);

struct npf_probe_params {
	sd_event *event;            /* the daemon's loop; borrowed */
	uint16_t port;              /* TCP control port, same on every node (default 7718) */
	const char *node_name;      /* copied */
	uint64_t instance;          /* random per daemon start */
	npf_probe_inventory_fn inventory;
	void *userdata;
	uint32_t max_conns;         /* cap on concurrent inbound probe connections */
	uint32_t full_mesh_max;     /* full mesh up to this many peers, sparse above (default 64) */
	uint32_t sparse_k;          /* extra deterministic peers per node in sparse mode */
	uint32_t bulk_bytes;        /* bulk payload per direction, >= 65536 */
	/* Appended by the probe engine. Zero in max_conns, full_mesh_max, sparse_k
	 * or bulk_bytes means the default (256, 64, 4, 256 KiB, as lib/config.c). */
	const char *const *exclude; /* fnmatch globs of interfaces never announced; copied */
	size_t n_exclude;
	/* Cluster keys (copied); NULL or n == 0: unauthenticated, as before. */
	const struct npf_auth_keys *keys;
	void (*listen_changed)(void *userdata); /* optional, see npf_probe_listen_error() */
};

/* Creates the context and starts listening on the probe port on every candidate
 * address. On success *out is owned by the caller: free with npf_probe_ctx_free().
 * Returns 0 or -errno. */
int npf_probe_ctx_new(struct npf_probe_ctx **out, const struct npf_probe_params *p);

/* Stops listeners, aborts in-flight checks (their callbacks run with -ECANCELED,
 * and must not free the context again) and frees. NULL-safe. */
void npf_probe_ctx_free(struct npf_probe_ctx *ctx);

/* NULL when the probe port is bound on every candidate address; otherwise which
 * address failed and why (borrowed, valid until the next refresh). Failed
 * addresses are not announced, and are retried every second; listen_changed runs
 * when this changes. */
const char *npf_probe_listen_error(const struct npf_probe_ctx *ctx);

/* Re-reads the inventory and adjusts listeners after a link/address change. */
int npf_probe_ctx_refresh(struct npf_probe_ctx *ctx);

/* Replaces the exclude globs (copied), e.g. after a config reload; takes effect
 * at the next npf_probe_ctx_refresh(). Returns 0 or -ENOMEM/-EINVAL. */
int npf_probe_ctx_set_exclude(struct npf_probe_ctx *ctx, const char *const *globs, size_t n);

/* The default budget of a check of `peers` when the request names none: base_ms (the
 * [probe] timeout) grown with the number of peers this node will probe
 * (npf_check_budget_ms(), lib/loadrule.h). Returns base_ms when the plan cannot be
 * computed. */
uint32_t npf_probe_check_budget(const struct npf_probe_ctx *ctx, const char *const *peers,
				size_t n_peers, uint32_t base_ms);

/* Path probes since the context was created: started on the wire, or joined to one
 * already running for another consumer of the same directed path. */
struct npf_probe_stats {
	uint64_t started, joined;
	/* Inbound sessions that authenticated and spoke (HELLO or ROW), per configured key
	 * (key_ids[i], in key file order): an old key can go once its count stops moving on
	 * every node. */
	size_t n_keys;
	uint8_t key_ids[NPF_AUTH_MAX_KEYS][NPF_AUTH_ID_LEN];
	uint64_t key_sessions[NPF_AUTH_MAX_KEYS];
	uint64_t data_impostors; /* data-port connections dropped before a valid DATA_AUTH */
	/* Connections accepted on the probe port (control: since protocol version 3 one per
	 * peer's check, plus one per path whose data port refused) and data connections that
	 * proved their token (one per path probed): the cost of the plan, not of the mesh. */
	uint64_t ctl_accepted, data_won;
};
void npf_probe_get_stats(const struct npf_probe_ctx *ctx, struct npf_probe_stats *out);

/* Called once when a check ends. `result` is owned by the callee (free with
 * npf_check_clear() + free()), NULL when err < 0. */
typedef void (*npf_probe_check_cb)(struct npf_check *result, int err, void *userdata);

/* Starts a check of this node against `peers` (node names, already expanded from
 * a hostlist; this node's own name may appear and is skipped). Completes within
 * timeout_ms whatever is broken. Returns 0 (cb will run exactly once, never
 * synchronously from inside this call) or -errno (cb never runs). */
int npf_probe_check_start(struct npf_probe_ctx *ctx, const char *const *peers, size_t n_peers,
			  uint32_t timeout_ms, npf_probe_check_cb cb, void *userdata);

/* ---- job checks: the row exchange (docs/decision.md §10) ---- */

/* Coordinator side: a ROW arrived from a participant. row is owned by the callee
 * (npf_wire_row_clear() + free()); the participant waits on its connection for
 * npf_probe_job_answer(ctx, waiter, ...) until row->wait_ms. May answer from inside. The
 * callback's userdata is the context's (npf_probe_params.userdata). */
typedef void (*npf_probe_job_row_fn)(void *userdata, struct npf_msg_row *row, uint64_t waiter);

/* Installs the handler (NULL: ROWs are refused as "unexpected"). */
void npf_probe_set_job_handler(struct npf_probe_ctx *ctx, npf_probe_job_row_fn fn);

/* Sends d to the participant waiting as `waiter`. Returns 0, -ENOENT (it went away: its
 * connection closed or timed out), -EINVAL, or a send error. */
int npf_probe_job_answer(struct npf_probe_ctx *ctx, uint64_t waiter,
			 const struct npf_msg_job_decision *d);

/* Participant side: sends row to the coordinator's daemon (node name, resolved as peers
 * are) over an authenticated control connection and waits up to wait_ms for its
 * JOB_DECISION. done runs exactly once from the loop (never inside this call) unless the
 * submission is cancelled first: d (borrowed for the call) and err 0, or NULL and -errno
 * (-ETIMEDOUT: no answer in time; -ECONNREFUSED, -EHOSTUNREACH...: no coordinator;
 * -EPROTO: it refused the row or answered for another job). On success *out is owned by
 * the caller until done runs (then freed by the engine) or npf_probe_job_cancel(). */
struct npf_job_submit;
typedef void (*npf_probe_job_done_fn)(void *ud, const struct npf_msg_job_decision *d, int err);
int npf_probe_job_submit(struct npf_probe_ctx *ctx, const char *coordinator,
			 const struct npf_msg_row *row, uint32_t wait_ms, npf_probe_job_done_fn done,
			 void *ud, struct npf_job_submit **out);
/* Stops a submission; done does not run. NULL-safe. */
void npf_probe_job_cancel(struct npf_job_submit *s);

#endif
