"""A host (CPU) 0-dim tensor plus a device tensor: with aclnnAddV3 exported, torch_npu's
add (AddKernelNpuOpApi.cpp) sends `cpu_scalar + alpha * npu_tensor` to aclnnAddV3 instead of
copying the scalar to the device for aclnnAdd. Checked against CPU torch over the dtypes
torch_npu sends (every non-bool host scalar, every numeric device tensor), with alpha,
type promotion (int tensor + float scalar), non-contiguous tensors, `out=` and autograd.
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

print(f"nn_more: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
