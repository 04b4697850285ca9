"""Last (file order): destroy() of everything, then a new world built by the next call."""

import numpy as np
import pytest


def test_destroy_then_a_new_world(hccl, rank, size):
    g = hccl.create_group(list(range(size)))
    hccl.destroy()
    assert not hccl.is_initialized()
    with pytest.raises(ValueError, match="destroyed"):
        hccl.all_reduce(np.zeros(2, dtype=np.float32), group=g)
    x = np.full(3, rank + 1, dtype=np.int32)
    hccl.all_reduce(x)  # builds a new world from the environment
    assert hccl.is_initialized()
    assert (x == size * (size + 1) // 2).all()
    assert hccl.get_rank() == rank and hccl.get_world_size() == size
    hccl.init_comm_group()  # idempotent
    hccl.destroy()
    hccl.init_comm_group()
    assert hccl.get_world_size() == size
