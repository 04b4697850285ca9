"""torch.optim.Adam(fused=True) on an Ascend 950 (run with NPU_EMU_SOC=Ascend950PR): torch_npu
runs aclnnFusedAdam there (on the 910 families it falls back to CPU torch, see fused_optim.py),
passing its state steps minus one, a zeros list for the maximum when amsgrad is off, and a
GradScaler's scale and found-inf. Parameters and optimizer state after several steps are
compared with CPU torch's Adam: weight decay (L2, not AdamW's), betas, amsgrad, maximize, a
GradScaler whose overflowing step is skipped, float16 and bfloat16 parameters, and
AdamW(fused=True) / SGD(fused=True) on the same SoC.
"""
import pytest
import torch
import torch_npu  # noqa: F401


def test_the_soc_is_an_ascend_950():
    # below Ascend950 torch_npu would not call aclnnFusedAdam at all
    assert torch_npu._C._npu_get_soc_version() >= 260, torch.npu.get_device_name(0)


def model(dtype):
    torch.manual_seed(3)
    m = torch.nn.Sequential(torch.nn.Linear(6, 10), torch.nn.Tanh(), torch.nn.Linear(10, 3))
    return m.to(dtype)


def run(dev, cls, kw, steps, dtype=torch.float32, scaled=False, overflow_at=None):
    m = model(dtype).to(dev)
    opt = cls(m.parameters(), **kw)
    scaler = torch.amp.GradScaler(dev, init_scale=512.0) if scaled else None
    torch.manual_seed(4)
    data = [(torch.randn(16, 6), torch.randn(16, 3)) for _ in range(steps)]
    for i, (x, y) in enumerate(data):
        opt.zero_grad()
        out = m(x.to(dev, dtype)).float()
        loss = torch.nn.functional.mse_loss(out, y.to(dev))
        if scaler:
            scaler.scale(loss).backward()
            if i == overflow_at:
                m[0].weight.grad[1, 2] = float("inf")
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
    state = [p.detach().cpu().float() for p in m.parameters()]
    for p in m.parameters():
        for k in sorted(opt.state[p]):
            v = opt.state[p][k]
            if isinstance(v, torch.Tensor):
                state.append(v.detach().cpu().float())
    return state, (scaler.get_scale() if scaler else None)


def against_cpu(cls, kw, steps=5, dtype=torch.float32, scaled=False, overflow_at=None,
                cpu_fused=False, tol=(2e-5, 2e-6)):
    npu, sn = run("npu", cls, dict(kw, fused=True), steps, dtype, scaled, overflow_at)
    cpu_kw = dict(kw, fused=True) if cpu_fused else kw
    cpu, sc = run("cpu", cls, cpu_kw, steps, dtype, scaled, overflow_at)
    assert len(npu) == len(cpu), (len(npu), len(cpu))
    for a, b in zip(npu, cpu):
        torch.testing.assert_close(a, b, rtol=tol[0], atol=tol[1])
    assert sn == sc, (sn, sc)


Adam = torch.optim.Adam


@pytest.mark.parametrize("kw", [
    dict(lr=0.01),
    dict(lr=0.02, betas=(0.8, 0.95), weight_decay=0.05, eps=1e-6),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.01, maximize=True, weight_decay=0.01),
    dict(lr=0.01, amsgrad=True, maximize=True, weight_decay=0.02),
], ids=["plain", "betas_weight_decay", "amsgrad", "maximize", "amsgrad_maximize"])
def test_adam_fused_matches_cpu(kw):
    against_cpu(Adam, kw, 6)


def test_adam_fused_with_a_grad_scaler_skips_the_overflowing_step():
    # the scale and found-inf reach aclnnFusedAdam: gradients are unscaled in place and the
    # step with an inf gradient changes nothing
    against_cpu(Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.01), 6, scaled=True,
                overflow_at=3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_adam_fused_low_precision_parameters(dtype):
    # CPU torch's fused Adam computes in float32 and rounds once into the parameter's type,
    # as the kernel does
    tol = (2e-3, 1e-3) if dtype == torch.float16 else (1.6e-2, 1e-2)
    against_cpu(Adam, dict(lr=0.01, weight_decay=0.01), 4, dtype=dtype, cpu_fused=True, tol=tol)


def test_adam_fused_tensor_count_over_the_512_split():
    # torch_npu calls aclnnFusedAdam in batches of 512 tensors
    def go(dev, fused):
        torch.manual_seed(0)
        ps = [torch.randn(3).to(dev).requires_grad_() for _ in range(530)]
        opt = Adam(ps, lr=0.1, fused=fused)
        for s in range(2):
            for i, p in enumerate(ps):
                p.grad = torch.full_like(p, (i % 7 - 3) * 0.1 + s)
            opt.step()
        return torch.stack([p.detach().cpu() for p in ps])
    torch.testing.assert_close(go("npu", True), go("cpu", False), rtol=2e-5, atol=2e-6)


def test_adamw_and_sgd_fused_still_match_cpu_on_this_soc():
    against_cpu(torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1, amsgrad=True), 5)
    against_cpu(torch.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True), 5)
