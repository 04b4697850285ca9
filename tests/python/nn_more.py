"""A host (CPU) 0-dim tensor plus a device tensor: with aclnnAddV3 exported, torch_npu's
add (AddKernelNpuOpApi.cpp) sends `cpu_scalar + alpha * npu_tensor` to aclnnAddV3 instead of
copying the scalar to the device for aclnnAdd. Checked against CPU torch over the dtypes
torch_npu sends (every non-bool host scalar, every numeric device tensor), with alpha,
type promotion (int tensor + float scalar), non-contiguous tensors, `out=` and autograd.
Then torch_npu.npu_dynamic_quant / npu_dynamic_quant_asymmetric with quant_mode "pertensor" and
"perchannel" (aclnnDynamicQuantV3/V4; before they existed torch_npu silently ran the per-token
V2), against a float32 CPU reference.
Prints PASS/FAIL per case and exits 1 when any case fails.
"""
import sys

import torch
import torch_npu  # noqa: F401

D = "npu"
FAILED = []
torch.manual_seed(0)


def chk(name, f, *args, rtol=1e-5, atol=1e-6):
    try:
        rc = f(*args)
        rn = f(*[a.to(D) if isinstance(a, torch.Tensor) and a.dim() > 0 else a for a in args])
        assert rn.device.type == "npu", f"result on {rn.device}"
        assert rn.dtype == rc.dtype, f"dtype {rn.dtype}, CPU torch gives {rc.dtype}"
        torch.testing.assert_close(rn.cpu(), rc, rtol=rtol, atol=atol)
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


def tensor(dtype, shape=(3, 5)):
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    if dtype == torch.uint8:
        return torch.randint(0, 100, shape, dtype=dtype)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randint(-50, 50, shape, dtype=dtype)


TOL = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (1e-2, 1e-2)}
for dt in [torch.float32, torch.float16, torch.bfloat16, torch.float64,
           torch.int32, torch.int64, torch.int16, torch.int8, torch.uint8, torch.bool]:
    x = tensor(dt)
    rtol, atol = TOL.get(dt, (1e-5, 1e-6))
    name = str(dt).split(".")[1]
    if dt != torch.bool:
        chk(f"int_scalar_plus_{name}", lambda a: torch.tensor(3) + a, x, rtol=rtol, atol=atol)
        chk(f"int_scalar_plus_{name}_alpha", lambda a: torch.add(torch.tensor(-2), a, alpha=3), x, rtol=rtol, atol=atol)
    chk(f"float_scalar_plus_{name}", lambda a: torch.tensor(2.5) + a, x, rtol=rtol, atol=atol)
    if dt.is_floating_point:
        chk(f"float_scalar_plus_{name}_alpha", lambda a: torch.add(torch.tensor(0.75), a, alpha=-1.5), x,
            rtol=rtol, atol=atol)
chk("double_scalar_plus_float_transposed", lambda a: torch.tensor(1.25, dtype=torch.float64) + a.t(),
    torch.randn(4, 6))
chk("float_scalar_plus_float_strided", lambda a: torch.tensor(-0.5) + a[:, ::2], torch.randn(4, 6))
chk("int_scalar_plus_float_4d", lambda a: torch.tensor(7) + a, torch.randn(2, 3, 4, 5))


def add_out(a):
    o = torch.empty(a.shape, dtype=torch.float32, device=a.device)
    torch.add(torch.tensor(1.5), a, alpha=2, out=o)
    return o


chk("add_out_float", add_out, torch.randn(3, 4))


def grad_case():
    cpu = torch.randn(3, 4, requires_grad=True)
    npu = cpu.detach().to(D).requires_grad_(True)
    yc = (torch.tensor(2.0) + cpu * 3).sum()
    yn = (torch.tensor(2.0) + npu * 3).sum()
    yc.backward()
    yn.backward()
    torch.testing.assert_close(yn.detach().cpu(), yc.detach())
    torch.testing.assert_close(npu.grad.cpu(), cpu.grad)


try:
    grad_case()
    print("PASS scalar_plus_tensor_autograd")
except Exception as e:  # noqa: BLE001
    FAILED.append("scalar_plus_tensor_autograd")
    print("FAIL scalar_plus_tensor_autograd", str(e).splitlines()[0][:300])


def dq_ref(x, smooth, mode, asym):
    """float32 dynamic int8 quantization of x [..., R, H]."""
    xf = x.float()
    if smooth is not None:
        sm = smooth.float()
        xf = xf * (sm.unsqueeze(-1) if mode == "perchannel" else sm)
    if mode == "pertoken":
        dims, keep = (-1,), True
    elif mode == "pertensor":
        dims, keep = tuple(range(xf.dim())), True
    else:
        dims, keep = (-2,), True
    if asym:
        mx = xf.amax(dim=dims, keepdim=keep)
        mn = xf.amin(dim=dims, keepdim=keep)
        sc = (mx - mn) / 255.0
        off = torch.where(sc == 0, torch.zeros_like(sc), 127.0 - mx / sc)
        q = torch.where(sc == 0, off.expand_as(xf), xf / sc + off)
    else:
        sc = xf.abs().amax(dim=dims, keepdim=keep) / 127.0
        off = torch.zeros_like(sc)
        q = xf / sc
    y = torch.round(q).clamp(-128, 127).to(torch.int8)
    if mode == "pertoken":
        sc, off = sc.squeeze(-1), off.squeeze(-1)
    elif mode == "pertensor":
        sc, off = sc.reshape(1), off.reshape(1)
    else:
        sc, off = sc.squeeze(-2), off.squeeze(-2)
    return y, sc, off


def dq_case(name, mode, asym, smooth_len=None, dtype=torch.float16):
    try:
        x = (torch.randn(2, 5, 16) * 3).to(dtype)
        sm = None if smooth_len is None else (torch.rand(smooth_len) + 0.5).to(dtype)
        kw = {"smooth_scales": sm.npu()} if sm is not None else {}
        if asym:
            y, sc, off = torch_npu.npu_dynamic_quant_asymmetric(x.npu(), quant_mode=mode, **kw)
        else:
            y, sc = torch_npu.npu_dynamic_quant(x.npu(), quant_mode=mode, **kw)
            off = None
        wy, wsc, woff = dq_ref(x, sm, mode, asym)
        torch.testing.assert_close(sc.cpu(), wsc, rtol=1e-6, atol=1e-7)
        if off is not None:
            torch.testing.assert_close(off.cpu(), woff, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(y.cpu(), wy, rtol=0, atol=0)
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


dq_case("dynamic_quant_pertensor", "pertensor", False)
dq_case("dynamic_quant_perchannel", "perchannel", False)
dq_case("dynamic_quant_pertensor_smooth", "pertensor", False, smooth_len=16)
dq_case("dynamic_quant_perchannel_smooth_bf16", "perchannel", False, smooth_len=5, dtype=torch.bfloat16)
dq_case("dynamic_quant_asymmetric_pertensor", "pertensor", True)
dq_case("dynamic_quant_asymmetric_perchannel", "perchannel", True)
dq_case("dynamic_quant_pertoken_still_v2", "pertoken", False)

print(f"nn_more: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
