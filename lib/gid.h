/* SPDX-License-Identifier: MIT */
/* Predicts the GID index NCCL picks on each RDMA port, old and new behaviour. */
#ifndef NPF_GID_H
#define NPF_GID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/*
 * The knobs NCCL >= 2.21.5 reads for its automatic GID choice. Build one with
 * gid_policy_init() and the gid_policy_set_*() setters, which take the
 * environment strings and interpret them exactly as NCCL does (including what
 * NCCL silently ignores), so a prediction under a job's environment matches.
 */
struct gid_policy {
	int family;       /* AF_INET or AF_INET6 (NCCL_IB_ADDR_FAMILY, default AF_INET) */
	int roce_version; /* NCCL_IB_ROCE_VERSION_NUM, default 2 */
	bool has_range;   /* NCCL_IB_ADDR_RANGE was accepted */
	uint8_t range_addr[16]; /* network order; IPv4 in the first 4 bytes */
	int range_prefixlen;    /* as NCCL parsed it: may be 0 (matches all) or < 0 (matches none) */
	int flid_index;   /* NCCL_IB_ROUTABLE_FLID_GID_INDEX (IB ports), default 1 */
};

/* NCCL's defaults: AF_INET, RoCE v2, no range, FLID index 1. */
void gid_policy_init(struct gid_policy *pol);

/* NCCL_IB_ADDR_FAMILY: "AF_INET6" selects IPv6, "AF_INET" IPv4; anything else
 * (and NULL or "") leaves AF_INET, as NCCL does. Returns 0, or -EINVAL when
 * the value was not recognised (pol->family is then AF_INET). */
int gid_policy_set_family(struct gid_policy *pol, const char *value);

/* NCCL_IB_ADDR_RANGE "addr/len", parsed for pol->family (set the family
 * first). Like NCCL: no '/' or an address inet_pton rejects ignores the range
 * (-EINVAL, has_range false); a length beyond 32/128 ignores it too; the
 * length is otherwise taken with strtol, so "/x" means 0 (match everything)
 * and a negative length matches nothing. NULL or "" clears the range, 0. */
int gid_policy_set_range(struct gid_policy *pol, const char *value);

/* NCCL_IB_ROCE_VERSION_NUM: a decimal integer (NCCL does not range-check it;
 * only 1 and 2 can ever match). Returns 0 or -EINVAL (unchanged). */
int gid_policy_set_roce_version(struct gid_policy *pol, const char *value);

/*
 * The index NCCL >= 2.21.5 uses on this port when NCCL_IB_GID_INDEX is unset
 * (ncclIbGetGidIndex). pol NULL means NCCL's defaults.
 *  - InfiniBand (2.22.3+ rule): flid_index if that slot exists in the table and
 *    its FLID (GID bytes 4-5) is non-zero, else 0.
 *  - Ethernet (RoCE): NCCL's scan over slots 1..gid_tbl_len-1, where a slot
 *    missing from p->gids reads as the zero GID with an unknown RoCE version,
 *    as ibv_query_gid and the EINVAL types file make it look to NCCL. A known
 *    GID whose type is NPF_GID_TYPE_UNKNOWN matches no version (NCCL would
 *    compare an unset variable there).
 *  - unknown link layer: -1.
 * The table length is p->gid_tbl_len, or the highest populated index + 1 when
 * that is 0. Returns the index, or -1 when NCCL would not use one.
 */
int gid_nccl_auto_index(const struct npf_rdma_port *p, const struct gid_policy *pol);

/* The index NCCL <= 2.20 uses: NCCL_IB_GID_INDEX defaulted to 0 and applied to
 * RoCE ports only (IB ports used no GRH then). Returns 0 for Ethernet, -1 otherwise. */
int gid_nccl_legacy_index(const struct npf_rdma_port *p);

/* The populated entry at index idx, or NULL (borrowed pointer into p->gids). */
const struct npf_gid *gid_find(const struct npf_rdma_port *p, int idx);

/* The index of the RoCE v2 GID on p that carries address a (::ffff:a.b.c.d for
 * IPv4, the address itself for IPv6): the GID a consumer must use for traffic
 * on that address. -1 when the table holds none. */
int gid_index_of_addr(const struct npf_rdma_port *p, const struct npf_addr *a);

/* The index UCX picks on this RoCE port when UCX_IB_GID_INDEX is auto and no
 * UCX_IB_ROCE_SUBNETS filter is set (src/uct/ib/base/ib_device.c
 * uct_ib_device_select_gid): the lowest populated index in the first class
 * that has one, RoCE v2 IPv4, RoCE v2 IPv6 (not link-local), RoCE v2
 * link-local, then the same for RoCE v1; 0 when nothing qualifies (UCX's
 * fallback). UCX also tests each slot with ibv_create_ah
 * (uct_ib_device_test_roce_gid_index); a populated slot is taken as usable. */
int gid_ucx_auto_index(const struct npf_rdma_port *p);

/* Sets g->is_ipv4 and g->ipv4 from g->raw: true for ::ffff:a.b.c.d only. */
void gid_fill_ipv4(struct npf_gid *g);

/* fe80::/64, as NCCL's linkLocalGid() defines it. */
bool gid_is_link_local(const uint8_t raw[16]);

/*
 * Fills nccl_auto_gid, nccl_legacy_gid and gid_warn on every port of inv with
 * NCCL's default policy. Warnings (RoCE ports only; IB link-local GIDs are
 * normal): NPF_GIDW_AUTO_* when the auto index is link-local, RoCE v1 or an
 * unpopulated slot, NPF_GIDW_LEGACY_* for index 0, NPF_GIDW_NO_IPV4_GID when
 * no populated GID is IPv4-mapped (not raised when the policy wants AF_INET6).
 */
void gid_predict_inventory(struct npf_inventory *inv);

/* Same with an explicit policy (NULL = defaults), for a job's environment. */
void gid_predict_inventory_policy(struct npf_inventory *inv, const struct gid_policy *pol);

/* Formats a GID the way sysfs and show_gids print it: eight groups of four
 * hex digits ("fe80:0000:...:8a2e"). bufsz >= GID_STR_LEN. Returns buf. */
#define GID_STR_LEN 40
char *gid_format(const uint8_t raw[16], char *buf, size_t bufsz);

/* For one NPF_GIDW_* bit: a stable kebab-case id for JSON ("auto-link-local")
 * and a sentence for humans. "unknown" / "" for anything else. Never NULL. */
const char *gid_warn_name(uint32_t bit);
const char *gid_warn_text(uint32_t bit);

#endif
