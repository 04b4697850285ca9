"""The document's advice on overlapping communication and computation (its third pitfall):
start hccl.all_reduce_async, compute something else while it runs, then hccl.wait before
reading the result. Runs at any number of ranks.

    npu-emu run -n 2 python3 overlap.py
"""

import torch

import hccl

rank = hccl.get_rank()
world_size = hccl.get_world_size()
grad = torch.full((1 << 20,), float(rank + 1)).npu()

all_reduce_handle = hccl.all_reduce_async(grad, op=hccl.Sum)
# Meanwhile: work that does not touch grad (here on the host).
a = torch.randn(256, 256)
busy = (a @ a).sum()
hccl.wait(all_reduce_handle)  # only now may grad be read

want = world_size * (world_size + 1) / 2
assert (grad.cpu() == want).all(), f"rank {rank}: grad is not the sum"
print(f"rank {rank}: PASS (all_reduce_async of {grad.numel()} float32 while computing on the host)")
