// SPDX-License-Identifier: MIT
/* Reads the RDMA sysfs layout (live /sys or a captured tree, a directory root in) into the
 * node model; the attribute contents go to the parsers of lib/rdma_parse.c. */
#include "rdma_sysfs.h"
#include "gid.h"
#include "rdma_topo.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* sysfs attributes we read are one short line; anything longer is junk. */
#define ATTR_BUF 128

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ---- tree reader ---- */

/* Reads one attribute into buf (not NUL-terminated). Refuses anything but a
 * regular file, and opens non-blocking, so a FIFO planted in a captured tree
 * cannot hang us. Returns the length, or -errno; -EFBIG when the file is
 * longer than buf. */
static int read_attr(int dirfd, const char *name, char *buf, size_t bufsz)
{
	struct stat st;
	size_t n = 0;
	int fd, ret;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto out;
	}
	while (n < bufsz) {
		ssize_t r = read(fd, buf + n, bufsz - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n == bufsz) {
		char extra;
		ssize_t r = read(fd, &extra, 1);

		if (r != 0) {
			ret = -EFBIG;
			goto out;
		}
	}
	ret = (int)n;
out:
	close(fd);
	return ret;
}

/* Opens a subdirectory (following the symlinks sysfs uses for devices). */
static int open_dir(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Decimal without sign or leading zeros, below limit; -1 otherwise. */
static int dec_name(const char *s, int limit)
{
	long v = 0;

	if (!is_digit(s[0]) || (s[0] == '0' && s[1]))
		return -1;
	for (const char *p = s; *p; p++) {
		if (!is_digit(*p))
			return -1;
		v = v * 10 + (*p - '0');
		if (v >= limit)
			return -1;
	}
	return (int)v;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Port numbers under ports/, sorted. Returns the count or -errno. */
static int list_ports(int portsfd, int *ports, int max)
{
	int fd = dup(portsfd), n = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	while ((de = readdir(d)) && n < max) {
		int p = dec_name(de->d_name, RDMA_SYSFS_MAX_PORTS + 1);

		if (p >= 1)
			ports[n++] = p;
	}
	closedir(d);
	qsort(ports, (size_t)n, sizeof(*ports), cmp_int);
	return n;
}

/* Highest numbered entry of gids/ plus one: the table length, as gids/ has one
 * file per hardware slot, populated or not. */
static int gid_table_len(int gidsfd)
{
	int fd = dup(gidsfd), len = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	while ((de = readdir(d))) {
		int i = dec_name(de->d_name, RDMA_SYSFS_MAX_GIDS);

		if (i >= 0 && i + 1 > len)
			len = i + 1;
	}
	closedir(d);
	return len;
}

static bool gid_is_zero(const uint8_t raw[16])
{
	for (int i = 0; i < 16; i++)
		if (raw[i])
			return false;
	return true;
}

/* Reads slot i. Returns 1 when populated (into *g), else 0: every failure
 * here only means "no usable entry". */
static int read_gid_slot(int gidsfd, int typesfd, int ndevsfd, int i, bool ib, struct npf_gid *g)
{
	char name[16], buf[ATTR_BUF];
	int n;

	snprintf(name, sizeof(name), "%d", i);
	memset(g, 0, sizeof(*g));
	g->index = i;
	n = read_attr(gidsfd, name, buf, sizeof(buf));
	if (n < 0 || rdma_parse_gid(buf, (size_t)n, g->raw) < 0 || gid_is_zero(g->raw))
		return 0;
	/* On a real kernel an unpopulated slot reads as a zero GID and its types
	 * file fails with EINVAL; captures show the same as a missing or empty
	 * file. IB GIDs have no RoCE type, so there we keep the slot anyway. */
	n = typesfd >= 0 ? read_attr(typesfd, name, buf, sizeof(buf)) : -ENOENT;
	if (n < 0 || rdma_parse_gid_type(buf, (size_t)n, &g->type) < 0) {
		if (!ib)
			return 0;
		g->type = NPF_GID_IB_ROCE_V1;
	}
	if (ndevsfd >= 0) {
		n = read_attr(ndevsfd, name, buf, sizeof(buf));
		if (n < 0 || rdma_parse_ndev(buf, (size_t)n, g->ndev) < 0)
			g->ndev[0] = '\0';
	}
	gid_fill_ipv4(g);
	return 1;
}

static int read_gids(int portfd, struct npf_rdma_port *port)
{
	int gidsfd, typesfd, ndevsfd, len, ret = 0;
	struct npf_gid *gids = NULL;
	size_t n = 0;

	gidsfd = open_dir(portfd, "gids");
	if (gidsfd < 0)
		return 0; /* no GID table: nothing to predict, not an error */
	typesfd = open_dir(portfd, "gid_attrs/types");
	ndevsfd = open_dir(portfd, "gid_attrs/ndevs");
	len = gid_table_len(gidsfd);
	if (len <= 0)
		goto out;
	gids = calloc((size_t)len, sizeof(*gids));
	if (!gids) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < len; i++)
		n += (size_t)read_gid_slot(gidsfd, typesfd, ndevsfd, i,
					   port->link_layer == NPF_LL_INFINIBAND, &gids[n]);
	port->gid_tbl_len = len;
	if (n == 0) {
		free(gids);
		gids = NULL;
	}
	port->gids = gids;
	port->n_gids = n;
out:
	if (ndevsfd >= 0)
		close(ndevsfd);
	if (typesfd >= 0)
		close(typesfd);
	close(gidsfd);
	return ret;
}

static int read_port(int portsfd, int num, struct npf_rdma_port *port)
{
	char name[16], buf[ATTR_BUF];
	int fd, n, ret;

	memset(port, 0, sizeof(*port));
	port->port = num;
	port->phys_state = -1;
	port->active_speed = -1;
	port->active_width = -1;
	port->nccl_auto_gid = -1;
	port->nccl_legacy_gid = -1;
	snprintf(name, sizeof(name), "%d", num);
	fd = open_dir(portsfd, name);
	if (fd < 0)
		return fd;
	/* Each attribute is optional: a field we cannot read stays "unknown"
	 * rather than losing the whole port. */
	n = read_attr(fd, "state", buf, sizeof(buf));
	if (n < 0 || rdma_parse_port_state(buf, (size_t)n, &port->state) < 0)
		port->state = NPF_PORT_NOP;
	n = read_attr(fd, "phys_state", buf, sizeof(buf));
	if (n < 0 || rdma_parse_phys_state(buf, (size_t)n, &port->phys_state) < 0)
		port->phys_state = -1;
	n = read_attr(fd, "link_layer", buf, sizeof(buf));
	if (n < 0 || rdma_parse_link_layer(buf, (size_t)n, &port->link_layer) < 0)
		port->link_layer = NPF_LL_UNKNOWN;
	n = read_attr(fd, "rate", buf, sizeof(buf));
	if (n < 0 || rdma_parse_rate(buf, (size_t)n, port->rate, sizeof(port->rate),
				     &port->active_speed, &port->active_width) < 0) {
		port->rate[0] = '\0';
		port->active_speed = port->active_width = -1;
	}
	ret = read_gids(fd, port);
	close(fd);
	return ret;
}

static bool valid_dev_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= NPF_NAME_MAX || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

static int read_dev(int ibfd, const char *name, struct npf_rdma_dev *dev)
{
	int devfd, portsfd, nports, ret = 0;
	int nums[RDMA_SYSFS_MAX_PORTS];
	char buf[ATTR_BUF];
	int n;

	memset(dev, 0, sizeof(*dev));
	if (!valid_dev_name(name) || strchr(name, '/'))
		return -EINVAL;
	devfd = open_dir(ibfd, name);
	if (devfd < 0)
		return devfd;
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	n = read_attr(devfd, "node_guid", buf, sizeof(buf));
	if (n < 0 || rdma_parse_node_guid(buf, (size_t)n, &dev->node_guid) < 0)
		dev->node_guid = 0;
	n = read_attr(devfd, "node_type", buf, sizeof(buf));
	if (n < 0 || rdma_parse_node_type(buf, (size_t)n, dev->node_type,
					  sizeof(dev->node_type)) < 0)
		dev->node_type[0] = '\0';

	portsfd = open_dir(devfd, "ports");
	if (portsfd < 0)
		goto out; /* a device without ports/ is listed with none */
	nports = list_ports(portsfd, nums, RDMA_SYSFS_MAX_PORTS);
	if (nports <= 0) {
		ret = nports < 0 ? nports : 0;
		goto out_ports;
	}
	dev->ports = calloc((size_t)nports, sizeof(*dev->ports));
	if (!dev->ports) {
		ret = -ENOMEM;
		goto out_ports;
	}
	for (int i = 0; i < nports; i++) {
		ret = read_port(portsfd, nums[i], &dev->ports[dev->n_ports]);
		if (ret == -ENOMEM)
			goto out_ports;
		if (ret == 0)
			dev->n_ports++;
		ret = 0;
	}
out_ports:
	close(portsfd);
out:
	close(devfd);
	if (ret < 0)
		npf_rdma_dev_clear(dev);
	return ret;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* Opens <root>/class/infiniband. -ENOENT from here means "no RDMA stack";
 * *root_missing tells that apart from a root that does not exist at all. */
static int open_ib_class(const char *root, bool *root_missing)
{
	int rootfd, fd;

	*root_missing = false;
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		*root_missing = true;
		return -errno;
	}
	fd = open_dir(rootfd, "class/infiniband");
	close(rootfd);
	return fd;
}

int rdma_sysfs_read_dev(const char *sysfs_root, const char *name, struct npf_rdma_dev *dev)
{
	bool root_missing;
	int ibfd, ret;

	memset(dev, 0, sizeof(*dev));
	if (!name)
		return -EINVAL;
	ibfd = open_ib_class(sysfs_root ? sysfs_root : "/sys", &root_missing);
	if (ibfd < 0)
		return ibfd;
	ret = read_dev(ibfd, name, dev);
	close(ibfd);
	return ret;
}

int rdma_sysfs_read(const char *sysfs_root, struct npf_inventory *inv)
{
	const char *root = sysfs_root ? sysfs_root : "/sys";
	char (*names)[NPF_NAME_MAX] = NULL;
	struct npf_rdma_dev *devs = NULL, *grown;
	size_t nnames = 0, ndevs = 0;
	struct dirent *de;
	bool root_missing;
	int ibfd, ret = 0;
	DIR *d;

	ibfd = open_ib_class(root, &root_missing);
	if (ibfd < 0) {
		if (root_missing || ibfd != -ENOENT)
			return ibfd;
		snprintf(inv->rdma_note, sizeof(inv->rdma_note),
			 "no RDMA devices (no class/infiniband under %.60s)", root);
		return 0;
	}
	names = calloc(RDMA_SYSFS_MAX_DEVS, sizeof(*names));
	if (!names) {
		close(ibfd);
		return -ENOMEM;
	}
	{
		int fd = dup(ibfd);

		d = fd < 0 ? NULL : fdopendir(fd);
		if (!d) {
			ret = -errno;
			if (fd >= 0)
				close(fd);
			goto out;
		}
	}
	while ((de = readdir(d)) && nnames < RDMA_SYSFS_MAX_DEVS)
		if (valid_dev_name(de->d_name)) /* which bounds it below NPF_NAME_MAX */
			memcpy(names[nnames++], de->d_name, strlen(de->d_name) + 1);
	closedir(d);
	/* readdir order is arbitrary; sort for stable output and tests. */
	qsort(names, nnames, sizeof(*names), cmp_name);

	if (nnames) {
		devs = calloc(nnames, sizeof(*devs));
		if (!devs) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < nnames; i++) {
		ret = read_dev(ibfd, names[i], &devs[ndevs]);
		if (ret == -ENOMEM)
			goto out;
		if (ret == 0)
			ndevs++; /* stray files and unreadable entries are skipped */
		ret = 0;
	}
	if (ndevs == 0) {
		snprintf(inv->rdma_note, sizeof(inv->rdma_note),
			 "no RDMA devices (class/infiniband under %.60s is empty)", root);
		goto out;
	}
	grown = realloc(inv->rdma, (inv->n_rdma + ndevs) * sizeof(*grown));
	if (!grown) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(grown + inv->n_rdma, devs, ndevs * sizeof(*devs));
	inv->rdma = grown;
	inv->n_rdma += ndevs;
	ret = (int)ndevs;
	ndevs = 0; /* ownership moved to inv */
out:
	for (size_t i = 0; i < ndevs; i++)
		npf_rdma_dev_clear(&devs[i]);
	free(devs);
	free(names);
	close(ibfd);
	return ret;
}

/* ---- PCI topology: GPUs and the devices' places (rails, lib/rdma_topo.h) ---------------- */

#define RDMA_SYSFS_MAX_GPUS 64

/* The PCI path under <root>/devices/ that <root>/<rel> resolves to, into out ("" when it
 * does not resolve there). */
static void pci_path(const char *rroot, const char *root, const char *rel, char *out, size_t len)
{
	char path[PATH_MAX], *real;
	size_t rl = strlen(rroot);

	out[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return;
	real = realpath(path, NULL);
	if (!real)
		return;
	if (strncmp(real, rroot, rl) == 0 && strncmp(real + rl, "/devices/", 9) == 0 &&
	    strlen(real + rl + 9) < len)
		snprintf(out, len, "%s", real + rl + 9);
	free(real);
}

/* bus/pci/devices/<bdf>: an NVIDIA 3D or VGA controller (what NCCL takes for a GPU). */
static bool is_gpu(int devsfd, const char *bdf)
{
	char cls[32], ven[32];
	int fd = open_dir(devsfd, bdf), n, m;

	if (fd < 0)
		return false;
	n = read_attr(fd, "class", cls, sizeof(cls) - 1);
	m = read_attr(fd, "vendor", ven, sizeof(ven) - 1);
	close(fd);
	if (n < 0 || m < 0)
		return false;
	cls[n] = ven[m] = '\0';
	return strncmp(ven, "0x10de", 6) == 0 &&
	       (strncmp(cls, "0x0302", 6) == 0 || strncmp(cls, "0x0300", 6) == 0);
}

int rdma_sysfs_read_topology(const char *sysfs_root, struct npf_inventory *inv)
{
	const char *root = sysfs_root ? sysfs_root : "/sys";
	char (*gpus)[NPF_PCI_PATH_MAX] = NULL, *rroot = NULL, rel[NPF_NAME_MAX + 32];
	const char *gp[RDMA_SYSFS_MAX_GPUS];
	size_t n = 0;
	struct dirent *de;
	int fd = -1, dfd;
	DIR *d = NULL;

	rroot = realpath(root, NULL);
	if (!rroot)
		return -errno;
	for (size_t i = 0; i < inv->n_rdma; i++) {
		snprintf(rel, sizeof(rel), "class/infiniband/%s/device", inv->rdma[i].name);
		pci_path(rroot, root, rel, inv->rdma[i].pci, sizeof(inv->rdma[i].pci));
	}
	gpus = calloc(RDMA_SYSFS_MAX_GPUS, sizeof(*gpus));
	if (!gpus) {
		free(rroot);
		return -ENOMEM;
	}
	dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fd = open_dir(dfd, "bus/pci/devices");
		close(dfd);
	}
	if (fd >= 0) {
		int fd2 = dup(fd);

		d = fd2 < 0 ? NULL : fdopendir(fd2);
		if (!d && fd2 >= 0)
			close(fd2);
	}
	while (d && (de = readdir(d)) && n < RDMA_SYSFS_MAX_GPUS) {
		if (de->d_name[0] == '.' || strlen(de->d_name) > NPF_NAME_MAX ||
		    !is_gpu(fd, de->d_name))
			continue;
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s", de->d_name);
		pci_path(rroot, root, rel, gpus[n], sizeof(gpus[n]));
		if (gpus[n][0])
			n++;
	}
	if (d)
		closedir(d);
	if (fd >= 0)
		close(fd);
	/* readdir order is arbitrary; the rails do not depend on it. */
	for (size_t i = 0; i < n; i++)
		gp[i] = gpus[i];
	rdma_topo_rails(inv, gp, n);
	free(gpus);
	free(rroot);
	return (int)n;
}
