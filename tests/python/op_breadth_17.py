"""The torch operations that reach the aclnn operators of npu-emu's `ops/ctc.rs`,
`ops/embedding_bag.rs`, `ops/upsample_aa.rs` and `ops/random2.rs` through torch_npu, against
CPU torch, forward and gradients:
- F.ctc_loss / nn.CTCLoss -> aclnnCtcLoss, aclnnCtcLossBackward (reductions none / mean /
  sum, blank, zero_infinity, padded and concatenated targets, unbatched input);
- F.embedding_bag / nn.EmbeddingBag -> aclnnEmbeddingBag (sum / mean / max, empty bags,
  include_last_offset, padding_idx, per_sample_weights, 2-D input, int32 indices, float16);
- F.interpolate(mode="nearest-exact") on 5-D input -> aclnnUpsampleNearestExact3d (+Backward);
- F.interpolate(mode="bilinear" / "bicubic", antialias=True) -> aclnnUpsampleBilinear2dAA
  (+Backward), aclnnUpsampleBicubic2dAA (+Grad);
- Tensor.random_ / torch.multinomial / Tensor.exponential_: range, mean and variance within
  about 4 standard errors and reproducibility under torch.npu.manual_seed (outside NPU-graph
  capture torch_npu runs the plain forms aclnnInplaceRandom / aclnnMultinomial /
  uniform + log; the Tensor forms of ops/random2.rs are checked in aclnn_ops17.cpp).
Prints PASS/FAIL per case and a final "op_breadth_17: N failed" line; exits 1 on failure.
"""
import sys

import torch
import torch_npu  # noqa: F401
import torch.nn.functional as F

D = "npu"
FAILED = []
torch.manual_seed(0)


def report(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else repr(e))


def close(got, want, rtol=1e-4, atol=1e-5):
    assert got.device.type == D, f"result on {got.device}"
    torch.testing.assert_close(got.cpu(), want, rtol=rtol, atol=atol, equal_nan=True)


def fwd_bwd(f, inputs, grad_of, rtol=1e-4, atol=1e-5, dtype=None):
    """f(*inputs) on CPU and NPU; the result and the gradients of the inputs listed in
    grad_of (indices) must agree."""
    def run(dev):
        xs = []
        for i, a in enumerate(inputs):
            if isinstance(a, torch.Tensor):
                a = a.detach().clone().to(dev)
                if i in grad_of:
                    a.requires_grad_(True)
            xs.append(a)
        out = f(*xs)
        g = torch.randn(out.shape, generator=torch.Generator().manual_seed(7), dtype=out.dtype)
        out.backward(g.to(dev))
        return out, [xs[i].grad for i in grad_of]

    oc, gc = run("cpu")
    on, gn = run(D)
    close(on, oc.detach(), rtol, atol)
    for a, b in zip(gn, gc):
        close(a, b, rtol, atol)


# ---- CTC loss ----
T, N, C, S = 12, 4, 6, 5
lp = torch.randn(T, N, C).log_softmax(2)
tg = torch.randint(1, C, (N, S))
il = [12, 10, 12, 7]
tls = [5, 3, 4, 2]
for red in ("none", "mean", "sum"):
    report(f"ctc_{red}", lambda red=red: fwd_bwd(
        lambda a, t: F.ctc_loss(a, t, il, tls, reduction=red), [lp, tg], [0]))
report("ctc_tensor_lengths", lambda: fwd_bwd(
    lambda a, t: F.ctc_loss(a, t, torch.tensor(il), torch.tensor(tls)), [lp, tg], [0]))
# blank in the middle of the classes: targets avoid it
tgb = torch.tensor([[0, 1, 3, 4, 5], [5, 5, 1, 0, 0], [3, 3, 3, 1, 0], [4, 0, 0, 0, 0]])
report("ctc_blank2_repeats", lambda: fwd_bwd(
    lambda a, t: F.ctc_loss(a, t, il, [5, 3, 4, 2], blank=2, reduction="sum"), [lp, tgb], [0]))
# concatenated 1-D targets
cat = torch.cat([tg[b, :tls[b]] for b in range(N)])
report("ctc_concatenated", lambda: fwd_bwd(
    lambda a, t: F.ctc_loss(a, t, il, tls, reduction="none"), [lp, cat], [0]))
# an impossible alignment (input length 2 for 4 labels): infinite loss, zero_infinity zeroes
# the loss and its gradient
tinf = [4, 3, 4, 2]
iinf = [2, 10, 12, 7]
report("ctc_infinite_none", lambda: fwd_bwd(
    lambda a, t: F.ctc_loss(a, t, iinf, tinf, reduction="none")[1:], [lp, tg], [0]))
