"""Seed document 001, AllGather: the document's snippet (4 ranks: 4 x [256, 768] = [1024, 768]),
then a check that b is every rank's a, in rank order.

    npu-emu run -n 4 python3 allgather.py
"""

import torch

import hccl
import snippet

SEED = 2000
torch.manual_seed(SEED + hccl.get_rank())

ns = snippet.run("allgather")

rank, world_size, b = ns["rank"], ns["world_size"], ns["b"].cpu()
assert world_size == 4, "the document's shapes are for 4 ranks: run with npu-emu run -n 4"
want = torch.cat([torch.randn(256, 768, generator=torch.Generator().manual_seed(SEED + r))
                  for r in range(world_size)])
assert torch.equal(b, want), f"rank {rank}: b is not the ranks' a, in rank order"
print(f"rank {rank}: PASS (all_gather of 4 x [256, 768] into {list(b.shape)})")
