"""torch_npu's own APIs that op-plugin implements only as aclop calls, against CPU torch:
npu_transpose (Transpose), npu_broadcast (BroadcastTo), npu_slice (Slice), npu_indexing
(StridedSlice), npu_scaled_masked_softmax (ScaledMaskedSoftmax and its Grad), npu_iou / npu_ptiou (Iou),
npu_random_choice_with_mask (RandomChoiceWithMask), npu_nms_v4 (NonMaxSuppressionV4), npu_nms_rotated (RotatedNMS), npu_rotated_iou (RotatedIou), npu_rotated_overlaps
(RotatedOverlaps), npu_pad (Pad), npu_silu and
npu_silu_ (Swish / SwishGrad), npu_mish (Mish / MishGrad), npu_max / npu_min
(ArgMaxWithValue / ArgMinWithValue, their gradient through npu_scatter's ArgMaxGrad)
and npu_scatter itself, npu_format_cast (Identity), npu_bmmV2 (BatchMatMul),
npu_confusion_transpose (ConfusionTransposeD), npu_sort_v2 (SortV2), npu_layer_norm_eval
(LayerNormV3), npu_softmax_cross_entropy_with_logits, npu_one_hot (Fill, OneHotD), and a
Conv2d with a FRACTAL_Z weight and npu_conv2d (Conv2D and its gradients, ReduceSum):
values, dtypes, shapes and input gradients.

`python npu_aclop_apis.py [case-prefix]` prints PASS/FAIL per case and
`npu_aclop_apis: N failed`; exits 1 when any case fails.
"""
import math
import sys

import torch
import torch_npu

D = "npu"
FAILED = []
ONLY = sys.argv[1] if len(sys.argv) > 1 else ""
torch.manual_seed(0)


def case(name, f):
    if not name.startswith(ONLY):
        return
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else repr(e))


def close(a, b, tol, what):
    if a.shape != b.shape:
        raise AssertionError(f"{what}: shape {tuple(a.shape)} != {tuple(b.shape)}")
    if a.dtype != b.dtype:
        raise AssertionError(f"{what}: dtype {a.dtype} != {b.dtype}")
    torch.testing.assert_close(a.detach().cpu(), b.detach(), rtol=tol, atol=tol, msg=lambda m: f"{what}: {m}")


def transpose():
    x = torch.randn(2, 3, 4)
    close(torch_npu.npu_transpose(x.to(D), (2, 0, 1)), x.permute(2, 0, 1).contiguous(), 0, "fp32")
    xi = torch.randint(-50, 50, (3, 5), dtype=torch.int32)
    close(torch_npu.npu_transpose(xi.to(D), (1, 0)), xi.t().contiguous(), 0, "int32")
    xh = torch.randn(4, 2, 3).half()
    close(torch_npu.npu_transpose(xh.to(D), (1, 2, 0)), xh.permute(1, 2, 0).contiguous(), 0, "fp16")
    # a non-contiguous input (a transposed view)
    v = x.to(D).transpose(0, 2)
    close(torch_npu.npu_transpose(v, (1, 0, 2)), x.transpose(0, 2).permute(1, 0, 2).contiguous(), 0, "view")


def broadcast():
    x = torch.randn(3, 1)
    close(torch_npu.npu_broadcast(x.to(D), (2, 3, 4)), x.expand(2, 3, 4).contiguous(), 0, "fp32")
    b = torch.tensor([[True], [False]])
    close(torch_npu.npu_broadcast(b.to(D), (2, 3)), b.expand(2, 3).contiguous(), 0, "bool")


def slice_():
    x = torch.randn(5, 6)
    close(torch_npu.npu_slice(x.to(D), [1, 2], [3, 3]), x[1:4, 2:5].contiguous(), 0, "fp32")
    xi = torch.arange(24, dtype=torch.int64).reshape(2, 3, 4)
    close(torch_npu.npu_slice(xi.to(D), [0, 1, 1], [2, 2, 3]), xi[:, 1:3, 1:4].contiguous(), 0, "int64")


def indexing():
    x = torch.randn(4, 8)
    close(torch_npu.npu_indexing(x.to(D), [0, 1], [4, 7], [1, 2]), x[0:4, 1:7:2].contiguous(), 0, "fp32 steps")
    xi = torch.arange(60, dtype=torch.int32).reshape(3, 4, 5)
    close(torch_npu.npu_indexing(xi.to(D), [1, 0, 1], [3, 4, 5], [1, 3, 2]), xi[1:3, 0:4:3, 1:5:2].contiguous(), 0,
          "int32 3-D")


