// SPDX-License-Identifier: MIT
/* netns.mpi_env's MPI client: a 4 MiB MPI_Allreduce whose sum every rank verifies, and the
 * network namespace each rank ran in (so the test can tell the job really spanned nodes). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N_DOUBLES ((4u << 20) / sizeof(double))

/* Exact in double: small integers times small integers. */
static double value(int rank, size_t i)
{
	return (double)(rank + 1) * (double)(i % 1000 + 1);
}

int main(int argc, char **argv)
{
	double *in = malloc(N_DOUBLES * sizeof(double));
	double *out = malloc(N_DOUBLES * sizeof(double));
	int rank, size, bad = 0, all_bad = 0;
	char ns[64] = "?";
	ssize_t n;

	if (!in || !out)
		return 2;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (size_t i = 0; i < N_DOUBLES; i++)
		in[i] = value(rank, i);
	MPI_Allreduce(in, out, (int)N_DOUBLES, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (size_t i = 0; i < N_DOUBLES; i++)
		if (out[i] != (double)size * (size + 1) / 2 * (double)(i % 1000 + 1))
			bad++;
	MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	n = readlink("/proc/self/ns/net", ns, sizeof(ns) - 1);
	ns[n > 0 ? n : 0] = '\0';
	printf("rank %d of %d netns %s bad %d\n", rank, size, ns, bad);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0 && all_bad == 0)
		printf("allreduce ok: %d ranks, %zu bytes\n", size, N_DOUBLES * sizeof(double));
	MPI_Finalize();
	free(in);
	free(out);
	return all_bad ? 1 : 0;
}
