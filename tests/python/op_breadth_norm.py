"""The torch operations that reach the aclnn operators of `ops/norm.rs` through torch_npu:
the SyncBatchNorm pieces torch.batch_norm_stats, torch.batch_norm_gather_stats_with_counts,
torch.batch_norm_elemt, torch.batch_norm_backward_reduce and torch.batch_norm_backward_elemt
(CUDA-only in CPU torch, so checked against their formulas in CPU torch), and the whole
chain as nn.SyncBatchNorm runs it over two batches against CPU F.batch_norm (forward,
running statistics and gradients) over the concatenated batch; torch_npu.npu_add_rms_norm,
torch_npu.npu_add_layer_norm (with its gradient), torch_npu.npu_fast_gelu /
torch_npu.fast_gelu, torch_npu.npu_geglu (both GELU forms, either half activated, with the
gradient), torch_npu.npu_group_norm_silu, torch_npu.npu_cross_entropy_loss (weights, label smoothing, an
ignored target; with the gradient), F.hardshrink and F.softshrink with their
gradients. Prints PASS/FAIL per case and "op_breadth_norm: N failed"; exits 1 when any case
fails.
"""
import sys

import torch
import torch_npu
import torch.nn.functional as F

D = "npu"
FAILED = []
torch.manual_seed(0)
EPS = 1e-5


def case(name, f):
    try:
        f()
        print("PASS", name, flush=True)
    except Exception as e:  # report every case
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300], flush=True)


def close(got, want, rtol=1e-4, atol=1e-5):
    torch.testing.assert_close(got.cpu(), want, rtol=rtol, atol=atol)


def dims(x):
    return [0] + list(range(2, x.dim()))


def stats(x):
    x = x.double()
    m = x.mean(dims(x))
    v = x.var(dims(x), unbiased=False)
    return m.float(), (1 / (v + EPS).sqrt()).float()


def per_channel(v, x):
    return v.view([1, -1] + [1] * (x.dim() - 2))


x1 = torch.randn(4, 3, 5) * 2 + 1
x2 = torch.randn(2, 3, 5) - 0.5
w = torch.rand(3) + 0.5
b = torch.randn(3)


def batch_norm_stats():
    m, i = torch.batch_norm_stats(x1.to(D), EPS)
    wm, wi = stats(x1)
    close(m, wm)
    close(i, wi)
    # a 4-D non-contiguous (transposed) input
    x4 = torch.randn(3, 2, 4, 5)
    m, i = torch.batch_norm_stats(x4.to(D).transpose(2, 3), EPS)
    wm, wi = stats(x4)
    close(m, wm)
    close(i, wi)


def batch_norm_stats_half():
    xh = x1.half()
    m, i = torch.batch_norm_stats(xh.to(D), EPS)
    assert m.dtype == torch.float32, m.dtype
    wm, wi = stats(xh.float())
    close(m, wm, rtol=1e-3, atol=1e-3)
    close(i, wi, rtol=1e-3, atol=1e-3)


def union():
    xu = torch.cat([x1, x2])
    return xu, *stats(xu), xu.double().var(dims(xu), unbiased=True).float()


def batch_norm_gather_stats_with_counts():
    m1, i1 = torch.batch_norm_stats(x1.to(D), EPS)
    m2, i2 = torch.batch_norm_stats(x2.to(D), EPS)
    rm = torch.tensor([0.5, -1.0, 2.0])
    rv = torch.tensor([1.5, 1.0, 0.25])
    rmn, rvn = rm.to(D), rv.to(D)
    counts = torch.tensor([20.0, 10.0], device=D)
    mean, invstd = torch.batch_norm_gather_stats_with_counts(
        x1.to(D), torch.stack([m1, m2]), torch.stack([i1, i2]), rmn, rvn, 0.1, EPS, counts)
    xu, wm, wi, uvar = union()
    close(mean, wm)
    close(invstd, wi)
    close(rmn, 0.9 * rm + 0.1 * wm)
    close(rvn, 0.9 * rv + 0.1 * uvar)
    # without running statistics; mean/invstd as strided views of one gathered tensor
    comb = torch.cat([torch.cat([m1, i1, counts[:1]]), torch.cat([m2, i2, counts[1:]])]).view(2, 7)
    ma, ia, ca = torch.split(comb, 3, dim=1)
    mean, invstd = torch.batch_norm_gather_stats_with_counts(
        x1.to(D), ma, ia, None, None, 0.1, EPS, ca.reshape(-1))
    close(mean, wm)
    close(invstd, wi)


