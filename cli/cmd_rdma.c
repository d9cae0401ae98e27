// SPDX-License-Identifier: MIT
/* `netpreflight rdma`: RDMA ports, a show_gids-style GID table and NCCL's GID choice. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <jansson.h>

#include "gid.h"
#include "model.h"
#include "netlink.h"
#include "rdma.h"
#include "rdma_join.h"
#include "rdma_json.h"
#include "rdma_sysfs.h"

#define CELL 64

/* The GID policy NCCL would apply in this shell, from the same variables. */
struct env_policy {
	struct gid_policy pol;
	bool from_env;
	const char *family, *range, *roce_version; /* as set, NULL when unset */
	int forced_index; /* NCCL_IB_GID_INDEX >= 0, else -1 */
};

static void rdma_usage(FILE *f)
{
	cli_usage(f, "rdma");
	fprintf(f,
		"  --json            print the RDMA inventory as JSON (docs/json.md)\n"
		"  --sysfs-root DIR  read a captured sysfs tree (DIR/class/infiniband/...)\n"
		"                    instead of asking libibverbs\n"
		"NCCL_IB_ADDR_FAMILY, NCCL_IB_ADDR_RANGE and NCCL_IB_ROCE_VERSION_NUM in the\n"
		"environment steer the predicted NCCL GID index, as they steer NCCL.\n");
}

static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static void env_policy_read(struct env_policy *ep)
{
	const char *gidx = env_nonempty("NCCL_IB_GID_INDEX");
	char *end;
	long v;

	memset(ep, 0, sizeof(*ep));
	gid_policy_init(&ep->pol);
	ep->forced_index = -1;
	ep->family = env_nonempty("NCCL_IB_ADDR_FAMILY");
	ep->range = env_nonempty("NCCL_IB_ADDR_RANGE");
	ep->roce_version = env_nonempty("NCCL_IB_ROCE_VERSION_NUM");
	/* Family first: the range is parsed for it, as in NCCL. Values NCCL
	 * ignores leave its defaults in place here too. */
	if (ep->family && gid_policy_set_family(&ep->pol, ep->family) < 0)
		cli_err("NCCL_IB_ADDR_FAMILY=%s is not AF_INET or AF_INET6; NCCL uses AF_INET",
			ep->family);
	if (ep->range && gid_policy_set_range(&ep->pol, ep->range) < 0)
		cli_err("NCCL_IB_ADDR_RANGE=%s is ignored by NCCL (expects ADDR/LEN)", ep->range);
	if (ep->roce_version && gid_policy_set_roce_version(&ep->pol, ep->roce_version) < 0)
		cli_err("NCCL_IB_ROCE_VERSION_NUM=%s is not a number; NCCL uses 2",
			ep->roce_version);
	ep->from_env = ep->family || ep->range || ep->roce_version;
	if (gidx) {
		errno = 0;
		v = strtol(gidx, &end, 0);
		if (!errno && end != gidx && !*end && v >= 0 && v < 65536)
			ep->forced_index = (int)v;
	}
}

static json_t *policy_json(const struct env_policy *ep)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (json_object_set_new(o, "source",
				json_string(ep->from_env ? "environment" : "defaults")) < 0 ||
	    json_object_set_new(o, "addr_family",
				json_string(ep->pol.family == AF_INET6 ? "AF_INET6" :
									  "AF_INET")) < 0 ||
	    json_object_set_new(o, "roce_version", json_integer(ep->pol.roce_version)) < 0 ||
	    json_object_set_new(o, "addr_range", ep->pol.has_range && ep->range ?
							  json_string(ep->range) :
							  json_null()) < 0 ||
	    json_object_set_new(o, "forced_gid_index",
				ep->forced_index >= 0 ? json_integer(ep->forced_index) :
							json_null()) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int print_json(const struct npf_inventory *inv, const struct env_policy *ep)
{
	json_t *body = npf_rdma_to_json(inv), *doc = json_object();
	int ret = CLI_EXIT_ERROR;

	if (!body || !doc)
		goto out;
	/* Wrapper first so readers can check the schema before anything else. */
	if (json_object_set_new(doc, "schema", json_string(NPF_RDMA_JSON_SCHEMA)) < 0 ||
	    json_object_set_new(doc, "version", json_integer(NPF_RDMA_JSON_VERSION)) < 0 ||
	    json_object_set(doc, "note", json_object_get(body, "note")) < 0 ||
	    json_object_set_new(doc, "policy", policy_json(ep)) < 0 ||
	    json_object_set(doc, "devices", json_object_get(body, "devices")) < 0)
		goto out;
	if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
		goto out;
	putchar('\n');
	ret = CLI_EXIT_OK;
out:
	if (ret != CLI_EXIT_OK)
		cli_err("cannot render JSON");
	json_decref(body);
	json_decref(doc);
	return ret;
}

/* ---- text tables ---- */

struct table {
	int ncol;
	char (*cells)[CELL]; /* nrows * ncol */
	size_t nrows, cap;
};

static char *table_add_row(struct table *t)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char(*n)[CELL] = realloc(t->cells, cap * (size_t)t->ncol * sizeof(*n));

		if (!n)
			return NULL;
		t->cells = n;
		t->cap = cap;
	}
	memset(t->cells[t->nrows * (size_t)t->ncol], 0, (size_t)t->ncol * CELL);
	return t->cells[t->nrows++ * (size_t)t->ncol];
}