def scaled_masked_softmax():
    g = torch.Generator().manual_seed(5)
    for triu in (False, True):
        x = torch.randn(2, 3, 8, 8, generator=g).half()
        mask = torch.rand(2, 1, 8, 8, generator=g) > 0.7
        mask[..., 0] = False  # no row fully masked
        used = torch.ones(8, 8, dtype=torch.bool).triu(1).expand(2, 3, 8, 8) if triu else mask.expand(2, 3, 8, 8)
        xc = x.float().requires_grad_()
        ref = torch.softmax((xc * 0.5).masked_fill(used, float("-inf")), -1)
        dy = torch.randn(2, 3, 8, 8, generator=g).half()
        ref.backward(dy.float())
        xn = x.to(D).requires_grad_()
        y = torch_npu.npu_scaled_masked_softmax(xn, mask.to(D), 0.5, triu)
        close(y.float(), ref.detach(), 2e-3, f"forward, fixed_triu_mask {triu}")
        y.backward(dy.to(D))
        close(xn.grad.float(), xc.grad, 4e-3, f"backward, fixed_triu_mask {triu}")


def iou():
    b = torch.tensor([[0, 0, 10, 10], [10, 10, 20, 20], [32, 32, 38, 42]], dtype=torch.float16)
    g = torch.tensor([[0, 0, 10, 20], [0, 10, 10, 10], [2, 2, 12, 12], [31, 30, 40, 40]], dtype=torch.float16)
    eps = 0.01  # op-plugin's attr

    def ref(iof):
        out = torch.zeros(4, 3)
        for j in range(4):
            for i in range(3):
                x, y = b[i].float(), g[j].float()
                iw = (torch.min(x[2], y[2]) - torch.max(x[0], y[0]) + eps).clamp(min=0)
                ih = (torch.min(x[3], y[3]) - torch.max(x[1], y[1]) + eps).clamp(min=0)
                area = lambda q: (q[2] - q[0] + eps) * (q[3] - q[1] + eps)
                inter = iw * ih
                out[j, i] = inter / area(y) if iof else inter / (area(x) + area(y) - inter)
        return out.half()

    close(torch_npu.npu_iou(b.to(D), g.to(D), 0), ref(False), 2e-3, "iou")
    close(torch_npu.npu_iou(b.to(D), g.to(D), 1), ref(True), 2e-3, "iof")
    close(torch_npu.npu_ptiou(b.float().to(D), g.float().to(D)), ref(False).float(), 2e-3, "ptiou float32")


def random_choice_with_mask():
    x = torch.zeros(4, 5, dtype=torch.bool)
    for i, j in ((0, 1), (1, 4), (2, 2), (3, 0), (3, 3)):
        x[i, j] = True
    true_pos = {tuple(p) for p in x.nonzero().tolist()}
    # more rows asked than true elements: all five (shuffled), then zero rows with mask false
    idx, mask = torch_npu.npu_random_choice_with_mask(x.to(D), 8, 3, 7)
    assert idx.dtype == torch.int32 and idx.shape == (8, 2) and mask.shape == (8,), (idx.dtype, idx.shape)
    idx, mask = idx.cpu(), mask.cpu()
    assert mask.tolist() == [True] * 5 + [False] * 3, mask.tolist()
    assert {tuple(p) for p in idx[:5].tolist()} == true_pos, idx.tolist()
    assert idx[5:].eq(0).all(), idx.tolist()
    # fewer: three distinct true positions; the same seeds give the same choice
    a, ma = torch_npu.npu_random_choice_with_mask(x.to(D), 3, 11, 2)
    b, _ = torch_npu.npu_random_choice_with_mask(x.to(D), 3, 11, 2)
    rows = [tuple(p) for p in a.cpu().tolist()]
    assert ma.cpu().all() and len(set(rows)) == 3 and set(rows) <= true_pos, rows
    assert torch.equal(a.cpu(), b.cpu())
    # 1-D input
    v = torch.tensor([False, True, True, False])
    i1, m1 = torch_npu.npu_random_choice_with_mask(v.to(D), 2)
    assert sorted(i1.cpu().flatten().tolist()) == [1, 2] and m1.cpu().all(), i1.tolist()


