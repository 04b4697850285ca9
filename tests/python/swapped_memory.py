"""torch_npu.empty_with_swapped_memory: NPU tensor storage in host memory registered with
aclrtHostRegister (torch_npu's NPUSwappedMemoryAllocator: aclrtMallocHostWithCfg with
ACL_RT_MEM_ATTR_VA_FLAG, which npu-emu answers with ACL_ERROR_RT_FEATURE_NOT_SUPPORT so the
allocator falls back to aclrtMallocHost, then aclrtHostRegister). The storage must work as
device memory for operators and copies, and tensors freed must unregister cleanly."""
import gc

import torch
import torch_npu

dev = torch.device("npu:0")
t = torch_npu.empty_with_swapped_memory([2, 2], dtype=torch.float32, device=dev)
assert t.device.type == "npu", t.device
t.fill_(3.14)
out = torch.empty_like(t).fill_(1).mul_(t)
got = out.cpu()
assert torch.allclose(got, torch.full((2, 2), 3.14)), got
print("swapped: fill + mul", got.tolist())

# Larger than a page, written by a copy from an ordinary NPU tensor and read by operators.
big = torch_npu.empty_with_swapped_memory([3000], dtype=torch.float32, device=dev)
src = torch.arange(3000, dtype=torch.float32)
big.copy_(src.npu())
assert torch.equal(big.cpu(), src), "copy into swapped memory"
s = (big * 2 + 1).sum().item()
assert s == float((src * 2 + 1).sum()), s
big.add_(1)
assert torch.equal(big.cpu(), src + 1), "in-place add on swapped memory"
print("swapped: copy + ops on", big.numel(), "elements")

# Free them (aclrtHostUnregister + aclrtFreeHost), then allocate again.
del t, out, big
gc.collect()
torch.npu.synchronize()
again = torch_npu.empty_with_swapped_memory([4], dtype=torch.float32, device=dev)
again.fill_(2.0)
assert again.cpu().tolist() == [2.0] * 4
print("swapped memory ok")
