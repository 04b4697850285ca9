"""Calls a torch operator npu-emu has no operator for (torch.linalg.qr: aclnnLinalgQr is not
in npu-emu's libopapi.so, so torch_npu falls back to the aclop "Qr"). The program must fail
with a Python exception whose message names the operator, not crash."""
import torch
import torch_npu  # noqa: F401

a = torch.rand(4, 3).npu()
q, r = torch.linalg.qr(a)
print(q.cpu(), r.cpu())
print("missing_op: unexpectedly computed")