def nms_v4():
    boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [10, 0, 0, 10],
                          [21, 21, 29, 29], [40, 40, 41, 41]], dtype=torch.float16)
    scores = torch.tensor([0.9, 0.8, 0.7, 0.95, 0.6, 0.05], dtype=torch.float16)
    # box 3 is box 0 with its corners swapped: they suppress each other; 1 overlaps 3 by 0.68;
    # 4 overlaps 2 by 0.64 (both kept at a threshold of 0.7); 5 is under the score threshold
    idx, n = torch_npu.npu_nms_v4(boxes.to(D), scores.to(D), 10, torch.tensor(0.5).half().to(D),
                                  torch.tensor(0.1).half().to(D))
    k = int(n.cpu())
    assert idx.cpu()[:k].tolist() == [3, 2], (idx.cpu().tolist(), k)
    idx, n = torch_npu.npu_nms_v4(boxes.to(D), scores.to(D), 10, torch.tensor(0.7).half().to(D),
                                  torch.tensor(0.1).half().to(D))
    k = int(n.cpu())
    assert idx.cpu()[:k].tolist() == [3, 1, 2, 4], (idx.cpu().tolist(), k)
    idx, n = torch_npu.npu_nms_v4(boxes.to(D), scores.to(D), 1, torch.tensor(0.7).half().to(D),
                                  torch.tensor(0.1).half().to(D))
    assert int(n.cpu()) == 1 and idx.cpu()[0].item() == 3, idx.cpu().tolist()


def _rot_corners(b):
    cx, cy, w, h, deg = b
    t = math.radians(deg)
    c, s_ = math.cos(t), math.sin(t)
    return [(cx + x * c - y * s_, cy + x * s_ + y * c)
            for x, y in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))]


