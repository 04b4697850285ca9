"""torch_npu APIs and torch backward passes that reach aclop operators npu-emu models in
`npu_emu::kernels::{cdist_grad, detection, deformable}`, each against a CPU computation
written here (torch CPU autograd for the gradients):
torch.cdist backward for p in {0, 1, 1.5, 2, inf}, float32 and float16 (CdistGrad),
npu_bounding_box_encode / npu_bounding_box_decode (BoundingBoxEncode / Decode,
mmdetection's legacy delta coder),
npu_yolo_boxes_encode and contrib npu_bbox_coder_encode_yolo (YoloBoxesEncode),
npu_anchor_response_flags (AnchorResponseFlags), npu_batch_nms
(BatchMultiClassNonMaxSuppression) and npu_deformable_conv2d forward and backward
(DeformableOffsets, DeformableOffsetsGrad, then Conv2D and its gradients). Each operator
also has a call that must fail.

`python aclop31.py [case-prefix]` prints PASS/FAIL per case and `aclop31: N failed`;
exits 1 when any case fails.
"""
import math
import sys

import torch
import torch.nn.functional as F
import torch_npu

D = "npu"
FAILED = []
ONLY = sys.argv[1] if len(sys.argv) > 1 else ""


def case(name, f, isolated=False):
    """Run case `name` (an error case `isolated`, in a child process: torch_npu keeps a failed
    operator's error for the device's later calls)."""
    if ONLY.startswith("="):
        if name == ONLY[1:]:
            f()
        return
    if not name.startswith(ONLY):
        return
    if isolated:
        import subprocess

        r = subprocess.run([sys.executable, __file__, "=" + name], capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        if r.returncode == 0:
            print("PASS", name)
        else:
            FAILED.append(name)
            last = [l for l in r.stderr.splitlines() if l.strip()][-3:]
            print("FAIL", name, " | ".join(last)[:600])
        return
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, " | ".join(str(e).splitlines()[:6])[:600] if str(e) else repr(e))


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def fails(f, what):
    """f() must raise (the operator refuses the call) and return the error's text, whose last
    line is the emulator's message (the caller checks it names the operator and argument)."""
    try:
        r = f()
        torch.npu.synchronize()
        if isinstance(r, torch.Tensor):
            r.cpu()
    except Exception as e:  # noqa: BLE001
        msg = str(e)
        # torch_npu's text ends with the emulator's message (aclGetRecentErrMsg)
        lines = [l for l in msg.splitlines() if l.strip()]
        print("ERROR", what, "|", (lines[-1] if lines else repr(e))[:400])
        return msg
    raise AssertionError(f"{what}: the call did not fail")


def close(a, b, tol, what):
    a, b = a.detach().cpu().double(), b.detach().cpu().double()
    check(a.shape == b.shape, f"{what}: shape {tuple(a.shape)} vs {tuple(b.shape)}")
    torch.testing.assert_close(a, b, rtol=tol, atol=tol, msg=lambda m: f"{what}: {m}")


# ---------------------------------------------------------------- torch.cdist backward


def cdist_backward():
    torch.manual_seed(3)
    for shape1, shape2 in (((5, 3), (4, 3)), ((2, 6, 4), (2, 3, 4))):
        x1 = torch.randn(*shape1, dtype=torch.float32)
        x2 = torch.randn(*shape2, dtype=torch.float32)
        g = torch.randn(*shape1[:-1], shape2[-2])
        for p in (0.0, 1.0, 1.5, 2.0, float("inf")):
            a = x1.clone().requires_grad_()
            b = x2.clone().requires_grad_()
            torch.cdist(a, b, p=p).backward(g)
            an = x1.to(D).requires_grad_()
            bn = x2.to(D).requires_grad_()
            d = torch.cdist(an, bn, p=p, compute_mode="donot_use_mm_for_euclid_dist")
            close(d, torch.cdist(x1, x2, p=p), 1e-5, f"p={p} {shape1}: cdist")
            d.backward(g.to(D))
            close(an.grad, a.grad, 1e-4, f"p={p} {shape1}: d x1")
            close(bn.grad, b.grad, 1e-4, f"p={p} {shape1}: d x2")
            # float16 (CPU cdist has no float16: the reference is float64 autograd on the
            # rounded inputs; p = inf must still find each pair's largest difference)
            h1, h2, gh = x1.half(), x2.half(), g.half()
            a = h1.double().requires_grad_()
            b = h2.double().requires_grad_()
            torch.cdist(a, b, p=p).backward(gh.double())
            an = h1.to(D).requires_grad_()
            bn = h2.to(D).requires_grad_()
            torch.cdist(an, bn, p=p, compute_mode="donot_use_mm_for_euclid_dist").backward(gh.to(D))
            check(an.grad.dtype == torch.float16, f"{an.grad.dtype}")
            close(an.grad, a.grad, 1e-2, f"p={p} {shape1} float16: d x1")
            close(bn.grad, b.grad, 1e-2, f"p={p} {shape1} float16: d x2")


