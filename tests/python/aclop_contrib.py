"""torch_npu's documented contrib / CV APIs that op-plugin implements only as aclop operators,
against independent computations written here:
dropout_with_byte_mask (`torch_npu.contrib.function.dropout_with_byte_mask`,
`contrib.module.DropoutWithByteMask`, `torch_npu._dropout_with_byte_mask` and its backward:
DropOutGenMaskV3 + DropOutDoMaskV3) and ROIAlign (`torch_npu.npu_roi_align`,
`contrib.module.ROIAlign` forward and backward: ROIAlign / ROIAlignGrad).

`python aclop_contrib.py [case-prefix]` prints PASS/FAIL per case and
`aclop_contrib: N failed`; exits 1 when any case fails.
"""
import math
import sys

import torch
import torch_npu
from torch_npu.contrib.function import npu_functional as NF
from torch_npu.contrib.module import ROIAlign
from torch_npu.contrib.module.npu_modules import DropoutWithByteMask

D = "npu"
FAILED = []
ONLY = sys.argv[1] if len(sys.argv) > 1 else ""


def case(name, f):
    if not name.startswith(ONLY):
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


# ---------------------------------------------------------------- dropout with a byte mask


def dropped_as_documented(x, y, keep, tol):
    """Every element of y is 0 or x / keep; returns the kept fraction."""
    xc, yc = x.detach().cpu().float(), y.detach().cpu().float()
    kept = yc != 0
    torch.testing.assert_close(yc[kept], xc[kept] / keep, rtol=tol, atol=tol)
    return kept.float().mean().item()


def dropout_functional():
    torch.manual_seed(11)
    for dt, tol in ((torch.float32, 1e-6), (torch.float16, 2e-3)):
        x = (torch.rand(96, 64) + 0.5).to(dt)  # no zeros: a zero output means dropped
        y = NF.dropout_with_byte_mask(x.to(D), p=0.2, training=True)
        check(y.dtype == dt and y.shape == x.shape, f"{dt}: {y.dtype} {tuple(y.shape)}")
        frac = dropped_as_documented(x, y, 0.8, tol)
        # 6144 Bernoulli(0.8) draws: the standard deviation of the fraction is 0.005
        check(abs(frac - 0.8) < 0.03, f"{dt}: kept fraction {frac}")
    # not training, p = 0: the input itself
    x = torch.randn(8, 8).to(D)
    check(torch.equal(NF.dropout_with_byte_mask(x, p=0.3, training=False).cpu(), x.cpu()), "eval")
    check(torch.equal(NF.dropout_with_byte_mask(x, p=0.0).cpu(), x.cpu()), "p = 0")


def dropout_mask_and_seed():
    x = (torch.rand(33, 47) + 0.5).to(D)
    torch.manual_seed(5)
    y1, m1 = torch_npu._dropout_with_byte_mask(x, 0.3)
    check(m1.dtype == torch.uint8 and m1.shape == x.shape, f"mask {m1.dtype} {tuple(m1.shape)}")
    mc = m1.cpu()
    check(bool(((mc == 0) | (mc == 1)).all()), "the mask holds only 0 and 1")
    torch.testing.assert_close(y1.cpu(), x.cpu() * mc.float() / 0.7, rtol=1e-6, atol=1e-6)
    frac = mc.float().mean().item()
    check(abs(frac - 0.7) < 0.04, f"kept fraction {frac}")
    # stateless: the same seed gives the same mask, another seed another one
    torch.manual_seed(5)
    y2, m2 = torch_npu._dropout_with_byte_mask(x, 0.3)
    check(torch.equal(m2.cpu(), mc) and torch.equal(y2.cpu(), y1.cpu()), "same seed, other mask")
    torch.manual_seed(6)
    _, m3 = torch_npu._dropout_with_byte_mask(x, 0.3)
    check(not torch.equal(m3.cpu(), mc), "another seed, the same mask")


def dropout_backward():
    torch.manual_seed(21)
    x = (torch.rand(40, 50) + 0.5).to(D).requires_grad_()
    y = NF.dropout_with_byte_mask(x, p=0.4, training=True)
    g = torch.randn(40, 50)
    y.backward(g.to(D))
    kept = (y.detach().cpu() != 0).float()
    torch.testing.assert_close(x.grad.cpu(), g * kept / 0.6, rtol=1e-6, atol=1e-6)
    # the backward itself, given the mask
    mask = (torch.rand(7, 9) < 0.5).to(torch.uint8)
    gb = torch.randn(7, 9)
    dx = torch_npu._dropout_with_byte_mask_backward(gb.to(D), mask.to(D), 0.25)
    torch.testing.assert_close(dx.cpu(), gb * mask.float() / 0.75, rtol=1e-6, atol=1e-6)


