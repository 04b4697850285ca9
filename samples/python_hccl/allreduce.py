"""Seed document 001, AllReduce: the document's snippet on every rank, then a check that x is
the sum of every rank's torch.randn(1024, 1024) (each rank seeds torch's generator with
1000 + its rank first, so every rank can recompute every rank's x).

    npu-emu run -n 4 python3 allreduce.py
"""

import torch

import hccl
import snippet

SEED = 1000
torch.manual_seed(SEED + hccl.get_rank())

ns = snippet.run("allreduce")

rank, world_size, x = ns["rank"], ns["world_size"], ns["x"].cpu()
want = sum(torch.randn(1024, 1024, generator=torch.Generator().manual_seed(SEED + r))
           for r in range(world_size))
assert torch.allclose(x, want, rtol=1e-5, atol=1e-5), f"rank {rank}: x is not the sum over the ranks"
print(f"rank {rank}: PASS (all_reduce sum of {x.numel()} float32 over {world_size} ranks)")