def cdist_backward_bad_dtype():
    x1, x2 = torch.randn(4, 3).to(D), torch.randn(5, 3).to(D)
    d = torch.cdist(x1, x2, p=1.0)
    msg = fails(
        lambda: torch.ops.aten._cdist_backward(torch.ones(4, 5).half().to(D), x1, x2, 1.0, d),
        "grad FLOAT16 beside FLOAT inputs",
    )
    check('op type "CdistGrad"' in msg and "(grad) is ACL_FLOAT16" in msg, msg[-300:])


# ---------------------------------------------------------------- bounding box coders


def encode_ref(anchor, gt, means, stds):
    a, g = anchor.double(), gt.double()
    pw, ph = a[:, 2] - a[:, 0] + 1, a[:, 3] - a[:, 1] + 1
    px, py = (a[:, 0] + a[:, 2]) * 0.5, (a[:, 1] + a[:, 3]) * 0.5
    gw, gh = g[:, 2] - g[:, 0] + 1, g[:, 3] - g[:, 1] + 1
    gx, gy = (g[:, 0] + g[:, 2]) * 0.5, (g[:, 1] + g[:, 3]) * 0.5
    d = torch.stack([(gx - px) / pw, (gy - py) / ph, torch.log((gw / pw).abs()), torch.log((gh / ph).abs())], 1)
    return (d - torch.tensor(means, dtype=torch.float64)) / torch.tensor(stds, dtype=torch.float64)


def decode_ref(rois, deltas, means, stds, max_shape, clip):
    r, d = rois.double(), deltas.double()
    d = d * torch.tensor(stds, dtype=torch.float64) + torch.tensor(means, dtype=torch.float64)
    mr = abs(math.log(clip))
    dw, dh = d[:, 2].clamp(-mr, mr), d[:, 3].clamp(-mr, mr)
    pw, ph = r[:, 2] - r[:, 0] + 1, r[:, 3] - r[:, 1] + 1
    px, py = (r[:, 0] + r[:, 2]) * 0.5, (r[:, 1] + r[:, 3]) * 0.5
    gw, gh = pw * dw.exp(), ph * dh.exp()
    gx, gy = px + pw * d[:, 0], py + ph * d[:, 1]
    x1 = (gx - gw * 0.5 + 0.5).clamp(0, max_shape[1] - 1)
    y1 = (gy - gh * 0.5 + 0.5).clamp(0, max_shape[0] - 1)
    x2 = (gx + gw * 0.5 - 0.5).clamp(0, max_shape[1] - 1)
    y2 = (gy + gh * 0.5 - 0.5).clamp(0, max_shape[0] - 1)
    return torch.stack([x1, y1, x2, y2], 1)


def random_boxes(n, scale=50.0):
    xy = torch.rand(n, 2) * scale
    wh = torch.rand(n, 2) * scale * 0.5 + 1
    return torch.cat([xy, xy + wh], 1)


def bbox_encode():
    # torch_npu's documented example
    a = torch.tensor([[1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]])
    g = torch.tensor([[5.0, 6.0, 7.0, 8.0], [7.0, 8.0, 9.0, 6.0]])
    out = torch_npu.npu_bounding_box_encode(a.to(D), g.to(D), 0, 0, 0, 0, 0.1, 0.1, 0.2, 0.2)
    want = torch.tensor([[13.3281, 13.3281, 0.0, 0.0], [13.3281, 6.6641, 0.0, -5.4922]])
    close(out, want, 1e-3, "documented example")
    torch.manual_seed(5)
    means, stds = (0.1, -0.2, 0.05, 0.0), (0.1, 0.1, 0.2, 0.2)
    a, g = random_boxes(64), random_boxes(64)
    for dt, tol in ((torch.float32, 1e-4), (torch.float16, 3e-2)):
        out = torch_npu.npu_bounding_box_encode(a.to(dt).to(D), g.to(dt).to(D), *means, *stds)
        check(out.dtype == dt, f"{out.dtype}")
        close(out, encode_ref(a.to(dt), g.to(dt), means, stds), tol, f"random {dt}")


