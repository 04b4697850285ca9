"""The int4 quantisation paths torch_npu documents on Atlas A2/A3, against CPU references
written from the operators' formulas:
- npu_quantize(..., dtype=torch.quint4x2, div_mode=False) (aclnnAscendQuantV3, dstType 3):
  round(x * scale + offset) half to even, saturated to [-8, 7], eight a word along the last
  axis, low nibble first; per-tensor and per-channel scale, with offset;
- the same with x cast to FRACTAL_NZ (format 29): the result is an INT32 FRACTAL_NZ tensor in
  CANN's int4 NZ layout, read back here through npu_grouped_matmul;
- npu_grouped_matmul A4W4 (aclnnGroupedMatmulWeightNz / V5): int4 x (int32 words) and an NZ
  or ND int4 weight, UINT64 scale (float32 bits in the low word) per channel or per K group,
  per-token scale, float16 / bfloat16 out; rows past the last group not written;
- npu_grouped_matmul_swiglu_quant_v2 A8W8 (aclnnGroupedMatmulSwigluQuantWeightNzV2 / V2):
  int8 grouped matmul, per-token and per-channel dequantisation, SwiGLU (first half the
  activation), per-row dynamic int8 quantisation, NZ and ND weights, cumsum and count lists;
- npu_quant_matmul_reduce_sum (aclnnQuantMatmulReduceSumWeightNz): sum over the batch of
  int8 products times x1_scale (per batch and row) and x2_scale (per column), bfloat16 out;
- npu_rotate_quant (aclnnRotateQuant, Atlas A2/A3 form): block rotation stored in x's type,
  per-row symmetric int8 and quint4x2 quantisation;
- npu_transpose_quant_batchmatmul, npu_dynamic_dual_level_mx_quant and
  npu_grouped_dynamic_block_quant: Ascend 950 only, refused on Atlas A2 (161002, platform);
- error cases with the documented code 161002 and the argument named.
Prints PASS/FAIL per case and exits 1 when any case fails.
"""
import sys

import numpy as np
import torch
import torch_npu  # noqa: F401

D = "npu"
FAILED = []
torch.manual_seed(31)
torch.npu.config.allow_internal_format = True


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


def quant4_ref(x, scale, offset):
    """round(x * scale + offset) in float32, half to even, saturated to int4."""
    v = x.float() * scale.float()
    if offset is not None:
        v = v + offset.float()
    v = torch.round(v)  # torch.round is half to even
    return torch.clamp(v, -8, 7).to(torch.int64)


def expect_error(f, words):
    try:
        f()
        torch.npu.synchronize()
    except RuntimeError as err:
        s = str(err)
        assert "161002" in s and all(w in s for w in words), s[:500]
    else:
        raise AssertionError(f"no error (expected {words})")


def quantize_int4():
    # per tensor, ties and saturation
    x = torch.tensor([[0.5, 1.5, 2.5, -0.5, -1.5, 9.0, -9.0, 7.49] * 2], dtype=torch.float32)
    s = torch.tensor([1.0])
    y = torch_npu.npu_quantize(x.to(D), s.to(D), None, torch.quint4x2, -1, False)
    assert y.dtype == torch.int32 and y.shape == (1, 2), (y.dtype, y.shape)
    want = quant4_ref(x, s, None)
    assert torch.equal(unpack4(y.cpu()), want), (unpack4(y.cpu()), want)
    assert torch.equal(y.cpu(), pack4(want)), "packing: low nibble first"
    # per channel with offset, float16 and bfloat16 inputs
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        x = (torch.randn(3, 5, 32) * 6).to(dt)
        s = (torch.rand(32) + 0.25).to(dt)
        o = torch.randint(-2, 3, (32,)).to(dt)
        y = torch_npu.npu_quantize(x.to(D), s.to(D), o.to(D), torch.quint4x2, -1, False)
        want = quant4_ref(x, s, o)
        got = unpack4(y.cpu())
        assert torch.equal(got, want), f"{dt}: {(got != want).sum()} mismatches"


