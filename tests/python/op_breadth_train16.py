"""Training-path torch operations that reach the aclnn operators of `ops/train16.rs` through
torch_npu 2.9, against CPU torch, forward and gradients, fp32 and fp16 where the operator
takes it: scatter_reduce / scatter_reduce_ (aclnnScatterReduce, aclnnInplaceScatterReduce;
sum, prod, mean, amax, amin, with and without self), searchsorted of a scalar
(aclnnSearchSorteds; right / side, sorter, out_int32), linalg.cholesky (aclnnLinalgCholesky;
lower and upper, batched, and the error of a matrix that is not positive-definite), the
gradients of Tensor.unfold (aclnnUnfoldGrad), torch.logit (aclnnLogitGrad, with and without
eps), F.hardswish (aclnnHardswishBackwardV2, including the points -3 and 3), torch.cdist
(aclnnCdistBackward for p other than 0, 1, 2 and inf, which torch_npu keeps on its older
path), F.multilabel_margin_loss (aclnnMultilabelMarginLoss; none, mean, sum), torch._add_relu /
_add_relu_ (aclnnAddRelu / aclnnInplaceAddRelu) and torch_npu's _npu_index_add
(aclnnIndexAddV2).

torch_npu 2.9 sends scatter_reduce / scatter_reduce_ to the aclnn operators only for a FLOAT
self with reduce "sum" and include_self; every other combination runs on torch_npu's own CPU
fallback (kept here as checks of the result, not of our operator).

A case whose torch operation left the NPU (torch_npu's "fallback to run on the CPU"
warning) fails. Prints PASS/FAIL per case and `op_breadth_train16: N failed`; exits 1 when any
case fails.
"""
import sys
import warnings

import torch
import torch_npu  # noqa: F401
import torch.nn.functional as F

D = "npu"
FAILED = []
torch.manual_seed(0)


def run_case(name, body):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            body()
        cpu = [str(w.message) for w in caught if "fallback to run on the CPU" in str(w.message)]
        assert not cpu, f"ran on the CPU: {cpu[0][:200]}"
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else type(e).__name__)


def chk(name, f, *args, grad=(), rtol=1e-4, atol=1e-5, cast=None):
    """f on CPU and on the NPU; `grad` names the positions of args that need gradients
    (compared after backward of a random weighting of the result)."""

    def body():
        cpu = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        npu = [a.to(D) if isinstance(a, torch.Tensor) else a for a in args]
        for i in grad:
            cpu[i].requires_grad_(True)
            npu[i] = npu[i].detach().requires_grad_(True)
        rc, rn = f(*cpu), f(*npu)
        assert rn.device.type == D, f"result on {rn.device}"
        torch.testing.assert_close(rn.detach().cpu(), rc.detach(), rtol=rtol, atol=atol, equal_nan=True)
        if grad:
            w = torch.randn(rc.shape, dtype=rc.dtype)
            (rc * w).sum().backward()
            (rn * w.to(D)).sum().backward()
            for i in grad:
                torch.testing.assert_close(npu[i].grad.cpu(), cpu[i].grad, rtol=rtol, atol=atol, equal_nan=True)

    run_case(name, body)


# ---- scatter_reduce (aclnnScatterReduce / aclnnInplaceScatterReduce) ----
x = torch.randn(4, 5)
idx = torch.tensor([[0, 1, 2, 0, 3], [3, 3, 0, 1, 1], [2, 0, 0, 3, 2]])
src = torch.randn(3, 5)
for red in ("sum", "prod", "mean", "amax", "amin"):
    for inc in (True, False):
        tag = f"scatter_reduce_{red}_{'self' if inc else 'noself'}"
        chk(tag, lambda a, s, red=red, inc=inc: torch.scatter_reduce(a, 0, idx.to(a.device), s, red, include_self=inc), x, src)
        chk(tag + "_", lambda a, s, red=red, inc=inc: a.clone().scatter_reduce_(0, idx.to(a.device), s, red, include_self=inc), x, src)
        chk(tag + "_f16", lambda a, s, red=red, inc=inc: torch.scatter_reduce(a, 0, idx.to(a.device), s, red, include_self=inc), x.half(), src.half(), rtol=2e-3, atol=2e-3)