def dropout_module():
    m = DropoutWithByteMask(p=0.5)
    x = (torch.rand(16, 16) + 0.5).npu()
    y = m(x)
    check(y.shape == (16, 16), f"shape {tuple(y.shape)}")
    frac = dropped_as_documented(x, y, 0.5, 1e-6)
    check(0.3 < frac < 0.7, f"kept fraction {frac}")
    m.eval()
    check(torch.equal(m(x).cpu(), x.cpu()), "eval mode changes the input")
    # the documentation's example (an ND-format input)
    inp = torch_npu.npu_format_cast(torch.randn(4, 4).npu(), 2)
    out = NF.dropout_with_byte_mask(inp, p=0.2, training=True)
    dropped_as_documented(inp, out, 0.8, 1e-6)


def dropout_add_softmax():
    # npu_dropout_with_add_softmax (AxpyWithSoftmaxAndDropOutDoMask and its gradient
    # DropoutWithMulsAndSoftmaxGrad): softmax(x1 + alpha * self), dropped by the mask
    import torch.nn.functional as F
    torch.manual_seed(8)
    for dt, tol in ((torch.float32, 1e-5), (torch.float16, 2e-3)):
        s = torch.rand(2, 16, 128, 128).to(dt)
        x1 = torch.rand(2, 16, 128, 128).to(dt)
        sn = s.npu().requires_grad_()
        mask, soft, out = torch_npu.npu_dropout_with_add_softmax(sn, x1.npu(), 0.125, 0.1, -1)
        ref = F.softmax(x1.float() + 0.125 * s.float(), dim=-1)
        torch.testing.assert_close(soft.cpu().float(), ref, rtol=tol, atol=tol)
        check(mask.dtype == torch.uint8 and mask.numel() % 128 == 0 and mask.numel() >= s.numel(),
              f"mask {mask.dtype} {tuple(mask.shape)}")
        keep = mask.cpu()[: s.numel()].reshape(s.shape).float()
        frac = keep.mean().item()
        check(abs(frac - 0.9) < 0.01, f"kept fraction {frac}")
        torch.testing.assert_close(out.cpu().float(), ref * keep / 0.9, rtol=tol, atol=tol)
        g = torch.randn(s.shape).to(dt)
        out.backward(g.npu())
        # the gradient with respect to self: alpha * softmax'(g * mask / keep)
        sc = s.float().requires_grad_()
        (F.softmax(x1.float() + 0.125 * sc, dim=-1) * keep / 0.9).backward(g.float())
        torch.testing.assert_close(sn.grad.cpu().float(), sc.grad, rtol=tol, atol=tol)
    # fuse_add_softmax_dropout takes this path for h in (128, 256, 384, 512), n * c % 32 == 0
    from torch_npu.contrib.function import fuse_add_softmax_dropout
    a, b = torch.rand(2, 16, 128, 128).npu(), torch.rand(2, 16, 128, 128).npu()
    o = fuse_add_softmax_dropout(False, None, a, b, 64, p=0.1)
    torch.testing.assert_close(o.cpu(), F.softmax(a.cpu() + b.cpu() / 8, dim=-1), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------- ROIAlign


def bilinear(img, y, x):
    """Mask R-CNN's bilinear sample of img [H, W] at (y, x) (differentiable in img)."""
    h, w = img.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return img.new_zeros(())
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[y0, x0] + (1 - ly) * lx * img[y0, x1]
            + ly * (1 - lx) * img[y1, x0] + ly * lx * img[y1, x1])