static void table_print(const struct table *t, const char *const *heads)
{
	size_t w[16] = { 0 };

	for (int c = 0; c < t->ncol && c < 16; c++) {
		w[c] = strlen(heads[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t n = strlen(t->cells[r * (size_t)t->ncol + (size_t)c]);

			if (n > w[c])
				w[c] = n;
		}
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		char line[16 * (CELL + 2)];
		size_t used = 0;

		for (int c = 0; c < t->ncol && c < 16; c++) {
			const char *s = r == 0 ? heads[c] : t->cells[(r - 1) * (size_t)t->ncol + (size_t)c];
			int n = snprintf(line + used, sizeof(line) - used, "%-*s  ", (int)w[c], s);

			if (n < 0 || (size_t)n >= sizeof(line) - used)
				break;
			used += (size_t)n;
		}
		while (used && line[used - 1] == ' ')
			used--;
		line[used] = '\0';
		puts(line);
	}
}

static void cellf(char *row, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void cellf(char *row, int col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(row + (size_t)col * CELL, CELL, fmt, ap);
	va_end(ap);
}

static void fmt_index(char *buf, size_t sz, int idx)
{
	if (idx < 0)
		snprintf(buf, sz, "-");
	else
		snprintf(buf, sz, "%d", idx);
}

static int ports_table(const struct npf_inventory *inv)
{
	static const char *const heads[] = { "DEV",  "PORT",	"STATE",     "PHYS", "LINK",
					     "RATE", "NETDEV", "NCCL-AUTO", "NCCL<=2.20" };
	struct table t = { .ncol = 9 };

	for (size_t d = 0; d < inv->n_rdma; d++) {
		for (size_t i = 0; i < inv->rdma[d].n_ports; i++) {
			const struct npf_rdma_port *p = &inv->rdma[d].ports[i];
			char *row = table_add_row(&t);
			char a[16], l[16];

			if (!row)
				goto nomem;
			fmt_index(a, sizeof(a), p->nccl_auto_gid);
			fmt_index(l, sizeof(l), p->nccl_legacy_gid);
			cellf(row, 0, "%s", inv->rdma[d].name);
			cellf(row, 1, "%d", p->port);
			cellf(row, 2, "%s", npf_port_state_name(p->state));
			cellf(row, 3, "%s",
			      p->phys_state >= 0 ? rdma_phys_state_name(p->phys_state) : "-");
			cellf(row, 4, "%s", npf_link_layer_name(p->link_layer));
			cellf(row, 5, "%s", p->rate[0] ? p->rate : "-");
			cellf(row, 6, "%s", p->netdev[0] ? p->netdev : "-");
			cellf(row, 7, "%s", a);
			cellf(row, 8, "%s", l);
		}
	}
	table_print(&t, heads);
	free(t.cells);
	return 0;
nomem:
	free(t.cells);
	return -ENOMEM;
}

static const char *marker(const struct npf_rdma_port *p, int idx)
{
	bool a = idx == p->nccl_auto_gid, l = idx == p->nccl_legacy_gid;

	return a && l ? "<- NCCL auto, <=2.20 default" :
	       a      ? "<- NCCL auto" :
	       l      ? "<- NCCL <=2.20 default" :
			"";
}

/* One row; g NULL is an index NCCL would use that holds no GID at all. */
static int gid_row(struct table *t, const char *dev, const struct npf_rdma_port *p,
		   const struct npf_gid *g, int idx)
{
	char *row = table_add_row(t);
	char gbuf[GID_STR_LEN];

	if (!row)
		return -ENOMEM;
	cellf(row, 0, "%s", dev);
	cellf(row, 1, "%d", p->port);
	cellf(row, 2, "%d", idx);
	if (!g) {
		cellf(row, 3, "(unpopulated)");
		cellf(row, 7, "%s", marker(p, idx));
		return 0;
	}
	cellf(row, 3, "%s", gid_format(g->raw, gbuf, sizeof(gbuf)));
	if (g->is_ipv4)
		cellf(row, 4, "%u.%u.%u.%u", g->ipv4[0], g->ipv4[1], g->ipv4[2], g->ipv4[3]);
	cellf(row, 5, "%s",
	      p->link_layer == NPF_LL_INFINIBAND ? "IB" :
	      g->type == NPF_GID_IB_ROCE_V1	 ? "v1" :
	      g->type == NPF_GID_ROCE_V2	 ? "v2" :
						   "?");
	cellf(row, 6, "%s", g->ndev);
	cellf(row, 7, "%s", marker(p, idx));
	return 0;
}

static int gids_table(const struct npf_inventory *inv)
{
	static const char *const heads[] = { "DEV", "PORT", "INDEX", "GID",
					     "IPv4", "VER",  "DEV",   "NCCL" };
	struct table t = { .ncol = 8 };
	int ret = 0;

	for (size_t d = 0; d < inv->n_rdma && !ret; d++) {
		for (size_t i = 0; i < inv->rdma[d].n_ports && !ret; i++) {
			const struct npf_rdma_port *p = &inv->rdma[d].ports[i];
			int extra[2], nextra = 0, e = 0;

			/* Indices NCCL would use that hold no GID still get a row,
			 * so the marker is visible (the container case). */
			for (int k = 0; k < 2; k++) {
				int idx = k ? p->nccl_legacy_gid : p->nccl_auto_gid;

				if (idx >= 0 && !gid_find(p, idx) &&
				    !(nextra && extra[0] == idx))
					extra[nextra++] = idx;
			}
			if (nextra == 2 && extra[1] < extra[0]) {
				int tmp = extra[0];

				extra[0] = extra[1];
				extra[1] = tmp;
			}
			for (size_t k = 0; k < p->n_gids && !ret; k++) {
				while (e < nextra && extra[e] < p->gids[k].index && !ret)
					ret = gid_row(&t, inv->rdma[d].name, p, NULL, extra[e++]);
				if (!ret)
					ret = gid_row(&t, inv->rdma[d].name, p, &p->gids[k],
						      p->gids[k].index);
			}
			while (e < nextra && !ret)
				ret = gid_row(&t, inv->rdma[d].name, p, NULL, extra[e++]);
		}
	}
	if (!ret && t.nrows)
		table_print(&t, heads);
	free(t.cells);
	return ret;
}

static void print_warnings(const struct npf_inventory *inv, const struct env_policy *ep)
{
	int first_auto = -1, differ = 0, nwarn = 0;

	for (size_t d = 0; d < inv->n_rdma; d++) {
		for (size_t i = 0; i < inv->rdma[d].n_ports; i++) {
			const struct npf_rdma_port *p = &inv->rdma[d].ports[i];
			const char *dev = inv->rdma[d].name;

			if (p->state != NPF_PORT_ACTIVE) {
				printf("%s  %s port %d is %s: NCCL only uses ACTIVE ports\n",
				       nwarn++ ? "" : "warnings:\n", dev, p->port,
				       npf_port_state_name(p->state));
			}
			for (uint32_t bit = 1; bit && bit <= p->gid_warn; bit <<= 1) {
				bool legacy = bit & (NPF_GIDW_LEGACY_LINK_LOCAL |
						     NPF_GIDW_LEGACY_ROCE_V1 |
						     NPF_GIDW_LEGACY_EMPTY);

				if (!(p->gid_warn & bit))
					continue;
				printf("%s  %s port %d: %s", nwarn++ ? "" : "warnings:\n", dev,
				       p->port, gid_warn_text(bit));
				if (legacy && p->nccl_auto_gid >= 0 &&
				    !(p->gid_warn & (NPF_GIDW_AUTO_LINK_LOCAL |
						     NPF_GIDW_AUTO_ROCE_V1 | NPF_GIDW_AUTO_EMPTY)))
					printf(" (NCCL >= 2.21.5 picks %d on its own)",
					       p->nccl_auto_gid);
				putchar('\n');
			}
			if (p->link_layer == NPF_LL_ETHERNET && p->state == NPF_PORT_ACTIVE &&
			    p->nccl_auto_gid >= 0) {
				if (first_auto < 0)
					first_auto = p->nccl_auto_gid;
				else if (first_auto != p->nccl_auto_gid)
					differ = 1;
			}
		}
	}
	/* NCCL_IB_GID_INDEX is one global value; per-HCA differences break it. */
	if (differ)
		printf("%s  active RoCE ports need different GID indices: do not pin "
		       "NCCL_IB_GID_INDEX globally; NCCL >= 2.21.5 picks per HCA\n",
		       nwarn++ ? "" : "warnings:\n");
	if (ep->forced_index >= 0)
		printf("%s  NCCL_IB_GID_INDEX=%d is set: NCCL uses index %d on every RoCE port "
		       "instead of the NCCL-AUTO column\n",
		       nwarn++ ? "" : "warnings:\n", ep->forced_index, ep->forced_index);
}

static int print_text(const struct npf_inventory *inv, const struct env_policy *ep)
{
	if (inv->rdma_note[0])
		printf("note: %s\n", inv->rdma_note);
	if (!inv->n_rdma)
		return 0;
	if (ep->from_env)
		printf("GID policy from environment: family %s, RoCE v%d, range %s\n",
		       ep->pol.family == AF_INET6 ? "AF_INET6" : "AF_INET", ep->pol.roce_version,
		       ep->pol.has_range && ep->range ? ep->range : "none");
	if (ports_table(inv) < 0)
		return -ENOMEM;
	putchar('\n');
	if (gids_table(inv) < 0)
		return -ENOMEM;
	print_warnings(inv, ep);
	return 0;
}

static bool has_ib_port(const struct npf_inventory *inv)
{
	for (size_t d = 0; d < inv->n_rdma; d++)
		for (size_t i = 0; i < inv->rdma[d].n_ports; i++)
			if (inv->rdma[d].ports[i].link_layer == NPF_LL_INFINIBAND)
				return true;
	return false;
}

int cmd_rdma(int argc, char **argv, const struct cli_global *g)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rdma_collect_opts opts = { .sysfs_root = g->sysfs_root };
	struct npf_inventory inv = { 0 };
	bool live = !g->sysfs_root || strcmp(g->sysfs_root, "/sys") == 0;
	struct env_policy ep;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			rdma_usage(stdout);
			return CLI_EXIT_OK;
		}
		rdma_usage(stderr);
		return CLI_EXIT_ERROR;
	}
	if (optind < argc) {
		cli_err("rdma: unexpected argument '%s'", argv[optind]);
		rdma_usage(stderr);
		return CLI_EXIT_ERROR;
	}

	env_policy_read(&ep);
	ret = npf_rdma_collect(&inv, &opts);
	if (ret < 0) {
		cli_err("rdma: cannot read RDMA devices%s%s: %s", live ? "" : " under ",
			live ? "" : g->sysfs_root, strerror(-ret));
		npf_inventory_clear(&inv);
		return CLI_EXIT_ERROR;
	}
	/* IPoIB netdevs are found by GID among this node's links; RoCE netdevs
	 * come from the GID table itself, so a captured tree needs no links. */
	if (live && has_ib_port(&inv) && nlsys_dump_ifaces(&inv, NULL) < 0)
		cli_err("rdma: cannot list network interfaces; IPoIB netdevs not shown");
	rdma_join_netdevs(&inv);
	if (ep.from_env)
		gid_predict_inventory_policy(&inv, &ep.pol);

	ret = g->json ? print_json(&inv, &ep) : (print_text(&inv, &ep) < 0 ? CLI_EXIT_ERROR :
									     CLI_EXIT_OK);
	if (ret != CLI_EXIT_OK && !g->json)
		cli_err("rdma: out of memory");
	npf_inventory_clear(&inv);
	return ret;
}
