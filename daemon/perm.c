// SPDX-License-Identifier: MIT
/* Who may make the daemon probe: SO_PEERCRED and SO_PEERGROUPS against root, the daemon's
 * user and [daemon] check_group, and the address-literal rule for peer names. */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "daemon.h"
#include "log.h"

#define LITERAL_PEER_MSG                                                                           \
	"peer '%s' is an address literal; uid %u must name hosts (only root and the daemon's "   \
	"user may probe addresses)"

#define NSS_BUF_MIN 16384
#define NSS_BUF_MAX (1u << 20)

/* getgrnam_r with a buffer that grows on ERANGE (big LDAP groups overflow 16 KiB).
 * Returns the malloc'd buffer (caller frees) or NULL; *r gets the lookup's error (0
 * with *out NULL: no such entry). */
static char *nss_gr(const char *name, struct group *gr, struct group **out, int *r)
{
	char *buf = NULL;

	for (size_t sz = NSS_BUF_MIN; sz <= NSS_BUF_MAX; sz *= 2) {
		char *nb = realloc(buf, sz);

		if (!nb)
			break;
		buf = nb;
		*r = getgrnam_r(name, gr, buf, sz, out);
		if (*r != ERANGE)
			return buf;
	}
	free(buf);
	*out = NULL;
	return NULL;
}

/* The connection decides (SO_PEERCRED's gid, SO_PEERGROUPS), never the client's word
 * and never NSS's current view of the user: a user removed from the group keeps no
 * rights for new connections, one added gets them with a new login. */
static bool in_group(const struct ctl_client *c, gid_t want)
{
	if (c->gid == want)
		return true;
	for (size_t i = 0; i < c->n_groups; i++)
		if (c->groups[i] == want)
			return true;
	return false;
}

/* check_group's gid, looked up at most once per DMN_PERM_TTL_US. */
static bool check_gid(struct npf_daemon *d, gid_t *out)
{
	usec_t now = npf_now(CLOCK_MONOTONIC);
	struct group gr, *grp = NULL;
	int r = 0;
	char *buf;

	if (d->check_gid.until_us <= now) {
		buf = nss_gr(d->cfg.daemon.check_group, &gr, &grp, &r);
		d->check_gid.found = buf && r == 0 && grp;
		if (d->check_gid.found)
			d->check_gid.gid = grp->gr_gid;
		else if (r)
			log_errc(-r, "check_group '%s' lookup", d->cfg.daemon.check_group);
		else
			log_warnx("check_group '%s' does not exist", d->cfg.daemon.check_group);
		free(buf);
		d->check_gid.until_us = now + DMN_PERM_TTL_US;
	}
	*out = d->check_gid.gid;
	return d->check_gid.found;
}

static bool privileged(const struct ctl_client *c)
{
	return c->uid == 0 || c->uid == geteuid();
}

bool ctl_may_probe(struct npf_daemon *d, const struct ctl_client *c)
{
	gid_t want;

	if (privileged(c))
		return true;
	if (!d->cfg.daemon.check_group[0])
		return false;
	return check_gid(d, &want) && in_group(c, want);
}

const char *ctl_literal_peer(const struct ctl_client *c, const struct npf_api_request *req)
{
	struct in_addr a;

	if (privileged(c))
		return NULL;
	/* inet_aton() is what getaddrinfo() tries first: every form it takes is an address,
	 * whatever /etc/hosts or DNS say (names may not hold ':', so no IPv6 literal). */
	for (size_t i = 0; i < req->n_peers; i++)
		if (inet_aton(req->peers[i], &a))
			return req->peers[i];
	return NULL;
}

bool ctl_refuse_probe(struct npf_daemon *d, struct ctl_client *c,
		      const struct npf_api_request *req, const char *context)
{
	const char *lit;

	if (!ctl_may_probe(d, c)) {
		ctl_reply(c, npf_api_reply_error(NPF_API_E_FORBIDDEN,
						 "%suid %u may not start probes (allowed: root, "
						 "the daemon's user, group '%s')",
						 context, (unsigned)c->uid,
						 d->cfg.daemon.check_group));
		return true;
	}
	if ((lit = ctl_literal_peer(c, req))) {
		ctl_reply(c, npf_api_reply_error(NPF_API_E_FORBIDDEN, LITERAL_PEER_MSG, lit,
						 (unsigned)c->uid));
		return true;
	}
	return false;
}
