// SPDX-License-Identifier: MIT
/* `explain`, reading the evidence for the rules: lookups over the kept lines and the
 * per-process table, and what an address can be (loopback, a bridge's default, no host's).
 * Everything here only reads. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "explain_internal.h"

bool xp_is_loopback(const char *a)
{
	return strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0;
}

bool xp_is_link_local(const char *a)
{
	return strncmp(a, "169.254.", 8) == 0 || strncasecmp(a, "fe80:", 5) == 0;
}

/* Addresses that bridges hold with the same value on every node (Docker's docker0 and its
 * user bridges, libvirt's virbr0, Podman's CNI bridge): a connect to one reaches the
 * connecting node itself. One row per default. */
static const char *const bridge_defaults[] = {
    "172.17.0.1", "172.18.0.1", "172.19.0.1", "172.20.0.1",    "172.21.0.1", "172.22.0.1",
    "172.23.0.1", "172.24.0.1", "172.25.0.1", "172.26.0.1",    "172.27.0.1", "172.28.0.1",
    "172.29.0.1", "172.30.0.1", "172.31.0.1", "192.168.122.1", "10.88.0.1",
};

/* The address without an IPv4-mapped prefix ("::ffff:10.0.0.1" -> "10.0.0.1"). */
const char *xp_unmapped(const char *a)
{
	return strncasecmp(a, "::ffff:", 7) == 0 && strchr(a + 7, '.') ? a + 7 : a;
}

/* An address of Docker's default bridge network (172.17.0.0/16): a container's own address,
 * which no other node can reach without host networking. */
bool xp_is_docker_bridge_net(const char *a)
{
	return strncmp(xp_unmapped(a), "172.17.", 7) == 0;
}

bool xp_is_bridge_default(const char *a)
{
	a = xp_unmapped(a);
	for (size_t i = 0; i < sizeof(bridge_defaults) / sizeof(bridge_defaults[0]); i++)
		if (strcmp(a, bridge_defaults[i]) == 0)
			return true;
	return false;
}

/* An address no host has: unspecified, a netmask, a network or broadcast address, multicast.
 * Returns what it is, or NULL for a plausible unicast address (or a name). */
const char *xp_impossible_addr(const char *a)
{
	unsigned o[4];
	char tail;

	a = xp_unmapped(a);
	if (strcmp(a, "0.0.0.0") == 0 || strcmp(a, "::") == 0)
		return "the unspecified address";
	if (sscanf(a, "%u.%u.%u.%u%c", &o[0], &o[1], &o[2], &o[3], &tail) != 4 || o[0] > 255 ||
	    o[1] > 255 || o[2] > 255 || o[3] > 255)
		return strncasecmp(a, "ff", 2) == 0 && strchr(a, ':') ? "a multicast address"
								      : NULL;
	if (o[0] == 255)
		return "a netmask";
	if (o[0] >= 224 && o[0] <= 239)
		return "a multicast address";
	if (o[0] == 0)
		return "the unspecified address";
	if (o[3] == 0)
		return "a network address";
	if (o[3] == 255)
		return "a broadcast address";
	return NULL;
}

bool xp_looks_ipv4(const char *a)
{
	return strchr(xp_unmapped(a), '.') && !strchr(xp_unmapped(a), ':');
}

/* "dgx-1.ai", "node1.cluster": a host name, not an interface name (those have no dot
 * followed by a letter; a VLAN is "eth0.100"). */
bool xp_looks_hostname(const char *n)
{
	for (const char *d = strchr(n, '.'); d; d = strchr(d + 1, '.'))
		if (isalpha((unsigned char)d[1]))
			return true;
	return false;
}

/* The first kept line of a kind (for proc, or any when proc < -1) whose text holds needle. */
const struct npf_xp_line *xp_line_of(const struct xp_evidence *e, enum npf_xp_kind k, int proc,
				     const char *needle)
{
	for (size_t i = 0; i < e->n_lines; i++) {
		const struct npf_xp_line *l = &e->lines[i];

		if (l->kind != k || (proc >= -1 && l->proc != proc))
			continue;
		if (needle && !strstr(l->text, needle))
			continue;
		return l;
	}
	return NULL;
}

