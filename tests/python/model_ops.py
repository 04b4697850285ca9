"""Model operations through torch_npu against CPU torch: torch._transform_bias_rescale_qkv
(aclnnTransformBiasRescaleQkv, the attention input transform of nn.MultiheadAttention's native
path), nn.MultiheadAttention and nn.TransformerEncoderLayer in eval under no_grad (the fast
path; on NPU the first runs flash attention and torch_npu sends the second's fused layer to
the CPU), F.interpolate bilinear backward (aclnnUpsampleBilinear2dBackwardV2, with and without
align_corners and scale factors), F.binary_cross_entropy_with_logits with a target that needs
its gradient (weights, positive weights, every reduction; torch_npu computes no target
gradient, so the loss and the input gradient are compared) and F.pdist (aclnnPdist). Prints
PASS/FAIL per case and exits 1 when any case fails.
"""
import sys

import torch
import torch.nn.functional as F
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


def close(a, b, rtol=1e-5, atol=1e-5):
    torch.testing.assert_close(a.detach().cpu(), b.detach(), rtol=rtol, atol=atol)


def transform_bias_rescale_qkv():
    torch.manual_seed(1)
    for dt, tol in [(torch.float32, 1e-6), (torch.float16, 1e-3)]:
        qkv = torch.randn(3, 7, 3 * 24).to(dt)
        bias = torch.randn(3 * 24).to(dt)
        got = torch._transform_bias_rescale_qkv(qkv.to(D), bias.to(D), 4)
        want = torch._transform_bias_rescale_qkv(qkv.float(), bias.float(), 4)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == dt, (g.shape, w.shape, g.dtype)
            close(g.float(), w, tol, tol)


def multihead_attention():
    torch.manual_seed(2)
    m = torch.nn.MultiheadAttention(32, 4, batch_first=True).eval()
    x = torch.randn(2, 9, 32)
    with torch.no_grad():
        want, _ = m(x, x, x, need_weights=False)
        got, _ = m.to(D)(x.to(D), x.to(D), x.to(D), need_weights=False)
    close(got, want, 1e-4, 1e-5)


def encoder_layer():
    torch.manual_seed(3)
    layer = torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True).eval()
    x = torch.randn(2, 9, 32)
    with torch.no_grad():
        want = layer(x)
        got = layer.to(D)(x.to(D))
    close(got, want, 1e-4, 1e-5)


def bilinear_backward(align, **kw):
    def f():
        torch.manual_seed(4)
        x = torch.randn(2, 3, 5, 4)
        g = None
        grads = []
        for dev in (D, "cpu"):
            xi = x.to(dev).requires_grad_()
            y = F.interpolate(xi, mode="bilinear", align_corners=align, **kw)
            if g is None:
                g = torch.randn(y.shape)
            (y * g.to(dev)).sum().backward()
            grads.append(xi.grad)
        close(grads[0], grads[1])

    return f


def bce_target(reduction, weighted):
    def f():
        torch.manual_seed(5)
        x = torch.randn(4, 6)
        t = torch.rand(4, 6)
        w = torch.rand(6) + 0.5 if weighted else None
        p = torch.rand(6) + 0.5 if weighted else None
        out = []
        for dev in (D, "cpu"):
            xi = x.to(dev).requires_grad_()
            ti = t.to(dev).requires_grad_()
            mv = lambda v: None if v is None else v.to(dev)  # noqa: E731
            loss = F.binary_cross_entropy_with_logits(xi, ti, mv(w), pos_weight=mv(p), reduction=reduction)
            loss.sum().backward() if reduction == "none" else loss.backward()
            out.append((loss, xi.grad, ti.grad))
        # torch_npu's autograd for this loss returns no target gradient (it never reaches
        # aclnnBinaryCrossEntropyWithLogitsTargetBackward, which the C tests cover); compare
        # it where there is one
        for a, b in zip(*out):
            if a is not None:
                close(a, b)

    return f


def pdist(p):
    def f():
        torch.manual_seed(6)
        x = torch.randn(7, 5)
        close(F.pdist(x.to(D), p), F.pdist(x, p))

    return f


case("transform_bias_rescale_qkv", transform_bias_rescale_qkv)
case("multihead_attention_fast_path", multihead_attention)
case("transformer_encoder_layer_fast_path", encoder_layer)
case("bilinear_backward_size", bilinear_backward(False, size=(9, 7)))
case("bilinear_backward_scale", bilinear_backward(False, scale_factor=2.0))
case("bilinear_backward_align_corners", bilinear_backward(True, size=(8, 11)))
case("bce_logits_target_grad_mean", bce_target("mean", False))
case("bce_logits_target_grad_weighted_sum", bce_target("sum", True))
case("bce_logits_target_grad_weighted_none", bce_target("none", True))
case("pdist_2", pdist(2.0))
case("pdist_1_5", pdist(1.5))
if hasattr(torch_npu, "npu_multi_scale_deformable_attn_function"):
    print("note: torch_npu has npu_multi_scale_deformable_attn_function; not covered here")

print(f"model_ops: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
