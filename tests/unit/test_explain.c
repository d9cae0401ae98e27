// SPDX-License-Identifier: MIT
/* lib/explain: the line layer on each wording and prefix, then every corpus case of
 * tests/explain/ (NAME.log with its expected diagnosis NAME.expect: key=value lines). */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "explain.h"
#include "explain_internal.h"

#define CORPUS NPF_FIXTURES "/../explain"

static enum npf_xp_kind kind_of(const char *line, struct npf_xp_parsed *p)
{
	return npf_xp_parse_line(line, strlen(line), p);
}

static void test_prefixes(void **state)
{
	struct npf_xp_parsed p;

	(void)state;
	/* torchrun + NCCL */
	assert_int_equal(kind_of("[rank3]:node2:3377:3377 [0] NCCL INFO Bootstrap : Using "
				 "docker0:172.17.0.1<0>",
				 &p),
			 NPF_XL_BOOTSTRAP);
	assert_int_equal(p.rank, 3);
	assert_string_equal(p.host, "node2");
	assert_int_equal(p.pid, 3377);
	assert_string_equal(p.a, "docker0");
	assert_string_equal(p.b, "172.17.0.1");
	/* srun -l, leading blanks */
	assert_int_equal(
	    kind_of("  12: gpu1:1:2 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.1<0>", &p),
	    NPF_XL_BOOTSTRAP);
	assert_int_equal(p.rank, 12);
	/* mpirun --tag-output */
	assert_int_equal(
	    kind_of("[1,5]<stderr>:h:9:9 [0] NCCL INFO NCCL version 2.7.8+cuda11.0", &p),
	    NPF_XL_NCCL_VERSION);
	assert_int_equal(p.rank, 5);
	assert_string_equal(p.a, "2.7.8");
	/* ISO timestamp, then NCCL WARN with file:line */
	assert_int_equal(kind_of("2026-05-01T09:14:03.5Z n1:10:11 [0] misc/socket.cc:480 NCCL WARN "
				 "socketStartConnect: Connect to 10.0.0.2<4352> failed : "
				 "Connection refused",
				 &p),
			 NPF_XL_CONNECT_FAIL);
	assert_true(p.time > 0);
	assert_true(p.warn);
	assert_int_equal(p.err, NPF_XE_REFUSED);
	assert_string_equal(p.a, "10.0.0.2");
	/* a clock is not an srun label */
	assert_int_equal(kind_of("12:34:56 nothing here", &p), NPF_XL_NONE);
	assert_int_equal(p.rank, -1);
	/* glog with a year and no bracket (libtorch before InitGoogleLogging()) */
	assert_int_equal(
	    kind_of("W20261201 11:09:52.813922 32713 ProcessGroupGloo.cpp:694] Warning: "
		    "Unable to resolve hostname to a (local) address. Using the loopback "
		    "address as fallback.",
		    &p),
	    NPF_XL_GLOO_LOOPBACK);
	assert_true(p.time > 86400.0 * 365 * 50);
	assert_true(p.msg_len > 0 && strncmp(p.msg, "Warning:", 8) == 0);
	/* a word that starts with I/W/E/F is not a glog prefix */
	assert_int_equal(kind_of("Watchdog caught collective operation timeout: x", &p),
			 NPF_XL_WATCHDOG);
	assert_true(strncmp(p.msg, "Watchdog", 8) == 0);
	/* glog + PyTorch's [Rank N] */
	assert_int_equal(
	    kind_of("[E0501 09:24:03.802 1001 ProcessGroupNCCL.cpp:563] [Rank 7] Watchdog "
		    "caught collective operation timeout: WorkNCCL(SeqNum=2)",
		    &p),
	    NPF_XL_WATCHDOG);
	assert_int_equal(p.rank, 7);
	assert_true(p.time >= 0);
	/* Open MPI's [host][[job,1],vpid][file] */
	assert_int_equal(kind_of("[node2][[5151,1],1][btl_tcp_endpoint.c:803:x] connect() to "
				 "198.18.1.3 failed: Connection timed out (110)",
				 &p),
			 NPF_XL_OMPI_CONNECT);
	assert_string_equal(p.host, "node2");
	assert_int_equal(p.rank, 1);
	assert_int_equal(p.err, NPF_XE_TIMEOUT);
	assert_string_equal(p.a, "198.18.1.3");
}

