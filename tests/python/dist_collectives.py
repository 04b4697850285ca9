"""Every c10d collective on NPU tensors through torch_npu's ProcessGroupHCCL on npu-emu's HCCL.

Launched with N ranks by `npu-emu run -n N python dist_collectives.py` (rank table) or by
`torchrun --nproc_per_node N dist_collectives.py` (root info). Each rank checks its results
against values computed on the host, prints "ok <name>" per check and finally
"dist_collectives rank R/N passed (K checks)", or exits 1 naming what failed.
"""
import os
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
        print(f"ok {name}", flush=True)
    except Exception:  # report every failure, then fail the rank
        failed.append(name)
        print(f"FAIL {name}:\n{traceback.format_exc()}", flush=True)


def eq(got, want):
    got = got.cpu()
    assert torch.equal(got, want), f"got {got.tolist()}, want {want.tolist()}"


def all_reduce_ops():
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64):
        base = torch.arange(6).to(dtype)
        x = (base + rank).to(dev)
        dist.all_reduce(x)
        eq(x, (base * ws + sum(range(ws))).to(dtype))
    x = torch.tensor([rank, -rank, 3], dtype=torch.int32).to(dev)
    dist.all_reduce(x, op=dist.ReduceOp.MAX)
    eq(x, torch.tensor([ws - 1, 0, 3], dtype=torch.int32))
    x = torch.tensor([rank, -rank], dtype=torch.float32).to(dev)
    dist.all_reduce(x, op=dist.ReduceOp.MIN)
    eq(x, torch.tensor([0.0, -(ws - 1.0)]))
    x = torch.full((3,), float(rank + 1)).to(dev)
    dist.all_reduce(x, op=dist.ReduceOp.PRODUCT)
    prod = 1.0
    for r in range(ws):
        prod *= r + 1
    eq(x, torch.full((3,), prod))
    # A tensor made on the device, and a non-contiguous view of one.
    y = torch.ones(4, 3, device=dev) * (rank + 1)
    dist.all_reduce(y)
    eq(y, torch.full((4, 3), float(ws * (ws + 1) // 2)))


check("all_reduce (sum of 5 dtypes, max, min, product, device-made)", all_reduce_ops)


def broadcast():
    for src in range(ws):
        x = torch.full((5,), float(rank)).to(dev)
        dist.broadcast(x, src=src)
        eq(x, torch.full((5,), float(src)))


check("broadcast from every rank", broadcast)


def reduce():
    dst = ws - 1
    x = torch.full((3,), float(rank + 1)).to(dev)
    dist.reduce(x, dst=dst)
    if rank == dst:
        eq(x, torch.full((3,), float(ws * (ws + 1) // 2)))


check("reduce", reduce)


def all_gather():
    x = torch.full((2,), float(rank)).to(dev)
    out = [torch.empty(2, device=dev) for _ in range(ws)]
    dist.all_gather(out, x)
    for r in range(ws):
        eq(out[r], torch.full((2,), float(r)))


check("all_gather", all_gather)


def all_gather_into_tensor():
    x = torch.full((2, 3), float(rank)).to(dev)
    out = torch.empty(2 * ws, 3, device=dev)
    dist.all_gather_into_tensor(out, x)
    eq(out, torch.cat([torch.full((2, 3), float(r)) for r in range(ws)]))


check("all_gather_into_tensor", all_gather_into_tensor)


def reduce_scatter_tensor():
    x = torch.arange(2 * ws, dtype=torch.float32).to(dev)
    out = torch.empty(2, device=dev)
    dist.reduce_scatter_tensor(out, x)
    eq(out, torch.tensor([2.0 * rank * ws, (2.0 * rank + 1) * ws]))


check("reduce_scatter_tensor", reduce_scatter_tensor)


def all_to_all_single():
    x = (torch.arange(ws, dtype=torch.float32) + 100 * rank).to(dev)
    out = torch.empty(ws, device=dev)
    dist.all_to_all_single(out, x)
    eq(out, torch.tensor([100.0 * r + rank for r in range(ws)]))
    # Uneven splits: rank r sends r+1 elements to every peer.
    send = torch.full(((rank + 1) * ws,), float(rank)).to(dev)
    recv = torch.empty(sum(r + 1 for r in range(ws)), device=dev)
    dist.all_to_all_single(recv, send, output_split_sizes=[r + 1 for r in range(ws)],
                           input_split_sizes=[rank + 1] * ws)
    eq(recv, torch.cat([torch.full((r + 1,), float(r)) for r in range(ws)]))


check("all_to_all_single (even and uneven splits)", all_to_all_single)


check("barrier", lambda: dist.barrier())


def send_recv():
    # A ring: even ranks send first, odd ranks receive first.
    nxt, prv = (rank + 1) % ws, (rank - 1) % ws
    s = torch.full((4,), float(rank)).to(dev)
    r = torch.empty(4, device=dev)
    if rank % 2 == 0:
        dist.send(s, dst=nxt)
        dist.recv(r, src=prv)
    else:
        dist.recv(r, src=prv)
        dist.send(s, dst=nxt)
    eq(r, torch.full((4,), float(prv)))


check("send/recv ring", send_recv)


def batch_isend_irecv():
    nxt, prv = (rank + 1) % ws, (rank - 1) % ws
    s = torch.full((3,), float(rank)).to(dev)
    r = torch.empty(3, device=dev)
    ops = [dist.P2POp(dist.isend, s, nxt), dist.P2POp(dist.irecv, r, prv)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    eq(r, torch.full((3,), float(prv)))


check("batch_isend_irecv", batch_isend_irecv)


def new_group():
    evens = list(range(0, ws, 2))
    odds = list(range(1, ws, 2))
    ge = dist.new_group(evens)
    go = dist.new_group(odds) if odds else None
    mine, g = (evens, ge) if rank % 2 == 0 else (odds, go)
    x = torch.full((2,), float(rank + 1)).to(dev)
    dist.all_reduce(x, group=g)
    eq(x, torch.full((2,), float(sum(r + 1 for r in mine))))
    dist.broadcast(x, src=mine[-1], group=g)
    eq(x, torch.full((2,), float(sum(r + 1 for r in mine))))


check("new_group sub-groups", new_group)


def async_ops():
    x = torch.ones(4).to(dev)
    y = torch.full((2,), float(rank)).to(dev)
    out = torch.empty(2 * ws, device=dev)
    w1 = dist.all_reduce(x, async_op=True)
    w2 = dist.all_gather_into_tensor(out, y, async_op=True)
    w1.wait()  # makes the current stream wait for the collective
    w2.wait()
    torch.npu.synchronize()
    assert w1.is_completed() and w2.is_completed()
    eq(x, torch.full((4,), float(ws)))
    eq(out, torch.cat([torch.full((2,), float(r)) for r in range(ws)]))


check("async_op=True with wait()", async_ops)


def coalesced():
    xs = [torch.full((3,), float(rank + i)).to(dev) for i in range(3)]
    with dist._coalescing_manager(async_ops=True) as cm:
        for x in xs:
            dist.all_reduce(x)
    cm.wait()
    for i, x in enumerate(xs):
        eq(x, torch.full((3,), float(sum(r + i for r in range(ws)))))


check("coalesced all_reduce (HcclGroupStart/End)", coalesced)

dist.destroy_process_group()
if failed:
    print(f"dist_collectives rank {rank}/{ws} FAILED: {', '.join(failed)}", flush=True)
    sys.exit(1)
print(f"dist_collectives rank {rank}/{ws} passed ({checks} checks)", flush=True)