def roi_align_ref(feat, rois, scale, ph, pw, sample, aligned):
    """torchvision-style RoIAlign (aligned: half-pixel shift, else rois at least 1 x 1)."""
    k, c = rois.shape[0], feat.shape[1]
    rows = []
    for r in rois.tolist():
        b = int(r[0])
        off = 0.5 if aligned else 0.0
        x1, y1, x2, y2 = (v * scale - off for v in r[1:])
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bw, bh = rw / pw, rh / ph
        gy = sample if sample > 0 else max(math.ceil(bh), 1)
        gx = sample if sample > 0 else max(math.ceil(bw), 1)
        chans = []
        for ci in range(c):
            img = feat[b, ci]
            cells = []
            for i in range(ph):
                for j in range(pw):
                    acc = img.new_zeros(())
                    for iy in range(gy):
                        yy = y1 + i * bh + (iy + 0.5) * bh / gy
                        for ix in range(gx):
                            xx = x1 + j * bw + (ix + 0.5) * bw / gx
                            acc = acc + bilinear(img, yy, xx)
                    cells.append(acc / (gy * gx))
            chans.append(torch.stack(cells).reshape(ph, pw))
        rows.append(torch.stack(chans))
    return torch.stack(rows).reshape(k, c, ph, pw)


FEAT6 = torch.arange(1, 37, dtype=torch.float32).reshape(1, 1, 6, 6)
ROI6 = torch.tensor([[0, -2.0, -2.0, 22.0, 22.0]])


def roi_align_golden():
    # op-plugin test_roi_align.py / the npu_roi_align documentation example
    want = torch.tensor([[[[4.5, 6.5, 8.5], [16.5, 18.5, 20.5], [28.5, 30.5, 32.5]]]])
    out = torch_npu.npu_roi_align(FEAT6.npu(), ROI6.npu(), 0.25, 3, 3, 2, 0)
    check(out.shape == (1, 1, 3, 3) and out.dtype == torch.float32, f"{tuple(out.shape)} {out.dtype}")
    torch.testing.assert_close(out.cpu(), want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(want, roi_align_ref(FEAT6, ROI6, 0.25, 3, 3, 2, False))
    # float16 in: computed in float32, cast back
    outh = torch_npu.npu_roi_align(FEAT6.half().npu(), ROI6.half().npu(), 0.25, 3, 3, 2, 0)
    check(outh.dtype == torch.float16, f"{outh.dtype}")
    torch.testing.assert_close(outh.cpu().float(), want, rtol=1e-3, atol=1e-3)


def roi_align_random():
    torch.manual_seed(3)
    feat = torch.randn(2, 3, 9, 11)
    rois = torch.tensor([[0, 1.0, 2.0, 30.0, 20.0], [1, -4.0, 0.5, 12.0, 40.0],
                         [1, 10.0, 10.0, 11.0, 11.0], [0, 38.0, 30.0, 60.0, 50.0]])
    for mode, aligned in ((0, False), (3, True)):
        for sample in (2, 0):
            out = torch_npu.npu_roi_align(feat.npu(), rois.npu(), 0.25, 4, 3, sample, mode)
            ref = roi_align_ref(feat, rois, 0.25, 4, 3, sample, aligned)
            torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5,
                                       msg=lambda m: f"mode {mode} sample {sample}: {m}")


def roi_align_module_backward():
    torch.manual_seed(4)
    feat = torch.randn(2, 2, 7, 8)
    rois = torch.tensor([[1, 2.0, 3.0, 20.0, 25.0], [0, -3.0, -1.0, 14.0, 9.0], [1, 0.0, 0.0, 31.0, 27.0]])
    # (a square output: the module's backward passes output_size[0] as pooled_width)
    for aligned in (False, True):
        x = feat.clone().npu().requires_grad_()
        model = ROIAlign((3, 3), 0.25, 2, aligned=aligned).npu()
        out = model(x, rois.npu())
        g = torch.randn(out.shape)
        out.backward(g.npu())
        xc = feat.clone().requires_grad_()
        ref = roi_align_ref(xc, rois, 0.25, 3, 3, 2, aligned)
        ref.backward(g)
        torch.testing.assert_close(out.detach().cpu(), ref.detach(), rtol=1e-5, atol=1e-5,
                                   msg=lambda m: f"aligned {aligned} forward: {m}")
        torch.testing.assert_close(x.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5,
                                   msg=lambda m: f"aligned {aligned} backward: {m}")
    # ROIAlignGrad directly, a 4 x 3 output, sample_num 0 (adaptive)
    xc = feat.clone().requires_grad_()
    ref = roi_align_ref(xc, rois, 0.25, 4, 3, 0, False)
    g = torch.randn(ref.shape)
    ref.backward(g)
    dx = torch_npu.npu_roi_alignbk(g.npu(), rois.npu(), list(feat.shape), 3, 4, 0.25, 0, 0)
    check(dx.shape == feat.shape, f"{tuple(dx.shape)}")
    torch.testing.assert_close(dx.cpu(), xc.grad, rtol=1e-5, atol=1e-5)
    # the documentation's example
    input1 = FEAT6.clone().npu().requires_grad_()
    model = ROIAlign((3, 3), 0.25, 2, aligned=False).npu()
    output = model(input1, ROI6.npu())
    output.sum().backward()
    check(output.shape == (1, 1, 3, 3), f"{tuple(output.shape)}")
    # every sample of that roi is inside the map: the gradient sums to the 9 cells
    check(abs(input1.grad.sum().item() - 9.0) < 1e-4, f"gradient sum {input1.grad.sum().item()}")


