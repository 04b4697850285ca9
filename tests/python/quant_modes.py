"""Quantisation modes torch_npu reaches through aclnnQuantMatmulV5 and aclnnDynamicQuantV2,
against CPU references written from the operators' formulas:
- npu_quant_matmul with int4 x1/x2 (int32 words of eight, low nibble first), x2 plain
  (k, n/8) and the (k/8, n) transpose of an (n, k/8) weight, float scale (turned into the
  64-bit parameter by torch_npu);
- npu_quant_matmul G-B (group_sizes [1, 128, 128]: per-token-per-128-block x1 scale, per
  128x128-block weight scale, bfloat16 out);
- npu_quant_matmul A8W4 (int8 x1, int4 x2, K-G groups of 256 along k, yOffset as offset);
- npu_dynamic_quant / npu_dynamic_quant_asymmetric with group_index (per-expert
  smooth_scales) and dst_type quint4x2 (int4 packed in int32);
- npu_weight_quant_batchmatmul with an int4 weight packed in int32 (by npu_convert_weight_to_int4pack,
  and a transposed one), per-channel and per-group antiquant scale and offset
  (aclnnWeightQuantBatchMatmulV2);
- npu_quant_scatter / npu_quant_scatter_ (aclnnInplaceQuantScatter): updates quantised as
  round(updates / scale + zero_point) into an int8 cache along axis -2, 1-D and [B, 2] indices;
- npu_group_quant (aclnnGroupQuant): rows grouped by cumulative ends, per-group scale, one
  offset, int8 and quint4x2 (int4 packed in int32) outputs.
Prints PASS/FAIL per case and exits 1 when any case fails.
"""
import sys

import torch
import torch_npu  # noqa: F401

D = "npu"
FAILED = []
torch.manual_seed(0)


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else repr(e))


