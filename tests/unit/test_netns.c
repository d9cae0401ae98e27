// SPDX-License-Identifier: MIT
/* daemon/netns.c: telling a local API client's network namespace from the daemon's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* after the headers it needs */
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* The daemon is an executable, not a library: compile the module in here. */
#include "npf_test.h"
#include "../../daemon/netns.c"

static void compare_rules(void **state)
{
	struct dmn_netns_id a = {
	    .cookie = 1, .have_cookie = true, .dev = 4, .ino = 10, .have_inode = true};
	struct dmn_netns_id b = a;
	(void)state;

	assert_int_equal(dmn_netns_compare(&a, &b), DMN_NETNS_SAME);
	b.cookie = 2;
	assert_int_equal(dmn_netns_compare(&a, &b), DMN_NETNS_FOREIGN);
	/* The cookie decides when both have one, even if the inodes agree. */
	b.ino = 10;
	assert_int_equal(dmn_netns_compare(&a, &b), DMN_NETNS_FOREIGN);
	/* Inodes only (kernels before 5.14 on one side). */
	b.have_cookie = false;
	assert_int_equal(dmn_netns_compare(&a, &b), DMN_NETNS_SAME);
	b.ino = 11;
	assert_int_equal(dmn_netns_compare(&a, &b), DMN_NETNS_FOREIGN);
	b.dev = 5;
	b.ino = 10;
	assert_int_equal(dmn_netns_compare(&a, &b), DMN_NETNS_FOREIGN);
	/* Nothing comparable: cannot tell. */
	b.have_inode = false;
	assert_int_equal(dmn_netns_compare(&a, &b), DMN_NETNS_UNKNOWN);
	a.have_inode = false;
	b.have_cookie = true;
	a.have_cookie = false;
	assert_int_equal(dmn_netns_compare(&a, &b), DMN_NETNS_UNKNOWN);
}

static void same_namespace_peer(void **state)
{
	struct dmn_netns_id self, peer;
	int sv[2];
	(void)state;

	assert_int_equal(dmn_netns_self(&self), 0);
	assert_true(self.have_cookie || self.have_inode);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(dmn_netns_client(sv[0], getpid(), &peer), 0);
	assert_int_equal(dmn_netns_compare(&self, &peer), DMN_NETNS_SAME);
	close(sv[0]);
	close(sv[1]);
	/* No such pid and a socket that is not one: an error, never "same". */
	assert_true(dmn_netns_client(-1, 0, &peer) < 0);
}

/* A child in a network namespace of its own connects by path: foreign. Needs
 * CAP_SYS_ADMIN (root or a user namespace); skipped without it. */
static void other_namespace_peer(void **state)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct dmn_netns_id self, peer;
	int lfd, cfd, st;
	pid_t child;
	(void)state;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "/tmp/npf-test-netns.%d", (int)getpid());
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int fd;

		if (unshare(CLONE_NEWNET) < 0)
			_exit(77);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
			_exit(1);
		/* Hold the connection until the parent has looked. */
		char b;
		(void)!read(fd, &b, 1);
		_exit(0);
	}
	/* A child that could not unshare exits without connecting: poll for that. */
	for (int i = 0; i < 100; i++) {
		if (waitpid(child, &st, WNOHANG) == child) {
			close(lfd);
			unlink(sun.sun_path);
			if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
				npf_skip("cannot create a network namespace here");
			fail_msg("child exited early: %d", st);
		}
		struct timeval tv = {0, 20000};
		fd_set rf;

		FD_ZERO(&rf);
		FD_SET(lfd, &rf);
		if (select(lfd + 1, &rf, NULL, NULL, &tv) > 0)
			break;
	}
	cfd = accept(lfd, NULL, NULL);
	assert_true(cfd >= 0);
	assert_int_equal(dmn_netns_self(&self), 0);
	assert_int_equal(dmn_netns_client(cfd, child, &peer), 0);
	assert_int_equal(dmn_netns_compare(&self, &peer), DMN_NETNS_FOREIGN);
	close(cfd);
	assert_int_equal(waitpid(child, &st, 0), child);
	close(lfd);
	unlink(sun.sun_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(compare_rules),
	    cmocka_unit_test(same_namespace_peer),
	    cmocka_unit_test(other_namespace_peer),
	};

	return npf_run_tests(tests, NULL, NULL);
}