def _rot_iou(a, b):
    """Rotated IoU by clipping a's rectangle with b's edges (a CPU reference)."""
    poly = _rot_corners(a)
    clip = _rot_corners(b)
    for k in range(4):
        p, q = clip[k], clip[(k + 1) % 4]
        side = lambda v: (q[0] - p[0]) * (v[1] - p[1]) - (q[1] - p[1]) * (v[0] - p[0])  # noqa: E731
        out = []
        for i, cur in enumerate(poly):
            nxt = poly[(i + 1) % len(poly)]
            sc, sn = side(cur), side(nxt)
            if sc >= 0:
                out.append(cur)
            if (sc >= 0) != (sn >= 0):
                t = sc / (sc - sn)
                out.append((cur[0] + t * (nxt[0] - cur[0]), cur[1] + t * (nxt[1] - cur[1])))
        poly = out
        if len(poly) < 3:
            return 0.0
    inter = abs(sum(poly[i][0] * poly[(i + 1) % len(poly)][1] - poly[i][1] * poly[(i + 1) % len(poly)][0]
                    for i in range(len(poly)))) / 2
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def nms_rotated():
    # analytic: a 2x2 square and itself turned 45 degrees overlap by IoU 1/sqrt(2) (0.7071)
    dets = torch.tensor([[0, 0, 2, 2, 0], [0, 0, 2, 2, 45], [10, 10, 4, 2, 30], [10.2, 10, 4, 2, 30]],
                        dtype=torch.float32)
    scores = torch.tensor([0.9, 0.8, 0.7, 0.6])
    idx, num = torch_npu.npu_nms_rotated(dets.to(D), scores.to(D), 0.7)
    assert idx.dtype == torch.int32 and num.cpu().tolist() == [2], (idx, num)
    assert idx.cpu().tolist() == [0, 2], idx.cpu().tolist()
    idx, num = torch_npu.npu_nms_rotated(dets.to(D), scores.to(D), 0.75)
    assert idx.cpu().tolist() == [0, 1, 2], idx.cpu().tolist()
    # random boxes against a CPU greedy NMS with the reference IoU; thresholds and a cap
    g = torch.Generator().manual_seed(5)
    n = 60
    d = torch.cat([torch.rand(n, 2, generator=g) * 40, torch.rand(n, 2, generator=g) * 12 + 2,
                   torch.rand(n, 1, generator=g) * 180 - 90], 1)
    sc = torch.rand(n, generator=g)
    for iou_t, score_t, max_out in ((0.3, 0.0, -1), (0.1, 0.2, -1), (0.5, 0.0, 7)):
        order = sorted(range(n), key=lambda i: (-sc[i].item(), i))
        kept = []
        for i in order:
            if sc[i].item() <= score_t or (max_out >= 0 and len(kept) == max_out):
                continue
            if all(_rot_iou(d[k].tolist(), d[i].tolist()) <= iou_t for k in kept):
                kept.append(i)
        idx, num = torch_npu.npu_nms_rotated(d.to(D), sc.to(D), iou_t, score_t, max_out, 0)
        assert idx.cpu().tolist() == kept and num.cpu().tolist() == [len(kept)], \
            (iou_t, score_t, max_out, idx.cpu().tolist(), kept)
    # float16 boxes (torch_npu casts them to float32)
    idx, num = torch_npu.npu_nms_rotated(dets.half().to(D), scores.half().to(D), 0.7)
    assert idx.cpu().tolist() == [0, 2], idx.cpu().tolist()
    # op-plugin's test_nms_rotated.py inputs: every value uniform in [-100, 100] (negative
    # widths and heights too: a box whose w * h is below 1e-14 overlaps nothing), modes 0 and 1
    # (the corner form: w = x2 - x1, h = y2 - y1, the angle negated), IoU threshold 0.2
    for mode in (0, 1):
        d = torch.rand(20, 5, generator=g) * 200 - 100
        sc = torch.rand(20, generator=g)

        def geo(b):
            b = b.tolist()
            if mode == 1:
                b = [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2, b[2] - b[0], b[3] - b[1], -b[4]]
            return b
        kept = []
        for i in sorted(range(20), key=lambda i: (-sc[i].item(), i)):
            ok = True
            for k in kept:
                a, b = geo(d[k]), geo(d[i])
                if a[2] * a[3] >= 1e-14 and b[2] * b[3] >= 1e-14 and _rot_iou(a, b) > 0.2:
                    ok = False
            if ok:
                kept.append(i)
        idx, num = torch_npu.npu_nms_rotated(d.to(D), sc.to(D), 0.2, 0, -1, mode)
        assert idx.cpu().tolist() == kept, (mode, idx.cpu().tolist(), kept)
    # mode 1: two opposite corners and the angle
    corners = torch.tensor([[-1, -1, 1, 1, 0], [-1, -1, 1, 1, 45], [9, 9, 11, 11, 0]], dtype=torch.float32)
    idx, num = torch_npu.npu_nms_rotated(corners.to(D), scores[:3].to(D), 0.7, 0, -1, 1)
    assert idx.cpu().tolist() == [0, 2], idx.cpu().tolist()


def _seeded_rotated(dtype, s1, s2, lo, hi):
    """op-plugin's test_rotated_iou.py / test_rotated_overlaps.py inputs (numpy seed 1234):
    centres uniform in [lo, hi), integer w, h in [1, 20), angles in [-180, 180) degrees."""
    import numpy as np
    np.random.seed(1234)

    def one(shape):
        c = np.random.uniform(lo, hi, shape[:2] + [2]).astype(dtype)
        wh = np.random.randint(1, 20, size=shape[:2] + [2])
        an = np.random.randint(-180, 180, size=shape[:2] + [1])
        return torch.from_numpy(np.concatenate([c, wh, an], axis=-1, dtype=dtype))
    return one(s1), one(s2)


