"""Cases found by probe30a (PyTorch scripts written from the PyTorch documentation and run
through torch_npu against CPU torch) that failed on npu-emu and were fixed:

- `linalg.vector_norm` / `norm` / `pairwise_distance` / `triplet_margin_loss` with a `p` other
  than 0, 1, 2, 3, +-inf: torch_npu runs the aclop LpNormReduceV2 + LpNormUpdateV2 pair, which
  npu-emu did not model (the task failed and the process's queue with it).
- `clamp` / `clamp_min` / `clamp_max` of an integer tensor with floating bounds: torch promotes
  the result to float (`torch.tensor([1, 5, 9]).clamp(2.5, 7.5)` is `[2.5, 5., 7.5]`) and
  torch_npu calls aclnnClamp with the integer self and a float out; the bounds were truncated
  to integers first (`[2., 5., 7.]`).

Adam(fused=True) through aclnnFusedAdam needs an Ascend 950 and is in fused_adam.py.
"""
import pytest
import torch
import torch_npu  # noqa: F401

INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


@pytest.mark.parametrize("dtype", INTS, ids=[str(d)[6:] for d in INTS])
@pytest.mark.parametrize("bounds", [
    dict(min=2.5, max=7.5), dict(min=2.5), dict(max=7.5), dict(min=-0.5, max=0.25),
    dict(min=2, max=7),
], ids=["both", "min", "max", "fractions", "integral"])
def test_clamp_of_an_integer_tensor_with_scalar_bounds(dtype, bounds):
    x = torch.tensor([0, 1, 5, 9, 3], dtype=dtype)
    want = x.clamp(**bounds)
    got = x.npu().clamp(**bounds).cpu()
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_clamp_min_and_max_functions_promote_like_cpu():
    x = torch.tensor([[1, 5], [9, -3]])
    for f in [lambda t: torch.clamp_min(t, 0.5), lambda t: torch.clamp_max(t, 4.5),
              lambda t: torch.clip(t, -2.5, 6.5)]:
        want, got = f(x), f(x.npu()).cpu()
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_clamp_of_a_bool_tensor_with_float_bounds():
    x = torch.tensor([True, False, True])
    want, got = x.clamp(0.25, 0.75), x.npu().clamp(0.25, 0.75).cpu()
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    torch.testing.assert_close(got, want, rtol=0, atol=0)


# torch_npu (CANN before 9.0) runs a vector norm whose p is not 0, 1, 2, 3 or +-inf as the aclop
# pair LpNormReduceV2 + LpNormUpdateV2, which npu-emu had no model of (the task failed).
@pytest.mark.parametrize("p", [1.5, 4.0, 0.5, -1.5], ids=["1.5", "4", "0.5", "-1.5"])
def test_vector_norm_with_an_unusual_p(p):
    torch.manual_seed(0)
    x = torch.randn(4, 6)
    for f in [lambda t: torch.linalg.vector_norm(t, p, dim=1),
              lambda t: torch.linalg.vector_norm(t, p, dim=(0, 1), keepdim=True),
              lambda t: torch.norm(t, p=p, dim=0, keepdim=True),
              lambda t: torch.linalg.vector_norm(t, p)]:
        torch.testing.assert_close(f(x.npu()).cpu(), f(x), rtol=1e-5, atol=1e-5)


def test_norm_with_an_unusual_p_in_half_and_its_gradient():
    torch.manual_seed(0)
    x = torch.randn(3, 5)
    got = torch.linalg.vector_norm(x.half().npu(), 1.5, dim=1).cpu()
    torch.testing.assert_close(got, torch.linalg.vector_norm(x.half(), 1.5, dim=1), rtol=2e-3, atol=2e-3)
    xn, xc = x.npu().requires_grad_(), x.clone().requires_grad_()
    torch.norm(xn, p=3.5, dim=1).sum().backward()
    torch.norm(xc, p=3.5, dim=1).sum().backward()
    torch.testing.assert_close(xn.grad.cpu(), xc.grad, rtol=1e-4, atol=1e-5)


def test_losses_and_distances_with_an_unusual_p():
    torch.manual_seed(0)
    a, b, c = torch.randn(6, 5), torch.randn(6, 5), torch.randn(6, 5)
    F = torch.nn.functional
    for f in [lambda x, y, z: F.pairwise_distance(x, y, p=1.5),
              lambda x, y, z: F.triplet_margin_loss(x, y, z, margin=0.5, p=1.5, swap=True),
              lambda x, y, z: F.normalize(x, p=4.0, dim=1)]:
        got = f(a.npu(), b.npu(), c.npu()).cpu()
        torch.testing.assert_close(got, f(a, b, c), rtol=1e-5, atol=1e-5)