static void test_wordings(void **state)
{
	struct npf_xp_parsed p;

	(void)state;
	/* connect retries across versions (nccl.md §2.4) */
	assert_int_equal(kind_of("Call to connect returned Connection refused, retrying", &p),
			 NPF_XL_CONNECT_RETRY);
	assert_int_equal(p.err, NPF_XE_REFUSED);
	assert_int_equal(
	    kind_of("socketStartConnect: connect returned Connection timed out, retrying "
		    "(1/34) after sleep for 100 msec",
		    &p),
	    NPF_XL_CONNECT_RETRY);
	assert_int_equal(p.err, NPF_XE_TIMEOUT);
	assert_int_equal(
	    kind_of("ncclOsSocketPollConnect: connect to 10.1.1.1<5> returned No route to "
		    "host, exceeded error retry count after 34 attempts",
		    &p),
	    NPF_XL_CONNECT_FAIL);
	assert_int_equal(p.err, NPF_XE_NOROUTE);
	assert_string_equal(p.a, "10.1.1.1");
	assert_int_equal(kind_of("socketStartConnect: exceeded timeouts (3)", &p),
			 NPF_XL_CONNECT_FAIL);
	assert_int_equal(p.err, NPF_XE_TIMEOUT);
	/* Bootstrap: old [0] form, IPv6 link-local, OOB NET device */
	assert_int_equal(kind_of("Bootstrap : Using [0]lo:127.0.0.1<0> [1]eth0:10.0.0.1<0>", &p),
			 NPF_XL_BOOTSTRAP);
	assert_string_equal(p.a, "lo");
	assert_string_equal(p.b, "127.0.0.1");
	assert_int_equal(kind_of("Bootstrap: Using ib0:fe80::1%ib0<0>", &p), NPF_XL_BOOTSTRAP);
	assert_string_equal(p.a, "ib0");
	assert_string_equal(p.b, "fe80::1%ib0");
	assert_int_equal(kind_of("Bootstrap: Using mlx5_0:1", &p), NPF_XL_BOOTSTRAP);
	assert_string_equal(p.a, "mlx5_0:1");
	assert_string_equal(p.b, "");
	assert_int_equal(kind_of("NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>", &p),
			 NPF_XL_NET_IB);
	assert_string_equal(p.a, "eth0");
	assert_int_equal(kind_of("NCCL_SOCKET_IFNAME set by environment to =eth1", &p), NPF_XL_ENV);
	assert_string_equal(p.a, "NCCL_SOCKET_IFNAME");
	assert_string_equal(p.b, "=eth1");
	/* RoCE completion: three wordings */
	assert_int_equal(
	    kind_of("NET/IB : Got completion from peer 1.2.3.4<5> with error 12, opcode 0", &p),
	    NPF_XL_IB_COMPLETION);
	assert_int_equal(p.num, 12);
	assert_int_equal(
	    kind_of("NET/IB : Got completion from peer 1.2.3.4<5> with status=12 opcode=0", &p),
	    NPF_XL_IB_COMPLETION);
	assert_int_equal(p.num, 12);
	assert_int_equal(kind_of("NET/IB: Got completion from peer 1.2.3.4<5> with "
				 "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0)",
				 &p),
			 NPF_XL_IB_COMPLETION);
	assert_int_equal(p.num, 12);
	assert_string_equal(p.a, "1.2.3.4");
	/* PyTorch's Last error quoting an NCCL WARN is read as the WARN */
	assert_int_equal(kind_of("Last error: socketStartConnect: Connect to 10.0.0.9<1> failed : "
				 "Software caused connection abort",
				 &p),
			 NPF_XL_CONNECT_FAIL);
	assert_int_equal(kind_of("Last error:", &p), NPF_XL_LAST_ERROR);
	/* Gloo, c10d, Open MPI */
	assert_int_equal(
	    kind_of("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:144] "
		    "connect [127.0.1.1]:23456: Connection refused",
		    &p),
	    NPF_XL_GLOO_CONNECT);
	assert_string_equal(p.a, "127.0.1.1");
	assert_int_equal(kind_of("[c10d] The client socket has failed to connect to [node1]:29500 "
				 "(errno: 111 - Connection refused).",
				 &p),
			 NPF_XL_STORE_FAIL);
	assert_string_equal(p.a, "node1");
	assert_int_equal(p.err, NPF_XE_REFUSED);
	assert_int_equal(kind_of("  Local host: node3", &p), NPF_XL_OMPI_HOST);
	assert_string_equal(p.host, "node3");
	assert_int_equal(kind_of("", &p), NPF_XL_NONE);
	/* NCCL <= 2.3 wrote no "NCCL" before its level */
	assert_int_equal(
	    kind_of("gpu-bql-144-103:18553:18611 [0] include/socket.h:360 WARN Call to "
		    "connect failed : Connection timed out",
		    &p),
	    NPF_XL_CONNECT_FAIL);
	assert_string_equal(p.host, "gpu-bql-144-103");
	assert_int_equal(p.err, NPF_XE_TIMEOUT);
	/* the old IB completion wording without a peer; the async event; wrong-peer Open MPI */
	assert_int_equal(
	    kind_of("NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129", &p),
	    NPF_XL_IB_COMPLETION);
	assert_int_equal(p.num, 12);
	assert_int_equal(kind_of("NET/IB : Got async event : local access violation work queue "
				 "error",
				 &p),
			 NPF_XL_IB_ASYNC);
	assert_int_equal(
	    kind_of("[er-head][[56247,2],5][btl_tcp_endpoint.c:668:mca_btl_tcp_"
		    "endpoint_recv_connect_ack] received unexpected process identifier",
		    &p),
	    NPF_XL_OMPI_WRONG_PEER);
	/* consequences and failures that are not the network's */
	assert_int_equal(
	    kind_of("[rank3]:[E416 20:40:12.986061777 ProcessGroupNCCL.cpp:621] [Rank 3] "
		    "Some NCCL operations have failed or timed out.",
		    &p),
	    NPF_XL_ABORTED);
	assert_int_equal(p.rank, 3);
	assert_int_equal(kind_of("[rank2]: torch.cuda.OutOfMemoryError: CUDA out of memory.", &p),
			 NPF_XL_CUDA_OOM);
	assert_int_equal(kind_of("[rank1]: KeyError: 'labels'", &p), NPF_XL_PY_EXCEPTION);
	assert_int_equal(kind_of("torch.distributed.DistStoreError: Socket Timeout", &p),
			 NPF_XL_ABORTED);
	assert_int_equal(kind_of("ConnectionResetError: [Errno 104] reset", &p), NPF_XL_ABORTED);
	assert_true(npf_xp_kind_not_network(NPF_XL_DUP_GPU));
	assert_false(npf_xp_kind_not_network(NPF_XL_CONNECT_FAIL));
}

