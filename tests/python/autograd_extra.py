"""Operators torch_npu's autograd and in-place utilities reach (aclnnIm2colBackward,
aclnnRepeatInterleaveGrad, aclnnInplaceFillDiagonal, aclnnReflectionPad1d/2dBackward,
aclnnReplicationPad1d/2dBackward, aclnnChannelShuffle, aclnnSoftMarginLoss(+Backward),
aclnnEmbeddingRenorm, aclnnRReluWithNoise), against CPU torch: F.unfold's gradient,
F.fold forward and backward, repeat_interleave with a tensor of counts and its gradient, and
fill_diagonal_ (with and without wrap, 2-D and cubic), reflect/replicate F.pad gradients in
1-D and 2-D, channel_shuffle, soft_margin_loss with its gradient, F.embedding's max_norm, and F.rrelu
(evaluation against CPU; training by the slopes' range and mean, and the gradient). Prints PASS/FAIL per case and exits 1
when any case fails.
"""
import sys

import torch
import torch_npu  # noqa: F401
import torch.nn.functional as F

D = "npu"
FAILED = []
torch.manual_seed(0)


def chk(name, f, *args, grad=True, rtol=1e-4, atol=1e-5):
    try:
        cpu = [a.clone().requires_grad_(grad) for a in args]
        npu = [a.detach().to(D).requires_grad_(grad) for a in args]
        rc, rn = f(*cpu), f(*npu)
        torch.testing.assert_close(rn.detach().cpu(), rc.detach(), rtol=rtol, atol=atol)
        if grad:
            w = torch.randn(rc.shape)
            (rc * w).sum().backward()
            (rn * w.to(D)).sum().backward()
            for a, b in zip(cpu, npu):
                torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=rtol, atol=atol)
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


x = torch.randn(2, 3, 7, 6)
chk("unfold_grad", lambda a: F.unfold(a, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), x)
chk("unfold_grad_3d", lambda a: F.unfold(a[0], 3, padding=1), x)
cols = torch.randn(2, 3 * 2 * 2, 12)
chk("fold", lambda c: F.fold(c, (5, 8), (2, 2), stride=2, padding=(1, 0)), cols)
chk("fold_dilated", lambda c: F.fold(c[:, :, :6], (5, 5), 2, dilation=2, stride=(1, 2)), cols)
chk("fold_half", lambda c: F.fold(c.half(), (6, 6), 2, stride=2).float(), torch.randn(1, 8, 9), grad=False, rtol=1e-3, atol=1e-3)
r = torch.tensor([1, 0, 3, 2])
chk("repeat_interleave_counts", lambda a: torch.repeat_interleave(a, r.to(a.device), dim=1), torch.randn(3, 4, 2))
chk("repeat_interleave_counts_dim0", lambda a: torch.repeat_interleave(a, r.to(a.device), dim=0), torch.randn(4, 5))
chk("repeat_interleave_one_count", lambda a: torch.repeat_interleave(a, torch.tensor([3], device=a.device), dim=-1), torch.randn(2, 5))
for shape, wrap in [((4, 4), False), ((7, 3), True), ((7, 3), False), ((3, 6), True), ((3, 3, 3), False)]:
    chk(f"fill_diagonal_{'x'.join(map(str, shape))}_{wrap}", lambda a: a.clone().fill_diagonal_(-2.5, wrap=wrap), torch.randn(shape), grad=False)
chk("fill_diagonal_int", lambda a: a.clone().fill_diagonal_(9), torch.randint(0, 5, (4, 5)), grad=False)
chk("fill_diagonal_strided", lambda a: a.t().fill_diagonal_(1.5), torch.randn(5, 4), grad=False)

for mode in ("reflect", "replicate"):
    chk(f"pad_{mode}_2d", lambda a: F.pad(a, (1, 2, 2, 1), mode=mode), x)
    chk(f"pad_{mode}_1d", lambda a: F.pad(a.flatten(2), (3, 2), mode=mode), x)
    chk(f"pad_{mode}_2d_half", lambda a: F.pad(a.half(), (1, 1, 1, 1), mode=mode).float(), x, rtol=1e-3, atol=1e-3)
chk("reflection_pad_module", lambda a: torch.nn.ReflectionPad2d(2)(a), x)

chk("channel_shuffle", lambda a: F.channel_shuffle(a.repeat(1, 2, 1, 1), 3), x)
chk("channel_shuffle_int", lambda a: F.channel_shuffle(a, 2), torch.randint(0, 9, (2, 4, 3)), grad=False)
for red in ("none", "mean", "sum"):
    tgt = torch.randn(4, 5).sign()
    chk(f"soft_margin_{red}", lambda a: F.soft_margin_loss(a, tgt.to(a.device), reduction=red), torch.randn(4, 5))


def renorm(a):
    w = a.clone()
    F.embedding(torch.tensor([[0, 3], [3, 1]], device=a.device), w, max_norm=1.5, norm_type=1.0)
    return w


chk("embedding_max_norm", renorm, torch.randn(5, 4) * 2, grad=False)
chk("embedding_max_norm_grad", lambda w: F.embedding(torch.tensor([0, 2, 2], device=w.device), w, max_norm=1.0), torch.randn(4, 3) * 3, grad=False)

chk("rrelu_eval", lambda a: F.rrelu(a, 0.1, 0.3, training=False), x)
chk("rrelu_module_eval", lambda a: torch.nn.RReLU().eval()(a), x)


def rrelu_train():
    try:
        v = torch.randn(4000)
        vn = v.to(D).requires_grad_()
        y = F.rrelu(vn, 0.1, 0.3, training=True)
        y.sum().backward()
        y, g, neg = y.detach().cpu(), vn.grad.cpu(), v <= 0
        slopes = y[neg] / v[neg]
        assert torch.equal(y[~neg], v[~neg]), "positives changed"
        assert slopes.min() >= 0.1 and slopes.max() < 0.3, (slopes.min(), slopes.max())
        assert abs(slopes.mean().item() - 0.2) < 0.01, slopes.mean()
        assert slopes.std() > 0.04, slopes.std()  # a draw per element, not one slope
        torch.testing.assert_close(g[neg], slopes, rtol=1e-5, atol=1e-6)
        print("PASS rrelu_train")
    except Exception as e:  # noqa: BLE001
        FAILED.append("rrelu_train")
        print("FAIL rrelu_train", str(e).splitlines()[0][:300])


rrelu_train()

print(f"autograd_extra: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