def quantize_int4_errors():
    # the last dimension must be a multiple of 8 (torch_npu's own check)
    try:
        torch_npu.npu_quantize(torch.randn(2, 12).to(D), torch.tensor([1.0]).to(D), None,
                               torch.quint4x2, -1, False)
    except RuntimeError as err:
        assert "divded by 8" in str(err) or "divided by 8" in str(err), str(err)[:300]
    else:
        raise AssertionError("last dim 12: no error")
    # a scale of the wrong length is ACLNN_ERR_PARAM_INVALID naming scale
    expect_error(
        lambda: torch_npu.npu_quantize(torch.randn(2, 16).to(D), torch.ones(5).to(D), None,
                                       torch.quint4x2, -1, False),
        ["scale"],
    )


def scale_u64(s):
    """float32 scales -> int64 64-bit parameters with the float bits in the low word."""
    a = s.numpy().astype(np.float32).view(np.uint32).astype(np.int64)
    return torch.from_numpy(a)


def gmm_ref(xv, wv, sc, pt, ends, out_dt):
    """A4W4: per K group the exact product times its scale, rounded to out_dt and summed in
    out_dt; times the per-token scale in float32, rounded to out_dt."""
    m, k = xv.shape
    e, _, n = wv.shape
    g = sc.shape[1]
    gk = k // g
    y = torch.zeros(m, n, dtype=out_dt)
    written = torch.zeros(m, dtype=torch.bool)
    start = 0
    for ei, end in enumerate(ends):
        for r in range(start, end):
            acc = None
            for gi in range(g):
                dot = (xv[r, gi * gk:(gi + 1) * gk].double() @ wv[ei, gi * gk:(gi + 1) * gk].double())
                part = (dot.float() * sc[ei, gi].float()).to(out_dt)
                acc = part if acc is None else (acc.float() + part.float()).to(out_dt)
            y[r] = (acc.float() * pt[r]).to(out_dt) if pt is not None else acc
            written[r] = True
        start = end
    return y, written


def gmm_a4w4(nz, per_group, out_dt):
    def run():
        e, m, k, n = 2, 12, 32, 64
        xv = torch.randint(-8, 8, (m, k))
        wv = torch.randint(-8, 8, (e, k, n))
        g = 2 if per_group else 1
        sc = torch.rand(e, g, n) / 64 + 1 / 128
        # the kernel's 64-bit parameter keeps 19 bits of the float: clear the low 13 bits
        sc = torch.from_numpy((sc.numpy().view(np.uint32) & 0xFFFFE000).view(np.float32))
        pt = torch.rand(m) + 0.5
        ends = [5, 10]
        x_q = torch_npu.npu_quantize(xv.float().to(D), torch.tensor([1.0]).to(D), None,
                                     torch.quint4x2, -1, False)
        assert torch.equal(unpack4(x_q.cpu()), xv), "x quantised to int4"
        if nz:
            w_nz = torch_npu.npu_format_cast(wv.float().to(D), 29)
            w_q = torch_npu.npu_quantize(w_nz, torch.tensor([1.0]).to(D), None,
                                         torch.quint4x2, -1, False)
            assert torch_npu.get_npu_format(w_q) == 29, torch_npu.get_npu_format(w_q)
        else:
            w_q = pack4(wv).to(D)
        scale = scale_u64(sc if per_group else sc[:, 0]).to(D)
        gl = torch.tensor(ends, dtype=torch.int64).to(D)
        out = torch_npu.npu_grouped_matmul(
            [x_q], [w_q], scale=[scale], per_token_scale=[pt.to(D)], group_list=gl,
            group_list_type=0, group_type=0, split_item=3, output_dtype=out_dt)
        y = out[0].cpu()
        want, written = gmm_ref(xv, wv, sc, pt, ends, out_dt)
        assert y.shape == (m, n) and y.dtype == out_dt, (y.shape, y.dtype)
        assert torch.equal(y[written], want[written]), \
            f"{(y[written] != want[written]).sum()} mismatches"
    return run