def batch_norm_elemt():
    m, i = stats(x1)
    y = torch.batch_norm_elemt(x1.to(D), w.to(D), b.to(D), m.to(D), i.to(D), EPS)
    close(y, (x1 - per_channel(m, x1)) * per_channel(i * w, x1) + per_channel(b, x1))
    y = torch.batch_norm_elemt(x1.to(D), None, None, m.to(D), i.to(D), EPS)
    close(y, (x1 - per_channel(m, x1)) * per_channel(i, x1))


def batch_norm_backward_reduce():
    m, i = stats(x1)
    dy = torch.randn_like(x1)
    sd, sdx, gw, gb = torch.batch_norm_backward_reduce(
        dy.to(D), x1.to(D), m.to(D), i.to(D), w.to(D), True, True, True)
    wsd = dy.sum(dims(dy))
    wsdx = (dy * (x1 - per_channel(m, x1))).sum(dims(dy))
    close(sd, wsd)
    close(sdx, wsdx, rtol=1e-4, atol=1e-4)
    close(gw, wsdx * i, rtol=1e-4, atol=1e-4)
    close(gb, wsd)
    sd, sdx, gw, gb = torch.batch_norm_backward_reduce(
        dy.to(D), x1.to(D), m.to(D), i.to(D), None, True, False, False)
    close(sd, wsd)
    close(sdx, wsdx, rtol=1e-4, atol=1e-4)
    assert gw is None and gb is None, (gw, gb)


def batch_norm_backward_elemt():
    m, i = stats(x1)
    dy = torch.randn_like(x1)
    sd = torch.randn(3)
    sdx = torch.randn(3)
    count = torch.tensor([20, 10], dtype=torch.int32)
    gx = torch.batch_norm_backward_elemt(
        dy.to(D), x1.to(D), m.to(D), i.to(D), w.to(D), sd.to(D), sdx.to(D), count.to(D))
    n = 30.0
    want = (dy - per_channel(sd / n, x1) - (x1 - per_channel(m, x1)) * per_channel(i * i * sdx / n, x1)) \
        * per_channel(i * w, x1)
    close(gx, want)


