"""torch_npu.npu_nsa_select_attention (aclnnNsaSelectedAttention) and its backward
(aclnnNsaSelectedAttentionGrad, through autograd and through npu_nsa_select_attention_grad)
against a CPU reference in float64 with plain torch ops: each query row gathers the key/value
blocks its topk_indices name and takes softmax(scale·q·kᵀ)·v over them; with an atten_mask
(torch_npu passes sparse_mode 2) key rows after the query row are hidden. TND, grouped key
heads, float16 and bfloat16. torch_npu.npu_nsa_select_attention_infer
(aclnnNsaSelectedAttentionInfer): the same selection from paged key/value caches read through
block_table, each selected block cut at the batch's key/value length (BSND, BSH). Prints
PASS/FAIL per case and exits 1 when any fails.
"""
import sys

import torch
import torch_npu

D = "npu"
FAILED = []
NQ, NKV, DK, DV, BS, CNT = 4, 2, 192, 128, 16, 2


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


def reference(q, k, v, topk, qlens, kvlens, scale, causal):
    """q [Tq, NQ, DK], k [Tkv, NKV, DK], v [Tkv, NKV, DV], topk [Tq, NKV, CNT] ->
    out [Tq, NQ, DV], row max [Tq, NQ]."""
    outs, maxes = [], []
    q0 = k0 = 0
    for sq, skv in zip(qlens, kvlens):
        for i in range(sq):
            t = q0 + i
            row_o, row_m = [], []
            for n in range(NQ):
                h = n // (NQ // NKV)
                pos = torch.cat([torch.arange(b * BS, (b + 1) * BS) for b in topk[t, h].tolist()])
                if causal:
                    pos = pos[pos <= i]
                kk, vv = k[k0 + pos, h], v[k0 + pos, h]
                s = scale * (kk @ q[t, n])
                p = torch.softmax(s, dim=0)
                row_o.append(p @ vv)
                row_m.append(s.max())
            outs.append(torch.stack(row_o))
            maxes.append(torch.stack(row_m))
        q0 += sq
        k0 += skv
    return torch.stack(outs), torch.stack(maxes)


def select_case(dtype, masked, tol):
    def f():
        torch.manual_seed(5)
        qlens, kvlens = [5, 3], [48, 64]
        tq, tkv = sum(qlens), sum(kvlens)
        qcum = [sum(qlens[:i + 1]) for i in range(len(qlens))]
        kvcum = [sum(kvlens[:i + 1]) for i in range(len(kvlens))]
        q = (torch.randn(tq, NQ, DK) * 0.3).to(dtype)
        k = (torch.randn(tkv, NKV, DK) * 0.3).to(dtype)
        v = torch.randn(tkv, NKV, DV).to(dtype)
        # block 0 and one other distinct block (a row never loses every key to the mask)
        topk = torch.zeros(tq, NKV, CNT, dtype=torch.int32)
        for t in range(tq):
            nblk = 3 if t < qlens[0] else 4
            for h in range(NKV):
                other = 1 + (t + 2 * h) % (nblk - 1)
                topk[t, h] = torch.tensor([other, 0] if (t + h) % 2 else [0, other])
        scale = DK ** -0.5
        mask = torch.ones(2048, 2048, dtype=torch.bool).triu(1).to(D) if masked else None
        qn, kn, vn = (x.to(D).requires_grad_() for x in (q, k, v))
        out, smax, ssum = torch_npu.npu_nsa_select_attention(
            qn, kn, vn, topk.to(D), scale, NQ, BS, CNT,
            atten_mask=mask, actual_seq_qlen=qcum, actual_seq_kvlen=kvcum)
        qc, kc, vc = (x.double().requires_grad_() for x in (q, k, v))
        want, wmax = reference(qc, kc, vc, topk, qlens, kvlens, scale, masked)
        rtol, atol = tol
        torch.testing.assert_close(out.cpu().double(), want.detach(), rtol=rtol, atol=atol)
        assert smax.shape == (tq, NQ, 8) and ssum.shape == (tq, NQ, 8), (smax.shape, ssum.shape)
        torch.testing.assert_close(smax.cpu().double(), wmax.detach()[..., None].expand(tq, NQ, 8),
                                   rtol=1e-5, atol=1e-5)
        g = torch.randn(tq, NQ, DV).to(dtype)
        out.backward(g.to(D))
        want.backward(g.double())
        for name, got, ref in (("dq", qn.grad, qc.grad), ("dk", kn.grad, kc.grad), ("dv", vn.grad, vc.grad)):
            torch.testing.assert_close(got.cpu().double(), ref, rtol=rtol, atol=atol * 2, msg=name)
        dq, dk, dv = torch_npu.npu_nsa_select_attention_grad(
            g.to(D), qn.detach(), kn.detach(), vn.detach(), out.detach(), smax, ssum, topk.to(D), scale, NQ, BS, CNT,
            atten_mask=mask, actual_seq_qlen=qcum, actual_seq_kvlen=kvcum)
        for got, ref in ((dq, qn.grad), (dk, kn.grad), (dv, vn.grad)):
            torch.testing.assert_close(got.cpu(), ref.cpu(), rtol=0, atol=0)

    return f


