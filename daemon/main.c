// SPDX-License-Identifier: MIT
/* netpreflightd: options and config, the sd-event loop and its signals, and the wiring of the
 * modules (main.c calls them; none calls main.c). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "conffile.h"
#include "daemon.h"
#include "keyfile.h"
#include "log.h"
#include "probe.h"

#define EXIT_USAGE 2

enum {
	OPT_CONFIG = 'c',
	OPT_FOREGROUND = 'f',
	OPT_HELP = 'h',
	OPT_VERSION = 'V',
	OPT_CHECK_CONFIG = 0x100,
	OPT_PRINT,
	OPT_DEBUG,
	OPT_KEY_BASE = 0x200, /* + index into the config key table */
};

static void usage(FILE *f)
{
	const struct npf_config_key *keys;
	size_t n;

	keys = npf_config_keys(&n);
	fprintf(f,
		"usage: netpreflightd [OPTIONS]\n"
		"  -c, --config FILE     configuration file (default %s; optional unless given)\n"
		"  -f, --foreground      log plain lines to stderr (default: journal prefixes)\n"
		"      --debug           debug logging (same as --log-level debug)\n"
		"      --check-config    parse the configuration and exit\n"
		"      --print           with --check-config: print the effective configuration\n"
		"  -V, --version         print the version\n"
		"  -h, --help            this help\n"
		"every configuration key is also an option (overrides the file):\n",
		NPF_CONFIG_DEFAULT_PATH);
	for (size_t i = 0; i < n; i++) {
		char opt[96];

		snprintf(opt, sizeof(opt), "--%s %s", keys[i].option,
			 npf_config_type_name(keys[i].type));
		fprintf(f, "      %-32s [%s] %s: %s\n", opt, keys[i].section, keys[i].name,
			keys[i].help);
	}
	fprintf(f, "The daemon never forks: run it under systemd (Type=notify) or with --foreground.\n");
}

/* Defaults, then the file, then the command line: the same order at start-up
 * and on SIGHUP so an option always wins over the file. */
static int load_config(const struct npf_daemon *d, struct npf_config *cfg, char *err, size_t len)
{
	int r;

	r = npf_config_load_file(cfg, d->config_path, d->config_explicit, err, len);
	if (r < 0)
		return r;
	for (size_t i = 0; i < d->n_opts; i++) {
		char e[256];

		r = npf_config_set(cfg, NULL, d->opts[i].option, d->opts[i].value, e, sizeof(e));
		if (r < 0) {
			snprintf(err, len, "--%s: %s", d->opts[i].option, e);
			return r;
		}
	}
	return 0;
}

static int on_term(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct npf_daemon *d = userdata;

	(void)s;
	log_info("signal %u: exiting", si->ssi_signo);
	sd_notify(0, "STOPPING=1");
	return sd_event_exit(d->event, 0);
}

/* Keys whose new value only takes effect on restart: the socket is bound, the
 * probe listeners and their limits are set when the probe context starts. */
static void keep_restart_only(struct npf_daemon *d, struct npf_config *n)
{
	const struct npf_config *o = &d->cfg;

	if (strcmp(o->daemon.socket, n->daemon.socket) || strcmp(o->daemon.node_name,
								   n->daemon.node_name) ||
	    o->probe.port != n->probe.port || o->probe.max_conns != n->probe.max_conns ||
	    o->probe.full_mesh_max != n->probe.full_mesh_max ||
	    o->probe.sparse_k != n->probe.sparse_k || o->probe.bulk_bytes != n->probe.bulk_bytes ||
	    memcmp(&o->probe.interfaces_exclude, &n->probe.interfaces_exclude,
		   sizeof(o->probe.interfaces_exclude)) != 0)
		log_warnx("reload: socket, node_name and [probe] port/max_conns/full_mesh_max/"
			  "sparse_k/bulk_bytes/interfaces_exclude change only on restart; keeping "
			  "the running values");
	memcpy(n->daemon.socket, o->daemon.socket, sizeof(n->daemon.socket));
	memcpy(n->daemon.node_name, o->daemon.node_name, sizeof(n->daemon.node_name));
	n->probe.port = o->probe.port;
	n->probe.max_conns = o->probe.max_conns;
	n->probe.full_mesh_max = o->probe.full_mesh_max;
	n->probe.sparse_k = o->probe.sparse_k;
	n->probe.bulk_bytes = o->probe.bulk_bytes;
	n->probe.interfaces_exclude = o->probe.interfaces_exclude;
}

