"""Calls an operator npu-emu has no operator for (torch_npu.npu_deep_norm: aclnnDeepNorm is not
in npu-emu's libopapi.so, so torch_npu falls back to the aclop "DeepNorm"). The program must fail
with a Python exception whose message names the operator, not crash."""
import torch
import torch_npu

x = torch.randn(2, 8).npu()
gx = torch.randn(2, 8).npu()
beta = torch.zeros(8).npu()
gamma = torch.ones(8).npu()
mean, rstd, y = torch_npu.npu_deep_norm(x, gx, beta, gamma, alpha=0.3, epsilon=1e-6)
print(y.cpu())
print("missing_op: unexpectedly computed")
