import torch
import hccl
rank = hccl.get_rank()
world_size = hccl.get_world_size()
# 每张卡上的局部数据，形状 [256, 768]
a = torch.randn(256, 768).npu()
# 准备接收拼起来后的大张量，形状 [1024, 768]
b = torch.zeros(1024, 768).npu()
# 调用AllGather
hccl.all_gather(b, a)
# 现在b里是4张卡上a的拼接结果
print(f"rank{rank}: b shape ={b.shape}")
