"""nn.SyncBatchNorm on NPU tensors across ranks (torch_npu's ProcessGroupHCCL on npu-emu):
batch_norm_stats, an all_gather, batch_norm_gather_stats_with_counts and batch_norm_elemt
forward; batch_norm_backward_reduce, an all_reduce and batch_norm_backward_elemt backward.

Launched by `npu-emu run -n N python dist_sync_bn.py`. Every rank builds the same global
batch (ranks get 2, 3, 4, ... samples), runs its slice through nn.SyncBatchNorm, and checks
its output, input gradient, the all-reduced weight and bias gradients and the running
statistics against CPU F.batch_norm over the whole batch. Prints
"dist_sync_bn rank R/N passed" or exits 1.
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch_npu  # noqa: F401

rank = int(os.environ["RANK"])
ws = int(os.environ["WORLD_SIZE"])
# The process group first, the device after, as many training scripts do: torch_npu's
# ProcessGroupHCCL then configures the runtime (aclrtSetOpWaitTimeout) before any aclInit.
dist.init_process_group("hccl")
torch.npu.set_device(int(os.environ.get("LOCAL_RANK", rank)))
dev = torch.device("npu", torch.npu.current_device())

C = 3
torch.manual_seed(7)
sizes = [2 + r for r in range(ws)]
xu = torch.randn(sum(sizes), C, 4, 2) * 1.5 + 0.5
dyu = torch.randn_like(xu)
w0 = torch.rand(C) + 0.5
b0 = torch.randn(C)
start = sum(sizes[:rank])
sl = slice(start, start + sizes[rank])

# CPU reference over the whole batch
xc = xu.clone().requires_grad_(True)
wc = w0.clone().requires_grad_(True)
bc = b0.clone().requires_grad_(True)
rm_c, rv_c = torch.zeros(C), torch.ones(C)
yc = F.batch_norm(xc, rm_c, rv_c, wc, bc, training=True, momentum=0.1, eps=1e-5)
yc.backward(dyu)

bn = nn.SyncBatchNorm(C, eps=1e-5, momentum=0.1).to(dev)
with torch.no_grad():
    bn.weight.copy_(w0)
    bn.bias.copy_(b0)
x = xu[sl].to(dev).requires_grad_(True)
y = bn(x)
y.backward(dyu[sl].to(dev))
gw, gb = bn.weight.grad.clone(), bn.bias.grad.clone()
dist.all_reduce(gw)
dist.all_reduce(gb)


def close(name, got, want):
    torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=1e-4, atol=1e-4, msg=lambda m: f"{name}: {m}")


try:
    close("output", y, yc[sl])
    close("input grad", x.grad, xc.grad[sl])
    close("weight grad", gw, wc.grad)
    close("bias grad", gb, bc.grad)
    close("running mean", bn.running_mean, rm_c)
    close("running var", bn.running_var, rv_c)
except AssertionError as e:
    print(f"FAIL rank {rank}: {e}", flush=True)
    sys.exit(1)
print(f"dist_sync_bn rank {rank}/{ws} passed", flush=True)
dist.destroy_process_group()
