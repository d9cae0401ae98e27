/* SPDX-License-Identifier: MIT */
/* netpreflightd internals: the one daemon struct and the modules' entry points. */
#ifndef NPF_DAEMON_H
#define NPF_DAEMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "api.h"
#include "auth.h"
#include "check.h"
#include "config.h"
#include "metrics.h"
#include "model.h"

#define DMN_MAX_CLIENTS 64          /* concurrent local API connections */
#define DMN_MAX_CLIENTS_PER_UID 16  /* one user cannot hold them all; root is exempt */
#define DMN_ROOT_RESERVE 8          /* of DMN_MAX_CLIENTS, slots only root (the Prolog) may use */
#define DMN_PERM_TTL_US (60ull * 1000000) /* check_group's gid is looked up (NSS) this rarely */
#define DMN_CLIENT_IDLE_MS 5000     /* a request must arrive (whole) within this */
#define DMN_CLIENT_WRITE_MS 5000    /* a reply must drain within this */
#define DMN_MAX_RUNNING 4           /* distinct peer sets probed at once */
#define DMN_MAX_JOBS_PER_UID 1      /* job checks of one uid at once (not root) */
#define DMN_MAX_CACHED 64           /* peer sets remembered */
#define DMN_DEBOUNCE_MS 200         /* netlink burst -> one rebuild */
#define DMN_REDUMP_MS 60000         /* safety re-dump when no event arrives */

struct npf_probe_ctx;
struct mnl_socket;
struct dchk;
struct jround;
struct npf_msg_row;
struct npf_msg_job_decision;
struct npf_daemon;

/* The snapshot's report to its owner (main.c wires it to the checks): the interfaces
 * whose relevant state changed ([n], borrowed for the call), or n == 0 from the periodic
 * re-dump (nothing changed; time passed). The snapshot calls no other module. */
typedef void (*snap_changed_fn)(struct npf_daemon *d, const char (*names)[IFNAMSIZ], size_t n);

/* A network namespace's identity: its cookie and/or its nsfs inode (netns.c). */
struct dmn_netns_id {
	uint64_t cookie;
	dev_t dev;
	ino_t ino;
	bool have_cookie, have_inode;
};

enum dmn_netns_cmp { DMN_NETNS_SAME = 0, DMN_NETNS_FOREIGN, DMN_NETNS_UNKNOWN };

/* One local API connection. */
struct ctl_client {
	LIST_ENTRY(ctl_client) link; /* npf_daemon.clients */
	struct npf_daemon *d;
	int fd;
	sd_event_source *io, *timer;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	/* SO_PEERGROUPS: the client's supplementary groups when it connected (owned; NULL
	 * when the kernel cannot say: then only gid counts). Membership is the
	 * connection's, never NSS's view of the user. */
	gid_t *groups;
	size_t n_groups;
	enum dmn_netns_cmp netns; /* the client's network namespace vs ours, at accept */
	uint8_t hdr[4];
	size_t hdr_got;
	char *in;        /* payload being read, in_len bytes */
	uint32_t in_len, in_got;
	char *out;       /* framed reply being written */
	size_t out_len, out_off;
	bool close_after_write;
	struct dchk *waiting;         /* check this client waits on, or NULL */
	struct ctl_client *wait_next; /* next waiter of the same check */
	/* An env request parked on a check: what to answer once it completes. */
	bool want_env;
	bool env_job_wide;
	char env_format[NPF_API_FORMAT_MAX];
	char env_first_node[NPF_NAME_MAX];
};

/* A command-line option that overrides the config file, re-applied on SIGHUP. */
struct dmn_opt {
	const char *option; /* config key option name, borrowed from argv/the key table */
	const char *value;  /* borrowed from argv */
};

struct npf_daemon {
	sd_event *event;

	/* Immutable while in use; SIGHUP builds a new one and copies it over. */
	struct npf_config cfg;
	const char *config_path;
	bool config_explicit; /* --config given: a missing file is an error */
	struct dmn_opt *opts;
	size_t n_opts;
	bool foreground;

	char node_name[NPF_NAME_MAX];
	uint64_t instance;
	struct npf_auth_keys keys; /* n: keys loaded (the key bytes live in the probe context) */
	uint64_t start_mono_us;
	uint64_t start_unix_ms;

