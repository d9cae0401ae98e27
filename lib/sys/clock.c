// SPDX-License-Identifier: MIT
/* The one clock helper: microseconds on a given clock (lib/sys/clock.h). */
#include "clock.h"

usec_t npf_now(clockid_t id)
{
	struct timespec ts;

	/* Cannot fail for the clocks we pass (they exist on every supported kernel). */
	clock_gettime(id, &ts);
	return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / 1000u;
}
