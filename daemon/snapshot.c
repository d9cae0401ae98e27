// SPDX-License-Identifier: MIT
/* The inventory snapshot: built whole, swapped whole, rebuilt after netlink link/address events. */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "clock.h"
#include "daemon.h"
#include "inventory.h"
#include "log.h"
#include "probe.h"

/* Flags whose change alters what a probe would see. */
#define LINK_FLAGS (IFF_UP | IFF_RUNNING) /* carrier changes show in operstate */

const struct npf_inventory *snap_inventory(void *userdata)
{
	const struct npf_daemon *d = userdata;

	return d->inv;
}

/* The next address at or after *i that can be a candidate (loopback and link-local never
 * are: IPv6 DAD finishing on fe80:: a second after link-up must not drop a verified
 * check), or NULL. */
static const struct npf_addr *next_relevant(const struct npf_iface *f, size_t *i)
{
	for (; *i < f->n_addrs; (*i)++)
		if (!npf_addr_is_local_only(&f->addrs[*i]))
			return &f->addrs[(*i)++];
	return NULL;
}

static bool addrs_equal(const struct npf_iface *a, const struct npf_iface *b)
{
	size_t i = 0, j = 0;

	for (;;) {
		const struct npf_addr *x = next_relevant(a, &i), *y = next_relevant(b, &j);

		if (!x || !y)
			return !x && !y;
		if (x->family != y->family || x->prefixlen != y->prefixlen ||
		    memcmp(x->addr, y->addr, sizeof(x->addr)) != 0 ||
		    (x->flags & (NPF_ADDR_TENTATIVE | NPF_ADDR_DADFAILED)) !=
			    (y->flags & (NPF_ADDR_TENTATIVE | NPF_ADDR_DADFAILED)))
			return false;
	}
}

static bool iface_changed(const struct npf_iface *a, const struct npf_iface *b)
{
	return a->ifindex != b->ifindex || (a->flags & LINK_FLAGS) != (b->flags & LINK_FLAGS) ||
	       a->operstate != b->operstate || a->mtu != b->mtu || a->master != b->master ||
	       !addrs_equal(a, b);
}

static int add_name(char (**names)[IFNAMSIZ], size_t *n, const char *name)
{
	char(*p)[IFNAMSIZ] = realloc(*names, (*n + 1) * sizeof(**names));

	if (!p)
		return -ENOMEM;
	*names = p;
	snprintf(p[*n], IFNAMSIZ, "%s", name);
	(*n)++;
	return 0;
}

/* Names of interfaces that appeared, vanished or changed between snapshots.
 * *names is owned by the caller (free()). */
