// SPDX-License-Identifier: MIT
/* `explain` rules about what the processes bound or were told to bind: loopback,
 * link-local, one address on several hosts, a container bridge, a prefix match, a missing or
 * differing interface name, NCCL_COMM_ID's subnet, Gloo's hostname, different environments.
 * Each is a pure test (lib/explain_diagnose.c has the table). */
#include <stdio.h>
#include <string.h>

#include "explain_internal.h"

bool xp_test_comm_id(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *l = xp_line_of(e, NPF_XL_NO_SUBNET, -2, NULL);
	int who = -1;
	const char *cid = xp_env_any(e, "NCCL_COMM_ID", &who);
	const struct npf_xp_report *r = e->rep;

	if (!l && cid) {
		/* 2.29.2-2.29.7 inverted matchSubnet() (NVIDIA/nccl PR #2047): with NCCL_COMM_ID
		 * the bootstrap binds a non-matching interface, typically lo. */
		for (size_t i = 0; i < r->n_procs && !l; i++)
			if (strncmp(r->procs[i].nccl_version, "2.29.", 5) == 0 &&
			    (strcmp(r->procs[i].boot_if, "lo") == 0 ||
			     xp_is_loopback(r->procs[i].boot_addr)))
				l = xp_line_of(e, NPF_XL_BOOTSTRAP, (int)i, NULL);
		if (l) {
			xp_cite(f, xp_line_of(e, NPF_XL_NCCL_VERSION, l->proc, NULL));
			snprintf(
			    f->summary, sizeof(f->summary),
			    "NCCL_COMM_ID=%s with NCCL %s: its inverted subnet match bound the "
			    "bootstrap to loopback",
			    cid, r->procs[l->proc].nccl_version);
		}
	} else if (l) {
		snprintf(f->summary, sizeof(f->summary),
			 "NCCL_COMM_ID%s%s: no local interface in its subnet on %s", cid ? "=" : "",
			 cid ? cid : "",
			 r->procs[l->proc < 0 ? 0 : l->proc].host[0] ? r->procs[l->proc].host
								     : "one node");
	}
	if (!l)
		return false;
	xp_cite(f, l);
	xp_cite(f, xp_line_of(e, NPF_XL_ENV, -2, "NCCL_COMM_ID"));
	xp_about(f, NULL, cid, xp_host_of(e, l->proc));
	return true;
}

bool xp_test_gloo_hostname(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *l = xp_line_of(e, NPF_XL_GLOO_LOOPBACK, -2, NULL);
	const struct npf_xp_line *g = NULL;

	for (size_t i = 0; i < e->n_lines && !g; i++)
		if (e->lines[i].kind == NPF_XL_GLOO_CONNECT &&
		    (strstr(e->lines[i].text, "[127.") || strstr(e->lines[i].text, " 127.")))
			g = &e->lines[i];
	if (!l && !g)
		return false;
	xp_cite(f, l);
	xp_cite(f, g);
	if (!g)
		xp_cite(f, xp_line_of(e, NPF_XL_GLOO_CONNECT, -2, NULL));
	{
		const struct npf_xp_line *w = l ? l : g;

		xp_about(f, NULL, g && strstr(g->text, "127.0.1.1") ? "127.0.1.1" : "127.0.0.1",
			 w ? xp_host_of(e, w->proc) : NULL);
	}
	snprintf(f->summary, sizeof(f->summary),
		 "Gloo bound loopback: the hostname resolves to %s (or not at all), so peers "
		 "connect to themselves",
		 f->addr);
	return true;
}

bool xp_test_names_differ(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	const struct npf_xp_line *l = xp_line_of(e, NPF_XL_NO_IFACE, -2, NULL);
	const char *var = "NCCL_SOCKET_IFNAME", *val;
	int who = -1;

	if (!l) {
		l = xp_line_of(e, NPF_XL_GLOO_NOADDR, -2, NULL);
		var = "GLOO_SOCKET_IFNAME";
	}
	if (!l) {
		l = xp_line_of(e, NPF_XL_OMPI_NOIF, -2, NULL);
		var = "OMPI_MCA_btl_tcp_if_include";
	}
	if (!l)
		return false;
	val = xp_env_any(e, "NCCL_SOCKET_IFNAME", &who);
	xp_cite(f, l);
	xp_cite(f, xp_line_of(e, NPF_XL_ENV, -2, "NCCL_SOCKET_IFNAME"));
	/* A rank that did find the name shows the names differ (not a typo everywhere). */
	for (size_t i = 0; i < r->n_procs; i++)
		if ((int)i != l->proc && r->procs[i].boot_if[0]) {
			xp_cite(f, xp_line_of(e, NPF_XL_BOOTSTRAP, (int)i, NULL));
			break;
		}
	xp_about(f, NULL, NULL, xp_host_of(e, l->proc));
	if (val && strcmp(var, "NCCL_SOCKET_IFNAME") == 0)
		snprintf(f->summary, sizeof(f->summary),
			 "NCCL_SOCKET_IFNAME=%s names no interface on %s: interface names differ "
			 "between nodes",
			 val, xp_or_else(f->host, "some node"));
	else
		snprintf(f->summary, sizeof(f->summary),
			 "the interface %s names does not exist on %s: interface names differ "
			 "between nodes",
			 var, xp_or_else(f->host, "some node"));
	return true;
}

