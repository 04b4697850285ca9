"""The torch operations that reach the operators of `ops/nn18.rs` / `ops/index18.rs` through
torch_npu: torch._foreach_round / floor / ceil / trunc / frac (and the in-place forms) ->
aclnnForeachRoundOffNumberV2; torch_npu.npu_scatter_nd_update(_) -> aclnnScatterNdUpdate;
torch_npu.npu_scatter_list -> aclnnScatterList; torch_npu.npu_transpose_batchmatmul ->
aclnnTransposeBatchMatMul; torch.ops.npu.batch_norm_reduce -> aclnnBatchNormReduce;
torch.ops.npu.batch_norm_gather_stats_update -> aclnnSyncBatchNormGatherStats. Each against
CPU torch (or a CPU formula for the NPU-only operators).
Prints PASS/FAIL per case and `op_breadth_18: N failed`; exits 1 when any case fails.
"""
import sys

import torch
import torch_npu

D = "npu"
FAILED = []
torch.manual_seed(0)


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else repr(e))


def close(got, want, rtol=1e-5, atol=1e-6):
    assert got.device.type == D, f"result on {got.device}"
    torch.testing.assert_close(got.cpu(), want, rtol=rtol, atol=atol)


xs = [torch.tensor([1.5, 2.5, -1.5, -2.7, 0.49]), torch.randn(3, 4) * 5]
for op in ("round", "floor", "ceil", "trunc", "frac"):
    f = getattr(torch, f"_foreach_{op}")
    fi = getattr(torch, f"_foreach_{op}_")

    def out_of_place(f=f):
        got = f([x.to(D) for x in xs])
        for g, w in zip(got, f([x.clone() for x in xs])):
            close(g, w)

    def in_place(fi=fi):
        dev = [x.to(D) for x in xs]
        cpu = [x.clone() for x in xs]
        fi(dev)
        fi(cpu)
        for g, w in zip(dev, cpu):
            close(g, w)

    case(f"foreach_{op}", out_of_place)
    case(f"foreach_{op}_", in_place)


def foreach_round_half():
    got = torch._foreach_round([x.half().to(D) for x in xs])
    for g, w in zip(got, torch._foreach_round([x.half() for x in xs])):
        close(g, w, rtol=0, atol=0)


case("foreach_round_f16", foreach_round_half)


def scatter_nd_update():
    var = torch.randn(5, 3)
    idx = torch.tensor([[4], [0]], dtype=torch.int64)
    upd = torch.randn(2, 3)
    want = var.clone()
    want[4] = upd[0]
    want[0] = upd[1]
    got = torch_npu.npu_scatter_nd_update(var.to(D), idx.to(D), upd.to(D))
    close(got, want, rtol=0, atol=0)
    v = var.to(D)
    torch_npu.npu_scatter_nd_update_(v, idx.to(D), upd.to(D))
    close(v, want, rtol=0, atol=0)


case("npu_scatter_nd_update", scatter_nd_update)


def scatter_list():
    vars_ = [torch.zeros(4, 3), torch.zeros(4, 3)]
    upd = torch.randn(2, 2, 3)
    idx = torch.tensor([1, 2], dtype=torch.int64)
    got = torch_npu.npu_scatter_list([v.to(D) for v in vars_], idx.to(D), upd.to(D), None, "update", -2)
    for b in range(2):
        want = vars_[b].clone()
        want[idx[b]:idx[b] + 2] = upd[b]
        close(got[b], want, rtol=0, atol=0)


case("npu_scatter_list", scatter_list)


def transpose_batchmatmul():
    M, B, K, N = 3, 4, 5, 2
    x1 = torch.randn(M, B, K)
    x2 = torch.randn(B, K, N)
    got = torch_npu.npu_transpose_batchmatmul(x1.to(D), x2.to(D), perm_x1=[1, 0, 2], perm_x2=[0, 1, 2], perm_y=[1, 0, 2])
    want = torch.bmm(x1.permute(1, 0, 2), x2).permute(1, 0, 2)
    close(got, want, rtol=1e-4, atol=1e-4)


case("npu_transpose_batchmatmul", transpose_batchmatmul)


def batch_norm_reduce():
    x = torch.randn(2, 3, 4, 5)
    s, q = torch.ops.npu.batch_norm_reduce(x.to(D), 1e-5)
    close(s, x.sum(dim=(0, 2, 3)), rtol=1e-5, atol=1e-4)
    close(q, (x * x).sum(dim=(0, 2, 3)), rtol=1e-5, atol=1e-4)


case("batch_norm_reduce", batch_norm_reduce)


def gather_stats_update():
    x = torch.randn(4, 3, 2)
    sums = torch.randn(2, 3)
    sq = sums.abs() * 3 + 4
    counts = torch.tensor([5.0, 7.0])
    rm = torch.zeros(3)
    rv = torch.ones(3)
    rmd, rvd = rm.to(D), rv.to(D)
    mean, invstd = torch.ops.npu.batch_norm_gather_stats_update(
        x.to(D), sums.to(D), sq.to(D), rmd, rvd, 0.1, 1e-5, counts.to(D))
    n = counts.sum()
    m = sums.sum(0) / n
    var = sq.sum(0) / n - m * m
    close(mean, m, rtol=1e-5, atol=1e-5)
    close(invstd, 1 / torch.sqrt(var + 1e-5), rtol=1e-5, atol=1e-5)
    close(rmd, 0.9 * rm + 0.1 * m, rtol=1e-5, atol=1e-5)
    close(rvd, 0.9 * rv + 0.1 * var * n / (n - 1), rtol=1e-5, atol=1e-5)


case("batch_norm_gather_stats_update", gather_stats_update)

print(f"op_breadth_18: {len(FAILED)} failed", FAILED if FAILED else "")
sys.exit(1 if FAILED else 0)