def sync_batch_norm_chain():
    """nn.SyncBatchNorm's forward and backward over two batches, the collectives done by
    hand, against CPU batch norm over the concatenated batch."""
    xu, _, _, _ = union()
    dyu = torch.randn_like(xu)
    xc = xu.clone().requires_grad_(True)
    wc = w.clone().requires_grad_(True)
    bc = b.clone().requires_grad_(True)
    rm_c, rv_c = torch.zeros(3), torch.ones(3)
    yc = F.batch_norm(xc, rm_c, rv_c, wc, bc, training=True, momentum=0.1, eps=EPS)
    yc.backward(dyu)
    parts = [x1.to(D), x2.to(D)]
    dys = [dyu[:4].to(D), dyu[4:].to(D)]
    wn, bn = w.to(D), b.to(D)
    rm, rv = torch.zeros(3, device=D), torch.ones(3, device=D)
    st = [torch.batch_norm_stats(p, EPS) for p in parts]
    counts = torch.tensor([p.numel() // p.size(1) for p in parts], dtype=torch.float32, device=D)
    mean, invstd = torch.batch_norm_gather_stats_with_counts(
        parts[0], torch.stack([s[0] for s in st]), torch.stack([s[1] for s in st]), rm, rv, 0.1, EPS, counts)
    ys = [torch.batch_norm_elemt(p, wn, bn, mean, invstd, EPS) for p in parts]
    close(torch.cat(ys), yc.detach())
    close(rm, rm_c)
    close(rv, rv_c)
    red = [torch.batch_norm_backward_reduce(g, p, mean, invstd, wn, True, True, True) for g, p in zip(dys, parts)]
    sum_dy = red[0][0] + red[1][0]
    sum_dy_xmu = red[0][1] + red[1][1]
    gxs = [torch.batch_norm_backward_elemt(g, p, mean, invstd, wn, sum_dy, sum_dy_xmu, counts.int())
           for g, p in zip(dys, parts)]
    close(torch.cat(gxs), xc.grad, rtol=1e-4, atol=1e-4)
    close(red[0][2] + red[1][2], wc.grad, rtol=1e-4, atol=1e-4)
    close(red[0][3] + red[1][3], bc.grad, rtol=1e-4, atol=1e-4)


def add_rms_norm():
    for dt, tol in [(torch.float32, 1e-5), (torch.float16, 2e-3), (torch.bfloat16, 1.6e-2)]:
        a = torch.randn(2, 3, 8).to(dt)
        c = torch.randn(2, 3, 8).to(dt)
        g = (torch.rand(8) + 0.5).to(dt)
        y, rstd, xs = torch_npu.npu_add_rms_norm(a.to(D), c.to(D), g.to(D), 1e-6)
        wx = a + c
        xf = wx.float()
        wr = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
        close(xs, wx, rtol=tol, atol=tol)
        close(rstd, wr, rtol=1e-4, atol=1e-5)
        close(y, (xf * wr * g.float()).to(dt), rtol=tol, atol=tol)


def add_layer_norm():
    for dt, tol in [(torch.float32, 1e-5), (torch.float16, 3e-3)]:
        a = torch.randn(2, 3, 8).to(dt)
        c = torch.randn(2, 3, 8).to(dt)
        g = (torch.rand(8) + 0.5).to(dt)
        be = torch.randn(8).to(dt)
        ac, cc, gc, bc = (t.float().clone().requires_grad_(True) for t in (a, c, g, be))
        ref = F.layer_norm(ac + cc, (8,), gc, bc, 1e-5)
        dy = torch.randn(2, 3, 8).to(dt)
        ref.backward(dy.float())
        an, cn, gn, bn = (t.to(D).requires_grad_(True) for t in (a, c, g, be))
        y, mean, rstd, x = torch_npu.npu_add_layer_norm(an, cn, gn, bn, 1e-5, True)
        xs = (a.float() + c.float())
        close(y, ref.detach().to(dt), rtol=tol, atol=tol)
        close(mean, xs.mean(-1, keepdim=True), rtol=1e-5, atol=1e-5)
        close(rstd, torch.rsqrt(xs.var(-1, unbiased=False, keepdim=True) + 1e-5), rtol=1e-4, atol=1e-4)
        close(x, (a + c), rtol=tol, atol=tol)
        y.backward(dy.to(D))
        close(an.grad, ac.grad.to(dt), rtol=10 * tol, atol=10 * tol)
        close(cn.grad, cc.grad.to(dt), rtol=10 * tol, atol=10 * tol)
        close(gn.grad, gc.grad.to(dt), rtol=10 * tol, atol=10 * tol)
        close(bn.grad, bc.grad.to(dt), rtol=10 * tol, atol=10 * tol)


def fast_gelu():
    x = torch.randn(3, 7) * 3
    x[0, 0] = -100.0
    xc = x.clone().requires_grad_(True)
    ref = xc * torch.sigmoid(1.702 * xc)
    dy = torch.randn_like(x)
    ref.backward(dy)
    xn = x.to(D).requires_grad_(True)
    y = torch_npu.npu_fast_gelu(xn)
    y.backward(dy.to(D))
    close(y, ref.detach())
    close(xn.grad, xc.grad)
    close(torch_npu.fast_gelu(x.to(D)), ref.detach())
    xh = x.half()
    close(torch_npu.npu_fast_gelu(xh.to(D)), (xh.float() * torch.sigmoid(1.702 * xh.float())).half(),
          rtol=2e-3, atol=2e-3)


def geglu():
    for approx, left in [(1, False), (0, False), (1, True), (0, True)]:
        x = torch.randn(4, 3, 10)
        xc = x.clone().requires_grad_(True)
        a, c = xc.chunk(2, dim=-1)
        act, other = (a, c) if left else (c, a)
        g = F.gelu(act, approximate="tanh" if approx else "none")
        ref = other * g
        dy = torch.randn(4, 3, 5)
        ref.backward(dy)
        xn = x.to(D).requires_grad_(True)
        y, gn = torch_npu.npu_geglu(xn, dim=-1, approximate=approx, activate_left=left)
        close(y, ref.detach())
        close(gn, g.detach())
        y.backward(dy.to(D))
        close(xn.grad, xc.grad)


def group_norm_silu():
    for dt, tol in [(torch.float32, 1e-5), (torch.float16, 3e-3)]:
        x = torch.randn(2, 6, 3, 4).to(dt)
        w = (torch.rand(6) + 0.5).to(dt)
        b = torch.randn(6).to(dt)
        y, mean, rstd = torch_npu.npu_group_norm_silu(x.to(D), w.to(D), b.to(D), 3, 1e-5)
        xf = x.float()
        close(y, F.silu(F.group_norm(xf, 3, w.float(), b.float(), 1e-5)).to(dt), rtol=tol, atol=tol)
        grp = xf.reshape(2, 3, -1)
        close(mean, grp.mean(-1).to(dt), rtol=tol, atol=tol)
        close(rstd, torch.rsqrt(grp.var(-1, unbiased=False) + 1e-5).to(dt), rtol=tol, atol=tol)


def cross_entropy_loss():
    for red, smooth, weighted in [("mean", 0.0, False), ("mean", 0.1, True), ("sum", 0.0, True), ("none", 0.2, False)]:
        x = torch.randn(6, 5)
        t = torch.tensor([0, 4, -100, 2, 1, 3])
        w = torch.rand(5) + 0.5 if weighted else None
        xc = x.clone().requires_grad_(True)
        ref = F.cross_entropy(xc, t, weight=w, reduction=red, ignore_index=-100, label_smoothing=smooth)
        dy = torch.rand_like(ref) + 0.5
        ref.backward(dy)
        xn = x.to(D).requires_grad_(True)
        loss, log_prob, _, _ = torch_npu.npu_cross_entropy_loss(
            xn, t.to(D), None if w is None else w.to(D), reduction=red, ignore_index=-100, label_smoothing=smooth)
        close(loss.reshape(ref.shape), ref.detach())
        close(log_prob, F.log_softmax(x, 1))
        loss.backward(dy.reshape(loss.shape).to(D))
        close(xn.grad, xc.grad)


def shrink(fn):
    def run():
        x = torch.tensor([-2.0, -0.5, -0.3, 0.0, 0.3, 0.5, 0.7, 3.0, float("nan")])
        for lam in [0.5, 0.0, 1.5]:
            xc = x.clone().requires_grad_(True)
            ref = fn(xc, lam)
            ref.backward(torch.arange(9.0))
            xn = x.to(D).requires_grad_(True)
            y = fn(xn, lam)
            y.backward(torch.arange(9.0).to(D))
            torch.testing.assert_close(y.detach().cpu(), ref.detach(), equal_nan=True)
            close(xn.grad, xc.grad)
        x2 = torch.randn(4, 5).t()
        close(fn(x2.to(D), 0.25), fn(x2, 0.25))
        xh = torch.randn(6).half()
        close(fn(xh.to(D), 0.5), fn(xh.float(), 0.5).half(), rtol=1e-3, atol=1e-3)
    return run


for name, f in [
    ("batch_norm_stats", batch_norm_stats),
    ("batch_norm_stats_half", batch_norm_stats_half),
    ("batch_norm_gather_stats_with_counts", batch_norm_gather_stats_with_counts),
    ("batch_norm_elemt", batch_norm_elemt),
    ("batch_norm_backward_reduce", batch_norm_backward_reduce),
    ("batch_norm_backward_elemt", batch_norm_backward_elemt),
    ("sync_batch_norm_chain", sync_batch_norm_chain),
    ("npu_add_rms_norm", add_rms_norm),
    ("npu_add_layer_norm", add_layer_norm),
    ("npu_fast_gelu", fast_gelu),
    ("npu_geglu", geglu),
    ("npu_group_norm_silu", group_norm_silu),
    ("npu_cross_entropy_loss", cross_entropy_loss),
    ("hardshrink", shrink(F.hardshrink)),
    ("softshrink", shrink(F.softshrink)),
]:
    case(name, f)

print(f"op_breadth_norm: {len(FAILED)} failed", flush=True)
sys.exit(1 if FAILED else 0)
