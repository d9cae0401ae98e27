/* SPDX-License-Identifier: MIT */
/* netpreflight explain: read a failed or hung job's logs (NCCL, PyTorch c10d, Gloo, Open MPI)
 * and name the network cause. Pure: bytes in, a per-rank table and a diagnosis out.
 *
 * Two tables drive it. lib/logparse_rows.c has one row per line kind (what a line says, which
 * library printed it, in which versions); lib/explain_diagnose.c has one row per root-cause rule
 * (which line kinds are its evidence, and the check on the per-rank table that fires it).
 * Nothing is guessed: a cause is named only with the lines that show it. */
#ifndef NPF_EXPLAIN_H
#define NPF_EXPLAIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NPF_XP_MAX_PROCS 4096 /* ranks/processes tracked; more are folded into "job" */
#define NPF_XP_TEXT 200	      /* evidence text kept per line (the rest is cut) */
#define NPF_XP_MAX_ENV 16     /* NCCL_* variables remembered per process */
#define NPF_XP_MAX_EVIDENCE 12

/* What a line says. One row per wording in lib/logparse_rows.c (rows[]). */
enum npf_xp_kind {
	NPF_XL_NONE = 0,
	NPF_XL_NCCL_VERSION, /* NCCL version 2.18.3+cuda12.2 */
	NPF_XL_ENV,	     /* NCCL_SOCKET_IFNAME set by environment to eth0 */
	NPF_XL_BOOTSTRAP,    /* Bootstrap : Using eth0:10.0.0.1<0> (2.8-2.23), Bootstrap: Using */
	NPF_XL_NET_SOCKET,   /* NET/Socket : Using [0]eth0:10.0.0.1<0> [1]... */
	NPF_XL_NET_IB,	     /* NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0> */
	NPF_XL_IB_NONE,	     /* NET/IB : No device found. */
	NPF_XL_USING_NET,    /* Using network Socket|IB */
	NPF_XL_INIT_RANK,    /* comm 0x.. rank 3 nranks 8 ... (Init START / Init COMPLETE) */
	NPF_XL_INIT_DONE,    /* ... Init COMPLETE */
	NPF_XL_CHANNEL,	     /* Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0 */
	NPF_XL_NO_IFACE,  /* Bootstrap : no socket interface found, NET/Socket : no interface found
			   */
	NPF_XL_NO_SUBNET, /* No interface found in the same subnet / No usable listening interface
			   */
	NPF_XL_CONNECT_RETRY, /* Call to connect returned X, retrying / connect to A returned X,
				 retrying */
	NPF_XL_CONNECT_FAIL,  /* Connect to A failed : X / exceeded error retry count / exceeded
				 retries */
	NPF_XL_REMOTE_CLOSED, /* Connection closed by remote peer A */
	NPF_XL_IB_COMPLETION, /* NET/IB : Got completion from peer A with error 12 / status=12 */
	NPF_XL_IB_MODIFY_QP,  /* Call to ibv_modify_qp failed with error X */
	NPF_XL_IB_GID_HINT, /* HINT: ... incorrect GID index is forced by NCCL_IB_GID_INDEX (2.30.7)
			     */
	NPF_XL_WATCHDOG, /* PyTorch: Watchdog caught collective operation timeout: WorkNCCL(...) */
	NPF_XL_NCCL_ERROR_IN, /* PyTorch: NCCL error in: ProcessGroupNCCL.cpp:N, unhandled system
				 error */
	NPF_XL_LAST_ERROR,    /* PyTorch: Last error: <the last NCCL WARN> */
	NPF_XL_GLOO_LOOPBACK, /* Gloo: Unable to resolve hostname ... Using the loopback address */
	NPF_XL_GLOO_CONNECT,  /* Gloo: connectFullMesh failed / pair.cc: connect [A]:P: X */
	NPF_XL_GLOO_NOADDR,   /* Gloo: Unable to find address for: eth0 */
	NPF_XL_STORE_FAIL,    /* c10d TCPStore: client socket has failed to connect / timed out */
	NPF_XL_STORE_LISTEN,  /* c10d: The server socket has started to listen on [::]:29500 */
	NPF_XL_OMPI_NOPROC,   /* Open MPI: ... cannot find a corresponding process entry */
	NPF_XL_OMPI_UNREACH,  /* Open MPI: unable to reach each other for MPI communications */
	NPF_XL_OMPI_CONNECT,  /* Open MPI: btl_tcp_endpoint ... connect() to A failed: X */
	NPF_XL_OMPI_NOIF,     /* Open MPI: Unknown interface name / invalid if_inexclude */
	NPF_XL_OMPI_HOST,     /*   Local host: node1  (the host line inside an Open MPI help box) */
	NPF_XL_HOSTLIST,      /* SLURM_JOB_NODELIST=node[1-4] (a job script\'s env dump) */
	NPF_XL_OMPI_WRONG_PEER, /* Open MPI: received unexpected process identifier */
	NPF_XL_IB_ASYNC,   /* NET/IB : Got async event : local access violation work queue error */
	NPF_XL_NO_FAMILY,  /* ncclSocketInit: ... family N is neither AF_INET(2) nor AF_INET6(10) */
	NPF_XL_UNRESOLVED, /* c10d gai error / host not found / Name or service not known */
	NPF_XL_ABORTED,	   /* consequences: Some NCCL operations have failed or timed out, ... */
	/* Failures that are not the network's (the first failure, named as such). */
	NPF_XL_CUDA_OOM, /* torch.OutOfMemoryError: CUDA out of memory / Cuda failure 'out of
			    memory' */
	NPF_XL_KILLED,	 /* torchelastic: exitcode -9, Signal 9 (SIGKILL) received by PID */
	NPF_XL_DUP_GPU,	 /* NCCL: Duplicate GPU detected : rank 2 and rank 0 both on CUDA device */
	NPF_XL_COLL_MISMATCH, /* PyTorch: Detected mismatch between collectives on ranks */
	NPF_XL_CUDA_ERROR,    /* CUDA error: an illegal memory access was encountered */
	NPF_XL_SHM,	      /* NCCL: Error while creating shared memory segment (/dev/shm) */
	NPF_XL_VERSION,	      /* a version mismatch (driver/runtime, NCCL between ranks) */
	NPF_XL_NO_BARRIER,    /* PyTorch: Rank 1 failed to pass monitoredBarrier */
	NPF_XL_PY_EXCEPTION,  /* any other Python exception line: KeyError: 'x' */
	NPF_XL__COUNT
};

