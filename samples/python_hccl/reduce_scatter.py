"""Seed document 001, ReduceScatter: the document's snippet (4 ranks: each gets a [256, 1024]
slice), then a check that out is slice `rank` of the sum of every rank's g.

    npu-emu run -n 4 python3 reduce_scatter.py
"""

import torch

import hccl
import snippet

SEED = 3000
torch.manual_seed(SEED + hccl.get_rank())

ns = snippet.run("reduce_scatter")

rank, world_size, out = ns["rank"], ns["world_size"], ns["out"].cpu()
k = 1024 // world_size
total = sum(torch.randn(1024, 1024, generator=torch.Generator().manual_seed(SEED + r))
            for r in range(world_size))
assert torch.allclose(out, total[rank * k:(rank + 1) * k], rtol=1e-5, atol=1e-5), \
    f"rank {rank}: out is not slice {rank} of the sum"
print(f"rank {rank}: PASS (reduce_scatter: slice {rank} of the sum, shape {list(out.shape)})")
