"""Calls a torch operator npu-emu has no operator for (F.avg_pool3d: aclnnAvgPool3d is not in
npu-emu's libopapi.so, so torch_npu falls back to the aclop "AvgPool3D"). The program must
fail with a Python exception whose message names the operator, not crash."""
import torch
import torch_npu  # noqa: F401
import torch.nn.functional as F

a = torch.rand(1, 2, 4, 4, 4).npu()
c = F.avg_pool3d(a, 2)
print(c.cpu())
print("missing_op: unexpectedly computed")