static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct npf_daemon *d = userdata;
	struct npf_config n;
	char err[512];
	int r;

	(void)s;
	(void)si;
	sd_notify(0, "RELOADING=1");
	r = load_config(d, &n, err, sizeof(err));
	if (r < 0) {
		log_errc(r, "reload failed, keeping the previous configuration: %s", err);
	} else {
		keep_restart_only(d, &n);
		d->cfg = n;
		log_set_verbosity(d->cfg.daemon.log_level);
		dchk_expire(d);
		/* [publish] may have changed: cached answers follow the new policy. */
		dchk_redecide(d);
		log_info("configuration reloaded from %s", d->config_path);
	}
	sd_notify(0, "READY=1");
	dmn_notify_status(d);
	return 0;
}

/* The snapshot's changes, to the checks: results resting on a changed interface are
 * dropped (and the rest decided again); the periodic tick drops expired ones. */
static void on_inventory_changed(struct npf_daemon *d, const char (*names)[IFNAMSIZ], size_t n)
{
	if (n)
		dchk_invalidate(d, names, n);
	else
		dchk_expire(d);
}

static int resolve_node_name(struct npf_daemon *d)
{
	char host[256];

	if (d->cfg.daemon.node_name[0]) {
		snprintf(d->node_name, sizeof(d->node_name), "%s", d->cfg.daemon.node_name);
	} else {
		if (gethostname(host, sizeof(host)) < 0)
			return -errno;
		host[sizeof(host) - 1] = '\0';
		if (strlen(host) >= sizeof(d->node_name))
			return -ENAMETOOLONG;
		memcpy(d->node_name, host, strlen(host) + 1);
	}
	return npf_api_name_valid(d->node_name) ? 0 : -EINVAL;
}

static void probe_listen_changed(void *userdata)
{
	struct npf_daemon *d = userdata;
	const char *e = npf_probe_listen_error(d->probe);

	if (e)
		log_warnx("probe: port not bound on %s: not ready", e);
	else
		log_info("probe: port bound on every candidate address");
	dmn_notify_status(d);
}

static int start_probe(struct npf_daemon *d)
{
	const struct npf_pattern_list *excl = &d->cfg.probe.interfaces_exclude;
	const char *globs[NPF_CONFIG_PATTERNS_MAX];
	struct npf_probe_params p = {
		.event = d->event,
		.port = d->cfg.probe.port,
		.node_name = d->node_name,
		.instance = d->instance,
		.inventory = snap_inventory,
		.userdata = d,
		.max_conns = d->cfg.probe.max_conns,
		.full_mesh_max = d->cfg.probe.full_mesh_max,
		.sparse_k = d->cfg.probe.sparse_k,
		.bulk_bytes = d->cfg.probe.bulk_bytes,
		.exclude = globs,
		.keys = &d->keys,
		.listen_changed = probe_listen_changed,
	};
	char err[256] = "";
	int r;

	for (unsigned int i = 0; i < excl->n && i < NPF_CONFIG_PATTERNS_MAX; i++)
		globs[p.n_exclude++] = excl->pat[i];
	if (d->cfg.probe.key_file[0]) {
		/* A key that is configured but unusable is fatal: running
		 * unauthenticated instead would be a silent downgrade. */
		r = npf_keyfile_load(d->cfg.probe.key_file, &d->keys, err, sizeof(err));
		if (r < 0) {
			log_warnx("probe: cluster key: %s", err);
			return r;
		}
		log_info("probe: peers authenticated with the cluster key in %s (%zu key%s)",
			 d->cfg.probe.key_file, d->keys.n, d->keys.n > 1 ? "s" : "");
	} else {
		log_warnx("probe: no [probe] key_file: peers are NOT authenticated; anyone who "
			  "reaches port %u can answer probes (see README, cluster key)",
			  d->cfg.probe.port);
	}
	r = npf_probe_ctx_new(&d->probe, &p);
	sodium_memzero(&d->keys.k, sizeof(d->keys.k)); /* the context holds its copy */
	if (r == 0)
		npf_probe_set_job_handler(d->probe, jround_on_remote_row);
	return r;
}

