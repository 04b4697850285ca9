"""Fixtures of the `hccl` module's tests.

``ranks/`` holds tests that every rank of a job runs, in the same order, as real collective
calls: ``npu-emu run -n N python -m pytest tests/python/hccl/ranks``. ``jobs/`` holds tests
that run in one process and start jobs (launchers, failures, bootstrap errors). ``tests/tests/
python_hccl.rs`` runs both through ``make test``.

Tests on NPU tensors (``place == "npu"``) need torch and torch_npu; without them they are
skipped, unless ``HCCL_TEST_REQUIRE_NPU=1`` makes that a failure (the Rust runner sets it when
the environment has torch_npu).
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402

PLACES = ["host", "dlpack", "torch_cpu", "npu"]


def need(place):
    """Skip (on every rank alike) a place this environment cannot make."""
    if place in ("host", "dlpack"):
        return
    if common.torch_or_none() is None:
        if place == "npu" and os.environ.get("HCCL_TEST_REQUIRE_NPU") == "1":
            pytest.fail("HCCL_TEST_REQUIRE_NPU=1 but torch does not import")
        pytest.skip("torch is not installed")
    if place == "npu" and not common.npu_works():
        if os.environ.get("HCCL_TEST_REQUIRE_NPU") == "1":
            pytest.fail(f"HCCL_TEST_REQUIRE_NPU=1 but NPU tensors do not work: {common._NPU!r}")
        pytest.skip(f"torch_npu does not work here: {common._NPU!r}")


@pytest.fixture(scope="session")
def hccl():
    import hccl as m
    m.init_comm_group()
    return m


@pytest.fixture(scope="session")
def rank(hccl):
    return hccl.get_rank()


@pytest.fixture(scope="session")
def size(hccl):
    return hccl.get_world_size()