/* The errno-ish outcome a connect line reports. */
enum npf_xp_err {
	NPF_XE_NONE = 0,
	NPF_XE_REFUSED, /* ECONNREFUSED: something answered with a reset */
	NPF_XE_TIMEOUT, /* ETIMEDOUT: nothing answered (dropped SYNs) */
	NPF_XE_NOROUTE, /* EHOSTUNREACH / ENETUNREACH */
	NPF_XE_OTHER,
};

/* The root causes, one row each in lib/explain_diagnose.c (xp_rules[]). */
enum npf_xp_cause {
	NPF_XC_NONE = 0,
	NPF_XC_SAME_ADDRESS,	 /* the same address bound on several hosts (docker0 172.17.0.1) */
	NPF_XC_CONTAINER_BRIDGE, /* a container/virtual bridge (docker*, br-<hex>, virbr*, veth,
				    cni) */
	NPF_XC_LOOPBACK,	 /* lo / 127.0.0.0/8 bound */
	NPF_XC_LINK_LOCAL,	 /* 169.254/16 or fe80:: bound */
	NPF_XC_GLOO_HOSTNAME,	 /* Gloo fell back to loopback: the hostname resolves to 127.x */
	NPF_XC_NAMES_DIFFER,	 /* the interface name given exists on some nodes only */
	NPF_XC_PREFIX_MATCH,	 /* NCCL_SOCKET_IFNAME=eth1 selected eth10 (prefix match) */
	NPF_XC_COMM_ID_SUBNET,	/* NCCL_COMM_ID: no local interface in its subnet (or 2.29.x bug) */
	NPF_XC_ROCE_GID_FORCED, /* NCCL_IB_GID_INDEX forced an index that is wrong on this port */
	NPF_XC_ROCE_GID,	/* RoCE status 12 (retry exceeded): link-local / v1 GID, no path */
	NPF_XC_FIREWALL_REFUSED, /* connects refused by a live host (reject rule, nothing listening)
				  */
	NPF_XC_FIREWALL_SILENT,	 /* connects time out: SYNs dropped on the way */
	NPF_XC_MTU_BLACKHOLE,	 /* connected fine, then hung in the first large transfer */
	NPF_XC_IB_FALLBACK,	 /* NET/IB found no device: NCCL silently uses sockets */
	NPF_XC_ENV_DIFFERS,	 /* the job's environment is not what the daemon published */
	NPF_XC_IFNAME_MISSING, /* the interface named (NCCL_SOCKET_IFNAME=eth0) exists on no node */
	NPF_XC_BAD_ADDRESS,    /* the rendezvous address does not resolve or is no host's */
	NPF_XC_IB_MTU,	       /* IB/RoCE MTU differs between nodes (QP access errors) */
	NPF_XC_NOT_NETWORK,    /* the first failure is not the network's (OOM, an exception) */
	NPF_XC_UNKNOWN,	       /* failure lines, but no rule has its evidence */
	NPF_XC__COUNT
};