def gmm_a4w4_counts():
    e, m, k, n = 2, 6, 16, 64
    xv = torch.randint(-8, 8, (m, k))
    wv = torch.randint(-8, 8, (e, k, n))
    sc = torch.full((e, 1, n), 0.5)
    w_q = torch_npu.npu_quantize(torch_npu.npu_format_cast(wv.float().to(D), 29),
                                 torch.tensor([1.0]).to(D), None, torch.quint4x2, -1, False)
    out = torch_npu.npu_grouped_matmul(
        [pack4(xv).to(D)], [w_q], scale=[scale_u64(sc[:, 0]).to(D)],
        per_token_scale=[torch.ones(m).to(D)], group_list=torch.tensor([2, 4]).to(D),
        group_list_type=1, group_type=0, split_item=3, output_dtype=torch.float16)
    want, _ = gmm_ref(xv, wv, sc, torch.ones(m), [2, 6], torch.float16)
    assert torch.equal(out[0].cpu(), want)


def gmm_a4w4_errors():
    e, m, k, n = 1, 4, 16, 64
    x_q = pack4(torch.randint(-8, 8, (m, k))).to(D)
    w_q = torch_npu.npu_quantize(torch_npu.npu_format_cast(torch.ones(e, k, n).to(D), 29),
                                 torch.tensor([1.0]).to(D), None, torch.quint4x2, -1, False)
    gl = torch.tensor([m], dtype=torch.int64).to(D)
    # a float scale is refused: A4W4 takes the 64-bit (UINT64) parameter
    expect_error(
        lambda: torch_npu.npu_grouped_matmul(
            [x_q], [w_q], scale=[torch.ones(e, n).to(D)], per_token_scale=[torch.ones(m).to(D)],
            group_list=gl, group_list_type=0, group_type=0, split_item=3,
            output_dtype=torch.float16),
        ["scale dtype", "uint64"],
    )
    # per-group scale whose group size is odd
    expect_error(
        lambda: torch_npu.npu_grouped_matmul(
            [x_q], [w_q], scale=[torch.ones(e, 16, n, dtype=torch.int64).to(D)],
            per_token_scale=[torch.ones(m).to(D)], group_list=gl, group_list_type=0,
            group_type=0, split_item=3, output_dtype=torch.float16),
        ["Pergroup A4W4"],
    )


def swiglu_ref(x, w, ws, xs, ends):
    """A8W8: c = f32(x . w) * x_scale * w_scale (f32), s = gate * swish(act) (act the first
    half), scale = max|s| / 127, q = int8(half(s * (1 / scale)))."""
    m, n = x.shape[0], w.shape[2]
    h = n // 2
    q = torch.zeros(m, h, dtype=torch.int8)
    qs = torch.zeros(m)
    done = torch.zeros(m, dtype=torch.bool)
    start = 0
    for e, end in enumerate(ends):
        for r in range(start, end):
            acc = (x[r].double() @ w[e].double()).float()
            c = acc * xs[r].float() * ws[e].float()
            a, g = c[:h], c[h:]
            sw = g * (a / (1 + torch.exp(-a)))
            sc = sw.abs().max() / 127
            q[r] = torch.clamp(torch.round((sw * (1 / sc)).half().float()), -128, 127).to(torch.int8)
            qs[r] = sc
            done[r] = True
        start = end
    return q, qs, done


