"""Dynamic loss scaling through torch_npu (aclnnForeachNonFiniteCheckAndUnscale,
aclnnAmpUpdateScale) against CPU torch: the two torch primitives GradScaler calls, then a
GradScaler training loop with an overflow injected at one step (the step is skipped and the
scale backs off), and a float16 autocast loop whose losses fall. Prints PASS/FAIL per case and
exits 1 when any case fails.
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
        print("FAIL", name, str(e).splitlines()[0][:300])


def unscale(dtype, bad):
    def run():
        grads = [torch.randn(5, 7).to(dtype), torch.randn(3, 4).to(dtype).t(), torch.randn(10).to(dtype)]
        if bad is not None:
            grads[1][2, 1] = bad
        inv = torch.tensor(0.25)
        for found0 in (0.0, 1.0):
            cpu = [g.clone() for g in grads]
            npu = [g.to(D) for g in grads]
            fc, fn = torch.full((), found0), torch.full((), found0, device=D)
            torch._amp_foreach_non_finite_check_and_unscale_(cpu, fc, inv)
            torch._amp_foreach_non_finite_check_and_unscale_(npu, fn, inv.to(D))
            for a, b in zip(cpu, npu):
                torch.testing.assert_close(b.cpu(), a, equal_nan=True)
            assert fn.item() == fc.item(), (fn.item(), fc.item())
    return run


for dt in (torch.float32, torch.float16, torch.bfloat16):
    for bad in (None, float("inf"), float("nan")):
        case(f"unscale_{str(dt)[6:]}_{bad}", unscale(dt, bad))


def update_scale():
    sc, tc = torch.full((), 1024.0), torch.full((), 0, dtype=torch.int32)
    sn, tn = sc.to(D), tc.to(D)
    for step, found in enumerate([0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0]):
        fc = torch.full((), float(found))
        torch._amp_update_scale_(sc, tc, fc, 2.0, 0.5, 3)
        torch._amp_update_scale_(sn, tn, fc.to(D), 2.0, 0.5, 3)
        assert (sn.item(), tn.item()) == (sc.item(), tc.item()), (step, sn.item(), tn.item(), sc.item(), tc.item())
    # growth that would overflow float32 keeps the scale
    big, t = torch.full((), 3e38, device=D), torch.full((), 0, dtype=torch.int32, device=D)
    torch._amp_update_scale_(big, t, torch.zeros((), device=D), 2.0, 0.5, 1)
    assert big.item() == torch.tensor(3e38).item() and t.item() == 0, (big.item(), t.item())


case("update_scale", update_scale)


def model():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))


def scaler_loop():
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    runs = {}
    for dev in ("cpu", D):
        m = model().to(dev)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler(dev, init_scale=256.0, growth_interval=2)
        scales, params = [], []
        for step in range(6):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(m(x.to(dev)), y.to(dev))
            scaler.scale(loss).backward()
            if step == 3:  # an overflow: this step must be skipped
                m[0].weight.grad[0, 0] = float("inf")
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
            params.append([p.detach().cpu().clone() for p in m.parameters()])
        runs[dev] = (scales, params)
    (sc, pc), (sn, pn) = runs["cpu"], runs[D]
    assert sn == sc, (sn, sc)
    assert sn[3] == sn[2] / 2, sn
    for a, b in zip(pc, pn):
        for u, v in zip(a, b):
            torch.testing.assert_close(v, u, rtol=1e-5, atol=1e-6)
    # the skipped step left the parameters as they were
    for u, v in zip(pn[2], pn[3]):
        assert torch.equal(u, v)


case("grad_scaler_loop", scaler_loop)


def autocast_fp16():
    torch.manual_seed(2)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 4)).to(D)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    scaler = torch.npu.amp.GradScaler()
    x, y = torch.randn(16, 3, 8, 8).to(D), torch.randint(0, 4, (16,)).to(D)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        with torch.npu.amp.autocast(dtype=torch.float16):
            out = m(x)
            assert out.dtype == torch.float16, out.dtype
            loss = torch.nn.functional.cross_entropy(out, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < losses[0], losses


case("autocast_fp16_training", autocast_fp16)

print(f"amp_scaler: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