def bbox_decode():
    rois = torch.tensor([[1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]])
    deltas = torch.tensor([[5.0, 6.0, 7.0, 8.0], [7.0, 8.0, 9.0, 6.0]])
    out = torch_npu.npu_bounding_box_decode(
        rois.to(D), deltas.to(D), 0, 0, 0, 0, 1, 1, 1, 1, (10, 10), 0.1
    )
    close(out, torch.tensor([[2.5, 6.5, 9.0, 9.0], [9.0, 9.0, 9.0, 9.0]]), 1e-5, "documented")
    torch.manual_seed(6)
    means, stds = (0.0, 0.1, 0.0, -0.1), (0.1, 0.1, 0.2, 0.2)
    rois = random_boxes(80)
    deltas = torch.randn(80, 4) * 2
    for dt, tol in ((torch.float32, 1e-3), (torch.float16, 0.25)):
        out = torch_npu.npu_bounding_box_decode(
            rois.to(dt).to(D), deltas.to(dt).to(D), *means, *stds, (60, 70), 16 / 1000
        )
        want = decode_ref(rois.to(dt), deltas.to(dt), means, stds, (60, 70), 0.016)
        close(out, want, tol, f"random {dt}")
    # encode then decode gives the boxes back (no clipping, no ratio clamp)
    a, g = random_boxes(16), random_boxes(16)
    enc = torch_npu.npu_bounding_box_encode(a.to(D), g.to(D), 0, 0, 0, 0, 1, 1, 1, 1)
    dec = torch_npu.npu_bounding_box_decode(a.to(D), enc, 0, 0, 0, 0, 1, 1, 1, 1, (1000, 1000), 1e-6)
    close(dec, g, 1e-3, "round trip")


def bbox_encode_error():
    msg = fails(
        lambda: torch_npu.npu_bounding_box_encode(
            torch.rand(3, 5).to(D), torch.rand(3, 5).to(D), 0, 0, 0, 0, 1, 1, 1, 1
        ),
        "encode of [3, 5] boxes",
    )
    check('op type "BoundingBoxEncode": anchor_box [3, 5] must be [n, 4]' in msg, msg[-300:])


def bbox_decode_error():
    msg = fails(
        lambda: torch_npu.npu_bounding_box_decode(
            torch.rand(3, 4).to(D), torch.rand(2, 4).to(D), 0, 0, 0, 0, 1, 1, 1, 1, (9, 9), 0.1
        ),
        "decode of 3 rois with 2 deltas",
    )
    check('op type "BoundingBoxDecode": rois [3, 4] and deltas [2, 4]' in msg, msg[-300:])


# ---------------------------------------------------------------- YOLO coder, anchor flags


def yolo_ref(bboxes, gt, stride, eps=1e-6):
    b, g, s = bboxes.double(), gt.double(), stride.double()
    xg, yg = (g[:, 0] + g[:, 2]) * 0.5, (g[:, 1] + g[:, 3]) * 0.5
    wg, hg = g[:, 2] - g[:, 0], g[:, 3] - g[:, 1]
    x, y = (b[:, 0] + b[:, 2]) * 0.5, (b[:, 1] + b[:, 3]) * 0.5
    w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    wt = torch.log((wg / w).clamp(min=eps))
    ht = torch.log((hg / h).clamp(min=eps))
    xt = ((xg - x) / s + 0.5).clamp(eps, 1 - eps)
    yt = ((yg - y) / s + 0.5).clamp(eps, 1 - eps)
    return torch.stack([xt, yt, wt, ht], 1)


def yolo_encode():
    from torch_npu.contrib.function import npu_bbox_coder_encode_yolo

    torch.manual_seed(7)
    a, g = random_boxes(200), random_boxes(200)
    a = torch.cat([a, torch.tensor([[5.0, 5.0, 5.0, 9.0]])])  # zero width: log of eps clamp
    g = torch.cat([g, torch.tensor([[4.0, 4.0, 6.0, 9.0]])])
    stride = torch.randint(8, 33, (201,), dtype=torch.int32)
    out = torch_npu.npu_yolo_boxes_encode(a.to(D), g.to(D), stride.to(D), False)
    want = yolo_ref(a, g, stride)
    fin = torch.isfinite(want)
    close(out.cpu()[fin], want[fin], 1e-4, "npu_yolo_boxes_encode")
    out2 = npu_bbox_coder_encode_yolo(a.to(D), g.to(D), stride.long().to(D))
    close(out2, out, 0, "contrib npu_bbox_coder_encode_yolo")
    out16 = torch_npu.npu_yolo_boxes_encode(a[:200].half().to(D), g[:200].half().to(D), stride[:200].to(D))
    close(out16, yolo_ref(a[:200].half(), g[:200].half(), stride[:200]), 2e-2, "float16")


