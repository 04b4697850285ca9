"""torch_npu.npu_fusion_attention with a `sink` (one float32 logit per query head, the
attention sink of gpt-oss style models): aclnnFlashAttentionScoreV3 forward and
aclnnFlashAttentionScoreGradV3 backward for the BSND/BNSD/BSH layouts, and
aclnnFlashAttentionVarLenScoreV5 / aclnnFlashAttentionUnpaddingScoreGradV5 for TND, against a
CPU reference with plain torch ops: the sink is an extra softmax column without a value
(softmax over [scale·q·kᵀ, sink], that column dropped). Checks the output, softmax_max
(max including the sink), the gradients of q, k, v and of the sink itself, causal sparse
mode 3, grouped key heads, float32 and float16. Also torch_npu.npu_nsa_compress and
npu_nsa_compress_grad (aclnnNsaCompress/Grad, TND, float16 and bfloat16) against the
block-weighted sum in float64. And npu_fused_infer_attention_score / _v2
(aclnnFusedInferAttentionScoreV3/V4) with the MLA parts query_rope/key_rope and with
learnable_sink, in BNSD/BSND/BSH and in TND (causal mode 3, the log-sum-exp), against the
same reference over the concatenated heads. And the 5-D NZ paged key/value cache of
npu_fused_infer_attention_score(_v2) (float16, and INT8 with per-channel antiquant), and
its shared prefix (key/value_shared_prefix, actual_shared_prefix_len), the MLA parts over a
paged cache (key_rope read through the block table: ND, heads-first and NZ), and the full INT8
quantization of npu_prompt_flash_attention / npu_fused_infer_attention_score
(dequant_scale1, quant_scale1, dequant_scale2; FLOAT32 or npu_trans_quant_param's UINT64
scales; FLOAT16 or, with quant_scale2, INT8 out). And
npu_fusion_attention's prefix sparse modes 5 and 6 (forward and gradients). Prints PASS/FAIL per
case and exits 1 when any fails.
"""
import sys

import torch
import torch_npu

D = "npu"
FAILED = []
N1, N2, HD = 4, 2, 16


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


