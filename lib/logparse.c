// SPDX-License-Identifier: MIT
/* The line layer of `explain`: strip what launchers and loggers put in front of a line
 * (timestamps, torchrun's [rankN]:, srun -l's "N: ", mpirun's [job,N]<stderr>:, NCCL's
 * host:pid:tid [dev] ... NCCL INFO|WARN, glog's [E0501 09:14:03.1 tid file:line]), then
 * classify the message by one table row per line kind. Substrings, not whole formats: the same
 * fact is worded differently across NCCL 2.4-2.30 (nccl.md §2.4-2.6, §4.4), and a row that
 * names the stable part of the wording reads all of them. Pure: no I/O, no allocation. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

/* A bounded view of the message being classified. */
struct span {
	const char *p;
	size_t n;
};

static const char *span_find(struct span s, const char *needle)
{
	size_t k = strlen(needle);

	if (!k)
		return s.p;
	for (size_t i = 0; i + k <= s.n; i++)
		if (s.p[i] == needle[0] && memcmp(s.p + i, needle, k) == 0)
			return s.p + i;
	return NULL;
}

size_t npf_xp_clean_text(char *dst, size_t dstlen, const char *p, size_t n)
{
	size_t o = 0, i = 0;

	if (!dstlen)
		return 0;
	while (i < n && o + 1 < dstlen) {
		unsigned char c = (unsigned char)p[i];
		size_t k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
		uint32_t cp = k == 4 ? c & 0x07u : k == 3 ? c & 0x0fu : c & 0x1fu;
		bool ok = c >= 0xc2 && c <= 0xf4 && i + k <= n && o + k < dstlen;

		if (c < 0x80) {
			dst[o++] = (c < ' ' || c == 0x7f) ? '?' : (char)c;
			i++;
			continue;
		}
		for (size_t j = 1; ok && j < k; j++) {
			unsigned char cc = (unsigned char)p[i + j];

			ok = (cc & 0xc0) == 0x80;
			cp = (cp << 6) | (cc & 0x3fu);
		}
		/* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8. */
		ok = ok && !(k == 3 && cp < 0x800) && !(k == 4 && cp < 0x10000) &&
		     !(cp >= 0xd800 && cp <= 0xdfff) && cp <= 0x10ffff;
		if (!ok) {
			if (c >= 0xc2 && c <= 0xf4 && i + k <= n && o + k >= dstlen)
				break; /* a valid character that does not fit: cut before it */
			dst[o++] = '?';
			i++;
			continue;
		}
		memcpy(dst + o, p + i, k);
		o += k;
		i += k;
	}
	dst[o] = '\0';
	return o;
}

/* Copies [p, p+n) into dst as text (npf_xp_clean_text()). */
static void copy_clean(char *dst, size_t dstlen, const char *p, size_t n)
{
	npf_xp_clean_text(dst, dstlen, p, n);
}

/* The token starting at p (within end): up to a blank, or one of stop. */
static size_t token_len(const char *p, const char *end, const char *stop)
{
	size_t n = 0;

	while (p + n < end && !isspace((unsigned char)p[n]) && p[n] != '\0' && !strchr(stop, p[n]))
		n++;
	return n;
}

int npf_xp_split_ifaddr(const char *s, size_t len, char *ifname, size_t iflen, char *addr,
			size_t addrlen)
{
	/* ncclSocketToString(): "eth0:10.0.0.1<0>", "ib0:fe80::1%ib0<0>". The first ':' ends the
	 * name (interface names cannot hold one in these logs: alias labels are not listed). */
	const char *colon = memchr(s, ':', len), *lt;
	size_t alen;

	if (!colon || colon == s)
		return -EINVAL;
	copy_clean(ifname, iflen, s, (size_t)(colon - s));
	lt = memchr(colon + 1, '<', len - (size_t)(colon + 1 - s));
	alen = lt ? (size_t)(lt - colon - 1) : len - (size_t)(colon + 1 - s);
	copy_clean(addr, addrlen, colon + 1, alen);
	return 0;
}

