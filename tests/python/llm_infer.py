"""torch_npu's inference helpers of large-model serving against CPU torch references written
from the operator documentation: npu_rotary_mul through aclnnRotaryPositionEmbeddingV2 (half
and interleave, and with a rotation matrix), npu_interleave_rope (aclnnInterleaveRope) and
npu_mrope (aclnnRopeWithSinCosCacheV2: RoPE and MRoPE, GPT-NeoX and GPT-J forms, the
interleaved cache mode), npu_scatter_pa_kv_cache (Norm and PA_NZ layouts) and
npu_gather_pa_kv_cache (lengths or a running sum, block offsets), npu_top_k_top_p_sample
(aclnnTopKTopPSample: top-k, top-p, the q-weighted sample), npu_moe_re_routing
(aclnnMoeReRouting: tokens received rank-major reordered expert-major), npu_moe_init_routing_v2
(aclnnMoeInitRoutingV3: drop-less, active, drop/pad, static quantisation, both index types). Prints PASS/FAIL per case and exits 1 when any case fails.

Tolerances: float32 1e-5 (the emulator computes in float64 and rounds once); float16 and
bfloat16 against the float32 reference of the rounded inputs, to the dtype's resolution.
"""
import sys

import torch
import torch_npu  # noqa: F401

FAILED = []
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def rnd(*shape, seed=0, dtype=torch.float32):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else repr(e))


def close(npu, ref, dtype=torch.float32):
    t = TOL[dtype]
    assert npu.dtype == dtype, f"dtype {npu.dtype}, expected {dtype}"
    torch.testing.assert_close(npu.cpu().float(), ref.float(), rtol=t, atol=t)


# ---------------------------------------------------------------- npu_rotary_mul (V2)


def rotary_ref(x, c, s, mode, rotate=None):
    x, c, s = x.float(), c.float(), s.float()
    if rotate is not None:
        rot = x @ rotate.float()
    elif mode == "half":
        x1, x2 = x.chunk(2, -1)
        rot = torch.cat((-x2, x1), -1)
    else:
        rot = torch.stack((-x[..., 1::2], x[..., 0::2]), -1).reshape(x.shape)
    return x * c + rot * s


def rotary(mode, dtype, xs, cs, with_rotate):
    def f():
        x, c, s = rnd(*xs, seed=1, dtype=dtype), rnd(*cs, seed=2, dtype=dtype), rnd(*cs, seed=3, dtype=dtype)
        r = rnd(xs[-1], xs[-1], seed=4, dtype=dtype) if with_rotate else None
        o = torch_npu.npu_rotary_mul(x.npu(), c.npu(), s.npu(), rotary_mode=mode,
                                     rotate=r.npu() if with_rotate else None)
        close(o, rotary_ref(x, c, s, mode, r).to(dtype), dtype)
    return f


case("rotary_mul_half_bnsd", rotary("half", torch.float32, (2, 3, 6, 16), (1, 1, 6, 16), False))
case("rotary_mul_interleave_bsnd", rotary("interleave", torch.float32, (2, 6, 3, 16), (1, 6, 1, 16), False))
case("rotary_mul_half_fp16", rotary("half", torch.float16, (2, 6, 3, 32), (2, 6, 1, 32), False))
case("rotary_mul_rotate", rotary("half", torch.float32, (2, 4, 3, 16), (1, 4, 1, 16), True))
case("rotary_mul_rotate_bf16", rotary("interleave", torch.bfloat16, (1, 2, 5, 32), (1, 1, 5, 32), True))


def rotary_mixed():
    # float32 cos/sin with a float16 x: torch_npu casts them to x's dtype first
    x, c, s = rnd(2, 2, 4, 16, seed=5, dtype=torch.float16), rnd(1, 1, 4, 16, seed=6), rnd(1, 1, 4, 16, seed=7)
    o = torch_npu.npu_rotary_mul(x.npu(), c.npu(), s.npu())
    close(o, rotary_ref(x, c.half(), s.half(), "half").half(), torch.float16)


case("rotary_mul_mixed_dtypes", rotary_mixed)

