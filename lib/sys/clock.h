/* SPDX-License-Identifier: MIT */
/* The one clock helper (issue 21): microseconds since an epoch, as systemd's usec_t.
 * Monotonic for deadlines and durations, realtime only for what is shown or stored as a
 * date. */
#ifndef NPF_SYS_CLOCK_H
#define NPF_SYS_CLOCK_H

#include <stdint.h>
#include <time.h>

typedef uint64_t usec_t;

#define USEC_PER_MSEC ((usec_t)1000)
#define USEC_PER_SEC ((usec_t)1000000)

/* Now on clock id (CLOCK_MONOTONIC, CLOCK_REALTIME, ...), in microseconds. */
usec_t npf_now(clockid_t id);

#endif
