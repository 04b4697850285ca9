import hccl
# 初始化默认通信组（所有卡）
hccl.init_comm_group()
# 创建一个子通信组，比如"数据并行组"，包含卡0/1/2/3
dp_group = hccl.create_group(["rank0", "rank1", "rank2", "rank3"])
# 在dp_group里做AllReduce
hccl.all_reduce(x, op=hccl.Sum, group=dp_group)
# 再创建一个"流水线并行组"，包含卡4/5
pp_group = hccl.create_group(["rank4", "rank5"])
# 在pp_group里做AllGather（传递激活值）
hccl.all_gather(y, local_y, group=pp_group)