const char *xp_env_of(const struct npf_xp_proc *pr, const char *name)
{
	for (size_t i = 0; i < pr->n_env; i++)
		if (strcmp(pr->env[i].name, name) == 0)
			return pr->env[i].value;
	return NULL;
}

/* Any process's value of an NCCL variable, and which process. */
const char *xp_env_any(const struct xp_evidence *e, const char *name, int *who)
{
	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const char *v = xp_env_of(&e->rep->procs[i], name);

		if (v) {
			if (who)
				*who = (int)i;
			return v;
		}
	}
	return NULL;
}

/* The bound (bootstrap, else OOB) interface of a process. */
void xp_bound(const struct npf_xp_proc *pr, const char **ifn, const char **addr,
	      enum npf_xp_kind *kind)
{
	if (pr->boot_if[0] && pr->boot_addr[0]) {
		*ifn = pr->boot_if;
		*addr = pr->boot_addr;
		*kind = NPF_XL_BOOTSTRAP;
	} else if (pr->oob_if[0]) {
		*ifn = pr->oob_if;
		*addr = pr->oob_addr;
		*kind = NPF_XL_NET_IB;
	} else {
		*ifn = *addr = NULL;
		*kind = NPF_XL_NONE;
	}
}

/* The first failing process's first failure (xp_story()), as evidence. */
const struct npf_xp_line *xp_first_failure_line(const struct xp_evidence *e)
{
	const struct npf_xp_report *r = e->rep;

	if (r->first_proc < 0 || !r->procs[r->first_proc].has_error)
		return NULL;
	return &r->procs[r->first_proc].first_error;
}

bool xp_any_bound(const struct xp_evidence *e)
{
	for (size_t i = 0; i < e->rep->n_procs; i++)
		if (e->rep->procs[i].boot_if[0] || e->rep->procs[i].oob_if[0])
			return true;
	return false;
}

/* The host whose bound address is addr (the connect target), "" none. */
const char *xp_host_of_addr(const struct xp_evidence *e, const char *addr)
{
	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const struct npf_xp_proc *pr = &e->rep->procs[i];

		if (addr[0] && pr->host[0] &&
		    (strcmp(pr->boot_addr, addr) == 0 || strcmp(pr->oob_addr, addr) == 0))
			return pr->host;
	}
	return "";
}

/* The address was bound by a bridge or by processes on two hosts. */
static bool bad_target(const struct xp_evidence *e, const char *addr)
{
	const char *host = NULL;

	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const struct npf_xp_proc *pr = &e->rep->procs[i];

		if (!addr[0] || strcmp(pr->boot_addr, addr) != 0)
			continue;
		if (npf_xp_bridge_name(pr->boot_if))
			return true;
		if (host && pr->host[0] && strcmp(host, pr->host) != 0)
			return true;
		if (pr->host[0])
			host = pr->host;
	}
	return false;
}

/* A peer a firewall can stand in front of: a unicast address of another host. A connect to
 * loopback, link-local, a bridge's default or an address bound on several hosts failed
 * because of what was bound there (the rules above); one to a netmask or a network address
 * because the address is wrong (bad-address). */
bool xp_plausible_peer(const struct xp_evidence *e, const char *a)
{
	return a[0] && !xp_is_loopback(xp_unmapped(a)) && !xp_is_link_local(a) &&
	       !xp_is_bridge_default(a) && !xp_is_docker_bridge_net(a) && !xp_impossible_addr(a) &&
	       strcmp(a, "localhost") != 0 && !bad_target(e, a);
}

/* A connect line that names no peer (NCCL 2.24-2.26 "connect returned ..."): its peer is one
 * of the addresses the processes bound, and every one of them must be plausible. */
bool xp_all_bound_plausible(const struct xp_evidence *e)
{
	size_t n = 0;

	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const char *ifn, *addr;
		enum npf_xp_kind k;

		xp_bound(&e->rep->procs[i], &ifn, &addr, &k);
		if (!addr || !addr[0])
			continue;
		if (!xp_plausible_peer(e, addr) || npf_xp_bridge_name(ifn))
			return false;
		n++;
	}
	return n >= 1;
}