def rotated_iou():
    # the values the hardware gave for op-plugin's test_rotated_iou.py (fp32 and fp16)
    want = torch.tensor([[[0., 0.00045966, 0.], [0., 0., 0.]],
                         [[0., 0., 0.], [0., 0., 0.]],
                         [[0., 0., 0.], [0.00600622, 0.10504241, 0.]],
                         [[0., 0., 0.], [0., 0., 0.]]])
    import numpy as np
    for dt, tol in ((np.float32, 1e-6), (np.float16, 1e-3)):
        a, b = _seeded_rotated(dt, [4, 2, 5], [4, 3, 5], 20, 60)
        got = torch_npu.npu_rotated_iou(a.to(D), b.to(D), False, 0, True, 0.0, 0.0)
        assert got.dtype == a.dtype and got.shape == (4, 2, 3), (got.dtype, got.shape)
        close(got.float(), want, tol, f"rotated iou {dt.__name__}")
    # iof: the intersection over the first box's area; identical boxes give 1
    box = torch.tensor([[[0., 0., 2., 2., 0.], [0., 0., 2., 2., 45.]]])
    q = torch.tensor([[[0., 0., 2., 2., 0.], [1., 0., 2., 2., 0.]]])
    oct_ = 8 * (2 ** 0.5 - 1)
    want_iou = torch.tensor([[[1.0, 2 / 6], [oct_ / (8 - oct_), _rot_iou([0, 0, 2, 2, 45], [1, 0, 2, 2, 0])]]])
    close(torch_npu.npu_rotated_iou(box.to(D), q.to(D)), want_iou, 1e-5, "rotated iou analytic")
    inter = want_iou / (1 + want_iou) * 8  # inter = iou * (a1 + a2) / (1 + iou), a1 = a2 = 4
    close(torch_npu.npu_rotated_iou(box.to(D), q.to(D), mode=1), inter / 4, 1e-5, "rotated iof")


def rotated_overlaps():
    import numpy as np
    a, b = _seeded_rotated(np.float32, [1, 3, 5], [1, 2, 5], 30, 60)
    want = torch.tensor([[[0., 10.289731], [0., 0.], [0., 0.]]])
    close(torch_npu.npu_rotated_overlaps(a.to(D), b.to(D), False), want, 5e-4, "overlaps fp32")
    a, b = _seeded_rotated(np.float16, [1, 3, 5], [1, 4, 5], 30, 60)
    want = torch.tensor([[[0., 13.27, 1.022, 0.], [0., 0., 54.12, 0.], [0., 0., 0., 19.17]]])
    got = torch_npu.npu_rotated_overlaps(a.to(D), b.to(D), False)
    assert got.dtype == torch.float16
    close(got.float(), want, 3e-2, "overlaps fp16")


def pad():
    x = torch.randn(2, 3)
    want = torch.nn.functional.pad(x, (0, 2, 1, 0))
    close(torch_npu.npu_pad(x.to(D), [1, 0, 0, 2]), want, 0, "fp32")
    xi = torch.randint(0, 9, (2, 2, 2), dtype=torch.int32)
    close(torch_npu.npu_pad(xi.to(D), [0, 1, 2, 0, 1, 1]), torch.nn.functional.pad(xi, (1, 1, 2, 0, 0, 1)), 0, "int32")


def silu():
    x = torch.randn(4, 7)
    xc = x.clone().requires_grad_()
    xn = x.to(D).requires_grad_()
    yc = torch.nn.functional.silu(xc)
    yn = torch_npu.npu_silu(xn)
    close(yn, yc, 1e-6, "forward")
    w = torch.randn(4, 7)
    (yc * w).sum().backward()
    (yn * w.to(D)).sum().backward()
    close(xn.grad, xc.grad, 1e-5, "grad")
    xi = x.to(D)
    torch_npu.npu_silu_(xi)
    close(xi, torch.nn.functional.silu(x), 1e-6, "in place")
    xh = x.half()
    close(torch_npu.npu_silu(xh.to(D)), torch.nn.functional.silu(xh.float()).half(), 2e-3, "fp16")


def mish():
    x = torch.randn(3, 8) * 3
    xc = x.clone().requires_grad_()
    xn = x.to(D).requires_grad_()
    yc = torch.nn.functional.mish(xc)
    yn = torch_npu.npu_mish(xn)
    close(yn, yc, 1e-5, "forward")
    w = torch.randn(3, 8)
    (yc * w).sum().backward()
    (yn * w.to(D)).sum().backward()
    close(xn.grad, xc.grad, 1e-5, "grad")


def max_min(which, keepdim):
    def f():
        x = torch.randn(4, 5, 6)
        for dim in (0, 1, -1):
            xc = x.clone().requires_grad_()
            xn = x.to(D).requires_grad_()
            vc, ic = (torch.max if which == "max" else torch.min)(xc, dim, keepdim)
            vn, i_n = (torch_npu.npu_max if which == "max" else torch_npu.npu_min)(xn, dim, keepdim)
            close(vn, vc, 0, f"values dim {dim}")
            close(i_n.long(), ic, 0, f"indices dim {dim}")
            w = torch.randn(vc.shape)
            (vc * w).sum().backward()
            (vn * w.to(D)).sum().backward()
            close(xn.grad, xc.grad, 1e-6, f"grad dim {dim}")
    return f


