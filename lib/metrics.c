// SPDX-License-Identifier: MIT
/* Prometheus text exposition of a check, its recommendation and the daemon's counters. */
#include "metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict.h"

#ifndef NPF_VERSION
#define NPF_VERSION "unknown"
#endif

/* Growable output; the first failure sticks so callers check once at the end. */
struct mbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void mreserve(struct mbuf *b, size_t more)
{
	size_t want = b->len + more + 1;
	char *np;

	if (b->err || want <= b->cap)
		return;
	if (want < 4096)
		want = 4096;
	if (want < b->cap * 2)
		want = b->cap * 2;
	np = realloc(b->p, want);
	if (!np) {
		b->err = -ENOMEM;
		return;
	}
	b->p = np;
	b->cap = want;
}

static void mprintf(struct mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mprintf(struct mbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = -EINVAL;
		return;
	}
	mreserve(b, (size_t)n);
	if (b->err)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void mputc(struct mbuf *b, char c)
{
	mreserve(b, 1);
	if (b->err)
		return;
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}

/* name="value" with the exposition format's escapes. Label values must be UTF-8;
 * interface names are arbitrary bytes, so anything outside printable ASCII
 * becomes '_' rather than making node_exporter reject the whole file. */
static void mlabel(struct mbuf *b, bool first, const char *name, const char *val, size_t max)
{
	size_t n = val ? strnlen(val, max) : 0;

	mprintf(b, "%s%s=\"", first ? "" : ",", name);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)val[i];

		if (c == '\\' || c == '"') {
			mputc(b, '\\');
			mputc(b, (char)c);
		} else if (c == '\n') {
			mputc(b, '\\');
			mputc(b, 'n');
		} else if (c < 0x20 || c >= 0x7f) {
			mputc(b, '_');
		} else {
			mputc(b, (char)c);
		}
	}
	mputc(b, '"');
}

