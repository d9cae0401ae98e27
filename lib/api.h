/* SPDX-License-Identifier: MIT */
/* Local API codec (netpreflightd <-> local clients): frames, requests, replies and the check object. */
#ifndef NPF_API_H
#define NPF_API_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "model.h"
#include "recommend.h"

#define NPF_API_VERSION 1
#define NPF_API_HDR_LEN 4                  /* big-endian payload length */
#define NPF_API_MAX_REQUEST (64u * 1024)    /* request payload cap, enforced by the daemon */
#define NPF_API_MAX_REPLY (16u * 1024 * 1024) /* reply payload cap, enforced by clients */
#define NPF_API_MAX_PEERS 4096u
#define NPF_API_TIMEOUT_MIN_MS 100u
#define NPF_API_TIMEOUT_MAX_MS 300000u
#define NPF_API_MSG_MAX 200

enum npf_api_req {
	NPF_API_REQ_STATUS = 0,
	NPF_API_REQ_INVENTORY,
	NPF_API_REQ_CHECK,
	NPF_API_REQ_VERDICT,
	NPF_API_REQ_ENV,
	NPF_API_REQ__COUNT
};

/* Error codes carried in {"ok":false,"error":{"code":...}}; stable strings. */
enum npf_api_errcode {
	NPF_API_E_BAD_REQUEST = 0,   /* malformed frame/JSON, unknown request or field */
	NPF_API_E_UNSUPPORTED_VERSION,
	NPF_API_E_TOO_LARGE,         /* frame over NPF_API_MAX_REQUEST */
	NPF_API_E_FORBIDDEN,         /* SO_PEERCRED says this uid may not start probes */
	NPF_API_E_BUSY,              /* client or concurrent-check cap reached */
	NPF_API_E_NO_VERDICT,        /* verdict, env "cached": nothing cached (or expired) */
	NPF_API_E_NOT_READY,         /* no inventory yet */
	NPF_API_E_CHECK_FAILED,      /* the probe engine could not run the check */
	NPF_API_E_INTERNAL,
	NPF_API_E_FOREIGN_NETNS,     /* the client is in another network namespace than the
				      * daemon: our interfaces and addresses do not exist there */
	NPF_API_E__COUNT
};

struct npf_api_error {
	enum npf_api_errcode code;
	char message[NPF_API_MSG_MAX];
};

#define NPF_API_FORMAT_MAX 16
#define NPF_API_JOB_MAX 65

struct npf_api_request {
	enum npf_api_req type;
	uint32_t timeout_ms; /* check/env: 0 = daemon default */
	uint32_t max_timeout_ms; /* check/env: ceiling on the daemon's default budget (what is
				  * left of a Prolog's time); 0 = none; ignored with timeout_ms */
	uint32_t max_age_ms; /* check: answer from the cache when younger; 0 = always probe.
			      * env: the same, but only when max_age_set (else: cache_ttl) */
	bool max_age_set;    /* "max_age_ms" was given */
	char (*peers)[NPF_NAME_MAX]; /* check/verdict/env: owned, unique, in request order */
	/* check/env: the job tag ("" none): every node of one job start checks with the same
	 * tag (the Prolog passes SLURM_JOB_ID), and the nodes decide once for the job
	 * (docs/decision.md §10). 1..NPF_API_JOB_MAX-1 bytes of [A-Za-z0-9._-]. */
	char job[NPF_API_JOB_MAX];
	/* check with job: this is the job start's last try (the Prolog retried an unknown job
	 * check): an unknown better network gives way to one verified between every pair,
	 * degraded (docs/decision.md §10, "unknown is not nothing"). */
	bool settle;
	size_t n_peers;
	/* env only */
	char format[NPF_API_FORMAT_MAX]; /* "" (= json), "json", "shell", "taskprolog",
					  * "nccl-conf" */
	bool job_wide; /* only values that hold on every node of the job */
	bool cached;   /* answer from the cache only, never start a check */
};

