"""my_ascend_ops_plugin: loads the compiled operator library (built by this sample's
Makefile), which registers torch.ops.my_ascend_ops.custom_linear for NPU tensors."""
import os

import torch
import torch_npu  # noqa: F401  (the NPU device must exist before the library registers for it)

torch.ops.load_library(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libmy_ascend_ops.so"))


def set_weight(w):
    """Give this process's slice of the layer's weight ([n, k], float32, on its NPU)."""
    torch.ops.my_ascend_ops.set_weight(w)
