// SPDX-License-Identifier: MIT
/* The netlink I/O shell against the running kernel: dump, sysfs fallbacks,
 * route lookup, capture + replay. Uses only loopback, present everywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npf_test.h"

/* model.h pulls <net/if.h>, which must precede <linux/if.h>. */
#include "model.h"
#include "netlink.h"
#include "nlif.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void dump_live_namespace(void **state)
{
	struct npf_inventory inv = { 0 };
	const struct npf_iface *lo;
	int n;
	(void)state;

	n = nlsys_dump_ifaces(&inv, NULL);
	assert_true(n > 0);
	assert_int_equal((size_t)n, inv.n_ifaces);
	for (size_t i = 1; i < inv.n_ifaces; i++)
		assert_true(inv.ifaces[i - 1].ifindex < inv.ifaces[i].ifindex);
	lo = npf_inventory_find_name(&inv, "lo");
	assert_non_null(lo);
	assert_int_equal(lo->kind, NPF_KIND_LOOPBACK);
	assert_true(lo->evidence[0] != '\0');
	/* Loopback has no speed, and nobody may invent one. */
	assert_int_equal(lo->speed_mbps, NPF_SPEED_UNKNOWN);
	/* A second dump replaces the first instead of appending to it. */
	assert_int_equal(nlsys_dump_ifaces(&inv, NULL), n);
	assert_int_equal(inv.n_ifaces, (size_t)n);
	npf_inventory_clear(&inv);
}

/* A captured sysfs tree: lo gets a device/ and a speed, which only the
 * sysfs fallback can report (ethtool has no link modes for lo). */
static void sysfs_root_fallbacks(void **state)
{
	char root[] = "/tmp/npf-test-netlink-XXXXXX";
	char path[512];
	struct npf_inventory inv = { 0 };
	const struct npf_iface *lo;
	(void)state;

	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/class", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/class/net", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/class/net/lo", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/class/net/lo/device", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/class/net/lo/speed", root);
	write_file(path, "25000\n");

	assert_true(nlsys_dump_ifaces(&inv, root) > 0);
	lo = npf_inventory_find_name(&inv, "lo");
	assert_non_null(lo);
	assert_true(lo->has_device);
	assert_int_equal(lo->speed_mbps, 25000);

	/* sysfs "unknown" spellings stay unknown. */
	write_file(path, "4294967295\n");
	assert_true(nlsys_dump_ifaces(&inv, root) > 0);
	lo = npf_inventory_find_name(&inv, "lo");
	assert_int_equal(lo->speed_mbps, NPF_SPEED_UNKNOWN);
	write_file(path, "-1\n");
	assert_true(nlsys_dump_ifaces(&inv, root) > 0);
	assert_int_equal(npf_inventory_find_name(&inv, "lo")->speed_mbps, NPF_SPEED_UNKNOWN);
	npf_inventory_clear(&inv);

	unlink(path);
	snprintf(path, sizeof(path), "%s/class/net/lo/device", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/class/net/lo", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/class/net", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/class", root);
	rmdir(path);
	rmdir(root);
}

static void route_to_loopback(void **state)
{
	struct npf_addr dst = { .family = AF_INET, .prefixlen = 32 };
	struct npf_inventory inv = { 0 };
	const struct npf_iface *lo;
	int oif = -1, rc;
	(void)state;

	assert_true(nlsys_dump_ifaces(&inv, NULL) > 0);
	lo = npf_inventory_find_name(&inv, "lo");
	assert_non_null(lo);
	dst.addr[0] = 127;
	dst.addr[3] = 1;
	rc = nlsys_route_get(&dst, &oif);
	if (!(lo->flags & IFF_UP)) {
		/* A fresh namespace has lo down and no local routes. */
		npf_inventory_clear(&inv);
		npf_skip("lo is down in this network namespace: no local routes to ask about");
	}
	assert_int_equal(rc, 0);
	assert_int_equal(oif, lo->ifindex);

	dst.family = AF_UNSPEC;
	assert_int_equal(nlsys_route_get(&dst, &oif), -EAFNOSUPPORT);
	npf_inventory_clear(&inv);
}

static void capture_replays_like_live(void **state)
{
	char path[] = "/tmp/npf-test-capture-XXXXXX";
	struct npf_inventory live = { 0 }, replay = { 0 };
	struct stat st;
	char *buf;
	int fd, n;
	(void)state;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	n = nlsys_capture(path);
	assert_true(n > 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, n);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, (size_t)n), n);
	close(fd);
	unlink(path);

	assert_true(nlif_parse_dump(buf, (size_t)n, &replay) > 0);
	nlif_inventory_sort(&replay);
	assert_true(nlsys_dump_ifaces(&live, NULL) > 0);
	/* Links can come and go between the two dumps on a busy host; loopback
	 * is stable, so compare it and only check the counts loosely. */
	assert_non_null(npf_inventory_find_name(&replay, "lo"));
	assert_int_equal(npf_inventory_find_name(&replay, "lo")->n_addrs,
			 npf_inventory_find_name(&live, "lo")->n_addrs);
	assert_true(replay.n_ifaces > 0);
	npf_inventory_clear(&live);
	npf_inventory_clear(&replay);
	free(buf);

	/* An unwritable path fails cleanly. */
	assert_true(nlsys_capture("/nonexistent-dir/x.nl") < 0);
}

/* netlink.c restarts dumps on mnl_cb_run() failing with EINTR; this pins the
 * libmnl behaviour it relies on (NLM_F_DUMP_INTR -> -1/EINTR in 1.0.4). */
static void libmnl_reports_dump_intr(void **state)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	(void)state;

	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_MULTI | NLM_F_DUMP_INTR;
	nlh->nlmsg_seq = 5;
	errno = 0;
	assert_int_equal(mnl_cb_run(buf, nlh->nlmsg_len, 5, 0, NULL, NULL), MNL_CB_ERROR);
	assert_int_equal(errno, EINTR);
	nlh->nlmsg_flags = NLM_F_MULTI;
	assert_int_equal(mnl_cb_run(buf, nlh->nlmsg_len, 5, 0, NULL, NULL), MNL_CB_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dump_live_namespace),
		cmocka_unit_test(sysfs_root_fallbacks),
		cmocka_unit_test(route_to_loopback),
		cmocka_unit_test(capture_replays_like_live),
		cmocka_unit_test(libmnl_reports_dump_intr),
	};

	return npf_run_tests(tests, NULL, NULL);
}