bool xp_test_ifname_missing(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_line *l = xp_line_of(e, NPF_XL_NO_IFACE, -2, NULL);
	const char *val = xp_env_any(e, "NCCL_SOCKET_IFNAME", NULL);

	/* NCCL 2.27 with a name that matches nothing fails later, with an address it never
	 * filled in (NVIDIA/nccl#1837): that too, when the log shows the variable. */
	if (!l && val)
		l = xp_line_of(e, NPF_XL_NO_FAMILY, -2, NULL);
	if (!l) {
		l = xp_line_of(e, NPF_XL_GLOO_NOADDR, -2, NULL);
		if (l && xp_looks_hostname(l->addr))
			l = NULL;
	}
	/* A rank that did bind an interface: the names differ between nodes (next rule). */
	if (!l || xp_any_bound(e))
		return false;
	xp_cite(f, xp_line_of(e, NPF_XL_ENV, -2, "NCCL_SOCKET_IFNAME"));
	xp_cite(f, l);
	xp_about(f, l->kind == NPF_XL_GLOO_NOADDR ? l->addr : val, NULL, xp_host_of(e, l->proc));
	if (l->kind == NPF_XL_GLOO_NOADDR || val)
		snprintf(f->summary, sizeof(f->summary),
			 "%s%s names an interface that does not exist on %s (no rank found it)",
			 l->kind == NPF_XL_GLOO_NOADDR ? "GLOO_SOCKET_IFNAME="
						       : "NCCL_SOCKET_IFNAME=",
			 l->kind == NPF_XL_GLOO_NOADDR ? l->addr : val,
			 xp_or_else(f->host, "the nodes"));
	else
		snprintf(f->summary, sizeof(f->summary),
			 "NCCL found no usable interface on %s: the one NCCL_SOCKET_IFNAME names "
			 "does not exist there, or the node (a container without host networking) "
			 "has none",
			 xp_or_else(f->host, "a node"));
	return true;
}

bool xp_test_prefix(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;

	for (size_t i = 0; i < r->n_procs; i++) {
		const char *v = xp_env_of(&r->procs[i], "NCCL_SOCKET_IFNAME");
		char tok[96], *save = NULL, *t;

		if (!v || v[0] == '^' || v[0] == '=' || !r->procs[i].boot_if[0])
			continue;
		xp_cpy(tok, sizeof(tok), v);
		for (t = strtok_r(tok, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			char *colon = strchr(t, ':');
			size_t n;

			if (colon)
				*colon = '\0';
			n = strlen(t);
			/* matchIf(): without '=' a token matches every name it prefixes
			 * (src/misc/utils.cc); a bound name that is longer than the token was
			 * selected by prefix. */
			if (n && strncmp(r->procs[i].boot_if, t, n) == 0 &&
			    strlen(r->procs[i].boot_if) > n) {
				xp_cite(f, xp_line_of(e, NPF_XL_ENV, (int)i, "NCCL_SOCKET_IFNAME"));
				xp_cite(f, xp_line_of(e, NPF_XL_BOOTSTRAP, (int)i, NULL));
				xp_cite(f, xp_line_of(e, NPF_XL_NET_SOCKET, (int)i, NULL));
				xp_about(f, r->procs[i].boot_if, r->procs[i].boot_addr,
					 r->procs[i].host);
				snprintf(f->summary, sizeof(f->summary),
					 "NCCL_SOCKET_IFNAME=%s is a prefix: %s bound %s %s", v,
					 r->procs[i].host[0] ? r->procs[i].host : "a rank",
					 r->procs[i].boot_if, r->procs[i].boot_addr);
				snprintf(f->fix, sizeof(f->fix),
					 "write the exact name with '=': NCCL_SOCKET_IFNAME==%s",
					 t);
				return true;
			}
		}
	}
	return false;
}

/* A process bound an address pred accepts (or the interface ifname_eq): what it means. */
static bool bound_range(const struct xp_evidence *e, struct xp_finding *f,
			bool (*pred)(const char *), const char *ifname_eq, const char *what)
{
	const struct npf_xp_report *r = e->rep;

	for (size_t i = 0; i < r->n_procs; i++) {
		const char *ifn, *addr;
		enum npf_xp_kind k;

		xp_bound(&r->procs[i], &ifn, &addr, &k);
		if (!ifn || !((ifname_eq && strcmp(ifn, ifname_eq) == 0) || pred(addr)))
			continue;
		xp_cite(f, xp_line_of(e, k, (int)i, NULL));
		xp_cite(f, xp_line_of(e, NPF_XL_ENV, (int)i, "NCCL_SOCKET_IFNAME"));
		xp_cite(f, xp_first_failure_line(e));
		xp_about(f, ifn, addr, r->procs[i].host);
		snprintf(f->summary, sizeof(f->summary), "%s bound %s %s: %s",
			 r->procs[i].host[0] ? r->procs[i].host : "a rank", ifn, addr, what);
		return true;
	}
	return false;
}

bool xp_test_loopback(const struct xp_evidence *e, struct xp_finding *f)
{
	return bound_range(e, f, xp_is_loopback, "lo", "loopback reaches only the node itself");
}

/* True when the log shows an IPv4 address anywhere (bound, OOB or a peer). */
static bool log_has_ipv4(const struct xp_evidence *e)
{
	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const struct npf_xp_proc *pr = &e->rep->procs[i];

		if (xp_looks_ipv4(pr->boot_addr) || xp_looks_ipv4(pr->oob_addr) ||
		    xp_looks_ipv4(pr->peer_addr))
			return true;
	}
	return false;
}