static int setup_loop(struct npf_daemon *d)
{
	sigset_t ss;
	int r;

	r = sd_event_default(&d->event);
	if (r < 0)
		return r;
	/* sd-event wants the signals blocked so they arrive via signalfd only. */
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
		return -errno;
	/* Writes to vanished clients must fail with EPIPE, not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);
	if ((r = sd_event_add_signal(d->event, NULL, SIGTERM, on_term, d)) < 0 ||
	    (r = sd_event_add_signal(d->event, NULL, SIGINT, on_term, d)) < 0 ||
	    (r = sd_event_add_signal(d->event, NULL, SIGHUP, on_hup, d)) < 0)
		return r;
	/* No-op unless WatchdogSec= is set: then sd-event sends WATCHDOG=1 at half the period. */
	r = sd_event_set_watchdog(d->event, true);
	return r < 0 ? r : 0;
}

static int parse_args(struct npf_daemon *d, int argc, char **argv, bool *check_only, bool *print)
{
	static const struct option fixed[] = {
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "foreground", no_argument, NULL, OPT_FOREGROUND },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "print", no_argument, NULL, OPT_PRINT },
		{ "debug", no_argument, NULL, OPT_DEBUG },
	};
	const size_t n_fixed = sizeof(fixed) / sizeof(fixed[0]);
	const struct npf_config_key *keys;
	struct option *longopts;
	size_t n_keys;
	int c, ret = 0;

	keys = npf_config_keys(&n_keys);
	longopts = calloc(n_fixed + n_keys + 1, sizeof(*longopts));
	d->opts = calloc((size_t)argc + 1, sizeof(*d->opts));
	if (!longopts || !d->opts) {
		free(longopts);
		return -ENOMEM;
	}
	memcpy(longopts, fixed, sizeof(fixed));
	for (size_t i = 0; i < n_keys; i++)
		longopts[n_fixed + i] = (struct option){ keys[i].option, required_argument, NULL,
							  OPT_KEY_BASE + (int)i };
	while ((c = getopt_long(argc, argv, "c:fhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CONFIG:
			d->config_path = optarg;
			d->config_explicit = true;
			break;
		case OPT_FOREGROUND:
			d->foreground = true;
			break;
		case OPT_HELP:
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			printf("netpreflightd %s\n", NPF_VERSION);
			exit(0);
		case OPT_CHECK_CONFIG:
			*check_only = true;
			break;
		case OPT_PRINT:
			*print = true;
			break;
		case OPT_DEBUG:
			d->opts[d->n_opts++] = (struct dmn_opt){ "log-level", "debug" };
			break;
		default:
			if (c >= OPT_KEY_BASE && (size_t)(c - OPT_KEY_BASE) < n_keys) {
				d->opts[d->n_opts++] =
					(struct dmn_opt){ keys[c - OPT_KEY_BASE].option, optarg };
				break;
			}
			usage(stderr);
			ret = -EINVAL;
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "netpreflightd: unexpected argument '%s'\n", argv[optind]);
		ret = -EINVAL;
	}
out:
	free(longopts);
	return ret;
}

