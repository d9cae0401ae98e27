// SPDX-License-Identifier: MIT
/* Name resolution off the loop: getaddrinfo on detached worker threads, results
 * handed back through an eventfd. libsystemd 252 does not export sd-resolve
 * (no header, no symbols), so this is the non-blocking substitute. */
#include "internal.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "candidates.h"

#define RESOLVE_THREADS 4

struct rname {
	char *name;
	bool done, delivered;
	int err;
	struct npf_addr addrs[PROBE_MAX_RESOLVED];
	size_t n_addrs;
};

/* Shared between the loop and the workers; the last reference frees it. A worker
 * stuck in getaddrinfo therefore never blocks cancellation. */
struct rjob {
	pthread_mutex_t mu;
	int refs;
	bool cancelled;
	int efd;
	size_t next;
	size_t n;
	struct rname *names;
};

struct resolver {
	struct rjob *job;
	sd_event_source *src;
	resolve_fn fn;
	void *ud;
	bool dispatching, dead;
};

static void job_unref_locked(struct rjob *j, bool *freed)
{
	*freed = false;
	if (--j->refs > 0)
		return;
	*freed = true;
}

static void job_free(struct rjob *j)
{
	for (size_t i = 0; i < j->n; i++)
		free(j->names[i].name);
	free(j->names);
	if (j->efd >= 0)
		close(j->efd);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

static void job_put(struct rjob *j)
{
	bool freed;

	pthread_mutex_lock(&j->mu);
	job_unref_locked(j, &freed);
	pthread_mutex_unlock(&j->mu);
	if (freed)
		job_free(j);
}

static void resolve_one(struct rname *rn, struct npf_addr *out, size_t *n_out, int *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	size_t n = 0;

	*err = getaddrinfo(rn->name, NULL, &hints, &res);
	if (*err) {
		*n_out = 0;
		return;
	}
	for (struct addrinfo *ai = res; ai && n < PROBE_MAX_RESOLVED; ai = ai->ai_next) {
		struct sockaddr_storage ss;
		struct npf_addr a;
		bool dup = false;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		if (ai->ai_addrlen > sizeof(ss))
			continue;
		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
		if (fconn_from_sockaddr(&ss, &a, NULL) < 0)
			continue;
		for (size_t i = 0; i < n; i++)
			if (npf_addr_equal(&out[i], &a))
				dup = true;
		if (!dup)
			out[n++] = a;
	}
	freeaddrinfo(res);
	*n_out = n;
	if (n == 0)
		*err = EAI_NODATA;
}

static void *worker(void *arg)
{
	struct rjob *j = arg;
	bool freed;

	for (;;) {
		struct npf_addr addrs[PROBE_MAX_RESOLVED];
		size_t idx, n = 0;
		int err = 0;
		uint64_t one = 1;

		pthread_mutex_lock(&j->mu);
		if (j->cancelled || j->next >= j->n) {
			pthread_mutex_unlock(&j->mu);
			break;
		}
		idx = j->next++;
		pthread_mutex_unlock(&j->mu);

		/* names[idx].name is immutable while we hold a reference. */
		resolve_one(&j->names[idx], addrs, &n, &err);

		pthread_mutex_lock(&j->mu);
		memcpy(j->names[idx].addrs, addrs, n * sizeof(addrs[0]));
		j->names[idx].n_addrs = n;
		j->names[idx].err = err;
		j->names[idx].done = true;
		if (!j->cancelled && write(j->efd, &one, sizeof(one)) < 0) {
			/* The counter cannot overflow here; nothing useful to do. */
		}
		pthread_mutex_unlock(&j->mu);
	}
	pthread_mutex_lock(&j->mu);
	job_unref_locked(j, &freed);
	pthread_mutex_unlock(&j->mu);
	if (freed)
		job_free(j);
	return NULL;
}

static void resolver_destroy(struct resolver *r)
{
	r->src = sd_event_source_disable_unref(r->src);
	pthread_mutex_lock(&r->job->mu);
	r->job->cancelled = true;
	pthread_mutex_unlock(&r->job->mu);
	job_put(r->job);
	free(r);
}

static int efd_cb(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	struct resolver *r = ud;
	struct rjob *j = r->job;
	uint64_t cnt;

	(void)s;
	(void)revents;
	if (read(fd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN) {
		/* Spurious: the next write wakes us again. */
	}
	r->dispatching = true;
	for (size_t i = 0; i < j->n && !r->dead; i++) {
		struct npf_addr addrs[PROBE_MAX_RESOLVED];
		size_t n;
		int err;
		bool ready;

		pthread_mutex_lock(&j->mu);
		ready = j->names[i].done && !j->names[i].delivered;
		if (ready) {
			j->names[i].delivered = true;
			n = j->names[i].n_addrs;
			err = j->names[i].err;
			memcpy(addrs, j->names[i].addrs, n * sizeof(addrs[0]));
		}
		pthread_mutex_unlock(&j->mu);
		if (ready)
			r->fn(r->ud, i, err, addrs, n);
	}
	r->dispatching = false;
	if (r->dead)
		resolver_destroy(r);
	return 0;
}

void resolve_cancel(struct resolver *r)
{
	if (!r)
		return;
	if (r->dispatching) {
		r->dead = true;
		return;
	}
	resolver_destroy(r);
}

int resolve_start(sd_event *e, const char *const *names, size_t n, resolve_fn fn, void *ud,
		  struct resolver **out)
{
	struct resolver *r;
	struct rjob *j;
	size_t threads = n < RESOLVE_THREADS ? n : RESOLVE_THREADS;
	int ret = -ENOMEM;

	r = calloc(1, sizeof(*r));
	j = calloc(1, sizeof(*j));
	if (!r || !j)
		goto err_free;
	j->efd = -1;
	pthread_mutex_init(&j->mu, NULL);
	j->names = calloc(n + 1, sizeof(*j->names));
	if (!j->names)
		goto err_job;
	j->n = n;
	for (size_t i = 0; i < n; i++) {
		j->names[i].name = strdup(names[i]);
		if (!j->names[i].name)
			goto err_job;
	}
	j->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (j->efd < 0) {
		ret = -errno;
		goto err_job;
	}
	r->job = j;
	r->fn = fn;
	r->ud = ud;
	ret = sd_event_add_io(e, &r->src, j->efd, EPOLLIN, efd_cb, r);
	if (ret < 0)
		goto err_job;
	j->refs = 1; /* the loop's */
	for (size_t t = 0; t < threads; t++) {
		pthread_attr_t attr;
		pthread_t tid;
		int pr;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_mutex_lock(&j->mu);
		j->refs++;
		pthread_mutex_unlock(&j->mu);
		pr = pthread_create(&tid, &attr, worker, j);
		pthread_attr_destroy(&attr);
		if (pr) {
			pthread_mutex_lock(&j->mu);
			j->refs--;
			pthread_mutex_unlock(&j->mu);
			if (t == 0) {
				ret = -pr;
				r->src = sd_event_source_disable_unref(r->src);
				goto err_job;
			}
			break;
		}
	}
	*out = r;
	return 0;
err_job:
	job_free(j);
	free(r);
	return ret;
err_free:
	free(r);
	free(j);
	return ret;
}
