/* SPDX-License-Identifier: MIT */
/* The one log API (shaped like OpenBGPD's log.c). lib/ parsers never log: they
 * return -errno and the daemon or CLI reports. All functions preserve errno. */
#ifndef NPF_LOG_H
#define NPF_LOG_H

#include <stdarg.h>

enum npf_log_dest {
	NPF_LOG_STDERR = 0,  /* plain "netpreflightd: msg" lines */
	NPF_LOG_JOURNAL = 1, /* "<3>msg" prefixes that journald turns into priorities */
};

/* verbosity: 0 = info and above, 1 = debug. ident names the program. */
void log_init(const char *ident, enum npf_log_dest dest, int verbosity);
void log_set_verbosity(int verbosity);
int log_get_verbosity(void);

/* log_warn appends ": strerror(errno)"; log_warnx does not. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Error with an explicit -errno code (our return convention). */
void log_errc(int neg_errno, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Broken invariants at start-up only. */
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
