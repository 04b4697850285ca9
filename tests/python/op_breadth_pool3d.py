"""The torch operations that reach the 3-D pooling operators of `ops/pool3d.rs` through
torch_npu (F.avg_pool3d, F.adaptive_avg_pool3d, F.max_pool3d with indices,
F.adaptive_max_pool3d) 3-D reflection / replication padding (F.pad) and F.grid_sample of 4-D inputs (bilinear, nearest, bicubic;
zeros, border, reflection padding; both align_corners) and 5-D inputs (trilinear, nearest) F.affine_grid and trilinear / bicubic F.interpolate, forward and backward, each against CPU torch. A torch_npu warning that
an operation ran on the CPU instead (its fallback when libopapi.so lacks the aclnn function)
fails the case. Prints PASS/FAIL per case and exits 1 when any case fails.
"""
import sys
import warnings

import torch
import torch_npu  # noqa: F401
import torch.nn.functional as F

D = "npu"
FAILED = []
torch.manual_seed(0)


def flat(r):
    if isinstance(r, (tuple, list)):
        return [t for t in r]
    return [r]


def chk(name, f, *args, grad=True, rtol=1e-4, atol=1e-5):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cpu = [a.clone().requires_grad_(grad) if (grad and a.is_floating_point()) else a.clone() for a in args]
            npu = [a.detach().to(D).requires_grad_(grad) if (grad and a.is_floating_point()) else a.to(D) for a in args]
            rc, rn = flat(f(*cpu)), flat(f(*npu))
            for c, n in zip(rc, rn):
                torch.testing.assert_close(n.cpu().to(c.dtype), c, rtol=rtol, atol=atol, equal_nan=True)
            if grad:
                w = torch.randn(rc[0].shape)
                (rc[0] * w).sum().backward()
                (rn[0] * w.to(D)).sum().backward()
                for a, b in zip(cpu, npu):
                    if a.grad is not None:
                        torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=rtol, atol=atol)
        cpu_fallback = [str(x.message) for x in caught if "CPU" in str(x.message)]
        assert not cpu_fallback, cpu_fallback[0]
        print("PASS", name)
    except Exception as e:
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


x5 = torch.randn(2, 3, 6, 7, 5)
x4 = torch.randn(3, 5, 6, 4)
chk("avg_pool3d", lambda a: F.avg_pool3d(a, 2), x5)
chk("avg_pool3d_pad", lambda a: F.avg_pool3d(a, (3, 2, 3), stride=(2, 1, 2), padding=(1, 1, 1)), x5)
chk("avg_pool3d_nopad_count", lambda a: F.avg_pool3d(a, 3, stride=2, padding=1, count_include_pad=False), x4)
chk("avg_pool3d_ceil", lambda a: F.avg_pool3d(a, 2, stride=2, ceil_mode=True), x5)
chk("avg_pool3d_divisor", lambda a: F.avg_pool3d(a, 2, stride=1, divisor_override=3), x4)
chk("avg_pool3d_strided", lambda a: F.avg_pool3d(a.transpose(2, 4), 2), x5)
# CPU torch has no float16/bfloat16 avg_pool3d: the reference pools in float32
chk("avg_pool3d_f16", lambda a: F.avg_pool3d(a if a.is_npu else a.float(), 2).float(), x5.half(), grad=False, rtol=2e-3, atol=2e-3)
chk("avg_pool3d_bf16", lambda a: F.avg_pool3d(a if a.is_npu else a.float(), 2).float(), x5.bfloat16(), grad=False, rtol=1e-2, atol=1e-2)
chk("max_pool3d_bf16", lambda a: F.max_pool3d(a, 2, return_indices=True), x5.bfloat16(), grad=False)
chk("adaptive_avg_pool3d", lambda a: F.adaptive_avg_pool3d(a, (3, 4, 2)), x5)
chk("adaptive_avg_pool3d_4d", lambda a: F.adaptive_avg_pool3d(a, (4, 4, 3)), x4)
chk("adaptive_avg_pool3d_up", lambda a: F.adaptive_avg_pool3d(a, (8, 9, 7)), x5)
chk("max_pool3d", lambda a: F.max_pool3d(a, 2, return_indices=True), x5)
chk("max_pool3d_pad", lambda a: F.max_pool3d(a, 3, stride=2, padding=1, return_indices=True), x5)
chk("max_pool3d_ceil", lambda a: F.max_pool3d(a, (2, 3, 2), stride=(2, 2, 1), ceil_mode=True, return_indices=True), x4)
chk("max_pool3d_dilation", lambda a: F.max_pool3d(a, 2, stride=1, dilation=2), x5)
chk("max_pool3d_module", lambda a: torch.nn.MaxPool3d(2)(a), x5)
chk("adaptive_max_pool3d", lambda a: F.adaptive_max_pool3d(a, (3, 4, 2), return_indices=True), x5)
chk("adaptive_max_pool3d_4d", lambda a: F.adaptive_max_pool3d(a, 2, return_indices=True), x4)
chk("reflection_pad3d", lambda a: F.pad(a, (1, 2, 0, 1, 2, 1), mode="reflect"), x5)
chk("reflection_pad3d_4d", lambda a: F.pad(a, (3, 0, 1, 1, 0, 2), mode="reflect"), x4)
chk("replication_pad3d", lambda a: F.pad(a, (2, 1, 3, 0, 1, 4), mode="replicate"), x5)
chk("replication_pad3d_strided", lambda a: F.pad(a.transpose(3, 4), (1, 1, 2, 2, 0, 1), mode="replicate"), x5)
chk("reflection_pad3d_f16", lambda a: F.pad(a, (1, 1, 1, 1, 1, 1), mode="reflect"), x4.half(), grad=False)
g2 = torch.rand(2, 5, 4, 2) * 2.4 - 1.2  # some points outside [-1, 1]
xg = torch.randn(2, 3, 6, 7)
for mode in ("bilinear", "nearest"):
    for pad in ("zeros", "border", "reflection"):
        for ac in (False, True):
            chk(f"grid_sample_{mode}_{pad}_{int(ac)}",
                lambda a, g, m=mode, p=pad, c=ac: F.grid_sample(a, g, mode=m, padding_mode=p, align_corners=c), xg, g2)
