"""The quantisation and MoE custom operations of torch_npu (npu_quantize, npu_dynamic_quant,
npu_dynamic_quant_asymmetric, npu_trans_quant_param, npu_quant_matmul,
npu_weight_quant_batchmatmul, npu_grouped_matmul, npu_moe_gating_top_k_softmax,
npu_moe_init_routing, npu_moe_compute_expert_tokens, npu_moe_finalize_routing) on "npu",
each against a CPU reference written in torch from the operator's documented formula (they
have no CPU twin). Quantisation rounds half to even; TransQuantParamV2 keeps the top 19 bits
of a float32 scale, so the references truncate the scale the same way. Prints PASS/FAIL per
case and exits 1 when any case fails.
"""
import sys

import torch
import torch_npu

FAILED = []
torch.manual_seed(0)


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001 - report every failure and go on
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else repr(e))


def same(got, want, **kw):
    torch.testing.assert_close(got.cpu(), want, **kw)


def q8(v):
    return torch.round(v).clamp(-128, 127).to(torch.int8)


def trunc19(s):
    return (s.float().view(torch.int32) & -8192).view(torch.float32)


# ---- npu_quantize (AscendQuantV3) ----
def quantize():
    x = torch.randn(5, 16) * 40
    x[0, :4] = torch.tensor([0.5, 1.5, 2.5, -0.5])
    s, o = torch.rand(16) + 0.5, torch.randn(16)
    s[:4], o[:4] = 1, 0
    y = torch_npu.npu_quantize(x.npu(), s.npu(), o.npu(), torch.qint8, -1, False)
    assert y.dtype == torch.int8
    same(y, q8(x * s + o), rtol=0, atol=0)


def quantize_f16_no_offset():
    x = (torch.randn(2, 3, 8) * 30).half()
    s = (torch.rand(8) + 0.5).half()
    y = torch_npu.npu_quantize(x.npu(), s.npu(), None, torch.qint8, -1, False)
    same(y, q8(x.float() * s.float()), rtol=0, atol=0)


# ---- npu_dynamic_quant (DynamicQuantV2) ----
def dyn_ref(x, smooth=None):
    v = x.float() * (smooth.float() if smooth is not None else 1)
    scale = v.abs().amax(-1) / 127
    return q8(v / scale.unsqueeze(-1)), scale


def dynamic_quant():
    x = torch.randn(4, 6, 32).half()
    y, s = torch_npu.npu_dynamic_quant(x.npu())
    wy, ws = dyn_ref(x)
    same(s, ws, rtol=1e-6, atol=0)
    same(y, wy, rtol=0, atol=0)


def dynamic_quant_smooth():
    x = torch.randn(7, 16).bfloat16()
    sm = (torch.rand(16) + 0.5).bfloat16()
    y, s = torch_npu.npu_dynamic_quant(x.npu(), smooth_scales=sm.npu())
    wy, ws = dyn_ref(x, sm)
    same(s, ws, rtol=1e-6, atol=0)
    same(y, wy, rtol=0, atol=0)


def dynamic_quant_asymmetric():
    x = torch.randn(3, 20).half()
    y, s, o = torch_npu.npu_dynamic_quant_asymmetric(x.npu())
    v = x.float()
    mx, mn = v.amax(-1), v.amin(-1)
    ws = (mx - mn) / 255
    wo = 127 - mx / ws
    same(s, ws, rtol=1e-6, atol=0)
    same(o, wo, rtol=1e-5, atol=1e-5)
    same(y, q8(v / ws.unsqueeze(-1) + wo.unsqueeze(-1)), rtol=0, atol=0)


# ---- npu_moe_gating_top_k_softmax ----
def gating():
    x = torch.randn(6, 8)
    fin = torch.tensor([False, True, False, False, True, False])
    y, e, r = torch_npu.npu_moe_gating_top_k_softmax(x.npu(), fin.npu(), 3)
    p = torch.softmax(x, -1).topk(3)
    same(y, p.values)
    we = p.indices.int()
    we[fin] = 8
    same(e, we, rtol=0, atol=0)
    same(r, (torch.arange(3).unsqueeze(0) * 6 + torch.arange(6).unsqueeze(1)).int(), rtol=0, atol=0)


def gating_3d_f16():
    x = torch.randn(2, 3, 5).half()
    y, e, _ = torch_npu.npu_moe_gating_top_k_softmax(x.npu(), None, 2)
    p = torch.softmax(x.float(), -1).topk(2)
    same(y, p.values.half(), rtol=1e-3, atol=1e-3)
    same(e, p.indices.int(), rtol=0, atol=0)


