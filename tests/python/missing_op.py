"""Calls a torch operator npu-emu has no operator for (torch.renorm: aclnnRenorm is not in
npu-emu's libopapi.so, so torch_npu falls back to the aclop "Renorm"). The program must fail
with a Python exception whose message names the operator, not crash."""
import torch
import torch_npu  # noqa: F401

a = torch.rand(4, 3).npu()
c = torch.renorm(a, 2, 0, 0.5)
print(c.cpu())
print("missing_op: unexpectedly computed")