bool npf_xp_bridge_name(const char *n)
{
	/* Names of bridges and container links a host carries besides its fabric: NCCL excludes
	 * docker* and virbr* only in auto mode (nccl.md §1.2), and nothing excludes the others. */
	static const char *const prefixes[] = {"docker", "virbr",   "veth", "cni",     "podman",
					       "lxcbr",	 "flannel", "cali", "cilium_", "vnet"};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(n, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	if (strncmp(n, "br-", 3) == 0 && strlen(n) == 15) {
		for (size_t i = 3; i < 15; i++)
			if (!isxdigit((unsigned char)n[i]))
				return false;
		return true;
	}
	return false;
}

static enum npf_xp_err err_of(struct span s)
{
	static const struct {
		const char *needle;
		enum npf_xp_err err;
	} map[] = {
	    {"Connection refused", NPF_XE_REFUSED},
	    {"errno: 111", NPF_XE_REFUSED},
	    {"(111)", NPF_XE_REFUSED},
	    {"Connection timed out", NPF_XE_TIMEOUT},
	    {"timed out", NPF_XE_TIMEOUT},
	    {"errno: 110", NPF_XE_TIMEOUT},
	    {"(110)", NPF_XE_TIMEOUT},
	    {"exceeded timeouts", NPF_XE_TIMEOUT},
	    {"No route to host", NPF_XE_NOROUTE},
	    {"Network is unreachable", NPF_XE_NOROUTE},
	    {"Host is unreachable", NPF_XE_NOROUTE},
	    {"(113)", NPF_XE_NOROUTE},
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (span_find(s, map[i].needle))
			return map[i].err;
	return NPF_XE_OTHER;
}

/* The address after the first of the markers ("Connect to 10.0.0.2<4352> failed"). */
static void peer_after(struct span s, const char *const *markers, char *out, size_t outlen)
{
	const char *end = s.p + s.n;

	out[0] = '\0';
	for (; *markers; markers++) {
		const char *m = span_find(s, *markers);
		size_t n;

		if (!m)
			continue;
		m += strlen(*markers);
		if (m < end && *m == '[') /* "[10.0.0.2]:29500", "[fe80::1%eth0]:1" */
			m++;
		n = token_len(m, end, "<]>,;()");
		if (n && n < 80) {
			/* "10.0.0.2:29500" (Gloo, TCPStore): drop the port unless it is IPv6. */
			const char *c = memchr(m, ':', n);

			if (c && !memchr(c + 1, ':', n - (size_t)(c + 1 - m)))
				n = (size_t)(c - m);
			copy_clean(out, outlen, m, n);
			return;
		}
	}
}

static const char *const connect_markers[] = {"Connect to ", "connect to ",	"connect() to ",
					      "connect [",   "PollConnect to ", "remote=[",
					      NULL};

/* ---- row parsers: fill p->a, p->b, p->num, p->err from the message ---- */

static void row_version(struct span s, struct npf_xp_parsed *p)
{
	const char *v = span_find(s, "NCCL version ");

	if (v) {
		v += strlen("NCCL version ");
		copy_clean(p->a, sizeof(p->a), v, token_len(v, s.p + s.n, "+"));
	}
}

static void row_env(struct span s, struct npf_xp_parsed *p)
{
	const char *m = span_find(s, " set by environment to ");
	const char *n = m;

	if (!m)
		return;
	while (n > s.p && !isspace((unsigned char)n[-1]))
		n--;
	copy_clean(p->a, sizeof(p->a), n, (size_t)(m - n));
	m += strlen(" set by environment to ");
	/* The value runs to the end of the line (trailing blanks and a '.' NCCL never adds). */
	{
		size_t k = (size_t)(s.p + s.n - m);

		while (k && isspace((unsigned char)m[k - 1]))
			k--;
		/* Numeric parameters are logged as "%ld." (ncclLoadParam): drop that period. */
		if (k > 1 && m[k - 1] == '.' && strspn(m, "-0123456789") == k - 1)
			k--;
		copy_clean(p->b, sizeof(p->b), m, k);
	}
}

/* "... Using [0]eth0:10.0.0.1<0> [1]..." or "... Using eth0:10.0.0.1<0>": the first one. */
static void row_ifaddr(struct span s, struct npf_xp_parsed *p)
{
	const char *u = span_find(s, "Using "), *end = s.p + s.n;
	size_t n;

	if (!u)
		return;
	u += strlen("Using ");
	if ((size_t)(end - u) > 10 && memcmp(u, "interface ", 10) == 0)
		u += 10; /* NCCL 2.2-2.3: "NET : Using interface eth0:10.0.0.1<0>" */
	if (u + 3 <= end && u[0] == '[') {
		const char *rb = memchr(u, ']', (size_t)(end - u));

		if (rb)
			u = rb + 1;
	}
	n = token_len(u, end, "");
	if (!memchr(u, '<', n)) {
		/* 2.24+ with NCCL_OOB_NET_ENABLE: "Bootstrap: Using mlx5_0:1" names a NET device.
		 */
		copy_clean(p->a, sizeof(p->a), u, n);
		return;
	}
	npf_xp_split_ifaddr(u, n, p->a, sizeof(p->a), p->b, sizeof(p->b));
}

static void row_net_ib(struct span s, struct npf_xp_parsed *p)
{
	const char *o = span_find(s, "OOB "), *end = s.p + s.n;

	if (o) {
		o += strlen("OOB ");
		npf_xp_split_ifaddr(o, token_len(o, end, ""), p->a, sizeof(p->a), p->b,
				    sizeof(p->b));
	}
}

static void row_using_net(struct span s, struct npf_xp_parsed *p)
{
	const char *u = span_find(s, "Using network ");

	if (u) {
		u += strlen("Using network ");
		copy_clean(p->a, sizeof(p->a), u, token_len(u, s.p + s.n, ""));
	}
}

/* "comm 0x55d0 rank 3 nranks 8 cudaDev 3 ..." */
static void row_rank(struct span s, struct npf_xp_parsed *p)
{
	const char *r = span_find(s, " rank "), *end = s.p + s.n;
	char *e;
	long v;
	char tmp[16];

	if (!r)
		return;
	r += strlen(" rank ");
	copy_clean(tmp, sizeof(tmp), r, token_len(r, end, ""));
	v = strtol(tmp, &e, 10);
	if (e != tmp && *e == '\0' && v >= 0 && v < 1000000 && span_find(s, " nranks "))
		p->rank = (int)v;
}

static void row_connect(struct span s, struct npf_xp_parsed *p)
{
	p->err = err_of(s);
	peer_after(s, connect_markers, p->a, sizeof(p->a));
}

static void row_closed(struct span s, struct npf_xp_parsed *p)
{
	static const char *const m[] = {"remote peer ", NULL};

	peer_after(s, m, p->a, sizeof(p->a));
}

static void row_ib_completion(struct span s, struct npf_xp_parsed *p)
{
	/* 2.29+: "status=IBV_WC_RETRY_EXC_ERR(12)"; 2.23-2.28: "status=12"; older:
	 * "with error 12, opcode". */
	static const char *const m[] = {"from peer ", NULL};
	const char *st = span_find(s, "status="), *end = s.p + s.n;
	char tmp[48];

	peer_after(s, m, p->a, sizeof(p->a));
	p->num = -1;
	if (st) {
		st += strlen("status=");
		copy_clean(tmp, sizeof(tmp), st, token_len(st, end, " ,"));
		if (strchr(tmp, '('))
			p->num = atoi(strchr(tmp, '(') + 1);
		else
			p->num = atoi(tmp);
	} else if ((st = span_find(s, "with error ")) != NULL) {
		st += strlen("with error ");
		copy_clean(tmp, sizeof(tmp), st, token_len(st, end, ","));
		p->num = atoi(tmp);
	}
	/* 2.29+ prints localGid/remoteGids: a fe80:: GID is link-local (not routable). */
	if (span_find(s, "fe80:"))
		snprintf(p->b, sizeof(p->b), "link-local");
}

static void row_gloo_noaddr(struct span s, struct npf_xp_parsed *p)
{
	const char *f = span_find(s, "address for: "), *end = s.p + s.n;

	if (f) {
		f += strlen("address for: ");
		copy_clean(p->a, sizeof(p->a), f, token_len(f, end, ""));
	}
}

static void row_ompi_host(struct span s, struct npf_xp_parsed *p)
{
	const char *h = span_find(s, "Local host:"), *end = s.p + s.n;

	if (!h)
		return;
	h += strlen("Local host:");
	while (h < end && isspace((unsigned char)*h))
		h++;
	copy_clean(p->host, sizeof(p->host), h, token_len(h, end, ""));
}

static void row_hostlist(struct span s, struct npf_xp_parsed *p)
{
	const char *e = span_find(s, "NODELIST="), *end = s.p + s.n;

	if (e) {
		e += strlen("NODELIST=");
		copy_clean(p->a, sizeof(p->a), e, token_len(e, end, "\"'"));
	}
}

static void row_ompi_noif(struct span s, struct npf_xp_parsed *p)
{
	static const char *const m[] = {"Unknown interface name: ", "Interface: ", NULL};

	peer_after(s, m, p->a, sizeof(p->a));
}

/* "rank=8" (Gloo's connect debug data), "rank      : 0" (torchelastic's failure summary),
 * "Rank 1 failed to pass monitoredBarrier": the rank the text itself names, when no prefix did. */
static void rank_in_text(struct span s, struct npf_xp_parsed *p, const char *key)
{
	const char *r = span_find(s, key), *end = s.p + s.n;

	if (!r || p->rank >= 0)
		return;
	r += strlen(key);
	while (r < end && (*r == ' ' || *r == ':'))
		r++;
	if (r < end && isdigit((unsigned char)*r)) {
		long v = 0;

		for (int i = 0; r < end && isdigit((unsigned char)*r) && i < 7; r++, i++)
			v = v * 10 + (*r - '0');
		p->rank = (int)v;
	}
}

static void row_gloo_connect(struct span s, struct npf_xp_parsed *p)
{
	row_connect(s, p);
	rank_in_text(s, p, "(rank=");
}

static void row_killed(struct span s, struct npf_xp_parsed *p)
{
	const char *h = span_find(s, "host      :"), *end = s.p + s.n;

	rank_in_text(s, p, "rank      :");
	if (h && !p->host[0]) {
		h += strlen("host      :");
		while (h < end && *h == ' ')
			h++;
		copy_clean(p->host, sizeof(p->host), h, token_len(h, end, ""));
	}
}

static void row_no_barrier(struct span s, struct npf_xp_parsed *p)
{
	rank_in_text(s, p, "Rank ");
}

/* The name that did not resolve: "(i-7840df31, 37340)", "connect to [name]:port", "for: x". */
static void row_unresolved(struct span s, struct npf_xp_parsed *p)
{
	static const char *const m[] = {"addresses of (", "connect to [", "address for: ", NULL};

	peer_after(s, m, p->a, sizeof(p->a));
	p->err = NPF_XE_OTHER;
}

/* One row per way a line kind is worded. Rows are tried in order; a line takes the first row
 * whose needles all occur in its message. Order matters where one wording contains another
 * (a PyTorch wrapper quoting an NCCL WARN must be read as the wrapper). */
static const struct npf_xp_row {
	enum npf_xp_kind kind;
	const char *needle, *needle2; /* needle2 NULL = one needle */
	void (*parse)(struct span s, struct npf_xp_parsed *p);
	const char *source; /* who prints it: the citation the comment rule asks for */
} rows[] = {
    {NPF_XL_IB_GID_HINT, "incorrect GID index is forced", NULL, NULL,
     "NCCL 2.30.7 src/misc/ibvwrap.cc printIbModifyQpHint()"},
    {NPF_XL_WATCHDOG, "Watchdog caught collective operation timeout", NULL, NULL,
     "PyTorch ProcessGroupNCCL::WorkNCCL::checkTimeout()"},
    {NPF_XL_NCCL_ERROR_IN, "NCCL error in:", NULL, NULL,
     "PyTorch C10D_NCCL_CHECK around ncclGetLastError()"},
    {NPF_XL_NCCL_ERROR_IN, "ncclRemoteError", NULL, NULL, "PyTorch DistBackendError text"},
    {NPF_XL_NCCL_ERROR_IN, "ncclSystemError", NULL, NULL, "PyTorch DistBackendError text"},
    {NPF_XL_NCCL_ERROR_IN, "unhandled cuda error", NULL, NULL, "NCCL ncclUnhandledCudaError text"},
    {NPF_XL_NCCL_ERROR_IN, "NCCL Error ", NULL, NULL, "PyTorch/vLLM pynccl wrapper"},
    {NPF_XL_GLOO_LOOPBACK, "Using the loopback address as fallback", NULL, NULL,
     "PyTorch ProcessGroupGloo::createDefaultDevice()"},
    {NPF_XL_GLOO_NOADDR, "Unable to find address for", NULL, row_gloo_noaddr,
     "gloo/transport/tcp/device.cc lookupAddrForIface() / lookupAddrForHostname()"},
    {NPF_XL_GLOO_CONNECT, "connectFullMesh failed", NULL, row_gloo_connect,
     "PyTorch ProcessGroupGloo (gloo::rendezvous::Context::connectFullMesh)"},
    {NPF_XL_GLOO_CONNECT, "transport/tcp/pair.cc", "connect", row_gloo_connect,
     "gloo/transport/tcp/pair.cc Pair::connect()"},
    /* Names that do not resolve (before the connect rows: c10d logs errno 22 for them). */
    {NPF_XL_UNRESOLVED, "cannot be retrieved (gai error", NULL, row_unresolved,
     "PyTorch c10d socket.cpp (getaddrinfo)"},
    {NPF_XL_UNRESOLVED, "host not found", NULL, row_unresolved,
     "PyTorch <= 1.8 TCPStore ValueError"},
    {NPF_XL_UNRESOLVED, "Name or service not known", NULL, row_unresolved, "getaddrinfo()"},
    {NPF_XL_STORE_LISTEN, "server socket has started to listen on", NULL, NULL,
     "PyTorch torch/csrc/distributed/c10d/socket.cpp"},
    {NPF_XL_STORE_FAIL, "client socket has failed to connect", NULL, row_connect,
     "PyTorch c10d socket.cpp SocketConnectOp"},
    {NPF_XL_STORE_FAIL, "client socket has timed out after", NULL, row_connect,
     "PyTorch c10d socket.cpp SocketConnectOp"},
    {NPF_XL_OMPI_NOPROC, "cannot find a corresponding process", NULL, NULL,
     "Open MPI help-mpi-btl-tcp.txt server-accept-cannot-find-guid "
     "(btl_tcp_proc.c mca_btl_tcp_proc_accept)"},
    {NPF_XL_OMPI_NOPROC, "server accept cannot find guid", NULL, NULL,
     "Open MPI help aggregation line"},
    {NPF_XL_OMPI_WRONG_PEER, "received unexpected process identifier", NULL, NULL,
     "Open MPI btl_tcp_endpoint.c mca_btl_tcp_endpoint_recv_connect_ack()"},
    {NPF_XL_OMPI_UNREACH, "unable to reach each other for", NULL, NULL,
     "Open MPI help-mca-bml-r2.txt unreachable proc"},
    {NPF_XL_OMPI_CONNECT, "failed to TCP connect to a peer", NULL, NULL,
     "Open MPI help-mpi-btl-tcp.txt client-connect-fail (btl_tcp_endpoint.c)"},
    {NPF_XL_OMPI_CONNECT, "connect() to ", " failed", row_connect,
     "Open MPI btl_tcp_endpoint.c mca_btl_tcp_endpoint_complete_connect()"},
    {NPF_XL_OMPI_NOIF, "Unknown interface name", NULL, row_ompi_noif,
     "Open MPI btl_tcp_component.c split_and_resolve()"},
    {NPF_XL_OMPI_HOST, "Local host:", NULL, row_ompi_host, "Open MPI help box"},
    {NPF_XL_HOSTLIST, "SLURM_JOB_NODELIST=", NULL, row_hostlist, "Slurm job environment"},
    {NPF_XL_HOSTLIST, "SLURM_NODELIST=", NULL, row_hostlist, "Slurm job environment"},
    {NPF_XL_IB_COMPLETION, "Got completion from peer", NULL, row_ib_completion,
     "NCCL net_ib ncclIbTest(): completion error"},
    {NPF_XL_IB_COMPLETION, "Got completion with error", NULL, row_ib_completion,
     "NCCL <= 2.11 net_ib ncclIbTest(): completion error, no peer"},
    {NPF_XL_IB_ASYNC, "Got async event", NULL, NULL, "NCCL net_ib ncclIbAsyncThreadMain()"},
    {NPF_XL_IB_ASYNC, "async fatal event on QP", NULL, NULL, "NCCL 2.21+ net_ib async thread"},
    {NPF_XL_NO_FAMILY, "is neither AF_INET(2) nor AF_INET6(10)", NULL, NULL,
     "NCCL misc/socket.cc ncclSocketInit(): an address never filled in"},
    {NPF_XL_IB_MODIFY_QP, "Call to ibv_modify_qp failed", NULL, NULL,
     "NCCL src/misc/ibvwrap.cc wrap_ibv_modify_qp()"},
    {NPF_XL_IB_NONE, "NET/IB : No device found", NULL, NULL, "NCCL ncclIbInitDevices()"},
    {NPF_XL_NET_IB, "NET/IB : Using", NULL, row_net_ib, "NCCL ncclIbInitDevices()"},
    {NPF_XL_NET_IB, "NET/IB: Using", NULL, row_net_ib, "NCCL ncclIbInitDevices()"},
    {NPF_XL_NET_SOCKET, "NET/Socket : Using", NULL, row_ifaddr, "NCCL ncclNetSocketInit()"},
    {NPF_XL_BOOTSTRAP, "Bootstrap : Using", NULL, row_ifaddr, "NCCL bootstrapNetInit() (2.4-2.23)"},
    {NPF_XL_BOOTSTRAP, "Bootstrap: Using", NULL, row_ifaddr, "NCCL bootstrapNetInit() (2.24+)"},
    {NPF_XL_BOOTSTRAP, "NET : Using interface ", NULL, row_ifaddr,
     "NCCL 2.2-2.3 (the first interface listed is the bootstrap's)"},
    {NPF_XL_NO_SUBNET, "No interface found in the same subnet", NULL, NULL,
     "NCCL ncclFindInterfaceMatchSubnet() (<= 2.26)"},
    {NPF_XL_NO_SUBNET, "No usable listening interface found", NULL, NULL,
     "NCCL ncclFindInterfaces() with NCCL_COMM_ID"},
    {NPF_XL_NO_IFACE, "no socket interface found", NULL, NULL, "NCCL bootstrapNetInit()"},
    {NPF_XL_NO_IFACE, "NET/Socket : no interface found", NULL, NULL, "NCCL ncclNetSocketInit()"},
    {NPF_XL_NO_IFACE, "No IP interface found", NULL, NULL, "NCCL ncclIbInitDevices()"},
    {NPF_XL_NO_IFACE, "Socket creation failed", "Address family not supported", NULL,
     "NCCL <= 2.3 include/socket.h: no usable IP interface, so socket(AF_UNSPEC)"},
    {NPF_XL_USING_NET, "Using network ", NULL, row_using_net, "NCCL src/plugin/net.cc"},
    {NPF_XL_ENV, " set by environment to ", NULL, row_env, "NCCL ncclGetEnv/INFO(NCCL_ENV)"},
    {NPF_XL_NCCL_VERSION, "NCCL version ", NULL, row_version, "NCCL init.cc showVersion()"},
    {NPF_XL_INIT_DONE, "Init COMPLETE", NULL, row_rank, "NCCL init.cc ncclCommInitRankFunc()"},
    {NPF_XL_INIT_RANK, " nranks ", " rank ", row_rank, "NCCL init.cc"},
    {NPF_XL_CHANNEL, "Channel ", " via NET/", NULL, "NCCL src/transport/net.cc"},
    {NPF_XL_REMOTE_CLOSED, "Connection closed by remote peer", NULL, row_closed,
     "NCCL socketProgress() (2.16+), Net : ... (<= 2.15)"},
    {NPF_XL_CONNECT_RETRY, "retrying", "onnect", row_connect,
     "NCCL socketConnectCheck / ncclOsSocketStartConnect (all versions)"},
    {NPF_XL_CONNECT_FAIL, "exceeded error retry count", NULL, row_connect,
     "NCCL 2.24+ socket retry budget"},
    {NPF_XL_CONNECT_FAIL, "exceeded retries", NULL, row_connect, "NCCL 2.16-2.23"},
    {NPF_XL_CONNECT_FAIL, "exceeded timeouts", NULL, row_connect, "NCCL 2.16-2.23"},
    {NPF_XL_CONNECT_FAIL, "onnect to ", "failed", row_connect,
     "NCCL socketStartConnect/ncclOsSocketPollConnect, Net : Connect to (<= 2.15)"},
    {NPF_XL_CONNECT_FAIL, "onnect to ", " returned ", row_connect,
     "NCCL 2.19-2.23 socketPollConnect"},
    {NPF_XL_CONNECT_FAIL, "Call to connect failed", NULL, row_connect,
     "NCCL <= 2.3 include/socket.h connectAddress()"},
    /* Failures that are not the network's. */
    {NPF_XL_DUP_GPU, "Duplicate GPU detected", NULL, NULL, "NCCL init.cc checkForDuplicateGpus"},
    {NPF_XL_COLL_MISMATCH, "Detected mismatch between collectives", NULL, NULL,
     "PyTorch ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL)"},
    {NPF_XL_NO_BARRIER, "failed to pass monitoredBarrier", NULL, row_no_barrier,
     "PyTorch ProcessGroupGloo::monitoredBarrier()"},
    {NPF_XL_CUDA_OOM, "CUDA out of memory", NULL, NULL, "PyTorch CUDACachingAllocator"},
    {NPF_XL_CUDA_OOM, "OutOfMemoryError", NULL, NULL, "PyTorch torch.OutOfMemoryError"},
    {NPF_XL_CUDA_OOM, "Cuda failure 'out of memory'", NULL, NULL, "NCCL CUDACHECK"},
    {NPF_XL_CUDA_OOM, "Failed to CUDA calloc", NULL, NULL, "NCCL include/alloc.h"},
    {NPF_XL_CUDA_OOM, "CUDA error: out of memory", NULL, NULL, "PyTorch C10_CUDA_CHECK"},
    {NPF_XL_SHM, "Error while creating shared memory segment", NULL, NULL,
     "NCCL shmutils.cc (/dev/shm too small)"},
    {NPF_XL_SHM, "posix_fallocate failed", NULL, NULL, "NCCL <= 2.7 include/shm.h"},
    {NPF_XL_VERSION, "driver version is insufficient", NULL, NULL, "CUDA runtime"},
    {NPF_XL_VERSION, "socketFinalizeAccept: wrong type", NULL, NULL,
     "NCCL misc/socket.cc: peers of different NCCL versions"},
    {NPF_XL_VERSION, "mismatch in rank count", NULL, NULL, "NCCL bootstrap.cc root"},
    {NPF_XL_KILLED, "SIGKILL", "exitcode", row_killed,
     "torchelastic ChildFailedError summary (exitcode -9)"},
    {NPF_XL_KILLED, "Signal 9 (SIGKILL)", NULL, row_killed, "torchelastic"},
    {NPF_XL_KILLED, "failed (exitcode: -9)", NULL, NULL,
     "torchelastic multiprocessing/api.py (a local rank killed)"},
    {NPF_XL_KILLED, "terminated with signal SIGKILL", NULL, NULL,
     "torch.multiprocessing.spawn ProcessExitedException"},
    {NPF_XL_CUDA_ERROR, "illegal memory access", NULL, NULL, "CUDA error"},
    {NPF_XL_CUDA_ERROR, "unspecified launch failure", NULL, NULL, "CUDA error"},
    {NPF_XL_CUDA_ERROR, "CUDA error: ", NULL, NULL, "PyTorch C10_CUDA_CHECK"},
    /* Echoes of a failure elsewhere (consequences), so a failed job is never "none". */
    {NPF_XL_ABORTED, "Some NCCL operations have failed or timed out", NULL, NULL,
     "PyTorch ProcessGroupNCCL (watchdog)"},
    {NPF_XL_ABORTED, "taking the entire process down", NULL, NULL,
     "PyTorch ProcessGroupNCCL (watchdog)"},
    {NPF_XL_ABORTED, "watchdog thread terminated with exception", NULL, NULL,
     "PyTorch ProcessGroupNCCL"},
    {NPF_XL_ABORTED, "detected by watchdog", NULL, NULL, "PyTorch ProcessGroupNCCL"},
    {NPF_XL_ABORTED, "communicator was aborted", NULL, NULL, "PyTorch ProcessGroupNCCL"},
    {NPF_XL_ABORTED, "ncclCommInitRank failed", NULL, NULL, "Horovod / TensorFlow"},
    {NPF_XL_ABORTED, "unhandled system error", NULL, NULL, "NCCL ncclSystemError text"},
    {NPF_XL_ABORTED, "Socket Timeout", NULL, NULL, "c10d store"},
    {NPF_XL_ABORTED, "Connection reset by peer", NULL, NULL, "socket recv"},
    {NPF_XL_ABORTED, "Connection closed by localRank", NULL, NULL, "NCCL proxy service"},
    {NPF_XL_ABORTED, "ChildFailedError", NULL, NULL, "torchelastic"},
    {NPF_XL_ABORTED, "closing signal SIGTERM", NULL, NULL, "torchelastic"},
    {NPF_XL_ABORTED, "failed (exitcode:", NULL, NULL, "torchelastic"},
    /* A crash that names no cause: the job failed, so it is "unknown", never "none". */
    {NPF_XL_ABORTED, "Traceback (most recent call last)", NULL, NULL, "Python"},
    {NPF_XL_ABORTED, "terminate called after throwing", NULL, NULL, "C++ runtime"},
    {NPF_XL_ABORTED, "Segmentation fault", NULL, NULL, "the kernel (SIGSEGV)"},
};

static const char *const kind_names[NPF_XL__COUNT] = {
    [NPF_XL_NONE] = "none",
    [NPF_XL_NCCL_VERSION] = "nccl-version",
    [NPF_XL_ENV] = "env",
    [NPF_XL_BOOTSTRAP] = "bootstrap",
    [NPF_XL_NET_SOCKET] = "net-socket",
    [NPF_XL_NET_IB] = "net-ib",
    [NPF_XL_IB_NONE] = "ib-no-device",
    [NPF_XL_USING_NET] = "using-network",
    [NPF_XL_INIT_RANK] = "init",
    [NPF_XL_INIT_DONE] = "init-complete",
    [NPF_XL_CHANNEL] = "channel",
    [NPF_XL_NO_IFACE] = "no-interface",
    [NPF_XL_NO_SUBNET] = "no-subnet-interface",
    [NPF_XL_CONNECT_RETRY] = "connect-retry",
    [NPF_XL_CONNECT_FAIL] = "connect-failed",
    [NPF_XL_REMOTE_CLOSED] = "remote-closed",
    [NPF_XL_IB_COMPLETION] = "ib-completion-error",
    [NPF_XL_IB_MODIFY_QP] = "ib-modify-qp",
    [NPF_XL_IB_GID_HINT] = "ib-gid-hint",
    [NPF_XL_WATCHDOG] = "watchdog-timeout",
    [NPF_XL_NCCL_ERROR_IN] = "nccl-error",
    [NPF_XL_LAST_ERROR] = "last-error",
    [NPF_XL_GLOO_LOOPBACK] = "gloo-loopback",
    [NPF_XL_GLOO_CONNECT] = "gloo-connect",
    [NPF_XL_GLOO_NOADDR] = "gloo-no-address",
    [NPF_XL_STORE_FAIL] = "tcpstore-connect",
    [NPF_XL_STORE_LISTEN] = "tcpstore-listen",
    [NPF_XL_OMPI_NOPROC] = "ompi-no-process-entry",
    [NPF_XL_OMPI_UNREACH] = "ompi-unreachable",
    [NPF_XL_OMPI_CONNECT] = "ompi-connect",
    [NPF_XL_OMPI_NOIF] = "ompi-unknown-interface",
    [NPF_XL_OMPI_HOST] = "ompi-host",
    [NPF_XL_HOSTLIST] = "hostlist",
    [NPF_XL_OMPI_WRONG_PEER] = "ompi-wrong-peer",
    [NPF_XL_IB_ASYNC] = "ib-async-event",
    [NPF_XL_NO_FAMILY] = "no-address-family",
    [NPF_XL_UNRESOLVED] = "unresolved-name",
    [NPF_XL_ABORTED] = "aborted",
    [NPF_XL_CUDA_OOM] = "cuda-oom",
    [NPF_XL_KILLED] = "killed",
    [NPF_XL_DUP_GPU] = "duplicate-gpu",
    [NPF_XL_COLL_MISMATCH] = "collective-mismatch",
    [NPF_XL_CUDA_ERROR] = "cuda-error",
    [NPF_XL_SHM] = "shm",
    [NPF_XL_VERSION] = "version-mismatch",
    [NPF_XL_NO_BARRIER] = "missed-barrier",
    [NPF_XL_PY_EXCEPTION] = "exception",
};

const char *npf_xp_kind_name(enum npf_xp_kind k)
{
	return (unsigned)k < NPF_XL__COUNT && kind_names[k] ? kind_names[k] : "none";
}

/* ---- prefixes ---- */

static bool digits(const char *p, const char *end, size_t n)
{
	if ((size_t)(end - p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)p[i]))
			return false;
	return true;
}

static long num(const char *p, size_t n)
{
	long v = 0;

	for (size_t i = 0; i < n; i++)
		v = v * 10 + (p[i] - '0');
	return v;
}

/* Days from 1970-01-01 of a civil date (H. Hinnant's algorithm). */
static long days_from_civil(long y, long m, long d)
{
	long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* "HH:MM:SS[.frac]" at p: seconds of the day, advances *pp. Returns < 0 when not a time. */
static double clock_at(const char **pp, const char *end)
{
	const char *p = *pp;
	double t, f = 0, scale = 0.1;

	if (!digits(p, end, 2) || end - p < 8 || p[2] != ':' || !digits(p + 3, end, 2) ||
	    p[5] != ':' || !digits(p + 6, end, 2))
		return -1;
	t = (double)(num(p, 2) * 3600 + num(p + 3, 2) * 60 + num(p + 6, 2));
	p += 8;
	if (p < end && (*p == '.' || *p == ',')) {
		p++;
		while (p < end && isdigit((unsigned char)*p)) {
			f += (*p - '0') * scale;
			scale /= 10;
			p++;
		}
	}
	*pp = p;
	return t + f;
}

/* ISO 8601 / Python logging / syslog-ish stamps at the start: "2026-05-01T09:14:03.123Z",
 * "2026-05-01 09:14:03,123", "[2026-05-01 09:14:03]". Returns the length eaten, 0 if none. */
static size_t strip_iso_time(const char *p, const char *end, double *t)
{
	const char *s = p;
	bool br = false;
	double c;

	if (p < end && *p == '[') {
		br = true;
		p++;
	}
	if (!digits(p, end, 4) || end - p < 19 || p[4] != '-' || !digits(p + 5, end, 2) ||
	    p[7] != '-' || !digits(p + 8, end, 2) || (p[10] != 'T' && p[10] != ' '))
		return 0;
	{
		long y = num(p, 4), mo = num(p + 5, 2), d = num(p + 8, 2);
		const char *q = p + 11;

		c = clock_at(&q, end);
		if (c < 0 || mo < 1 || mo > 12 || d < 1 || d > 31)
			return 0;
		/* Zone: Z or +hh:mm / +hhmm; kept as written (one job, one zone in practice). */
		if (q < end && *q == 'Z')
			q++;
		else if (q < end && (*q == '+' || *q == '-') && digits(q + 1, end, 2)) {
			q += 3;
			if (q < end && *q == ':')
				q++;
			if (digits(q, end, 2))
				q += 2;
		}
		if (br) {
			if (q >= end || *q != ']')
				return 0;
			q++;
		}
		*t = (double)days_from_civil(y, mo, d) * 86400.0 + c;
		return (size_t)(q - s);
	}
}

/* glog: "[E0501 09:14:03.123456 4711 ProcessGroupNCCL.cpp:1234] " or "[E ProcessGroup...] ".
 * Year-less: the time is placed in 1970 (comparable within one log). */
static size_t strip_glog(const char *p, const char *end, double *t, bool *warn)
{
	/* "[E0501 09:14:03.1 tid file:line] " (PyTorch's c10 logging), "W20261201 09:14:03.1 tid
	 * file:line] " (glog itself, e.g. Debian's libtorch before InitGoogleLogging()). */
	bool br = p < end && *p == '[';
	const char *l = br ? p + 1 : p, *q = l + 1, *rb;
	size_t nd = 0;

	if (end - l < 3 || !strchr("IWEF", *l) || *l == '\0')
		return 0;
	if (digits(q, end, 8) && q + 9 < end && q[8] == ' ')
		nd = 8; /* YYYYMMDD */
	else if (digits(q, end, 4) && q + 5 < end && q[4] == ' ')
		nd = 4; /* MMDD */
	else if (digits(q, end, 3) && q + 4 < end && q[3] == ' ')
		nd = 3; /* MDD, as some collectors trim it */
	if (nd) {
		const char *c = q + nd + 1;
		double s = clock_at(&c, end);
		long y = nd == 8 ? num(q, 4) : 1970;
		const char *md = nd == 8 ? q + 4 : q;
		size_t mlen = nd == 8 ? 2 : nd - 2;

		if (s < 0)
			return 0;
		*t = (double)days_from_civil(y, num(md, mlen), num(md + mlen, 2)) * 86400.0 + s;
	} else if (!br || *q != ' ') {
		return 0;
	}
	rb = memchr(l, ']', (size_t)(end - l));
	if (!rb || !memchr(l, '.', (size_t)(rb - l)) || memchr(l, ' ', (size_t)(rb - l)) == NULL)
		return 0;
	*warn = *l != 'I';
	rb++;
	while (rb < end && *rb == ' ')
		rb++;
	return (size_t)(rb - p);
}

/* Launcher tags: "[rank3]:", "[default0]:", "[1,3]<stderr>:", "3: ". */
static size_t strip_launcher(const char *p, const char *end, int *rank)
{
	const char *q;

	if (end - p > 6 && memcmp(p, "[rank", 5) == 0 && isdigit((unsigned char)p[5])) {
		q = p + 5;
		while (q < end && isdigit((unsigned char)*q))
			q++;
		if (end - q >= 2 && q[0] == ']' && q[1] == ':') {
			*rank = (int)num(p + 5, (size_t)(q - p - 5) > 6 ? 6 : (size_t)(q - p - 5));
			return (size_t)(q + 2 - p);
		}
	}
	if (end - p > 9 && memcmp(p, "[default", 8) == 0) {
		/* torchrun --tee: the local rank, not the global one: dropped. */
		q = memchr(p, ']', (size_t)(end - p));
		if (q && q + 1 < end && q[1] == ':')
			return (size_t)(q + 2 - p);
	}
	if (end - p > 4 && p[0] == '[' && isdigit((unsigned char)p[1])) {
		/* mpirun --tag-output: "[jobid,rank]<stdout>:" */
		const char *comma = memchr(p, ',', (size_t)(end - p) < 16 ? (size_t)(end - p) : 16);

		q = comma ? memchr(comma, ']', (size_t)(end - comma)) : NULL;
		if (q && digits(comma + 1, q, (size_t)(q - comma - 1)) && q - comma - 1 <= 6 &&
		    q - comma > 1 && end - q > 9 && q[1] == '<') {
			const char *gt = memchr(q, '>', (size_t)(end - q));

			if (gt && gt + 1 < end && gt[1] == ':') {
				*rank = (int)num(comma + 1, (size_t)(q - comma - 1));
				return (size_t)(gt + 2 - p);
			}
		}
	}
	q = p;
	while (q < end && *q == ' ')
		q++;
	if (q < end && isdigit((unsigned char)*q)) {
		const char *d = q;

		while (q < end && isdigit((unsigned char)*q))
			q++;
		/* srun --label: "12: msg". Not "12:34:56" (a clock). */
		if (q - d <= 6 && end - q >= 2 && q[0] == ':' && q[1] == ' ') {
			*rank = (int)num(d, (size_t)(q - d));
			return (size_t)(q + 2 - p);
		}
	}
	return 0;
}

/* Ray's worker prefix: "(pid=123, ip=10.0.0.1) ", "(WorkerDict pid=63294) ",
 * "(VllmWorker rank=3 pid=4665) ": pid, the node's address as its host, vLLM's rank. */
static size_t strip_ray(const char *p, const char *end, struct npf_xp_parsed *o)
{
	const char *rp, *k;
	struct span s;

	if (p >= end || *p != '(')
		return 0;
	rp = memchr(p, ')', (size_t)(end - p) < 120 ? (size_t)(end - p) : 120);
	if (!rp || rp + 1 >= end || rp[1] != ' ')
		return 0;
	s.p = p;
	s.n = (size_t)(rp - p);
	k = span_find(s, "pid=");
	if (!k || (k != p + 1 && k[-1] != ' ') || !isdigit((unsigned char)k[4]))
		return 0;
	o->pid = strtol(k + 4, NULL, 10);
	if ((k = span_find(s, "ip=")) != NULL) {
		k += 3;
		copy_clean(o->host, sizeof(o->host), k, token_len(k, rp, ",)"));
	}
	if ((k = span_find(s, "rank=")) != NULL && isdigit((unsigned char)k[5]))
		o->rank = (int)strtol(k + 5, NULL, 10);
	return (size_t)(rp + 2 - p);
}

/* pdsh (DeepSpeed's multi-node launcher) and clush: "worker-1: msg", "10.0.0.3: msg". A host
 * name, not a word: lowercase, with a digit (or "localhost"), then ": ". */
static size_t strip_pdsh(const char *p, const char *end, struct npf_xp_parsed *o)
{
	size_t n = 0;
	bool digit = false, alpha = false;

	while (p + n < end && n < 64 &&
	       (islower((unsigned char)p[n]) || isdigit((unsigned char)p[n]) || p[n] == '-' ||
		p[n] == '.' || p[n] == '_')) {
		digit |= isdigit((unsigned char)p[n]) != 0;
		alpha |= isdigit((unsigned char)p[n]) == 0;
		n++;
	}
	if (!n || p + n + 1 >= end || p[n] != ':' || p[n + 1] != ' ' || !alpha ||
	    (!digit && !(n == 9 && memcmp(p, "localhost", 9) == 0)))
		return 0;
	copy_clean(o->host, sizeof(o->host), p, n);
	return n + 2;
}

/* mpiexec.hydra -prepend-rank (MPICH, Intel MPI): "[3] msg". */
static size_t strip_hydra(const char *p, const char *end, int *rank)
{
	size_t n = 1;

	if (p >= end || *p != '[')
		return 0;
	while (p + n < end && isdigit((unsigned char)p[n]) && n < 8)
		n++;
	if (n == 1 || p + n + 1 >= end || p[n] != ']' || p[n + 1] != ' ')
		return 0;
	*rank = (int)num(p + 1, n - 1);
	return n + 2;
}

/* A role tag whose number is no global rank: torchx "[trainer3]:", "[trainer0|0]:". */
static size_t strip_role(const char *p, const char *end)
{
	size_t n = 1;

	if (p >= end || *p != '[' || p + 1 >= end || !isalpha((unsigned char)p[1]))
		return 0;
	while (p + n < end && n < 40 &&
	       (isalnum((unsigned char)p[n]) || p[n] == '|' || p[n] == '_' || p[n] == '-' ||
		p[n] == '/'))
		n++;
	if (p + n + 1 >= end || p[n] != ']' || p[n + 1] != ':')
		return 0;
	return n + 2;
}

/* The CRI log format after its timestamp (kubelet's files): "stdout F ", "stderr P ". */
static size_t strip_cri(const char *p, const char *end)
{
	if (end - p > 9 && (memcmp(p, "stdout ", 7) == 0 || memcmp(p, "stderr ", 7) == 0) &&
	    (p[7] == 'F' || p[7] == 'P') && p[8] == ' ')
		return 9;
	return 0;
}

/* Open MPI: "[host:pid] msg" and "[host][[job,1],rank][file.c:line:func] msg". */
static size_t strip_ompi(const char *p, const char *end, struct npf_xp_parsed *o)
{
	const char *rb, *c;

	if (p >= end || *p != '[' || end - p < 4 || p[1] == '[')
		return 0;
	rb = memchr(p, ']', (size_t)(end - p) < 80 ? (size_t)(end - p) : 80);
	if (!rb)
		return 0;
	c = memchr(p, ':', (size_t)(rb - p));
	if (c && digits(c + 1, rb, (size_t)(rb - c - 1)) && rb - c > 1) {
		copy_clean(o->host, sizeof(o->host), p + 1, (size_t)(c - p - 1));
		o->pid = num(c + 1, (size_t)(rb - c - 1) > 9 ? 9 : (size_t)(rb - c - 1));
		rb++;
		while (rb < end && *rb == ' ')
			rb++;
		return (size_t)(rb - p);
	}
	if (!c && end - rb > 3 && rb[1] == '[' && rb[2] == '[') {
		/* [host][[jobfam,jobid],vpid][file:line:func] */
		const char *r2 = memchr(rb + 3, ']', (size_t)(end - rb - 3)), *r3;

		if (!r2 || r2 + 2 >= end || r2[1] != ',')
			return 0;
		r3 = memchr(r2 + 2, ']', (size_t)(end - r2 - 2));
		if (!r3 || !digits(r2 + 2, r3, (size_t)(r3 - r2 - 2)) || r3 - r2 - 2 > 6 ||
		    r3 - r2 < 3)
			return 0;
		copy_clean(o->host, sizeof(o->host), p + 1, (size_t)(rb - p - 1));
		o->rank = (int)num(r2 + 2, (size_t)(r3 - r2 - 2));
		r3++;
		if (r3 < end && *r3 == '[') {
			const char *r4 = memchr(r3, ']', (size_t)(end - r3));

			if (r4)
				r3 = r4 + 1;
		}
		while (r3 < end && *r3 == ' ')
			r3++;
		return (size_t)(r3 - p);
	}
	return 0;
}

/* NCCL's own prefix (src/debug.cc): "host:pid:tid [dev] NCCL INFO " and
 * "host:pid:tid [dev] file.cc:123 NCCL WARN ". Found by its level word, then read backwards. */
static size_t strip_nccl(const char *p, const char *end, struct npf_xp_parsed *o)
{
	struct span s = {p, (size_t)(end - p)};
	const char *lv = span_find(s, " NCCL INFO ");
	size_t skip = strlen(" NCCL INFO ");
	const char *c1, *c2, *sp;

	if (!lv) {
		lv = span_find(s, " NCCL WARN ");
		o->warn = lv != NULL;
	}
	if (!lv) {
		/* NCCL <= 2.3: "host:pid:tid [dev] INFO " and "[dev] file:line WARN ", no "NCCL".
		 */
		const char *b = span_find(s, "] ");

		if (!b || b - p > 90 || !memchr(p, ':', (size_t)(b - p)))
			return 0;
		lv = span_find(s, " INFO ");
		skip = strlen(" INFO ");
		if (!lv || lv - b > 1) {
			lv = span_find(s, " WARN ");
			skip = strlen(" WARN ");
			o->warn = lv != NULL;
		}
		if (!lv || lv - b > 48)
			return 0;
	}
	sp = memchr(p, ' ', (size_t)(lv - p + 1));
	c1 = sp ? memchr(p, ':', (size_t)(sp - p)) : NULL;
	c2 = c1 ? memchr(c1 + 1, ':', (size_t)(sp - c1 - 1)) : NULL;
	if (c1 && c2 && digits(c1 + 1, c2, (size_t)(c2 - c1 - 1)) && c2 - c1 > 1 &&
	    c2 - c1 - 1 <= 9) {
		copy_clean(o->host, sizeof(o->host), p, (size_t)(c1 - p));
		o->pid = num(c1 + 1, (size_t)(c2 - c1 - 1));
	}
	return (size_t)(lv + skip - p);
}

/* PyTorch's logPrefix(): "[Rank 3] ", "[PG ID 0 PG GUID 0(default_pg) Rank 3] ". */
static void rank_in_brackets(struct span s, struct npf_xp_parsed *p)
{
	const char *r = span_find(s, " Rank "), *end = s.p + s.n;

	if (!r)
		r = span_find(s, "[Rank ");
	if (!r)
		return;
	r += strlen(" Rank ");
	if (r < end && isdigit((unsigned char)*r)) {
		const char *q = r;

		while (q < end && isdigit((unsigned char)*q) && q - r < 6)
			q++;
		if (q < end && *q == ']' && p->rank < 0)
			p->rank = (int)num(r, (size_t)(q - r));
	}
}

static enum npf_xp_kind classify(struct span s, struct npf_xp_parsed *p)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (!span_find(s, rows[i].needle) ||
		    (rows[i].needle2 && !span_find(s, rows[i].needle2)))
			continue;
		p->kind = rows[i].kind;
		if (rows[i].parse)
			rows[i].parse(s, p);
		return p->kind;
	}
	return NPF_XL_NONE;
}

