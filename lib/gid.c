// SPDX-License-Identifier: MIT
/* NCCL GID index prediction: a faithful model of ncclIbGetGidIndex (2.21.5+). */
#include "gid.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Scanning is O(table * populated); real tables have <= 256 slots. */
#define GID_SCAN_MAX 4096

/* NCCL reads GIDs as four 32-bit words in network order (s6_addr32); we keep
 * the same view, in host order, so its constants carry over unchanged. */
static uint32_t word(const uint8_t raw[16], int i)
{
	return (uint32_t)raw[4 * i] << 24 | (uint32_t)raw[4 * i + 1] << 16 |
	       (uint32_t)raw[4 * i + 2] << 8 | raw[4 * i + 3];
}

void gid_policy_init(struct gid_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->family = AF_INET;
	pol->roce_version = 2;
	pol->flid_index = 1;
}

int gid_policy_set_family(struct gid_policy *pol, const char *value)
{
	pol->family = AF_INET;
	if (!value || !*value || strcmp(value, "AF_INET") == 0)
		return 0;
	if (strcmp(value, "AF_INET6") == 0) {
		pol->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

int gid_policy_set_range(struct gid_policy *pol, const char *value)
{
	char buf[128];
	char *slash;
	uint8_t addr[16] = { 0 };
	int len;

	pol->has_range = false;
	pol->range_prefixlen = 0;
	memset(pol->range_addr, 0, sizeof(pol->range_addr));
	if (!value || !*value)
		return 0;
	/* NCCL copies into a 128-byte buffer first; longer values are cut there. */
	snprintf(buf, sizeof(buf), "%s", value);
	slash = strchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash++ = '\0';
	if (inet_pton(pol->family == AF_INET6 ? AF_INET6 : AF_INET, buf, addr) != 1)
		return -EINVAL;
	/* strtol without an end check, as NCCL: "/x" is 0, "/-1" matches nothing. */
	len = (int)strtol(slash, NULL, 10);
	if ((pol->family == AF_INET6 && len > 128) || (pol->family != AF_INET6 && len > 32))
		return -EINVAL;
	memcpy(pol->range_addr, addr, sizeof(addr));
	pol->range_prefixlen = len;
	pol->has_range = true;
	return 0;
}

int gid_policy_set_roce_version(struct gid_policy *pol, const char *value)
{
	char *end;
	long long v;

	if (!value || !*value)
		return -EINVAL;
	errno = 0;
	v = strtoll(value, &end, 0);
	if (errno || end == value || *end != '\0' || v < -2147483647LL || v > 2147483647LL)
		return -EINVAL;
	pol->roce_version = (int)v;
	return 0;
}

const struct npf_gid *gid_find(const struct npf_rdma_port *p, int idx)
{
	for (size_t i = 0; i < p->n_gids; i++)
		if (p->gids[i].index == idx)
			return &p->gids[i];
	return NULL;
}

void gid_fill_ipv4(struct npf_gid *g)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	g->is_ipv4 = memcmp(g->raw, mapped, sizeof(mapped)) == 0;
	memset(g->ipv4, 0, sizeof(g->ipv4));
	if (g->is_ipv4)
		memcpy(g->ipv4, g->raw + 12, 4);
}

bool gid_is_link_local(const uint8_t raw[16])
{
	return word(raw, 0) == 0xfe800000u && word(raw, 1) == 0;
}

/* getGidAddrFamily(): IPv4-mapped, or IPv4-mapped multicast (ff0e::ffff:a.b.c.d),
 * is AF_INET; everything else, the zero GID included, is AF_INET6. */
static int gid_family(const uint8_t raw[16])
{
	uint32_t w0 = word(raw, 0), w1 = word(raw, 1), w2 = word(raw, 2);

	if ((w0 | w1 | (w2 ^ 0x0000ffffu)) == 0)
		return AF_INET;
	if (w0 == 0xff0e0000u && (w1 | (w2 ^ 0x0000ffffu)) == 0)
		return AF_INET;
	return AF_INET6;
}

/* configuredGid() && !linkLocalGid(): not zero, not "fe80::" with a zero
 * trailer, not fe80::/64. */
static bool gid_valid(const uint8_t raw[16])
{
	uint32_t w0 = word(raw, 0);
	uint32_t trailer = word(raw, 1) | word(raw, 2) | word(raw, 3);

	if ((w0 | trailer) == 0 || (w0 == 0xfe800000u && trailer == 0))
		return false;
	return !gid_is_link_local(raw);
}

static uint32_t netmask(int bits)
{
	return bits >= 32 ? 0xffffffffu : ~((1u << (32 - bits)) - 1);
}

/* matchGidAddrPrefix(): IPv4 compares the mask against the GID's last word;
 * IPv6 walks whole words then a partial one. No range matches everything. */
static bool gid_in_range(const struct gid_policy *pol, const uint8_t raw[16])
{
	int left;

	if (!pol->has_range)
		return true;
	left = pol->range_prefixlen;
	for (int i = 0; left > 0 && i < 4;) {
		if (pol->family != AF_INET6) {
			uint32_t m = netmask(left);

			if ((word(pol->range_addr, 0) & m) != (word(raw, 3) & m))
				break;
			left = 0;
			break;
		}
		if (left >= 32) {
			if (word(pol->range_addr, i) != word(raw, i))
				break;
			left -= 32;
			i++;
		} else {
			uint32_t m = netmask(left);

			if ((word(pol->range_addr, i) & m) != (word(raw, i) & m))
				break;
			left = 0;
		}
	}
	return left == 0;
}

/* A slot as NCCL sees it: unpopulated slots read as the zero GID. */
struct slot {
	uint8_t raw[16];
	int ver; /* 1, 2, or <= 0 when the types file says nothing usable */
};

static void slot_get(const struct npf_rdma_port *p, int idx, int unknown_ver, struct slot *s)
{
	const struct npf_gid *g = gid_find(p, idx);

	memset(s, 0, sizeof(*s));
	s->ver = unknown_ver;
	if (!g)
		return;
	memcpy(s->raw, g->raw, 16);
	if (g->type == NPF_GID_IB_ROCE_V1)
		s->ver = 1;
	else if (g->type == NPF_GID_ROCE_V2)
		s->ver = 2;
}

static int table_len(const struct npf_rdma_port *p)
{
	int len = p->gid_tbl_len > 0 ? p->gid_tbl_len : 0;

	for (size_t i = 0; i < p->n_gids; i++)
		if (p->gids[i].index >= len)
			len = p->gids[i].index + 1;
	return len > GID_SCAN_MAX ? GID_SCAN_MAX : len;
}

static int ib_index(const struct npf_rdma_port *p, const struct gid_policy *pol)
{
	const struct npf_gid *g;

	if (pol->flid_index < 0 || pol->flid_index >= table_len(p))
		return 0;
	g = gid_find(p, pol->flid_index);
	/* FLID: bytes 4-5 of the GID (ncclIbExtractFlid). */
	if (g && (g->raw[4] | g->raw[5]))
		return pol->flid_index;
	return 0;
}

int gid_nccl_auto_index(const struct npf_rdma_port *p, const struct gid_policy *pol)
{
	struct gid_policy defaults;
	int best = 0, len;

	if (!pol) {
		gid_policy_init(&defaults);
		pol = &defaults;
	}
	if (p->link_layer == NPF_LL_INFINIBAND)
		return ib_index(p, pol);
	if (p->link_layer != NPF_LL_ETHERNET)
		return -1;

	len = table_len(p);
	for (int c = 1; c < len; c++) {
		struct slot b, k;
		int bfam, kfam;
		bool in;

		/* An unreadable version stays unset for the current best (NCCL
		 * leaves it uninitialised) and is -1 for the candidate; 0 vs -1
		 * keeps them from ever comparing equal. */
		slot_get(p, best, 0, &b);
		slot_get(p, c, -1, &k);
		bfam = gid_family(b.raw);
		kfam = gid_family(k.raw);
		in = gid_in_range(pol, k.raw);
		/* A switch to the wanted family wins outright, valid or not. */
		if (kfam != bfam && kfam == pol->family && in) {
			best = c;
			continue;
		}
		if (kfam != pol->family || !gid_valid(k.raw) || !in)
			continue;
		if ((b.ver != k.ver || !gid_valid(b.raw)) && k.ver == pol->roce_version)
			best = c;
	}
	return best;
}

int gid_nccl_legacy_index(const struct npf_rdma_port *p)
{
	return p->link_layer == NPF_LL_ETHERNET ? 0 : -1;
}

static uint32_t warn_for(const struct npf_rdma_port *p, int idx, uint32_t empty, uint32_t ll,
			 uint32_t v1)
{
	const struct npf_gid *g;
	uint32_t w = 0;

	if (idx < 0)
		return 0;
	g = gid_find(p, idx);
	if (!g)
		return empty;
	if (gid_is_link_local(g->raw))
		w |= ll;
	if (g->type == NPF_GID_IB_ROCE_V1)
		w |= v1;
	return w;
}

void gid_predict_inventory_policy(struct npf_inventory *inv, const struct gid_policy *pol)
{
	for (size_t d = 0; d < inv->n_rdma; d++) {
		for (size_t i = 0; i < inv->rdma[d].n_ports; i++) {
			struct npf_rdma_port *p = &inv->rdma[d].ports[i];
			bool v4 = false;

			p->nccl_auto_gid = gid_nccl_auto_index(p, pol);
			p->nccl_legacy_gid = gid_nccl_legacy_index(p);
			p->gid_warn = 0;
			if (p->link_layer != NPF_LL_ETHERNET)
				continue;
			p->gid_warn |= warn_for(p, p->nccl_auto_gid, NPF_GIDW_AUTO_EMPTY,
						NPF_GIDW_AUTO_LINK_LOCAL, NPF_GIDW_AUTO_ROCE_V1);
			p->gid_warn |= warn_for(p, p->nccl_legacy_gid, NPF_GIDW_LEGACY_EMPTY,
						NPF_GIDW_LEGACY_LINK_LOCAL,
						NPF_GIDW_LEGACY_ROCE_V1);
			for (size_t k = 0; k < p->n_gids; k++)
				if (gid_family(p->gids[k].raw) == AF_INET)
					v4 = true;
			/* Only news when NCCL is looking for IPv4, its default. */
			if (!v4 && (!pol || pol->family != AF_INET6))
				p->gid_warn |= NPF_GIDW_NO_IPV4_GID;
		}
	}
}

void gid_predict_inventory(struct npf_inventory *inv)
{
	gid_predict_inventory_policy(inv, NULL);
}

char *gid_format(const uint8_t raw[16], char *buf, size_t bufsz)
{
	if (bufsz < GID_STR_LEN) {
		if (bufsz)
			buf[0] = '\0';
		return buf;
	}
	snprintf(buf, bufsz, "%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x",
		 raw[0] << 8 | raw[1], raw[2] << 8 | raw[3], raw[4] << 8 | raw[5],
		 raw[6] << 8 | raw[7], raw[8] << 8 | raw[9], raw[10] << 8 | raw[11],
		 raw[12] << 8 | raw[13], raw[14] << 8 | raw[15]);
	return buf;
}

static const struct {
	uint32_t bit;
	const char *name;
	const char *text;
} warn_names[] = {
	{ NPF_GIDW_AUTO_LINK_LOCAL, "auto-link-local",
	  "NCCL >= 2.21.5 picks a link-local fe80:: GID on its own (no usable GID of the "
	  "wanted family); RoCE traffic will not route" },
	{ NPF_GIDW_AUTO_ROCE_V1, "auto-roce-v1",
	  "NCCL >= 2.21.5 picks a RoCE v1 GID on its own; peers using RoCE v2 cannot connect" },
	{ NPF_GIDW_AUTO_EMPTY, "auto-empty",
	  "NCCL >= 2.21.5 picks an unpopulated GID slot; QP setup will fail" },
	{ NPF_GIDW_LEGACY_LINK_LOCAL, "legacy-link-local",
	  "NCCL <= 2.20 uses index 0, a link-local fe80:: GID; set NCCL_IB_GID_INDEX for old NCCL" },
	{ NPF_GIDW_LEGACY_ROCE_V1, "legacy-roce-v1",
	  "NCCL <= 2.20 uses index 0, a RoCE v1 GID; set NCCL_IB_GID_INDEX for old NCCL" },
	{ NPF_GIDW_LEGACY_EMPTY, "legacy-empty",
	  "NCCL <= 2.20 uses index 0, an unpopulated slot (container view); set "
	  "NCCL_IB_GID_INDEX for old NCCL" },
	{ NPF_GIDW_NO_IPV4_GID, "no-ipv4-gid",
	  "no IPv4-mapped GID: the netdev has no IPv4 address (IPv6-only fabric: set "
	  "NCCL_IB_ADDR_FAMILY=AF_INET6)" },
};

const char *gid_warn_name(uint32_t bit)
{
	for (size_t i = 0; i < sizeof(warn_names) / sizeof(warn_names[0]); i++)
		if (warn_names[i].bit == bit)
			return warn_names[i].name;
	return "unknown";
}

const char *gid_warn_text(uint32_t bit)
{
	for (size_t i = 0; i < sizeof(warn_names) / sizeof(warn_names[0]); i++)
		if (warn_names[i].bit == bit)
			return warn_names[i].text;
	return "";
}

int gid_index_of_addr(const struct npf_rdma_port *p, const struct npf_addr *a)
{
	uint8_t want[16] = {0};

	if (a->family == AF_INET) {
		want[10] = want[11] = 0xff;
		memcpy(want + 12, a->addr, 4);
	} else if (a->family == AF_INET6) {
		memcpy(want, a->addr, 16);
	} else {
		return -1;
	}
	for (size_t g = 0; g < p->n_gids; g++)
		if (p->gids[g].type == NPF_GID_ROCE_V2 && memcmp(p->gids[g].raw, want, 16) == 0)
			return p->gids[g].index;
	return -1;
}

int gid_ucx_auto_index(const struct npf_rdma_port *p)
{
	/* uct_ib_device_select_gid's order: version, then family (link-local last). */
	static const struct {
		enum npf_gid_type type;
		int cls; /* 0 IPv4, 1 IPv6 global, 2 IPv6 link-local */
	} prio[] = {
	    {NPF_GID_ROCE_V2, 0},    {NPF_GID_ROCE_V2, 1},    {NPF_GID_ROCE_V2, 2},
	    {NPF_GID_IB_ROCE_V1, 0}, {NPF_GID_IB_ROCE_V1, 1}, {NPF_GID_IB_ROCE_V1, 2},
	};
	static const uint8_t zero[16];

	for (size_t k = 0; k < sizeof(prio) / sizeof(prio[0]); k++) {
		int best = -1;

		for (size_t g = 0; g < p->n_gids; g++) {
			const struct npf_gid *e = &p->gids[g];
			int cls;

			if (e->type != prio[k].type || memcmp(e->raw, zero, 16) == 0)
				continue;
			cls = e->is_ipv4 ? 0 : gid_is_link_local(e->raw) ? 2 : 1;
			if (cls == prio[k].cls && (best < 0 || e->index < best))
				best = e->index;
		}
		if (best >= 0)
			return best;
	}
	return 0;
}