def roi_align_bad_rois():
    try:
        torch_npu.npu_roi_align(FEAT6.npu(), torch.tensor([[0, 1.0, 1.0, 2.0]]).npu(), 0.25, 3, 3, 2, 0)
        torch.npu.synchronize()
    except RuntimeError as e:
        check("rois" in str(e), f"message {str(e)[:200]}")
        return
    raise AssertionError("rois [1, 4] were accepted")


# ------------------------------------------------------------------- GIoU / DIoU / CIoU


def iou_ref(kind, b1, b2, trans, cross):
    """GIoU / DIoU / CIoU of [4, n] boxes against [4, m] gtboxes, op-plugin's test formulas
    (CIoU's alpha held constant for the gradient)."""
    eps = 1e-9
    if cross:
        n, m = b1.shape[1], b2.shape[1]
        b1 = b1[:, None, :].expand(4, m, n)
        b2 = b2[:, :, None].expand(4, m, n)
    if trans:
        ax1, ax2, ay1, ay2 = b1[0] - b1[2] / 2, b1[0] + b1[2] / 2, b1[1] - b1[3] / 2, b1[1] + b1[3] / 2
        bx1, bx2, by1, by2 = b2[0] - b2[2] / 2, b2[0] + b2[2] / 2, b2[1] - b2[3] / 2, b2[1] + b2[3] / 2
    else:
        ax1, ay1, ax2, ay2 = b1[0], b1[1], b1[2], b1[3]
        bx1, by1, bx2, by2 = b2[0], b2[1], b2[2], b2[3]
    inter = (torch.min(ax2, bx2) - torch.max(ax1, bx1)).clamp(0) * \
        (torch.min(ay2, by2) - torch.max(ay1, by1)).clamp(0)
    cw = torch.max(ax2, bx2) - torch.min(ax1, bx1)
    ch = torch.max(ay2, by2) - torch.min(ay1, by1)
    if kind == "g":
        union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
        out = inter / union - (cw * ch - union) / (cw * ch)
    else:
        w1, h1 = ax2 - ax1, ay2 - ay1 + eps
        w2, h2 = bx2 - bx1, by2 - by1 + eps
        iou = inter / (w1 * h1 + w2 * h2 - inter + eps)
        rho2 = ((bx1 + bx2 - ax1 - ax2) ** 2 + (by1 + by2 - ay1 - ay2) ** 2) / 4
        out = iou - rho2 / (cw ** 2 + ch ** 2 + eps)
        if kind == "c":
            v = (4 / math.pi ** 2) * (torch.atan(w2 / h2) - torch.atan(w1 / h1)) ** 2
            with torch.no_grad():
                alpha = v / ((1 + eps) - iou + v)
            out = out - v * alpha
    return out if cross else out.reshape(1, -1)


def xywh_boxes(n, seed):
    g = torch.Generator().manual_seed(seed)
    ctr = torch.rand(2, n, generator=g) * 10
    wh = torch.rand(2, n, generator=g) * 4 + 0.5
    return torch.cat([ctr, wh])


