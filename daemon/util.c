// SPDX-License-Identifier: MIT
/* Helpers every daemon module may call (and that call none of them): directories, the
 * service manager's status line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "probe.h"

int dmn_mkdir_p(const char *path, mode_t mode)
{
	char buf[NPF_CONFIG_PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;

		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = saved;
		if (!saved)
			break;
	}
	return 0;
}

void dmn_notify_status(struct npf_daemon *d)
{
	char line[512];
	size_t n_up = 0, n_if = d->inv ? d->inv->n_ifaces : 0;

	for (size_t i = 0; i < n_if; i++)
		n_up += (d->inv->ifaces[i].flags & IFF_UP) != 0;
	snprintf(line, sizeof(line), "%s: %zu interfaces (%zu up), %u clients, last check: %s",
		 d->node_name, n_if, n_up, d->n_clients,
		 d->last_summary[0] ? d->last_summary : "none");
	const char *lerr = npf_probe_listen_error(d->probe);

	if (lerr) {
		/* Not ready until the probe port is ours on every candidate. */
		snprintf(line, sizeof(line), "%s: probe port not bound on %s", d->node_name, lerr);
		sd_notifyf(0, "STATUS=%s", line);
		return;
	}
	/* Ready means answering: the first inventory is built, the socket listens
	 * and the probe port is bound on every candidate. */
	if (d->ready && d->listen_src && !d->ready_notified) {
		sd_notifyf(0, "READY=1\nSTATUS=%s", line);
		d->ready_notified = true;
	} else {
		sd_notifyf(0, "STATUS=%s", line);
	}
}
