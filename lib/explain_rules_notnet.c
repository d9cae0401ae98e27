// SPDX-License-Identifier: MIT
/* `explain` rules for failures that are not the network's (OOM, SIGKILL, a duplicate GPU,
 * an exception): one row per such kind, what to say and what to do. Pure tests. */
#include <stdio.h>
#include <string.h>

#include "explain_internal.h"

/* The non-network failure kinds: what to say about the process, and what to do. */
static const struct {
	enum npf_xp_kind kind;
	const char *what, *fix;
} not_network[] = {
    {NPF_XL_CUDA_OOM, "ran out of GPU memory",
     "lower the batch or model shard size on that rank (PYTORCH_CUDA_ALLOC_CONF=expandable_"
     "segments:True against fragmentation); the other ranks' timeouts follow from it"},
    {NPF_XL_KILLED,
     "was killed with SIGKILL (the kernel's OOM killer when host memory runs out, "
     "or the scheduler)",
     "check dmesg / the job's memory limit on that node; fewer data loader workers or more "
     "host memory"},
    {NPF_XL_DUP_GPU, "shares its GPU with another rank (Duplicate GPU)",
     "give each rank its own device: torch.cuda.set_device(local_rank), one process per GPU, "
     "CUDA_VISIBLE_DEVICES per rank"},
    {NPF_XL_COLL_MISMATCH,
     "called another collective than its peers (the ranks took different "
     "code paths)",
     "make every rank call the same collectives in the same order and shapes"},
    {NPF_XL_CUDA_ERROR, "hit a CUDA error",
     "debug the kernel on that rank (CUDA_LAUNCH_BLOCKING=1)"},
    {NPF_XL_SHM,
     "could not create NCCL's shared memory segment (/dev/shm too small, e.g. a "
     "container's 64 MB default)",
     "give the container a larger /dev/shm (docker --shm-size, a memory-backed emptyDir)"},
    {NPF_XL_VERSION, "runs another version (driver, CUDA or NCCL) than it needs or than its peers",
     "install one matching NCCL/CUDA/driver set on every node (one container image)"},
    {NPF_XL_NO_BARRIER, "never reached the barrier the other ranks waited at",
     "find what that rank was doing (py-spy dump); a rank stuck in data loading or I/O"},
    {NPF_XL_PY_EXCEPTION, "raised an exception", "fix the exception that rank raised"},
};

/* Names a non-network failure: "not a network cause: rank 2 ran out of GPU memory". */
static bool name_not_network(const struct xp_evidence *e, struct xp_finding *f, int proc)
{
	const struct npf_xp_report *r = e->rep;
	const struct npf_xp_line *l = &r->procs[proc].first_error;
	char who[96];

	for (size_t i = 0; i < sizeof(not_network) / sizeof(not_network[0]); i++) {
		if (not_network[i].kind != l->kind)
			continue;
		xp_cite(f, l);
		xp_about(f, NULL, NULL, r->procs[proc].host);
		npf_xp_proc_label(r, proc, who, sizeof(who));
		if (l->kind == NPF_XL_PY_EXCEPTION)
			snprintf(f->summary, sizeof(f->summary),
				 "not a network cause: %s raised %.*s",
				 proc == e->job ? "a process" : who, (int)strcspn(l->text, ":"),
				 l->text);
		else
			snprintf(f->summary, sizeof(f->summary), "not a network cause: %s %s",
				 proc == e->job ? "a process" : who, not_network[i].what);
		xp_cpy(f->fix, sizeof(f->fix), not_network[i].fix);
		return true;
	}
	return false;
}

/* The first failing process failed of itself, and not because of the network. */
bool xp_test_not_network_first(const struct xp_evidence *e, struct xp_finding *f)
{
	int fp = e->rep->first_proc;

	return fp >= 0 && e->rep->procs[fp].primary &&
	       npf_xp_kind_not_network(e->rep->procs[fp].first_error.kind) &&
	       name_not_network(e, f, fp);
}

/* No network rule found its evidence, but some process failed of itself (the earliest). */
bool xp_test_not_network_any(const struct xp_evidence *e, struct xp_finding *f)
{
	const struct npf_xp_report *r = e->rep;
	int best = -1;

	bool net = false;

	/* An exception no row knows is the end of a network failure's traceback as often as
	 * not: it counts only when no process shows a network failure. */
	for (size_t i = 0; i < r->n_procs; i++)
		net |=
		    r->procs[i].primary && !npf_xp_kind_not_network(r->procs[i].first_error.kind);
	for (size_t i = 0; i < r->n_procs; i++) {
		const struct npf_xp_proc *pr = &r->procs[i];

		if (pr->has_error && pr->primary && npf_xp_kind_not_network(pr->first_error.kind) &&
		    !(net && pr->first_error.kind == NPF_XL_PY_EXCEPTION) &&
		    (best < 0 || pr->first_error.lineno < r->procs[best].first_error.lineno))
			best = (int)i;
	}
	return best >= 0 && name_not_network(e, f, best);
}