def scatter():
    x = torch.zeros(3, 5)
    idx = torch.tensor([[0, 4], [2, 1], [3, 3]], dtype=torch.int32)
    upd = torch.arange(6, dtype=torch.float32).reshape(3, 2)
    want = x.scatter(1, idx.long(), upd)
    close(torch_npu.npu_scatter(x.to(D), idx.to(D), upd.to(D), 1), want, 0, "dim 1")


def format_cast():
    """npu_format_cast to FRACTAL_NZ (29) and back (torch_npu runs the aclop Identity when
    aclnn's NpuFormatCast does not take the call) and a copy_ between the two formats."""
    x = torch.randn(5, 33)
    nz = torch_npu.npu_format_cast(x.to(D), 29)
    close(nz, x, 0, "to NZ")
    back = torch_npu.npu_format_cast(nz, 2)
    close(back, x, 0, "back to ND")
    dst = torch_npu.npu_format_cast(torch.zeros(5, 33).to(D), 29)
    dst.copy_(x.to(D))
    close(dst, x, 0, "copy_ into NZ")


def format_cast_internal():
    """The same with torch_npu's internal formats allowed (`allow_internal_format`): the
    tensors are then really stored as FRACTAL_NZ / FRACTAL_Z and Identity converts."""
    torch.npu.config.allow_internal_format = True
    try:
        x = torch.randn(5, 33)
        nz = torch_npu.npu_format_cast(x.to(D), 29)
        if torch_npu.get_npu_format(nz) != 29:
            raise AssertionError(f"npu_format_cast gave format {torch_npu.get_npu_format(nz)}, not 29")
        close(nz, x, 0, "to NZ")
        close(torch_npu.npu_format_cast(nz, 2), x, 0, "back to ND")
        dst = torch_npu.npu_format_cast(torch.zeros(5, 33).to(D), 29)
        dst.copy_(x.to(D))
        close(dst, x, 0, "copy_ into NZ")
        w = torch.randn(8, 3, 3, 3)
        fz = torch_npu.npu_format_cast(w.to(D), 4)
        close(fz, w, 0, "FRACTAL_Z")
    finally:
        torch.npu.config.allow_internal_format = False


def linear_fractal_nz():
    """A Linear whose weight was cast to FRACTAL_NZ (internal formats allowed), the usual
    inference recipe: F.linear, x @ w.t() and torch.mm pass aclnnMatmulWeightNz the transposed
    view of the NZ weight; and x @ w with an NZ weight stored as [k, n]."""
    torch.npu.config.allow_internal_format = True
    try:
        for dt in (torch.float16, torch.bfloat16):
            for n, k in ((32, 64), (20, 40), (48, 48)):
                w, x, b = torch.randn(n, k).to(dt), torch.randn(8, k).to(dt), torch.randn(n).to(dt)
                wn = torch_npu.npu_format_cast(w.to(D), 29)
                if torch_npu.get_npu_format(wn) != 29:
                    raise AssertionError("the weight is not FRACTAL_NZ")
                ref = x.float() @ w.float().t()
                tol = 0.02 if dt == torch.float16 else 0.1
                for what, y in (
                    ("F.linear", torch.nn.functional.linear(x.to(D), wn, b.to(D)) - b.to(D)),
                    ("x @ w.t()", x.to(D) @ wn.t()),
                    ("torch.mm", torch.mm(x.to(D), wn.t())),
                    ("x @ w[k, n]", x.to(D) @ torch_npu.npu_format_cast(w.t().contiguous().to(D), 29)),
                ):
                    close(y.float(), ref, tol, f"{what} {dt} [{n}, {k}]")
    finally:
        torch.npu.config.allow_internal_format = False


def scalar_first_compare():
    """A comparison whose first operand is a CPU scalar tensor (`torch.ge(t, x)`, `t >= x`):
    libopapi.so has no aclnnLessScalar (nor has CANN's), so torch_npu falls back to the aclop
    LessEqual / Less / Greater / ... with the scalar in host memory."""
    x = torch.tensor([[0.1, 0.5], [0.9, -2.0]])
    for f in (torch.ge, torch.gt, torch.le, torch.lt, torch.eq, torch.ne):
        for s in (torch.tensor(0.5), torch.tensor(-2.0)):
            got = f(s, x.to(D))
            if not torch.equal(got.cpu(), f(s, x)):
                raise AssertionError(f"{f.__name__}({s.item()}, x): {got.cpu()} != {f(s, x)}")
    close((torch.tensor(0.5) >= x.to(D)).float(), (torch.tensor(0.5) >= x).float(), 0, "t >= x")


