"""Calls a torch operator npu-emu has no operator for (torch.histc: aclnnHistc is not in
npu-emu's libopapi.so). The program must fail with a Python exception whose message names
the operator, not crash."""
import torch
import torch_npu  # noqa: F401

x = torch.rand(100).npu()
h = torch.histc(x, bins=10, min=0, max=1)
print(h.cpu())
print("missing_op: unexpectedly computed")
