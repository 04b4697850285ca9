"""A rank that dies in the middle of training: the others must fail with a clear error.

Every rank runs training steps that all-reduce a gradient over HCCL. At step 3 the last rank
kills itself (SIGKILL: no clean-up, as when a node loses a process). The survivors' next
all-reduce cannot complete; they must end with an error that names the dead rank, not hang.
Prints "step S" per finished step and "rank R: error: ..." when a survivor sees the failure.
"""
import os
import signal
import sys

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

rank = int(os.environ["RANK"])
ws = int(os.environ["WORLD_SIZE"])
torch.npu.set_device(int(os.environ.get("LOCAL_RANK", rank)))
dist.init_process_group("hccl")
w = torch.ones(1024).npu()
try:
    for step in range(100):
        if step == 3 and rank == ws - 1:
            print(f"rank {rank}: dying at step {step}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        g = torch.full((1024,), float(rank + 1)).npu()
        dist.all_reduce(g)
        w -= 0.01 * g
        loss = w.sum().item()  # waits for the step, as a training loop's logging does
        print(f"rank {rank}: step {step} loss {loss:.1f}", flush=True)
except Exception as e:  # the failure surfaces as a Python exception on the survivors
    print(f"rank {rank}: error: {e}", flush=True)
    sys.exit(3)
print(f"rank {rank}: finished without noticing the dead rank", flush=True)
sys.exit(0)