def yolo_encode_error():
    msg = fails(
        lambda: torch_npu.npu_yolo_boxes_encode(
            torch.rand(6, 4).to(D), torch.rand(5, 4).to(D), torch.ones(5, dtype=torch.int32).to(D)
        ),
        "6 anchors for 5 boxes",
    )
    check('op type "YoloBoxesEncode": anchor_boxes [6, 4], gt_bboxes [5, 4]' in msg, msg[-300:])


def flags_ref(gt, featmap, stride, na):
    h, w = featmap
    cx = ((gt[:, 0] + gt[:, 2]) * 0.5).float()
    cy = ((gt[:, 1] + gt[:, 3]) * 0.5).float()
    gx = torch.floor(cx / stride[0]).clamp(0, w - 1).long()
    gy = torch.floor(cy / stride[1]).clamp(0, h - 1).long()
    grid = torch.zeros(h * w, dtype=torch.uint8)
    grid[gy * w + gx] = 1
    return grid[:, None].expand(h * w, na).reshape(-1)


def anchor_flags():
    # the documented call
    x = torch.rand(100, 4)
    y = torch_npu.npu_anchor_response_flags(x.to(D), [60, 60], [2, 2], 9)
    check(y.shape == (32400,) and y.dtype == torch.uint8, f"{y.shape} {y.dtype}")
    close(y, flags_ref(x, (60, 60), (2, 2), 9), 0, "documented call")
    torch.manual_seed(8)
    g = torch.cat([random_boxes(20, 120.0), torch.tensor([[-30.0, -8, -2, -4], [500, 0, 900, 40]])])
    for dt in (torch.float32, torch.float16):
        y = torch_npu.npu_anchor_response_flags(g.to(dt).to(D), [10, 12], [8, 16], 3)
        close(y, flags_ref(g.to(dt), (10, 12), (8, 16), 3), 0, f"{dt}")


def anchor_flags_error():
    msg = fails(
        lambda: torch_npu.npu_anchor_response_flags(torch.rand(4, 4).to(D), [6, 6], [0, 2], 3),
        "stride 0",
    )
    check('op type "AnchorResponseFlags": attr strides [0, 2]' in msg, msg[-300:])


# ---------------------------------------------------------------- batch NMS


def batch_nms_ref(boxes, scores, st, it, per_class, total):
    B, N, q, _ = boxes.shape
    C = scores.shape[2]
    ob, os_, oc = torch.zeros(B, total, 4), torch.zeros(B, total), torch.zeros(B, total)
    on = torch.zeros(B, dtype=torch.int32)

    def iou(a, b):
        ih = max(min(a[2], b[2]) - max(a[0], b[0]), 0.0)
        iw = max(min(a[3], b[3]) - max(a[1], b[1]), 0.0)
        inter = ih * iw
        area = lambda v: (v[2] - v[0]) * (v[3] - v[1])  # noqa: E731
        return inter / max(area(a) + area(b) - inter, 1e-12)

    for b in range(B):
        kept = []
        for c in range(C):
            sc = scores[b, :, c].tolist()
            bc = boxes[b, :, 0 if q == 1 else c].tolist()
            # a candidate scores above the threshold and has a positive extent (CANN's
            # reference drops empty and inverted boxes)
            order = sorted([i for i in range(N) if sc[i] > st and bc[i][2] > bc[i][0] and bc[i][3] > bc[i][1]],
                           key=lambda i: -sc[i])
            sel = []
            for i in order:
                if len(sel) >= per_class:
                    break
                bb = bc[i]
                if all(iou(s, bb) <= it for s in sel):
                    sel.append(bb)
                    kept.append((sc[i], c, bb))
        kept.sort(key=lambda t: -t[0])
        kept = kept[:total]
        for j, (s, c, bb) in enumerate(kept):
            ob[b, j], os_[b, j], oc[b, j] = torch.tensor(bb), s, c
        on[b] = len(kept)
    return ob, os_, oc, on