/* One evidence line: where it was and what it said. */
struct npf_xp_line {
	size_t lineno;	 /* 1-based, in the concatenated input */
	unsigned n_cont; /* continuation lines joined to it (lineno+1 .. lineno+n_cont) */
	enum npf_xp_kind kind;
	int proc;		/* index into npf_xp_report.procs, -1 = job-level */
	enum npf_xp_err err;	/* connect lines: how it failed */
	char addr[64];		/* connect lines: the peer address */
	char text[NPF_XP_TEXT]; /* the message without launcher/NCCL prefixes, control chars as '?'
				 */
};

struct npf_xp_env {
	char name[48];
	char value[96];
};

/* One process: a rank when the log says which, else one host:pid. */
struct npf_xp_proc {
	int rank;      /* -1 unknown */
	char host[64]; /* "" unknown */
	long pid;      /* -1 unknown */
	char nccl_version[24];
	struct npf_xp_env env[NPF_XP_MAX_ENV];
	size_t n_env;
	char boot_if[32],
	    boot_addr[64];  /* bootstrap interface and address (first [0] before 2.8) */
	char net[16];	    /* "Socket", "IB", "" */
	char net_devs[160]; /* NET/Socket or NET/IB device list as logged */
	char oob_if[32], oob_addr[64];
	char peer_addr[64]; /* the address of the first failed connect, "" none */
	bool ib_none, init_done, channels;
	unsigned n_errors;
	/* The first failure line of this process (primary or secondary). */
	struct npf_xp_line first_error;
	bool has_error;
	double first_error_time; /* seconds of the line's timestamp, < 0 none */
	bool primary; /* its first failure is a cause, not a consequence (timeout, abort) */
};

struct npf_xp_report {
	struct npf_xp_proc *procs; /* owned */
	size_t n_procs;
	size_t n_lines, n_recognised;
	bool truncated;	    /* the input ended inside a line */
	char hostlist[256]; /* the job's node list when the log shows one (SLURM_JOB_NODELIST=) */
	bool has_times;
	int first_proc; /* the first failing process (primary failure first, by time then line), -1
			 */
	size_t n_primary,
	    n_secondary; /* processes whose first failure is a cause / a consequence */
	enum npf_xp_cause cause;
	bool ambiguous; /* more than one rule fired with equal standing */
	enum npf_xp_cause also[4];
	size_t n_also;
	char summary[240];		       /* one human sentence for the cause */
	char fix_hint[240];		       /* what to change, from the log alone */
	char subject_if[32], subject_addr[64]; /* the interface/address the cause is about */
	char subject_host[64];		       /* the node the cause is about, "" none */
	struct npf_xp_line evidence[NPF_XP_MAX_EVIDENCE];
	size_t n_evidence;
	/* Consequence lines (watchdog timeouts, aborts) counted, not kept. */
};

/* Parses len bytes of log text (several files concatenated are fine; NULs and invalid UTF-8 are
 * tolerated) and diagnoses it. *rep must be zeroed; on success the caller owns it
 * (npf_xp_report_clear). Returns 0, -ENOMEM (rep left cleared). */
int npf_explain(const char *buf, size_t len, struct npf_xp_report *rep);

void npf_xp_report_clear(struct npf_xp_report *rep);

/* Stable names (docs/explain.md). */
const char *npf_xp_cause_name(enum npf_xp_cause c);
const char *npf_xp_kind_name(enum npf_xp_kind k);
/* Returns the enum or -EINVAL. */
int npf_xp_cause_parse(const char *s);

