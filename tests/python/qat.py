"""Quantisation-aware training through torch_npu (aclnnFakeQuantPerTensorAffineCachemask and
aclnnFakeQuantPerChannelAffineCachemask) against CPU torch: torch.fake_quantize_per_tensor_affine
and torch.fake_quantize_per_channel_affine forward and gradient (float32 and float16 where CPU
torch computes it), values on the rounding grid, clamped at both ends, and a
torch.ao.quantization.FakeQuantize module in a few training steps. Prints PASS/FAIL per case and
exits 1 when any case fails."""
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
        print("FAIL", name, (str(e).splitlines() or [""])[0][:300])


def per_tensor(dtype, scale, zp, lo, hi):
    def run():
        x = (torch.randn(4, 33) * 3).to(dtype)
        xc = x.float().clone().requires_grad_(True)
        xn = x.to(D).requires_grad_(True)
        a = torch.fake_quantize_per_tensor_affine(xc, scale, zp, lo, hi)
        b = torch.fake_quantize_per_tensor_affine(xn, scale, zp, lo, hi)
        torch.testing.assert_close(b.float().cpu(), a.to(dtype).float(), rtol=1e-3, atol=1e-3)
        # some elements are clamped at each end, so the mask matters
        assert (a == (lo - zp) * scale).any() and (a == (hi - zp) * scale).any()
        w = torch.randn(a.shape)
        (a * w).sum().backward()
        (b * w.to(D).to(dtype)).sum().backward()
        torch.testing.assert_close(xn.grad.float().cpu(), xc.grad.to(dtype).float(), rtol=1e-3, atol=1e-3)
    return run


def per_channel(axis):
    def run():
        x = torch.randn(3, 5, 6) * 2
        c = x.shape[axis]
        scale = torch.rand(c) * 0.2 + 0.05
        zp = torch.randint(-3, 4, (c,), dtype=torch.int32)
        xc = x.clone().requires_grad_(True)
        xn = x.to(D).requires_grad_(True)
        a = torch.fake_quantize_per_channel_affine(xc, scale, zp, axis, -8, 7)
        b = torch.fake_quantize_per_channel_affine(xn, scale.to(D), zp.to(D), axis, -8, 7)
        torch.testing.assert_close(b.cpu(), a, rtol=1e-5, atol=1e-6)
        a.sum().backward()
        b.sum().backward()
        torch.testing.assert_close(xn.grad.cpu(), xc.grad)
    return run


def fake_quantize_module():
    from torch.ao.quantization import FakeQuantize, MovingAverageMinMaxObserver

    torch.manual_seed(1)
    lin = torch.nn.Linear(8, 4)
    fq = FakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
    lin_n = torch.nn.Linear(8, 4).to(D)
    lin_n.load_state_dict(lin.state_dict())
    fq_n = FakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255).to(D)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    opt_n = torch.optim.SGD(lin_n.parameters(), lr=0.1)
    for step in range(4):
        x = torch.randn(16, 8)
        loss = lin(fq(x)).pow(2).mean()
        loss_n = lin_n(fq_n(x.to(D))).pow(2).mean()
        torch.testing.assert_close(loss_n.cpu(), loss, rtol=1e-4, atol=1e-5)
        opt.zero_grad()
        opt_n.zero_grad()
        loss.backward()
        loss_n.backward()
        opt.step()
        opt_n.step()
    torch.testing.assert_close(lin_n.weight.detach().cpu(), lin.weight.detach(), rtol=1e-4, atol=1e-5)


case("fake_quantize_per_tensor_affine float32", per_tensor(torch.float32, 0.1, 3, -20, 25))
case("fake_quantize_per_tensor_affine uint8 range", per_tensor(torch.float32, 0.05, 128, 0, 255))
case("fake_quantize_per_tensor_affine float16", per_tensor(torch.float16, 0.125, 0, -16, 15))
case("fake_quantize_per_channel_affine axis 0", per_channel(0))
case("fake_quantize_per_channel_affine axis 2", per_channel(2))
case("FakeQuantize module, 4 SGD steps", fake_quantize_module)

print(f"qat: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