def batch_nms():
    torch.manual_seed(9)
    # the documented call with its batch sizes made to agree ([8, 2, 4, 4] boxes with [3, 2, 4]
    # scores, as published, is refused: see batch_nms_error)
    boxes = torch.randn(3, 2, 4, 4)
    scores = torch.randn(3, 2, 4)
    outs = torch_npu.npu_batch_nms(boxes.to(D), scores.to(D), 0.3, 0.5, 3, 4)
    for o, w, name in zip(outs, batch_nms_ref(boxes, scores, 0.3, 0.5, 3, 4), "boxes scores classes num".split()):
        close(o, w, 1e-6, f"documented: nmsed_{name}")
    # overlapping random boxes (y1, x1, y2, x2), shared across 5 classes and per class
    for q in (1, 5):
        yx = torch.rand(2, 40, q, 2) * 20
        boxes = torch.cat([yx, yx + torch.rand(2, 40, q, 2) * 8 + 1], 3)
        scores = torch.rand(2, 40, 5)
        outs = torch_npu.npu_batch_nms(boxes.to(D), scores.to(D), 0.2, 0.4, 6, 20)
        want = batch_nms_ref(boxes, scores, 0.2, 0.4, 6, 20)
        for o, w, name in zip(outs, want, "boxes scores classes num".split()):
            close(o, w, 1e-6, f"q={q}: nmsed_{name}")
        check(outs[3].dtype == torch.int32, f"{outs[3].dtype}")
        # the same boxes laid out [B, q, 4, N] (transpose_box)
        outs = torch_npu.npu_batch_nms(boxes.permute(0, 2, 3, 1).contiguous().to(D), scores.to(D), 0.2, 0.4, 6, 20,
                                       transpose_box=True)
        for o, w, name in zip(outs, want, "boxes scores classes num".split()):
            close(o, w, 1e-6, f"q={q} transpose_box: nmsed_{name}")
    # float16 (the reference takes the rounded inputs)
    bh, sh = boxes.half(), scores.half()
    outs = torch_npu.npu_batch_nms(bh.to(D), sh.to(D), 0.2, 0.4, 6, 20)
    check(outs[0].dtype == torch.float16 and outs[3].dtype == torch.int32, f"{outs[0].dtype}")
    for o, w, name in zip(outs, batch_nms_ref(bh.float(), sh.float(), 0.2, 0.4, 6, 20), "boxes scores classes num".split()):
        close(o, w, 1e-6, f"float16: nmsed_{name}")


def batch_nms_error():
    boxes = torch.randn(8, 2, 4, 4).to(D)
    scores = torch.randn(3, 2, 4).to(D)
    msg = fails(lambda: torch_npu.npu_batch_nms(boxes, scores, 0.3, 0.5, 3, 4)[3].cpu(), "batch 8 vs 3")
    check('op type "BatchMultiClassNonMaxSuppression": boxes [8, 2, 4, 4]' in msg, msg[-300:])


# ---------------------------------------------------------------- deformable convolution