# ---------------------------------------------------------------- npu_interleave_rope


def interleave_rope(dtype, cs):
    def f():
        x = rnd(2, 3, 4, 64, seed=8, dtype=dtype)
        c, s = rnd(*cs, seed=9, dtype=dtype), rnd(*cs, seed=10, dtype=dtype)
        o = torch_npu.npu_interleave_rope(x.npu(), c.npu(), s.npu())
        q = x.float().reshape(2, 3, 4, 32, 2).transpose(-1, -2).reshape(2, 3, 4, 64)
        q1, q2 = q.chunk(2, -1)
        ref = q * c.float() + torch.cat((-q2, q1), -1) * s.float()
        close(o, ref.to(dtype), dtype)
    return f


case("interleave_rope_fp16_b1sd", interleave_rope(torch.float16, (2, 1, 4, 64)))
case("interleave_rope_bf16_b11d", interleave_rope(torch.bfloat16, (2, 1, 1, 64)))

# ---------------------------------------------------------------- npu_mrope


def mrope_ref(positions, x, cache, head_size, section, neox, interleaved):
    rd = cache.shape[1]
    h = rd // 2
    cs = cache.float()[positions]  # [T, rd] or [m, T, rd]
    cos, sin = cs[..., :h], cs[..., h:]
    if positions.dim() == 2:
        if interleaved:
            c0, s0 = cos[0].clone(), sin[0].clone()
            for t in (1, 2):
                idx = slice(t, section[t] * 3, 3)
                c0[..., idx], s0[..., idx] = cos[t][..., idx], sin[t][..., idx]
            cos, sin = c0, s0
        else:
            cos = torch.cat([m[i] for i, m in enumerate(cos.split(section, -1))], -1)
            sin = torch.cat([m[i] for i, m in enumerate(sin.split(section, -1))], -1)
    T = x.shape[0]
    xh = x.float().reshape(T, -1, head_size)
    rot, rest = xh[..., :rd], xh[..., rd:]
    c, s = cos[:, None, :], sin[:, None, :]
    if neox:
        x1, x2 = rot.chunk(2, -1)
        out = torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), -1)
    else:
        x1, x2 = rot[..., ::2], rot[..., 1::2]
        out = torch.stack((x1 * c - x2 * s, x2 * c + x1 * s), -1).reshape(rot.shape)
    return torch.cat((out, rest), -1).reshape(x.shape)


def mrope(dtype, T, nq, nk, hs, rd, section=None, mode="half", cache_mode="default"):
    def f():
        max_seq = 11
        m = len(section) if section else 0
        shape = (m, T) if m else (T,)
        pos = torch.randint(0, max_seq, shape, generator=torch.Generator().manual_seed(11))
        q, k = rnd(T, nq * hs, seed=12, dtype=dtype), rnd(T, nk * hs, seed=13, dtype=dtype)
        cache = rnd(max_seq, rd, seed=14, dtype=dtype)
        kw = {"rotary_mode": mode}
        if section:
            kw["mrope_section"] = section
        if cache_mode != "default":
            kw["cache_mode"] = cache_mode
        qo, ko = torch_npu.npu_mrope(pos.npu(), q.npu(), k.npu(), cache.npu(), hs, **kw)
        neox, inter = mode == "half", cache_mode == "interleave"
        close(qo, mrope_ref(pos, q, cache, hs, section, neox, inter).to(dtype), dtype)
        close(ko, mrope_ref(pos, k, cache, hs, section, neox, inter).to(dtype), dtype)
    return f


case("mrope_rope_neox", mrope(torch.float32, 5, 4, 2, 32, 32))
case("mrope_rope_gptj_partial", mrope(torch.float32, 4, 2, 1, 64, 32, mode="interleave"))
case("mrope_rope_fp16", mrope(torch.float16, 3, 2, 2, 64, 64))
case("mrope_sections_3", mrope(torch.float32, 6, 2, 1, 64, 64, section=[8, 12, 12]))
case("mrope_sections_4_bf16", mrope(torch.bfloat16, 3, 2, 1, 128, 128, section=[16, 16, 16, 16]))
case("mrope_interleaved_cache", mrope(torch.float32, 4, 2, 2, 128, 128, section=[24, 20, 20],
                                      cache_mode="interleave"))