static void test_launchers(void **state)
{
	struct npf_xp_parsed p, q;

	(void)state;
	/* Ray: worker name, pid, node address; vLLM's rank */
	assert_int_equal(kind_of("(WorkerDict pid=63294) [rank3]:[E416 20:40:12.984683378 "
				 "ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective "
				 "operation timeout: WorkNCCL(SeqNum=8)",
				 &p),
			 NPF_XL_WATCHDOG);
	assert_int_equal(p.pid, 63294);
	assert_int_equal(p.rank, 3);
	assert_int_equal(
	    kind_of("(pid=4711, ip=10.0.0.7) node7:4711:4711 [0] NCCL INFO Bootstrap : "
		    "Using eth0:10.0.0.7<0>",
		    &p),
	    NPF_XL_BOOTSTRAP);
	assert_string_equal(p.host, "node7");
	kind_of("(VllmWorker rank=3 pid=4665) ERROR 08-05 14:13:44 x", &p);
	assert_int_equal(p.rank, 3);
	assert_int_equal(p.pid, 4665);
	/* pdsh (DeepSpeed): a host name, but not a word such as an exception's class */
	assert_int_equal(
	    kind_of("worker-1: [rank9]: torch.OutOfMemoryError: CUDA out of memory.", &p),
	    NPF_XL_CUDA_OOM);
	assert_string_equal(p.host, "worker-1");
	assert_int_equal(p.rank, 9);
	assert_int_equal(kind_of("torch.OutOfMemoryError: CUDA out of memory.", &p),
			 NPF_XL_CUDA_OOM);
	assert_string_equal(p.host, "");
	/* mpiexec.hydra -prepend-rank, torchx roles (no global rank), CRI and docker -t stamps */
	assert_int_equal(kind_of("[1] node2:22555:22555 [0] NCCL INFO Bootstrap : Using "
				 "enp10s0:10.10.7.109<0>",
				 &p),
			 NPF_XL_BOOTSTRAP);
	assert_int_equal(p.rank, 1);
	assert_int_equal(
	    kind_of("[trainer3]:twshared1016:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME "
		    "set by environment to eth2",
		    &p),
	    NPF_XL_ENV);
	assert_int_equal(p.rank, -1);
	assert_string_equal(p.host, "twshared1016");
	assert_int_equal(kind_of("2024-05-11T14:10:52.224123456Z stderr F n1:1:1 [0] NCCL INFO "
				 "Bootstrap : Using eth0:10.0.0.1<0>",
				 &p),
			 NPF_XL_BOOTSTRAP);
	assert_true(p.time > 0);
	/* one writer's lines share a stream, another's do not; an indented line is marked */
	kind_of("[rank2]: Last error:", &p);
	kind_of("[rank2]:   (rank=8, size=16)", &q);
	assert_int_equal(p.stream, q.stream);
	assert_true(q.indent);
	assert_false(p.indent);
	kind_of("[rank3]:   (rank=8, size=16)", &q);
	assert_true(p.stream != q.stream);
}

/* Explains text and checks the cause; the report is left in *rep for more checks. */
static void expect_cause(const char *text, enum npf_xp_cause want, struct npf_xp_report *rep)
{
	npf_xp_report_clear(rep);
	assert_int_equal(npf_explain(text, strlen(text), rep), 0);
	if (rep->cause != want)
		fail_msg("cause %s, expected %s (%s) for: %s", npf_xp_cause_name(rep->cause),
			 npf_xp_cause_name(want), rep->summary, text);
}

/* firewall-* only with a plausible unicast peer; a failed job is never "none"; no AF_INET fix
 * on an IPv6-only log. */
