"""torch_npu.npu_grouped_matmul's forms that reach the older and NZ-weight GroupedMatmul
entries, against CPU torch: a List[int] group_list (aclnnGroupedMatmul, V1) with one output
or one per group, with bias, in float16 and bfloat16; and weights cast to FRACTAL_NZ with
torch_npu.npu_format_cast (aclnnGroupedMatmulWeightNz), one stacked [E, K, N] weight with a
counts group list, or a list of [K, N] weights with biases; and
torch_npu.npu_grouped_matmul_finalize_routing in the A8W8 form (INT8 x and weight, per-channel
and per-token scales, shared expert rows, logit, row_index; aclnnGroupedMatmulFinalizeRoutingV3
with an ND weight, ...WeightNzV2 with a FRACTAL_NZ one) against a float64 reference; and
torch_npu.npu_grouped_matmul_add(_) (aclnnGroupedMatmulAdd/V2: y[e] += x[k_e]^T @ w[k_e]); and
torch_npu.npu_quant_matmul with an INT8 weight cast to FRACTAL_NZ (aclnnQuantMatmulWeightNz). Products accumulate in float32
on the device; the reference computes in float32 and the comparison allows the output
type's rounding. Prints PASS/FAIL per case and exits 1 when any case fails.
"""
import sys

import torch
import torch_npu

torch_npu.npu.config.allow_internal_format = True
FAILED = []
torch.manual_seed(0)
D = "npu"


def chk(name, f):
    try:
        got, want, tol = f()
        assert len(got) == len(want), f"{len(got)} outputs, expected {len(want)}"
        for g, w in zip(got, want):
            assert g.dtype == w.dtype, f"dtype {g.dtype}, expected {w.dtype}"
            torch.testing.assert_close(g.cpu().float(), w.float(), rtol=tol, atol=tol)
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


def ref(x, ws, ends, bs=None):
    """x's rows cut at the cumulative ends, group i times ws[i] (+ bs[i]), in float32."""
    out, s = [], 0
    for i, e in enumerate(ends):
        y = x[s:e].float() @ ws[i].float()
        if bs is not None:
            y = y + bs[i].float()
        out.append(y.to(x.dtype))
        s = e
    return out


def list_group_list_one_out(dt):
    x = torch.randn(9, 16).to(dt)
    ws = [torch.randn(16, 8).to(dt) for _ in range(3)]
    y = torch_npu.npu_grouped_matmul([x.to(D)], [w.to(D) for w in ws], group_list=[2, 2, 9],
                                     split_item=3, group_type=0)
    return y, [torch.cat(ref(x, ws, [2, 2, 9]))], 2e-2


def list_group_list_per_group_bias():
    x = torch.randn(7, 24).half()
    ws = [torch.randn(24, 5).half() for _ in range(2)]
    bs = [torch.randn(5).half() for _ in range(2)]
    y = torch_npu.npu_grouped_matmul([x.to(D)], [w.to(D) for w in ws], bias=[b.to(D) for b in bs],
                                     group_list=[3, 7], split_item=1, group_type=0)
    return y, ref(x, ws, [3, 7], bs), 2e-2


def nz_stacked_counts():
    E, K, N = 3, 40, 24
    x = torch.randn(9, K).half()
    w = torch.randn(E, K, N).half()
    wn = torch_npu.npu_format_cast(w.to(D), 29)
    assert torch_npu.get_npu_format(wn) == 29, "the weight is not FRACTAL_NZ"
    gl = torch.tensor([2, 5, 2]).to(D)
    y = torch_npu.npu_grouped_matmul([x.to(D)], [wn], group_list=gl, split_item=3, group_type=0,
                                     group_list_type=1)
    return y, [torch.cat(ref(x, list(w), [2, 7, 9]))], 2e-2


def nz_list_bias(dt):
    E, K, N = 2, 48, 20
    x = torch.randn(6, K).to(dt)
    ws = [torch.randn(K, N).to(dt) for _ in range(E)]
    bs = [torch.randn(N).to(torch.float16 if dt == torch.float16 else torch.float32) for _ in range(E)]
    wn = [torch_npu.npu_format_cast(w.to(D), 29) for w in ws]
    y = torch_npu.npu_grouped_matmul([x.to(D)], wn, bias=[b.to(D) for b in bs],
                                     group_list=torch.tensor([4, 6]).to(D), split_item=2, group_type=0)
    return y, [torch.cat(ref(x, ws, [4, 6], bs))], 2e-2


