"""The operators torch_npu 2.9 runs through the aclnn functions added after the first set,
on `npu` against the same call on CPU (values exact for data movement, 1e-5 relative for
arithmetic): triu/tril, stack, sign, clamp (scalar and tensor bounds, in place), scatter_
(tensor and value, with reduce), masked_select, expand + contiguous, gelu(approximate="tanh")
with its backward, var/std, the bitwise operators and printing an NPU tensor (torch's
formatter runs isfinite & ne and masked_select on the device), and dropout in train mode (a mask drawn on the device: checked by
its statistics and by the backward using the same mask).
"""
import pytest
import torch
import torch.nn.functional as F
import torch_npu  # noqa: F401

from npu_ops import require

RTOL, ATOL = 1e-5, 1e-6


def rnd(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def same(fn, *inputs, exact=False, grad=False):
    cpu_in = [x.clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    npu_in = [x.clone().npu().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    c, n = fn(*cpu_in), fn(*npu_in)
    assert n.device.type == "npu" and n.dtype == c.dtype and n.shape == c.shape, (n.shape, c.shape)
    if exact:
        assert torch.equal(n.detach().cpu(), c.detach()), (n, c)
    else:
        torch.testing.assert_close(n.detach().cpu(), c.detach(), rtol=RTOL, atol=ATOL)
    if grad:
        w = rnd(*c.shape, seed=99)
        (c * w).sum().backward()
        (n * w.npu()).sum().backward()
        for a, b in zip(cpu_in, npu_in):
            if a.grad is not None:
                torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=RTOL, atol=ATOL)


def test_triu_tril():
    require("aclnnTriu", "aclnnTril", "aclnnInplaceTriu", "aclnnInplaceTril")
    x = rnd(5, 6)
    for d in (0, 1, -2, 4):
        same(lambda a: a.triu(d), x, exact=True)
        same(lambda a: a.tril(d), x, exact=True)
        same(lambda a: torch.triu(a.t(), d), x, exact=True)  # a transposed view
    same(lambda a: a.clone().triu_(1), rnd(2, 3, 4), exact=True)
    same(lambda a: a.clone().tril_(-1), rnd(2, 3, 4), exact=True)
    # the causal mask of attention
    m = torch.ones(4, 4, dtype=torch.bool)
    assert torch.equal(torch.triu(m.npu(), 1).cpu(), torch.triu(m, 1))
    same(lambda a: a.triu(), x, grad=True)


def test_stack():
    require("aclnnStack")
    a, b, c = rnd(3, 4), rnd(3, 4, seed=1), rnd(3, 4, seed=2)
    for dim in (0, 1, 2, -1):
        same(lambda x, y, z: torch.stack([x, y, z], dim=dim), a, b, c, exact=True)
    same(lambda x, y: torch.stack([x, y.t().contiguous().t()]), a, b, exact=True)
    i = torch.arange(6).reshape(2, 3)
    assert torch.equal(torch.stack([i.npu(), i.npu() * 2], 1).cpu(), torch.stack([i, i * 2], 1))
    same(lambda x, y: torch.stack([x, y], 1), a, b, grad=True)


def test_sign():
    require("aclnnSign")
    x = torch.tensor([-2.5, -0.0, 0.0, 3.0, float("inf"), -float("inf")])
    same(torch.sign, x, exact=True)
    same(torch.sign, torch.tensor([-3, 0, 7]), exact=True)
    same(lambda a: a.abs(), rnd(4, 4), grad=True)  # abs backward is grad * sign(x)


def test_clamp():
    require("aclnnClamp", "aclnnClampMin", "aclnnClampMax", "aclnnClampTensor")
    x = rnd(5, 5)
    same(lambda a: a.clamp(-0.5, 0.5), x, exact=True)
    same(lambda a: a.clamp(min=0.1), x, exact=True)
    same(lambda a: a.clamp(max=-0.1), x, exact=True)
    same(lambda a: a.clamp_min(0.2), x, exact=True)
    same(lambda a: a.clamp_max(0.3), x, exact=True)
    lo, hi = rnd(5, 5, seed=1) - 1, rnd(5, 1, seed=2) + 1
    same(lambda a, l, h: torch.clamp(a, l, h), x, lo, hi, exact=True)
    same(lambda a, l: torch.clamp(a, min=l), x, lo, exact=True)
    same(lambda a, h: torch.clamp(a, max=h), x, hi, exact=True)
    same(lambda a: a.clone().clamp_(-0.2, 0.2), x, exact=True)
    same(lambda a: torch.clamp(torch.arange(-5, 5).to(a.device), -2, 3), x[0], exact=True)
    same(lambda a: a.clamp(-0.5, 0.5), x, grad=True)


def test_scatter():
    require("aclnnScatter", "aclnnInplaceScatter", "aclnnInplaceScatterValue")
    x = rnd(3, 5)
    src = rnd(2, 5, seed=1)
    idx = torch.tensor([[0, 1, 2, 0, 1], [2, 0, 1, 1, 0]])
    same(lambda a, s: a.clone().scatter_(0, idx.to(a.device), s), x, src, exact=True)
    same(lambda a, s: torch.scatter(a, 0, idx.to(a.device), s), x, src, exact=True)
    same(lambda a: a.clone().scatter_(0, idx.to(a.device), 2.5), x, exact=True)
    idx1 = torch.tensor([[4, 0], [1, 3], [2, 2]])
    same(lambda a, s: a.clone().scatter_(1, idx1.to(a.device), s), x, rnd(3, 2, seed=3), exact=True)
    same(lambda a, s: a.clone().scatter_(0, idx.to(a.device), s, reduce="add"), x, src)
    same(lambda a, s: a.clone().scatter_(0, idx.to(a.device), s, reduce="multiply"), x, src)
    # one-hot targets, as a classifier's label smoothing builds them
    lab = torch.tensor([2, 0, 3])
    oh = torch.zeros(3, 4).npu().scatter_(1, lab.npu().unsqueeze(1), 1.0)
    assert torch.equal(oh.cpu(), F.one_hot(lab, 4).float())


def test_masked_select():
    require("aclnnMaskedSelect")
    x = rnd(4, 5)
    same(lambda a: a.masked_select(a > 0), x, exact=True)
    m = torch.tensor([True, False, True, True, False])
    same(lambda a: torch.masked_select(a, m.to(a.device)), x, exact=True)  # mask broadcast
    same(lambda a: a.t().masked_select(a.t() < 0.5), x, exact=True)
    i = torch.arange(12).reshape(3, 4)
    assert torch.equal(i.npu().masked_select(i.npu() % 3 == 0).cpu(), i.masked_select(i % 3 == 0))
    none = x.npu().masked_select(x.npu() > 100)
    assert none.shape == (0,)
    same(lambda a: a.masked_select(a > 0), x, grad=True)


def test_expand_contiguous():
    require("aclnnExpand")
    x = rnd(3, 1)
    same(lambda a: a.expand(2, 3, 4).contiguous(), x, exact=True)
    same(lambda a: a.expand(-1, 6).contiguous() * 1.0, x, exact=True)
    same(lambda a: a[None].expand(5, 3, 2).clone(), x, exact=True)
    b = torch.tensor([1, 2, 3])
    assert torch.equal(b.npu().expand(2, 3).contiguous().cpu(), b.expand(2, 3).contiguous())
    same(lambda a: a.expand(3, 4).contiguous(), x, grad=True)


def test_gelu_tanh():
    require("aclnnGelu", "aclnnGeluBackward")
    same(lambda a: F.gelu(a, approximate="tanh"), rnd(6, 7), grad=True)
    same(lambda a: F.gelu(a, approximate="tanh"), rnd(2, 3, 4).transpose(0, 2), grad=True)


def test_var_std():
    require("aclnnVarCorrection", "aclnnStd", "aclnnVarMean", "aclnnStdMeanCorrection")
    x = rnd(4, 6)
    same(lambda a: a.var(dim=1), x, grad=True)
    same(lambda a: a.var(dim=0, unbiased=False, keepdim=True), x)
    same(lambda a: a.var(), x)
    same(lambda a: a.std(dim=-1), x)
    same(lambda a: torch.var_mean(a, dim=1)[0], x)
    same(lambda a: torch.var_mean(a, dim=1)[1], x)
    same(lambda a: torch.std_mean(a, dim=0, correction=0)[0], x)


def test_dropout_train_mode():
    require("aclnnDropoutGenMaskV2", "aclnnDropoutDoMask")
    torch.npu.manual_seed(3)
    x = rnd(200, 300).npu().requires_grad_()
    drop = torch.nn.Dropout(p=0.4).train()
    y = drop(x)
    keep = (y.detach() != 0).cpu()
    frac = keep.float().mean().item()
    assert abs(frac - 0.6) < 0.01, frac
    torch.testing.assert_close(y.detach().cpu()[keep], x.detach().cpu()[keep] / 0.6, rtol=RTOL, atol=ATOL)
    y.sum().backward()
    g = x.grad.cpu()
    assert torch.equal(g != 0, keep)  # the backward reuses the forward's mask
    torch.testing.assert_close(g[keep], torch.full_like(g[keep], 1 / 0.6))
    # the same seed draws the same mask; eval mode is the identity
    torch.npu.manual_seed(3)
    y2 = drop(x.detach())
    assert torch.equal((y2 != 0).cpu(), keep)
    assert torch.equal(drop.eval()(x.detach()).cpu(), x.detach().cpu())
    # F.dropout on a half tensor
    h = F.dropout(torch.ones(4096, dtype=torch.float16).npu(), p=0.5, training=True).cpu()
    assert set(h.unique().tolist()) <= {0.0, 2.0}


def test_bitwise_and_printing():
    require("aclnnBitwiseAndTensor", "aclnnBitwiseAndScalar", "aclnnBitwiseOrTensor", "aclnnBitwiseNot")
    a, b = torch.tensor([12, 10, -1, 0]), torch.tensor([10, 6, 5, 3])
    for fn in (lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y, lambda x, y: ~x, lambda x, y: x & 6):
        assert torch.equal(fn(a.npu(), b.npu()).cpu(), fn(a, b))
    m, n = torch.tensor([True, False, True]), torch.tensor([True, True, False])
    assert torch.equal((m.npu() & n.npu()).cpu(), m & n)
    assert torch.equal((~m.npu()).cpu(), ~m)
    # printing an NPU tensor runs isfinite & ne, masked_select, abs, max/min on the device
    x = rnd(50, 40)
    x[0, 0] = float("inf")
    s = str(x.npu())
    assert "device='npu:0'" in s and "inf" in s
    assert s.replace(",\n       device='npu:0')", ")") == str(x), (s, str(x))
    assert str(torch.arange(5).npu()) == "tensor([0, 1, 2, 3, 4], device='npu:0')"