chk("scatter_reduce_sum_dim1_grad", lambda a, s: torch.scatter_reduce(a, 1, torch.tensor([[0, 0, 2], [1, 4, 4]], device=a.device), s, "sum"), torch.randn(2, 5), torch.randn(2, 3), grad=(0, 1))
chk("scatter_reduce_mean_grad", lambda a, s: torch.scatter_reduce(a, 0, idx.to(a.device), s, "mean", include_self=False), x, src, grad=(0, 1))
chk("scatter_reduce_amax_grad", lambda a, s: torch.scatter_reduce(a, 0, idx.to(a.device), s, "amax"), x, src, grad=(0, 1))
chk("scatter_reduce_int", lambda a, s: torch.scatter_reduce(a, 0, idx.to(a.device), s, "mean", include_self=True), torch.randint(-9, 9, (4, 5)), torch.randint(-9, 9, (3, 5)))
chk("scatter_reduce_int32_prod", lambda a, s: torch.scatter_reduce(a, 0, idx.to(a.device), s, "prod"), torch.randint(-4, 4, (4, 5), dtype=torch.int32), torch.randint(-4, 4, (3, 5), dtype=torch.int32))

# ---- searchsorted of a scalar (aclnnSearchSorteds) ----
seq = torch.tensor([1.0, 2.0, 2.0, 3.5, 7.0])
for v in (2.0, 0.0, 9.0, 3.5):
    chk(f"searchsorted_scalar_{v:g}", lambda s, v=v: torch.searchsorted(s, v), seq)
    chk(f"searchsorted_scalar_{v:g}_right", lambda s, v=v: torch.searchsorted(s, v, right=True), seq)
chk("searchsorted_scalar_side", lambda s: torch.searchsorted(s, 2, side="right"), seq)
chk("searchsorted_scalar_int32", lambda s: torch.searchsorted(s, 2.5, out_int32=True), seq)
chk("searchsorted_scalar_int_seq", lambda s: torch.searchsorted(s, 4), torch.tensor([1, 3, 4, 4, 9]))
unsorted = torch.tensor([7.0, 1.0, 3.5, 2.0])
chk("searchsorted_scalar_sorter", lambda s, o: torch.searchsorted(s, 3.0, sorter=o), unsorted, torch.argsort(unsorted))

# ---- linalg.cholesky (aclnnLinalgCholesky) ----
m = torch.randn(3, 4, 4)
spd = m @ m.mT + 4 * torch.eye(4)
chk("cholesky_lower", lambda a: torch.linalg.cholesky(a), spd, rtol=1e-4, atol=1e-4)
chk("cholesky_upper", lambda a: torch.linalg.cholesky(a, upper=True), spd, rtol=1e-4, atol=1e-4)
chk("cholesky_2d", lambda a: torch.linalg.cholesky(a), spd[1], rtol=1e-4, atol=1e-4)
chk("cholesky_grad", lambda a: torch.linalg.cholesky(a @ a.mT + 4 * torch.eye(4, device=a.device)), m, grad=(0,), rtol=1e-3, atol=1e-3)


def cholesky_not_pd():
    a = torch.tensor([[1.0, 2.0], [2.0, 1.0]], device=D)
    try:
        torch.linalg.cholesky(a).cpu()
    except RuntimeError:
        return
    raise AssertionError("no error for a matrix that is not positive-definite")


