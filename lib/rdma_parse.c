// SPDX-License-Identifier: MIT
/* Content parsers for the RDMA sysfs attribute files (bytes in: GIDs, port states, link
 * layers, rates, GUIDs) and the names of their values; lib/rdma_sysfs.c reads the tree. */
#include "rdma_sysfs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Strips surrounding whitespace and rejects control bytes (NULs included):
 * sysfs values are printable ASCII, so anything else means a corrupt capture.
 * Returns 0, -ENODATA when nothing is left, or -EINVAL. */
static int trim(const char **text, size_t *len)
{
	const char *p = *text;
	size_t n = *len;

	if (!p && n)
		return -EINVAL;
	while (n && is_space(p[0])) {
		p++;
		n--;
	}
	while (n && is_space(p[n - 1]))
		n--;
	if (!n)
		return -ENODATA;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] < 0x20 || (unsigned char)p[i] > 0x7e)
			return -EINVAL;
	*text = p;
	*len = n;
	return 0;
}

static bool span_eq(const char *p, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(p, lit, n) == 0;
}

/* "N" or "N: label" as the kernel prints enum attributes. At most 5 digits so
 * the value cannot overflow; the label (possibly empty) is returned as a span. */
static int parse_num_label(const char *p, size_t n, int *num, const char **label, size_t *llen)
{
	size_t i = 0;
	int v = 0;

	while (i < n && is_digit(p[i])) {
		if (i == 5)
			return -EINVAL;
		v = v * 10 + (p[i] - '0');
		i++;
	}
	if (i == 0)
		return -EINVAL;
	*num = v;
	*label = p + n;
	*llen = 0;
	if (i == n)
		return 0;
	if (p[i] != ':')
		return -EINVAL;
	i++;
	while (i < n && p[i] == ' ')
		i++;
	*label = p + i;
	*llen = n - i;
	return 0;
}

int rdma_parse_gid(const char *text, size_t len, uint8_t out[16])
{
	char buf[48];
	uint8_t raw[16];
	int ret = trim(&text, &len);

	if (ret)
		return ret;
	if (len >= sizeof(buf))
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (hexval(text[i]) < 0 && text[i] != ':' && text[i] != '.')
			return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, raw) != 1)
		return -EINVAL;
	memcpy(out, raw, 16);
	return 0;
}

int rdma_parse_port_state(const char *text, size_t len, enum npf_port_state *out)
{
	const char *label;
	size_t llen;
	int v, ret = trim(&text, &len);

	if (ret)
		return ret;
	ret = parse_num_label(text, len, &v, &label, &llen);
	if (ret)
		return ret;
	if (v < NPF_PORT_NOP || v > NPF_PORT_ACTIVE_DEFER)
		return -EINVAL;
	/* A label that contradicts the number means we misread the file. */
	if (llen && !span_eq(label, llen, npf_port_state_name((enum npf_port_state)v)))
		return -EINVAL;
	*out = (enum npf_port_state)v;
	return 0;
}

int rdma_parse_phys_state(const char *text, size_t len, int *out)
{
	const char *label;
	size_t llen;
	int v, ret = trim(&text, &len);

	if (ret)
		return ret;
	ret = parse_num_label(text, len, &v, &label, &llen);
	if (ret)
		return ret;
	if (v > 15) /* a 4-bit field in PortInfo */
		return -EINVAL;
	*out = v;
	return 0;
}

int rdma_parse_link_layer(const char *text, size_t len, enum npf_link_layer *out)
{
	int ret = trim(&text, &len);

	if (ret)
		return ret;
	if (span_eq(text, len, "InfiniBand"))
		*out = NPF_LL_INFINIBAND;
	else if (span_eq(text, len, "Ethernet"))
		*out = NPF_LL_ETHERNET;
	else
		*out = NPF_LL_UNKNOWN;
	return 0;
}

static const struct {
	const char *name;
	int val;
} speed_names[] = {
	{ "SDR", RDMA_SPEED_SDR },     { "DDR", RDMA_SPEED_DDR }, { "QDR", RDMA_SPEED_QDR },
	{ "FDR10", RDMA_SPEED_FDR10 }, { "FDR", RDMA_SPEED_FDR }, { "EDR", RDMA_SPEED_EDR },
	{ "HDR", RDMA_SPEED_HDR },     { "NDR", RDMA_SPEED_NDR }, { "XDR", RDMA_SPEED_XDR },
};

static const struct {
	const char *name;
	int lanes;
	int val;
} width_names[] = {
	{ "1X", 1, RDMA_WIDTH_1X }, { "2X", 2, RDMA_WIDTH_2X },   { "4X", 4, RDMA_WIDTH_4X },
	{ "8X", 8, RDMA_WIDTH_8X }, { "12X", 12, RDMA_WIDTH_12X },
};

int rdma_parse_rate(const char *text, size_t len, char *out, size_t outsz, int *speed,
		    int *width)
{
	const char *open, *close;
	int ret = trim(&text, &len);
	int sp = -1, wd = -1;

	if (ret)
		return ret;
	if (!out || outsz == 0)
		return -EINVAL;
	/* The kernel prints "<rate> Gb/sec (<lanes>X <speed>)"; the part in
	 * parentheses is what ibv_port_attr calls active_width/active_speed. */
	open = memchr(text, '(', len);
	close = open ? memchr(open, ')', len - (size_t)(open - text)) : NULL;
	if (open && close) {
		const char *p = open + 1;
		size_t n = (size_t)(close - p), i = 0;
		int lanes = 0;

		while (i < n && is_digit(p[i]) && i < 3)
			lanes = lanes * 10 + (p[i++] - '0');
		if (i > 0 && i < n && p[i] == 'X') {
			for (size_t k = 0; k < sizeof(width_names) / sizeof(width_names[0]); k++)
				if (width_names[k].lanes == lanes)
					wd = width_names[k].val;
			i++;
			while (i < n && p[i] == ' ')
				i++;
			for (size_t k = 0; k < sizeof(speed_names) / sizeof(speed_names[0]); k++)
				if (span_eq(p + i, n - i, speed_names[k].name))
					sp = speed_names[k].val;
		}
	}
	if (len >= outsz)
		len = outsz - 1;
	memcpy(out, text, len);
	out[len] = '\0';
	*speed = sp;
	*width = wd;
	return 0;
}

