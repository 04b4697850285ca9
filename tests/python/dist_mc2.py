"""torch_npu's fused matmul + collective APIs (the MC2 operators) against CPU torch.

Launched with N ranks by `npu-emu run -n N python dist_mc2.py` (or torchrun). Every rank
makes every rank's inputs from a seed, so each can compute the expected result on the CPU:

- torch_npu.npu_mm_all_reduce_base(x1, x2, hcom, bias=...) = sum over ranks of x1_r @ x2_r + bias_r
  (2-D and 3-D x1; and with x3, which every rank adds before the reduction);
- the same with INT8 x1/x2 and dequant_scale (QuantMatmulAllReduce; with pertoken_scale, V2);
- torch_npu.npu_all_gather_base_mm(x1, x2, hcom, world_size, gather_output=...) =
  (cat_r x1_r) @ x2, and the gathered x1;
- torch_npu.npu_mm_reduce_scatter_base(x1, x2, hcom, world_size) = this rank's block of rows
  of sum_r x1_r @ x2_r.

Each rank's product is rounded to the dtype before the reduction (as the operator does);
tolerances are stated per dtype. Prints "ok <name>" per check and
"dist_mc2 rank R/N passed (K checks)", or exits 1 naming what failed.
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
dev = torch.device("npu", torch.npu.current_device())
pg = dist.distributed_c10d._get_default_group()
hcom = pg._get_backend(dev).get_hccl_comm_name(rank)
checks = 0
failed = []
TOL = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def check(name, fn):
    global checks
    try:
        fn()
        checks += 1
        print(f"ok {name}", flush=True)
    except Exception:  # report every failure, then fail the rank
        failed.append(name)
        print(f"FAIL {name}:\n{traceback.format_exc()}", flush=True)


def inputs(shape, dtype, r, seed):
    g = torch.Generator().manual_seed(1000 * seed + r)
    return (torch.rand(shape, generator=g) * 2 - 1).to(dtype)


def close(got, want, dtype):
    got = got.cpu().float()
    want = want.float()
    tol = TOL[dtype]
    assert got.shape == want.shape, f"shape {tuple(got.shape)}, want {tuple(want.shape)}"
    err = ((got - want).abs() / (1 + want.abs())).max().item()
    assert err <= tol, f"relative error {err} > {tol}"


def mm_rounded(a, b, dtype, bias=None):
    out = a.float() @ b.float()
    if bias is not None:
        out = out + bias.float()
    return out.to(dtype).float()


def mm_all_reduce(dtype, three_d):
    shape = (2, 3, 64) if three_d else (6, 64)
    want = 0
    for r in range(ws):
        want = want + mm_rounded(inputs(shape, dtype, r, 1), inputs((64, 32), dtype, r, 2), dtype,
                                 inputs((32,), dtype, r, 3))
    want = want.to(dtype)
    x1 = inputs(shape, dtype, rank, 1).to(dev)
    x2 = inputs((64, 32), dtype, rank, 2).to(dev)
    bias = inputs((32,), dtype, rank, 3).to(dev)
    out = torch_npu.npu_mm_all_reduce_base(x1, x2, hcom, reduce_op="sum", bias=bias)
    close(out, want, dtype)


def mm_all_reduce_x3(dtype):
    # allreduce(x1 @ x2 + x3): every rank adds its x3 to its rounded product
    want = 0
    for r in range(ws):
        p = mm_rounded(inputs((8, 64), dtype, r, 4), inputs((64, 16), dtype, r, 5), dtype)
        want = want + (p + inputs((8, 16), dtype, r, 6).float()).to(dtype).float()
    want = want.to(dtype)
    out = torch_npu.npu_mm_all_reduce_base(inputs((8, 64), dtype, rank, 4).to(dev),
                                           inputs((64, 16), dtype, rank, 5).to(dev), hcom,
                                           reduce_op="sum", x3=inputs((8, 16), dtype, rank, 6).to(dev))
    close(out, want, dtype)


def all_gather_mm(dtype, gather_output):
    x1s = [inputs((4, 256), dtype, r, 7) for r in range(ws)]
    x2 = inputs((256, 16), dtype, rank, 8)
    gathered = torch.cat(x1s)
    out, g = torch_npu.npu_all_gather_base_mm(x1s[rank].to(dev), x2.to(dev), hcom, ws,
                                              gather_index=0, gather_output=gather_output)
    close(out, mm_rounded(gathered, x2, dtype).to(dtype), dtype)
    if gather_output:
        assert torch.equal(g.cpu(), gathered), "gathered x1 differs"
    else:
        assert g.numel() == 0, f"gather output has shape {tuple(g.shape)}"


def mm_reduce_scatter(dtype):
    m = 2 * ws
    want = 0
    for r in range(ws):
        want = want + mm_rounded(inputs((m, 256), dtype, r, 9), inputs((256, 8), dtype, r, 10), dtype)
    want = want.to(dtype)[rank * 2:(rank + 1) * 2]
    out = torch_npu.npu_mm_reduce_scatter_base(inputs((m, 256), dtype, rank, 9).to(dev),
                                               inputs((256, 8), dtype, rank, 10).to(dev), hcom, ws,
                                               reduce_op="sum")
    close(out, want, dtype)


def quant_mm_all_reduce(pertoken):
    # INT8 x1/x2, INT32 bias: per rank ((x1 @ x2 + bias) * scale (* pertoken)) rounded to the
    # output dtype (BF16 with a BF16 scale; FLOAT16 with a FLOAT scale and pertoken_scale).
    dtype = torch.float16 if pertoken else torch.bfloat16

    def ints(shape, r, seed):
        g = torch.Generator().manual_seed(1000 * seed + r)
        return torch.randint(-100, 100, shape, generator=g, dtype=torch.int8)

    def scale(r):
        s = (torch.arange(16) % 5 + 1 + r) * 0.001
        return s.float() if pertoken else s.to(torch.bfloat16)

    def tok(r):
        return (torch.arange(6) % 3 * 0.25 + 0.5 + r).float()

    want = 0
    for r in range(ws):
        acc = ints((6, 64), r, 11).int() @ ints((64, 16), r, 12).int() + ints((16,), r, 13).int()
        v = acc.float() * scale(r).float()
        if pertoken:
            v = v * tok(r)[:, None]
        want = want + v.to(dtype).float()
    want = want.to(dtype)
    extra = {"pertoken_scale": tok(rank).to(dev)} if pertoken else {}
    out = torch_npu.npu_mm_all_reduce_base(ints((6, 64), rank, 11).to(dev), ints((64, 16), rank, 12).to(dev),
                                           hcom, reduce_op="sum", bias=ints((16,), rank, 13).int().to(dev),
                                           dequant_scale=scale(rank).to(dev), **extra)
    assert out.dtype == dtype, f"output dtype {out.dtype}"
    close(out, want, dtype)


check("npu_mm_all_reduce_base int8 bf16 dequant_scale", lambda: quant_mm_all_reduce(False))
check("npu_mm_all_reduce_base int8 pertoken_scale", lambda: quant_mm_all_reduce(True))

for dt in (torch.float16, torch.bfloat16):
    n = str(dt).split(".")[1]
    check(f"npu_mm_all_reduce_base 2-D {n}", lambda: mm_all_reduce(dt, False))
    check(f"npu_mm_all_reduce_base 3-D {n}", lambda: mm_all_reduce(dt, True))
    check(f"npu_mm_all_reduce_base x3 {n}", lambda: mm_all_reduce_x3(dt))
    check(f"npu_all_gather_base_mm {n}", lambda: all_gather_mm(dt, True))
    check(f"npu_all_gather_base_mm no gather output {n}", lambda: all_gather_mm(dt, False))
    check(f"npu_mm_reduce_scatter_base {n}", lambda: mm_reduce_scatter(dt))

dist.barrier()
dist.destroy_process_group()
if failed:
    print(f"dist_mc2 rank {rank}/{ws} FAILED: {failed}", flush=True)
    sys.exit(1)
print(f"dist_mc2 rank {rank}/{ws} passed ({checks} checks)", flush=True)