def pack4(v):
    """int4 values (..., c) -> int32 (..., c/8), low nibble first."""
    v = (v.to(torch.int64) & 0xF).reshape(*v.shape[:-1], v.shape[-1] // 8, 8)
    w = torch.zeros(v.shape[:-1], dtype=torch.int64)
    for i in range(8):
        w |= v[..., i] << (4 * i)
    return torch.where(w >= 2**31, w - 2**32, w).to(torch.int32)


def unpack4(w):
    w = w.to(torch.int64) & 0xFFFFFFFF
    parts = [((w >> (4 * i)) & 0xF) for i in range(8)]
    v = torch.stack(parts, -1).reshape(*w.shape[:-1], w.shape[-1] * 8)
    return torch.where(v >= 8, v - 16, v)


def int4_matmul():
    m, k, n = 5, 64, 32
    a = torch.randint(-8, 8, (m, k))
    b = torch.randint(-8, 8, (k, n))
    scale = torch.randint(1, 16, (n,)).float() / 64
    want = (a.double() @ b.double()) * scale.double()
    for name, x2 in (("plain", pack4(b)), ("transposed", pack4(b.t().contiguous()).t())):
        got = torch_npu.npu_quant_matmul(
            pack4(a).to(D), x2.to(D), scale.to(D), output_dtype=torch.float16
        )
        assert got.shape == (m, n), (name, got.shape)
        torch.testing.assert_close(got.cpu().double(), want, rtol=2e-3, atol=1e-2)


def gb_matmul():
    m, k, n = 4, 512, 256
    a = torch.randint(-128, 128, (m, k), dtype=torch.int8)
    w = torch.randint(-128, 128, (n, k), dtype=torch.int8)
    s1 = torch.rand(m, k // 128) + 0.01
    s2 = torch.rand(n // 128, k // 128) / 64
    bias = torch.randn(n)
    ab = a.double().reshape(m, k // 128, 128)
    wb = w.double().reshape(n, k // 128, 128)
    blocks = torch.einsum("ibp,jbp->ijb", ab, wb)
    sc = s1.double()[:, None, :] * s2.double().repeat_interleave(128, 0)[None, :, :]
    want = (blocks * sc).sum(-1) + bias.double()
    got = torch_npu.npu_quant_matmul(
        a.to(D),
        w.to(D).t(),
        s2.to(D).t(),
        pertoken_scale=s1.to(D),
        bias=bias.to(D),
        output_dtype=torch.bfloat16,
        group_sizes=[1, 128, 128],
    )
    torch.testing.assert_close(got.cpu().double(), want, rtol=1e-2, atol=1e-1)


def a8w4_matmul():
    m, k, n = 3, 512, 16
    a = torch.randint(-128, 128, (m, k), dtype=torch.int8)
    b = torch.randint(-8, 8, (k, n))
    s2 = torch.randint(1, 16, (k // 256, n)).float() / 64
    s1 = torch.rand(m, 1) / 16
    yo = torch.randn(n)
    q = torch_npu.npu_trans_quant_param(s2.reshape(-1).to(D)).reshape(k // 256, n)
    wdeq = b.double() * s2.double().repeat_interleave(256, 0)
    want = ((a.double() @ wdeq) + yo.double()) * s1.double()
    got = torch_npu.npu_quant_matmul(
        a.to(D),
        pack4(b).to(D),
        q,
        offset=yo.to(D),
        pertoken_scale=s1.to(D),
        output_dtype=torch.float16,
        group_sizes=[0, 0, 256],
    )
    assert got.shape == (m, n), got.shape
    torch.testing.assert_close(got.cpu().double(), want, rtol=2e-3, atol=1e-2)


def dyn_ref(x, smooth, group_index, qmax, qmin, asym):
    rows = x.reshape(-1, x.shape[-1]).float()
    ends = group_index.tolist()
    ex = [next((e for e, end in enumerate(ends) if end > r), len(ends) - 1) for r in range(rows.shape[0])]
    inp = rows * smooth.float()[ex]
    if asym:
        mx, mn = inp.max(-1).values, inp.min(-1).values
        sc = (mx - mn) / (qmax - qmin)
        off = qmax - mx / sc
    else:
        sc = inp.abs().max(-1).values / qmax
        off = torch.zeros_like(sc)
    y = torch.round(inp / sc[:, None] + off[:, None]).clamp(qmin, qmax)
    return y.reshape(x.shape), sc.reshape(x.shape[:-1]), off.reshape(x.shape[:-1])


def dyn_quant(dst, asym):
    def run():
        x = torch.randn(2, 4, 32, dtype=torch.float16)
        smooth = (torch.rand(3, 32) + 0.5).to(torch.float16)
        gi = torch.tensor([3, 3, 8], dtype=torch.int32)
        qmax, qmin = (7, -8) if dst is not None else (127, -128)
        wy, ws, wo = dyn_ref(x, smooth, gi, qmax, qmin, asym)
        kw = dict(smooth_scales=smooth.to(D), group_index=gi.to(D))
        if dst is not None:
            kw["dst_type"] = dst
        if asym:
            y, s, o = torch_npu.npu_dynamic_quant_asymmetric(x.to(D), **kw)
            torch.testing.assert_close(o.cpu(), wo, rtol=1e-5, atol=1e-5)
        else:
            y, s = torch_npu.npu_dynamic_quant(x.to(D), **kw)
        y = y.cpu()
        if dst is not None:
            assert y.dtype == torch.int32 and y.shape == (2, 4, 4), (y.dtype, y.shape)
            y = unpack4(y)
        torch.testing.assert_close(s.cpu(), ws, rtol=1e-5, atol=1e-7)
        torch.testing.assert_close(y.to(torch.float32), wy, rtol=0, atol=0)

    return run


def wqbmm_int4():
    m, k, n = 3, 64, 16
    x = (torch.randn(m, k) / 4).half()
    w = torch.randint(-8, 8, (k, n), dtype=torch.int32)
    for name, scale, offset, group in (
        ("per-channel", torch.rand(n) / 8 + 0.01, torch.randint(-2, 3, (n,)).float(), 0),
        ("per-group 32", torch.rand(k // 32, n) / 8 + 0.01, None, 32),
    ):
        sc, of = scale.half(), None if offset is None else offset.half()
        rows = torch.arange(k) // group if group else None
        s_full = sc.float()[rows] if group else sc.float().expand(k, n)
        o_full = 0 if of is None else of.float().expand(k, n)
        # the antiquant weight in float16, then an f32 product rounded once
        deq = ((w.float() + o_full).half().float() * s_full).half().float()
        want = (x.float() @ deq).half()
        packed = torch_npu.npu_convert_weight_to_int4pack(w.to(D))
        assert packed.dtype == torch.int32 and packed.shape == (k, n // 8), (packed.dtype, packed.shape)
        got = torch_npu.npu_weight_quant_batchmatmul(
            x.to(D), packed, sc.to(D), antiquant_offset=None if of is None else of.to(D),
            antiquant_group_size=group)
        torch.testing.assert_close(got.cpu().float(), want.float(), rtol=2e-3, atol=2e-3,
                                   msg=lambda s: f"{name}: {s}")
    # the transposed weight ([n, k] packed along k, viewed as [k, n])
    wt = torch_npu.npu_convert_weight_to_int4pack(w.t().contiguous().to(D)).t()
    sc = (torch.rand(n) / 8 + 0.01).half()
    want = (x.float() @ (w.float() * sc.float()).half().float()).half()
    got = torch_npu.npu_weight_quant_batchmatmul(x.to(D), wt, sc.to(D))
    torch.testing.assert_close(got.cpu().float(), want.float(), rtol=2e-3, atol=2e-3)


def group_quant():
    x = torch.randn(7, 16) * 3
    scale = torch.rand(3, 16) * 4 + 0.1
    gi = torch.tensor([2, 2, 7])  # group 1 is empty
    rows = torch.tensor([0, 0, 2, 2, 2, 2, 2])
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        xs, ss = x.to(dtype), scale.to(dtype)
        off = torch.tensor([1.5]).to(dtype)
        v = xs.float() * ss.float()[rows] + off.float()
        want8 = torch.round(v).clamp(-128, 127).to(torch.int8)
        got = torch_npu.npu_group_quant(xs.to(D), ss.to(D), gi.to(D), offset=off.to(D))
        assert got.dtype == torch.int8, got.dtype
        assert torch.equal(got.cpu(), want8), f"{dtype}: int8 differs"
        got4 = torch_npu.npu_group_quant(xs.to(D), ss.to(D), gi.int().to(D), offset=off.to(D),
                                         dst_dtype=torch.quint4x2)
        assert got4.dtype == torch.int32 and got4.shape == (7, 2), (got4.dtype, got4.shape)
        assert torch.equal(unpack4(got4.cpu()), torch.round(v).clamp(-8, 7).long()), f"{dtype}: int4 differs"


def quant_scatter():
    g = torch.Generator().manual_seed(9)
    var = torch.randint(-100, 100, (3, 2, 8, 32), generator=g).to(torch.int8)
    upd = torch.randn(2, 2, 3, 32, generator=g)
    for dt, sdt, zdt in ((torch.float16, torch.float32, torch.int32), (torch.bfloat16, torch.bfloat16, torch.bfloat16)):
        u = upd.to(dt)
        sc = (torch.rand(1, 1, 1, 32, generator=g) * 0.05 + 0.01).to(sdt)
        zp = torch.randint(-3, 4, (1, 1, 1, 32), generator=g).to(zdt)
        q = torch.round(u.float() / sc.float().reshape(32) + zp.float().reshape(32)).clamp(-128, 127).to(torch.int8)
        # 1-D indices: row i of updates into row i of var at offset indices[i] along axis -2
        idx = torch.tensor([4, 1], dtype=torch.int32)
        want = var.clone()
        for i in range(2):
            want[i, :, idx[i]:idx[i] + 3, :] = q[i]
        got = torch_npu.npu_quant_scatter(var.to(D), idx.to(D), u.to(D), sc.to(D), zp.to(D), axis=-2, quant_axis=-1)
        assert torch.equal(got.cpu(), want), f"{dt}: 1-D indices"
        # [B, 2] indices (row, offset), in place, no zero points
        idx2 = torch.tensor([[2, 5], [0, 0]], dtype=torch.int64)
        q0 = torch.round(u.float() / sc.float().reshape(32)).clamp(-128, 127).to(torch.int8)
        want = var.clone()
        want[2, :, 5:8, :] = q0[0]
        want[0, :, 0:3, :] = q0[1]
        t = var.to(D)
        torch_npu.npu_quant_scatter_(t, idx2.to(D), u.to(D), sc.to(D), None, axis=-2, quant_axis=-1)
        assert torch.equal(t.cpu(), want), f"{dt}: [B, 2] indices in place"


case("quant_matmul_int4", int4_matmul)
case("quant_matmul_gb", gb_matmul)
case("quant_matmul_a8w4_kg", a8w4_matmul)
case("dynamic_quant_group_index", dyn_quant(None, False))
case("dynamic_quant_asym_group_index", dyn_quant(None, True))
case("dynamic_quant_group_index_int4", dyn_quant(torch.quint4x2, False))
case("dynamic_quant_asym_int4", dyn_quant(torch.quint4x2, True))
case("weight_quant_batchmatmul_int4", wqbmm_int4)
case("group_quant", group_quant)
case("quant_scatter", quant_scatter)

print(f"quant_modes: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
