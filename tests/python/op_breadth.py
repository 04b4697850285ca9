"""The torch operations that reach the aclnn operators of `ops/breadth.rs`, `linalg.rs`,
`sampling.rs` and `optim.rs` through torch_npu (F.glu, F.prelu, F.threshold, F.celu, F.selu,
isinf/isposinf/isneginf, logaddexp(2), heaviside, sinc, logit, addmv, outer, addbmm, inverse,
eye, index_copy, normal, randperm, multinomial; linalg.cross, F.unfold, frac, 3-D nearest
interpolation and its gradient, unique along a dimension; index_fill, renorm, range, pdist,
slogdet, linalg.qr), each against CPU torch (random ones by
range and sample statistics), and a torch.optim.AdamW run. Prints PASS/FAIL per case and
exits 1 when any case fails.
"""
import sys

import torch
import torch_npu  # noqa: F401
import torch.nn.functional as F
D = "npu"
FAILED = []
torch.manual_seed(0)
def chk(name, f, *args, grad=False, rtol=1e-4, atol=1e-5):
    try:
        cpu = [a.clone().requires_grad_(grad) if (grad and a.is_floating_point()) else a.clone() for a in args]
        npu = [a.detach().to(D).requires_grad_(grad) if (grad and a.is_floating_point()) else a.to(D) for a in args]
        rc, rn = f(*cpu), f(*npu)
        torch.testing.assert_close(rn.cpu(), rc, rtol=rtol, atol=atol, equal_nan=True)
        if grad:
            rc.sum().backward(); rn.sum().backward()
            for a, b in zip(cpu, npu):
                if a.grad is not None:
                    torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=rtol, atol=atol)
        print("PASS", name)
    except Exception as e:
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])
x = torch.randn(4, 6)
chk("glu", lambda a: F.glu(a, -1), x, grad=True)
chk("prelu", lambda a: F.prelu(a, torch.tensor([0.2], device=a.device)), x, grad=True)
chk("prelu_ch", lambda a, w: F.prelu(a, w), torch.randn(2, 3, 4), torch.rand(3), grad=True)
chk("threshold", lambda a: F.threshold(a, 0.1, 20.0), x, grad=True)
chk("celu", lambda a: F.celu(a, 1.5), x, grad=False)
chk("selu", lambda a: F.selu(a), x)
chk("isinf", lambda a: torch.isinf(a), torch.tensor([1.0, float("inf"), -float("inf"), float("nan")]))
chk("isposinf", lambda a: torch.isposinf(a), torch.tensor([1.0, float("inf"), -float("inf")]))
chk("isneginf", lambda a: torch.isneginf(a), torch.tensor([1.0, float("inf"), -float("inf")]))
chk("logaddexp", torch.logaddexp, torch.randn(3, 4), torch.randn(4))
chk("logaddexp2", torch.logaddexp2, torch.randn(3, 4), torch.randn(4))
chk("heaviside", torch.heaviside, torch.tensor([-1.0, 0.0, 2.0]), torch.tensor([0.5]))
chk("sinc", torch.sinc, torch.randn(10))
chk("logit", lambda a: torch.logit(a, 0.1), torch.rand(10))
chk("addmv", lambda s, m, v: torch.addmv(s, m, v, beta=0.5, alpha=2), torch.randn(3), torch.randn(3, 4), torch.randn(4))
chk("outer", torch.outer, torch.randn(3), torch.randn(4))
chk("addbmm", lambda s, a, b: torch.addbmm(s, a, b, beta=0.5, alpha=1.5), torch.randn(3, 5), torch.randn(4, 3, 2), torch.randn(4, 2, 5))
chk("inverse", torch.inverse, torch.randn(2, 3, 3) + 3 * torch.eye(3))
chk("eye", lambda a: torch.eye(3, 4, device=a.device), torch.zeros(1))
chk("index_copy", lambda s, i, t: s.index_copy(0, i, t), torch.randn(4, 3), torch.tensor([3, 0]), torch.randn(2, 3))
chk("permute", lambda a: a.permute(2, 0, 1).contiguous(), torch.randn(2, 3, 4))
chk("split", lambda a: torch.cat([t * 1 for t in torch.split(a, [1, 3], 0)]), torch.randn(4, 2))
chk("gather_index_select", lambda a, i: a.index_select(1, i), torch.randn(3, 4), torch.tensor([2, 0]))
chk("linalg_cross", lambda a, b: torch.linalg.cross(a, b), torch.randn(4, 3), torch.randn(4, 3))
chk("cross_dim0_broadcast", lambda a, b: torch.linalg.cross(a, b, dim=0), torch.randn(3, 5), torch.randn(3, 1))
chk("cross_int", lambda a, b: torch.cross(a, b, dim=1), torch.randint(-9, 9, (2, 3)), torch.randint(-9, 9, (2, 3)))
chk("unfold", lambda a: F.unfold(a, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), torch.randn(2, 3, 6, 5))
chk("unfold_3d_input", lambda a: F.unfold(a, 2, stride=2), torch.randn(3, 4, 4))
chk("frac", torch.frac, torch.randn(5, 7) * 4)
chk("frac_", lambda a: a.clone().frac_(), torch.randn(5, 7) * 4)
chk("upsample_nearest3d", lambda a: F.interpolate(a, size=(5, 6, 7), mode="nearest"), torch.randn(1, 2, 3, 4, 5), grad=True)
chk("upsample_nearest3d_scale", lambda a: F.interpolate(a, scale_factor=2, mode="nearest"), torch.randn(2, 1, 2, 3, 2), grad=True)
def unique_dim(a):
    v, i, c = torch.unique(a, dim=1, return_inverse=True, return_counts=True)
    return torch.cat([v.flatten().float(), i.float(), c.float()])