def giou_diou_ciou():
    b1, b2 = xywh_boxes(50, 1), xywh_boxes(50, 2)
    for kind, f in (("g", torch_npu.npu_giou), ("d", torch_npu.npu_diou)):
        x1, x2 = b1.npu().requires_grad_(), b2.npu().requires_grad_()
        out = f(x1, x2, trans=True, is_cross=False, mode=0)
        r1, r2 = b1.double().requires_grad_(), b2.double().requires_grad_()
        ref = iou_ref(kind, r1, r2, True, False)
        # npu_giou answers [n, 1], npu_diou [1, n]
        torch.testing.assert_close(out.detach().cpu().reshape(-1), ref.detach().float().reshape(-1),
                                   rtol=1e-5, atol=1e-5, msg=lambda m: f"{kind}iou: {m}")
        g = torch.randn(out.shape)
        out.backward(g.npu())
        ref.backward(g.double().reshape(ref.shape))
        torch.testing.assert_close(x1.grad.cpu(), r1.grad.float(), rtol=1e-4, atol=1e-4,
                                   msg=lambda m: f"{kind}iou d bboxes: {m}")
        torch.testing.assert_close(x2.grad.cpu(), r2.grad.float(), rtol=1e-4, atol=1e-4,
                                   msg=lambda m: f"{kind}iou d gtboxes: {m}")
    # CIoU (forward and the gradient with alpha constant)
    x1, x2 = b1.npu().requires_grad_(), b2.npu().requires_grad_()
    out = torch_npu.npu_ciou(x1, x2, True, False, 0, True)
    r1, r2 = b1.double().requires_grad_(), b2.double().requires_grad_()
    ref = iou_ref("c", r1, r2, True, False)
    torch.testing.assert_close(out.detach().cpu(), ref.detach().float(), rtol=1e-5, atol=1e-5)
    out.sum().backward()
    ref.sum().backward()
    torch.testing.assert_close(x1.grad.cpu(), r1.grad.float(), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(x2.grad.cpu(), r2.grad.float(), rtol=1e-4, atol=1e-4)
    # corner form, every pair (is_cross), fp16 in
    c1 = torch.cat([b1[:2, :7], b1[:2, :7] + b1[2:, :7]])
    c2 = torch.cat([b2[:2, :5], b2[:2, :5] + b2[2:, :5]])
    for kind, f in (("d", lambda a, b: torch_npu.npu_diou(a, b, False, True, 0)),
                    ("c", lambda a, b: torch_npu.npu_ciou(a, b, False, True, 0, True))):
        out = f(c1.npu(), c2.npu())
        ref = iou_ref(kind, c1.double(), c2.double(), False, True)
        check(out.shape == (5, 7), f"{kind}iou is_cross: {tuple(out.shape)}")
        torch.testing.assert_close(out.cpu(), ref.float(), rtol=1e-5, atol=1e-5)
    outh = torch_npu.npu_giou(b1.half().npu(), b2.half().npu(), True, False, 0)
    check(outh.dtype == torch.float16, f"{outh.dtype}")
    ref = iou_ref("g", b1.half().double(), b2.half().double(), True, False)
    torch.testing.assert_close(outh.cpu().float().reshape(-1), ref.float().reshape(-1), rtol=2e-3, atol=2e-3)


def giou_golden_gradient():
    # op-plugin test_npu_giou_backward.py: np.random.seed(1234) boxes, the hardware's gradient
    b1 = torch.tensor([[0.09575972706079483], [0.31105437874794006], [0.781136155128479], [0.6073206663131714]])
    b2 = torch.tensor([[0.38998791575431824], [0.13629630208015442], [0.8617678880691528], [0.5990638732910156]])
    x1, x2 = b1.npu().requires_grad_(), b2.npu().requires_grad_()
    out = torch_npu.npu_giou(x1, x2, True, False, 0)
    out.backward(torch.ones_like(out))
    want1 = torch.tensor([[1.0218241], [-1.4181931], [0.18631615], [0.1747725]])
    want2 = torch.tensor([[-1.0218241], [1.4181931], [0.17999186], [0.23653218]])
    torch.testing.assert_close(x1.grad.cpu(), want1, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(x2.grad.cpu(), want2, rtol=1e-4, atol=1e-4)
    # the contrib function ([n, 4] boxes, permuted) and its documentation example
    box1 = torch.randn(32, 4).npu().requires_grad_()
    box2 = torch.randn(32, 4).npu().requires_grad_()
    iou = torch_npu.contrib.npu_giou(box1, box2)
    iou.sum().backward()
    check(box1.grad.shape == (32, 4), f"{tuple(box1.grad.shape)}")


case("dropout_functional", dropout_functional)
case("dropout_mask_and_seed", dropout_mask_and_seed)
case("dropout_backward", dropout_backward)
case("dropout_module", dropout_module)
case("dropout_add_softmax", dropout_add_softmax)
case("roi_align_golden", roi_align_golden)
case("roi_align_random", roi_align_random)
case("roi_align_module_backward", roi_align_module_backward)
case("giou_diou_ciou", giou_diou_ciou)
case("giou_golden_gradient", giou_golden_gradient)
# last: after an operator's error torch_npu's task queue does not run later work
case("roi_align_bad_rois", roi_align_bad_rois)

print(f"aclop_contrib: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