def gating_v2_renorm():
    x = torch.randn(5, 8)
    y, e, _ = torch_npu.npu_moe_gating_top_k_softmax_v2(x.npu(), k=3, renorm=1)
    t = x.topk(3)
    same(y, torch.softmax(t.values, -1))
    same(e, t.indices.int(), rtol=0, atol=0)


def gating_v2_softmax_out():
    x = torch.randn(4, 6).bfloat16()
    y, e, s = torch_npu.npu_moe_gating_top_k_softmax_v2(x.npu(), k=2, renorm=0, output_softmax=True)
    p = torch.softmax(x.float(), -1)
    same(s, p)
    same(y, p.topk(2).values.bfloat16(), rtol=1e-2, atol=1e-2)
    same(e, p.topk(2).indices.int(), rtol=0, atol=0)


# ---- npu_trans_quant_param, npu_quant_matmul (QuantMatmulV5) ----
X1 = torch.randint(-128, 128, (5, 32), dtype=torch.int8)
X2 = torch.randint(-128, 128, (32, 12), dtype=torch.int8)
ACC = X1.long() @ X2.long()
SC = torch.rand(12) * 0.01
BI = torch.randint(-500, 500, (12,), dtype=torch.int32)


def trans_quant_param():
    q = torch_npu.npu_trans_quant_param(SC.npu(), torch.tensor([3.0] * 12).npu())
    bits = (SC.view(torch.int32).long() & 0xFFFFE000) | (1 << 46) | (3 << 37)
    same(q, bits, rtol=0, atol=0)


def quant_matmul_f16():
    y = torch_npu.npu_quant_matmul(X1.npu(), X2.npu(), SC.npu(), bias=BI.npu(), output_dtype=torch.float16)
    same(y, ((ACC + BI).float() * trunc19(SC)).half(), rtol=1e-3, atol=1e-3)


def quant_matmul_int8():
    off = torch.randn(12) * 4
    y = torch_npu.npu_quant_matmul(X1.npu(), X2.npu(), SC.npu(), offset=off.npu(), bias=BI.npu())
    assert y.dtype == torch.int8
    same(y, q8((ACC + BI).float() * trunc19(SC) + off), rtol=0, atol=1)


def quant_matmul_bf16_pertoken():
    pt = torch.rand(5)
    y = torch_npu.npu_quant_matmul(X1.npu(), X2.npu(), SC.npu(), pertoken_scale=pt.npu(), output_dtype=torch.bfloat16)
    same(y, (ACC.float() * SC * pt.unsqueeze(1)).bfloat16(), rtol=1e-2, atol=1e-2)


def quant_matmul_int32_transposed():
    w = torch.randint(-128, 128, (12, 32), dtype=torch.int8)
    y = torch_npu.npu_quant_matmul(X1.npu(), w.npu().t(), SC.npu(), bias=BI.npu(), output_dtype=torch.int32)
    same(y, (X1.long() @ w.long().t() + BI).int(), rtol=0, atol=0)


# ---- npu_weight_quant_batchmatmul (WeightQuantBatchMatmulV2/V3) ----
def wqbmm_f16_channel():
    x = torch.randn(4, 64).half()
    w = torch.randint(-128, 128, (64, 16), dtype=torch.int8)
    s, o, b = (torch.rand(16) * 0.02).half(), torch.randn(16).half(), torch.randn(16).half()
    y = torch_npu.npu_weight_quant_batchmatmul(x.npu(), w.npu(), s.npu(), antiquant_offset=o.npu(), bias=b.npu())
    wd = (w.half() + o) * s
    same(y, (x.float() @ wd.float() + b.float()).half(), rtol=1e-2, atol=1e-2)


def wqbmm_bf16_group_transposed():
    x = torch.randn(3, 128).bfloat16()
    wt = torch.randint(-128, 128, (8, 128), dtype=torch.int8)
    s = (torch.rand(4, 8) * 0.02).bfloat16()
    y = torch_npu.npu_weight_quant_batchmatmul(x.npu(), wt.npu().t(), s.npu(), antiquant_group_size=32)
    wd = (wt.t().bfloat16() * s.repeat_interleave(32, 0)).float()
    same(y, (x.float() @ wd).bfloat16(), rtol=2e-2, atol=2e-2)


# ---- npu_grouped_matmul (GroupedMatmulV5) ----
def grouped_matmul_split_m():
    x = torch.randn(10, 16).half()
    w = torch.randn(3, 16, 8).half()
    b = torch.randn(3, 8).half()
    gl = torch.tensor([4, 4, 10])
    (y,) = torch_npu.npu_grouped_matmul([x.npu()], [w.npu()], bias=[b.npu()], group_list=gl.npu(),
                                        split_item=2, group_type=0, group_list_type=0)
    want = torch.cat([x[:4].float() @ w[0].float() + b[0].float(), x[4:].float() @ w[2].float() + b[2].float()])
    same(y, want.half(), rtol=1e-2, atol=1e-2)