static void test_firewall_and_family(void **state)
{
	struct npf_xp_report rep = {0};

	(void)state;
	/* docker0's default address on every node: the connect reached the node itself */
	expect_cause("n1:1:1 [0] misc/socket.cc:1 NCCL WARN socketStartConnect: Connect to "
		     "172.17.0.1<4000> failed : Connection refused\n",
		     NPF_XC_SAME_ADDRESS, &rep);
	assert_string_equal(rep.subject_addr, "172.17.0.1");
	/* a netmask, a network address, the unspecified address: a wrong MASTER_ADDR */
	expect_cause("[W socket.cpp:663] [c10d] The client socket has failed to connect to "
		     "[::ffff:255.255.255.0]:29500 (errno: 111 - Connection refused).\n",
		     NPF_XC_BAD_ADDRESS, &rep);
	assert_non_null(strstr(rep.summary, "netmask"));
	expect_cause("n1:1:1 [0] misc/socket.cc:1 NCCL WARN socketStartConnect: Connect to "
		     "10.1.2.0<4000> failed : Connection refused\n",
		     NPF_XC_BAD_ADDRESS, &rep);
	expect_cause("n1:1:1 [0] misc/socket.cc:1 NCCL WARN socketStartConnect: Connect to "
		     "0.0.0.0<4000> failed : Connection refused\n",
		     NPF_XC_BAD_ADDRESS, &rep);
	/* a plausible unicast peer: the firewall */
	expect_cause("n1:1:1 [0] misc/socket.cc:1 NCCL WARN socketStartConnect: Connect to "
		     "10.1.2.7<4000> failed : Connection refused\n",
		     NPF_XC_FIREWALL_REFUSED, &rep);
	/* a refused connect that names no peer, and no bound address to judge by */
	expect_cause("n1:1:1 [0] NCCL INFO Call to connect returned Connection refused, "
		     "retrying\n",
		     NPF_XC_UNKNOWN, &rep);
	/* PyTorch's abort lines alone: a failed job, "unknown", never "none" */
	expect_cause(
	    "[rank3]:[E416 20:40:12.986061777 ProcessGroupNCCL.cpp:621] [Rank 3] Some NCCL "
	    "operations have failed or timed out. Due to the asynchronous nature of CUDA "
	    "kernels, subsequent GPU operations might run on corrupted/incomplete data.\n",
	    NPF_XC_UNKNOWN, &rep);
	expect_cause(
	    "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
	    "Segmentation fault (core dumped)\n",
	    NPF_XC_UNKNOWN, &rep);
	expect_cause("NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129\n",
		     NPF_XC_ROCE_GID, &rep);
	/* link-local with IPv4 in sight: AF_INET is a fix; IPv6-only: it is not */
	expect_cause("a:1:1 [0] NCCL INFO Bootstrap : Using ib0:fe80::1%ib0<0>\n"
		     "b:2:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
		     "a:1:1 [0] misc/socket.cc:1 NCCL WARN socketStartConnect: Connect to "
		     "fe80::2%ib0<4000> failed : Network is unreachable\n",
		     NPF_XC_LINK_LOCAL, &rep);
	assert_non_null(strstr(rep.fix_hint, "AF_INET"));
	expect_cause("a:1:1 [0] NCCL INFO Bootstrap : Using ib0:fe80::1%ib0<0>\n"
		     "b:2:2 [0] NCCL INFO Bootstrap : Using eth0:2001:db8::2<0>\n"
		     "a:1:1 [0] misc/socket.cc:1 NCCL WARN socketStartConnect: Connect to "
		     "fe80::2%ib0<4000> failed : Network is unreachable\n",
		     NPF_XC_LINK_LOCAL, &rep);
	assert_null(strstr(rep.fix_hint, "AF_INET"));
	npf_xp_report_clear(&rep);
}

/* Continuations: the record is the line and its continuation lines, read as one. */
static void test_assembly(void **state)
{
	struct npf_xp_report rep = {0};
	static const char gloo[] =
	    "RuntimeError: Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/"
	    "transport/tcp/pair.cc:152]\n"
	    "  timed out connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:20901\n"
	    "  (rank=8, size=16, local=[127.0.0.1])\n";
	static const char last[] =
	    "[rank0]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
	    "[rank1]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
	    "[rank0]: Last error:\n"
	    "[rank1]: Last error:\n"
	    "[rank1]: Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000\n"
	    "[rank0]: Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1000\n";
	static const char summary[] =
	    "Root Cause (first observed failure):\n"
	    "[0]:\n"
	    "  time      : 2025-05-21_15:43:03\n"
	    "  host      : gpu-worker-3\n"
	    "  rank      : 5 (local_rank: 1)\n"
	    "  exitcode  : -9 (pid: 14750)\n"
	    "  error_file: <N/A>\n"
	    "  traceback : Signal 9 (SIGKILL) received by PID 14750\n"
	    "============================================================\n";
	char who[96];

	(void)state;
	assert_int_equal(npf_explain(gloo, sizeof(gloo) - 1, &rep), 0);
	assert_int_equal(rep.cause, NPF_XC_GLOO_HOSTNAME);
	assert_string_equal(npf_xp_proc_label(&rep, rep.first_proc, who, sizeof(who)), "rank 8");
	assert_int_equal(rep.evidence[0].lineno, 1);
	assert_int_equal(rep.evidence[0].n_cont, 2);
	assert_int_equal(rep.n_lines, 3);
	npf_xp_report_clear(&rep);
	/* Interleaved ranks: each "Last error:" takes its own rank's next line. */
	assert_int_equal(npf_explain(last, sizeof(last) - 1, &rep), 0);
	assert_int_equal(rep.cause, NPF_XC_NOT_NETWORK);
	assert_string_equal(npf_xp_proc_label(&rep, rep.first_proc, who, sizeof(who)), "rank 0");
	assert_non_null(strstr(rep.summary, "rank 0 shares its GPU"));
	assert_int_equal(rep.evidence[0].lineno, 3);
	assert_int_equal(rep.evidence[0].n_cont, 1);
	assert_non_null(strstr(rep.evidence[0].text, "rank 0 and rank 1"));
	npf_xp_report_clear(&rep);
	/* torchelastic's failure summary: one record, the rank and host inside it */
	assert_int_equal(npf_explain(summary, sizeof(summary) - 1, &rep), 0);
	assert_int_equal(rep.cause, NPF_XC_NOT_NETWORK);
	assert_string_equal(npf_xp_proc_label(&rep, rep.first_proc, who, sizeof(who)),
			    "rank 5 (gpu-worker-3)");
	assert_non_null(strstr(rep.summary, "SIGKILL"));
	npf_xp_report_clear(&rep);
}