/* True when some process bound a global IPv6 address: the cluster routes IPv6. */
static bool log_has_global_ipv6(const struct xp_evidence *e)
{
	for (size_t i = 0; i < e->rep->n_procs; i++) {
		const char *a[] = {e->rep->procs[i].boot_addr, e->rep->procs[i].oob_addr};

		for (size_t k = 0; k < 2; k++)
			if (strchr(a[k], ':') && !xp_looks_ipv4(a[k]) && !xp_is_link_local(a[k]) &&
			    strcmp(a[k], "::1") != 0)
				return true;
	}
	return false;
}

bool xp_test_link_local(const struct xp_evidence *e, struct xp_finding *f)
{
	/* NCCL_SOCKET_FAMILY=AF_INET is no fix on an IPv6-only cluster: global IPv6 bound
	 * somewhere and no IPv4 anywhere in the log. */
	if (!bound_range(e, f, xp_is_link_local, NULL,
			 "a link-local address is not routed between nodes"))
		return false;
	if (!log_has_ipv4(e) && log_has_global_ipv6(e))
		snprintf(f->fix, sizeof(f->fix),
			 "name the interface with the global IPv6 address on every node "
			 "(NCCL_SOCKET_IFNAME==<if>); the log shows no IPv4 to fall back to");
	return true;
}