/* Python exceptions that only echo a failure elsewhere (a peer died, a store timed out). */
static const char *const echo_exceptions[] = {
    "DistBackendError",
    "DistStoreError",
    "DistNetworkError",
    "DistError",
    "TimeoutError",
    "ConnectionError",
    "ConnectionResetError",
    "BrokenPipeError",
    "ConnectionRefusedError",
    "ChildFailedError",
    "ProcessExitedException",
    "ProcessRaisedException",
    "ActorDiedError",
    "RayActorError",
    "RaySystemError",
    "ActorHandleNotFoundError",
    "EOFError",
    "KeyboardInterrupt",
    "SystemExit",
};

/* "KeyError: 'x'", "torch._dynamo.exc.Unsupported: ..." at the start of the message: a
 * Python exception no row above knows. Returns its kind (an echo is a consequence). */
static enum npf_xp_kind python_exception(struct span s)
{
	size_t n = 0, dot = 0;

	while (n < s.n && n < 96 &&
	       (isalnum((unsigned char)s.p[n]) || s.p[n] == '_' || s.p[n] == '.')) {
		if (s.p[n] == '.')
			dot = n + 1;
		n++;
	}
	if (n + 1 >= s.n || s.p[n] != ':' || s.p[n + 1] != ' ' || !isupper((unsigned char)s.p[dot]))
		return NPF_XL_NONE;
	if (!(n - dot > 5 && (memcmp(s.p + n - 5, "Error", 5) == 0)) &&
	    !(n - dot > 9 && memcmp(s.p + n - 9, "Exception", 9) == 0))
		return NPF_XL_NONE;
	for (size_t i = 0; i < sizeof(echo_exceptions) / sizeof(echo_exceptions[0]); i++)
		if (strlen(echo_exceptions[i]) == n - dot &&
		    memcmp(s.p + dot, echo_exceptions[i], n - dot) == 0)
			return NPF_XL_ABORTED;
	return NPF_XL_PY_EXCEPTION;
}

