// SPDX-License-Identifier: MIT
/* Netlink I/O shell: rtnetlink and ethtool sockets feeding the nlif parsers. */
#include "netlink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "classify.h"
#include "nlif.h"

/* libmnl 1.0.4 predates this macro; 32 KiB holds a full kernel dump skb. */
#ifndef MNL_SOCKET_DUMP_SIZE
#define MNL_SOCKET_DUMP_SIZE 32768
#endif
#define NLSYS_DUMP_RESTARTS 3
/* The kernel answers in microseconds; a silent socket means something broke,
 * and the CLI or the daemon's refresh must not hang on it. */
#define NLSYS_RCV_TIMEOUT_S 5
#define NLSYS_REQ_SIZE 512

struct nlsock {
	struct mnl_socket *nl;
	unsigned int portid;
	unsigned int seq;
};

/* Raw receive buffers kept for nlsys_capture. */
struct rawbuf {
	char *p;
	size_t len;
};

static void nlsock_close(struct nlsock *s)
{
	if (s->nl)
		mnl_socket_close(s->nl);
	s->nl = NULL;
}

static int nlsock_open(struct nlsock *s, int bus)
{
	struct timeval tv = { .tv_sec = NLSYS_RCV_TIMEOUT_S };
	int one = 1, rc;

	memset(s, 0, sizeof(*s));
	s->nl = mnl_socket_open2(bus, SOCK_CLOEXEC);
	if (!s->nl)
		return -errno;
	/* Both only enrich or shorten error replies; kernels before 4.12 lack
	 * NETLINK_EXT_ACK, so failure is expected there and harmless. */
	(void)mnl_socket_setsockopt(s->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	(void)mnl_socket_setsockopt(s->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (setsockopt(mnl_socket_get_fd(s->nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		goto err;
	if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto err;
	s->portid = mnl_socket_get_portid(s->nl);
	return 0;
err:
	rc = -errno;
	nlsock_close(s);
	return rc;
}

static int nlsock_send(struct nlsock *s, const struct nlmsghdr *nlh)
{
	if (mnl_socket_sendto(s->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	return 0;
}

static ssize_t nlsock_recv(struct nlsock *s, void *buf, size_t len)
{
	ssize_t n = mnl_socket_recvfrom(s->nl, buf, len);

	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
	if (n == 0)
		return -ENODATA;
	return n;
}

static int rawbuf_add(struct rawbuf *raw, const void *buf, size_t len)
{
	char *p = realloc(raw->p, raw->len + len);

	if (!p)
		return -ENOMEM;
	memcpy(p + raw->len, buf, len);
	raw->p = p;
	raw->len += len;
	return 0;
}

/*
 * One dump request and its replies. mnl_cb_run without a data callback checks
 * port id and sequence, turns NLMSG_ERROR into errno and NLM_F_DUMP_INTR into
 * EINTR (libmnl 1.0.4) and stops at NLMSG_DONE; the pure parser then reads
 * the same buffer.
 */
static int dump_once(struct nlsock *s, uint16_t type, void *buf, struct npf_inventory *inv,
		     struct rawbuf *raw)
{
	char req[NLSYS_REQ_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	unsigned int seq = ++s->seq;
	int rc;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	if (type == RTM_GETLINK) {
		struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

		ifi->ifi_family = AF_UNSPEC;
		/* Statistics are most of a link message and we never read them. */
		mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	} else if (type == RTM_GETROUTE) {
		struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

		rtm->rtm_family = AF_UNSPEC;
	} else {
		struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));

		ifa->ifa_family = AF_UNSPEC;
	}
	rc = nlsock_send(s, nlh);
	if (rc < 0)
		return rc;
	for (;;) {
		ssize_t n = nlsock_recv(s, buf, MNL_SOCKET_DUMP_SIZE);
		int ret;

		if (n < 0)
			return (int)n;
		ret = mnl_cb_run(buf, (size_t)n, seq, s->portid, NULL, NULL);
		if (ret < 0)
			return errno ? -errno : -EPROTO;
		if (raw) {
			rc = rawbuf_add(raw, buf, (size_t)n);
			if (rc < 0)
				return rc;
		}
		if (inv) {
			rc = nlif_parse_dump(buf, (size_t)n, inv);
			if (rc < 0)
				return rc;
		}
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

/* Link dump, address dump, then route dump on a fresh socket per attempt: after an
 * interrupted dump the old socket still holds stale replies. */
static int dump_links_addrs(struct npf_inventory *inv, struct rawbuf *raw)
{
	struct nlsock s;
	void *buf = malloc(MNL_SOCKET_DUMP_SIZE);
	int rc = -EAGAIN;

	if (!buf)
		return -ENOMEM;
	for (int attempt = 0; attempt <= NLSYS_DUMP_RESTARTS; attempt++) {
		if (inv)
			npf_inventory_clear(inv);
		if (raw)
			raw->len = 0;
		rc = nlsock_open(&s, NETLINK_ROUTE);
		if (rc < 0)
			break;
		rc = dump_once(&s, RTM_GETLINK, buf, inv, raw);
		if (rc == 0)
			rc = dump_once(&s, RTM_GETADDR, buf, inv, raw);
		/* Routes last: the default route's link marks the management network. */
		if (rc == 0)
			rc = dump_once(&s, RTM_GETROUTE, buf, inv, raw);
		nlsock_close(&s);
		if (rc != -EINTR)
			break;
		/* Links changed under the dump: the snapshot would mix two states. */
		rc = -EAGAIN;
	}
	free(buf);
	return rc;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	int rc = nlif_parse_genl_family_id(nlh, data);

	if (rc < 0) {
		errno = -rc;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static int speed_cb(const struct nlmsghdr *nlh, void *data)
{
	int rc = nlif_parse_ethtool_speed(nlh, data);

	if (rc < 0) {
		errno = -rc;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* One request, one reply (no NLM_F_ACK: the answer or an error is all the
 * kernel sends), handed to cb. */
static int genl_request(struct nlsock *s, struct nlmsghdr *nlh, void *buf, mnl_cb_t cb, void *arg)
{
	ssize_t n;
	int rc;

	nlh->nlmsg_seq = ++s->seq;
	rc = nlsock_send(s, nlh);
	if (rc < 0)
		return rc;
	n = nlsock_recv(s, buf, MNL_SOCKET_DUMP_SIZE);
	if (n < 0)
		return (int)n;
	errno = 0;
	if (mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, s->portid, cb, arg) < 0)
		return errno ? -errno : -EPROTO;
	return 0;
}

static int ethtool_family(struct nlsock *s, void *buf, uint16_t *family)
{
	char req[NLSYS_REQ_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = CTRL_CMD_GETFAMILY;
	genl->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
	*family = 0;
	return genl_request(s, nlh, buf, family_cb, family);
}

static int ethtool_speed(struct nlsock *s, uint16_t family, void *buf, int ifindex, int64_t *mbps)
{
	char req[NLSYS_REQ_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct genlmsghdr *genl;
	struct nlattr *nest;

	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = ETHTOOL_MSG_LINKMODES_GET;
	genl->version = ETHTOOL_GENL_VERSION;
	nest = mnl_attr_nest_start(nlh, ETHTOOL_A_LINKMODES_HEADER);
	mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, (uint32_t)ifindex);
	/* Compact bitsets keep the link-mode masks we ignore small. */
	mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, ETHTOOL_FLAG_COMPACT_BITSETS);
	mnl_attr_nest_end(nlh, nest);
	*mbps = NPF_SPEED_UNKNOWN;
	return genl_request(s, nlh, buf, speed_cb, mbps);
}

/* The kernel's dev_valid_name() already forbids these; the names do come
 * from the kernel, but a path is built from them, so check again. */
static bool sysfs_name_ok(const char *name)
{
	return name[0] && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !strchr(name, '/');
}

static int64_t sysfs_speed(const char *root, const char *name)
{
	char path[PATH_MAX], txt[32];
	int64_t mbps = NPF_SPEED_UNKNOWN;
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/class/net/%s/speed", root, name) >= (int)sizeof(path))
		return NPF_SPEED_UNKNOWN;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NPF_SPEED_UNKNOWN;
	/* Links without carrier or without a speed answer EINVAL: unknown. */
	n = read(fd, txt, sizeof(txt));
	close(fd);
	if (n <= 0 || nlif_parse_sysfs_speed(txt, (size_t)n, &mbps) < 0)
		return NPF_SPEED_UNKNOWN;
	return mbps;
}

static bool sysfs_has_device(const char *root, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/class/net/%s/device", root, name) >= (int)sizeof(path))
		return false;
	return access(path, F_OK) == 0;
}

/* Fills has_device and speed_mbps. Missing ethtool netlink (old kernel, no
 * CONFIG_ETHTOOL_NETLINK) or a link without link modes falls back to sysfs. */
static void enrich(struct npf_inventory *inv, const char *root)
{
	struct nlsock s = { 0 };
	uint16_t family = 0;
	void *buf = malloc(MNL_SOCKET_DUMP_SIZE);
	bool ethtool = buf && nlsock_open(&s, NETLINK_GENERIC) == 0 &&
		       ethtool_family(&s, buf, &family) == 0 && family;

	for (size_t i = 0; i < inv->n_ifaces; i++) {
		struct npf_iface *ifc = &inv->ifaces[i];
		bool named = sysfs_name_ok(ifc->name);
		int rc;

		ifc->has_device = named && sysfs_has_device(root, ifc->name);
		ifc->speed_mbps = NPF_SPEED_UNKNOWN;
		if (ethtool) {
			rc = ethtool_speed(&s, family, buf, ifc->ifindex, &ifc->speed_mbps);
			/* A socket that stops answering would stall every link. */
			if (rc == -ETIMEDOUT || rc == -ENOBUFS)
				ethtool = false;
		}
		if (ifc->speed_mbps == NPF_SPEED_UNKNOWN && named)
			ifc->speed_mbps = sysfs_speed(root, ifc->name);
	}
	nlsock_close(&s);
	free(buf);
}

int nlsys_dump_ifaces(struct npf_inventory *inv, const char *sysfs_root)
{
	struct npf_inventory tmp = { 0 };
	int rc;

	rc = dump_links_addrs(&tmp, NULL);
	if (rc < 0)
		goto err;
	enrich(&tmp, sysfs_root ? sysfs_root : "/sys");
	nlif_inventory_sort(&tmp);
	classify_inventory(&tmp);
	for (size_t i = 0; i < inv->n_ifaces; i++)
		npf_iface_clear(&inv->ifaces[i]);
	free(inv->ifaces);
	inv->ifaces = tmp.ifaces;
	inv->n_ifaces = tmp.n_ifaces;
	return tmp.n_ifaces > INT_MAX ? INT_MAX : (int)tmp.n_ifaces;
err:
	npf_inventory_clear(&tmp);
	return rc;
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	int rc = nlif_parse_route_oif(nlh, data);

	if (rc < 0) {
		errno = -rc;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* One RTM_GETROUTE on s, the reply read into buf (MNL_SOCKET_DUMP_SIZE bytes). */
static int route_query(struct nlsock *s, void *buf, const struct npf_addr *dst, int *oif)
{
	char req[NLSYS_REQ_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct rtmsg *rtm;
	size_t alen;
	ssize_t n;
	int rc;

	*oif = 0;
	if (dst->family == AF_INET)
		alen = 4;
	else if (dst->family == AF_INET6)
		alen = 16;
	else
		return -EAFNOSUPPORT;
	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++s->seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = dst->family;
	rtm->rtm_dst_len = (unsigned char)(alen * 8);
	mnl_attr_put(nlh, RTA_DST, alen, dst->addr);
	rc = nlsock_send(s, nlh);
	if (rc < 0)
		return rc;
	n = nlsock_recv(s, buf, MNL_SOCKET_DUMP_SIZE);
	if (n < 0)
		return (int)n;
	errno = 0;
	if (mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, s->portid, route_cb, oif) < 0)
		return errno ? -errno : -EPROTO;
	return *oif > 0 ? 0 : -ENOENT;
}

int nlsys_route_get(const struct npf_addr *dst, int *oif)
{
	struct nlsys_routes *r;
	int rc = nlsys_routes_open(&r);

	*oif = 0;
	if (rc < 0)
		return rc;
	rc = nlsys_routes_get(r, dst, oif);
	nlsys_routes_close(r);
	return rc;
}

struct nlsys_routes {
	struct nlsock s; /* s.nl NULL: closed after a failure, reopened on the next lookup */
	char buf[MNL_SOCKET_DUMP_SIZE];
};

int nlsys_routes_open(struct nlsys_routes **out)
{
	struct nlsys_routes *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	rc = nlsock_open(&r->s, NETLINK_ROUTE);
	if (rc < 0) {
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int nlsys_routes_get(struct nlsys_routes *r, const struct npf_addr *dst, int *oif)
{
	int rc;

	*oif = 0;
	if (!r->s.nl && (rc = nlsock_open(&r->s, NETLINK_ROUTE)) < 0)
		return rc;
	rc = route_query(&r->s, r->buf, dst, oif);
	/* The kernel's own answers (no route, unreachable) leave the socket in step; a
	 * timeout or a stray reply may not: the next lookup starts on a fresh socket. */
	if (rc < 0 && rc != -ENETUNREACH && rc != -EHOSTUNREACH && rc != -ENOENT &&
	    rc != -EAFNOSUPPORT && rc != -EINVAL)
		nlsock_close(&r->s);
	return rc;
}

void nlsys_routes_close(struct nlsys_routes *r)
{
	if (!r)
		return;
	nlsock_close(&r->s);
	free(r);
}

int nlsys_capture(const char *path)
{
	struct rawbuf raw = { 0 };
	FILE *f = NULL;
	int rc;

	rc = dump_links_addrs(NULL, &raw);
	if (rc < 0)
		goto out;
	if (raw.len > INT_MAX) {
		rc = -EFBIG;
		goto out;
	}
	f = fopen(path, "wbe");
	if (!f) {
		rc = -errno;
		goto out;
	}
	if (fwrite(raw.p, 1, raw.len, f) != raw.len) {
		rc = -EIO;
		goto out_unlink;
	}
	if (fclose(f) != 0) {
		f = NULL;
		rc = -errno;
		goto out_unlink;
	}
	f = NULL;
	rc = (int)raw.len;
	goto out;
out_unlink:
	if (f)
		fclose(f);
	f = NULL;
	unlink(path);
out:
	free(raw.p);
	return rc;
}