static void test_bridge_names(void **state)
{
	(void)state;
	assert_true(npf_xp_bridge_name("docker0"));
	assert_true(npf_xp_bridge_name("br-5c2f8e1a9b07"));
	assert_false(npf_xp_bridge_name("br-lan"));
	assert_true(npf_xp_bridge_name("veth1a84001"));
	assert_true(npf_xp_bridge_name("virbr0"));
	assert_false(npf_xp_bridge_name("ens1f0np0"));
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

/* The value of key in an expect file, or NULL. */
static const char *expect_get(char *text, const char *key, char *out, size_t outlen)
{
	size_t k = strlen(key);

	for (char *l = text; l && *l;) {
		char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);

		if (n > k && strncmp(l, key, k) == 0 && l[k] == '=') {
			snprintf(out, outlen, "%.*s", (int)(n - k - 1), l + k + 1);
			return out;
		}
		l = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* The outcome of one corpus case, for the real corpus' score. */
struct outcome {
	bool right;	  /* the cause the thread established */
	bool network;	  /* the thread's cause is the network's */
	bool named_net;	  /* explain named a network cause */
	bool none;	  /* explain said "none" */
	bool first_known; /* the log shows the first failing rank, and explain named it */
};

static bool network_cause(enum npf_xp_cause c)
{
	return c != NPF_XC_NONE && c != NPF_XC_UNKNOWN && c != NPF_XC_NOT_NETWORK;
}

/* Checks one case of dir against its .expect (key=value lines):
 *   cause=     the cause (for tests/explain/real/: the one the thread established)
 *   miss=      real corpus only: what explain answers instead, a known miss (it must
 *              answer exactly that, so a change either way is seen)
 *   first=, subject_if=, subject_addr=, subject_host=, fix=, summary=, hostlist=
 *   source=    real corpus: the thread's URL; network=yes|no: the thread's cause is the
 *              network's or not. */
/* Every evidence line of a named cause is of a kind its rows list: the table's evidence
 * column says what each test cites. */
static void check_evidence_kinds(const char *name, const struct npf_xp_report *rep)
{
	size_t n;
	const struct xp_rule *t = xp_rule_table(&n);
	uint64_t kinds = 0;

	if (rep->cause == NPF_XC_NONE || rep->cause == NPF_XC_UNKNOWN)
		return;
	for (size_t i = 0; i < n; i++)
		if (t[i].cause == rep->cause)
			kinds |= t[i].evidence;
	for (size_t i = 0; i < rep->n_evidence; i++)
		if (!(kinds & (1ull << rep->evidence[i].kind)))
			fail_msg("%s: %s cites a %s line, a kind its row does not list", name,
				 npf_xp_cause_name(rep->cause),
				 npf_xp_kind_name(rep->evidence[i].kind));
}

static void check_case_in(const char *dir, const char *name, struct outcome *o)
{
	char path[512], val[256], want[256], who[96];
	char *log, *exp;
	size_t len, elen;
	struct npf_xp_report rep = {0};
	bool miss;

	snprintf(path, sizeof(path), "%s/%s.log", dir, name);
	log = slurp(path, &len);
	assert_non_null(log);
	snprintf(path, sizeof(path), "%s/%s.expect", dir, name);
	exp = slurp(path, &elen);
	if (!exp)
		fail_msg("%s: no .expect", name);
	assert_int_equal(npf_explain(log, len, &rep), 0);
	printf("  %-36s %s, first %s\n", name, npf_xp_cause_name(rep.cause),
	       npf_xp_proc_label(&rep, rep.first_proc, who, sizeof(who)));
	if (!expect_get(exp, "cause", want, sizeof(want)) || npf_xp_cause_parse(want) < 0)
		fail_msg("%s: no valid cause= in .expect", name);
	miss = expect_get(exp, "miss", val, sizeof(val)) != NULL;
	if (!miss)
		snprintf(val, sizeof(val), "%s", want);
	if (strcmp(val, npf_xp_cause_name(rep.cause)) != 0)
		fail_msg("%s: cause %s, expected %s%s (%s)", name, npf_xp_cause_name(rep.cause),
			 val, miss ? " (a known miss)" : "", rep.summary);
	if (o) {
		memset(o, 0, sizeof(*o));
		o->right = !miss;
		if (!expect_get(exp, "source", val, sizeof(val)) ||
		    strncmp(val, "https://", 8) != 0)
			fail_msg("%s: no source= URL", name);
		if (!expect_get(exp, "network", val, sizeof(val)))
			fail_msg("%s: no network=yes|no", name);
		o->network = strcmp(val, "yes") == 0;
		o->named_net = network_cause(rep.cause);
		o->none = rep.cause == NPF_XC_NONE;
		if (!o->network && o->named_net)
			fail_msg("%s: a network cause (%s) for a failure that is not the network's",
				 name, npf_xp_cause_name(rep.cause));
		if (o->network != network_cause(npf_xp_cause_parse(want)))
			fail_msg("%s: network= disagrees with cause=", name);
	}
	if (expect_get(exp, "first", val, sizeof(val))) {
		const char *got = rep.first_proc < 0
				      ? "-"
				      : npf_xp_proc_label(&rep, rep.first_proc, who, sizeof(who));

		if (strcmp(val, got) != 0)
			fail_msg("%s: first failure %s, expected %s", name, got, val);
		if (o)
			o->first_known = true;
	}
	if (expect_get(exp, "summary", val, sizeof(val)) && !strstr(rep.summary, val))
		fail_msg("%s: summary \"%s\" does not say \"%s\"", name, rep.summary, val);
	if (expect_get(exp, "subject_if", val, sizeof(val)) && strcmp(val, rep.subject_if) != 0)
		fail_msg("%s: subject_if %s, expected %s", name, rep.subject_if, val);
	if (expect_get(exp, "subject_addr", val, sizeof(val)) && strcmp(val, rep.subject_addr) != 0)
		fail_msg("%s: subject_addr %s, expected %s", name, rep.subject_addr, val);
	if (expect_get(exp, "fix", val, sizeof(val)) && !strstr(rep.fix_hint, val))
		fail_msg("%s: fix \"%s\" does not say \"%s\"", name, rep.fix_hint, val);
	if (expect_get(exp, "hostlist", val, sizeof(val)) && strcmp(val, rep.hostlist) != 0)
		fail_msg("%s: hostlist %s, expected %s", name, rep.hostlist, val);
	if (expect_get(exp, "subject_host", val, sizeof(val)) && strcmp(val, rep.subject_host) != 0)
		fail_msg("%s: subject_host %s, expected %s", name, rep.subject_host, val);
	/* A named cause always comes with its lines; none or unknown never claims a subject. */
	if (rep.cause != NPF_XC_NONE && rep.cause != NPF_XC_UNKNOWN) {
		assert_true(rep.n_evidence >= 1);
		assert_true(rep.summary[0] != '\0');
		assert_true(rep.fix_hint[0] != '\0');
	}
	if (rep.cause == NPF_XC_NONE)
		assert_int_equal(rep.n_evidence, 0);
	/* Every evidence line is a line of the input. */
	for (size_t i = 0; i < rep.n_evidence; i++) {
		char head[9];

		assert_true(rep.evidence[i].lineno >= 1 &&
			    rep.evidence[i].lineno + rep.evidence[i].n_cont <= rep.n_lines);
		/* A joined record: its text starts with its first line's message. */
		snprintf(head, sizeof(head), "%s", rep.evidence[i].text);
		assert_non_null(strstr(log, rep.evidence[i].n_cont ? head : rep.evidence[i].text));
	}
	check_evidence_kinds(name, &rep);
	{
		json_t *j = npf_xp_report_to_json(&rep);

		assert_non_null(j);
		assert_string_equal(json_string_value(json_object_get(j, "cause")),
				    npf_xp_cause_name(rep.cause));
		json_decref(j);
	}
	npf_xp_report_clear(&rep);
	free(log);
	free(exp);
}

/* Runs every case of dir; marks the causes seen; returns the number of cases. With score,
 * collects the real corpus' outcomes. */
static size_t run_dir(const char *dir, bool seen[NPF_XC__COUNT], struct outcome *score, size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		char name[256], path[512], val[64], *exp;
		size_t elen;
		int c;

		if (l < 5 || strcmp(e->d_name + l - 4, ".log") != 0 || l - 4 >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(l - 4), e->d_name);
		assert_true(!score || n < max);
		check_case_in(dir, name, score ? &score[n] : NULL);
		snprintf(path, sizeof(path), "%s/%s.expect", dir, name);
		exp = slurp(path, &elen);
		if (exp && !expect_get(exp, "miss", val, sizeof(val)) &&
		    expect_get(exp, "cause", val, sizeof(val)) &&
		    (c = npf_xp_cause_parse(val)) >= 0)
			seen[c] = true;
		free(exp);
		n++;
	}
	closedir(d);
	return n;
}

static void test_corpus(void **state)
{
	bool seen[NPF_XC__COUNT] = {false};
	struct outcome score[256];
	size_t n;

	(void)state;
	assert_true(run_dir(CORPUS, seen, NULL, 0) >= 20);
	n = run_dir(CORPUS "/real", seen, score, sizeof(score) / sizeof(score[0]));
	/* Every cause of the rule table has at least one case it is right on. */
	for (int c = 0; c < NPF_XC__COUNT; c++)
		if (!seen[c])
			fail_msg("no corpus case for cause %s", npf_xp_cause_name(c));
	/* The real corpus (issue 23): failures quoted in public threads, each with the cause the
	 * thread established. */
	{
		size_t right = 0, nonnet = 0, net_for_nonnet = 0, none = 0, first = 0;

		for (size_t i = 0; i < n; i++) {
			right += score[i].right;
			nonnet += !score[i].network;
			net_for_nonnet += !score[i].network && score[i].named_net;
			none += score[i].none;
			first += score[i].first_known;
		}
		/* first= is checked wherever the log shows the first failing rank: a wrong
		 * one fails the case above, so this counts the cases that show it. */
		printf("real corpus: %zu cases (%zu not the network's): %zu causes right (%.0f%%), "
		       "%zu network causes for non-network failures, %zu 'none', first failing "
		       "rank right in all %zu cases that show it\n",
		       n, nonnet, right, n ? 100.0 * (double)right / (double)n : 0.0,
		       net_for_nonnet, none, first);
		assert_true(n >= 40);
		assert_true(nonnet >= 8);
		assert_true(right * 10 >= n * 9);
		assert_int_equal(net_for_nonnet, 0);
		assert_int_equal(none, 0);
	}
}

static void test_robust(void **state)
{
	struct npf_xp_report rep = {0};
	char junk[4096];

	(void)state;
	/* Empty, NULs, no newline, a huge line: no crash, nothing invented. */
	assert_int_equal(npf_explain("", 0, &rep), 0);
	assert_int_equal(rep.cause, NPF_XC_NONE);
	npf_xp_report_clear(&rep);
	memset(junk, 0, sizeof(junk));
	memcpy(junk + 100, "Bootstrap : Using [", 19);
	assert_int_equal(npf_explain(junk, sizeof(junk), &rep), 0);
	assert_true(rep.truncated);
	npf_xp_report_clear(&rep);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)('A' + i % 26);
	assert_int_equal(npf_explain(junk, sizeof(junk), &rep), 0);
	assert_int_equal(rep.cause, NPF_XC_NONE);
	npf_xp_report_clear(&rep);
	/* 4096 ranks, then 30000 chatty INFO lines, then the one failure: it is still seen (the
	 * chatty kinds cannot crowd the evidence out). */
	{
		size_t cap = 8u << 20, n = 0;
		char *big = malloc(cap);

		assert_non_null(big);
		for (int r = 0; r < NPF_XP_MAX_PROCS; r++)
			n += (size_t)snprintf(
			    big + n, cap - n,
			    "[rank%d]:node%d:%d:%d [0] NCCL INFO Bootstrap : Using "
			    "ens1f0np0:10.%d.%d.1<0>\n",
			    r, r / 8, 1000 + r, 1000 + r, r / 256, r % 256);
		for (int i = 0; i < 30000; i++)
			n += (size_t)snprintf(big + n, cap - n,
					      "[rank%d]:node%d:%d:%d [0] NCCL INFO Channel 00/0 : "
					      "%d[0] -> %d[0] [send] via NET/Socket/0\n",
					      i % 4096, (i % 4096) / 8, 1000 + i % 4096,
					      1000 + i % 4096, i % 4096, (i + 1) % 4096);
		n += (size_t)snprintf(
		    big + n, cap - n,
		    "[rank77]:node9:1077:1077 [0] misc/socket.cc:1 NCCL WARN "
		    "socketStartConnect: Connect to 10.0.78.1<1> failed : Connection "
		    "refused\n");
		assert_int_equal(npf_explain(big, n, &rep), 0);
		assert_int_equal(rep.n_procs, NPF_XP_MAX_PROCS);
		assert_int_equal(rep.cause, NPF_XC_FIREWALL_REFUSED);
		assert_string_equal(rep.subject_host, "node9");
		npf_xp_report_clear(&rep);
		free(big);
	}
	assert_int_equal(npf_xp_cause_parse("same-address"), NPF_XC_SAME_ADDRESS);
	assert_int_equal(npf_xp_cause_parse("nope"), -EINVAL);
}

