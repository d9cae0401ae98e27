// SPDX-License-Identifier: MIT
/* Log state is one of the two mutable globals we allow (config is the other). */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

static struct {
	const char *ident;
	enum npf_log_dest dest;
	int verbosity;
} log_state = { "netpreflight", NPF_LOG_STDERR, 0 };

void log_init(const char *ident, enum npf_log_dest dest, int verbosity)
{
	log_state.ident = ident ? ident : "netpreflight";
	log_state.dest = dest;
	log_state.verbosity = verbosity;
}

void log_set_verbosity(int verbosity)
{
	log_state.verbosity = verbosity;
}

int log_get_verbosity(void)
{
	return log_state.verbosity;
}

__attribute__((format(printf, 3, 0)))
static void vlog(int pri, const char *suffix, const char *fmt, va_list ap)
{
	int saved = errno;
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* One write per line so concurrent writers (several daemons in a test) don't interleave. */
	if (log_state.dest == NPF_LOG_JOURNAL)
		fprintf(stderr, "<%d>%s%s%s\n", pri, msg, suffix ? ": " : "", suffix ? suffix : "");
	else
		fprintf(stderr, "%s: %s%s%s\n", log_state.ident, msg, suffix ? ": " : "",
			suffix ? suffix : "");
	errno = saved;
}

void log_warn(const char *fmt, ...)
{
	va_list ap;
	const char *e = strerror(errno);

	va_start(ap, fmt);
	vlog(LOG_WARNING, e, fmt, ap);
	va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, NULL, fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, NULL, fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_state.verbosity < 1)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, NULL, fmt, ap);
	va_end(ap);
}

void log_errc(int neg_errno, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, strerror(neg_errno < 0 ? -neg_errno : neg_errno), fmt, ap);
	va_end(ap);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}
