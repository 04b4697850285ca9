"""c10d collectives through torch_npu's ProcessGroupHCCL on a job spanning servers, using only
host-to-device and device-to-host copies besides the collectives (so it runs where no aclnn
operator is built; that is why `dist.barrier()`, which torch_npu runs on a OnesLike tensor, is
not here: dist_collectives.py has it).

Launched on each server by `torchrun --nnodes M --node_rank I ... dist_hosts.py` (root info)
or `npu-emu run --nnodes M --node-rank I ... python dist_hosts.py` (a rank table listing
every server). Each rank checks its results against values computed on the host and prints
"dist_hosts rank R/N on HOST passed (K checks)", or exits 1 naming what failed.
"""
import os
import socket
import sys
import traceback

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

rank = int(os.environ["RANK"])
ws = int(os.environ["WORLD_SIZE"])
torch.npu.set_device(int(os.environ.get("LOCAL_RANK", rank)))
dist.init_process_group("hccl")
assert dist.get_rank() == rank and dist.get_world_size() == ws
dev = torch.device("npu", torch.npu.current_device())
checks = 0
failed = []


def check(name, fn):
    global checks
    try:
        fn()
        checks += 1
    except Exception:  # report every failure, then fail the rank
        failed.append(name)
        print(f"FAIL {name}:\n{traceback.format_exc()}", flush=True)


def eq(got, want):
    got = got.cpu()
    assert torch.equal(got, want), f"got {got.tolist()}, want {want.tolist()}"


def base(r, n, dtype):
    # Small integers: exact in every dtype, whatever order the reduction adds in.
    return ((torch.arange(n, dtype=torch.int64) * 3 + r * 7) % 11).to(dtype)


N = 1000 * ws + 3  # not a multiple of anything in particular
for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int8):

    def all_reduce(op, dtype=dtype):
        t = base(rank, N, dtype).to(dev)
        dist.all_reduce(t, op=op)
        parts = [base(r, N, torch.float64) for r in range(ws)]
        if op == dist.ReduceOp.SUM:
            want = sum(parts)
        elif op == dist.ReduceOp.MAX:
            want = torch.stack(parts).max(0).values
        else:
            want = torch.stack(parts).min(0).values
        eq(t, want.to(dtype))

    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN):
        check(f"all_reduce {op} {dtype}", lambda op=op: all_reduce(op))

    def broadcast(dtype=dtype):
        src = ws - 1
        t = base(rank, N, dtype).to(dev)
        dist.broadcast(t, src)
        eq(t, base(src, N, dtype))

    check(f"broadcast {dtype}", broadcast)

    def all_gather(dtype=dtype):
        out = torch.empty(ws * N, dtype=dtype, device=dev)
        dist.all_gather_into_tensor(out, base(rank, N, dtype).to(dev))
        eq(out, torch.cat([base(r, N, dtype) for r in range(ws)]))

    check(f"all_gather_into_tensor {dtype}", all_gather)

    def reduce_scatter(dtype=dtype):
        out = torch.empty(N, dtype=dtype, device=dev)
        dist.reduce_scatter_tensor(out, base(rank, ws * N, dtype).to(dev))
        full = sum(base(r, ws * N, torch.float64) for r in range(ws))
        eq(out, full[rank * N:(rank + 1) * N].to(dtype))

    check(f"reduce_scatter_tensor {dtype}", reduce_scatter)

    def all_to_all(dtype=dtype):
        out = torch.empty(ws * N, dtype=dtype, device=dev)
        dist.all_to_all_single(out, base(rank, ws * N, dtype).to(dev))
        want = torch.cat([base(r, ws * N, dtype)[rank * N:(rank + 1) * N] for r in range(ws)])
        eq(out, want)

    check(f"all_to_all_single {dtype}", all_to_all)


def send_recv():
    # A ring across the servers: every rank sends to the next, receives from the previous.
    nxt, prv = (rank + 1) % ws, (rank - 1) % ws
    out = torch.empty(N, dtype=torch.float32, device=dev)
    reqs = dist.batch_isend_irecv([
        dist.P2POp(dist.isend, base(rank, N, torch.float32).to(dev), nxt),
        dist.P2POp(dist.irecv, out, prv),
    ])
    for q in reqs:
        q.wait()
    eq(out, base(prv, N, torch.float32))


check("batch_isend_irecv ring", send_recv)

if failed:
    print(f"dist_hosts rank {rank}/{ws} FAILED: {', '.join(failed)}", flush=True)
    sys.exit(1)
dist.destroy_process_group()
print(f"dist_hosts rank {rank}/{ws} on {socket.gethostname()} passed ({checks} checks)", flush=True)
