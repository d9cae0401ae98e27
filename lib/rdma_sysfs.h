/* SPDX-License-Identifier: MIT */
/* RDMA sysfs layout: content parsers for class/infiniband files and the tree reader. */
#ifndef NPF_RDMA_SYSFS_H
#define NPF_RDMA_SYSFS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Bounds on what one tree may hold; beyond them entries are ignored, because a
 * captured or hostile tree must not make us allocate without limit. Real mlx5
 * tables have 256 GID slots, switches up to a few dozen ports. */
#define RDMA_SYSFS_MAX_DEVS 64
#define RDMA_SYSFS_MAX_PORTS 256
#define RDMA_SYSFS_MAX_GIDS 1024

/* ibv_port_attr.active_speed / active_width encodings (IBV_SPEED_* as in
 * rdma-core; XDR is only in active_speed_ex, which our libibverbs lacks). */
enum rdma_speed {
	RDMA_SPEED_SDR = 1,
	RDMA_SPEED_DDR = 2,
	RDMA_SPEED_QDR = 4,
	RDMA_SPEED_FDR10 = 8,
	RDMA_SPEED_FDR = 16,
	RDMA_SPEED_EDR = 32,
	RDMA_SPEED_HDR = 64,
	RDMA_SPEED_NDR = 128,
	RDMA_SPEED_XDR = 256,
};

enum rdma_width {
	RDMA_WIDTH_1X = 1,
	RDMA_WIDTH_4X = 2,
	RDMA_WIDTH_8X = 4,
	RDMA_WIDTH_12X = 8,
	RDMA_WIDTH_2X = 16,
};

/*
 * Content parsers. Each takes the raw bytes of one sysfs attribute (not
 * NUL-terminated; surrounding whitespace and the trailing newline are ignored)
 * and returns 0 or a negative errno: -ENODATA for an empty value (an
 * unpopulated slot), -EINVAL for anything malformed. Outputs are written only
 * on success.
 */

/* gids/<i>: "fe80:0000:0000:0000:0e42:a1ff:fe65:8a2e" (any inet_pton IPv6 form). */
int rdma_parse_gid(const char *text, size_t len, uint8_t out[16]);

/* state: "4: ACTIVE" (number 0..5 required; the name must agree when present). */
int rdma_parse_port_state(const char *text, size_t len, enum npf_port_state *out);

/* phys_state: "5: LinkUp" -> 5 (0..15). */
int rdma_parse_phys_state(const char *text, size_t len, int *out);

/* link_layer: "InfiniBand" or "Ethernet"; other words give NPF_LL_UNKNOWN and 0. */
int rdma_parse_link_layer(const char *text, size_t len, enum npf_link_layer *out);

/* rate: "100 Gb/sec (4X EDR)". Copies the trimmed text into out (printable
 * ASCII only, truncated to outsz - 1) and decodes width and speed into the
 * RDMA_WIDTH_* / RDMA_SPEED_* encodings, -1 where the text does not say. */
int rdma_parse_rate(const char *text, size_t len, char *out, size_t outsz, int *speed,
		    int *width);

/* gid_attrs/types/<i>: "IB/RoCE v1", "RoCE v1" -> NPF_GID_IB_ROCE_V1, "RoCE v2" ->
 * NPF_GID_ROCE_V2, other printable text -> NPF_GID_TYPE_UNKNOWN. */
int rdma_parse_gid_type(const char *text, size_t len, enum npf_gid_type *out);

/* node_guid: "0c42:a103:0065:8a2e" -> 0x0c42a10300658a2e (host order). */
int rdma_parse_node_guid(const char *text, size_t len, uint64_t *out);

/* node_type: "1: CA" -> "CA" (the text after the number, bounded by outsz). */
int rdma_parse_node_type(const char *text, size_t len, char *out, size_t outsz);

/* gid_attrs/ndevs/<i>: a netdev name that fits IFNAMSIZ and is a valid name. */
int rdma_parse_ndev(const char *text, size_t len, char out[IFNAMSIZ]);

/* Formats speed + width as the kernel's rate file does ("100 Gb/sec (4X EDR)"),
 * for ports known only through verbs. Returns 0, or -EINVAL (buf = "") when
 * either value is not a known encoding. */
int rdma_format_rate(int speed, int width, char *buf, size_t bufsz);

/* Stable names for the encodings above; "unknown" (or a number-free fallback)
 * when the value is not one of them. Never NULL. */
const char *rdma_speed_name(int speed);
const char *rdma_width_name(int width);
const char *rdma_phys_state_name(int phys_state);

/*
 * Reads <sysfs_root>/class/infiniband (sysfs_root NULL means "/sys") and
 * APPENDS one npf_rdma_dev per device, sorted by name, to inv->rdma. Ports come
 * from ports/<n>; GID slots from gids/<i> + gid_attrs/types/<i> +
 * gid_attrs/ndevs/<i>, keeping only populated slots: a zero GID, or a types
 * file that is missing, empty or unreadable (EINVAL on a real kernel), marks
 * an unpopulated slot. On InfiniBand ports a non-zero GID without a types file
 * is still kept as "IB/RoCE v1", since IB GIDs have no RoCE version.
 * Unparseable attributes leave the field unknown; junk entries are skipped.
 * Does not compute NCCL predictions (gid_predict_inventory does).
 *
 * Returns the number of devices appended (0 when class/infiniband is missing
 * or empty, with inv->rdma_note set) or -errno (-ENOENT when sysfs_root itself
 * does not exist, -ENOMEM); on error inv is unchanged.
 * Ownership: appended devices belong to inv (npf_inventory_clear frees them).
 */
int rdma_sysfs_read(const char *sysfs_root, struct npf_inventory *inv);

/*
 * Reads one device <sysfs_root>/class/infiniband/<name> into *dev (zeroed
 * first). Returns 0 or -errno (-ENOENT: no such device, -EINVAL: bad name).
 * Ownership: dev->ports and their gids are the caller's, freed with
 * npf_rdma_dev_clear(); on error nothing is left allocated.
 */
int rdma_sysfs_read_dev(const char *sysfs_root, const char *name, struct npf_rdma_dev *dev);

/* Where GPUs are present, which RDMA devices are rails (lib/rdma_topo.h): resolves each
 * of inv->rdma's class/infiniband/<dev>/device and every bus/pci/devices/<bdf> that is an
 * NVIDIA GPU (class 0x0302 or 0x0300, vendor 0x10de) to its PCI path under devices/, then
 * rdma_topo_rails(). No GPUs (or no bus/pci): inv->n_gpus = 0. Returns the GPU count,
 * -ENOENT for a missing root or -ENOMEM. */
int rdma_sysfs_read_topology(const char *sysfs_root, struct npf_inventory *inv);

#endif
