"""Bad arguments: ValueError or TypeError naming the call and the argument, raised before
anything reaches HCCL (so every rank can make the same mistake without a collective hanging)."""

import numpy as np
import pytest

import common
from conftest import need


def test_not_a_tensor(hccl):
    with pytest.raises(TypeError, match=r"all_reduce: tensor must be a torch tensor .* got int"):
        hccl.all_reduce(5)
    with pytest.raises(TypeError, match=r"all_gather: input must be .* got str"):
        hccl.all_gather(np.zeros(4), "abc")


def test_unsupported_dtype(hccl):
    with pytest.raises(ValueError, match=r"all_reduce: tensor has element format 'Zf'.*supported: int8"):
        hccl.all_reduce(np.zeros(4, dtype=np.complex64))
    with pytest.raises(ValueError, match=r"broadcast: tensor has element format '>i'"):
        hccl.broadcast(np.zeros(4, dtype=">i4"))


def test_bool(hccl, size):
    with pytest.raises(ValueError, match=r"all_reduce: tensor is a bool tensor, which HCCL cannot reduce"):
        hccl.all_reduce(np.zeros(4, dtype=bool))
    x = np.array([True, False, True])
    hccl.broadcast(x, root=0)  # moving bools is fine
    assert list(x) == [True, False, True]


def test_not_contiguous(hccl):
    x = np.zeros(8, dtype=np.float32)
    with pytest.raises(ValueError, match=r"all_reduce: tensor is not contiguous .*ascontiguousarray"):
        hccl.all_reduce(x[::2])
    m = np.zeros((4, 4), dtype=np.int32)
    with pytest.raises(ValueError, match="reduce_scatter: input is not contiguous"):
        hccl.reduce_scatter(np.zeros(4, dtype=np.int32), m.T)
    d = common.DLArray(np.zeros(8, dtype=np.float32), 2, 32, strides=[2], shape=[4])
    with pytest.raises(ValueError, match=r"all_reduce: tensor is not contiguous \(shape \[4\], strides \[2\] elements\)"):
        hccl.all_reduce(d)


def test_read_only_output(hccl):
    x = np.zeros(4, dtype=np.float32)
    x.flags.writeable = False
    with pytest.raises(ValueError, match=r"all_reduce: tensor is read-only, but all_reduce writes its result into it"):
        hccl.all_reduce(x)
    with pytest.raises(ValueError, match=r"all_gather: output is read-only"):
        hccl.all_gather(bytes(8), bytearray(8))
    ro = common.DLArray(np.zeros(4, dtype=np.float32), 2, 32, versioned=True, readonly=True)
    with pytest.raises(ValueError, match="recv: tensor is read-only"):
        hccl.recv(ro, src=0)
    # an input may be read-only
    out = np.zeros(4 * hccl.get_world_size(), dtype=np.float32)
    hccl.all_gather(out, x)


def test_sizes(hccl, size):
    a = np.zeros(4, dtype=np.float32)
    with pytest.raises(ValueError, match=rf"all_gather: output has 5 elements .* so output must have {4 * size}"):
        hccl.all_gather(np.zeros(5, dtype=np.float32), a)
    with pytest.raises(ValueError, match=r"all_gather: output has dtype float64 but input has dtype float32"):
        hccl.all_gather(np.zeros(4 * size), a)
    with pytest.raises(ValueError, match=rf"reduce_scatter: output has 3 elements .* must have 4"):
        hccl.reduce_scatter(np.zeros(3, dtype=np.float32), np.zeros(4 * size, dtype=np.float32))
    if size > 1:
        with pytest.raises(ValueError, match=rf"reduce_scatter: input has {4 * size + 1} elements, which do not split evenly"):
            hccl.reduce_scatter(np.zeros(4, dtype=np.float32), np.zeros(4 * size + 1, dtype=np.float32))
        with pytest.raises(ValueError, match=rf"all_to_all: input has {size + 1} elements, which do not split evenly"):
            hccl.all_to_all(np.zeros(size + 1, dtype=np.float32), np.zeros(size + 1, dtype=np.float32))
    with pytest.raises(ValueError, match=r"all_to_all: output has 1 elements"):
        hccl.all_to_all(np.zeros(1, dtype=np.float32), np.zeros(2 * size, dtype=np.float32))