/* The report as JSON (docs/json.md, "netpreflight explain --json" without the daemon part).
 * New reference or NULL on ENOMEM. */
json_t *npf_xp_report_to_json(const struct npf_xp_report *rep);

/* True when the log said nothing about the process beyond its name (left out of the table). */
bool npf_xp_proc_empty(const struct npf_xp_proc *pr);

/* "rank 3 (node2)", "node2 pid 4711", "unnamed process" (lines that name no process) into
 * buf. Returns buf. */
char *npf_xp_proc_label(const struct npf_xp_report *rep, int proc, char *buf, size_t len);

/* True for the line kinds that are failures, but not the network's (OOM, an exception). */
bool npf_xp_kind_not_network(enum npf_xp_kind k);

/* ---- lib/xcheck.c: the cross-check with the daemon's check (JSON in, no I/O). ---- */

struct npf_xp_xcheck {
	const json_t *check;	 /* in, borrowed: the check object (docs/protocol.md) */
	const json_t *variables; /* in, borrowed: the env reply's "variables" when ok, or NULL */
	const char *verdict;	 /* out: the check's verdict (borrowed from check) */
	json_t *findings;	 /* out, owned: array of sentences */
	char drain[64];		 /* out: a node to drain, "" none */
	bool confirmed;		 /* out: the check shows what the cause predicts */
	bool env_differs;	 /* out: a rank's environment is not the published one */
	bool cause_from_daemon;	 /* out: rep->cause was "unknown"; the check's probe decided */
};

/* Compares what each process bound (and the connects that failed) with the check, lists what
 * the check found per interface, compares the environment with the published one, and may set
 * rep->cause (with summary/subject) when the log alone said "unknown". x->check must be set.
 * Returns 0 or -ENOMEM; free with npf_xp_xcheck_clear(). */
int npf_xp_crosscheck(struct npf_xp_report *rep, struct npf_xp_xcheck *x);
void npf_xp_xcheck_clear(struct npf_xp_xcheck *x);

/* ---- lib/logparse*.c: the line layer, shared with the tests and the fuzzer. ---- */

/* What one line holds once its prefixes are stripped. */
struct npf_xp_parsed {
	enum npf_xp_kind kind;
	int rank;	 /* from [rankN]:, "N: ", [job,N]<stderr>:, "rank N nranks" (-1) */
	char host[64];	 /* from host:pid:tid, [host:pid], Local host: */
	long pid;	 /* -1 */
	double time;	 /* seconds, < 0 none */
	bool warn;	 /* NCCL WARN / WARNING / ERROR */
	const char *msg; /* into the line: the message after the prefixes */
	size_t msg_len;
	enum npf_xp_err err; /* connect lines: which failure */
	char a[96], b[96];   /* kind-specific fields: env name/value, if/addr, peer addr, version */
	int num;	     /* kind-specific: nranks, IB status, rank */
	bool indent;	     /* the message was indented below its prefixes (a continuation?) */
	uint32_t stream;     /* hash of the launcher prefix: lines of one writer share it */
};

/* Classifies one line (no newline; need not be NUL-terminated). Returns its kind (also in
 * p->kind); NPF_XL_NONE for a line of no interest. */
enum npf_xp_kind npf_xp_parse_line(const char *line, size_t len, struct npf_xp_parsed *p);

/* "eth0:10.0.0.1<0>" or "fe80::1%eth0<0>" -> ifname and address (without <port>). Returns 0 or
 * -EINVAL. */
int npf_xp_split_ifaddr(const char *s, size_t len, char *ifname, size_t iflen, char *addr,
			size_t addrlen);

/* Copies n bytes of log text into dst (NUL-terminated, cut at dstlen-1) as valid UTF-8: control
 * characters and bytes that are not part of a valid UTF-8 sequence become '?', and a cut never
 * splits a character (every string we hand to JSON must be UTF-8). Returns the length. */
size_t npf_xp_clean_text(char *dst, size_t dstlen, const char *p, size_t n);

/* True when name is a container or virtual bridge name NCCL does not exclude by default, or
 * docker/virbr itself (docker*, br-<12 hex>, virbr*, veth*, cni*, podman*, lxcbr*, flannel*). */
bool npf_xp_bridge_name(const char *name);

#endif