bool xp_test_same_address(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	const struct npf_xp_line *l;

	for (size_t i = 0; i < r->n_procs; i++) {
		const char *ai, *ii;
		enum npf_xp_kind ki;

		xp_bound(&r->procs[i], &ii, &ai, &ki);
		if (!ai || !ai[0] || !r->procs[i].host[0])
			continue;
		for (size_t j = i + 1; j < r->n_procs; j++) {
			const char *aj, *ij;
			enum npf_xp_kind kj;

			xp_bound(&r->procs[j], &ij, &aj, &kj);
			if (!aj || strcmp(ai, aj) != 0 || !r->procs[j].host[0] ||
			    strcmp(r->procs[i].host, r->procs[j].host) == 0)
				continue;
			xp_cite(f, xp_line_of(e, ki, (int)i, NULL));
			xp_cite(f, xp_line_of(e, kj, (int)j, NULL));
			xp_cite(f, xp_first_failure_line(e));
			xp_about(f, ii, ai, NULL);
			snprintf(
			    f->summary, sizeof(f->summary),
			    "%s and %s both bound %s %s: the same address on several nodes, so a "
			    "connect to it reaches the connecting node itself",
			    r->procs[i].host, r->procs[j].host, ii, ai);
			snprintf(f->fix, sizeof(f->fix),
				 "exclude %s: name the fabric interface (NCCL_SOCKET_IFNAME==<if>; "
				 "Open MPI: the fabric CIDR in OMPI_MCA_btl_tcp_if_include)",
				 ii);
			return true;
		}
	}
	/* A connect to an address a bridge holds on every node (docker0's 172.17.0.1): it went
	 * to the connecting node's own bridge, where nothing of the job listens. */
	for (size_t i = 0; i < e->n_lines; i++) {
		const struct npf_xp_line *k = &e->lines[i];

		if (!xp_is_connect_kind(k->kind) || !xp_is_bridge_default(k->addr))
			continue;
		xp_cite(f, k);
		xp_about(f, NULL, xp_unmapped(k->addr), NULL);
		snprintf(f->summary, sizeof(f->summary),
			 "connects to %s failed: that is a bridge's default address (docker0, "
			 "virbr0), the same on every node, so the connect reached the connecting "
			 "node's own bridge",
			 xp_unmapped(k->addr));
		return true;
	}
	/* Open MPI: a process accepted a connection from "another Open MPI process" it does not
	 * know, or the process that answered a connect is not the one expected: a peer
	 * connected to an address that is local to the acceptor's node too (btl_tcp_proc.c
	 * mca_btl_tcp_proc_accept(), btl_tcp_endpoint.c recv_connect_ack(); the bridge
	 * addresses every node has). */
	l = xp_line_of(e, NPF_XL_OMPI_NOPROC, -2, NULL);
	if (!l)
		l = xp_line_of(e, NPF_XL_OMPI_WRONG_PEER, -2, NULL);
	if (!l)
		return false;
	xp_cite(f, l);
	xp_cite(f, xp_line_of(e, NPF_XL_OMPI_CONNECT, -2, NULL));
	xp_about(f, NULL, NULL, NULL);
	snprintf(f->summary, sizeof(f->summary),
		 "Open MPI processes connected to an address their own node also holds (a bridge "
		 "such as docker0 with the same address on every node): the connection reached the "
		 "wrong process");
	snprintf(f->fix, sizeof(f->fix),
		 "restrict the TCP BTL to the fabric: OMPI_MCA_btl_tcp_if_include=<fabric CIDR> "
		 "(a CIDR holds on every node whatever the interface is called)");
	return true;
}

bool xp_test_bridge(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;

	for (size_t i = 0; i < r->n_procs; i++) {
		const char *ifn, *addr;
		enum npf_xp_kind k;

		xp_bound(&r->procs[i], &ifn, &addr, &k);
		if (!ifn || !npf_xp_bridge_name(ifn))
			continue;
		xp_cite(f, xp_line_of(e, k, (int)i, NULL));
		xp_cite(f, xp_first_failure_line(e));
		xp_about(f, ifn, addr, r->procs[i].host);
		snprintf(f->summary, sizeof(f->summary),
			 "%s bound the container/virtual bridge %s %s, which other nodes cannot "
			 "reach",
			 r->procs[i].host[0] ? r->procs[i].host : "a rank", ifn, addr);
		return true;
	}
	/* Connects to an address of Docker's default bridge network: the ranks run in
	 * containers without host networking and advertise their container addresses. */
	for (size_t i = 0; i < e->n_lines; i++) {
		const struct npf_xp_line *l = &e->lines[i];

		if (!xp_is_connect_kind(l->kind) || !xp_is_docker_bridge_net(l->addr) ||
		    xp_is_bridge_default(l->addr))
			continue;
		xp_cite(f, l);
		xp_about(f, NULL, xp_unmapped(l->addr), NULL);
		snprintf(f->summary, sizeof(f->summary),
			 "connects to %s failed: an address of Docker's default bridge network, a "
			 "container's own address that other nodes cannot reach",
			 xp_unmapped(l->addr));
		snprintf(
		    f->fix, sizeof(f->fix),
		    "run the containers with host networking (docker --network host, "
		    "hostNetwork: true) and name the fabric interface (NCCL_SOCKET_IFNAME==<if>)");
		return true;
	}
	return false;
}

bool xp_test_env_differs(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	static const char *const vars[] = {"NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX",
					   "NCCL_SOCKET_FAMILY"};

	for (size_t v = 0; v < sizeof(vars) / sizeof(vars[0]); v++) {
		int first = -1;
		const char *val0 = NULL;

		for (size_t i = 0; i < r->n_procs; i++) {
			const char *val = xp_env_of(&r->procs[i], vars[v]);

			if (!val)
				continue;
			if (!val0) {
				val0 = val;
				first = (int)i;
			} else if (strcmp(val0, val) != 0) {
				xp_cite(f, xp_line_of(e, NPF_XL_ENV, first, vars[v]));
				xp_cite(f, xp_line_of(e, NPF_XL_ENV, (int)i, vars[v]));
				xp_about(f, NULL, NULL, r->procs[i].host);
				snprintf(
				    f->summary, sizeof(f->summary),
				    "ranks ran with different %s (%s vs %s): the job's environment "
				    "is not one published setting",
				    vars[v], val0, val);
				return true;
			}
		}
	}
	return false;
}