chk("gmm_list_group_list_float16", lambda: list_group_list_one_out(torch.float16))
chk("gmm_list_group_list_bfloat16", lambda: list_group_list_one_out(torch.bfloat16))
chk("gmm_list_group_list_per_group_bias", list_group_list_per_group_bias)
chk("gmm_nz_stacked_counts", nz_stacked_counts)
chk("gmm_nz_list_bias_float16", lambda: nz_list_bias(torch.float16))
chk("gmm_nz_list_bias_bfloat16", lambda: nz_list_bias(torch.bfloat16))


def finalize_routing(nz, shared_rows):
    E, M, K, N, BS = 3, 8, 64, 48, 5
    x = torch.randint(-8, 8, (M, K), dtype=torch.int8)
    w = torch.randint(-8, 8, (E, K, N), dtype=torch.int8)
    scale = torch.rand(E, N) / 32
    pt = torch.rand(M) + 0.5
    counts = [3, 1, 4]
    logit = torch.rand(M)
    ri = torch.randint(0, BS, (M,))
    shared = torch.randn(2, N).bfloat16()
    want = torch.zeros(BS, N, dtype=torch.float64)
    if shared_rows:
        want[2:4] = shared.double() * 0.7
    s = 0
    for g, c in enumerate(counts):
        for i in range(s, s + c):
            v = (x[i].double() @ w[g].double()) * scale[g].double() * pt[i].double()
            want[ri[i]] += v * (logit[i].double() if shared_rows else 1.0)
        s += c
    wd = w.to(D)
    if nz:
        wd = torch_npu.npu_format_cast(wd, 29)
        assert torch_npu.get_npu_format(wd) == 29, "the weight is not FRACTAL_NZ"
    kw = dict(shared_input=shared.to(D), logit=logit.to(D), shared_input_weight=0.7,
              shared_input_offset=2) if shared_rows else {}
    y = torch_npu.npu_grouped_matmul_finalize_routing(
        x.to(D), wd, torch.tensor(counts).to(D), scale=scale.to(D), pertoken_scale=pt.to(D),
        row_index=ri.to(D), output_bs=BS, group_list_type=1, **kw)
    return [y], [want.float()], 1e-5


chk("finalize_routing_nd_shared", lambda: finalize_routing(False, True))
chk("finalize_routing_nd_plain", lambda: finalize_routing(False, False))
chk("finalize_routing_nz_shared", lambda: finalize_routing(True, True))
chk("finalize_routing_nz_plain", lambda: finalize_routing(True, False))


def grouped_matmul_add(inplace, dt):
    K, M, N, E = 24, 5, 6, 3
    x = torch.randn(K, M).to(dt)
    w = torch.randn(K, N).to(dt)
    y = torch.randn(E * M, N)
    ends = [8, 8, 24]
    want = y.clone()
    s = 0
    for e, end in enumerate(ends):
        want[e * M:(e + 1) * M] += x[s:end].float().t() @ w[s:end].float()
        s = end
    yd = y.to(D)
    gl = torch.tensor(ends).to(D)
    if inplace:
        torch_npu.npu_grouped_matmul_add_(yd, x.to(D), w.to(D), gl, transpose_x=True,
                                          transpose_weight=False, group_type=2)
        got = yd
    else:
        got = torch_npu.npu_grouped_matmul_add(yd, x.to(D), w.to(D), gl, transpose_x=True,
                                               transpose_weight=False, group_type=2)
    return [got], [want], 1e-4


chk("grouped_matmul_add_inplace_float16", lambda: grouped_matmul_add(True, torch.float16))
chk("grouped_matmul_add_bfloat16", lambda: grouped_matmul_add(False, torch.bfloat16))


def quant_matmul_nz(out_dtype):
    M, K, N = 6, 64, 48
    x1 = torch.randint(-8, 8, (M, K), dtype=torch.int8)
    x2 = torch.randint(-8, 8, (K, N), dtype=torch.int8)
    scale = torch.rand(N) / 64 + 0.01
    want = ((x1.double() @ x2.double()) * scale.double()).to(out_dtype)
    x2n = torch_npu.npu_format_cast(x2.to(D), 29)
    assert torch_npu.get_npu_format(x2n) == 29, "the weight is not FRACTAL_NZ"
    y = torch_npu.npu_quant_matmul(x1.to(D), x2n, scale.to(D), output_dtype=out_dtype)
    return [y], [want], 1e-2


chk("quant_matmul_nz_float16", lambda: quant_matmul_nz(torch.float16))
chk("quant_matmul_nz_bfloat16", lambda: quant_matmul_nz(torch.bfloat16))

print(f"gmm_extra: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