# ---------------------------------------------------------------- paged KV caches


def pa_index(cs, nz, blk, pos, width):
    """Flat offsets of one token slot's elements in a paged cache of shape cs."""
    e = torch.arange(width)
    if nz:
        return ((blk * cs[1] + e // cs[3]) * cs[2] + pos) * cs[3] + e % cs[3]
    return (blk * cs[1] + pos) * width + e


def scatter_pa(mode, dtype):
    def f():
        T, nh, khs, vhs, nb, bs = 6, 2, 32, 16, 3, 4
        nz = mode == "PA_NZ"
        kcs = (nb, nh * khs // 16, bs, 16) if nz else (nb, bs, nh, khs)
        vcs = (nb, nh * vhs // 16, bs, 16) if nz else (nb, bs, nh, vhs)
        k, v = rnd(T, nh, khs, seed=21, dtype=dtype), rnd(T, nh, vhs, seed=22, dtype=dtype)
        kc, vc = rnd(*kcs, seed=23, dtype=dtype), rnd(*vcs, seed=24, dtype=dtype)
        slots = torch.tensor([5, 0, 11, 3, 8, 6], dtype=torch.int32)
        kcn, vcn = kc.npu(), vc.npu()
        torch_npu.npu_scatter_pa_kv_cache(k.npu(), v.npu(), kcn, vcn, slots.npu(), cache_mode=mode)
        wk, wv = kc.flatten().clone(), vc.flatten().clone()
        for i, sl in enumerate(slots.tolist()):
            wk[pa_index(kcs, nz, sl // bs, sl % bs, nh * khs)] = k[i].flatten()
            wv[pa_index(vcs, nz, sl // bs, sl % bs, nh * vhs)] = v[i].flatten()
        assert torch.equal(kcn.cpu().flatten(), wk), "key cache differs"
        assert torch.equal(vcn.cpu().flatten(), wv), "value cache differs"
    return f


case("scatter_pa_kv_cache_norm", scatter_pa("Norm", torch.float16))
case("scatter_pa_kv_cache_pa_nz", scatter_pa("PA_NZ", torch.bfloat16))


def gather_pa(cumsum, with_offset):
    def f():
        nh, hs, nb, bs = 2, 16, 6, 4
        kc, vc = rnd(nb, bs, nh, hs, seed=31, dtype=torch.float16), rnd(nb, bs, nh, hs, seed=32, dtype=torch.float16)
        tables = torch.tensor([[5, 1, 3], [0, 2, 4]], dtype=torch.int32)
        lens = [6, 3]
        offs = [4, 0] if with_offset else [0, 0]
        sl = torch.tensor([0, 6, 9] if cumsum else lens, dtype=torch.int32)
        T = sum(lens)
        k, v = torch.zeros(T, nh, hs, dtype=torch.float16).npu(), torch.zeros(T, nh, hs, dtype=torch.float16).npu()
        kw = {"is_seq_lens_cumsum": cumsum}
        if with_offset:
            kw["seq_offset"] = torch.tensor(offs, dtype=torch.int32).npu()
        torch_npu.npu_gather_pa_kv_cache(kc.npu(), vc.npu(), tables.npu(), sl.npu(), k, v, **kw)
        rows_k, rows_v = [], []
        for b, n in enumerate(lens):
            for t in range(n):
                blk = tables[b, offs[b] // bs + t // bs]
                rows_k.append(kc[blk, t % bs])
                rows_v.append(vc[blk, t % bs])
        assert torch.equal(k.cpu(), torch.stack(rows_k)), "key differs"
        assert torch.equal(v.cpu(), torch.stack(rows_v)), "value differs"
    return f


case("gather_pa_kv_cache", gather_pa(False, False))
case("gather_pa_kv_cache_cumsum_offset", gather_pa(True, True))

# ---------------------------------------------------------------- npu_top_k_top_p_sample


def topkp_ref(logits, ks, ps, q, eps):
    x = logits.double()
    idx, kept = [], torch.full(x.shape, float("-inf"), dtype=torch.float64)
    for b in range(x.shape[0]):
        row = x[b]
        order = sorted(range(row.numel()), key=lambda i: (-row[i].item(), i))
        k = int(ks[b])
        if 1 <= k <= min(row.numel(), 1024):
            order = order[:k]
        p = float(ps[b])
        if p < 1:
            pr = torch.softmax(row[order], 0)
            before, n = 0.0, 0
            while n < len(order) and before <= p:
                before += pr[n].item()
                n += 1
            order = order[:max(n, 1)]
        pick = order[0]
        if q is not None:
            pr = torch.softmax(row[order], 0)
            sc = pr / (q[b, :len(order)].double().abs() + eps)  # q aligns with the kept candidates
            pick = order[int(torch.argmax(sc))]
        idx.append(pick)
        kept[b, order] = row[order]
    return torch.tensor(idx), kept


def top_k_top_p(dtype, ks, ps, with_q):
    def f():
        B, V = len(ks), 48
        logits = rnd(B, V, seed=41, dtype=dtype)
        k = torch.tensor(ks, dtype=torch.int32)
        p = torch.tensor(ps).to(dtype)
        q = torch.rand(B, V, generator=torch.Generator().manual_seed(42)) + 0.05 if with_q else None
        idx, kept = torch_npu.npu_top_k_top_p_sample(logits.npu(), k.npu(), p.npu(),
                                                     q=q.npu() if with_q else None, is_need_logits=True)
        widx, wkept = topkp_ref(logits, ks, p.double(), q, 1e-8)
        assert torch.equal(idx.cpu(), widx), f"indices {idx.cpu().tolist()} != {widx.tolist()}"
        assert torch.equal(kept.cpu(), wkept.float()), "kept logits differ"
    return f


case("top_k_top_p_sample_argmax", top_k_top_p(torch.float16, [0, 0], [1.0, 1.0], False))
case("top_k_top_p_sample_q", top_k_top_p(torch.float16, [5, 0, 12], [1.0, 0.5, 0.8], True))
case("top_k_top_p_sample_bf16", top_k_top_p(torch.bfloat16, [3, 40], [0.9, 0.3], True))


# ---------------------------------------------------------------- npu_moe_re_routing


def re_routing(dtype, n, e, h, with_scales, count_dtype):
    def f():
        counts = torch.tensor([[(r * 3 + x * 2 + 1) % 4 for x in range(e)] for r in range(n)], dtype=count_dtype)
        a = int(counts.sum())
        if dtype == torch.int8:
            tokens = torch.randint(-128, 128, (a, h), generator=torch.Generator().manual_seed(51), dtype=torch.int8)
        else:
            tokens = rnd(a, h, seed=51, dtype=dtype)
        scales = rnd(a, seed=52) if with_scales else None
        pt, ps, idx, num = torch_npu.npu_moe_re_routing(
            tokens.npu(), counts.npu(), per_token_scales=scales.npu() if with_scales else None)
        # reference: blocks laid out rank by rank, expert by expert; gathered expert by expert
        offs = torch.cumsum(counts.flatten(), 0) - counts.flatten()
        widx = torch.cat([torch.arange(int(offs[r * e + x]), int(offs[r * e + x]) + int(counts[r, x]))
                          for x in range(e) for r in range(n)])
        assert torch.equal(idx.cpu().long(), widx), f"permute_token_idx {idx.cpu().tolist()} != {widx.tolist()}"
        assert torch.equal(pt.cpu(), tokens[widx]), "permute_tokens differ"
        assert num.dtype == count_dtype and torch.equal(num.cpu(), counts.sum(0)), f"expert_token_num {num.cpu()}"
        if with_scales:
            assert torch.equal(ps.cpu(), scales[widx]), "permute_per_token_scales differ"
    return f


case("moe_re_routing_fp16", re_routing(torch.float16, 2, 3, 8, False, torch.int32))
case("moe_re_routing_bf16_scales", re_routing(torch.bfloat16, 4, 2, 16, True, torch.int64))
case("moe_re_routing_int8_scales", re_routing(torch.int8, 3, 4, 32, True, torch.int32))


# ---------------------------------------------------------------- npu_moe_init_routing_v2


def init_routing_ref(x, ei, k, start, end, active, cap, expert_num):
    """(sorted sources, position of each sorted entry or -1) written from aclnnMoeInitRoutingV3."""
    flat = ei.flatten()
    sel = ((flat >= start) & (flat < end)).nonzero().flatten()
    order = sel[torch.argsort(flat[sel], stable=True)]
    pos = []
    fill = [0] * expert_num
    for i, j in enumerate(order.tolist()):
        if cap > 0:
            e = int(flat[j])
            pos.append(e * cap + fill[e] if fill[e] < cap else -1)
            fill[e] += 1
        else:
            pos.append(i if active == 0 or i < active else -1)
    return order, pos


def init_routing(name, dtype, n, h, k, expert_num, rng, active, cap, tok_type, quant, row_idx_type):
    def f():
        x = rnd(n, h, seed=61, dtype=dtype)
        ei = torch.randint(0, expert_num, (n, k), generator=torch.Generator().manual_seed(62), dtype=torch.int32)
        start, end = rng
        kw = {}
        if quant == 0:
            scale, offset = torch.tensor([3.0]), torch.tensor([1.5])
            kw = dict(scale=scale.npu(), offset=offset.npu())
        ex, eri, cnt, _ = torch_npu.npu_moe_init_routing_v2(
            x.npu(), ei.npu(), active_num=active, expert_capacity=cap, expert_num=expert_num,
            drop_pad_mode=1 if cap > 0 else 0, expert_tokens_num_type=tok_type, expert_tokens_num_flag=True,
            quant_mode=quant, active_expert_range=[start, end], row_idx_type=row_idx_type, **kw)
        order, pos = init_routing_ref(x, ei, k, start, end, active, cap, expert_num)
        flat = ei.flatten().long()
        counts = torch.bincount(flat[order] - start, minlength=end - start)
        want_cnt = counts if tok_type == 1 else torch.cumsum(counts, 0)
        assert torch.equal(cnt.cpu()[: end - start], want_cnt), f"counts {cnt.cpu().tolist()} != {want_cnt.tolist()}"
        if row_idx_type == 0:
            w = torch.full((n * k,), -1, dtype=torch.int32)
            for i, j in enumerate(order.tolist()):
                w[j] = pos[i] if cap > 0 else i
            assert torch.equal(eri.cpu(), w), f"expanded_row_idx {eri.cpu().tolist()} != {w.tolist()}"
        else:
            assert torch.equal(eri.cpu()[: len(order)], order.int()), "scatter index"
        rows = x.float()
        if quant == 0:
            rows = torch.clamp(torch.round(rows * 3.0 + 1.5), -128, 127)
        got = ex.cpu().float().reshape(-1, h)
        want = torch.zeros_like(got) if cap > 0 else got.clone()
        for i, j in enumerate(order.tolist()):
            if pos[i] >= 0:
                want[pos[i]] = rows[j // k]
        assert ex.dtype == (torch.int8 if quant == 0 else dtype), ex.dtype
        assert torch.equal(got, want), "expanded_x differs"
    return f


case("moe_init_routing_v2_range_count", init_routing("r", torch.float32, 6, 16, 4, 12, (3, 9), 24, -1, 1, -1, 0))
case("moe_init_routing_v2_active_cumsum_scatter",
     init_routing("a", torch.float16, 5, 8, 3, 6, (0, 6), 9, -1, 0, -1, 1))
case("moe_init_routing_v2_drop_pad", init_routing("d", torch.bfloat16, 8, 8, 2, 4, (0, 4), 16, 3, 1, -1, 0))
case("moe_init_routing_v2_static_quant", init_routing("q", torch.float16, 4, 32, 2, 4, (0, 4), 8, -1, 1, 0, 0))

print(f"llm_infer: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