/* A check object as the daemon serves it (docs/protocol.md), cut to the fields the cross-check
 * reads: node1's view of node1..node3, docker0 everywhere with one address, node3's fabric
 * refusing. */
static const char check_json[] =
    "{\"self\":\"node1\",\"started_unix_ms\":1780000000000,"
    "\"nodes\":["
    "{\"name\":\"node1\",\"candidates\":[{\"ifname\":\"docker0\",\"address\":\"172.17.0.1/16\"},"
    "{\"ifname\":\"ens1f0np0\",\"address\":\"198.18.1.1/24\"}]},"
    "{\"name\":\"node2\",\"candidates\":[{\"ifname\":\"docker0\",\"address\":\"172.17.0.1/16\"},"
    "{\"ifname\":\"ens1f0np0\",\"address\":\"198.18.1.2/24\"}]},"
    "{\"name\":\"node3\",\"candidates\":[{\"ifname\":\"ens1f0np0\",\"address\":\"198.18.1.3/"
    "24\"}]}],"
    "\"links\":["
    "{\"ifname\":\"ens1f0np0\",\"peer\":\"node2\",\"fwd\":\"ok\",\"rev\":\"ok\",\"peer_if\":"
    "\"ens1f0np0\",\"peer_addr\":\"198.18.1.2/24\",\"fwd_detail\":\"\",\"rev_detail\":\"\"},"
    "{\"ifname\":\"ens1f0np0\",\"peer\":\"node3\",\"fwd\":\"refused\",\"rev\":\"ok\",\"peer_if\":"
    "\"ens1f0np0\",\"peer_addr\":\"198.18.1.3/24\",\"fwd_detail\":\"data port 198.18.1.3:38985: "
    "Connection refused\",\"rev_detail\":\"\"}],"
    "\"verdict\":{\"verdict\":\"ok\",\"peers\":2,\"interfaces\":["
    "{\"ifname\":\"docker0\",\"works\":false,\"ok_peers\":0,\"failure\":{\"peer\":\"node2\","
    "\"direction\":\"forward\",\"outcome\":\"wrong-peer\",\"detail\":\"172.17.0.1 is local to "
    "node1\"}},"
    "{\"ifname\":\"ens1f0np0\",\"works\":false,\"ok_peers\":1,\"failure\":{\"peer\":\"node3\","
    "\"direction\":\"forward\",\"outcome\":\"refused\",\"detail\":\"data port\"}},"
    "{\"ifname\":\"eno1\",\"works\":true,\"ok_peers\":2,\"failure\":null}]}}";