const char *npf_api_req_name(enum npf_api_req r);
const char *npf_api_errcode_name(enum npf_api_errcode c);
/* Returns the enum or -EINVAL. */
int npf_api_errcode_parse(const char *s);

/* Frees req->peers and zeroes *req; safe on a zeroed struct. */
void npf_api_request_clear(struct npf_api_request *req);

/* Node names have three grammars, on purpose; this is the one place that says why.
 * - A name this node is given or asked to probe (config node_name, API requests, launcher
 *   host files, explain hostlists): npf_api_name_valid(). It is resolved and handed to
 *   Slurm and to the environment, so it is a plain host name that no shell, option parser
 *   or path can take for something else.
 * - The literal text of a hostlist expression (hostlist.c): the same characters,
 *   npf_api_name_char(), but a fragment between bracket groups may start with '-' or '.'
 *   ("gpu[1-2]-ib"); the expanded names meet npf_api_name_valid() where they are used.
 * - A name on the wire (npf_wire_name_valid(), wire.h): printable ASCII without spaces. A
 *   peer's name is only matched against names this node already holds (the job's
 *   hostlist, the peer it dialled) and logged, never resolved, so the wire refuses only
 *   what could corrupt a log line or a comparison; an honest daemon always sends an
 *   npf_api_name_valid() name (netpreflightd checks its own at start-up). */

/* True when c may appear in a node name: [A-Za-z0-9._-]. */
bool npf_api_name_char(char c);

/* True when s is an acceptable node name: 1..NPF_NAME_MAX-1 bytes of
 * npf_api_name_char(), not starting with '-' or '.'. */
bool npf_api_name_valid(const char *s);

/* True when s is an acceptable job tag (check --job, API field "job"): 1..NPF_API_JOB_MAX-1
 * bytes of [A-Za-z0-9._-]. The CLI and the daemon both check with this. */
bool npf_api_job_valid(const char *s);

/* Reads the 4-byte big-endian frame header. Returns 0 and *len, -EBADMSG for an
 * empty frame, -EMSGSIZE when *len would exceed max. */
int npf_api_frame_len(const uint8_t hdr[NPF_API_HDR_LEN], uint32_t max, uint32_t *len);

/* Serialises msg (compact) behind a frame header. On success *out (owned by
 * the caller, free()) holds *out_len bytes. Returns 0, -EMSGSIZE when the
 * payload exceeds max, -ENOMEM. */
int npf_api_frame_encode(const json_t *msg, uint32_t max, char **out, size_t *out_len);

/* Compact text of j, NUL-terminated, in one serialisation pass. On success *out (owned by
 * the caller, free()) holds *len bytes plus the NUL. Returns 0, -EMSGSIZE when the text
 * exceeds max bytes, -ENOMEM. */
int npf_api_json_text(const json_t *j, size_t max, char **out, size_t *len);

/* The framed reply to a "check" or "verdict" request around the already encoded (compact)
 * check object: {"version":1,"ok":true,"check":CHECK,"cached":..,"age_ms":N}, byte for
 * byte what npf_api_frame_encode() makes of the same reply built as JSON. *out is owned
 * by the caller (free()). Returns 0, -EINVAL for an empty check, -EMSGSIZE when the
 * payload would exceed max, -ENOMEM. */
int npf_api_check_reply_frame(const char *check, size_t check_len, bool cached, uint64_t age_ms,
			      uint32_t max, char **out, size_t *out_len);

/* Strict decode of one payload: a JSON object, no duplicate keys, no NUL in
 * strings, nothing after it. On success *out is a new reference (caller
 * json_decref). Returns 0 or -EBADMSG with err filled. */
int npf_api_json_decode(const void *buf, size_t len, json_t **out, struct npf_api_error *err);

/* Parses and validates a request payload. On success req owns its peers (free
 * with npf_api_request_clear). Returns 0, or -EBADMSG / -EPROTONOSUPPORT /
 * -ENOMEM with err filled (code + message to send back); req is left cleared. */