def test_ops_and_ranks(hccl, rank, size):
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(ValueError, match=r"all_reduce: op=7 is not a reduce operation; use hccl.Sum"):
        hccl.all_reduce(x, op=7)
    with pytest.raises(ValueError, match=r"reduce_scatter: op='sum' is not a reduce operation"):
        hccl.reduce_scatter(x, np.zeros(4 * size, dtype=np.float32), op="sum")
    with pytest.raises(ValueError, match=rf"broadcast: root={size} is not a rank of the world communicator, whose ranks are 0..{size - 1}"):
        hccl.broadcast(x, root=size)
    with pytest.raises(ValueError, match=rf"reduce: root={size + 3} is not a rank"):
        hccl.reduce(x, root=size + 3)
    with pytest.raises(ValueError, match=rf"send: dst={rank} is this process's own rank"):
        hccl.send(x, dst=rank)
    with pytest.raises(ValueError, match=rf"recv: src={size} is not a rank"):
        hccl.recv(x, src=size)
    with pytest.raises(TypeError):
        hccl.all_reduce(x, group="world")
    with pytest.raises(OverflowError):
        hccl.broadcast(x, root=-1)


def test_reduce_op_values(hccl):
    assert [int(op) for op in (hccl.Sum, hccl.Prod, hccl.Max, hccl.Min)] == [0, 1, 2, 3]
    assert hccl.Sum == hccl.ReduceOp.Sum and hccl.Max != hccl.Min
    assert "Sum" in repr(hccl.Sum)
    # torch.distributed's spelling
    assert (hccl.ReduceOp.SUM, hccl.ReduceOp.PROD, hccl.ReduceOp.MAX, hccl.ReduceOp.MIN) == \
        (hccl.Sum, hccl.Prod, hccl.Max, hccl.Min)


def test_peer_is_required(hccl):
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'dst'"):
        hccl.send(np.zeros(2, dtype=np.float32))
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'src'"):
        hccl.recv_async(np.zeros(2, dtype=np.float32))


def test_wait_arguments(hccl):
    w = hccl.all_reduce_async(np.zeros(2, dtype=np.float32))
    with pytest.raises(ValueError, match=r"wait: timeout=-1 must be a non-negative number"):
        w.wait(timeout=-1)
    w.wait()
    with pytest.raises(TypeError, match=r"wait: handle must be what an \*_async call returned"):
        hccl.wait(5)


def test_npu_tensor_checks(hccl, rank):
    need("npu")
    import torch
    t = torch.zeros(4, 4).npu()
    with pytest.raises(ValueError, match=r"all_reduce: tensor is not contiguous \(shape \[4, 4\], stride \(1, 4\)\); pass tensor.contiguous\(\)"):
        hccl.all_reduce(t.t())
    with pytest.raises(ValueError, match=r"all_reduce: tensor has dtype torch.complex64, which HCCL does not support"):
        hccl.all_reduce(torch.zeros(2, dtype=torch.complex64).npu())
    with pytest.raises(ValueError, match=r"all_gather: output has dtype float16 but input has dtype float32"):
        hccl.all_gather(torch.zeros(4 * hccl.get_world_size(), dtype=torch.float16).npu(), torch.zeros(4).npu())
    other = (hccl.get_device() + 1) % torch.npu.device_count()
    if other != hccl.get_device():
        with pytest.raises(ValueError, match=rf"all_reduce: tensor is on npu:{other}, but this process's communicator is on npu:{hccl.get_device()}"):
            hccl.all_reduce(torch.zeros(4).to(f"npu:{other}"))
