"""torch_npu on npu-emu without operators: import, devices, tensors to and from every device.

Run by tests/tests/torch_npu.rs after `source set_env.sh` of the install tree.
"""
import os

import pytest
import torch
import torch_npu  # noqa: F401  (also loaded by torch's backend autoload)

from npu_ops import require

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int8,
          torch.uint8, torch.bool, torch.float64]


def test_devices():
    assert torch.npu.is_available()
    assert torch.npu.device_count() == 8
    assert torch.npu.get_device_name(0) == "Ascend910B1"
    torch.npu.set_device(3)
    assert torch.npu.current_device() == 3
    torch.npu.set_device(0)


def sample(dtype, n=37):
    g = torch.Generator().manual_seed(n)
    if dtype == torch.bool:
        return torch.rand(n, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(n, generator=g) * 100).to(dtype)
    return torch.randint(-100 if dtype != torch.uint8 else 0, 100, (n,), generator=g).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip_on_every_device(dtype):
    x = sample(dtype)
    for d in range(torch.npu.device_count()):
        y = x.to(f"npu:{d}")
        assert y.device == torch.device("npu", d)
        assert y.dtype == dtype
        assert torch.equal(y.cpu(), x)


def test_shapes_and_non_contiguous_sources():
    require("aclnnInplaceCopy")  # a non-contiguous source is copied on the device
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    assert torch.equal(x.npu().cpu(), x)
    t = x.transpose(0, 2)  # non-contiguous on the host: made contiguous before the copy
    assert torch.equal(t.npu().cpu(), t)
    assert torch.equal(torch.empty(0).npu().cpu(), torch.empty(0))
    big = torch.arange(1 << 20, dtype=torch.float32)
    assert torch.equal(big.npu().cpu(), big)


def test_item_and_copy_into_host_tensor():
    x = torch.tensor([3.5]).npu()
    assert x.item() == 3.5
    h = torch.zeros(1)
    h.copy_(x)
    assert h.item() == 3.5


def test_memory_is_accounted():
    require("aclnnInplaceZero")  # torch.zeros on the device
    torch.npu.synchronize()
    before = torch.npu.memory_allocated(0)
    x = torch.zeros(1 << 18).npu()  # 1 MiB
    assert torch.npu.memory_allocated(0) >= before + (1 << 20)
    del x
    torch.npu.empty_cache()
    assert torch.npu.memory_allocated(0) == before


def test_streams_and_events():
    s = torch.npu.Stream()
    x = torch.arange(1000, dtype=torch.float32)
    with torch.npu.stream(s):
        y = x.to("npu", non_blocking=True)
    e = torch.npu.Event(enable_timing=True)
    e.record(s)
    e.synchronize()
    assert e.query()
    s.synchronize()
    assert torch.equal(y.cpu(), x)


def test_versions_come_from_the_install():
    home = os.environ["ASCEND_HOME_PATH"]
    assert os.path.isdir(os.environ["ASCEND_OPP_PATH"])
    assert os.path.isdir(os.path.join(home, "runtime"))
    assert os.path.isdir(os.path.join(home, "compiler"))
