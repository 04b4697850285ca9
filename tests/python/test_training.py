"""The two models of models.py train on `npu` and on CPU from the same seed and initial
weights, with SGD (plain and momentum), Adam and AdamW at their defaults (foreach
implementations, so the aclnnForeach* operators) and gradient clipping; every step's loss
must agree.

Tolerance: relative 1e-5 per step (measured: at most 2e-7 over 8 steps). The emulator
computes in float32 like the CPU; only the order of additions in matmul and reductions
differs. Dropout draws different masks on the two devices, so the comparison runs use
dropout 0; `test_block_trains_with_dropout` trains with dropout 0.1 on the NPU alone and
checks the loss falls.
"""
import pytest
import torch
import torch_npu  # noqa: F401

from models import OPTIMIZERS, train

RTOL = 1e-5


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("kind", ["mlp", "block"])
def test_npu_matches_cpu(kind, optimizer):
    cpu = train(kind, "cpu", optimizer)
    npu = train(kind, "npu", optimizer)
    assert len(npu) == len(cpu)
    for step, (c, n) in enumerate(zip(cpu, npu)):
        assert abs(n - c) <= RTOL * abs(c), f"step {step}: npu loss {n}, cpu loss {c}"
    assert cpu[-1] < cpu[0]  # it trains


def test_block_trains_with_dropout():
    losses = train("block", "npu", "adamw", steps=12, dropout=0.1)
    assert losses[-1] < 0.8 * losses[0], losses