static int diff_inventories(const struct npf_inventory *o, const struct npf_inventory *n,
			    char (**names)[IFNAMSIZ], size_t *count)
{
	*names = NULL;
	*count = 0;
	for (size_t i = 0; i < o->n_ifaces; i++) {
		const struct npf_iface *b = npf_inventory_find_name(n, o->ifaces[i].name);

		if ((!b || iface_changed(&o->ifaces[i], b)) &&
		    add_name(names, count, o->ifaces[i].name) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n->n_ifaces; i++)
		if (!npf_inventory_find_name(o, n->ifaces[i].name) &&
		    add_name(names, count, n->ifaces[i].name) < 0)
			return -ENOMEM;
	return 0;
}

static int rebuild(struct npf_daemon *d, const char *why)
{
	struct npf_inventory *n = calloc(1, sizeof(*n)), *old = d->inv;
	char(*changed)[IFNAMSIZ] = NULL;
	size_t n_changed = 0;
	int r;

	if (!n)
		return -ENOMEM;
	r = npf_inventory_collect(n, d->cfg.daemon.sysfs_root);
	if (r < 0) {
		log_errc(r, "inventory rebuild (%s) failed, keeping the previous snapshot", why);
		free(n);
		return r;
	}
	if (old && diff_inventories(old, n, &changed, &n_changed) < 0) {
		/* Without a diff we cannot tell what is stale: treat everything as changed. */
		free(changed);
		changed = NULL;
		n_changed = 0;
		for (size_t i = 0; i < old->n_ifaces; i++)
			if (add_name(&changed, &n_changed, old->ifaces[i].name) < 0)
				break;
	}
	d->inv = n;
	d->inv_generation++;
	d->inv_unix_ms = npf_now(CLOCK_REALTIME) / USEC_PER_MSEC;
	if (old) {
		if (n_changed) {
			log_info("inventory changed (%s): %zu interface(s), first %s", why, n_changed,
				 changed[0]);
			d->snap_changed(d, (const char(*)[IFNAMSIZ])changed, n_changed);
		} else {
			log_debug("inventory rebuilt (%s): no relevant change", why);
		}
		if (n_changed && d->probe) {
			r = npf_probe_ctx_refresh(d->probe);
			if (r < 0)
				log_errc(r, "probe listeners refresh");
		}
		npf_inventory_clear(old);
		free(old);
	}
	free(changed);
	d->ready = true;
	dmn_notify_status(d);
	return 0;
}

static int on_debounce(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	rebuild(userdata, "netlink event");
	return 0;
}

static int on_redump(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct npf_daemon *d = userdata;

	(void)usec;
	rebuild(d, "periodic");
	d->snap_changed(d, NULL, 0);
	sd_event_source_set_time_relative(s, DMN_REDUMP_MS * 1000ull);
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

static void mark_dirty(struct npf_daemon *d)
{
	int enabled = SD_EVENT_OFF;

	/* A burst (an interface coming up brings link + several address messages)
	 * coalesces into one rebuild DMN_DEBOUNCE_MS after the first message. */
	sd_event_source_get_enabled(d->debounce_src, &enabled);
	if (enabled != SD_EVENT_OFF)
		return;
	sd_event_source_set_time_relative(d->debounce_src, DMN_DEBOUNCE_MS * 1000ull);
	sd_event_source_set_enabled(d->debounce_src, SD_EVENT_ONESHOT);
}

/* Reads what the monitor socket holds; true when anything changed. The content does not
 * matter: any link/address message means "re-dump". Bounded so a flood cannot starve the
 * loop; the rest stays queued. */
static bool drain_monitor(struct npf_daemon *d)
{
	char buf[32768]; /* MNL_SOCKET_DUMP_SIZE; MNL_SOCKET_BUFFER_SIZE is a runtime value */
	bool dirty = false;

	for (int i = 0; i < 64; i++) {
		ssize_t n = mnl_socket_recvfrom(d->nl, buf, sizeof(buf));

		if (n > 0) {
			dirty = true;
			continue;
		}
		if (n < 0 && errno == ENOBUFS) {
			/* Overrun: events were lost, so a full re-dump is exactly right. */
			dirty = true;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			log_warn("netlink monitor");
		break;
	}
	return dirty;
}

static int on_netlink(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct npf_daemon *d = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	if (drain_monitor(d))
		mark_dirty(d);
	return 0;
}

void snap_settle(struct npf_daemon *d)
{
	int enabled = SD_EVENT_OFF;

	if (!d->nl || !d->debounce_src)
		return;
	/* A check is about to take its candidates from d->inv: an interface that came up (or
	 * got its address) just before the request must be in it, not wait for the debounce.
	 * Events still unread count too. */
	if (drain_monitor(d))
		mark_dirty(d);
	sd_event_source_get_enabled(d->debounce_src, &enabled);
	if (enabled == SD_EVENT_OFF)
		return;
	sd_event_source_set_enabled(d->debounce_src, SD_EVENT_OFF);
	rebuild(d, "netlink event, before a check");
}

static int open_monitor(struct npf_daemon *d)
{
	int r;

	d->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!d->nl)
		return -errno;
	if (mnl_socket_bind(d->nl, RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
			    MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	r = sd_event_add_io(d->event, &d->nl_src, mnl_socket_get_fd(d->nl), EPOLLIN, on_netlink,
			    d);
	if (r < 0)
		return r;
	r = sd_event_add_time_relative(d->event, &d->debounce_src, CLOCK_MONOTONIC,
				       DMN_DEBOUNCE_MS * 1000ull, 0, on_debounce, d);
	if (r < 0)
		return r;
	sd_event_source_set_enabled(d->debounce_src, SD_EVENT_OFF);
	r = sd_event_add_time_relative(d->event, &d->redump_src, CLOCK_MONOTONIC,
				       DMN_REDUMP_MS * 1000ull, 0, on_redump, d);
	return r < 0 ? r : 0;
}

int snap_start(struct npf_daemon *d, snap_changed_fn changed)
{
	d->snap_changed = changed;
	int r;

	/* Subscribe before the first dump so a change during the dump is not lost. */
	r = open_monitor(d);
	if (r < 0)
		return r;
	return rebuild(d, "start-up");
}

void snap_stop(struct npf_daemon *d)
{
	d->nl_src = sd_event_source_disable_unref(d->nl_src);
	d->debounce_src = sd_event_source_disable_unref(d->debounce_src);
	d->redump_src = sd_event_source_disable_unref(d->redump_src);
	if (d->nl)
		mnl_socket_close(d->nl);
	d->nl = NULL;
	if (d->inv) {
		npf_inventory_clear(d->inv);
		free(d->inv);
		d->inv = NULL;
	}
}

json_t *snap_status_json(const struct npf_daemon *d)
{
	const struct npf_inventory *inv = d->inv;
	struct npf_candidate *cands = NULL;
	size_t n_cands = 0, n_up = 0, n_running = 0, n_addrs = 0;
	const struct npf_pattern_list *excl = &d->cfg.probe.interfaces_exclude;
	const char *globs[NPF_CONFIG_PATTERNS_MAX];
	json_t *names = json_array(), *out;

	if (!names || !inv || excl->n > NPF_CONFIG_PATTERNS_MAX) {
		json_decref(names);
		return NULL;
	}
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		n_up += (inv->ifaces[i].flags & IFF_UP) != 0;
		n_running += (inv->ifaces[i].flags & IFF_RUNNING) != 0;
		n_addrs += inv->ifaces[i].n_addrs;
	}
	for (unsigned int i = 0; i < excl->n && i < NPF_CONFIG_PATTERNS_MAX; i++)
		globs[i] = excl->pat[i];
	/* Same selection as the probe engine's HELLO, so status shows what peers will see. */
	if (npf_candidates_from_inventory(inv, globs, excl->n, &cands, &n_cands) >= 0) {
		for (size_t i = 0; i < n_cands; i++) {
			bool seen = false;

			for (size_t k = 0; k < i && !seen; k++)
				seen = strcmp(cands[k].ifname, cands[i].ifname) == 0;
			if (!seen)
				json_array_append_new(names, json_string(cands[i].ifname));
		}
		free(cands);
	}
	out = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:o}", "generation",
			(json_int_t)d->inv_generation, "updated_unix_ms",
			(json_int_t)d->inv_unix_ms, "interfaces", (json_int_t)inv->n_ifaces, "up",
			(json_int_t)n_up, "running", (json_int_t)n_running, "addresses",
			(json_int_t)n_addrs, "rdma_devices", (json_int_t)inv->n_rdma, "rdma_note",
			inv->rdma_note, "candidates", names);
	return out;
}
