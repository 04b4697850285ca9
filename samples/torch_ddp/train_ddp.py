"""DDP training of a small model on emulated NPUs, through torch_npu's ProcessGroupHCCL.

The scene of seed document 000 (section 4.1): the model's forward and backward run on every
rank's NPU, and DDP's hooks all-reduce the gradients with HCCL after the backward, so no
communication code is written here.

    source target/npu-emu/set_env.sh
    npu-emu run -n 2 python samples/torch_ddp/train_ddp.py
    npu-emu run -n 4 python samples/torch_ddp/train_ddp.py
    python -m torch.distributed.run --nproc_per_node 4 samples/torch_ddp/train_ddp.py

Every rank trains on its shard of one global batch of 64 samples. The sample checks that
(1) after training every rank holds bit-identical parameters, and (2) the loss of every step
(the mean of the ranks' losses) equals the loss of a single-process run on the whole batch,
within a relative 1e-5 (averaging equal shards' gradients is the whole batch's gradient; only
the order of additions differs). Rank 0 prints PASS and the job exits 0, or it exits 1.
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch_npu  # noqa: F401
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS, BATCH, RTOL = 10, 64, 1e-5


def make_model():
    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 5))


def batch():
    g = torch.Generator().manual_seed(42)
    return torch.randn(BATCH, 20, generator=g), torch.randint(0, 5, (BATCH,), generator=g)


def train(model, x, y, step_hook):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(STEPS):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        step_hook(step, loss)


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.npu.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group("hccl")
    assert BATCH % world == 0, f"{world} ranks do not divide a batch of {BATCH}"
    device = torch.device("npu", torch.npu.current_device())

    x, y = batch()
    shard = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
    model = DDP(make_model().to(device), device_ids=[device.index])
    ddp_losses = []

    def record(step, loss):
        mean = loss.detach().clone()
        dist.all_reduce(mean)  # the mean of the ranks' losses is the whole batch's loss
        ddp_losses.append(mean.item() / world)
        if rank == 0:
            print(f"step {step}: loss {ddp_losses[-1]:.6f}", flush=True)

    train(model, x[shard].to(device), y[shard].to(device), record)

    # (1) Every rank ends with the same parameters, bit for bit.
    flat = torch.cat([p.detach().reshape(-1) for p in model.module.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    same = all(torch.equal(g.cpu(), gathered[0].cpu()) for g in gathered)

    ok = same
    if rank == 0:
        # (2) A single process on the whole batch (on the CPU) sees the same losses.
        ref = []
        train(make_model(), x, y, lambda step, loss: ref.append(loss.item()))
        worst = max(abs(a - b) / abs(b) for a, b in zip(ddp_losses, ref))
        print(f"parameters identical on all {world} ranks: {same}")
        print(f"largest relative difference from the single-process losses: {worst:.2e} (tolerance {RTOL:.0e})")
        ok = same and worst <= RTOL and ref[-1] < ref[0]
        print("PASS" if ok else "FAIL", flush=True)
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
