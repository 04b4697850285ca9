"""torch_npu.npu_fusion_attention with input_layout="TND" (packed variable-length sequences,
actual_seq_qlen/actual_seq_kvlen cumulative): aclnnFlashAttentionVarLenScore forward and
aclnnFlashAttentionUnpaddingScoreGrad backward (V4 of each with softmax_layout="TND"), against
a CPU reference that attends each sequence alone with plain torch ops: causal sparse modes 2
and 3 on the compressed 2048x2048 mask, no mask, a [S1max, S2max] mask with sparse mode 0,
grouped key heads, float32 and float16. Prints PASS/FAIL per case and exits 1 when any fails.
"""
import sys

import torch
import torch_npu

D = "npu"
FAILED = []
QLEN = [3, 5, 4]
KVLEN = [4, 5, 6]
N1, N2, HD = 4, 2, 16


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


def cum(lens):
    out, t = [], 0
    for x in lens:
        t += x
        out.append(t)
    return out


def reference(q, k, v, scale, masked):
    """Each sequence alone: q [T1, N1, D], k/v [T2, N2, D]; masked(b, s1, s2) -> bool [s1, s2]."""
    outs, q0, k0 = [], 0, 0
    for b, (s1, s2) in enumerate(zip(QLEN, KVLEN)):
        qb = q[q0:q0 + s1].transpose(0, 1)
        kb = k[k0:k0 + s2].transpose(0, 1).repeat_interleave(N1 // N2, dim=0)
        vb = v[k0:k0 + s2].transpose(0, 1).repeat_interleave(N1 // N2, dim=0)
        s = scale * (qb @ kb.transpose(-1, -2))
        m = masked(b, s1, s2)
        if m is not None:
            s = s.masked_fill(m, float("-inf"))
        outs.append((torch.softmax(s, dim=-1) @ vb).transpose(0, 1))
        q0, k0 = q0 + s1, k0 + s2
    return torch.cat(outs)


def run(dtype, sparse_mode, mask, masked, softmax_layout="", tol=(2e-5, 2e-5)):
    def f():
        torch.manual_seed(7)
        t1, t2 = sum(QLEN), sum(KVLEN)
        q = torch.randn(t1, N1, HD, dtype=dtype)
        k = torch.randn(t2, N2, HD, dtype=dtype)
        v = torch.randn(t2, N2, HD, dtype=dtype)
        dy = torch.randn(t1, N1, HD, dtype=dtype)
        scale = HD ** -0.5
        qn, kn, vn = (x.to(D).requires_grad_() for x in (q, k, v))
        kw = dict(atten_mask=None if mask is None else mask.to(D), scale=scale,
                  actual_seq_qlen=cum(QLEN), actual_seq_kvlen=cum(KVLEN), sparse_mode=sparse_mode)
        if softmax_layout:
            kw["softmax_layout"] = softmax_layout
        res = torch_npu.npu_fusion_attention(qn, kn, vn, N1, "TND", **kw)
        out = res[0]
        out.backward(dy.to(D))
        qc, kc, vc = (x.double().requires_grad_() for x in (q, k, v))
        want = reference(qc, kc, vc, scale, masked)
        want.backward(dy.double())
        rtol, atol = tol
        torch.testing.assert_close(out.detach().cpu().double(), want.detach(), rtol=rtol, atol=atol)
        for got, ref, name in ((qn, qc, "dq"), (kn, kc, "dk"), (vn, vc, "dv")):
            try:
                torch.testing.assert_close(got.grad.cpu().double(), ref.grad, rtol=rtol, atol=atol)
            except AssertionError as e:
                raise AssertionError(f"{name}: {e}") from None
        # softmax_max: each row's max of the scaled scores ([N, T, 8] values, or [T, N, 8])
        smax = res[1].cpu().double()
        assert smax.numel() == t1 * N1 * 8, smax.shape
        got_max = smax.reshape(t1, N1, 8) if softmax_layout else smax.reshape(N1, t1, 8).transpose(0, 1)
        rows, q0, k0 = [], 0, 0
        for b, (s1, s2) in enumerate(zip(QLEN, KVLEN)):
            s = scale * (qc[q0:q0 + s1].transpose(0, 1) @ kc[k0:k0 + s2].transpose(0, 1)
                         .repeat_interleave(N1 // N2, dim=0).transpose(-1, -2))
            m = masked(b, s1, s2)
            if m is not None:
                s = s.masked_fill(m, float("-inf"))
            rows.append(s.amax(-1).transpose(0, 1))
            q0, k0 = q0 + s1, k0 + s2
        want_max = torch.cat(rows).detach()
        torch.testing.assert_close(got_max[..., 0], want_max, rtol=rtol, atol=atol)
        assert torch.equal(got_max[..., 0], got_max[..., 7])
    return f


CMASK = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), diagonal=1)
S1M, S2M = max(QLEN), max(KVLEN)
torch.manual_seed(11)
FULL = torch.rand(S1M, S2M) < 0.3
FULL[:, 0] = False

case("tnd_causal_right_down_float32",
     run(torch.float32, 3, CMASK, lambda b, s1, s2: torch.ones(s1, s2, dtype=torch.bool).triu(s2 - s1 + 1)))
case("tnd_causal_left_up_float32",
     run(torch.float32, 2, CMASK, lambda b, s1, s2: torch.ones(s1, s2, dtype=torch.bool).triu(1)))
case("tnd_no_mask_float32", run(torch.float32, 0, None, lambda b, s1, s2: None))
case("tnd_full_mask_sparse0_float32", run(torch.float32, 0, FULL, lambda b, s1, s2: FULL[:s1, :s2]))
case("tnd_causal_float16",
     run(torch.float16, 3, CMASK, lambda b, s1, s2: torch.ones(s1, s2, dtype=torch.bool).triu(s2 - s1 + 1),
         tol=(4e-3, 4e-3)))
case("tnd_softmax_layout_tnd",
     run(torch.float32, 3, CMASK, lambda b, s1, s2: torch.ones(s1, s2, dtype=torch.bool).triu(s2 - s1 + 1),
         softmax_layout="TND"))

print(f"fusion_attention_tnd: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