def close_int8(got, want, what):
    d = (got.to(torch.int32) - want.to(torch.int32)).abs()
    # exp() may differ by an ulp between libraries: allow a rare off-by-one
    assert d.max() <= 1 and (d != 0).sum() <= max(1, d.numel() // 500), \
        f"{what}: {(d != 0).sum()} of {d.numel()} differ, max {d.max()}"


def gmm_swiglu_quant_v2(nz, counts):
    def run():
        e, m, k, n = 3, 20, 64, 96
        x = torch.randint(-128, 128, (m, k), dtype=torch.int8)
        w = torch.randint(-128, 128, (e, k, n), dtype=torch.int8)
        ws = torch.rand(e, n) / 256
        xs = torch.rand(m) / 16
        ends = [6, 6, 17]
        gl = torch.tensor([6, 0, 11] if counts else ends, dtype=torch.int64)
        wn = torch_npu.npu_format_cast(w.to(D), 29) if nz else w.to(D)
        y, ys = torch_npu.npu_grouped_matmul_swiglu_quant_v2(
            x.to(D), [wn], [ws.to(D)], xs.to(D), gl.to(D), group_list_type=1 if counts else 0)
        assert y.dtype == torch.int8 and y.shape == (m, n // 2), (y.dtype, y.shape)
        assert ys.dtype == torch.float32 and ys.shape == (m,), (ys.dtype, ys.shape)
        q, qs, done = swiglu_ref(x, w, ws, xs, ends)
        close_int8(y.cpu()[done], q[done], "output")
        assert torch.allclose(ys.cpu()[done], qs[done], rtol=1e-5, atol=0), "outputScale"
    return run


def gmm_swiglu_quant_v2_errors():
    e, m, k, n = 2, 4, 32, 62
    x = torch.randint(-8, 8, (m, k), dtype=torch.int8).to(D)
    w = torch.randint(-8, 8, (e, k, n), dtype=torch.int8).to(D)
    gl = torch.tensor([2, 4]).to(D)
    # quantMode 1 (MX, Ascend 950 only)
    expect_error(
        lambda: torch_npu.npu_grouped_matmul_swiglu_quant_v2(
            x, [w], [torch.ones(e, n).to(D)], torch.ones(m).to(D), gl, quant_mode=1),
        ["quantMode"],
    )
    # weightScale of the wrong N
    expect_error(
        lambda: torch_npu.npu_grouped_matmul_swiglu_quant_v2(
            x, [w], [torch.ones(e, n + 2).to(D)], torch.ones(m).to(D), gl),
        ["weight"],
    )


def quant_matmul_reduce_sum():
    b, m, k, n = 3, 5, 32, 64
    x1 = torch.randint(-128, 128, (b, m, k), dtype=torch.int8)
    x2 = torch.randint(-128, 128, (b, k, n), dtype=torch.int8)
    s1 = torch.rand(b, m)
    s2 = (torch.rand(n) / 100).bfloat16()
    y = torch_npu.npu_quant_matmul_reduce_sum(
        x1.to(D), torch_npu.npu_format_cast(x2.to(D), 29), x1_scale=s1.to(D), x2_scale=s2.to(D))
    acc = torch.zeros(m, n)
    for i in range(b):
        prod = (x1[i].double() @ x2[i].double()).float()
        acc = acc + prod * s1[i][:, None] * s2.float()[None, :]
    assert y.dtype == torch.bfloat16 and y.shape == (m, n), (y.dtype, y.shape)
    assert torch.equal(y.cpu(), acc.bfloat16()), f"{(y.cpu() != acc.bfloat16()).sum()} mismatches"
    # x2Scale must be BFLOAT16
    expect_error(
        lambda: torch_npu.npu_quant_matmul_reduce_sum(
            x1.to(D), torch_npu.npu_format_cast(x2.to(D), 29), x1_scale=s1.to(D),
            x2_scale=s2.float().to(D)),
        ["x2Scale"],
    )


def rotate_quant():
    m, n, k = 6, 256, 64
    for dt in (torch.bfloat16, torch.float16):
        for int4 in (False, True):
            x = torch.randn(m, n).to(dt)
            rot = torch.randn(k, k).to(dt)
            y, s = torch_npu.npu_rotate_quant(
                x.to(D), rot.to(D), dst_dtype=torch.quint4x2 if int4 else torch.int8)
            # the rotation's product is stored in x's type, then quantised per row in f32
            yy = (x.double().reshape(-1, k) @ rot.double()).float().to(dt).float().reshape(m, n)
            cmax = 7.0 if int4 else 127.0
            mx = yy.abs().amax(1)
            q = torch.tensor(cmax) / mx
            want = torch.clamp(torch.round(yy * q[:, None]), -8 if int4 else -128, cmax).to(torch.int64)
            got = unpack4(y.cpu()) if int4 else y.cpu().to(torch.int64)
            assert torch.equal(got, want), f"{dt} int4={int4}: {(got != want).sum()} mismatches"
            assert torch.equal(s.cpu(), mx * torch.tensor(1 / cmax)), f"{dt} int4={int4}: scale"
    # the MX (float4) output is Ascend 950's: ACLNN_ERR_PARAM_INVALID naming yOut
    x = torch.randn(4, 128).to(torch.bfloat16).to(D)
    r = torch.randn(32, 32).to(torch.bfloat16).to(D)
    expect_error(lambda: torch_npu.npu_rotate_quant(x, r, dst_dtype=torch_npu.float4_e2m1fn_x2),
                 ["yOut", "Ascend 950"])
    # N must be a multiple of K
    expect_error(lambda: torch_npu.npu_rotate_quant(
        x, torch.randn(48, 48).to(torch.bfloat16).to(D), dst_dtype=torch.int8), ["multiple"])


def transpose_quant_bmm_a2():
    """aclnnTransposeQuantBatchMatMul is Ascend 950's (DAV_3510): on Atlas A2 CANN's first
    phase refuses the platform with ACLNN_ERR_PARAM_INVALID."""
    m, k, n, b = 32, 512, 128, 4
    x1 = torch.randint(-5, 5, (m, b, k), dtype=torch.int8).to(torch.float8_e4m3fn).to(D)
    x2 = torch.randint(-5, 5, (b, k, n), dtype=torch.int8).to(torch.float8_e4m3fn).to(D)
    expect_error(
        lambda: torch_npu.npu_transpose_quant_batchmatmul(
            x1, x2, dtype=torch.float16, x1_scale=torch.ones(m).to(D),
            x2_scale=torch.ones(n).to(D), perm_x1=[1, 0, 2], perm_x2=[0, 1, 2], perm_y=[1, 0, 2]),
        ["DAV_3510"],
    )


def ascend950_only_quant_a2():
    """npu_dynamic_dual_level_mx_quant and npu_grouped_dynamic_block_quant call operators the
    reference lists for Ascend 950 only: refused on Atlas A2 with 161002 (platform)."""
    x = torch.randn((1, 512), dtype=torch.bfloat16).to(D)
    expect_error(lambda: torch_npu.npu_dynamic_dual_level_mx_quant(x, smooth_scale=None,
                                                                   round_mode="rint"),
                 ["DAV_3510"])
    x = torch.randn((1, 128), dtype=torch.float16).to(D)
    gl = torch.ones((1,), dtype=torch.int32).to(D)
    expect_error(lambda: torch_npu.npu_grouped_dynamic_block_quant(x, gl, dst_type=torch.float8_e5m2),
                 ["DAV_3510"])


case("quantize_int4", quantize_int4)
case("quantize_int4_errors", quantize_int4_errors)
case("gmm_a4w4_nz_per_channel", gmm_a4w4(True, False, torch.float16))
case("gmm_a4w4_nz_per_group_bf16", gmm_a4w4(True, True, torch.bfloat16))
case("gmm_a4w4_nd", gmm_a4w4(False, False, torch.float16))
case("gmm_a4w4_counts", gmm_a4w4_counts)
case("gmm_a4w4_errors", gmm_a4w4_errors)
case("gmm_swiglu_quant_v2_nz", gmm_swiglu_quant_v2(True, False))
case("gmm_swiglu_quant_v2_nd_counts", gmm_swiglu_quant_v2(False, True))
case("gmm_swiglu_quant_v2_errors", gmm_swiglu_quant_v2_errors)
case("quant_matmul_reduce_sum", quant_matmul_reduce_sum)
case("rotate_quant", rotate_quant)
case("transpose_quant_bmm_a2", transpose_quant_bmm_a2)
case("ascend950_only_quant_a2", ascend950_only_quant_a2)

print(f"quant_ops31: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