static void mfamily(struct mbuf *b, const char *name, const char *type, const char *help)
{
	mprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Milliseconds as decimal seconds without floating point (locale-proof, exact). */
static void mseconds(struct mbuf *b, uint64_t ms)
{
	mprintf(b, "%" PRIu64 ".%03u\n", ms / 1000, (unsigned)(ms % 1000));
}

static const char *var_value(const struct npf_recommendation *rec, const char *name)
{
	for (size_t i = 0; i < rec->n_vars; i++)
		if (strncmp(rec->vars[i].name, name, sizeof(rec->vars[i].name)) == 0)
			return rec->vars[i].value;
	return NULL;
}

/* Every verdict, in the order its series are rendered (both families): each one always,
 * zeros included, so a series never vanishes. degraded (ok, on a worse network than the
 * job's best) is its own series: alerts want to see the job moved, not count it as ok. */
static const enum npf_verdict verdict_order[] = { NPF_VERDICT_OK, NPF_VERDICT_DEGRADED,
						  NPF_VERDICT_FAIL, NPF_VERDICT_UNKNOWN };
_Static_assert(sizeof(verdict_order) / sizeof(verdict_order[0]) == NPF_VERDICT__COUNT,
	       "every verdict has its series");

static void render_counters(struct mbuf *b, const struct npf_metrics_counters *ctr)
{

	if (ctr->start_unix_ms) {
		mfamily(b, "netpreflight_daemon_start_time_seconds", "gauge",
			"Unix time netpreflightd started.");
		mprintf(b, "netpreflight_daemon_start_time_seconds ");
		mseconds(b, ctr->start_unix_ms);
	}
	if (ctr->auth_reported) {
		mfamily(b, "netpreflight_probe_authenticated", "gauge",
			"1 when peers are authenticated with a cluster key, 0 when anyone "
			"reaching the probe port is trusted.");
		mprintf(b, "netpreflight_probe_authenticated %d\n", ctr->authenticated ? 1 : 0);
	}
	if (ctr->n_keys) {
		/* Bounded labels: at most NPF_AUTH_MAX_KEYS public key ids. */
		mfamily(b, "netpreflight_probe_key_sessions_total", "counter",
			"Inbound peer sessions authenticated with each configured cluster key, by "
			"key id: an old key can go once its count stops moving on every node.");
		for (size_t i = 0; i < ctr->n_keys && i < NPF_AUTH_MAX_KEYS; i++) {
			mprintf(b, "netpreflight_probe_key_sessions_total{key_id=\"");
			for (size_t k = 0; k < NPF_AUTH_ID_LEN; k++)
				mprintf(b, "%02x", ctr->key_ids[i][k]);
			mprintf(b, "\"} %" PRIu64 "\n", ctr->key_sessions[i]);
		}
	}
	if (ctr->probe_reported) {
		mfamily(b, "netpreflight_probe_data_impostors_total", "counter",
			"Connections to this node's data ports dropped before proving the "
			"prober's token: another source address, a wrong token, or a crowd.");
		mprintf(b, "netpreflight_probe_data_impostors_total %" PRIu64 "\n",
			ctr->data_impostors);
	}
	mfamily(b, "netpreflight_checks_total", "counter",
		"Preflight checks completed since the daemon started, by verdict.");
	for (size_t i = 0; i < NPF_VERDICT__COUNT; i++)
		mprintf(b, "netpreflight_checks_total{verdict=\"%s\"} %" PRIu64 "\n",
			npf_verdict_name(verdict_order[i]), ctr->checks[verdict_order[i]]);
	mfamily(b, "netpreflight_check_errors_total", "counter",
		"Preflight checks that could not be run at all.");
	mprintf(b, "netpreflight_check_errors_total %" PRIu64 "\n", ctr->check_errors);
}

static int check_consistent(const struct npf_check *chk)
{
	if (chk->n_nodes == 0 || !chk->nodes)
		return -EINVAL;
	if (chk->n_links && !chk->links)
		return -EINVAL;
	for (size_t i = 0; i < chk->n_links; i++) {
		const struct npf_link *l = &chk->links[i];

		if (l->peer <= 0 || (size_t)l->peer >= chk->n_nodes)
			return -EINVAL;
		if ((unsigned)l->fwd >= NPF_OUT__COUNT || (unsigned)l->rev >= NPF_OUT__COUNT)
			return -EINVAL;
	}
	return 0;
}

/* Per interface: how many peers ended in each outcome, per direction. Every
 * outcome is rendered, zeros included, so alert expressions never see a series
 * vanish when a count drops to zero. */
static void render_ifaces(struct mbuf *b, const struct npf_check *chk,
			  const struct npf_verdict_report *rep, size_t n_if)
{
	static const enum npf_direction dirs[] = { NPF_DIR_FORWARD, NPF_DIR_REVERSE };

	mfamily(b, "netpreflight_interface_probe_peers", "gauge",
		"Peers of the last check per outcome, by local interface and direction.");
	for (size_t i = 0; i < n_if; i++) {
		const char *ifn = rep->ifaces[i].ifname;
		unsigned cnt[2][NPF_OUT__COUNT] = { { 0 } };

		for (size_t k = 0; k < chk->n_links; k++) {
			const struct npf_link *l = &chk->links[k];

			if (strncmp(l->ifname, ifn, IFNAMSIZ) != 0)
				continue;
			cnt[0][l->fwd]++;
			cnt[1][l->rev]++;
		}
		for (size_t d = 0; d < 2; d++) {
			for (unsigned o = 0; o < NPF_OUT__COUNT; o++) {
				mprintf(b, "netpreflight_interface_probe_peers{");
				mlabel(b, true, "interface", ifn, IFNAMSIZ);
				mlabel(b, false, "direction", npf_direction_name(dirs[d]), 16);
				mlabel(b, false, "outcome", npf_outcome_name((enum npf_outcome)o), 32);
				mprintf(b, "} %u\n", cnt[d][o]);
			}
		}
	}
	mfamily(b, "netpreflight_interface_probe_success", "gauge",
		"1 when the interface worked to and from every probed peer in the last check.");
	for (size_t i = 0; i < n_if; i++) {
		mprintf(b, "netpreflight_interface_probe_success{");
		mlabel(b, true, "interface", rep->ifaces[i].ifname, IFNAMSIZ);
		mprintf(b, "} %d\n", rep->ifaces[i].works ? 1 : 0);
	}
}

/* The verdict is the decision's (npf_recommend): without one the family is left out, as
 * Prometheus expects of a value that is not known, rather than a made-up "unknown", which
 * is a verdict of its own (evidence incomplete). */
static void render_verdict(struct mbuf *b, const struct npf_recommendation *rec)
{
	if (!rec)
		return;
	mfamily(b, "netpreflight_last_check_verdict", "gauge",
		"Verdict of the last check (1 on the current one).");
	for (size_t i = 0; i < NPF_VERDICT__COUNT; i++)
		mprintf(b, "netpreflight_last_check_verdict{verdict=\"%s\"} %d\n",
			npf_verdict_name(verdict_order[i]),
			verdict_order[i] == rec->verdict ? 1 : 0);
}

static void render_check(struct mbuf *b, const struct npf_check *chk,
			 const struct npf_verdict_report *rep, const struct npf_recommendation *rec)
{
	size_t n_if = rep->n_ifaces < NPF_METRICS_MAX_IFACES ? rep->n_ifaces :
							       NPF_METRICS_MAX_IFACES;

	mfamily(b, "netpreflight_last_check_timestamp_seconds", "gauge",
		"Unix time the last check finished.");
	mprintf(b, "netpreflight_last_check_timestamp_seconds ");
	mseconds(b, chk->started_unix_ms + chk->duration_ms);
	mfamily(b, "netpreflight_last_check_duration_seconds", "gauge",
		"Wall time of the last check.");
	mprintf(b, "netpreflight_last_check_duration_seconds ");
	mseconds(b, chk->duration_ms);
	mfamily(b, "netpreflight_last_check_timeout_seconds", "gauge",
		"Probe timeout the last check ran under.");
	mprintf(b, "netpreflight_last_check_timeout_seconds ");
	mseconds(b, chk->timeout_ms);
	mfamily(b, "netpreflight_last_check_peers", "gauge", "Peers in the last check.");
	mprintf(b, "netpreflight_last_check_peers %zu\n", rep->n_peers);
	mfamily(b, "netpreflight_last_check_peers_unavailable", "gauge",
		"Peers of the last check whose daemon did not answer.");
	mprintf(b, "netpreflight_last_check_peers_unavailable %zu\n", rep->n_unavailable);
	render_verdict(b, rec);
	render_ifaces(b, chk, rep, n_if);
	mfamily(b, "netpreflight_metrics_interfaces_dropped", "gauge",
		"Interfaces of the last check left out of the per-interface metrics (cap).");
	mprintf(b, "netpreflight_metrics_interfaces_dropped %zu\n", rep->n_ifaces - n_if);
}

static void render_rec(struct mbuf *b, const struct npf_recommendation *rec)
{
	if (rec->have_choice) {
		const char *v;

		mfamily(b, "netpreflight_recommendation_info", "gauge",
			"The environment currently recommended for this node (value 1).");
		mprintf(b, "netpreflight_recommendation_info{");
		mlabel(b, true, "interface", rec->ifname, IFNAMSIZ);
		mlabel(b, false, "network", rec->cidr, sizeof(rec->cidr));
		v = var_value(rec, "NCCL_SOCKET_IFNAME");
		mlabel(b, false, "nccl_socket_ifname", v, 256);
		v = var_value(rec, "NCCL_IB_HCA");
		mlabel(b, false, "nccl_ib_hca", v, 256);
		v = var_value(rec, "NCCL_IB_GID_INDEX");
		mlabel(b, false, "nccl_ib_gid_index", v, 16);
		mprintf(b, "} 1\n");
	}
	if (rec->nccl_default_found) {
		mfamily(b, "netpreflight_nccl_default_passed", "gauge",
			"1 when the interface NCCL picks with no settings passed the check.");
		mprintf(b, "netpreflight_nccl_default_passed{");
		mlabel(b, true, "interface", rec->nccl_default.ifname, IFNAMSIZ);
		mprintf(b, "} %d\n", rec->nccl_default_passed ? 1 : 0);
	}
}

int npf_metrics_render(const struct npf_check *chk, const struct npf_recommendation *rec,
		       const struct npf_metrics_counters *ctr, char **out)
{
	struct npf_verdict_report rep = { 0 };
	struct mbuf b = { 0 };
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (chk) {
		r = check_consistent(chk);
		if (r < 0)
			return r;
		r = npf_verdict_compute(chk, &rep);
		if (r < 0)
			return r;
	}

	mfamily(&b, "netpreflight_build_info", "gauge", "netpreflight build (value 1).");
	mprintf(&b, "netpreflight_build_info{version=\"%s\"} 1\n", NPF_VERSION);
	if (ctr)
		render_counters(&b, ctr);
	if (chk)
		render_check(&b, chk, &rep, rec);
	if (rec)
		render_rec(&b, rec);

	npf_verdict_report_clear(&rep);
	if (b.err) {
		free(b.p);
		return b.err;
	}
	*out = b.p;
	return (int)b.len;
}
