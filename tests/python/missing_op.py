"""Calls a torch operator npu-emu has no operator for (torch.linalg.cross: aclnnLinalgCross
is not in npu-emu's libopapi.so, so torch_npu falls back to the aclop "Cross"). The program
must fail with a Python exception whose message names the operator, not crash."""
import torch
import torch_npu  # noqa: F401

a = torch.rand(4, 3).npu()
b = torch.rand(4, 3).npu()
c = torch.linalg.cross(a, b)
print(c.cpu())
print("missing_op: unexpectedly computed")