case("nsa_select_f16", select_case(torch.float16, False, (4e-3, 4e-3)))
case("nsa_select_causal_f16", select_case(torch.float16, True, (4e-3, 4e-3)))
case("nsa_select_causal_bf16", select_case(torch.bfloat16, True, (2e-2, 2e-2)))


def infer_case(dtype, layout, tol):
    def f():
        page, blk, cnt, nb = 64, 32, 2, 5
        kvlens, table = [100, 70], torch.tensor([[3, 0], [4, 1]], dtype=torch.int32)
        g = torch.Generator().manual_seed(7)
        q = (torch.randn(2, 1, NQ, DK, generator=g) / 10).to(dtype)
        kc = (torch.randn(nb, page, NKV, DK, generator=g) / 10).to(dtype)
        vc = (torch.randn(nb, page, NKV, DV, generator=g) / 10).to(dtype)
        # batch 0 has 4 blocks of 32 (the last cut at 100), batch 1 three (cut at 70); -1 pads
        topk = torch.tensor([[[[3, 0], [1, -1]]], [[[2, 1], [-1, 0]]]], dtype=torch.int32)
        scale = DK ** -0.5
        want = torch.zeros(2, 1, NQ, DV, dtype=torch.float64)
        for b in range(2):
            for n in range(NQ):
                h = n // (NQ // NKV)
                pos = torch.cat([torch.arange(i * blk, min((i + 1) * blk, kvlens[b]))
                                 for i in topk[b, 0, h].tolist() if i >= 0])
                rows = table[b, pos // page].long() * page + pos % page
                kk = kc.reshape(-1, NKV, DK)[rows, h].double()
                vv = vc.reshape(-1, NKV, DV)[rows, h].double()
                p = torch.softmax(scale * kk @ q[b, 0, n].double(), 0)
                want[b, 0, n] = p @ vv
        qa, ka, va = q, kc, vc
        if layout == "BSH":
            qa, ka, va = q.reshape(2, 1, NQ * DK), kc.reshape(nb, page, NKV * DK), vc.reshape(nb, page, NKV * DV)
        out = torch_npu.npu_nsa_select_attention_infer(
            qa.to(D), ka.to(D), va.to(D), topk.to(D), scale, NQ, NKV, blk, cnt, page, layout=layout,
            block_table=table.to(D), actual_seq_kvlen=kvlens)
        assert out.dtype == dtype, out.dtype
        torch.testing.assert_close(out.cpu().double().reshape(want.shape), want, rtol=tol, atol=tol)

    return f


case("nsa_select_infer_bsnd_f16", infer_case(torch.float16, "BSND", 4e-3))
case("nsa_select_infer_bsh_bf16", infer_case(torch.bfloat16, "BSH", 2e-2))

print(f"attention_nsa: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
