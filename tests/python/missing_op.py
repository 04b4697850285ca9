"""Calls an operator npu-emu has no operator for: torch_npu.npu_alloc_float_status, which
op-plugin implements only as the aclop "NPUAllocFloatStatus" (the float-status register of
the 910A, which the emulated 910B does not model). The program must fail with a Python
exception whose message names the operator, not crash.

First it runs torch.ge with a CPU scalar as its first operand: libopapi.so (like CANN's) has no
aclnnLessScalar, so torch_npu falls back to acl_op::le, the aclop "LessEqual", which npu-emu
models; the result must be right, and the later unsupported operator must not be blamed on
that served fallback."""
import torch
import torch_npu

x = torch.tensor([0.1, 0.5, 0.9])
got = torch.ge(torch.tensor(0.5), x.npu()).cpu()
assert got.tolist() == [True, True, False], got
print("missing_op: ge with a CPU scalar first:", got.tolist())

y = torch_npu.npu_alloc_float_status(x.npu())
print(y.cpu())
print("missing_op: unexpectedly computed")
