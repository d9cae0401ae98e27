/* SPDX-License-Identifier: MIT */
/* Slurm hostlist expansion ("gpu[001-004,010],login1") without calling Slurm commands. */
#ifndef NPF_HOSTLIST_H
#define NPF_HOSTLIST_H

#include <stddef.h>

/* Slurm's own ceiling (MAX_SLURM_NODES); a larger expansion is refused with
 * -E2BIG before anything is allocated. */
#define NPF_HOSTLIST_MAX 65536

/*
 * Expands a Slurm hostlist expression into host names.
 *
 * Grammar: tokens separated by top-level commas; a token is literal text
 * ([A-Za-z0-9._-]) mixed with bracket groups "[1-3,7,010-012]". Several groups
 * in one token expand as a cartesian product, leftmost group varying slowest.
 * A range keeps the width of its lower bound ("[08-10]" -> 08 09 10, "[8-10]"
 * -> 8 9 10). Whitespace at either end of the expression and around top-level
 * commas is ignored; whitespace anywhere else is an error. Duplicates are
 * dropped, keeping the first occurrence's position.
 *
 * Errors: -EINVAL for unbalanced or nested brackets, an empty range or name,
 * hi < lo, non-digits or more than 18 digits in a range, characters outside
 * the set above, or a name of NPF_NAME_MAX or more bytes; -E2BIG when more than
 * NPF_HOSTLIST_MAX names would be generated (duplicates counted); -ENOMEM.
 * When err is not NULL, a one-line reason with the 0-based byte offset into
 * expr ("unbalanced '[' at offset 3") is written to err (errlen bytes, always
 * NUL-terminated); on success err is set to "".
 *
 * Returns the number of names (>= 1) on success. Ownership: *names is a new
 * array of *n new strings; the caller frees it with npf_hostlist_free(*names,
 * *n). On failure *names is NULL and *n is 0.
 */
int npf_hostlist_expand(const char *expr, char ***names, size_t *n, char *err, size_t errlen);

/* Frees what npf_hostlist_expand() returned; NULL-safe. */
void npf_hostlist_free(char **names, size_t n);

#endif