def nz_elementwise():
    """Arithmetic and comparisons on a tensor stored as FRACTAL_NZ (internal formats allowed):
    torch_npu runs the aclop Mul, Add, Sub, RealDiv, Maximum, Greater with the NZ storage."""
    torch.npu.config.allow_internal_format = True
    try:
        w = torch.randn(20, 40)
        wn = torch_npu.npu_format_cast(w.to(D), 29)
        if torch_npu.get_npu_format(wn) != 29:
            raise AssertionError("the tensor is not FRACTAL_NZ")
        for what, f in (
            ("mul", lambda t: t * 2),
            ("add", lambda t: t + t),
            ("sub", lambda t: t - 1),
            ("div", lambda t: t / 3),
            ("maximum", lambda t: torch.maximum(t, t * 0.5)),
            ("gt", lambda t: (t > 0).float()),
        ):
            close(f(wn), f(w), 1e-6, f"NZ {what}")
    finally:
        torch.npu.config.allow_internal_format = False


def bmm_v2():
    a, b = torch.randn(3, 4, 5), torch.randn(3, 5, 2)
    ac, bc = a.clone().requires_grad_(), b.clone().requires_grad_()
    an, bn = a.to(D).requires_grad_(), b.to(D).requires_grad_()
    yc = torch.bmm(ac, bc)
    yn = torch_npu.npu_bmmV2(an, bn, [])
    close(yn, yc, 1e-5, "forward")
    w = torch.randn(3, 4, 2)
    (yc * w).sum().backward()
    (yn * w.to(D)).sum().backward()
    close(an.grad, ac.grad, 1e-5, "grad a")
    close(bn.grad, bc.grad, 1e-5, "grad b")
    # a transposed view (BatchMatMul's adj_x1)
    at = torch.randn(3, 5, 4)
    close(torch_npu.npu_bmmV2(at.to(D).transpose(1, 2), b.to(D), []), torch.bmm(at.transpose(1, 2), b), 1e-5, "adj")


def confusion_transpose():
    x = torch.randn(2, 3, 4)
    close(torch_npu.npu_confusion_transpose(x.to(D), [0, 2, 1], (2, 4, 3), True), x.permute(0, 2, 1).reshape(2, 4, 3), 0, "transpose first")
    close(torch_npu.npu_confusion_transpose(x.to(D), [1, 0, 2], (2, 12, 1), False), x.reshape(2, 12, 1).permute(1, 0, 2).contiguous(), 0, "reshape first")


def sort_v2():
    x = torch.randn(4, 9)
    close(torch_npu.npu_sort_v2(x.to(D), -1, False), torch.sort(x, -1)[0], 0, "ascending")
    close(torch_npu.npu_sort_v2(x.to(D), -1, True), torch.sort(x, -1, descending=True)[0], 0, "descending")


def layer_norm_eval():
    x, w, b = torch.randn(3, 4, 8), torch.randn(8), torch.randn(8)
    close(torch_npu.npu_layer_norm_eval(x.to(D), [8], w.to(D), b.to(D), 1e-5), torch.nn.functional.layer_norm(x, [8], w, b, 1e-5), 1e-5, "last dim")
    w2, b2 = torch.randn(4, 8), torch.randn(4, 8)
    close(torch_npu.npu_layer_norm_eval(x.to(D), [4, 8], w2.to(D), b2.to(D), 1e-5), torch.nn.functional.layer_norm(x, [4, 8], w2, b2, 1e-5), 1e-5, "two dims")


def softmax_xent():
    x = torch.randn(5, 7)
    labels = torch.softmax(torch.randn(5, 7), 1)
    got = torch_npu.npu_softmax_cross_entropy_with_logits(x.to(D), labels.to(D))
    want = -(labels * torch.log_softmax(x, 1)).sum(1)
    close(got, want, 1e-5, "loss")


