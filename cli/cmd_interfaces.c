// SPDX-License-Identifier: MIT
/* `netpreflight interfaces`: the local interface inventory as a table or JSON. */
#include "cli.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <jansson.h>

#include "classify.h"
#include "iface_json.h"
#include "inventory.h"
#include "model.h"
#include "netlink.h"

#define IF_COLS 7
#define IF_CELL 512

static const char *const if_heads[IF_COLS] = {
	"NAME", "KIND/ROLE", "STATE", "CARRIER", "SPEED", "MTU", "ADDRESSES",
};

static void if_usage(FILE *f)
{
	cli_usage(f, "interfaces");
	fprintf(f, "  --json          print the inventory as JSON (docs/json.md)\n"
		   "  --capture FILE  write a raw link+address+route netlink dump to FILE\n"
		   "                  (replayable test fixture) and exit\n");
}

static void fmt_speed(char *buf, size_t sz, int64_t mbps)
{
	if (mbps < 0)
		snprintf(buf, sz, "-");
	else if (mbps >= 1000 && mbps % 1000 == 0)
		snprintf(buf, sz, "%" PRId64 "G", mbps / 1000);
	else
		snprintf(buf, sz, "%" PRId64 "M", mbps);
}

static void fmt_kind_role(char *buf, size_t sz, const struct npf_iface *ifc)
{
	/* A kind we do not model is more useful verbatim ("ifb") than as "other". */
	const char *kind = ifc->kind == NPF_KIND_OTHER && ifc->kind_str[0] ? ifc->kind_str :
									     npf_kind_name(ifc->kind);
	char roles[128];

	if (classify_roles_str(ifc->roles, ",", roles, sizeof(roles)))
		snprintf(buf, sz, "%s/%s", kind, roles);
	else
		snprintf(buf, sz, "%s", kind);
}

/* "addr/prefix" list like `ip -br addr`; addresses that cannot carry traffic
 * yet (tentative, DAD failed) are marked so nobody trusts them. */
static void fmt_addrs(char *buf, size_t sz, const struct npf_iface *ifc)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ifc->n_addrs && used + 1 < sz; i++) {
		const struct npf_addr *a = &ifc->addrs[i];
		char txt[INET6_ADDRSTRLEN];
		const char *mark = (a->flags & NPF_ADDR_DADFAILED) ? "(dadfailed)" :
				   (a->flags & NPF_ADDR_TENTATIVE) ? "(tentative)" :
				   (a->flags & NPF_ADDR_DEPRECATED) ? "(deprecated)" : "";
		int w = snprintf(buf + used, sz - used, "%s%s/%u%s", used ? " " : "",
				 npf_addr_str(a, txt, sizeof(txt)), a->prefixlen, mark);

		if (w < 0 || (size_t)w >= sz - used)
			break;
		used += (size_t)w;
	}
}

static void fmt_row(char cells[IF_COLS][IF_CELL], const struct npf_iface *ifc)
{
	snprintf(cells[0], IF_CELL, "%s", ifc->name);
	fmt_kind_role(cells[1], IF_CELL, ifc);
	snprintf(cells[2], IF_CELL, "%s", npf_operstate_name(ifc->operstate));
	snprintf(cells[3], IF_CELL, "%s", ifc->carrier < 0 ? "-" : ifc->carrier ? "yes" : "no");
	fmt_speed(cells[4], IF_CELL, ifc->speed_mbps);
	snprintf(cells[5], IF_CELL, "%u", ifc->mtu);
	fmt_addrs(cells[6], IF_CELL, ifc);
}

static void print_row(char cells[IF_COLS][IF_CELL], const int *width)
{
	for (int c = 0; c < IF_COLS - 1; c++)
		printf("%-*s  ", width[c], cells[c]);
	printf("%s\n", cells[IF_COLS - 1]);
}

static int print_table(const struct npf_inventory *inv)
{
	char cells[IF_COLS][IF_CELL];
	int width[IF_COLS];

	for (int c = 0; c < IF_COLS; c++)
		width[c] = (int)strlen(if_heads[c]);
	/* Two passes instead of storing every row: widths first, then print. */
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		fmt_row(cells, &inv->ifaces[i]);
		for (int c = 0; c < IF_COLS; c++)
			if ((int)strlen(cells[c]) > width[c])
				width[c] = (int)strlen(cells[c]);
	}
	for (int c = 0; c < IF_COLS; c++)
		snprintf(cells[c], IF_CELL, "%s", if_heads[c]);
	print_row(cells, width);
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		fmt_row(cells, &inv->ifaces[i]);
		print_row(cells, width);
	}
	return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
}

static int print_json(const struct npf_inventory *inv)
{
	json_t *root = json_object(), *arr = npf_ifaces_to_json(inv);
	int rc = CLI_EXIT_ERROR;

	if (!root || !arr) {
		json_decref(arr);
		cli_err("out of memory");
		goto out;
	}
	if (json_object_set_new(root, "schema", json_string("netpreflight.interfaces")) ||
	    json_object_set_new(root, "version", json_integer(1)) ||
	    json_object_set_new(root, "interfaces", arr)) {
		cli_err("out of memory");
		goto out;
	}
	if (json_dumpf(root, stdout, JSON_INDENT(2)) < 0 || fputc('\n', stdout) == EOF ||
	    fflush(stdout) != 0) {
		cli_err("writing JSON failed");
		goto out;
	}
	rc = CLI_EXIT_OK;
out:
	json_decref(root);
	return rc;
}

int cmd_interfaces(int argc, char **argv, const struct cli_global *g)
{
	static const struct option opts[] = {
		{ "capture", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct npf_inventory inv = { 0 };
	const char *capture = NULL;
	int opt, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			capture = optarg;
			break;
		case 'h':
			if_usage(stdout);
			return CLI_EXIT_OK;
		default:
			if_usage(stderr);
			return CLI_EXIT_ERROR;
		}
	}
	if (optind < argc) {
		cli_err("interfaces: unexpected argument '%s'", argv[optind]);
		if_usage(stderr);
		return CLI_EXIT_ERROR;
	}
	if (capture) {
		rc = nlsys_capture(capture);
		if (rc < 0) {
			cli_err("capture to %s failed: %s", capture, strerror(-rc));
			return CLI_EXIT_ERROR;
		}
		fprintf(stderr, "netpreflight: wrote %d bytes of netlink dump to %s\n", rc, capture);
		return CLI_EXIT_OK;
	}
	/* The full collection, so that RDMA netdevs carry their role and evidence. */
	rc = npf_inventory_collect(&inv, g->sysfs_root);
	if (rc < 0) {
		cli_err("reading interfaces over netlink failed: %s", strerror(-rc));
		return CLI_EXIT_ERROR;
	}
	rc = g->json ? print_json(&inv) : print_table(&inv);
	npf_inventory_clear(&inv);
	return rc;
}