int rdma_parse_gid_type(const char *text, size_t len, enum npf_gid_type *out)
{
	int ret = trim(&text, &len);

	if (ret)
		return ret;
	/* The kernel spells RoCE v1 as "IB/RoCE v1"; NCCL also accepts "RoCE v1". */
	if (span_eq(text, len, "IB/RoCE v1") || span_eq(text, len, "RoCE v1"))
		*out = NPF_GID_IB_ROCE_V1;
	else if (span_eq(text, len, "RoCE v2"))
		*out = NPF_GID_ROCE_V2;
	else
		*out = NPF_GID_TYPE_UNKNOWN;
	return 0;
}

int rdma_parse_node_guid(const char *text, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	int ret = trim(&text, &len);

	if (ret)
		return ret;
	for (int group = 0; group < 4; group++) {
		size_t digits = 0;

		if (group > 0) {
			if (i >= len || text[i] != ':')
				return -EINVAL;
			i++;
		}
		while (i < len && hexval(text[i]) >= 0) {
			if (++digits > 4)
				return -EINVAL;
			i++;
		}
		if (digits == 0)
			return -EINVAL;
		uint64_t g = 0;
		for (size_t k = i - digits; k < i; k++)
			g = g << 4 | (uint64_t)hexval(text[k]);
		v = v << 16 | g;
	}
	if (i != len)
		return -EINVAL;
	*out = v;
	return 0;
}

int rdma_parse_node_type(const char *text, size_t len, char *out, size_t outsz)
{
	static const char *const names[] = { "unknown", "CA",    "switch",    "router",
					     "RNIC",    "usNIC", "usNIC UDP", "unspecified" };
	const char *label;
	size_t llen;
	int v, ret = trim(&text, &len);

	if (ret)
		return ret;
	if (!out || outsz == 0)
		return -EINVAL;
	ret = parse_num_label(text, len, &v, &label, &llen);
	if (ret)
		return ret;
	if (!llen) {
		label = v < (int)(sizeof(names) / sizeof(names[0])) ? names[v] : "unknown";
		llen = strlen(label);
	}
	if (llen >= outsz)
		llen = outsz - 1;
	memcpy(out, label, llen);
	out[llen] = '\0';
	return 0;
}

int rdma_parse_ndev(const char *text, size_t len, char out[IFNAMSIZ])
{
	int ret = trim(&text, &len);

	if (ret)
		return ret;
	/* The kernel's dev_valid_name(): no '/', ':' or whitespace, not "." or "..". */
	if (len >= IFNAMSIZ || span_eq(text, len, ".") || span_eq(text, len, ".."))
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (text[i] == '/' || text[i] == ':' || text[i] == ' ')
			return -EINVAL;
	memcpy(out, text, len);
	out[len] = '\0';
	return 0;
}

int rdma_format_rate(int speed, int width, char *buf, size_t bufsz)
{
	/* Per-lane rate in 100 Mb/s units, as the kernel's rate_show() counts. */
	static const struct {
		int speed, tenths;
	} lane[] = {
		{ RDMA_SPEED_SDR, 25 },	  { RDMA_SPEED_DDR, 50 },   { RDMA_SPEED_QDR, 100 },
		{ RDMA_SPEED_FDR10, 100 }, { RDMA_SPEED_FDR, 140 },  { RDMA_SPEED_EDR, 250 },
		{ RDMA_SPEED_HDR, 500 },  { RDMA_SPEED_NDR, 1000 }, { RDMA_SPEED_XDR, 2000 },
	};
	int tenths = 0, lanes = 0;

	if (!buf || bufsz == 0)
		return -EINVAL;
	buf[0] = '\0';
	for (size_t k = 0; k < sizeof(lane) / sizeof(lane[0]); k++)
		if (lane[k].speed == speed)
			tenths = lane[k].tenths;
	for (size_t k = 0; k < sizeof(width_names) / sizeof(width_names[0]); k++)
		if (width_names[k].val == width)
			lanes = width_names[k].lanes;
	if (!tenths || !lanes)
		return -EINVAL;
	tenths *= lanes;
	snprintf(buf, bufsz, "%d%s Gb/sec (%dX %s)", tenths / 10, tenths % 10 ? ".5" : "", lanes,
		 rdma_speed_name(speed));
	return 0;
}

const char *rdma_speed_name(int speed)
{
	for (size_t k = 0; k < sizeof(speed_names) / sizeof(speed_names[0]); k++)
		if (speed_names[k].val == speed)
			return speed_names[k].name;
	return "unknown";
}

const char *rdma_width_name(int width)
{
	for (size_t k = 0; k < sizeof(width_names) / sizeof(width_names[0]); k++)
		if (width_names[k].val == width)
			return width_names[k].name;
	return "unknown";
}

const char *rdma_phys_state_name(int phys_state)
{
	/* IBTA PortPhysicalState, spelled as the kernel's phys_state file does. */
	static const char *const names[] = {
		"NOP",	  "Sleep",	       "Polling",	   "Disabled",
		"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest",
	};
	if (phys_state < 0 || phys_state >= (int)(sizeof(names) / sizeof(names[0])))
		return "unknown";
	return names[phys_state];
}