def deform_ref(x, weight, offset, bias, k, stride, pad, dil, groups, dg):
    """torch_npu's npu_deformable_conv2d on the CPU: offset [N, 3 * dg * kh * kw, Ho, Wo] is
    (x offsets, y offsets, masks), each (group, kh, kw)."""
    N, C, H, W = x.shape
    KH, KW = k
    Ho, Wo = offset.shape[2:]
    sh, sw, dh, dw = stride[2], stride[3], dil[2], dil[3]
    o = offset.view(N, 3, dg, KH, KW, Ho, Wo)
    bh = (torch.arange(KH) * dh).view(KH, 1, 1, 1) + (torch.arange(Ho) * sh - pad[0]).view(1, 1, Ho, 1)
    bw = (torch.arange(KW) * dw).view(1, KW, 1, 1) + (torch.arange(Wo) * sw - pad[2]).view(1, 1, 1, Wo)
    py, px, mask = bh + o[:, 1], bw + o[:, 0], o[:, 2]  # [N, dg, KH, KW, Ho, Wo]
    h0, w0 = torch.floor(py.detach()), torch.floor(px.detach())
    lh, lw = py - h0, px - w0
    xg = x.reshape(N, dg, C // dg, H * W)
    L = KH * KW * Ho * Wo
    val = 0
    for hh, ww, wt in ((h0, w0, (1 - lh) * (1 - lw)), (h0 + 1, w0, lh * (1 - lw)),
                       (h0, w0 + 1, (1 - lh) * lw), (h0 + 1, w0 + 1, lh * lw)):
        ok = ((hh >= 0) & (hh < H) & (ww >= 0) & (ww < W)).to(x.dtype)
        idx = (hh.clamp(0, H - 1) * W + ww.clamp(0, W - 1)).long().view(N, dg, 1, L)
        got = torch.gather(xg, 3, idx.expand(N, dg, C // dg, L))
        val = val + got * (wt * ok * mask).view(N, dg, 1, L)
    feat = val.view(N, dg, C // dg, KH, KW, Ho, Wo).reshape(N, C, KH, KW, Ho, Wo)
    feat = feat.permute(0, 1, 4, 2, 5, 3).reshape(N, C, Ho * KH, Wo * KW)
    return F.conv2d(feat, weight, bias, stride=k, groups=groups), feat


def deformable_conv2d():
    torch.manual_seed(10)
    # the documented call's geometry at a smaller size
    x = torch.rand(2, 4, 6, 6)
    weight = torch.rand(5, 4, 3, 3)
    offset = torch.rand(2, 27, 6, 6)
    out, feat = torch_npu.npu_deformable_conv2d(
        x.to(D), weight.to(D), offset.to(D), None, kernel_size=[3, 3], stride=[1, 1, 1, 1],
        padding=[1, 1, 1, 1])
    ro, rf = deform_ref(x, weight, offset, None, (3, 3), [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], 1, 1)
    close(feat, rf, 1e-5, "deformed features")
    close(out, ro, 1e-4, "output")
    # stride 2, dilation 2, asymmetric padding, 2 deformable groups, signed offsets, bias,
    # forward and backward
    x = torch.randn(1, 4, 7, 8)
    weight = torch.randn(6, 4, 2, 3)
    offset = torch.randn(1, 3 * 2 * 6, 3, 4) * 1.5
    bias = torch.randn(6)
    args = dict(kernel_size=[2, 3], stride=[1, 1, 2, 2], padding=[1, 0, 2, 1],
                dilation=[1, 1, 2, 2], groups=1, deformable_groups=2, modulated=True)
    xs = [t.clone().requires_grad_() for t in (x, weight, offset, bias)]
    ro, rf = deform_ref(*xs, (2, 3), [1, 1, 2, 2], [1, 0, 2, 1], [1, 1, 2, 2], 1, 2)
    g = torch.randn_like(ro)
    ro.backward(g)
    ns = [t.to(D).requires_grad_() for t in (x, weight, offset, bias)]
    out, feat = torch_npu.npu_deformable_conv2d(ns[0], ns[1], ns[2], ns[3], **args)
    close(feat, rf, 1e-5, "dg=2 deformed features")
    close(out, ro, 1e-4, "dg=2 output")
    out.backward(g.to(D))
    for t, r, name in zip(ns, xs, "input weight offset bias".split()):
        close(t.grad, r.grad, 1e-3, f"d {name}")


def deformable_error():
    x, w = torch.rand(1, 2, 4, 4).to(D), torch.rand(2, 2, 3, 3).to(D)
    off = torch.rand(1, 18, 4, 4).to(D)
    msg = fails(
        lambda: torch_npu.npu_deformable_conv2d(x, w, off, None, kernel_size=[3, 3],
                                                stride=[1, 1, 1, 1], padding=[1, 1, 1, 1],
                                                modulated=False)[0].cpu(),
        "modulated=False",
    )
    check('op type "DeformableOffsets": attr modulated = false' in msg, msg[-300:])


case("cdist_backward", cdist_backward)
case("cdist_backward_bad_dtype", cdist_backward_bad_dtype, isolated=True)
case("bbox_encode", bbox_encode)
case("bbox_decode", bbox_decode)
case("bbox_encode_error", bbox_encode_error, isolated=True)
case("bbox_decode_error", bbox_decode_error, isolated=True)
case("yolo_encode", yolo_encode)
case("yolo_encode_error", yolo_encode_error, isolated=True)
case("anchor_flags", anchor_flags)
case("anchor_flags_error", anchor_flags_error, isolated=True)
case("batch_nms", batch_nms)
case("batch_nms_error", batch_nms_error, isolated=True)
case("deformable_conv2d", deformable_conv2d)
case("deformable_error", deformable_error, isolated=True)

if ONLY.startswith("="):
    sys.exit(0)
print(f"aclop31: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