	/* Inventory snapshot: replaced whole, never edited in place. */
	struct npf_inventory *inv;
	uint64_t inv_generation;
	uint64_t inv_unix_ms;
	bool ready;          /* first inventory built */
	bool ready_notified; /* READY=1 sent */
	snap_changed_fn snap_changed;
	struct mnl_socket *nl;
	sd_event_source *nl_src, *debounce_src, *redump_src;

	/* Local API. */
	int listen_fd;
	bool listen_bound; /* we created the socket path, so we remove it */
	struct dmn_netns_id netns; /* ours, read once in ctl_open */
	bool netns_known;
	sd_event_source *listen_src, *accept_retry_src;
	LIST_HEAD(, ctl_client) clients;
	unsigned int n_clients;
	/* check_group's gid: NSS (LDAP, sssd) can block for seconds, so the name is
	 * looked up at most once a minute. */
	struct dmn_perm {
		gid_t gid;
		bool found;
		uint64_t until_us; /* 0: not looked up yet */
	} check_gid;

	/* Probes and results. */
	struct npf_probe_ctx *probe;
	LIST_HEAD(, dchk) checks;
	unsigned int n_checks, n_running;
	char last_summary[256];
	struct npf_metrics_counters metrics; /* for [metrics] textfile_dir */

	/* Job checks this node coordinates (jobround.c). */
	struct jround *jrounds;
	unsigned int n_jrounds;
	size_t jround_bytes;
};

/* util.c: called by every module, calls none */
/* Sends STATUS= (and READY=1 once) to the service manager; no-op outside systemd. */
void dmn_notify_status(struct npf_daemon *d);
/* npf_now(CLOCK_MONOTONIC); kept only for jobround.c arm_deadline(), whose body the
 * "rounds" branch edits: switch that call to npf_now() after it merges, then remove. */
/* mkdir -p with mode for the directories it creates. Returns 0 or -errno. */
int dmn_mkdir_p(const char *path, mode_t mode);

/* snapshot.c */
/* Builds the first inventory and subscribes to link/address events; changes are reported
 * through changed. Returns 0 or -errno. */
int snap_start(struct npf_daemon *d, snap_changed_fn changed);
void snap_stop(struct npf_daemon *d);
/* Applies netlink changes that are pending (read or debounced) now, so a check that
 * starts next sees every interface the kernel has reported. */
void snap_settle(struct npf_daemon *d);
/* The probe engine's view of the current snapshot (userdata is the daemon). */
const struct npf_inventory *snap_inventory(void *userdata);
/* Inventory summary for status replies. New reference or NULL. */
json_t *snap_status_json(const struct npf_daemon *d);

/* netns.c */
/* The daemon's own namespace. Returns 0 when at least one identity was read, else -errno. */
int dmn_netns_self(struct dmn_netns_id *out);
/* The namespace of the client on accepted AF_UNIX socket fd (pid from SO_PEERCRED, used
 * only on kernels without SO_NETNS_COOKIE). Returns 0 or -errno (cannot tell). */
int dmn_netns_client(int fd, pid_t pid, struct dmn_netns_id *out);
/* SAME, FOREIGN, or UNKNOWN when the two carry no identity of the same kind. */
int dmn_netns_compare(const struct dmn_netns_id *self, const struct dmn_netns_id *client);

/* control.c: the local API server (accepts, reads, dispatches to the modules) */
/* Takes the socket from systemd or binds cfg.daemon.socket. Returns 0 or -errno. */
int ctl_open(struct npf_daemon *d);
/* Closes every client (detaching them from checks) and the listener. */
void ctl_close(struct npf_daemon *d);

/* reply.c: a client's output and deadlines; calls no other module */
/* Sends reply (ownership taken, NULL means out of memory) to c: what the socket takes
 * at once is sent now, the rest from the loop. c is never freed here (errors surface in
 * the loop), so callers may hold list pointers. Reading resumes once it has drained. */
void ctl_reply(struct ctl_client *c, json_t *reply);
/* The same for an already framed reply: frame (ownership taken, free()) of len bytes.
 * err < 0 or frame NULL (the encoder's failure) sends an internal error instead. */
void ctl_reply_frame(struct ctl_client *c, int err, char *frame, size_t len);
/* Parks c until its check answers, with a safety deadline of ms. */
void ctl_wait(struct ctl_client *c, uint32_t ms);
/* Waits for c's next request: the whole frame must arrive within DMN_CLIENT_IDLE_MS. */
void ctl_state_reading(struct ctl_client *c);
/* Writes c's pending output. Returns 1 when everything was written, 0 when the socket is
 * full, -errno. */
int ctl_write_out(struct ctl_client *c);