# ---- gradients: unfold (aclnnUnfoldGrad), logit (aclnnLogitGrad), hardswish (V2) ----
chk("unfold_grad_overlap", lambda a: a.unfold(1, 3, 1), torch.randn(2, 7, 3), grad=(0,))
chk("unfold_grad_gap", lambda a: a.unfold(0, 2, 3), torch.randn(8), grad=(0,))
chk("unfold_grad_last", lambda a: a.unfold(2, 2, 2), torch.randn(2, 3, 5), grad=(0,))
chk("unfold_grad_f16", lambda a: a.unfold(1, 3, 2), torch.randn(2, 7).half(), grad=(0,), rtol=2e-3, atol=2e-3)
p = torch.tensor([0.05, 0.3, 0.5, 0.7, 0.95, 0.001, 0.999])
chk("logit_grad", lambda a: torch.logit(a), p, grad=(0,))
chk("logit_grad_eps", lambda a: torch.logit(a, eps=0.01), p, grad=(0,))
chk("logit_grad_f16", lambda a: torch.logit(a, eps=0.1), p.half(), grad=(0,), rtol=2e-3, atol=2e-3)
hs = torch.tensor([-5.0, -3.0, -2.0, 0.0, 1.5, 3.0, 4.0])
chk("hardswish_grad", F.hardswish, hs, grad=(0,))
chk("hardswish_grad_f16", F.hardswish, hs.half(), grad=(0,), rtol=2e-3, atol=2e-3)

# ---- cdist gradient (aclnnCdistBackward: p outside [0, 2] and not inf) ----
for pv in (3.0, 2.5):
    chk(f"cdist_grad_p{pv:g}", lambda a, b, pv=pv: torch.cdist(a, b, p=pv), torch.randn(2, 3, 4), torch.randn(2, 5, 4), grad=(0,), rtol=1e-3, atol=1e-4)
chk("cdist_grad_broadcast_p3", lambda a, b: torch.cdist(a, b, p=3.0), torch.randn(3, 4), torch.randn(2, 5, 4), grad=(0,), rtol=1e-3, atol=1e-4)

# ---- multilabel_margin_loss (aclnnMultilabelMarginLoss) ----
ml_x = torch.randn(3, 5)
ml_t = torch.tensor([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0]])
for red in ("none", "mean", "sum"):
    chk(f"multilabel_margin_{red}", lambda a, red=red: F.multilabel_margin_loss(a, ml_t.to(a.device), reduction=red), ml_x)
chk("multilabel_margin_1d", lambda a: F.multilabel_margin_loss(a, ml_t[0].to(a.device)), ml_x[0])
# CPU torch has no float16 multilabel_margin_loss / _add_relu: its reference computes in float
def in_f32_on_cpu(f):
    def g(*args):
        if args[0].device.type == D:
            return f(*args)
        return f(*[a.float() for a in args]).half()
    return g


chk("multilabel_margin_f16", in_f32_on_cpu(lambda a: F.multilabel_margin_loss(a, ml_t.to(a.device))), ml_x.half(), rtol=2e-3, atol=2e-3)

# ---- torch._add_relu (aclnnAddRelu / aclnnInplaceAddRelu) ----
ar = lambda a, b: torch.ops.aten._add_relu(a, b, alpha=1.5)  # noqa: E731
chk("add_relu", ar, torch.randn(3, 4), torch.randn(4))
chk("add_relu_f16", in_f32_on_cpu(ar), torch.randn(3, 4).half(), torch.randn(3, 4).half(), rtol=2e-3, atol=2e-3)
chk("add_relu_int", lambda a, b: torch.ops.aten._add_relu(a, b, alpha=2), torch.randint(-9, 9, (5,)), torch.randint(-9, 9, (5,)))
chk("add_relu_", lambda a, b: torch.ops.aten._add_relu_(a.clone(), b), torch.randn(2, 3), torch.randn(2, 3))

# ---- torch_npu's _npu_index_add (aclnnIndexAddV2, mode 0: alpha takes no part) ----
def npu_index_add(a, i, s):
    if a.device.type == D:
        return torch.ops.npu._npu_index_add(a, i, s)
    return torch.index_add(a, 0, i, s)


chk("npu_index_add", npu_index_add, torch.randn(5, 3), torch.tensor([4, 0, 4, 2]), torch.randn(4, 3))
chk("npu_index_add_f16", npu_index_add, torch.randn(5, 3).half(), torch.tensor([1, 1, 3], dtype=torch.int32), torch.randn(3, 3).half(), rtol=2e-3, atol=2e-3)

run_case("cholesky_not_positive_definite", cholesky_not_pd)

print(f"op_breadth_train16: {len(FAILED)} failed", " ".join(FAILED))
sys.exit(1 if FAILED else 0)
