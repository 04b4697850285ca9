"""Seed document 001, groups: the document's snippet on 8 ranks. Every rank runs every line, as
the document writes it: every rank creates both groups (create_group is called by every rank,
like torch.distributed.new_group); the members of dp_group (ranks 0-3) all-reduce x, the
members of pp_group (ranks 4-5) all-gather local_y into y. A rank outside a group that calls
into it gets a ValueError saying so, and the sample checks exactly that: each rank must fail on
precisely the lines of the groups it is not in.

The snippet uses x, y and local_y without making them; they are made here first.

    npu-emu run -n 8 python3 groups.py
"""

import torch

import hccl
import snippet

rank = hccl.get_rank()
assert hccl.get_world_size() == 8, "the document's groups need 8 ranks: npu-emu run -n 8"
ns = {
    "x": torch.full((1024,), float(rank + 1)).npu(),
    "local_y": torch.full((256,), float(rank)).npu(),
    "y": torch.zeros(512).npu(),
}
refused = []


def not_a_member(line, e):
    if isinstance(e, ValueError) and "is not a member of group" in str(e):
        refused.append(line)
        return True
    return False


snippet.run("groups", ns, on_error=not_a_member)

x, y = ns["x"].cpu(), ns["y"].cpu()
if rank < 4:
    assert (x == 1 + 2 + 3 + 4).all(), f"rank {rank}: x is not the dp_group sum"
else:
    assert (x == rank + 1).all(), f"rank {rank}: x changed though rank {rank} is not in dp_group"
if rank in (4, 5):
    assert (y[:256] == 4).all() and (y[256:] == 5).all(), f"rank {rank}: y is not ranks 4-5's local_y"
else:
    assert (y == 0).all(), f"rank {rank}: y changed though rank {rank} is not in pp_group"
expect = ([] if rank < 4 else ["hccl.all_reduce(x, op=hccl.Sum, group=dp_group)"]) + \
         ([] if rank in (4, 5) else ["hccl.all_gather(y, local_y, group=pp_group)"])
assert refused == expect, f"rank {rank}: refused {refused}, expected {expect}"
print(f"rank {rank}: PASS (dp_group {'member' if rank < 4 else 'refused'}, "
      f"pp_group {'member' if rank in (4, 5) else 'refused'})")
