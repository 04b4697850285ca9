"""Async handles: wait() with and without a timeout, is_completed(), hccl.wait(), results of
host arrays landing at wait(), and a dropped handle still finishing its call."""

import os
import tempfile
import time

import numpy as np
import pytest

from common import make, read
from conftest import PLACES, need


@pytest.mark.parametrize("place", PLACES)
def test_not_complete_until_the_peer_receives(hccl, rank, size, place):
    """A send completes when its receive is posted: until then is_completed() is False and
    wait(timeout) raises HCCL_E_TIMEOUT, and the call keeps running. (npu-emu returns from a
    collective call only once every rank has made it, so a send is what can be seen pending.)"""
    need(place)
    if size == 1:
        pytest.skip("needs a peer to wait for")
    x = make(place, np.full(8, rank + 1.0), "float32")
    # Rank 1 receives only after rank 0 has seen its send pending (a file says so: no timing).
    go = os.path.join(tempfile.gettempdir(), f"hccl-test-go-{os.environ.get('NPU_EMU_JOB_ID', os.getppid())}-{place}")
    if rank == 0:
        w = hccl.send_async(x, dst=1)
        assert not w.is_completed(), "the send completed before rank 1 received"
        with pytest.raises(hccl.HcclError) as e:
            w.wait(timeout=0.05)
        assert e.value.name == "HCCL_E_TIMEOUT" and e.value.code == 9
        assert "did not complete within 0.05 s; it is still running" in str(e.value)
        assert "running" in repr(w)
        open(go, "w").close()
        w.wait()  # now it can
        assert w.is_completed()
        assert repr(w) == "<hccl.Work done>"
        w.wait()  # again: nothing to do
    elif rank == 1:
        deadline = time.time() + 60
        while not os.path.exists(go) and time.time() < deadline:
            time.sleep(0.01)
        os.unlink(go)
        w = hccl.recv_async(x, src=0)
        hccl.wait(w, timeout=60)
        assert (read(x) == 1).all()
    hccl.barrier()


def test_host_result_lands_at_wait(hccl, rank, size):
    if size == 1:
        pytest.skip("needs a peer")
    x = np.full(4, rank + 1.0, dtype=np.float32)
    if rank == 0:
        w = hccl.all_reduce_async(x)
        assert (x == 1).all(), "a host array is written when the call is waited for"
        w.wait()
    else:
        time.sleep(0.3)
        hccl.all_reduce(x)
    assert (x == size * (size + 1) / 2).all()


def test_many_in_flight(hccl, rank, size):
    xs = [np.full(16, rank + i, dtype=np.int64) for i in range(10)]
    ws = [hccl.all_reduce_async(x, op=hccl.Max) for x in xs]
    hccl.wait(ws)
    for i, x in enumerate(xs):
        assert (x == size - 1 + i).all()


def test_dropped_handle_still_finishes(hccl, rank, size):
    x = np.full(4, 2, dtype=np.int32)
    w = hccl.all_reduce_async(x)
    del w
    assert (x == 2 * size).all()


def test_async_then_sync_keep_call_order(hccl, rank, size):
    """An async call on one stream and a sync call after it: same order on every rank."""
    a = np.full(1000, rank, dtype=np.float32)
    b = np.full(10, 1, dtype=np.float32)
    w = hccl.all_reduce_async(a, op=hccl.Max)
    hccl.all_reduce(b)
    w.wait()
    assert (a == size - 1).all() and (b == size).all()


def test_mixed_npu_and_host_order(hccl, rank, size):
    need("npu")
    import torch
    t = torch.full((64,), float(rank)).npu()
    h = np.full(64, 1.0, dtype=np.float32)
    w = hccl.all_reduce_async(h)  # this module's stream
    hccl.all_reduce(t)  # torch_npu's current stream: waits for the call before it
    w.wait()
    assert (t.cpu() == sum(range(size))).all() and (h == size).all()