def one_hot():
    idx = torch.tensor([0, 3, 1, 2], dtype=torch.int32)
    close(torch_npu.npu_one_hot(idx.to(D), -1, 4, 1, 0), torch.nn.functional.one_hot(idx.long(), 4).float(), 0, "depth 4")
    close(torch_npu.npu_one_hot(idx.to(D), -1, 5, 2.5, -1), torch.nn.functional.one_hot(idx.long(), 5).float() * 3.5 - 1, 0, "on / off")


def conv2d_fractal_z():
    """A Conv2d whose weight was cast to FRACTAL_Z (internal formats allowed): torch_npu then
    runs the aclop Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter (and ReduceSum for the
    bias); forward and every gradient against CPU. And npu_conv2d."""
    torch.npu.config.allow_internal_format = True
    try:
        conv = torch.nn.Conv2d(4, 6, 3, padding=1, stride=2, groups=2)
        npu = torch.nn.Conv2d(4, 6, 3, padding=1, stride=2, groups=2)
        npu.load_state_dict(conv.state_dict())
        npu = npu.to(D)
        npu.weight.data = torch_npu.npu_format_cast(npu.weight.data, 4)
        if torch_npu.get_npu_format(npu.weight) != 4:
            raise AssertionError("the weight is not FRACTAL_Z")
        x = torch.randn(2, 4, 9, 7)
        xc, xn = x.clone().requires_grad_(), x.to(D).requires_grad_()
        yc, yn = conv(xc), npu(xn)
        close(yn, yc, 1e-5, "forward")
        w = torch.randn(yc.shape)
        (yc * w).sum().backward()
        (yn * w.to(D)).sum().backward()
        close(xn.grad, xc.grad, 1e-5, "input grad")
        if conv.weight.grad.abs().sum() == 0:
            raise AssertionError("the CPU weight gradient is zero")
        close(npu.weight.grad, conv.weight.grad, 1e-4, "weight grad")
        close(npu.bias.grad, conv.bias.grad, 1e-4, "bias grad")
    finally:
        torch.npu.config.allow_internal_format = False
    c2 = torch.nn.Conv2d(3, 5, 3, padding=1)
    x = torch.randn(1, 3, 6, 6)
    got = torch_npu.npu_conv2d(x.to(D), c2.weight.detach().to(D), c2.bias.detach().to(D), [1, 1], [1, 1], [1, 1], 1)
    close(got, c2(x).detach(), 1e-5, "npu_conv2d")


def errors():
    x = torch.randn(2, 3).to(D)
    try:
        torch_npu.npu_transpose(x, (0, 0)).cpu()
    except RuntimeError as e:
        if "perm" not in str(e) and "permutation" not in str(e):
            raise AssertionError(f"the message does not name the permutation: {e}")
    else:
        raise AssertionError("a repeated dimension in perm was accepted")


case("npu_transpose", transpose)
case("npu_broadcast", broadcast)
case("npu_slice", slice_)
case("npu_indexing", indexing)
case("npu_scaled_masked_softmax", scaled_masked_softmax)
case("npu_iou", iou)
case("npu_random_choice_with_mask", random_choice_with_mask)
case("npu_nms_v4", nms_v4)
case("npu_nms_rotated", nms_rotated)
case("npu_rotated_iou", rotated_iou)
case("npu_rotated_overlaps", rotated_overlaps)
case("npu_pad", pad)
case("npu_silu", silu)
case("npu_mish", mish)
case("npu_max_dim", max_min("max", False))
case("npu_max_keepdim", max_min("max", True))
case("npu_min_dim", max_min("min", False))
case("npu_scatter", scatter)
case("npu_format_cast", format_cast)
case("npu_format_cast_internal", format_cast_internal)
case("linear_fractal_nz", linear_fractal_nz)
case("scalar_first_compare", scalar_first_compare)
case("nz_elementwise", nz_elementwise)
case("npu_bmmV2", bmm_v2)
case("npu_confusion_transpose", confusion_transpose)
case("npu_sort_v2", sort_v2)
case("npu_layer_norm_eval", layer_norm_eval)
case("npu_softmax_cross_entropy_with_logits", softmax_xent)
case("npu_one_hot", one_hot)
case("conv2d_fractal_z", conv2d_fractal_z)
case("npu_transpose_bad_perm", errors)

print(f"npu_aclop_apis: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