static uint32_t fnv(uint32_t h, const void *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)v)[i]) * 16777619u;
	return h;
}

enum npf_xp_kind npf_xp_parse_line(const char *line, size_t len, struct npf_xp_parsed *p)
{
	const char *q = line, *end = line + len;
	struct span s;
	size_t ws = 0;

	memset(p, 0, sizeof(*p));
	p->rank = -1;
	p->pid = -1;
	p->time = -1;
	/* A very long line (a base64 blob, a binary) is cut: messages of interest are short. */
	if (len > 4096)
		end = line + 4096;
	while (end > q && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	for (int round = 0; round < 8; round++) {
		size_t k;

		for (ws = 0; q < end && (*q == ' ' || *q == '\t'); q++)
			ws += *q == '\t' ? 2 : 1;
		if ((k = strip_iso_time(q, end, &p->time)) ||
		    (k = strip_glog(q, end, &p->time, &p->warn)) ||
		    (k = strip_launcher(q, end, &p->rank)) || (k = strip_ompi(q, end, p)) ||
		    (k = strip_ray(q, end, p)) || (k = strip_hydra(q, end, &p->rank)) ||
		    (k = strip_role(q, end)) || (k = strip_cri(q, end)) ||
		    (k = strip_pdsh(q, end, p))) {
			q += k;
			continue;
		}
		break;
	}
	/* Lines of one writer (a rank's launcher tag, a pdsh host, a Ray worker) share a stream:
	 * only they may continue each other's records. */
	p->stream = fnv(fnv(fnv(2166136261u, &p->rank, sizeof(p->rank)), &p->pid, sizeof(p->pid)),
			p->host, strlen(p->host));
	p->indent = ws >= 2;
	q += strip_nccl(q, end, p);
	s.p = q;
	s.n = (size_t)(end - q);
	p->msg = q;
	p->msg_len = s.n;
	rank_in_brackets(s, p);
	{
		/* "Last error:" (PyTorch quoting ncclGetLastError()): what follows on the same line
		 * (or the next one, joined by the line assembly) is the NCCL WARN itself, read as
		 * its own kind. */
		const char *le = span_find(s, "Last error:");

		if (le) {
			struct span rest = {le + strlen("Last error:"), 0};

			rest.n = (size_t)(end - rest.p);
			if (classify(rest, p) != NPF_XL_NONE)
				return p->kind;
			p->kind = NPF_XL_LAST_ERROR;
			return p->kind;
		}
	}
	if (span_find(s, "WARN") || span_find(s, "WARNING") || span_find(s, "Error") ||
	    span_find(s, "ERROR"))
		p->warn = true;
	if (classify(s, p) == NPF_XL_NONE)
		p->kind = python_exception(s);
	return p->kind;
}
