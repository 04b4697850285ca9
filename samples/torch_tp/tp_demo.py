"""Tensor parallelism with the seed document's MyDistributedLayer (my_distributed_layer.py,
its code unmodified): a row-parallel linear layer y = x · Wᵀ whose input features are split
over the ranks. Every rank computes its partial product with the custom Ascend C operator
(torch.ops.my_ascend_ops.custom_linear), then dist.all_reduce sums the partial products over
HCCL. Every rank checks y against x · Wᵀ computed on the CPU and prints PASS.

    source target/npu-emu/set_env.sh
    make -C samples/torch_tp PYTHON=target/venv/bin/python
    npu-emu run -n 2 target/venv/bin/python samples/torch_tp/tp_demo.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch_npu  # noqa: E402,F401

import my_ascend_ops_plugin  # noqa: E402
from my_distributed_layer import MyDistributedLayer  # noqa: E402

M, K, N = 6, 32, 16  # batch, input features (split over the ranks), output features

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.npu.set_device(int(os.environ.get("LOCAL_RANK", rank)))
dist.init_process_group("hccl")
assert K % (8 * world) == 0, f"{K} input features do not split into slices of 8 over {world} ranks"

g = torch.Generator().manual_seed(0)
x = torch.randn(M, K, generator=g)  # the whole batch, on the host
w = torch.randn(N, K, generator=g)  # the whole weight
cols = slice(rank * K // world, (rank + 1) * K // world)  # this rank's input features

my_ascend_ops_plugin.set_weight(w[:, cols].contiguous().npu())
layer = MyDistributedLayer()
y = layer(x[:, cols].contiguous())  # "x 已经按卡切分好了": the slice of x for this rank

want = x @ w.T
err = (y.cpu() - want).abs().max().item()
ok = torch.allclose(y.cpu(), want, rtol=1e-5, atol=1e-5)
print(f"rank {rank}: y[0, :4] = {[round(v, 4) for v in y[0, :4].cpu().tolist()]}, "
      f"max |y - x·Wᵀ| = {err:.2e}: {'PASS' if ok else 'FAIL'}", flush=True)
dist.destroy_process_group()
sys.exit(0 if ok else 1)