int npf_api_request_parse(const void *buf, size_t len, struct npf_api_request *req,
			  struct npf_api_error *err);

/* Builds the JSON of a request (the client side). New reference or NULL. */
json_t *npf_api_request_to_json(const struct npf_api_request *req);

/* {"version":1,"ok":true}; the caller adds fields. New reference or NULL. */
json_t *npf_api_reply_new(void);

/* {"version":1,"ok":false,"error":{"code":..,"message":..}}. New reference or NULL. */
json_t *npf_api_reply_error(enum npf_api_errcode code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Client-side validation of a decoded reply. Returns 0 when ok is true,
 * -EREMOTEIO when the daemon answered an error (err holds its code and message),
 * -EPROTO when the reply is malformed or of another version (err says why). */
int npf_api_reply_status(const json_t *reply, struct npf_api_error *err);

/* The check as JSON (documented in docs/protocol.md). With rec (the decision for c,
 * npf_recommend()), it carries a "verdict" object (the recommendation's verdict and
 * summary plus the per-interface evidence of lib/verdict.h) and the
 * "recommendation" object (npf_recommendation_to_json()); without rec, neither.
 * New reference (caller json_decref) or NULL on ENOMEM. */
json_t *npf_check_to_json(const struct npf_check *c, const struct npf_recommendation *rec);

/* The inverse ("verdict" and "recommendation" are ignored: only the daemon, which
 * has the inventory, can decide). *c must be zeroed; on success the caller owns it
 * (npf_check_clear). Returns 0, -EBADMSG for malformed input (c left cleared),
 * -ENOMEM. */
int npf_check_from_json(const json_t *j, struct npf_check *c);

/* The reply to an "env" request (docs/protocol.md): {"version":1,"ok":true,
 * "verdict","summary","variables":{NAME:value} (only for ok and degraded),"cached","age_ms",
 * "recommendation":{...}} plus "format","text","omitted" when format is a text
 * format (shell, taskprolog, nccl-conf; "" or "json" adds none). New reference
 * (caller json_decref), or NULL on ENOMEM or an unknown format. */
json_t *npf_api_env_reply(const struct npf_recommendation *rec, const char *format, bool cached,
			  uint64_t age_ms);

/* An env reply encoded once, around its two per-query fields ("cached", "age_ms"), so a
 * cached answer is assembled by copying. */
struct npf_api_env_split {
	char *head; /* "{...": the fields before "cached", without the closing brace */
	size_t head_len;
	char *tail; /* "...}": the fields after "age_ms" and the closing brace */
	size_t tail_len;
};

/* Encodes npf_api_env_reply(rec, format, ...) into *sp (owned by the caller,
 * npf_api_env_split_clear()). Returns 0, -ENOMEM (also for an unknown format, as
 * npf_api_env_reply()), -EMSGSIZE, -EPROTO; *sp is left cleared on failure. */
int npf_api_env_split_make(const struct npf_recommendation *rec, const char *format,
			   struct npf_api_env_split *sp);
/* Frees and zeroes; safe on a zeroed struct. */
void npf_api_env_split_clear(struct npf_api_env_split *sp);
/* The framed reply, byte for byte what npf_api_frame_encode(npf_api_env_reply(rec, format,
 * cached, age_ms)) makes. *out is owned by the caller (free()). Returns 0, -EINVAL for an
 * empty split, -EMSGSIZE when the payload would exceed max, -ENOMEM. */
int npf_api_env_split_frame(const struct npf_api_env_split *sp, bool cached, uint64_t age_ms,
			    uint32_t max, char **out, size_t *out_len);

/* Canonical key of a peer set: sorted unique names joined by ',', without
 * `self` (a check never probes its own node). *out is owned by the caller
 * (free()). Returns 0, -ENOMEM, or -EINVAL when no peer remains. */
int npf_api_peers_key(const char (*peers)[NPF_NAME_MAX], size_t n, const char *self, char **out);

#endif