def grouped_matmul_counts_list():
    x = torch.randn(6, 8)
    ws = [torch.randn(8, 5), torch.randn(8, 5)]
    (y,) = torch_npu.npu_grouped_matmul([x.npu()], [t.npu() for t in ws], group_list=torch.tensor([2, 4]).npu(),
                                        split_item=3, group_type=0, group_list_type=1)
    same(y, torch.cat([x[:2] @ ws[0], x[2:] @ ws[1]]), rtol=1e-4, atol=1e-4)


def grouped_matmul_no_group():
    xs = [torch.randn(3, 8).bfloat16(), torch.randn(2, 4, 8).bfloat16()]
    ws = [torch.randn(8, 6).bfloat16(), torch.randn(8, 2).bfloat16()]
    ys = torch_npu.npu_grouped_matmul([t.npu() for t in xs], [t.npu() for t in ws], group_type=-1, split_item=0)
    for y, a, b in zip(ys, xs, ws):
        same(y, (a.float() @ b.float()).bfloat16(), rtol=2e-2, atol=2e-2)


# ---- npu_moe_init_routing, npu_moe_compute_expert_tokens, npu_moe_finalize_routing ----
def moe_pipeline():
    n, h, e, k = 8, 6, 5, 2
    x = torch.randn(n, h)
    logits = torch.randn(n, e)
    probs, eidx, ridx = torch_npu.npu_moe_gating_top_k_softmax(logits.npu(), None, k)
    ex, er, ee = torch_npu.npu_moe_init_routing(x.npu(), ridx, eidx, n)
    flat_e, flat_r = eidx.cpu().flatten().long(), ridx.cpu().flatten().long()
    order = torch.argsort(flat_e, stable=True)
    srow = flat_r[order]
    inv = torch.empty_like(srow)
    inv[srow] = torch.arange(n * k)
    same(ee, flat_e[order].int(), rtol=0, atol=0)
    same(er, inv.int(), rtol=0, atol=0)
    same(ex, x[srow % n], rtol=0, atol=0)
    tok = torch_npu.npu_moe_compute_expert_tokens(ee, e)
    same(tok, torch.searchsorted(flat_e[order], torch.arange(e), right=True).int(), rtol=0, atol=0)
    # an "expert" that doubles its rows, then the weighted merge with a skip and a bias
    skip, bias = torch.randn(n, h), torch.randn(e, h)
    out = torch_npu.npu_moe_finalize_routing(ex * 2, skip.npu(), None, bias.npu(), probs, er, eidx)
    p = probs.cpu()
    want = skip + 2 * x * p.sum(1, keepdim=True) + (p.unsqueeze(-1) * bias[eidx.cpu().long()]).sum(1)
    same(out, want, rtol=1e-5, atol=1e-5)


for name, f in [
    ("npu_quantize", quantize),
    ("npu_quantize_f16", quantize_f16_no_offset),
    ("npu_dynamic_quant", dynamic_quant),
    ("npu_dynamic_quant_smooth", dynamic_quant_smooth),
    ("npu_dynamic_quant_asymmetric", dynamic_quant_asymmetric),
    ("npu_moe_gating_top_k_softmax", gating),
    ("npu_moe_gating_top_k_softmax_3d", gating_3d_f16),
    ("npu_moe_gating_top_k_softmax_v2", gating_v2_renorm),
    ("npu_moe_gating_top_k_softmax_v2_softmax", gating_v2_softmax_out),
    ("npu_trans_quant_param", trans_quant_param),
    ("npu_quant_matmul_f16", quant_matmul_f16),
    ("npu_quant_matmul_int8", quant_matmul_int8),
    ("npu_quant_matmul_bf16_pertoken", quant_matmul_bf16_pertoken),
    ("npu_quant_matmul_int32_transposed", quant_matmul_int32_transposed),
    ("npu_weight_quant_batchmatmul_f16", wqbmm_f16_channel),
    ("npu_weight_quant_batchmatmul_group", wqbmm_bf16_group_transposed),
    ("npu_grouped_matmul_split_m", grouped_matmul_split_m),
    ("npu_grouped_matmul_counts", grouped_matmul_counts_list),
    ("npu_grouped_matmul_list", grouped_matmul_no_group),
    ("npu_moe_routing", moe_pipeline),
]:
    case(name, f)

print(f"op_breadth_quant: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