static bool has_finding(const json_t *f, const char *needle)
{
	size_t i;
	const json_t *v;

	json_array_foreach(f, i, v) if (strstr(json_string_value(v), needle)) return true;
	return false;
}

static void xcheck_case(const char *name, const json_t *vars, struct npf_xp_report *rep,
			struct npf_xp_xcheck *x, json_t **check)
{
	char path[512];
	size_t len;
	char *log;

	snprintf(path, sizeof(path), "%s/%s.log", CORPUS, name);
	log = slurp(path, &len);
	assert_non_null(log);
	assert_int_equal(npf_explain(log, len, rep), 0);
	free(log);
	*check = json_loads(check_json, 0, NULL);
	assert_non_null(*check);
	memset(x, 0, sizeof(*x));
	x->check = *check;
	x->variables = vars;
	assert_int_equal(npf_xp_crosscheck(rep, x), 0);
}

static void test_crosscheck(void **state)
{
	struct npf_xp_report rep = {0};
	struct npf_xp_xcheck x;
	json_t *check, *vars;

	(void)state;
	/* Same address: the check holds 172.17.0.1 on two nodes, docker0 is wrong-peer. */
	xcheck_case("docker0-torchrun-2.18", NULL, &rep, &x, &check);
	assert_int_equal(rep.cause, NPF_XC_SAME_ADDRESS);
	assert_true(x.confirmed);
	assert_false(x.cause_from_daemon);
	assert_true(
	    has_finding(x.findings, "an address the check found on 2 nodes (node1, node2)"));
	assert_true(has_finding(x.findings, "docker0 wrong-peer with node2"));
	assert_true(has_finding(x.findings, "eno1 passed to all 2 peers"));
	assert_string_equal(x.verdict, "ok");
	npf_xp_xcheck_clear(&x);
	json_decref(check);
	npf_xp_report_clear(&rep);

	/* Open MPI 4.1's errno-less connect failure: the check's refused probe of 198.18.1.3
	 * decides. */
	xcheck_case("lab-ompi-fw-reject", NULL, &rep, &x, &check);
	assert_int_equal(rep.cause, NPF_XC_FIREWALL_REFUSED);
	assert_true(x.cause_from_daemon);
	assert_string_equal(rep.subject_host, "node3");
	assert_string_equal(rep.subject_addr, "198.18.1.3");
	npf_xp_xcheck_clear(&x);
	json_decref(check);
	npf_xp_report_clear(&rep);

	/* The environment a rank reported against the published one. */
	vars = json_pack("{s:s}", "NCCL_SOCKET_IFNAME", "=ens1f0np0");
	xcheck_case("env-differs-2.28", vars, &rep, &x, &check);
	assert_true(x.env_differs);
	assert_true(has_finding(x.findings,
				"ran with NCCL_SOCKET_IFNAME=eno1; the daemon publishes "
				"NCCL_SOCKET_IFNAME==ens1f0np0"));
	npf_xp_xcheck_clear(&x);
	json_decref(check);
	json_decref(vars);
	npf_xp_report_clear(&rep);

	/* A log with nothing wrong is not made into a cause by a failing check. */
	xcheck_case("clean-2.25", NULL, &rep, &x, &check);
	assert_int_equal(rep.cause, NPF_XC_NONE);
	assert_false(x.cause_from_daemon);
	npf_xp_xcheck_clear(&x);
	json_decref(check);
	npf_xp_report_clear(&rep);
}

