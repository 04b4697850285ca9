"""Large-model operators of torch_npu's API pages against CPU references written from the
documented formulas: npu_attention_update (aclnnAttentionUpdate, the log-sum-exp merge of
sequence-parallel attention outputs), npu_kv_rmsnorm_rope_cache (aclnnKvRmsNormRopeCache:
RMS norm + interleaved RoPE scattered into Norm / PA_BNSD / PA_NZ / PA_BLK_BNSD / PA_BLK_NZ caches, int8
quantized caches), and the vocabulary-parallel cross entropy npu_fused_linear_online_max_sum,
npu_fused_cross_entropy_loss_with_max_sum and
npu_fused_linear_cross_entropy_loss_with_max_sum_backward (aclnnFusedLinearOnlineMaxSum,
aclnnFusedCrossEntropyLossWithMaxSum, aclnnFusedLinearCrossEntropyLossGrad), checked end to
end against torch's own cross entropy gradient. Each operator also has an error case that
expects the documented status code and a message naming the argument. Prints PASS/FAIL per
case and exits 1 when any fails.
"""
import sys

import torch
import torch_npu

D = "npu"
FAILED = []


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


def expect_error(f, code, words):
    try:
        f()
        torch.npu.synchronize()
    except RuntimeError as err:
        s = str(err)
        assert code in s, s[:500]
        for w in words:
            assert w in s, f"{w!r} not in: {s[:500]}"
    else:
        raise AssertionError("no error")


