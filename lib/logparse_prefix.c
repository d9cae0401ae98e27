// SPDX-License-Identifier: MIT
/* What launchers and loggers put in front of a line, stripped: timestamps (ISO 8601, glog,
 * container runtimes), launcher tags (torchrun's [rankN]:, srun -l's "N: ", mpirun's
 * [job,N]<stderr>:, Hydra, pdsh/deepspeed "host: ", Ray's (pid=, ip=)) and NCCL's own
 * host:pid:tid [dev] ... NCCL INFO|WARN header. Pure. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "logparse_internal.h"

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

	if (!xp_digits(p, end, 2) || end - p < 8 || p[2] != ':' || !xp_digits(p + 3, end, 2) ||
	    p[5] != ':' || !xp_digits(p + 6, end, 2))
		return -1;
	t = (double)(xp_num(p, 2) * 3600 + xp_num(p + 3, 2) * 60 + xp_num(p + 6, 2));
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
	if (!xp_digits(p, end, 4) || end - p < 19 || p[4] != '-' || !xp_digits(p + 5, end, 2) ||
	    p[7] != '-' || !xp_digits(p + 8, end, 2) || (p[10] != 'T' && p[10] != ' '))
		return 0;
	{
		long y = xp_num(p, 4), mo = xp_num(p + 5, 2), d = xp_num(p + 8, 2);
		const char *q = p + 11;

		c = clock_at(&q, end);
		if (c < 0 || mo < 1 || mo > 12 || d < 1 || d > 31)
			return 0;
		/* Zone: Z or +hh:mm / +hhmm; kept as written (one job, one zone in practice). */
		if (q < end && *q == 'Z')
			q++;
		else if (q < end && (*q == '+' || *q == '-') && xp_digits(q + 1, end, 2)) {
			q += 3;
			if (q < end && *q == ':')
				q++;
			if (xp_digits(q, end, 2))
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
	if (xp_digits(q, end, 8) && q + 9 < end && q[8] == ' ')
		nd = 8; /* YYYYMMDD */
	else if (xp_digits(q, end, 4) && q + 5 < end && q[4] == ' ')
		nd = 4; /* MMDD */
	else if (xp_digits(q, end, 3) && q + 4 < end && q[3] == ' ')
		nd = 3; /* MDD, as some collectors trim it */
	if (nd) {
		const char *c = q + nd + 1;
		double s = clock_at(&c, end);
		long y = nd == 8 ? xp_num(q, 4) : 1970;
		const char *md = nd == 8 ? q + 4 : q;
		size_t mlen = nd == 8 ? 2 : nd - 2;

		if (s < 0)
			return 0;
		*t = (double)days_from_civil(y, xp_num(md, mlen), xp_num(md + mlen, 2)) * 86400.0 +
		     s;
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
			*rank =
			    (int)xp_num(p + 5, (size_t)(q - p - 5) > 6 ? 6 : (size_t)(q - p - 5));
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
		if (q && xp_digits(comma + 1, q, (size_t)(q - comma - 1)) && q - comma - 1 <= 6 &&
		    q - comma > 1 && end - q > 9 && q[1] == '<') {
			const char *gt = memchr(q, '>', (size_t)(end - q));

			if (gt && gt + 1 < end && gt[1] == ':') {
				*rank = (int)xp_num(comma + 1, (size_t)(q - comma - 1));
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
			*rank = (int)xp_num(d, (size_t)(q - d));
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
	k = xp_span_find(s, "pid=");
	if (!k || (k != p + 1 && k[-1] != ' ') || !isdigit((unsigned char)k[4]))
		return 0;
	o->pid = strtol(k + 4, NULL, 10);
	if ((k = xp_span_find(s, "ip=")) != NULL) {
		k += 3;
		xp_copy_clean(o->host, sizeof(o->host), k, xp_token_len(k, rp, ",)"));
	}
	if ((k = xp_span_find(s, "rank=")) != NULL && isdigit((unsigned char)k[5]))
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
	xp_copy_clean(o->host, sizeof(o->host), p, n);
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
	*rank = (int)xp_num(p + 1, n - 1);
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
	if (c && xp_digits(c + 1, rb, (size_t)(rb - c - 1)) && rb - c > 1) {
		xp_copy_clean(o->host, sizeof(o->host), p + 1, (size_t)(c - p - 1));
		o->pid = xp_num(c + 1, (size_t)(rb - c - 1) > 9 ? 9 : (size_t)(rb - c - 1));
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
		if (!r3 || !xp_digits(r2 + 2, r3, (size_t)(r3 - r2 - 2)) || r3 - r2 - 2 > 6 ||
		    r3 - r2 < 3)
			return 0;
		xp_copy_clean(o->host, sizeof(o->host), p + 1, (size_t)(rb - p - 1));
		o->rank = (int)xp_num(r2 + 2, (size_t)(r3 - r2 - 2));
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
size_t xp_strip_nccl(const char *p, const char *end, struct npf_xp_parsed *o)
{
	struct span s = {p, (size_t)(end - p)};
	const char *lv = xp_span_find(s, " NCCL INFO ");
	size_t skip = strlen(" NCCL INFO ");
	const char *c1, *c2, *sp;

	if (!lv) {
		lv = xp_span_find(s, " NCCL WARN ");
		o->warn = lv != NULL;
	}
	if (!lv) {
		/* NCCL <= 2.3: "host:pid:tid [dev] INFO " and "[dev] file:line WARN ", no "NCCL".
		 */
		const char *b = xp_span_find(s, "] ");

		if (!b || b - p > 90 || !memchr(p, ':', (size_t)(b - p)))
			return 0;
		lv = xp_span_find(s, " INFO ");
		skip = strlen(" INFO ");
		if (!lv || lv - b > 1) {
			lv = xp_span_find(s, " WARN ");
			skip = strlen(" WARN ");
			o->warn = lv != NULL;
		}
		if (!lv || lv - b > 48)
			return 0;
	}
	sp = memchr(p, ' ', (size_t)(lv - p + 1));
	c1 = sp ? memchr(p, ':', (size_t)(sp - p)) : NULL;
	c2 = c1 ? memchr(c1 + 1, ':', (size_t)(sp - c1 - 1)) : NULL;
	if (c1 && c2 && xp_digits(c1 + 1, c2, (size_t)(c2 - c1 - 1)) && c2 - c1 > 1 &&
	    c2 - c1 - 1 <= 9) {
		xp_copy_clean(o->host, sizeof(o->host), p, (size_t)(c1 - p));
		o->pid = xp_num(c1 + 1, (size_t)(c2 - c1 - 1));
	}
	return (size_t)(lv + skip - p);
}

size_t xp_strip_prefix(const char *q, const char *end, struct npf_xp_parsed *p)
{
	size_t k;

	if ((k = strip_iso_time(q, end, &p->time)) ||
	    (k = strip_glog(q, end, &p->time, &p->warn)) ||
	    (k = strip_launcher(q, end, &p->rank)) || (k = strip_ompi(q, end, p)) ||
	    (k = strip_ray(q, end, p)) || (k = strip_hydra(q, end, &p->rank)) ||
	    (k = strip_role(q, end)) || (k = strip_cri(q, end)) || (k = strip_pdsh(q, end, p)))
		return k;
	return 0;
}