/* The rule table: one name per cause, every cause a row, rows in tier order, a fix for every
 * row whose test does not always write its own. */
static void test_rule_table(void **state)
{
	size_t n;
	const struct xp_rule *t = xp_rule_table(&n);
	bool has_row[NPF_XC__COUNT] = {false};

	(void)state;
	for (size_t i = 0; i < n; i++) {
		assert_true((unsigned)t[i].cause < NPF_XC__COUNT);
		has_row[t[i].cause] = true;
		assert_non_null(t[i].name);
		assert_string_equal(npf_xp_cause_name(t[i].cause), t[i].name);
		assert_int_equal(npf_xp_cause_parse(t[i].name), t[i].cause);
		if (i)
			assert_true(t[i - 1].tier <= t[i].tier);
		assert_true(!t[i].test ==
			    (t[i].cause == NPF_XC_NONE || t[i].cause == NPF_XC_UNKNOWN));
		if (t[i].test)
			assert_true(t[i].evidence != 0);
	}
	for (int c = 0; c < NPF_XC__COUNT; c++)
		if (!has_row[c])
			fail_msg("cause %d has no row", c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_prefixes),	 cmocka_unit_test(test_wordings),
	    cmocka_unit_test(test_bridge_names), cmocka_unit_test(test_launchers),
	    cmocka_unit_test(test_assembly),	 cmocka_unit_test(test_firewall_and_family),
	    cmocka_unit_test(test_corpus),	 cmocka_unit_test(test_robust),
	    cmocka_unit_test(test_crosscheck),	 cmocka_unit_test(test_rule_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
