"""Calls a torch operator npu-emu has no operator for (F.multilabel_margin_loss:
aclnnMultilabelMarginLoss is not in npu-emu's libopapi.so, so torch_npu falls back to the aclop
"MultilabelMarginLoss"). The program must fail with a Python exception whose message names the
operator, not crash."""
import torch
import torch_npu  # noqa: F401
import torch.nn.functional as F

x = torch.randn(3, 4).npu()
y = torch.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]]).npu()
c = F.multilabel_margin_loss(x, y)
print(c.cpu())
print("missing_op: unexpectedly computed")