report("ctc_infinite_value", lambda: close(
    F.ctc_loss(lp.to(D), tg.to(D), iinf, tinf, reduction="none")[:1],
    torch.tensor([float("inf")])))
report("ctc_zero_infinity", lambda: fwd_bwd(
    lambda a, t: F.ctc_loss(a, t, iinf, tinf, reduction="mean", zero_infinity=True), [lp, tg], [0]))
report("ctc_module_double", lambda: fwd_bwd(
    lambda a, t: torch.nn.CTCLoss(blank=0)(a, t, il, tls), [lp.double(), tg], [0], rtol=1e-9, atol=1e-10))
# unbatched (T, C) input with a 1-D target
report("ctc_unbatched", lambda: fwd_bwd(
    lambda a, t: F.ctc_loss(a, t, [9], [3]), [lp[:9, 0], tg[0, :3]], [0]))
# empty target: the loss is -sum of the blank's log-probabilities
report("ctc_empty_target", lambda: fwd_bwd(
    lambda a, t: F.ctc_loss(a, t, il, [0, 3, 4, 2], reduction="sum"), [lp, tg], [0]))

# ---- embedding_bag ----
W = torch.randn(10, 3)
idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])
offs = torch.tensor([0, 4, 4, 7])  # bag 1 is empty


def eb(w, i, o, **kw):
    return F.embedding_bag(i, w, o, **kw)


for mode in ("sum", "mean", "max"):
    report(f"embedding_bag_{mode}", lambda mode=mode: close(
        eb(W.to(D), idx.to(D), offs.to(D), mode=mode), eb(W, idx, offs, mode=mode)))
    report(f"embedding_bag_{mode}_last_offset", lambda mode=mode: close(
        eb(W.to(D), idx.to(D), torch.tensor([0, 3, 3, 8, 10]).to(D), mode=mode, include_last_offset=True),
        eb(W, idx, torch.tensor([0, 3, 3, 8, 10]), mode=mode, include_last_offset=True)))
    report(f"embedding_bag_{mode}_padding", lambda mode=mode: close(
        eb(W.to(D), idx.to(D), offs.to(D), mode=mode, padding_idx=4),
        eb(W, idx, offs, mode=mode, padding_idx=4)))
psw = torch.randn(10)
report("embedding_bag_per_sample_weights", lambda: close(
    eb(W.to(D), idx.to(D), offs.to(D), mode="sum", per_sample_weights=psw.to(D)),
    eb(W, idx, offs, mode="sum", per_sample_weights=psw)))
report("embedding_bag_2d_input", lambda: close(
    eb(W.to(D), idx.view(2, 5).to(D), None, mode="mean"), eb(W, idx.view(2, 5), None, mode="mean")))
report("embedding_bag_int32", lambda: close(
    eb(W.to(D), idx.int().to(D), offs.int().to(D), mode="sum"), eb(W, idx.int(), offs.int(), mode="sum")))
report("embedding_bag_f16", lambda: close(
    eb(W.half().to(D), idx.to(D), offs.to(D), mode="mean"), eb(W.half().float(), idx, offs, mode="mean").half(),
    rtol=1e-3, atol=1e-3))
report("nn_EmbeddingBag_max", lambda: close(
    torch.nn.EmbeddingBag.from_pretrained(W.to(D), mode="max")(idx.view(5, 2).to(D)),
    torch.nn.EmbeddingBag.from_pretrained(W, mode="max")(idx.view(5, 2))))
# gradients (torch composes the weight's gradient from other operators)
for mode in ("sum", "mean", "max"):
    report(f"embedding_bag_{mode}_grad", lambda mode=mode: fwd_bwd(
        lambda w, i, o: eb(w, i, o, mode=mode, padding_idx=4), [W, idx, offs], [0]))
report("embedding_bag_per_sample_weights_grad", lambda: fwd_bwd(
    lambda w, i, o, p: eb(w, i, o, mode="sum", per_sample_weights=p), [W, idx, offs, psw], [0, 3]))

# ---- upsampling: nearest-exact in 3-D, anti-aliased bilinear / bicubic ----
x5 = torch.randn(2, 3, 3, 4, 5)
for kw in (dict(scale_factor=2), dict(size=(5, 3, 7)), dict(scale_factor=(1.5, 0.5, 2.0))):
    name = "_".join(f"{k}" for k in kw)
    report(f"nearest_exact3d_{name}_{list(kw.values())[0]}", lambda kw=kw: fwd_bwd(
        lambda a: F.interpolate(a, mode="nearest-exact", **kw), [x5], [0]))
