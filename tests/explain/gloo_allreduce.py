# SPDX-License-Identifier: MIT
# A two-line PyTorch Gloo job for tests/netns/explain.sh: init over tcp://MASTER:PORT, one
# allreduce of 4 MiB, check the sum. With no GLOO_SOCKET_IFNAME Gloo binds what the hostname
# resolves to, or loopback with a warning (ProcessGroupGloo::createDefaultDevice): the trap.
import datetime
import sys

import torch
import torch.distributed as dist

rank, world, master, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
dist.init_process_group("gloo", init_method=f"tcp://{master}:{port}", rank=rank,
                        world_size=world, timeout=datetime.timedelta(seconds=20))
t = torch.ones(1 << 20)
dist.all_reduce(t)
assert int(t[0].item()) == world, t[0].item()
print(f"gloo allreduce ok: rank {rank} of {world}", flush=True)