def close(got, want, rtol, atol):
    torch.testing.assert_close(got.cpu().double(), want.double(), rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------
# npu_attention_update


def attention_update_ref(lses, outs):
    lse = torch.stack([x.double() for x in lses])  # [sp, N]
    o = torch.stack([x.double() for x in outs])  # [sp, N, D]
    m = lse.max(0).values
    lse_m = m + torch.log(torch.exp(lse - m).sum(0))
    w = torch.exp(lse - lse_m)
    return (o * w.unsqueeze(-1)).sum(0), lse_m


def attention_update(sp, update_type):
    def f():
        torch.manual_seed(sp)
        n, hd = 24, 32
        lses = [torch.randn(n) * 3 for _ in range(sp)]
        outs = [torch.randn(n, hd) for _ in range(sp)]
        out, lse_out = torch_npu.npu_attention_update(
            [x.to(D) for x in lses], [x.to(D) for x in outs], update_type)
        want, want_lse = attention_update_ref(lses, outs)
        close(out, want, 1e-5, 1e-5)
        if update_type == 1:
            close(lse_out, want_lse, 1e-5, 1e-5)

    return f


def attention_update_bad_head_dim():
    lses = [torch.randn(4).to(D) for _ in range(2)]
    outs = [torch.randn(4, 12).to(D) for _ in range(2)]
    expect_error(lambda: torch_npu.npu_attention_update(lses, outs, 0), "161002", ["headDim"])


case("attention_update_sp2_type0", attention_update(2, 0))
case("attention_update_sp3_type1", attention_update(3, 1))
case("attention_update_sp1_type1", attention_update(1, 1))
case("attention_update_bad_head_dim", attention_update_bad_head_dim)


# ---------------------------------------------------------------------------------------
# npu_kv_rmsnorm_rope_cache

B, S, DV, DK = 2, 3, 512, 64


def kv_ref(kv, gamma, cos, sin, eps=1e-5):
    """kv [B, 1, S, 576] -> (k_rope [B, 1, S, 64], c_kv [B, 1, S, 512]) in float64."""
    kv, gamma, cos, sin = (x.double() for x in (kv, gamma, cos, sin))
    x = kv[..., :DV]
    y = x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * gamma
    r = kv[..., DV:]
    r = torch.cat([r[..., ::2], r[..., 1::2]], -1)
    rot = torch.cat([-r[..., DK // 2:], r[..., :DK // 2]], -1)
    return r * cos + rot * sin, y


def kv_inputs(dtype, seed):
    torch.manual_seed(seed)
    kv = torch.randn(B, 1, S, DV + DK, dtype=dtype)
    gamma = torch.rand(DV, dtype=dtype) + 0.5
    ang = torch.rand(B, 1, S, DK)
    return kv, gamma, ang.cos().to(dtype), ang.sin().to(dtype)


def kv_norm_case(dtype):
    def f():
        kv, gamma, cos, sin = kv_inputs(dtype, 1)
        scache = 5
        index = torch.tensor([[4, 0, 2], [1, -1, 3]])
        kc = torch.zeros(B, 1, scache, DK, dtype=dtype)
        vc = torch.zeros(B, 1, scache, DV, dtype=dtype)
        kcn, vcn = kc.to(D), vc.to(D)
        r = torch_npu.npu_kv_rmsnorm_rope_cache(
            kv.to(D), gamma.to(D), cos.to(D), sin.to(D), index.to(D), kcn, vcn,
            cache_mode="Norm")
        k, v = kv_ref(kv, gamma, cos, sin)
        wk, wv = kc.double(), vc.double()
        for b in range(B):
            for s in range(S):
                p = int(index[b, s])
                if p >= 0:
                    wk[b, 0, p] = k[b, 0, s]
                    wv[b, 0, p] = v[b, 0, s]
        tol = 1e-2 if dtype == torch.bfloat16 else 2e-3
        close(r[0], wk, tol, tol)
        close(r[1], wv, tol, tol)

    return f


def kv_pa_case(mode, quant):
    def f():
        dtype = torch.float16
        kv, gamma, cos, sin = kv_inputs(dtype, 2)
        blocks, bs = 4, 32
        if mode.startswith("PA_BLK"):
            per = (S + bs - 1) // bs
            index = torch.tensor([2 * bs, 0])[: B * per]
        else:
            index = torch.tensor([5, 37, 127, 0, -1, 70])
        cdt = torch.int8 if quant else dtype
        kc = torch.zeros(blocks, bs, 1, DK, dtype=cdt)
        vc = torch.zeros(blocks, bs, 1, DV, dtype=cdt)
        kw = {}
        if quant:
            kw = dict(k_rope_scale=(torch.rand(DK) * 20 + 1).to(D),
                      c_kv_scale=(torch.rand(DV) * 20 + 1).to(D))
        r = torch_npu.npu_kv_rmsnorm_rope_cache(
            kv.to(D), gamma.to(D), cos.to(D), sin.to(D), index.to(D), kc.to(D), vc.to(D),
            cache_mode=mode, is_output_kv=True, **kw)
        k, v = kv_ref(kv, gamma, cos, sin)
        close(r[2], k, 2e-3, 2e-3)
        close(r[3], v, 2e-3, 2e-3)
        if quant:
            k = k * kw["k_rope_scale"].cpu().double()
            v = v * kw["c_kv_scale"].cpu().double()
        wk = kc.double().reshape(blocks * bs, DK)
        wv = vc.double().reshape(blocks * bs, DV)
        kt = k.reshape(B * S, DK)
        vt = v.reshape(B * S, DV)
        if mode.startswith("PA_BLK"):
            for b in range(B):
                start = int(index[b]) // bs * bs
                wk[start:start + S] = kt[b * S:(b + 1) * S]
                wv[start:start + S] = vt[b * S:(b + 1) * S]
        else:
            for t in range(B * S):
                p = int(index[t])
                if p >= 0:
                    wk[p] = kt[t]
                    wv[p] = vt[t]
        if quant:
            wk = wk.round().clamp(-128, 127)
            wv = wv.round().clamp(-128, 127)
        gk, gv = r[0].cpu().double(), r[1].cpu().double()
        if mode.endswith("NZ"):
            c0 = 32 if quant else 16
            # FRACTAL_NZ block [blocks, D/c0, bs, c0] back to [blocks, bs, D]
            gk = gk.reshape(blocks, DK // c0, bs, c0).permute(0, 2, 1, 3).reshape(blocks * bs, DK)
            gv = gv.reshape(blocks, DV // c0, bs, c0).permute(0, 2, 1, 3).reshape(blocks * bs, DV)
        else:
            gk, gv = gk.reshape(blocks * bs, DK), gv.reshape(blocks * bs, DV)
        if quant:
            # one int8 step where the f32 product sits on a rounding boundary
            assert (gk - wk).abs().max() <= 1 and (gv - wv).abs().max() <= 1, "quantized cache"
            assert (gk != wk).double().mean() < 0.01 and (gv != wv).double().mean() < 0.01
        else:
            close(gk, wk, 2e-3, 2e-3)
            close(gv, wv, 2e-3, 2e-3)

    return f


def kv_bad_cos():
    kv, gamma, cos, sin = kv_inputs(torch.float16, 3)
    kc = torch.zeros(B, 1, 4, DK, dtype=torch.float16).to(D)
    vc = torch.zeros(B, 1, 4, DV, dtype=torch.float16).to(D)
    cos = cos[..., :32]
    sin = sin[..., :32]
    expect_error(lambda: torch_npu.npu_kv_rmsnorm_rope_cache(
        kv.to(D), gamma.to(D), cos.to(D), sin.to(D), torch.zeros(B, S, dtype=torch.long).to(D),
        kc, vc), "561002", ["Dk"])


case("kv_rmsnorm_rope_cache_norm_f16", kv_norm_case(torch.float16))
case("kv_rmsnorm_rope_cache_norm_bf16", kv_norm_case(torch.bfloat16))
case("kv_rmsnorm_rope_cache_pa_bnsd", kv_pa_case("PA_BNSD", False))
case("kv_rmsnorm_rope_cache_pa_nz", kv_pa_case("PA_NZ", False))
case("kv_rmsnorm_rope_cache_pa_blk_bnsd", kv_pa_case("PA_BLK_BNSD", False))
case("kv_rmsnorm_rope_cache_pa_bnsd_int8", kv_pa_case("PA_BNSD", True))
case("kv_rmsnorm_rope_cache_pa_nz_int8", kv_pa_case("PA_NZ", True))
case("kv_rmsnorm_rope_cache_pa_blk_nz_int8", kv_pa_case("PA_BLK_NZ", True))
case("kv_rmsnorm_rope_cache_bad_cos", kv_bad_cos)


# ---------------------------------------------------------------------------------------
# vocabulary-parallel cross entropy

M, H, V = 20, 32, 160


def ce_inputs(seed, dtype=torch.float16):
    torch.manual_seed(seed)
    x = torch.randn(M, H, dtype=dtype)
    w = torch.randn(V, H, dtype=dtype) * 0.3
    return x, w


def online_max_sum(return_logits, tdtype):
    def f():
        x, w = ce_inputs(4)
        start, end = 100, 100 + V - 20
        t = torch.randint(0, 400, (M,), dtype=tdtype)
        t[0], t[1], t[2] = start, end - 1, end
        r = torch_npu.npu_fused_linear_online_max_sum(
            x.to(D), w.to(D), t.to(D), start, end, return_logits=return_logits)
        lg = x.double() @ w.double().t()
        mx = lg.max(-1).values
        sub = lg - mx[:, None]
        mask = (t < start) | (t >= end)
        mt = torch.where(mask, 0, t - start)
        pred = torch.where(mask, 0.0, sub[torch.arange(M), mt.long()])
        bits = torch.cat([mask, (torch.zeros(8 * ((M + 7) // 8) - M) < start)
                          | (torch.zeros(8 * ((M + 7) // 8) - M) >= end)]).view(-1, 8)
        packed = (bits.long() << torch.arange(8)).sum(1)
        close(r[0], mx, 1e-4, 1e-4)
        close(r[1], torch.exp(sub).sum(-1), 1e-4, 1e-4)
        close(r[2], pred, 1e-4, 1e-4)
        assert r[3].dtype == torch.uint8 and torch.equal(r[3].cpu().long(), packed), (r[3], packed)
        assert r[4].dtype == tdtype and torch.equal(r[4].cpu().long(), mt.long())
        if return_logits:
            close(r[5], lg, 2e-3, 2e-3)

    return f


def online_bad_range():
    x, w = ce_inputs(5)
    t = torch.zeros(M, dtype=torch.int32)
    expect_error(lambda: torch_npu.npu_fused_linear_online_max_sum(
        x.to(D), w.to(D), t.to(D), 10, 5), "161002", ["vocabEndIndex"])


def ce_loss(with_logits):
    def f():
        torch.manual_seed(6)
        lg = torch.randn(M, V) * 3
        mx = lg.max(-1).values
        se = torch.exp(lg - mx[:, None]).sum(-1)
        t = torch.randint(0, V, (M,))
        pred = (lg - mx[:, None])[torch.arange(M), t]
        kw = {"vocab_parallel_logits": lg.half().to(D)} if with_logits else {}
        loss, sm = torch_npu.npu_fused_cross_entropy_loss_with_max_sum(
            mx.to(D), se.to(D), pred.to(D), **kw)
        want = torch.nn.functional.cross_entropy(lg.double(), t, reduction="none")
        close(loss, want, 1e-5, 1e-5)
        if with_logits:
            lh = lg.half().double()
            close(sm, torch.exp(lh - mx.double()[:, None]) / se.double()[:, None], 1e-5, 1e-6)

    return f


def ce_bad_smoothing():
    a = torch.rand(4).to(D)
    expect_error(lambda: torch_npu.npu_fused_cross_entropy_loss_with_max_sum(
        a, a + 1, a, label_smoothing=0.1), "161002", ["labelSmoothing"])


def ce_backward(mode):
    """End to end: online max sum -> loss -> backward, against torch autograd on
    cross_entropy(x @ wᵀ); a masked row (target on another rank) has no target term."""

    def f():
        x, w = ce_inputs(7)
        start, end = 0, V
        t = torch.randint(0, V, (M,), dtype=torch.int64)
        t[3] = V + 5  # masked: outside this rank's vocabulary
        xn, wn, tn = x.to(D), w.to(D), t.to(D)
        mx, se, pred, tm, mt, lg = torch_npu.npu_fused_linear_online_max_sum(
            xn, wn, tn, start, end, return_logits=(mode == "softmax"))
        loss, sm = torch_npu.npu_fused_cross_entropy_loss_with_max_sum(
            mx, se, pred, vocab_parallel_logits=lg if mode == "softmax" else None)
        g = torch.rand(M)
        kw = {"softmax": sm} if mode == "softmax" else {"logits_max": mx, "sum_exp_logits": se}
        gi, gw = torch_npu.npu_fused_linear_cross_entropy_loss_with_max_sum_backward(
            g.to(D), xn, wn, tm, mt, **kw)
        xd = x.double().requires_grad_()
        wd = w.double().requires_grad_()
        logits = xd @ wd.t()
        lse = torch.logsumexp(logits, -1)
        valid = t < V
        picked = logits[torch.arange(M), torch.where(valid, t, 0)]
        # a masked row keeps ln(sum_exp) - 0 = lse - max, the max held constant
        ref_loss = lse - torch.where(valid, picked, logits.max(-1).values.detach())
        close(loss, ref_loss.detach(), 2e-3, 2e-3)
        (ref_loss * g.double()).sum().backward()
        close(gi, xd.grad, 2e-2, 2e-2)
        close(gw, wd.grad, 2e-2, 2e-2)

    return f


def ce_backward_small_vocab():
    x = torch.randn(4, 16, dtype=torch.float16).to(D)
    w = torch.randn(64, 16, dtype=torch.float16).to(D)
    expect_error(lambda: torch_npu.npu_fused_linear_cross_entropy_loss_with_max_sum_backward(
        torch.rand(4).to(D), x, w, torch.zeros(1, dtype=torch.uint8).to(D),
        torch.zeros(4, dtype=torch.int32).to(D), softmax=torch.rand(4, 64).to(D)),
        "161002", ["weight.size(0)"])


case("online_max_sum_logits_i32", online_max_sum(True, torch.int32))
case("online_max_sum_i64", online_max_sum(False, torch.int64))
case("online_max_sum_bad_range", online_bad_range)
case("ce_loss_with_max_sum", ce_loss(False))
case("ce_loss_with_max_sum_softmax", ce_loss(True))
case("ce_loss_bad_smoothing", ce_bad_smoothing)
case("ce_backward_softmax", ce_backward("softmax"))
case("ce_backward_max_sum", ce_backward("max_sum"))
case("ce_backward_small_vocab", ce_backward_small_vocab)


# ---------------------------------------------------------------------------------------
# npu_recurrent_gated_delta_rule


def rgdr_ref(q, k, v, state, beta, scale, lens, ssm, acc=None, g=None):
    q, k, v, beta = (x.double() for x in (q, k, v, beta))
    st = state.double().clone()
    T, nk, dk = q.shape
    nv, dv = v.shape[1:]
    out = torch.zeros(T, nv, dv, dtype=torch.float64)
    start = 0
    for i, ln in enumerate(lens):
        a = 1 if acc is None else int(acc[i])
        init = st[int(ssm[start + a - 1])].clone()
        for h in range(nv):
            S = init[h].clone()
            kh = h // (nv // nk)
            for t in range(start, start + ln):
                if g is not None:
                    S = S * torch.exp(g[t, h].double())
                S = S + beta[t, h] * torch.outer(v[t, h] - S @ k[t, kh], k[t, kh])
                st[int(ssm[t]), h] = S
                out[t, h] = S @ (q[t, kh] * scale)
        start += ln
    return out, st


def rgdr_case(with_g, with_acc):
    def f():
        torch.manual_seed(8)
        lens = [2, 3, 1]
        T, nk, nv, dk, dv = sum(lens), 1, 2, 16, 8
        blocks = T + 2
        bf = torch.bfloat16
        q = torch.randn(T, nk, dk, dtype=bf)
        k = torch.nn.functional.normalize(torch.randn(T, nk, dk), dim=-1).to(bf)
        v = torch.randn(T, nv, dv, dtype=bf)
        beta = torch.rand(T, nv, dtype=bf)
        state = (torch.randn(blocks, nv, dv, dk) * 0.5).to(bf)
        ssm = torch.tensor([7, 0, 3, 1, 2, 5], dtype=torch.int32)
        g = -torch.rand(T, nv) if with_g else None
        acc = torch.tensor([2, 1, 1], dtype=torch.int32) if with_acc else None
        scale = dk ** -0.5
        sn = state.to(D)
        kw = {}
        if with_g:
            kw["g"] = g.to(D)
        if with_acc:
            kw["num_accepted_tokens"] = acc.to(D)
        out = torch_npu.npu_recurrent_gated_delta_rule(
            q.to(D), k.to(D), v.to(D), sn, beta=beta.to(D), scale=scale,
            actual_seq_lengths=torch.tensor(lens, dtype=torch.int32).to(D),
            ssm_state_indices=ssm.to(D), **kw)
        want, want_st = rgdr_ref(q, k, v, state, beta, scale, lens, ssm, acc, g)
        close(out, want, 2e-2, 2e-2)
        close(sn, want_st, 2e-2, 2e-2)

    return f


def rgdr_bad_gk():
    T, dk = 2, 16
    q = torch.randn(T, 1, dk, dtype=torch.bfloat16).to(D)
    v = torch.randn(T, 1, 8, dtype=torch.bfloat16).to(D)
    st = torch.zeros(T, 1, 8, dk, dtype=torch.bfloat16).to(D)
    expect_error(lambda: torch_npu.npu_recurrent_gated_delta_rule(
        q, q, v, st, beta=torch.rand(T, 1, dtype=torch.bfloat16).to(D), scale=0.25,
        actual_seq_lengths=torch.tensor([2], dtype=torch.int32).to(D),
        ssm_state_indices=torch.arange(T, dtype=torch.int32).to(D),
        gk=torch.zeros(T, 1, dk).to(D)), "161002", ["gk"])


case("recurrent_gated_delta_rule", rgdr_case(False, False))
case("recurrent_gated_delta_rule_g_accepted", rgdr_case(True, True))
case("recurrent_gated_delta_rule_gk_rejected", rgdr_bad_gk)


def chunk_gdr_case(with_g):
    def f():
        torch.manual_seed(9)
        lens = [5, 3]
        T, nk, nv, dk, dv = sum(lens), 2, 4, 16, 8
        bf = torch.bfloat16
        q = torch.nn.functional.normalize(torch.randn(T, nk, dk), dim=-1).to(bf)
        k = torch.nn.functional.normalize(torch.randn(T, nk, dk), dim=-1).to(bf)
        v = torch.randn(T, nv, dv, dtype=bf)
        beta = (torch.rand(T, nv) * 0.9 + 0.05).to(bf)
        s0 = (torch.randn(len(lens), nv, dv, dk) * 0.5).to(bf)
        g = -torch.rand(T, nv) if with_g else None
        kw = {"g": g.to(D)} if with_g else {}
        out, fin = torch_npu.npu_chunk_gated_delta_rule(
            q.to(D), k.to(D), v.to(D), beta=beta.to(D), initial_state=s0.to(D),
            actual_seq_lengths=torch.tensor(lens, dtype=torch.int32).to(D), scale=0.5, **kw)
        # the recurrent reference with state slot i for sequence i's tokens
        ssm = torch.cat([torch.full((n,), i) for i, n in enumerate(lens)])
        want, want_st = rgdr_ref(q, k, v, s0, beta, 0.5, lens, ssm, None, g)
        close(out, want, 2e-2, 2e-2)
        close(fin, want_st, 2e-2, 2e-2)

    return f


def chunk_gdr_bad_heads():
    q = torch.randn(4, 3, 16, dtype=torch.bfloat16).to(D)
    v = torch.randn(4, 4, 8, dtype=torch.bfloat16).to(D)
    expect_error(lambda: torch_npu.npu_chunk_gated_delta_rule(
        q, q, v, beta=torch.rand(4, 4, dtype=torch.bfloat16).to(D),
        initial_state=torch.zeros(1, 4, 8, 16, dtype=torch.bfloat16).to(D),
        actual_seq_lengths=torch.tensor([4], dtype=torch.int32).to(D), scale=1.0),
        "161002", ["Nv"])


case("chunk_gated_delta_rule", chunk_gdr_case(False))
case("chunk_gated_delta_rule_g", chunk_gdr_case(True))
case("chunk_gated_delta_rule_bad_heads", chunk_gdr_bad_heads)

print(f"llm_ops31: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
