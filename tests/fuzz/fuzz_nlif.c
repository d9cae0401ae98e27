// SPDX-License-Identifier: MIT
/* Fuzz target: netlink bytes through every nlif parser, classification and JSON. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <libmnl/libmnl.h>

#include "classify.h"
#include "iface_json.h"
#include "model.h"
#include "nlif.h"

/* Larger inputs only slow the fuzzer down; a kernel skb is 32 KiB. */
#define FUZZ_MAX_INPUT (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each parser on each message, so that an early error in the dump walk
 * does not hide the parsers behind it. */
static void each_message(const void *buf, size_t size)
{
	const struct nlmsghdr *nlh = buf;
	int rem = (int)size;

	while (rem > 0 && nlif_msg_ok(nlh, (size_t)rem)) {
		struct npf_iface ifc;
		struct npf_addr a;
		int64_t mbps;
		uint16_t id;
		int idx, oif;

		if (nlif_parse_link(nlh, &ifc) == 0) {
			classify_iface(&ifc, NULL);
			npf_iface_clear(&ifc);
		}
		(void)nlif_parse_addr(nlh, &idx, &a);
		(void)nlif_parse_route_oif(nlh, &oif);
		(void)nlif_parse_default_oif(nlh, &oif);
		(void)nlif_parse_ethtool_speed(nlh, &mbps);
		(void)nlif_parse_genl_family_id(nlh, &id);
		nlh = mnl_nlmsg_next(nlh, &rem);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npf_inventory inv = { 0 };
	int64_t mbps;
	void *buf;
	json_t *j;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	/* Netlink buffers are 4-byte aligned; libFuzzer's data need not be. */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	if (nlif_parse_dump(buf, size, &inv) >= 0 || inv.n_ifaces) {
		nlif_inventory_sort(&inv);
		classify_inventory(&inv);
		j = npf_ifaces_to_json(&inv);
		if (j) {
			char *txt = json_dumps(j, JSON_COMPACT);

			free(txt);
			json_decref(j);
		}
	}
	npf_inventory_clear(&inv);
	each_message(buf, size);
	(void)nlif_parse_sysfs_speed(buf, size < 64 ? size : 64, &mbps);
	free(buf);
	return 0;
}
