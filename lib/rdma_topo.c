// SPDX-License-Identifier: MIT
/* PCIe locality of RDMA devices and GPUs (lib/rdma_topo.h). Pure: PCI paths in. */
#include "rdma_topo.h"

#include <string.h>

/* Splits a PCI path into its components; returns the count (at most max). */
static size_t split(const char *path, const char *comp[], size_t len[], size_t max)
{
	size_t n = 0;

	while (*path && n < max) {
		const char *slash = strchr(path, '/');
		size_t l = slash ? (size_t)(slash - path) : strlen(path);

		if (l) {
			comp[n] = path;
			len[n++] = l;
		}
		if (!slash)
			break;
		path = slash + 1;
	}
	return n;
}

#define PCI_DEPTH_MAX 32

/* components: [0] the root complex ("pci0000:00"), then one PCI device per bridge level.
 * NCCL flattens a PCIe switch (upstream and downstream ports) into one switch node, so
 * two devices each at most two levels (downstream port, device) below a shared bridge
 * sit on one switch: PIX. */
enum rdma_pci_path rdma_pci_path(const char *a, const char *b)
{
	const char *ca[PCI_DEPTH_MAX], *cb[PCI_DEPTH_MAX];
	size_t la[PCI_DEPTH_MAX], lb[PCI_DEPTH_MAX], na, nb, common = 0;

	if (!a || !b || !a[0] || !b[0])
		return RDMA_PATH_UNKNOWN;
	na = split(a, ca, la, PCI_DEPTH_MAX);
	nb = split(b, cb, lb, PCI_DEPTH_MAX);
	if (na < 2 || nb < 2 || strncmp(ca[0], "pci", 3) != 0 || strncmp(cb[0], "pci", 3) != 0)
		return RDMA_PATH_UNKNOWN;
	while (common < na && common < nb && la[common] == lb[common] &&
	       memcmp(ca[common], cb[common], la[common]) == 0)
		common++;
	if (common == 0)
		return RDMA_PATH_SYS;
	if (common == 1) /* only the root complex: through the host bridge */
		return RDMA_PATH_PHB;
	if (na - common <= 2 && nb - common <= 2 && common >= 3)
		return RDMA_PATH_PIX;
	return RDMA_PATH_PXB;
}

void rdma_topo_rails(struct npf_inventory *inv, const char *const *gpus, size_t n)
{
	inv->n_gpus = n;
	for (size_t d = 0; d < inv->n_rdma; d++)
		inv->rdma[d].gpu_rail = !inv->rdma[d].pci[0];
	for (size_t g = 0; g < n; g++) {
		enum rdma_pci_path best = RDMA_PATH_UNKNOWN;

		for (size_t d = 0; d < inv->n_rdma; d++) {
			enum rdma_pci_path p = rdma_pci_path(gpus[g], inv->rdma[d].pci);

			if (p < best)
				best = p;
		}
		for (size_t d = 0; d < inv->n_rdma && best != RDMA_PATH_UNKNOWN; d++)
			if (rdma_pci_path(gpus[g], inv->rdma[d].pci) == best)
				inv->rdma[d].gpu_rail = true;
	}
}
