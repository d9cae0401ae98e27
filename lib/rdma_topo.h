/* SPDX-License-Identifier: MIT */
/* Rails where GPUs are present: the RDMA devices NCCL's own topology pairs with a GPU,
 * from PCIe locality (docs/decision.md, the rail rule). */
#ifndef NPF_RDMA_TOPO_H
#define NPF_RDMA_TOPO_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* How far apart two PCI devices are, as NCCL's path types order it (src/graph/topo.h:
 * PATH_PIX < PATH_PXB < PATH_PHB < PATH_SYS): lower is closer. */
enum rdma_pci_path {
	RDMA_PATH_PIX = 0, /* below one PCIe switch: at most one bridge between them */
	RDMA_PATH_PXB,	   /* through several bridges, not through the host bridge */
	RDMA_PATH_PHB,	   /* through the host bridge of one root complex (the CPU) */
	RDMA_PATH_SYS,	   /* across root complexes (the inter-CPU link) */
	RDMA_PATH_UNKNOWN,
};

/* The path type between two PCI paths as sysfs resolves them under devices/
 * ("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:05:00.0"). */
enum rdma_pci_path rdma_pci_path(const char *a, const char *b);

/* Sets each device's gpu_rail: a device is a rail when it is among the closest (lowest
 * path type) devices of some GPU, as ncclTopoGetLocal (src/graph/topo.cc) picks a GPU's
 * local NICs (bandwidth is not modelled: equal). gpus[0..n) are the GPUs' PCI paths;
 * inv->n_gpus is set to n. A device whose PCI path is unknown is kept (gpu_rail true):
 * nothing says NCCL would not pair it. */
void rdma_topo_rails(struct npf_inventory *inv, const char *const *gpus, size_t n);

#endif
