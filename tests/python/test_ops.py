"""Operator families through torch on `npu` against the same call on CPU, with autograd.

Each case builds its inputs on the CPU from a fixed seed, runs the function on CPU tensors and
on copies moved to the NPU, and compares results (and, for differentiable cases, the input
gradients of a weighted sum of the output). float32 results must agree to a relative
tolerance of 1e-5 (the emulator computes in float32 on the host; only summation order differs).
"""
import pytest
import torch
import torch.nn.functional as F
import torch_npu  # noqa: F401

from npu_ops import require

RTOL, ATOL = 1e-5, 1e-6

# aclnn functions some cases need beyond the common ones (forward or backward).
NEEDS = {
    "abs": ["aclnnSign"],  # abs backward
    "clamp": ["aclnnClamp"],
    "gelu_tanh": ["aclnnGeluV2"],
    "max_dim": ["aclnnInplaceScatter"],  # max.dim backward scatters the gradient
    "var": ["aclnnVarCorrection"],
}


def rnd(*shape, seed=0, dtype=torch.float32, positive=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    if positive:
        x = x.abs() + 0.1
    return x.to(dtype)


def compare(fn, *inputs, grad=True, rtol=RTOL, atol=ATOL):
    """Run fn on CPU and NPU copies of `inputs`; compare outputs and input gradients."""
    cpu_in = [x.clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    npu_in = [x.clone().npu().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    out_c, out_n = fn(*cpu_in), fn(*npu_in)
    outs_c = out_c if isinstance(out_c, (tuple, list)) else (out_c,)
    outs_n = out_n if isinstance(out_n, (tuple, list)) else (out_n,)
    for c, n in zip(outs_c, outs_n):
        assert n.device.type == "npu"
        assert n.dtype == c.dtype and n.shape == c.shape
        torch.testing.assert_close(n.detach().cpu(), c.detach(), rtol=rtol, atol=atol)
    if grad and outs_c[0].requires_grad:
        w = rnd(*outs_c[0].shape, seed=99)
        (outs_c[0] * w).sum().backward()
        (outs_n[0] * w.npu()).sum().backward()
        for c, n in zip(cpu_in, npu_in):
            if c.grad is not None:
                torch.testing.assert_close(n.grad.cpu(), c.grad, rtol=rtol, atol=atol)


CASES = {
    # arithmetic, broadcasting, scalars
    "add": (lambda a, b: a + b, [rnd(4, 5), rnd(5, seed=1)]),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=0.5), [rnd(4, 5), rnd(4, 5, seed=1)]),
    "add_scalar": (lambda a: a + 2.5, [rnd(3, 7)]),
    "sub": (lambda a, b: a - b, [rnd(4, 5), rnd(4, 1, seed=1)]),
    "mul": (lambda a, b: a * b, [rnd(4, 5), rnd(4, 5, seed=1)]),
    "mul_scalar": (lambda a: a * 3.0, [rnd(6)]),
    "div": (lambda a, b: a / b, [rnd(4, 5), rnd(4, 5, seed=1, positive=True)]),
    "div_scalar": (lambda a: a / 4.0, [rnd(6)]),
    "neg": (lambda a: -a, [rnd(5)]),
    "pow": (lambda a: a.pow(2), [rnd(5)]),
    # unary math
    "exp": (torch.exp, [rnd(5, 5)]),
    "log": (torch.log, [rnd(5, 5, positive=True)]),
    "sqrt": (torch.sqrt, [rnd(5, 5, positive=True)]),
    "rsqrt": (torch.rsqrt, [rnd(5, 5, positive=True)]),
    "abs": (torch.abs, [rnd(5, 5)]),
    "tanh": (torch.tanh, [rnd(5, 5)]),
    "sigmoid": (torch.sigmoid, [rnd(5, 5)]),
    # activations
    "relu": (F.relu, [rnd(6, 6)]),
    "gelu_tanh": (lambda a: F.gelu(a, approximate="tanh"), [rnd(6, 6)]),
    "silu": (F.silu, [rnd(6, 6)]),
    "softmax": (lambda a: F.softmax(a, dim=-1), [rnd(3, 4, 5)]),
    "log_softmax": (lambda a: F.log_softmax(a, dim=1), [rnd(3, 4, 5)]),
    # matmul family
    "mm": (torch.mm, [rnd(7, 5), rnd(5, 3, seed=1)]),
    "matmul_batched": (torch.matmul, [rnd(2, 3, 4, 5), rnd(2, 3, 5, 6, seed=1)]),
    "linear": (F.linear, [rnd(8, 5), rnd(3, 5, seed=1), rnd(3, seed=2)]),
    "bmm": (torch.bmm, [rnd(3, 4, 5), rnd(3, 5, 2, seed=1)]),
    # reductions
    "sum": (torch.sum, [rnd(4, 5)]),
    "sum_dim": (lambda a: a.sum(dim=1, keepdim=True), [rnd(4, 5, 6)]),
    "mean": (lambda a: a.mean(dim=-1), [rnd(4, 5)]),
    "max_dim": (lambda a: a.max(dim=1).values, [rnd(4, 5)]),
    "amax": (lambda a: a.amax(dim=0), [rnd(4, 5)]),
    "norm": (lambda a: a.norm(), [rnd(4, 5)]),
    "var": (lambda a: a.var(dim=1), [rnd(4, 6)]),
    # normalisation, embedding
    "layer_norm": (lambda a, w, b: F.layer_norm(a, (6,), w, b), [rnd(4, 3, 6), rnd(6, seed=1), rnd(6, seed=2)]),
    "embedding": (lambda w: F.embedding(torch.tensor([[0, 3, 2], [1, 1, 4]], device=w.device), w), [rnd(5, 4)]),
    # shape and data movement
    "cat": (lambda a, b: torch.cat([a, b], dim=1), [rnd(3, 2), rnd(3, 4, seed=1)]),
    "transpose_contiguous": (lambda a: a.transpose(0, 1).contiguous(), [rnd(3, 4)]),
    "reshape_view": (lambda a: a.reshape(2, 6).t() * 1.0, [rnd(3, 4)]),
    "pad": (lambda a: F.pad(a, (1, 2)), [rnd(3, 4)]),
    "slice_copy": (lambda a: a[:, 1:3] * 1.0, [rnd(3, 4)]),
    # comparisons, selection, masking
    "where": (lambda a, b: torch.where(a > 0, a, b), [rnd(4, 4), rnd(4, 4, seed=1)]),
    "masked_fill": (lambda a: a.masked_fill(a < 0, -1e9), [rnd(4, 4)]),
    "clamp": (lambda a: a.clamp(-0.5, 0.5), [rnd(4, 4)]),
    # losses
    "mse": (lambda a, b: F.mse_loss(a, b), [rnd(4, 5), rnd(4, 5, seed=1)]),
    "cross_entropy": (lambda a: F.cross_entropy(a, torch.tensor([1, 0, 3], device=a.device)), [rnd(3, 4)]),
    "nll": (lambda a: F.nll_loss(F.log_softmax(a, 1), torch.tensor([2, 1], device=a.device)), [rnd(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_family_matches_cpu(name):
    require(*NEEDS.get(name, []))
    fn, inputs = CASES[name]
    compare(fn, *inputs)


def test_gelu_is_canns_tanh_form():
    """torch_npu runs F.gelu (and its backward) through aclnnGelu / aclnnGeluBackward, which
    CANN defines as the tanh approximation: on NPU, F.gelu(x) is CPU's
    F.gelu(x, approximate="tanh"), as on Ascend hardware."""
    x = rnd(6, 6)
    xc, xn = x.clone().requires_grad_(), x.clone().npu().requires_grad_()
    yc, yn = F.gelu(xc, approximate="tanh"), F.gelu(xn)
    torch.testing.assert_close(yn.detach().cpu(), yc.detach(), rtol=RTOL, atol=ATOL)
    yc.sum().backward()
    yn.sum().backward()
    torch.testing.assert_close(xn.grad.cpu(), xc.grad, rtol=RTOL, atol=ATOL)


def test_integer_and_bool_ops():
    a = torch.arange(-5, 7, dtype=torch.int64)
    for fn in (lambda x: x + 3, lambda x: x * 2, lambda x: (x > 0), lambda x: x.sum(), lambda x: x.max()):
        assert torch.equal(fn(a.npu()).cpu(), fn(a))


def test_casts():
    x = rnd(5, 5)
    for dt in (torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool):
        assert torch.equal(x.npu().to(dt).cpu(), x.to(dt))
    h = x.to(torch.float16)
    torch.testing.assert_close(h.npu().float().cpu(), h.float())


def test_factories_on_device():
    d = "npu"
    assert torch.equal(torch.zeros(3, 4, device=d).cpu(), torch.zeros(3, 4))
    assert torch.equal(torch.ones(5, device=d).cpu(), torch.ones(5))
    assert torch.equal(torch.full((2, 2), 7.0, device=d).cpu(), torch.full((2, 2), 7.0))
    assert torch.equal(torch.arange(10, device=d).cpu(), torch.arange(10))
    z = torch.empty(6, device=d).fill_(2.0).zero_()
    assert torch.equal(z.cpu(), torch.zeros(6))


def test_random_is_seeded_and_distributed():
    torch.npu.manual_seed(123)
    a = torch.randn(20000, device="npu").cpu()
    torch.npu.manual_seed(123)
    b = torch.randn(20000, device="npu").cpu()
    assert torch.equal(a, b)
    assert abs(a.mean().item()) < 0.05 and abs(a.std().item() - 1) < 0.05
    u = torch.rand(20000, device="npu").cpu()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean().item() - 0.5) < 0.02


def test_dropout_statistics():
    require("aclnnDropoutGenMaskV2", "aclnnDropoutDoMask")
    torch.npu.manual_seed(7)
    x = torch.ones(100000, device="npu", requires_grad=True)
    y = F.dropout(x, p=0.25, training=True)
    yc = y.detach().cpu()
    zero = (yc == 0).float().mean().item()
    assert abs(zero - 0.25) < 0.01
    assert torch.allclose(yc[yc != 0], torch.full_like(yc[yc != 0], 1 / 0.75))
    y.sum().backward()
    torch.testing.assert_close(x.grad.cpu(), yc)  # the same mask scales the gradient
    assert torch.equal(F.dropout(x, p=0.25, training=False).detach().cpu(), torch.ones(100000))


def test_in_place_and_optimizer_style_ops():
    p = rnd(10)
    g = rnd(10, seed=1)
    pc, pn = p.clone(), p.clone().npu()
    for t, gg in ((pc, g), (pn, g.npu())):
        t.add_(gg, alpha=-0.1)
        t.mul_(0.9)
        t.addcmul_(gg, gg, value=0.01)
        t.addcdiv_(gg, gg.abs() + 1, value=-0.02)
        t.lerp_(gg, 0.3)
    torch.testing.assert_close(pn.cpu(), pc, rtol=RTOL, atol=ATOL)


def test_graph_capture_replays_operators_on_new_data():
    """torch.npu.graph: operators captured once run again at every replay, reading the
    static input's current data (aclnn tasks are repeatable in a captured model)."""
    require("aclnnMatmul", "aclnnRelu", "aclnnMuls", "aclnnAdds")
    w = rnd(16, 16, seed=3)
    static_in = torch.ones(16, device="npu")
    wn = w.npu()
    side = torch.npu.Stream()
    side.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(side):  # warm-up outside the capture, as PyTorch's docs do
        for _ in range(2):
            static_out = torch.relu(static_in @ wn) * 2 + 1
    torch.npu.current_stream().wait_stream(side)
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        static_out = torch.relu(static_in @ wn) * 2 + 1
    for v in (5.0, -3.0, 0.5):
        static_in.fill_(v)
        g.replay()
        torch.npu.synchronize()
        want = torch.relu(torch.full((16,), v) @ w) * 2 + 1
        torch.testing.assert_close(static_out.cpu(), want, rtol=RTOL, atol=ATOL)
