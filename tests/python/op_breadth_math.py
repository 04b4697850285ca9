"""The torch operations that reach the aclnn operators of `ops/math.rs` through torch_npu
(signbit -> aclnnSignbit, gcd -> aclnnGcd, isin with a scalar -> aclnnIsInTensorScalar /
aclnnIsInScalarTensor, addr / addr_ -> aclnnAddr / aclnnInplaceAddr, cdist ->
aclnnCdist, << / >> -> aclnnLeftShift / aclnnLeftShifts / aclnnRightShift, triangular_solve / linalg.solve_triangular -> aclnnTriangularSolve,
max_unpool2d/3d -> aclnnMaxUnpool2d/3d, linalg.svd / svdvals -> aclnnSvd, compared by
reconstruction and orthonormality since singular vectors are unique only up to sign), each against
CPU torch, plus diag / diagflat (composite in torch_npu 2.9).
Prints PASS/FAIL per case and exits 1 when any case fails.
"""
import sys

import torch
import torch_npu  # noqa: F401

D = "npu"
FAILED = []
torch.manual_seed(0)


def chk(name, f, *args, rtol=1e-4, atol=1e-5):
    try:
        rc = f(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        rn = f(*[a.to(D) if isinstance(a, torch.Tensor) else a for a in args])
        assert rn.device.type == D, f"result on {rn.device}"
        torch.testing.assert_close(rn.cpu(), rc, rtol=rtol, atol=atol, equal_nan=True)
        print("PASS", name)
    except Exception as e:
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


x = torch.tensor([-1.5, 0.0, -0.0, float("inf"), -float("inf"), float("nan"), 2.0])
chk("signbit", torch.signbit, x)
chk("signbit_f16", torch.signbit, x.half())
chk("signbit_int", torch.signbit, torch.randint(-5, 5, (3, 4), dtype=torch.int32))
chk("gcd", torch.gcd, torch.randint(-60, 60, (3, 4)), torch.randint(-60, 60, (4,)))
chk("gcd_int32", torch.gcd, torch.randint(-60, 60, (5,), dtype=torch.int32), torch.tensor([0, 12, -18, 7, 0], dtype=torch.int32))
t = torch.tensor([[1.0, 2.5, 3.0], [2.5, float("nan"), 0.0]])
chk("isin_tensor_scalar", lambda a: torch.isin(a, 2.5), t)
chk("isin_tensor_scalar_invert", lambda a: torch.isin(a, 2.5, invert=True), t)
chk("isin_scalar_tensor", lambda a: torch.isin(3, a), torch.tensor([[1, 2], [3, 4]]))
chk("isin_scalar_tensor_absent", lambda a: torch.isin(9, a, invert=True), torch.tensor([[1, 2], [3, 4]]))
chk("addr", lambda s, a, b: torch.addr(s, a, b, beta=0.5, alpha=2.0), torch.randn(3, 4), torch.randn(3), torch.randn(4))
chk("addr_broadcast", lambda s, a, b: torch.addr(s, a, b), torch.randn(4), torch.randn(3), torch.randn(4))
chk("addr_int", lambda s, a, b: torch.addr(s, a, b, beta=2, alpha=-3), torch.randint(-9, 9, (2, 3)), torch.randint(-9, 9, (2,)), torch.randint(-9, 9, (3,)))
chk("addr_", lambda s, a, b: s.addr_(a, b, beta=1.5, alpha=0.5), torch.randn(2, 5), torch.randn(2), torch.randn(5))
for p in (2.0, 1.0, 0.0, 3.0, float("inf")):
    chk(f"cdist_p{p:g}", lambda a, b, p=p: torch.cdist(a, b, p=p), torch.randn(2, 3, 4), torch.randn(2, 5, 4))
chk("cdist_broadcast", lambda a, b: torch.cdist(a, b), torch.randn(3, 4), torch.randn(2, 5, 4))
xi = torch.randint(-100, 100, (3, 4), dtype=torch.int32)
n = torch.tensor([0, 1, 5, 31], dtype=torch.int32)
chk("lshift", lambda a, b: a << b, xi, n)
chk("rshift", lambda a, b: a >> b, xi, n)
chk("lshift_scalar", lambda a: a << 3, xi.to(torch.int8))
chk("rshift_scalar", lambda a: a >> 2, xi)
chk("ilshift", lambda a, b: a.__ilshift__(b), xi.clone(), n)
chk("rshift_uint8", lambda a, b: a >> b, torch.randint(0, 255, (6,), dtype=torch.uint8), torch.tensor([0, 1, 2, 7, 3, 4], dtype=torch.uint8))
A = torch.randn(2, 4, 4) + 4 * torch.eye(4)
Bm = torch.randn(2, 4, 3)
chk("triangular_solve", lambda b, a: torch.triangular_solve(b, a, upper=True).solution, Bm, A)
chk("triangular_solve_lower_t", lambda b, a: torch.triangular_solve(b, a, upper=False, transpose=True).solution, Bm, A)
chk("triangular_solve_unit", lambda b, a: torch.triangular_solve(b, a, unitriangular=True).solution, Bm, A)
chk("triangular_solve_m", lambda b, a: torch.triangular_solve(b, a).cloned_coefficient, Bm, torch.triu(A))
chk("solve_triangular", lambda a, b: torch.linalg.solve_triangular(a, b, upper=False), A, Bm)
chk("solve_triangular_right", lambda a, b: torch.linalg.solve_triangular(a, b, upper=True, left=False), A, torch.randn(2, 3, 4))
xp = torch.randn(2, 3, 6, 4)
out, ind = torch.nn.functional.max_pool2d(xp, 2, return_indices=True)
chk("max_unpool2d", lambda o, i: torch.nn.functional.max_unpool2d(o, i, 2), out, ind)
chk("max_unpool2d_size", lambda o, i: torch.nn.functional.max_unpool2d(o, i, 2, output_size=(7, 5)), out, ind)
xp3 = torch.randn(1, 2, 4, 4, 6)
out3, ind3 = torch.nn.functional.max_pool3d(xp3, 2, return_indices=True)
chk("max_unpool3d", lambda o, i: torch.nn.functional.max_unpool3d(o, i, 2), out3, ind3)
def svd_check(a, full):
    u, s, vh = torch.linalg.svd(a, full_matrices=full)
    k = min(a.shape[-2], a.shape[-1])
    rec = u[..., :, :k] @ torch.diag_embed(s) @ vh[..., :k, :]
    return torch.cat([rec.flatten(), s.flatten(), (u.mT @ u).flatten(), (vh @ vh.mT).flatten()])
chk("svd", lambda a: svd_check(a, False), torch.randn(2, 5, 3))
chk("svd_full", lambda a: svd_check(a, True), torch.randn(3, 4))
chk("svdvals", torch.linalg.svdvals, torch.randn(2, 4, 6))
chk("diag", lambda a: torch.diag(a, 1), torch.randn(4))
chk("diag_2d", lambda a: torch.diag(a, -1), torch.randn(3, 4))
chk("diagflat", lambda a: torch.diagflat(a, 2), torch.randn(2, 2))

print(f"op_breadth_math: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