x4 = torch.randn(2, 3, 9, 11)
for mode in ("bilinear", "bicubic"):
    for kw in (dict(size=(4, 5)), dict(size=(13, 6)), dict(size=(3, 4), align_corners=True),
               dict(scale_factor=0.37), dict(scale_factor=(2.0, 0.5))):
        tag = "_".join(f"{k}{v}" for k, v in kw.items()).replace(" ", "")
        report(f"{mode}_aa_{tag}", lambda mode=mode, kw=kw: fwd_bwd(
            lambda a: F.interpolate(a, mode=mode, antialias=True, **kw), [x4], [0], rtol=1e-4, atol=1e-5))
report("bilinear_aa_f16", lambda: close(
    F.interpolate(x4.half().to(D), size=(4, 5), mode="bilinear", antialias=True),
    F.interpolate(x4.half().float(), size=(4, 5), mode="bilinear", antialias=True).half(), rtol=2e-3, atol=2e-3))

# ---- random: statistics (about 4 standard errors) and reproducibility with manual_seed ----
NR = 20000


def seeded(f, seed=1234):
    torch.npu.manual_seed(seed)
    return f().cpu()


def stat(v, want_mean, mtol, want_var=None, vtol=None, lo=None, hi=None):
    v = v.double()
    if lo is not None:
        assert v.min().item() >= lo and v.max().item() <= hi, f"range [{v.min().item()}, {v.max().item()}]"
    m = v.mean().item()
    assert abs(m - want_mean) <= mtol, f"mean {m}, expected {want_mean} +- {mtol}"
    if want_var is not None:
        var = v.var().item()
        assert abs(var - want_var) <= vtol, f"variance {var}, expected {want_var} +- {vtol}"


def random_case(make, check):
    a = seeded(make)
    b = seeded(make)
    c = seeded(make, seed=99)
    assert torch.equal(a, b), "the same seed drew different numbers"
    assert not torch.equal(a, c), "another seed drew the same numbers"
    check(a)


report("random_from_to", lambda: random_case(
    lambda: torch.empty(NR, device=D, dtype=torch.int32).random_(-5, 7),
    lambda v: stat(v, 0.5, 0.1, 143 / 12, 0.3, -5, 6)))
report("random_whole_range_float", lambda: random_case(
    lambda: torch.empty(NR, device=D).random_(),
    lambda v: stat(v, 2 ** 23, 2 ** 24 * 0.01, None, None, 0, 2 ** 24)))
report("multinomial_replacement", lambda: random_case(
    lambda: torch.multinomial(torch.tensor([[1.0, 2.0, 7.0], [7.0, 2.0, 1.0]], device=D), NR, replacement=True),
    lambda v: torch.testing.assert_close(
        torch.stack([torch.bincount(r, minlength=3) for r in v]).double() / NR,
        torch.tensor([[0.1, 0.2, 0.7], [0.7, 0.2, 0.1]], dtype=torch.double), rtol=0, atol=0.015)))
report("multinomial_permutation", lambda: random_case(
    lambda: torch.multinomial(torch.ones(64, 5, device=D), 5),
    lambda v: torch.testing.assert_close(v.sort(1).values, torch.arange(5).expand(64, 5))))
report("exponential", lambda: random_case(
    lambda: torch.empty(NR, device=D).exponential_(2.0),
    lambda v: stat(v, 0.5, 0.016, 0.25, 0.025, 0, float("inf"))))


def graph_random():
    """Inside an NPU graph capture torch_npu calls aclnnInplaceRandomTensor and
    aclnnMultinomialTensor, with the generator's seed and offset in device tensors; each
    replay advances the offset, so two replays draw different numbers of the same law."""
    x = torch.zeros(NR, device=D, dtype=torch.int32)
    m = torch.zeros(2, NR, dtype=torch.long, device=D)
    p = torch.tensor([[1.0, 2.0, 7.0], [7.0, 2.0, 1.0]], device=D)
    torch.npu.manual_seed(5)
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        x.random_(-5, 7)
        m.copy_(torch.multinomial(p, NR, replacement=True))
    draws = []
    for _ in range(2):
        g.replay()
        torch.npu.synchronize()
        draws.append((x.cpu().clone(), m.cpu().clone()))
    assert not torch.equal(draws[0][0], draws[1][0]), "two replays drew the same integers"
    for xi, mi in draws:
        stat(xi, 0.5, 0.1, 143 / 12, 0.3, -5, 6)
        torch.testing.assert_close(
            torch.stack([torch.bincount(r, minlength=3) for r in mi]).double() / NR,
            torch.tensor([[0.1, 0.2, 0.7], [0.7, 0.2, 0.1]], dtype=torch.double), rtol=0, atol=0.015)


report("graph_random_multinomial", graph_random)

print(f"op_breadth_17: {len(FAILED)} failed", FAILED if FAILED else "")
sys.exit(1 if FAILED else 0)