for pad in ("zeros", "border", "reflection"):
    chk(f"grid_sample_bicubic_{pad}", lambda a, g, p=pad: F.grid_sample(a, g, mode="bicubic", padding_mode=p, align_corners=False), xg, g2, grad=False)
chk("grid_sample_affine", lambda a, t: F.grid_sample(a, F.affine_grid(t, (2, 3, 5, 4), align_corners=False), align_corners=False),
    xg, torch.tensor([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.2]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]))
g3 = torch.rand(2, 3, 4, 2, 3) * 2.4 - 1.2
x3g = torch.randn(2, 2, 4, 5, 6)
for mode in ("bilinear", "nearest"):
    for pad in ("zeros", "border", "reflection"):
        for ac in (False, True):
            chk(f"grid_sample3d_{mode}_{pad}_{int(ac)}",
                lambda a, g, m=mode, p=pad, c=ac: F.grid_sample(a, g, mode=m, padding_mode=p, align_corners=c), x3g, g3)
chk("upsample_trilinear3d", lambda a: F.interpolate(a, size=(5, 7, 4), mode="trilinear"), x5)
chk("upsample_trilinear3d_align", lambda a: F.interpolate(a, size=(3, 9, 8), mode="trilinear", align_corners=True), x5)
chk("upsample_trilinear3d_scale", lambda a: F.interpolate(a, scale_factor=(1.5, 0.7, 2.3), mode="trilinear"), x5)
chk("upsample_bicubic2d", lambda a: F.interpolate(a, size=(9, 5), mode="bicubic"), xg)
chk("upsample_bicubic2d_align", lambda a: F.interpolate(a, size=(4, 11), mode="bicubic", align_corners=True), xg)
chk("upsample_bicubic2d_scale", lambda a: F.interpolate(a, scale_factor=(1.7, 0.6), mode="bicubic"), xg)
chk("affine_grid", lambda t: F.affine_grid(t, (2, 3, 5, 4), align_corners=False), torch.randn(2, 2, 3), grad=False)
chk("affine_grid_align", lambda t: F.affine_grid(t, (2, 1, 1, 6), align_corners=True), torch.randn(2, 2, 3), grad=False)
chk("affine_grid_3d", lambda t: F.affine_grid(t, (1, 2, 3, 4, 5), align_corners=False), torch.randn(1, 3, 4), grad=False)

print(f"op_breadth_pool3d: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
