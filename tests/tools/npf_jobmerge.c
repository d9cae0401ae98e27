// SPDX-License-Identifier: MIT
/* npf_jobmerge FILE...: the job decision from the "job_row" of each node's check JSON
 * (netpreflight check --json), through the wire parser, lib/jobrows and lib/jobcheck, as
 * the row exchange will run it in every daemon (docs/decision.md §10). Prints one line:
 *   verdict=ok|degraded|fail|unknown net=KEY|- suspects=NAME,...|- nets=KEY,... reason=TEXT
 * Exit 0 when a decision was made, 1 for a missing or refused row, 2 usage. A test driver
 * for netns.jobrows; not installed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobcheck.h"
#include "jobrows.h"

static json_t *find_row(json_t *j)
{
	json_t *r = json_object_get(j, "job_row");

	if (!r && json_object_get(j, "check"))
		r = json_object_get(json_object_get(j, "check"), "job_row");
	return r;
}

int main(int argc, char **argv)
{
	struct npf_msg_row *rows;
	const struct npf_msg_row **rp;
	struct npf_job_matrix m;
	struct npf_job_decision d;
	struct npf_job_input in;
	size_t n = 0;
	int r, rc = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: npf_jobmerge CHECK.json CHECK.json...\n");
		return 2;
	}
	n = (size_t)argc - 1;
	rows = calloc(n, sizeof(*rows));
	rp = calloc(n, sizeof(*rp));
	if (!rows || !rp)
		return 1;
	for (size_t i = 0; i < n; i++) {
		json_error_t err;
		json_t *j = json_load_file(argv[i + 1], 0, &err), *row = j ? find_row(j) : NULL;
		struct npf_msg_row x;

		if (!row || npf_wire_row_from_json(row, &x) < 0 || x.n_nodes != n || x.index >= n ||
		    rp[x.index]) {
			fprintf(stderr, "%s: no usable job_row\n", argv[i + 1]);
			if (row)
				npf_wire_row_clear(&x);
			json_decref(j);
			goto out;
		}
		rows[x.index] = x;
		rp[x.index] = &rows[x.index];
		json_decref(j);
	}
	r = npf_job_rows_merge(rp, n, &m);
	if (r < 0) {
		fprintf(stderr, "merge: %s\n", strerror(-r));
		goto out;
	}
	in = npf_job_matrix_input(&m, false);
	r = npf_job_decide(&in, &d);
	if (r < 0) {
		fprintf(stderr, "decide: %s\n", strerror(-r));
		npf_job_matrix_clear(&m);
		goto out;
	}
	printf("verdict=%s net=%s suspects=", npf_job_verdict_name(d.verdict),
	       d.net >= 0 ? m.nets[d.net].name : "-");
	for (size_t i = 0, k = 0; i < n; i++)
		if (d.suspect[i])
			printf("%s%s", k++ ? "," : "", rows[i].node);
	if (!d.n_suspects)
		printf("-");
	printf(" nets=");
	for (size_t k = 0; k < m.n_nets; k++)
		printf("%s%s", k ? "," : "", m.nets[k].name);
	{
		const char **names = calloc(n, sizeof(*names));
		struct npf_job_answer a;

		for (size_t i = 0; names && i < n; i++)
			names[i] = rows[i].node;
		if (names && npf_job_answer(rp, names, n, 0, false, &a) == 0)
			printf(" reason=%s", a.reason);
		free(names);
	}
	printf("\n");
	npf_job_decision_clear(&d);
	npf_job_matrix_clear(&m);
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		if (rp[i])
			npf_wire_row_clear(&rows[i]);
	free(rows);
	free(rp);
	return rc;
}
