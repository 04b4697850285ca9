import torch
import torch.distributed as dist
import my_ascend_ops_plugin # 引入我们编译好的算子
class MyDistributedLayer(torch.nn.Module):
    def forward(self, x):
        # 1. 拿到当前卡的数据切片 (假设 x 已经按卡切分好了)
        x_local = x.to("npu")
        # 2. 调用 Ascend C 自定义算子进行本地计算
        # 这一步只算出了结果的一部分
        y_partial = torch.ops.my_ascend_ops.custom_linear(x_local)
        # 3. 手动召唤 HCCL
        # 在 PyTorch 层直接调用 dist.all_reduce
        # 底层会自动路由到 HCCL 接口
        dist.all_reduce(y_partial, op=dist.ReduceOp.SUM)
        return y_partial