def attend(q, k, v, sink, scale, causal):
    """q [N1, S1, D], k/v [N2, S2, D], sink [N1] -> out [N1, S1, D], row max [N1, S1]."""
    k = k.repeat_interleave(N1 // N2, dim=0)
    v = v.repeat_interleave(N1 // N2, dim=0)
    s = scale * (q @ k.transpose(-1, -2))
    s1, s2 = s.shape[-2:]
    if causal:
        m = torch.ones(s1, s2, dtype=torch.bool).triu(s2 - s1 + 1)
        s = s.masked_fill(m, float("-inf"))
    if sink is not None:
        col = sink.view(N1, 1, 1).expand(N1, s1, 1).to(s.dtype)
        s = torch.cat([s, col], dim=-1)
    p = torch.softmax(s, dim=-1)
    if sink is not None:
        p = p[..., :-1]
    return p @ v, s.max(dim=-1).values


def bsnd_case(layout, dtype, causal, tol):
    def f():
        torch.manual_seed(3)
        b, s1, s2 = 2, 5, 7
        q = torch.randn(b, s1, N1, HD, dtype=dtype)
        k = torch.randn(b, s2, N2, HD, dtype=dtype)
        v = torch.randn(b, s2, N2, HD, dtype=dtype)
        dy = torch.randn(b, s1, N1, HD, dtype=dtype)
        sink = torch.tensor([0.5, -1.0, 2.0, 0.0])
        scale = HD ** -0.5

        def to_layout(x):  # from BSND
            if layout == "BNSD":
                return x.transpose(1, 2).contiguous()
            if layout == "BSH":
                return x.reshape(x.shape[0], x.shape[1], -1)
            return x

        def from_layout(x, n):
            if layout == "BNSD":
                return x.transpose(1, 2)
            if layout == "BSH":
                return x.reshape(x.shape[0], x.shape[1], n, HD)
            return x

        qn, kn, vn = (to_layout(x).to(D).requires_grad_() for x in (q, k, v))
        sn = sink.to(D).requires_grad_()
        kw = dict(scale=scale, sink=sn)
        if causal:
            kw.update(atten_mask=torch.ones(2048, 2048, dtype=torch.bool).triu(1).to(D), sparse_mode=3)
        res = torch_npu.npu_fusion_attention(qn, kn, vn, N1, layout, **kw)
        out, smax = res[0], res[1]
        out.backward(to_layout(dy).to(D))

        qc, kc, vc = (x.double().requires_grad_() for x in (q, k, v))
        sc = sink.double().requires_grad_()
        outs, maxes = [], []
        for i in range(b):
            o, m = attend(qc[i].transpose(0, 1), kc[i].transpose(0, 1), vc[i].transpose(0, 1), sc, scale, causal)
            outs.append(o.transpose(0, 1))
            maxes.append(m)
        want = torch.stack(outs)
        want.backward(dy.double())
        rtol, atol = tol
        torch.testing.assert_close(from_layout(out.detach().cpu(), N1).double(), want.detach(), rtol=rtol, atol=atol)
        torch.testing.assert_close(smax.cpu()[..., 0].double(), torch.stack(maxes).detach(), rtol=rtol, atol=atol)
        for got, ref, name in ((qn, qc, "dq"), (kn, kc, "dk"), (vn, vc, "dv")):
            g = from_layout(got.grad.cpu(), N1 if name == "dq" else N2).double()
            try:
                torch.testing.assert_close(g, ref.grad, rtol=rtol, atol=atol)
            except AssertionError as e:
                raise AssertionError(f"{name}: {e}") from None
        assert sn.grad is not None, "no gradient reached the sink"
        torch.testing.assert_close(sn.grad.cpu().double(), sc.grad, rtol=rtol, atol=atol * 4)

    return f


QLEN, KVLEN = [3, 5, 4], [4, 5, 6]


def tnd_case(dtype, causal, softmax_layout, tol):
    def f():
        torch.manual_seed(5)
        t1, t2 = sum(QLEN), sum(KVLEN)
        q = torch.randn(t1, N1, HD, dtype=dtype)
        k = torch.randn(t2, N2, HD, dtype=dtype)
        v = torch.randn(t2, N2, HD, dtype=dtype)
        dy = torch.randn(t1, N1, HD, dtype=dtype)
        sink = torch.tensor([-0.5, 1.5, 0.25, 3.0])
        scale = HD ** -0.5
        qn, kn, vn = (x.to(D).requires_grad_() for x in (q, k, v))
        sn = sink.to(D).requires_grad_()
        cum = lambda ls: [sum(ls[:i + 1]) for i in range(len(ls))]  # noqa: E731
        kw = dict(scale=scale, sink=sn, actual_seq_qlen=cum(QLEN), actual_seq_kvlen=cum(KVLEN))
        if causal:
            kw.update(atten_mask=torch.ones(2048, 2048, dtype=torch.bool).triu(1).to(D), sparse_mode=3)
        if softmax_layout:
            kw["softmax_layout"] = softmax_layout
        res = torch_npu.npu_fusion_attention(qn, kn, vn, N1, "TND", **kw)
        out = res[0]
        out.backward(dy.to(D))
        qc, kc, vc = (x.double().requires_grad_() for x in (q, k, v))
        sc = sink.double().requires_grad_()
        outs, q0, k0 = [], 0, 0
        for s1, s2 in zip(QLEN, KVLEN):
            o, _ = attend(qc[q0:q0 + s1].transpose(0, 1), kc[k0:k0 + s2].transpose(0, 1),
                          vc[k0:k0 + s2].transpose(0, 1), sc, scale, causal)
            outs.append(o.transpose(0, 1))
            q0, k0 = q0 + s1, k0 + s2
        want = torch.cat(outs)
        want.backward(dy.double())
        rtol, atol = tol
        torch.testing.assert_close(out.detach().cpu().double(), want.detach(), rtol=rtol, atol=atol)
        for got, ref, name in ((qn, qc, "dq"), (kn, kc, "dk"), (vn, vc, "dv")):
            try:
                torch.testing.assert_close(got.grad.cpu().double(), ref.grad, rtol=rtol, atol=atol)
            except AssertionError as e:
                raise AssertionError(f"{name}: {e}") from None
        assert sn.grad is not None, "no gradient reached the sink"
        torch.testing.assert_close(sn.grad.cpu().double(), sc.grad, rtol=rtol, atol=atol * 4)

    return f


F32, F16 = (2e-5, 2e-5), (2e-3, 4e-3)
case("sink_bsnd_f32", bsnd_case("BSND", torch.float32, False, F32))
case("sink_bsnd_causal_f32", bsnd_case("BSND", torch.float32, True, F32))
case("sink_bnsd_f32", bsnd_case("BNSD", torch.float32, False, F32))
case("sink_bsh_causal_f32", bsnd_case("BSH", torch.float32, True, F32))
case("sink_bsnd_f16", bsnd_case("BSND", torch.float16, False, F16))
case("sink_tnd_f32", tnd_case(torch.float32, False, "", F32))
case("sink_tnd_causal_f32", tnd_case(torch.float32, True, "", F32))
case("sink_tnd_softmax_layout_tnd_f32", tnd_case(torch.float32, True, "TND", F32))
case("sink_tnd_f16", tnd_case(torch.float16, False, "", F16))


def nsa_reference(x, w, ends, block, stride):
    """Each sequence's blocks i: Σ_l w[l, n] · x[s + i·stride + l, n, :]."""
    outs, s = [], 0
    for e in ends:
        n = (e - s - block) // stride + 1 if e - s >= block else 0
        for i in range(n):
            seg = x[s + i * stride:s + i * stride + block]  # [block, N, D]
            outs.append((seg * w.unsqueeze(-1)).sum(0))
        s = e
    return torch.stack(outs)


def nsa_case(dtype, tol):
    def f():
        torch.manual_seed(9)
        lens, block, stride = [40, 10, 64, 33], 32, 16
        ends = [sum(lens[:i + 1]) for i in range(len(lens))]
        x = torch.randn(ends[-1], 2, 16, dtype=dtype)
        w = torch.randn(block, 2, dtype=dtype)
        out = torch_npu.npu_nsa_compress(x.to(D), w.to(D), block, stride, actual_seq_len=ends)
        xc, wc = x.double().requires_grad_(), w.double().requires_grad_()
        want = nsa_reference(xc, wc, ends, block, stride)
        rtol, atol = tol
        torch.testing.assert_close(out.cpu().double(), want.detach(), rtol=rtol, atol=atol)
        g = torch.randn(want.shape, dtype=dtype)
        dx, dw = torch_npu.npu_nsa_compress_grad(g.to(D), x.to(D), w.to(D), block, stride, actual_seq_len=ends)
        want.backward(g.double())
        torch.testing.assert_close(dx.cpu().double(), xc.grad, rtol=rtol, atol=atol)
        torch.testing.assert_close(dw.cpu().double(), wc.grad, rtol=rtol, atol=atol * 8)

    return f


case("nsa_compress_f16", nsa_case(torch.float16, (2e-3, 4e-3)))
case("nsa_compress_bf16", nsa_case(torch.bfloat16, (1e-2, 3e-2)))


def fia_case(layout, dtype, rope, sink, s1, tol):
    """npu_fused_infer_attention_score(_v2) with the MLA rope parts (query_rope/key_rope: the
    scores are scale·(q·kᵀ + q_r·k_rᵀ)) and/or a learnable sink (v2), against `attend` over
    the concatenated heads."""
    def f():
        torch.manual_seed(11)
        b, s2, d, dr = 2, 24, 32, 16
        qd = torch.randn(b, N1, s1, d, dtype=dtype)
        kd = torch.randn(b, N2, s2, d, dtype=dtype)
        vd = torch.randn(b, N2, s2, d, dtype=dtype)
        qr = torch.randn(b, N1, s1, dr, dtype=dtype) if rope else None
        kr = torch.randn(b, N2, s2, dr, dtype=dtype) if rope else None
        sk = torch.randn(N1, dtype=torch.float32) if sink else None
        scale = 1.0 / (d + (dr if rope else 0)) ** 0.5

        def lay(x):  # BNSD -> layout
            if layout == "BNSD":
                return x
            x = x.transpose(1, 2).contiguous()
            return x if layout == "BSND" else x.reshape(x.shape[0], x.shape[1], -1)

        kw = dict(num_key_value_heads=N2, input_layout=layout)
        args = [lay(t).to(D) for t in (qd, kd, vd)]
        if sink:
            kw.update(num_query_heads=N1, softmax_scale=scale, learnable_sink=sk.to(D))
            if rope:
                kw.update(query_rope=lay(qr).to(D), key_rope=lay(kr).to(D))
            out, _ = torch_npu.npu_fused_infer_attention_score_v2(*args, **kw)
        else:
            kw.update(num_heads=N1, scale=scale, query_rope=lay(qr).to(D), key_rope=lay(kr).to(D))
            out, _ = torch_npu.npu_fused_infer_attention_score(*args, **kw)
        outs = []
        for i in range(b):
            qc = qd[i].double() if not rope else torch.cat([qd[i], qr[i]], -1).double()
            kc = kd[i].double() if not rope else torch.cat([kd[i], kr[i]], -1).double()
            o, _ = attend(qc, kc, vd[i].double(), sk.double() if sink else None, scale, False)
            outs.append(o)
        want = lay(torch.stack(outs))
        rtol, atol = tol
        torch.testing.assert_close(out.cpu().double(), want, rtol=rtol, atol=atol)

    return f


case("fia_mla_rope_bnsd_decode_f16", fia_case("BNSD", torch.float16, True, False, 1, (2e-3, 2e-3)))
case("fia_mla_rope_bsh_prefill_f32", fia_case("BSH", torch.float32, True, False, 5, (1e-5, 1e-5)))
case("fia_v2_sink_bsnd_f32", fia_case("BSND", torch.float32, False, True, 3, (1e-5, 1e-5)))
case("fia_v2_sink_rope_bnsd_bf16", fia_case("BNSD", torch.bfloat16, True, True, 1, (2e-2, 2e-2)))


def nz_cache(x, table, bs):
    """Dense [B, N2, S2, D] into the NZ paged cache [blockNum, N2, D/c0, bs, c0] that `table`
    ([B, S2/bs] block ids) describes; c0 elements make 32 bytes."""
    b, n2, s2, d = x.shape
    c0 = 32 // x.element_size()
    cache = torch.zeros(int(table.max()) + 2, n2, d // c0, bs, c0, dtype=x.dtype)
    for i in range(b):
        for j in range(s2 // bs):
            blk = x[i, :, j * bs:(j + 1) * bs, :]  # [N2, bs, D]
            cache[int(table[i, j])] = blk.reshape(n2, bs, d // c0, c0).permute(0, 2, 1, 3)
    return cache


def fia_nz_case(layout, dtype, v2, tol):
    """npu_fused_infer_attention_score(_v2) over a paged key/value cache in the 5-D NZ layout
    [blockNum, N2, D/c0, blockSize, c0] (c0 = 16 for float16, 32 for INT8 with per-channel
    antiquant scales), blocks shuffled by the block table, one query row per batch, against
    `attend` over the dense key/value."""
    def f():
        torch.manual_seed(17)
        b, s2, d, bs = 2, 256, 64, 128
        table = torch.randperm(b * (s2 // bs) + 1)[: b * (s2 // bs)].view(b, -1).int()
        q = torch.randn(b, N1, 1, d, dtype=torch.float16 if dtype == torch.int8 else dtype)
        if dtype == torch.int8:
            kq = torch.randint(-128, 128, (b, N2, s2, d), dtype=torch.int8)
            vq = torch.randint(-128, 128, (b, N2, s2, d), dtype=torch.int8)
            ks = torch.rand(N2, 1, d, dtype=torch.float16) / 64
            vs = torch.rand(N2, 1, d, dtype=torch.float16) / 64
            kd = kq.double() * ks.double().view(1, N2, 1, d)
            vd = vq.double() * vs.double().view(1, N2, 1, d)
        else:
            kq = torch.randn(b, N2, s2, d, dtype=dtype)
            vq = torch.randn(b, N2, s2, d, dtype=dtype)
            kd, vd = kq.double(), vq.double()
        kc, vc = nz_cache(kq, table, bs).to(D), nz_cache(vq, table, bs).to(D)
        scale = 1.0 / d ** 0.5
        qa = q if layout == "BNSD" else q.transpose(1, 2).reshape(b, 1, N1 * d)
        kw = dict(block_table=table.to(D), block_size=bs, num_key_value_heads=N2,
                  input_layout=layout)
        if v2:
            kw.update(num_query_heads=N1, softmax_scale=scale, actual_seq_kvlen=[s2] * b)
            if dtype == torch.int8:
                sh = (N2, 1, d) if layout == "BNSD" else (N2 * d,)
                kw.update(dequant_scale_key=ks.reshape(sh).to(D),
                          dequant_scale_value=vs.reshape(sh).to(D),
                          key_quant_mode=0, value_quant_mode=0)
            out, _ = torch_npu.npu_fused_infer_attention_score_v2(qa.to(D), kc, vc, **kw)
        else:
            kw.update(num_heads=N1, scale=scale, actual_seq_lengths_kv=[s2] * b)
            out, _ = torch_npu.npu_fused_infer_attention_score(qa.to(D), kc, vc, **kw)
        want = torch.stack([attend(q[i].double(), kd[i], vd[i], None, scale, False)[0]
                            for i in range(b)])
        if layout != "BNSD":
            want = want.transpose(1, 2).reshape(b, 1, N1 * d)
        rtol, atol = tol
        torch.testing.assert_close(out.cpu().double(), want, rtol=rtol, atol=atol)

    return f


def fia_nz_bad_c0():
    """An NZ cache of float16 whose last dimension is not 16 elements (32 bytes) is refused
    with a message naming the paged key."""
    q = torch.randn(1, N1, 1, 64, dtype=torch.float16).to(D)
    k = torch.randn(2, N2, 2, 128, 32, dtype=torch.float16).to(D)
    table = torch.arange(2, dtype=torch.int32).view(1, 2).to(D)
    try:
        torch_npu.npu_fused_infer_attention_score(
            q, k, k, num_heads=N1, num_key_value_heads=N2, input_layout="BNSD",
            block_table=table, block_size=128, actual_seq_lengths_kv=[256])
        torch.npu.synchronize()
    except RuntimeError as e:
        if "must end in 16" not in str(e):
            raise AssertionError(f"unexpected message: {str(e)[:300]}")
        return
    raise AssertionError("a float16 NZ cache ending in 32 was accepted")


case("fia_nz_paged_bad_c0", fia_nz_bad_c0)
case("fia_nz_paged_f16_bnsd", fia_nz_case("BNSD", torch.float16, False, (2e-3, 2e-3)))
case("fia_nz_paged_f16_bsh", fia_nz_case("BSH", torch.float16, False, (2e-3, 2e-3)))
case("fia_v2_nz_paged_int8_bnsd", fia_nz_case("BNSD", torch.int8, True, (2e-3, 2e-3)))


def nd_cache(x, table, bs, heads_first):
    """Dense [B, N2, S2, D] into the paged cache [blockNum, bs, N2·D] (or, heads first,
    [blockNum, N2, bs, D]) that `table` ([B, S2/bs] block ids) describes."""
    b, n2, s2, d = x.shape
    blocks = int(table.max()) + 2
    cache = torch.zeros((blocks, n2, bs, d) if heads_first else (blocks, bs, n2 * d), dtype=x.dtype)
    for i in range(b):
        for j in range(s2 // bs):
            blk = x[i, :, j * bs:(j + 1) * bs, :]  # [N2, bs, D]
            cache[int(table[i, j])] = blk if heads_first else blk.transpose(0, 1).reshape(bs, n2 * d)
    return cache


def fia_mla_paged_case(layout, cache):
    """npu_fused_infer_attention_score with the MLA parts over a paged cache: key, value and
    key_rope are read through one block table ([blockNum, bs, N2·D], [blockNum, N2, bs, D] or
    the NZ [blockNum, N2, D/16, bs, 16]; key_rope with its own head dim), a decode query row
    per batch with its query_rope, actual key lengths 40 and 64, float16, against `attend`
    over the concatenated heads."""
    def f():
        torch.manual_seed(29)
        b, s2, d, dr, bs = 2, 64, 32, 16, 16
        kv_lens = [40, 64]
        table = torch.randperm(b * (s2 // bs) + 1)[: b * (s2 // bs)].view(b, -1).int()
        q = torch.randn(b, N1, 1, d, dtype=torch.float16)
        qr = torch.randn(b, N1, 1, dr, dtype=torch.float16)
        k = torch.randn(b, N2, s2, d, dtype=torch.float16)
        v = torch.randn(b, N2, s2, d, dtype=torch.float16)
        kr = torch.randn(b, N2, s2, dr, dtype=torch.float16)
        if cache == "nz":
            put = lambda x: nz_cache(x, table, bs)  # noqa: E731
        else:
            put = lambda x: nd_cache(x, table, bs, cache == "heads_first")  # noqa: E731
        scale = 1.0 / (d + dr) ** 0.5

        def lay(x):  # BNSD -> layout
            return x if layout == "BNSD" else x.transpose(1, 2).reshape(b, 1, -1)

        out, _ = torch_npu.npu_fused_infer_attention_score(
            lay(q).to(D), put(k).to(D), put(v).to(D), query_rope=lay(qr).to(D),
            key_rope=put(kr).to(D), block_table=table.to(D), block_size=bs, num_heads=N1,
            num_key_value_heads=N2, input_layout=layout, scale=scale,
            actual_seq_lengths_kv=kv_lens)
        want = []
        for i in range(b):
            n = kv_lens[i]
            qc = torch.cat([q[i], qr[i]], -1).double()
            kc = torch.cat([k[i, :, :n], kr[i, :, :n]], -1).double()
            want.append(attend(qc, kc, v[i, :, :n].double(), None, scale, False)[0])
        want = lay(torch.stack(want))
        torch.testing.assert_close(out.cpu().double(), want, rtol=2e-3, atol=2e-3)

    return f


case("fia_mla_paged_bsh", fia_mla_paged_case("BSH", "nd"))
case("fia_mla_paged_bnsd_heads_first", fia_mla_paged_case("BNSD", "heads_first"))
case("fia_mla_paged_bnsd_nz", fia_mla_paged_case("BNSD", "nz"))


def fia_prefix_case(layout, dtype, s1, sp_len, causal, tol):
    """npu_fused_infer_attention_score with key_shared_prefix/value_shared_prefix ([1, Sp,
    …], the first actual_shared_prefix_len positions used) before every batch's valid keys
    (actual_seq_lengths_kv), optionally right-down causal (sparse mode 3) over prefix + key,
    against `attend` over the concatenation."""
    def f():
        torch.manual_seed(19)
        b, s2, sp, d = 2, 7, 4, 16
        kv_lens = [5, 7]
        q = torch.randn(b, N1, s1, d, dtype=dtype)
        k = torch.randn(b, N2, s2, d, dtype=dtype)
        v = torch.randn(b, N2, s2, d, dtype=dtype)
        kp = torch.randn(1, N2, sp, d, dtype=dtype)
        vp = torch.randn(1, N2, sp, d, dtype=dtype)

        def lay(x):  # BNSD -> layout
            if layout == "BNSD":
                return x
            x = x.transpose(1, 2).contiguous()
            return x if layout == "BSND" else x.reshape(x.shape[0], x.shape[1], -1)

        kw = dict(num_heads=N1, num_key_value_heads=N2, input_layout=layout, scale=0.3,
                  key_shared_prefix=lay(kp).to(D), value_shared_prefix=lay(vp).to(D),
                  actual_shared_prefix_len=[sp_len], actual_seq_lengths_kv=kv_lens)
        if causal:
            kw.update(sparse_mode=3,
                      atten_mask=torch.ones(2048, 2048, dtype=torch.bool).triu(1).to(D))
        out, _ = torch_npu.npu_fused_infer_attention_score(
            *[lay(t).to(D) for t in (q, k, v)], **kw)
        outs = []
        for i in range(b):
            kc = torch.cat([kp[0, :, :sp_len], k[i, :, :kv_lens[i]]], 1).double()
            vc = torch.cat([vp[0, :, :sp_len], v[i, :, :kv_lens[i]]], 1).double()
            outs.append(attend(q[i].double(), kc, vc, None, 0.3, causal)[0])
        want = lay(torch.stack(outs))
        rtol, atol = tol
        torch.testing.assert_close(out.cpu().double(), want, rtol=rtol, atol=atol)

    return f


case("fia_shared_prefix_bnsd_prompt_f32", fia_prefix_case("BNSD", torch.float32, 3, 3, False, (1e-5, 1e-5)))
case("fia_shared_prefix_bsh_decode_f16", fia_prefix_case("BSH", torch.float16, 1, 4, False, (2e-3, 2e-3)))
case("fia_shared_prefix_bsnd_causal_f32", fia_prefix_case("BSND", torch.float32, 4, 2, True, (1e-5, 1e-5)))


def full_quant_ref(q, k, v, deq1, qs1, deq2, scale, causal):
    """The full quantization of an INT8 query/key/value (BNSD, [B, N, S, D]) as the kernel
    computes it: s = scale·deq1·(q·kᵀ); e = exp(s - rowmax); the exponentials quantized to
    INT8 as round_half_even(e·qs1); out = deq2·(e_q·v) / Σe."""
    k = k.double().repeat_interleave(N1 // N2, dim=1)
    v = v.double().repeat_interleave(N1 // N2, dim=1)
    s = scale * deq1 * (q.double() @ k.transpose(-1, -2))
    s1, s2 = s.shape[-2:]
    if causal:
        s = s.masked_fill(torch.ones(s1, s2, dtype=torch.bool).triu(s2 - s1 + 1), float("-inf"))
    e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
    eq = torch.round(e * qs1).clamp(-128, 127)
    return deq2 * (eq @ v) / e.sum(dim=-1, keepdim=True)


def full_quant_case(api, layout, uint64_scales, causal, int8_out):
    """npu_prompt_flash_attention / npu_fused_infer_attention_score with an INT8 query, key
    and value and dequant_scale1 / quant_scale1 / dequant_scale2 (FLOAT32, or the UINT64 of
    npu_trans_quant_param), FLOAT16 out (or INT8 with quant_scale2)."""
    def f():
        torch.manual_seed(23)
        b, s1, s2, d = 2, 5, 9, 32
        q = torch.randint(-8, 9, (b, N1, s1, d), dtype=torch.int8)
        k = torch.randint(-8, 9, (b, N2, s2, d), dtype=torch.int8)
        v = torch.randint(-8, 9, (b, N2, s2, d), dtype=torch.int8)
        deq1, qs1, deq2 = 2.0 ** -7, 100.0, 2.0 ** -6

        def lay(x):  # BNSD -> layout
            if layout == "BNSD":
                return x
            x = x.transpose(1, 2).contiguous()
            return x.reshape(x.shape[0], x.shape[1], -1)

        def deq(x):
            t = torch.tensor([x], dtype=torch.float32)
            return torch_npu.npu_trans_quant_param(t.to(D)) if uint64_scales else t.to(D)

        scales = dict(quant_scale1=torch.tensor([qs1], dtype=torch.float32).to(D))
        if api == "pfa":
            scales.update(deq_scale1=deq(deq1), deq_scale2=deq(deq2))
        else:
            scales.update(dequant_scale1=deq(deq1), dequant_scale2=deq(deq2))
        if int8_out:
            scales["quant_scale2"] = torch.tensor([4.0], dtype=torch.float32).to(D)
        kw = dict(num_heads=N1, num_key_value_heads=N2, input_layout=layout, **scales)
        if causal:
            kw.update(sparse_mode=3, next_tokens=0,
                      atten_mask=torch.ones(2048, 2048, dtype=torch.bool).triu(1).to(D))
        args = [lay(t).to(D) for t in (q, k, v)]
        if api == "pfa":
            out = torch_npu.npu_prompt_flash_attention(*args, scale_value=0.5, **kw)
        else:
            out, _ = torch_npu.npu_fused_infer_attention_score(*args, scale=0.5, **kw)
        want = lay(full_quant_ref(q, k, v, deq1, qs1, deq2, 0.5, causal))
        if int8_out:
            assert out.dtype == torch.int8, out.dtype
            want = torch.round(want * 4.0).clamp(-128, 127)
            # the quantized value may differ by one step where the unrounded one sits at .5
            assert (out.cpu().double() - want).abs().max() <= 1, (out.cpu(), want)
        else:
            assert out.dtype == torch.float16, out.dtype
            torch.testing.assert_close(out.cpu().double(), want, rtol=2e-3, atol=2e-3)

    return f


def full_quant_errors():
    """An INT8 query without quant_scale1 fails naming it; dequant scales with a float16 query
    fail naming the argument."""
    q = torch.randint(-8, 9, (1, N1, 2, 32), dtype=torch.int8).to(D)
    k = torch.randint(-8, 9, (1, N2, 3, 32), dtype=torch.int8).to(D)
    one = torch.tensor([1.0]).to(D)
    for kw, want in ((dict(dequant_scale1=one, dequant_scale2=one), "quantScale1"),):
        try:
            torch_npu.npu_fused_infer_attention_score(q, k, k, num_heads=N1, num_key_value_heads=N2,
                                                      input_layout="BNSD", **kw)
            torch.npu.synchronize()
        except RuntimeError as e:
            assert want in str(e) and "nullptr" in str(e), str(e)[:400]
        else:
            raise AssertionError("an INT8 query without quant_scale1 ran")
    qf = torch.randn(1, N1, 2, 32, dtype=torch.float16).to(D)
    kf = torch.randn(1, N2, 3, 32, dtype=torch.float16).to(D)
    try:
        torch_npu.npu_prompt_flash_attention(qf, kf, kf, num_heads=N1, num_key_value_heads=N2,
                                             input_layout="BNSD", deq_scale1=one, quant_scale1=one,
                                             deq_scale2=one)
        torch.npu.synchronize()
    except RuntimeError as e:
        assert "deqScale1 is given but query is" in str(e), str(e)[:400]
    else:
        raise AssertionError("dequant scales with a float16 query ran")


case("pfa_full_quant_bnsd_f32_scales", full_quant_case("pfa", "BNSD", False, False, False))
case("pfa_full_quant_bsh_uint64_causal", full_quant_case("pfa", "BSH", True, True, False))
case("fia_full_quant_bnsd_uint64", full_quant_case("fia", "BNSD", True, False, False))
case("fia_full_quant_bsh_causal_int8_out", full_quant_case("fia", "BSH", False, True, True))
case("full_quant_errors", full_quant_errors)


def fia_tnd_case(dtype, rope, sink, causal, tol):
    """npu_fused_infer_attention_score_v2 in layout TND (packed sequences given by the
    cumulative actual_seq_qlen / actual_seq_kvlen), each sequence attended alone, with the
    MLA rope parts, the learnable sink, causal sparse mode 3 and the softmax log-sum-exp."""
    def f():
        torch.manual_seed(12)
        ql, kl, d, dr = [5, 1, 7], [9, 4, 7], 16, 8
        qe = [sum(ql[:i + 1]) for i in range(len(ql))]
        ke = [sum(kl[:i + 1]) for i in range(len(kl))]
        q = torch.randn(qe[-1], N1, d, dtype=dtype)
        k = torch.randn(ke[-1], N2, d, dtype=dtype)
        v = torch.randn(ke[-1], N2, d, dtype=dtype)
        qr = torch.randn(qe[-1], N1, dr, dtype=dtype) if rope else None
        kr = torch.randn(ke[-1], N2, dr, dtype=dtype) if rope else None
        sk = torch.randn(N1, dtype=torch.float32) if sink else None
        scale = 0.3
        kw = dict(num_query_heads=N1, num_key_value_heads=N2, input_layout="TND",
                  softmax_scale=scale, actual_seq_qlen=qe, actual_seq_kvlen=ke,
                  return_softmax_lse=True)
        if rope:
            kw.update(query_rope=qr.to(D), key_rope=kr.to(D))
        if sink:
            kw.update(learnable_sink=sk.to(D))
        if causal:
            kw.update(sparse_mode=3, atten_mask=torch.ones(2048, 2048, dtype=torch.bool).triu(1).to(D))
        out, lse = torch_npu.npu_fused_infer_attention_score_v2(q.to(D), k.to(D), v.to(D), **kw)
        outs, lses = [], []
        for i in range(len(ql)):
            q0, k0 = qe[i] - ql[i], ke[i] - kl[i]
            qs, ks, vs = q[q0:qe[i]], k[k0:ke[i]], v[k0:ke[i]]
            if rope:
                qs = torch.cat([qs, qr[q0:qe[i]]], -1)
                ks = torch.cat([ks, kr[k0:ke[i]]], -1)
            qs, ks, vs = (x.transpose(0, 1).double() for x in (qs, ks, vs))
            o, _ = attend(qs, ks, vs, sk.double() if sink else None, scale, causal)
            outs.append(o.transpose(0, 1))
            # log-sum-exp of the scores (and the sink), per row
            kk = ks.repeat_interleave(N1 // N2, dim=0)
            sc = scale * (qs @ kk.transpose(-1, -2))
            if causal:
                m = torch.ones(ql[i], kl[i], dtype=torch.bool).triu(kl[i] - ql[i] + 1)
                sc = sc.masked_fill(m, float("-inf"))
            if sink:
                sc = torch.cat([sc, sk.double().view(N1, 1, 1).expand(N1, ql[i], 1)], -1)
            lses.append(torch.logsumexp(sc, -1).transpose(0, 1).unsqueeze(-1))
        rtol, atol = tol
        torch.testing.assert_close(out.cpu().double(), torch.cat(outs), rtol=rtol, atol=atol)
        torch.testing.assert_close(lse.cpu().double(), torch.cat(lses), rtol=rtol, atol=atol)

    return f


case("fia_v2_tnd_f32", fia_tnd_case(torch.float32, False, False, False, (1e-5, 1e-5)))
case("fia_v2_tnd_rope_sink_causal_f32", fia_tnd_case(torch.float32, True, True, True, (1e-5, 1e-5)))
case("fia_v2_tnd_rope_f16", fia_tnd_case(torch.float16, True, False, False, (2e-3, 2e-3)))


def prefix_case(mode, s1, s2, dtype, tol):
    """npu_fusion_attention with sparse_mode 5 (the whole mask) or 6 (the compressed
    [3072, 2048] one) and prefix: each query row sees the right-down causal keys and the
    first prefix[b] keys of its batch; output and gradients against CPU autograd."""
    def f():
        torch.manual_seed(13)
        b, d = 2, 16
        prefix = [s2 - s1 + 1, s2 - 2] if s1 <= s2 else [0, 3]
        q = torch.randn(b, N1, s1, d, dtype=dtype)
        k = torch.randn(b, N1, s2, d, dtype=dtype)
        v = torch.randn(b, N1, s2, d, dtype=dtype)
        row = torch.arange(s1).view(s1, 1)
        col = torch.arange(s2).view(1, s2)
        masked = torch.stack([(col > row + (s2 - s1)) & (col >= pn) for pn in prefix])
        if mode == 5:
            mask = masked.view(b, 1, s1, s2)
        else:
            mask = torch.cat([torch.ones(2048, 2048, dtype=torch.bool).triu(1),
                              torch.cat([torch.zeros(1024, 1024, dtype=torch.bool),
                                         torch.ones(1024, 1024, dtype=torch.bool)], 1)])
        qn, kn, vn = (x.to(D).requires_grad_() for x in (q, k, v))
        out = torch_npu.npu_fusion_attention(qn, kn, vn, N1, "BNSD", atten_mask=mask.to(D),
                                             scale=0.25, prefix=prefix, sparse_mode=mode)[0]
        qc, kc, vc = (x.double().requires_grad_() for x in (q, k, v))
        sc = 0.25 * (qc @ kc.transpose(-1, -2))
        sc = sc.masked_fill(masked.view(b, 1, s1, s2), float("-inf"))
        want = torch.softmax(sc, -1) @ vc
        g = torch.randn(want.shape, dtype=dtype)
        out.backward(g.to(D))
        want.backward(g.double())
        rtol, atol = tol
        torch.testing.assert_close(out.detach().cpu().double(), want.detach(), rtol=rtol, atol=atol)
        for a, w in ((qn, qc), (kn, kc), (vn, vc)):
            torch.testing.assert_close(a.grad.cpu().double(), w.grad, rtol=rtol, atol=atol)

    return f


case("fa_prefix_mode5_f32", prefix_case(5, 6, 9, torch.float32, (1e-5, 1e-5)))
case("fa_prefix_mode6_f32", prefix_case(6, 7, 7, torch.float32, (1e-5, 1e-5)))
case("fa_prefix_mode5_f16", prefix_case(5, 8, 8, torch.float16, (2e-3, 2e-3)))

print(f"attention_new: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
