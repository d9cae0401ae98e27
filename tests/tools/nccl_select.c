// SPDX-License-Identifier: MIT
/* nccl_select: which of this namespace's interfaces an NCCL_SOCKET_IFNAME value selects under
 * NCCL's grammar, and which one NCCL's bootstrap would bind, for the netns env tests. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "model.h"
#include "nccl_default.h"
#include "ncclmatch.h"

/* Prints "select IFNAME" for every interface of the live inventory the value selects
 * (ncclmatch, socket semantics), then "pick IFNAME ADDRESS" for NCCL's bootstrap choice
 * with that value (nccl_socket_pick, current NCCL), or "pick -" when NCCL finds none.
 * Exit 0, or 2 on a usage error or when the value does not parse. */
int main(int argc, char **argv)
{
	struct npf_inventory inv = { 0 };
	struct ncclmatch_list l;
	struct nccl_pick pick;
	char ip[INET6_ADDRSTRLEN];
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: nccl_select NCCL_SOCKET_IFNAME-VALUE\n");
		return 2;
	}
	r = ncclmatch_parse(argv[1], NCCLMATCH_SOCKET, &l);
	if (r < 0) {
		fprintf(stderr, "nccl_select: '%s': %s\n", argv[1], strerror(-r));
		return 2;
	}
	r = npf_inventory_collect(&inv, NULL);
	if (r < 0) {
		fprintf(stderr, "nccl_select: inventory: %s\n", strerror(-r));
		return 2;
	}
	for (size_t i = 0; i < inv.n_ifaces; i++)
		if (ncclmatch_ifname(&l, inv.ifaces[i].name))
			printf("select %s\n", inv.ifaces[i].name);
	r = nccl_socket_pick(&inv, 0, 0, argv[1], &pick);
	if (r == 0)
		printf("pick %s %s\n", pick.ifname, npf_addr_str(&pick.addr, ip, sizeof(ip)));
	else
		printf("pick -\n");
	npf_inventory_clear(&inv);
	return 0;
}