/* A whole-job check holds about 1.5k descriptors at the default caps, over the usual soft
 * limit of 1024; the hard limit is what the service (LimitNOFILE=) or the admin granted.
 * Nothing here uses select(), so descriptors above 1024 are fine. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		log_debug("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return;
	}
	if (rl.rlim_cur >= rl.rlim_max) {
		log_debug("open files limit %llu (already the hard limit)",
			  (unsigned long long)rl.rlim_cur);
		return;
	}
	rl.rlim_cur = rl.rlim_max;
	if (rl.rlim_cur == RLIM_INFINITY) {
		/* The kernel refuses more than fs.nr_open even for an unlimited hard limit. */
		FILE *f = fopen("/proc/sys/fs/nr_open", "re");
		unsigned long long n = 0;

		if (f) {
			if (fscanf(f, "%llu", &n) != 1)
				n = 0;
			fclose(f);
		}
		rl.rlim_cur = n ? (rlim_t)n : 1048576;
	}
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_debug("raising the open files limit to %llu: %s",
			  (unsigned long long)rl.rlim_cur, strerror(errno));
	else
		log_debug("open files limit raised to %llu", (unsigned long long)rl.rlim_cur);
}

int main(int argc, char **argv)
{
	struct npf_daemon d = {
		.config_path = NPF_CONFIG_DEFAULT_PATH,
		.listen_fd = -1,
	};
	bool check_only = false, print = false;
	const char *js = getenv("JOURNAL_STREAM");
	char err[512];
	int r, rc = EXIT_FAILURE;

	if (parse_args(&d, argc, argv, &check_only, &print) < 0)
		return EXIT_USAGE;
	/* journald parses "<N>" prefixes; a terminal or a test log wants plain lines. */
	log_init("netpreflightd", (js && *js) || !d.foreground ? NPF_LOG_JOURNAL : NPF_LOG_STDERR,
		 0);
	r = load_config(&d, &d.cfg, err, sizeof(err));
	if (r < 0) {
		log_errc(r, "configuration: %s", err);
		free(d.opts);
		return EXIT_USAGE;
	}
	log_set_verbosity(d.cfg.daemon.log_level);
	if (check_only) {
		if (print) {
			char *buf = malloc(NPF_CONFIG_DUMP_MAX);

			if (buf && npf_config_dump(&d.cfg, buf, NPF_CONFIG_DUMP_MAX) >= 0)
				fputs(buf, stdout);
			free(buf);
		}
		free(d.opts);
		return 0;
	}
	raise_nofile();
	r = resolve_node_name(&d);
	if (r < 0) {
		log_errc(r, "node name '%s' is not usable (1-%d of [A-Za-z0-9._-]); set --node-name",
			 d.node_name, NPF_NAME_MAX - 1);
		free(d.opts);
		return EXIT_USAGE;
	}
	if (sodium_init() < 0)
		fatalx("libsodium initialisation failed");
	randombytes_buf(&d.instance, sizeof(d.instance));
	d.start_mono_us = npf_now(CLOCK_MONOTONIC);
	d.start_unix_ms = npf_now(CLOCK_REALTIME) / USEC_PER_MSEC;

	r = setup_loop(&d);
	if (r < 0) {
		log_errc(r, "event loop");
		goto out;
	}
	r = snap_start(&d, on_inventory_changed);
	if (r < 0) {
		log_errc(r, "inventory");
		goto out;
	}
	r = start_probe(&d);
	if (r < 0) {
		log_errc(r, "probe engine on port %u", d.cfg.probe.port);
		goto out;
	}
	r = ctl_open(&d);
	if (r < 0) {
		log_errc(r, "local API socket %s", d.cfg.daemon.socket);
		goto out;
	}
	log_info("node %s (instance %016" PRIx64 ") ready: socket %s, probe port %u",
		 d.node_name, d.instance, d.cfg.daemon.socket, d.cfg.probe.port);
	/* Build info and counters are there before the first check. */
	d.metrics.start_unix_ms = d.start_unix_ms;
	d.metrics.auth_reported = true;
	d.metrics.authenticated = d.keys.n > 0;
	dchk_publish_metrics(&d);
	dmn_notify_status(&d);
	r = sd_event_loop(d.event);
	if (r < 0)
		log_errc(r, "event loop");
	else
		rc = 0;
out:
	/* Clients first, so the probe context's cancel callbacks find no waiters. */
	ctl_close(&d);
	jround_free_all(&d);
	npf_probe_ctx_free(d.probe);
	dchk_free_all(&d);
	snap_stop(&d);
	sd_event_unref(d.event);
	free(d.opts);
	return rc;
}