/* perm.c: who may make the daemon probe */
/* SO_PEERCRED policy: may this client make the daemon probe other nodes (root, the
 * daemon's uid, [daemon] check_group)? */
bool ctl_may_probe(struct npf_daemon *d, const struct ctl_client *c);
/* A peer name of the request that the resolver would take as an address literal
 * ("127.0.0.1", "2130706433", "0x7f000001", "127.1"), when c may not name those (only
 * root and the daemon's user may: a check_group user names hosts, so the daemon never
 * connects to an arbitrary address for it). Returns the name (borrowed) or NULL. */
const char *ctl_literal_peer(const struct ctl_client *c, const struct npf_api_request *req);
/* Refuses (one ctl_reply(), returns true) when c may not make the daemon probe req's
 * peers: ctl_may_probe(), then ctl_literal_peer(). context begins the message ("" or
 * "nothing cached for these peers and "). Returns false, replying nothing, when c may. */
bool ctl_refuse_probe(struct npf_daemon *d, struct ctl_client *c,
		      const struct npf_api_request *req, const char *context);

/* checks.c */
/* Answers or starts a check for c; always ends in exactly one ctl_reply(). */
void dchk_check(struct npf_daemon *d, struct ctl_client *c, const struct npf_api_request *req);
/* An "env" request's answer from the cache when fresh (anyone may ask, as for verdict),
 * or its refusal (not ready, no peers, "cached" with nothing fresh). Returns true when it
 * replied to c, false when only a probe can answer: the caller checks the permission
 * (ctl_refuse_probe()) and calls dchk_env_start(). */
bool dchk_env_cached(struct npf_daemon *d, struct ctl_client *c,
		     const struct npf_api_request *req);
/* Starts or joins the check that will answer c's env request; always ends in exactly
 * one ctl_reply() or a parked client. */
void dchk_env_start(struct npf_daemon *d, struct ctl_client *c,
		    const struct npf_api_request *req);
/* Decides every cached result again (after a config reload or an inventory change). */
void dchk_redecide(struct npf_daemon *d);
/* Answers a "verdict" request for c from the cache; always ends in exactly one reply. */
void dchk_verdict(struct npf_daemon *d, struct ctl_client *c, const struct npf_api_request *req);
/* Forgets cached results that involve any of the named interfaces. */
void dchk_invalidate(struct npf_daemon *d, const char (*names)[IFNAMSIZ], size_t n);
/* Drops expired results (cache_ttl). */
void dchk_expire(struct npf_daemon *d);
/* Detaches a closing client from the check it waits on. */
void dchk_client_gone(struct npf_daemon *d, struct ctl_client *c);
/* The "checks" array of status replies. New reference or NULL. */
json_t *dchk_status_json(struct npf_daemon *d);
/* Frees every entry; call after the probe context is gone. */
void dchk_free_all(struct npf_daemon *d);
/* Rewrites the metrics textfile ([metrics] textfile_dir; no-op when empty) from the most
 * recently completed check still cached, or without a check when there is none. */
void dchk_publish_metrics(struct npf_daemon *d);

/* jobround.c: the coordinator of job checks (docs/decision.md §10) */
/* A local participant's answer: d is borrowed for the call. */
typedef void (*jround_local_fn)(void *ud, const struct npf_msg_job_decision *d);
/* Adds row (ownership taken) to its job's round; the participant waits as remote (an
 * npf_probe_job_answer() id) or, remote == 0, through fn(ud). This node's own row comes
 * with the job's hostlist ([row->n_nodes], borrowed for the call; NULL for a remote row):
 * a row is taken only from the node the hostlist names at its index, and remote rows
 * wait for it. Every waiter of a round gets the same decision, once all rows are in or
 * before the first waiter's wait runs out; a decided round answers late rows at once (fn
 * may run inside this call). */
void jround_add_row(struct npf_daemon *d, struct npf_msg_row *row, uint64_t remote,
		    jround_local_fn fn, void *ud, const char *const *hostlist);
/* A local participant that goes away before its answer. */
void jround_forget_local(struct npf_daemon *d, void *ud);
/* npf_probe_job_row_fn for the probe engine (userdata is the daemon). */
void jround_on_remote_row(void *userdata, struct npf_msg_row *row, uint64_t waiter);
void jround_free_all(struct npf_daemon *d);
/* The "jobs" array of status replies: the job checks this node coordinates. New reference
 * or NULL. */
json_t *jround_status_json(struct npf_daemon *d);

#endif
