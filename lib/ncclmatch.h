/* SPDX-License-Identifier: MIT */
/* NCCL's interface/HCA list grammar ([^][=]tok[:port]{,tok}) and matcher, so we can prove
 * that a value we publish selects exactly the interfaces we chose (nccl.md §1.4, §3). */
#ifndef NPF_NCCLMATCH_H
#define NPF_NCCLMATCH_H

#include <stdbool.h>
#include <stddef.h>

#define NCCLMATCH_SOCKET_MAX 16 /* MAX_IFS: NCCL_SOCKET_IFNAME tokens beyond it are dropped */
#define NCCLMATCH_IB_MAX 32     /* MAX_IB_DEVS (>= 2.19): NCCL_IB_HCA tokens beyond are dropped */
#define NCCLMATCH_TOKEN_MAX 64  /* NCCL's char prefix[64], terminator included */

enum ncclmatch_kind {
	NCCLMATCH_SOCKET = 0, /* NCCL_SOCKET_IFNAME: port ignored, values of length <= 1 ignored */
	NCCLMATCH_IB,         /* NCCL_IB_HCA: port honoured */
};

struct ncclmatch_entry {
	char name[NCCLMATCH_TOKEN_MAX];
	int port; /* -1 = any port */
};

struct ncclmatch_list {
	enum ncclmatch_kind kind;
	bool ignored; /* socket value of length <= 1: NCCL runs its auto-selection instead */
	bool negate;  /* leading '^': the list excludes */
	bool exact;   /* '=' after the optional '^': whole-name match */
	size_t n;
	size_t dropped; /* tokens past the kind's maximum that NCCL silently drops */
	struct ncclmatch_entry e[NCCLMATCH_IB_MAX];
};

/* Parses value the way NCCL's parseStringList does (empty tokens skipped, text after
 * ':' up to ',' is the port). Returns 0, -EINVAL for NULL arguments, or -ENAMETOOLONG
 * when a token does not fit NCCL's 64-byte buffer (NCCL itself would overflow it). */
int ncclmatch_parse(const char *value, enum ncclmatch_kind kind, struct ncclmatch_list *out);

/* True when the socket list selects ifname (port ignored). An ignored or empty list
 * selects everything, as NCCL's matchIfList with listSize 0 does. */
bool ncclmatch_ifname(const struct ncclmatch_list *l, const char *ifname);

/* True when the HCA list selects verbs device dev, port (1-based). */
bool ncclmatch_hca(const struct ncclmatch_list *l, const char *dev, int port);

/* Marks in selected[i] whether l selects names[i] (socket semantics) and returns how
 * many are selected. Caller owns both arrays. */
size_t ncclmatch_select(const struct ncclmatch_list *l, const char *const *names, size_t n,
			bool *selected);

#endif
