import torch
import hccl
rank = hccl.get_rank()
world_size = hccl.get_world_size()
# 每张卡上的梯度，形状 [1024, 1024]
g = torch.randn(1024, 1024).npu()
# 准备接收"自己那份"汇总结果，形状 [1024 // world_size, 1024]
# 假设world_size=4，那out的形状就是 [256, 1024]
out = torch.zeros(1024 // world_size, 1024).npu()
# ReduceScatter：汇总梯度，但只把第rank片发给当前卡
hccl.reduce_scatter(out, g, op=hccl.Sum)
print(f"rank{rank}: 拿到了第{rank}片汇总梯度，形状{out.shape}")
