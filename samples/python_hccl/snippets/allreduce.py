import torch
import hccl
# 初始化hccl通信组
rank = hccl.get_rank()
world_size = hccl.get_world_size()
# 每张卡上有一个梯度张量x
x = torch.randn(1024, 1024).npu()
# 调用AllReduce，把所有卡上的x加起来，再分发给每张卡
hccl.all_reduce(x, op=hccl.Sum)
# 现在每张卡上的x都是全局汇总后的结果
print(f"rank{rank}: x[0] ={x[0]}")
