"""Calls a torch operator npu-emu has no operator for (F.ctc_loss: aclnnCtcLoss is not in
npu-emu's libopapi.so, so torch_npu falls back to the aclop "CTCLossV2"). The program must
fail with a Python exception whose message names the operator, not crash."""
import torch
import torch_npu  # noqa: F401
import torch.nn.functional as F

T, N, C, S = 6, 2, 5, 3
log_probs = torch.randn(T, N, C).log_softmax(2).npu()
targets = torch.randint(1, C, (N, S)).npu()
c = F.ctc_loss(log_probs, targets, [T, T], [S, S])
print(c.cpu())
print("missing_op: unexpectedly computed")
