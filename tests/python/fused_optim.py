"""PyTorch's fused optimizers through torch_npu against CPU torch's plain ones: SGD(fused=True)
(aclnnFusedSgd) with momentum, dampening, nesterov, weight decay and maximize; AdamW(fused=True)
(aclnnApplyAdamWV2, which torch_npu calls with `state_steps - 1`) with amsgrad and maximize over
several steps; Adam(fused=True) (below Ascend 950 torch_npu falls back to CPU for it; on 950
it runs aclnnFusedAdam, see fused_adam.py); and fused SGD under a
GradScaler that skips an overflowing step (the scale reaches aclnnFusedSgd, found-inf torch_npu). Prints PASS/FAIL per case and exits
1 when any case fails.
"""
import sys

import torch
import torch_npu  # noqa: F401

D = "npu"
FAILED = []


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


def model():
    torch.manual_seed(3)
    return torch.nn.Sequential(torch.nn.Linear(6, 10), torch.nn.Tanh(), torch.nn.Linear(10, 3))


def run(dev, cls, kw, steps, scaled=False, overflow_at=None):
    m = model().to(dev)
    opt = cls(m.parameters(), **kw)
    scaler = torch.amp.GradScaler(dev, init_scale=512.0) if scaled else None
    torch.manual_seed(4)
    data = [(torch.randn(16, 6), torch.randn(16, 3)) for _ in range(steps)]
    for i, (x, y) in enumerate(data):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(m(x.to(dev)), y.to(dev))
        if scaler:
            scaler.scale(loss).backward()
            if i == overflow_at:
                m[0].weight.grad[1, 2] = float("inf")
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
    state = [p.detach().cpu() for p in m.parameters()]
    for p in m.parameters():
        for v in opt.state[p].values():
            if isinstance(v, torch.Tensor):
                state.append(v.detach().cpu().float())
    return state, (scaler.get_scale() if scaler else None)


def against_cpu(cls, kw, steps=5, scaled=False, overflow_at=None):
    def f():
        npu, sn = run(D, cls, dict(kw, fused=True), steps, scaled, overflow_at)
        cpu, sc = run("cpu", cls, kw, steps, scaled, overflow_at)
        assert len(npu) == len(cpu), (len(npu), len(cpu))
        for a, b in zip(npu, cpu):
            torch.testing.assert_close(a, b, rtol=2e-5, atol=2e-6)
        assert sn == sc, (sn, sc)
    return f


SGD = torch.optim.SGD
case("sgd_momentum", against_cpu(SGD, dict(lr=0.05, momentum=0.9)))
case("sgd_dampening_weight_decay", against_cpu(SGD, dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01)))
case("sgd_nesterov_maximize", against_cpu(SGD, dict(lr=0.02, momentum=0.9, nesterov=True, maximize=True)))
case("sgd_scaler_overflow", against_cpu(SGD, dict(lr=0.05, momentum=0.9), 6, True, 3))

AdamW = torch.optim.AdamW
case("adamw", against_cpu(AdamW, dict(lr=0.01), 6))
case("adamw_weight_decay_betas", against_cpu(AdamW, dict(lr=0.02, betas=(0.8, 0.95), weight_decay=0.1), 6))
case("adamw_amsgrad_maximize", against_cpu(AdamW, dict(lr=0.01, amsgrad=True, maximize=True), 6))
# No GradScaler case for AdamW: torch_npu's _fused_adamw_ ignores grad_scale and found_inf (it
# neither unscales nor skips), on real NPUs as here.
case("adam", against_cpu(torch.optim.Adam, dict(lr=0.01, weight_decay=0.01), 4))

print(f"fused_optim: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
