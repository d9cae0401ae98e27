// SPDX-License-Identifier: MIT
/* The line classification table of `explain`: one row per way a line kind is worded (the
 * stable part of the wording, who prints it), the field parsers of the rows, the kind names, and
 * Python exceptions no row knows. Substrings, not whole formats: the same fact is worded
 * differently across NCCL 2.4-2.30 (nccl.md §2.4-2.6, §4.4). Pure. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logparse_internal.h"

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
		if (xp_span_find(s, map[i].needle))
			return map[i].err;
	return NPF_XE_OTHER;
}

/* The address after the first of the markers ("Connect to 10.0.0.2<4352> failed"). */
static void peer_after(struct span s, const char *const *markers, char *out, size_t outlen)
{
	const char *end = s.p + s.n;

	out[0] = '\0';
	for (; *markers; markers++) {
		const char *m = xp_span_find(s, *markers);
		size_t n;

		if (!m)
			continue;
		m += strlen(*markers);
		if (m < end && *m == '[') /* "[10.0.0.2]:29500", "[fe80::1%eth0]:1" */
			m++;
		n = xp_token_len(m, end, "<]>,;()");
		if (n && n < 80) {
			/* "10.0.0.2:29500" (Gloo, TCPStore): drop the port unless it is IPv6. */
			const char *c = memchr(m, ':', n);

			if (c && !memchr(c + 1, ':', n - (size_t)(c + 1 - m)))
				n = (size_t)(c - m);
			xp_copy_clean(out, outlen, m, n);
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
	const char *v = xp_span_find(s, "NCCL version ");

	if (v) {
		v += strlen("NCCL version ");
		xp_copy_clean(p->a, sizeof(p->a), v, xp_token_len(v, s.p + s.n, "+"));
	}
}

static void row_env(struct span s, struct npf_xp_parsed *p)
{
	const char *m = xp_span_find(s, " set by environment to ");
	const char *n = m;

	if (!m)
		return;
	while (n > s.p && !isspace((unsigned char)n[-1]))
		n--;
	xp_copy_clean(p->a, sizeof(p->a), n, (size_t)(m - n));
	m += strlen(" set by environment to ");
	/* The value runs to the end of the line (trailing blanks and a '.' NCCL never adds). */
	{
		size_t k = (size_t)(s.p + s.n - m);

		while (k && isspace((unsigned char)m[k - 1]))
			k--;
		/* Numeric parameters are logged as "%ld." (ncclLoadParam): drop that period. */
		if (k > 1 && m[k - 1] == '.' && strspn(m, "-0123456789") == k - 1)
			k--;
		xp_copy_clean(p->b, sizeof(p->b), m, k);
	}
}

/* "... Using [0]eth0:10.0.0.1<0> [1]..." or "... Using eth0:10.0.0.1<0>": the first one. */
static void row_ifaddr(struct span s, struct npf_xp_parsed *p)
{
	const char *u = xp_span_find(s, "Using "), *end = s.p + s.n;
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
	n = xp_token_len(u, end, "");
	if (!memchr(u, '<', n)) {
		/* 2.24+ with NCCL_OOB_NET_ENABLE: "Bootstrap: Using mlx5_0:1" names a NET device.
		 */
		xp_copy_clean(p->a, sizeof(p->a), u, n);
		return;
	}
	npf_xp_split_ifaddr(u, n, p->a, sizeof(p->a), p->b, sizeof(p->b));
}

static void row_net_ib(struct span s, struct npf_xp_parsed *p)
{
	const char *o = xp_span_find(s, "OOB "), *end = s.p + s.n;

	if (o) {
		o += strlen("OOB ");
		npf_xp_split_ifaddr(o, xp_token_len(o, end, ""), p->a, sizeof(p->a), p->b,
				    sizeof(p->b));
	}
}

static void row_using_net(struct span s, struct npf_xp_parsed *p)
{
	const char *u = xp_span_find(s, "Using network ");

	if (u) {
		u += strlen("Using network ");
		xp_copy_clean(p->a, sizeof(p->a), u, xp_token_len(u, s.p + s.n, ""));
	}
}

/* "comm 0x55d0 rank 3 nranks 8 cudaDev 3 ..." */
static void row_rank(struct span s, struct npf_xp_parsed *p)
{
	const char *r = xp_span_find(s, " rank "), *end = s.p + s.n;
	char *e;
	long v;
	char tmp[16];

	if (!r)
		return;
	r += strlen(" rank ");
	xp_copy_clean(tmp, sizeof(tmp), r, xp_token_len(r, end, ""));
	v = strtol(tmp, &e, 10);
	if (e != tmp && *e == '\0' && v >= 0 && v < 1000000 && xp_span_find(s, " nranks "))
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
	const char *st = xp_span_find(s, "status="), *end = s.p + s.n;
	char tmp[48];

	peer_after(s, m, p->a, sizeof(p->a));
	p->num = -1;
	if (st) {
		st += strlen("status=");
		xp_copy_clean(tmp, sizeof(tmp), st, xp_token_len(st, end, " ,"));
		if (strchr(tmp, '('))
			p->num = atoi(strchr(tmp, '(') + 1);
		else
			p->num = atoi(tmp);
	} else if ((st = xp_span_find(s, "with error ")) != NULL) {
		st += strlen("with error ");
		xp_copy_clean(tmp, sizeof(tmp), st, xp_token_len(st, end, ","));
		p->num = atoi(tmp);
	}
	/* 2.29+ prints localGid/remoteGids: a fe80:: GID is link-local (not routable). */
	if (xp_span_find(s, "fe80:"))
		snprintf(p->b, sizeof(p->b), "link-local");
}

static void row_gloo_noaddr(struct span s, struct npf_xp_parsed *p)
{
	const char *f = xp_span_find(s, "address for: "), *end = s.p + s.n;

	if (f) {
		f += strlen("address for: ");
		xp_copy_clean(p->a, sizeof(p->a), f, xp_token_len(f, end, ""));
	}
}

static void row_ompi_host(struct span s, struct npf_xp_parsed *p)
{
	const char *h = xp_span_find(s, "Local host:"), *end = s.p + s.n;

	if (!h)
		return;
	h += strlen("Local host:");
	while (h < end && isspace((unsigned char)*h))
		h++;
	xp_copy_clean(p->host, sizeof(p->host), h, xp_token_len(h, end, ""));
}

static void row_hostlist(struct span s, struct npf_xp_parsed *p)
{
	const char *e = xp_span_find(s, "NODELIST="), *end = s.p + s.n;

	if (e) {
		e += strlen("NODELIST=");
		xp_copy_clean(p->a, sizeof(p->a), e, xp_token_len(e, end, "\"'"));
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
	const char *r = xp_span_find(s, key), *end = s.p + s.n;

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
	const char *h = xp_span_find(s, "host      :"), *end = s.p + s.n;

	rank_in_text(s, p, "rank      :");
	if (h && !p->host[0]) {
		h += strlen("host      :");
		while (h < end && *h == ' ')
			h++;
		xp_copy_clean(p->host, sizeof(p->host), h, xp_token_len(h, end, ""));
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

enum npf_xp_kind xp_classify(struct span s, struct npf_xp_parsed *p)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (!xp_span_find(s, rows[i].needle) ||
		    (rows[i].needle2 && !xp_span_find(s, rows[i].needle2)))
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
enum npf_xp_kind xp_python_exception(struct span s)
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
