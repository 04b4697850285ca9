"""torch_npu's normalisation + quantisation fused APIs against float64 CPU references:
npu_gemma_rms_norm (aclnnGemmaRmsNorm), npu_deep_norm and npu_deep_norm_backward
(aclnnDeepNorm, aclnnDeepNormGrad), npu_add_rms_norm_cast (aclnnAddRmsNormCast),
npu_rms_norm_quant (aclnnRmsNormQuant), npu_add_rms_norm_quant (aclnnAddRmsNormQuantV2 on
Atlas A2), npu_add_rms_norm_dynamic_quant (aclnnAddRmsNormDynamicQuantV2), npu_quantize
(aclnnQuantize), npu_swiglu_quant (aclnnSwiGluQuantV2) and npu_dequant_swiglu_quant
(aclnnDequantSwigluQuant). Quantised outputs may differ from the reference by 1 (float16
intermediates). Prints PASS/FAIL per case and exits 1 when any case fails.
"""
import sys

import torch
import torch_npu

D = "npu"
FAILED = []


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


def close(got, want, tol, what):
    got = got.cpu().double()
    want = want.double()
    if got.shape != want.shape:
        raise AssertionError(f"{what}: shape {tuple(got.shape)}, expected {tuple(want.shape)}")
    err = ((got - want).abs() / (1 + want.abs())).max().item()
    if err > tol:
        raise AssertionError(f"{what}: relative error {err:.3g} > {tol}")


def near_int(got, want, what):
    d = (got.cpu().double() - want).abs()
    if d.max().item() > 1 or (d == 0).double().mean().item() < 0.9:
        raise AssertionError(f"{what}: max difference {d.max().item()}, exact {(d == 0).double().mean().item():.2f}")


def q8(v):
    return torch.nan_to_num(torch.round(v), nan=0.0).clamp(-128, 127)