chk("unique_dim", unique_dim, torch.tensor([[3, 1, 3, -1], [0, 5, 0, 2]]))
chk("unique_dim_float", lambda a: torch.unique(a, dim=0), torch.tensor([[1.5, 2.0], [0.5, 1.0], [1.5, 2.0]]))
chk("index_fill", lambda a, i: a.index_fill(1, i, -2.5), torch.randn(3, 5), torch.tensor([0, 4, 2]))
chk("index_fill_", lambda a, i: a.clone().index_fill_(0, i, torch.tensor(7)), torch.randint(-9, 9, (4, 3)), torch.tensor([1]))
chk("renorm", lambda a: torch.renorm(a, 2, 0, 0.5), torch.randn(4, 3))
chk("renorm_", lambda a: a.clone().renorm_(1, 1, 1.0), torch.randn(2, 3, 4))
chk("range", lambda a: torch.range(-1, 4, 0.5, device=a.device), torch.zeros(1))
chk("arange_float", lambda a: torch.arange(-1, 4, 0.5, device=a.device), torch.zeros(1))
chk("pdist", lambda a: F.pdist(a), torch.randn(6, 5))
chk("pdist_p1", lambda a: F.pdist(a, p=1), torch.randn(5, 3))
chk("slogdet", lambda a: torch.stack(torch.slogdet(a)), torch.randn(3, 4, 4))
chk("linalg_qr", lambda a: torch.cat([t.flatten() for t in torch.linalg.qr(a)]), torch.randn(2, 5, 3))
chk("linalg_qr_complete", lambda a: torch.cat([t.flatten() for t in torch.linalg.qr(a, mode="complete")]), torch.randn(4, 3))
chk("linalg_qr_r", lambda a: torch.linalg.qr(a, mode="r")[1], torch.randn(3, 6))
try:
    n = torch.normal(torch.zeros(1000, device=D), torch.ones(1000, device=D)).cpu()
    assert abs(n.mean()) < 0.2 and abs(n.std() - 1) < 0.2
    n2 = torch.normal(2.0, 0.5, (1000,), device=D).cpu()
    assert abs(n2.mean() - 2) < 0.1
    print("PASS normal")
except Exception as e:
    FAILED.append("normal")
    print("FAIL normal", str(e).splitlines()[0][:300])
try:
    p = torch.randperm(30, device=D).cpu(); assert torch.equal(p.sort().values, torch.arange(30))
    m = torch.multinomial(torch.tensor([[1.0, 1, 1, 1], [0, 1, 1, 0]], device=D), 2).cpu()
    assert set(m[1].tolist()) == {1, 2} and m[0, 0] != m[0, 1]
    print("PASS randperm_multinomial")
except Exception as e:
    FAILED.append("randperm_multinomial")
    print("FAIL randperm_multinomial", str(e).splitlines()[0][:300])
try:
    w = torch.nn.Parameter(torch.randn(5, device=D)); opt = torch.optim.AdamW([w], lr=0.1)
    wc = torch.nn.Parameter(w.detach().cpu().clone()); optc = torch.optim.AdamW([wc], lr=0.1)
    for _ in range(3):
        for p, o in ((w, opt), (wc, optc)):
            o.zero_grad(); (p * p).sum().backward(); o.step()
    torch.testing.assert_close(w.detach().cpu(), wc.detach(), rtol=1e-4, atol=1e-5)
    print("PASS adamw")
except Exception as e:
    FAILED.append("adamw")
    print("FAIL adamw", str(e).splitlines()[0][:300])

print(f"op_breadth: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