def rstd(x, eps):
    return 1 / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def gen(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def gemma():
    x, g = gen(2, 3, 16, dtype=torch.float16, seed=1), gen(16, dtype=torch.float16, seed=2)
    y, r = torch_npu.npu_gemma_rms_norm(x.to(D), g.to(D), 1e-6)
    xd = x.double()
    rs = rstd(xd, 1e-6)
    close(y, xd * rs * (1 + g.double()), 2e-3, "y")
    close(r, rs, 1e-5, "rstd")


def deep_norm():
    x, gx = gen(4, 16, seed=3), gen(4, 16, seed=4)
    beta, gamma, dy = gen(16, seed=5), gen(16, seed=6), gen(4, 16, seed=7)
    mean, rs, y = torch_npu.npu_deep_norm(x.to(D), gx.to(D), beta.to(D), gamma.to(D), 0.3, 1e-6)
    xp = (0.3 * x.double() + gx.double()).requires_grad_()
    mu = xp.mean(-1, keepdim=True)
    r = 1 / torch.sqrt((xp - mu).pow(2).mean(-1, keepdim=True) + 1e-6)
    g64, b64 = gamma.double().requires_grad_(), beta.double().requires_grad_()
    want = (xp - mu) * r * g64 + b64
    close(y, want.detach(), 1e-5, "y")
    close(mean, mu.detach(), 1e-5, "mean")
    close(rs, r.detach(), 1e-5, "rstd")
    dx, dgx, dbeta, dgamma = torch_npu.npu_deep_norm_backward(
        dy.to(D), x.to(D), gx.to(D), gamma.to(D), mean, rs, 0.3
    )
    want.backward(dy.double())
    close(dgx, xp.grad, 1e-4, "dgx")
    close(dx, 0.3 * xp.grad, 1e-4, "dx")
    close(dbeta, b64.grad, 1e-5, "dbeta")
    close(dgamma, g64.grad, 1e-4, "dgamma")


def add_rms_norm_cast():
    x1, x2, g = gen(3, 16, dtype=torch.bfloat16, seed=8), gen(3, 16, dtype=torch.bfloat16, seed=9), gen(16, dtype=torch.bfloat16, seed=10)
    y1, y2, r, x = torch_npu.npu_add_rms_norm_cast(x1.to(D), x2.to(D), g.to(D), 1e-6)
    s = (x1.double() + x2.double()).to(torch.bfloat16).double()
    rs = rstd(s, 1e-6)
    close(x, s, 0, "x")
    close(y1, s * rs * g.double(), 1e-5, "y1 (float)")
    close(y2, s * rs * g.double(), 1.6e-2, "y2 (bfloat16)")
    if y1.dtype != torch.float32 or y2.dtype != torch.bfloat16:
        raise AssertionError(f"dtypes {y1.dtype}, {y2.dtype}")
    close(r, rs, 1e-5, "rstd")


def rms_norm_quant():
    x, g, b = gen(4, 32, dtype=torch.float16, seed=11), gen(32, dtype=torch.float16, seed=12), gen(32, dtype=torch.float16, seed=13)
    scale = torch.tensor([0.05], dtype=torch.float16)
    offset = torch.tensor([2], dtype=torch.int8)
    y = torch_npu.npu_rms_norm_quant(x.to(D), g.to(D), b.to(D), scale.to(D), offset.to(D), 1e-6)
    xd = x.double()
    v = xd * rstd(xd, 1e-6) * g.double() + b.double()
    near_int(y, q8(v / scale.double() + 2), "y")


def add_rms_norm_quant():
    x1, x2, g = gen(2, 3, 16, dtype=torch.float16, seed=14), gen(2, 3, 16, dtype=torch.float16, seed=15), gen(16, dtype=torch.float16, seed=16)
    s1 = torch.linspace(0.02, 0.1, 16)
    z1 = torch.arange(16, dtype=torch.int32) % 5 - 2
    y1, _, x = torch_npu.npu_add_rms_norm_quant(x1.to(D), x2.to(D), g.to(D), s1.to(D), z1.to(D), epsilon=1e-6)
    s = (x1.double() + x2.double()).to(torch.float16).double()
    v = s * rstd(s, 1e-6) * g.double()
    close(x, s, 0, "x")
    near_int(y1, q8(v / s1.double() + z1.double()), "y1")


def add_rms_norm_dynamic_quant():
    x1, x2, g = gen(4, 16, dtype=torch.bfloat16, seed=17), gen(4, 16, dtype=torch.bfloat16, seed=18), gen(16, dtype=torch.bfloat16, seed=19)
    sm = (gen(16, seed=20).abs() + 0.5).to(torch.bfloat16)
    y1, _, x, sc1, _ = torch_npu.npu_add_rms_norm_dynamic_quant(x1.to(D), x2.to(D), g.to(D), smooth_scale1=sm.to(D), epsilon=1e-6)
    s = (x1.double() + x2.double()).to(torch.bfloat16).double()
    v = s * rstd(s, 1e-6) * g.double() * sm.double()
    scale = v.abs().amax(-1) / 127
    close(x, s, 0, "x")
    close(sc1, scale, 2e-3, "scale1")
    near_int(y1, q8(v / scale.unsqueeze(-1)), "y1")


def quantize():
    x = gen(3, 8, dtype=torch.float16, seed=21)
    scales = torch.linspace(0.02, 0.09, 8).to(torch.float16)
    zp = torch.arange(8, dtype=torch.int32) - 4
    y = torch_npu.npu_quantize(x.to(D), scales.to(D), zp.to(D), torch.qint8, -1, True)
    t = x.float() / scales.float() + zp.float()
    want = torch.round(t).clamp(-128, 127)
    close(y, want.double(), 0, "y")
    if y.dtype != torch.int8:
        raise AssertionError(f"dtype {y.dtype}")


def dequant_swiglu_quant():
    x = (torch.arange(4 * 16, dtype=torch.int32) * 37 % 61 - 30).reshape(4, 16)
    ws = torch.linspace(0.01, 0.04, 16)
    act_s = torch.linspace(0.5, 1.25, 4).reshape(4, 1)
    qs = torch.linspace(0.5, 1.2, 8)
    y, scale = torch_npu.npu_dequant_swiglu_quant(
        x.to(D), weight_scale=ws.to(D), activation_scale=act_s.to(D), quant_scale=qs.to(D),
        activate_left=True, quant_mode=1,
    )
    d = x.double() * ws.double() * act_s.double()
    a, b = d[:, :8], d[:, 8:]
    t = a * torch.sigmoid(a) * b * qs.double()
    s = t.abs().amax(-1) / 127
    close(scale, s, 1e-5, "scale")
    near_int(y, q8(t / s.unsqueeze(-1)), "y")


def swiglu_quant():
    x = gen(6, 16, dtype=torch.float16, seed=22)
    y, scale = torch_npu.npu_swiglu_quant(x.to(D), quant_mode=1, activate_left=True)
    a, b = x.double()[:, :8], x.double()[:, 8:]
    act = a * torch.sigmoid(a) * b
    s = 127 / act.abs().amax(-1)
    close(scale, s, 1e-5, "scale")
    near_int(y, q8(act * s.unsqueeze(-1)), "y")


for name, f in [
    ("gemma_rms_norm", gemma),
    ("deep_norm", deep_norm),
    ("add_rms_norm_cast", add_rms_norm_cast),
    ("rms_norm_quant", rms_norm_quant),
    ("add_rms_norm_quant", add_rms_norm_quant),
    ("add_rms_norm_dynamic_quant", add_rms_norm_dynamic_quant),
    ("quantize", quantize),
    ("swiglu_quant", swiglu_quant),
    ("dequant_swiglu_quant", dequant_swiglu_quant),
]:
    case(name, f)
print(f"norm_quant_ops: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
