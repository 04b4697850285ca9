"""Sparse attention through torch_npu against float64 CPU references of the
documented formulas: npu_lightning_indexer (aclnnLightningIndexer: per query token the
sparse_count key positions of highest Σ_n w·relu(q_n·k), layouts BSND/TND/PA_BSND, sparse
modes 0 and 3, actual lengths) and npu_sparse_flash_attention (aclnnSparseFlashAttention:
softmax(scale·(q·k + q_rope·k_rope))·v over the selected positions or blocks, softmax
max/sum) and npu_block_sparse_attention (aclnnBlockSparseAttention: softmax(scale·q·kᵀ)·v over
the key blocks block_sparse_mask selects per query block, TND/BNSD/BSND, actual lengths,
softmax_lse) and npu_fused_floyd_attention / _backward (aclnnFusedFloydAttention(Grad):
softmax over k of scale·(q·k1[n,k] + q·k2[k,m]) applied to v1[n,k] + v2[k,m], checked with
float64 autograd). The torch_npu API pages' examples run as written. Each operator also has error
cases that expect the documented status code and a message naming the argument. Prints
PASS/FAIL per case and exits 1 when any fails.
"""
import random
import sys

import numpy as np
import torch
import torch_npu

D = "npu"
FAILED = []
BIG = 9223372036854775807


def case(name, f):
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else repr(e))


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


def i32(x):
    return torch.tensor(x, dtype=torch.int32)


# ---------------------------------------------------------------------------------------
# Batches: the query tokens (flat rows of [rows, N1, D]) and the key rows of the valid
# positions (flat rows of the key seen as [R, N2, D]) of each batch, from the layouts.


def batches(q, k, lay_q, lay_k, act_q, act_k, table):
    if lay_q == "BSND":
        b, s1 = q.shape[0], q.shape[1]
        qr = [list(range(i * s1, i * s1 + (act_q[i] if act_q is not None else s1)))
              for i in range(b)]
    else:
        b = len(act_q)
        ends = [0] + list(act_q)
        qr = [list(range(ends[i], ends[i + 1])) for i in range(b)]
    if lay_k == "BSND":
        s2 = k.shape[1]
        kr = [list(range(i * s2, i * s2 + (act_k[i] if act_k is not None else s2)))
              for i in range(b)]
    elif lay_k == "TND":
        ends = [0] + list(act_k)
        kr = [list(range(ends[i], ends[i + 1])) for i in range(b)]
    else:
        bs = k.shape[1]
        kr = [[int(table[i][p // bs]) * bs + p % bs for p in range(act_k[i])] for i in range(b)]
    return list(zip(qr, kr))


def visible(mode, s1, s2, i):
    return max(0, min(s2, s2 - s1 + i + 1)) if mode == 3 else s2


# ---------------------------------------------------------------------------------------
# npu_lightning_indexer


def li_scores(q, k, w, lay_q, lay_k, act_q, act_k, table, mode):
    """{(token, position): score} of every visible pair, and the batches."""
    n1, d = q.shape[-2], q.shape[-1]
    qf = q.double().reshape(-1, n1, d)
    kf = k.double().reshape(-1, k.shape[-2], d)[:, 0, :]
    wf = w.double().reshape(-1, n1)
    out = {}
    for qr, kr in batches(q, k, lay_q, lay_k, act_q, act_k, table):
        s1, s2 = len(qr), len(kr)
        if s2 == 0:
            continue
        keys = kf[kr]  # [s2, d]
        for i, t in enumerate(qr):
            vis = visible(mode, s1, s2, i)
            sc = (torch.relu(qf[t] @ keys[:vis].T) * wf[t][:, None]).sum(0)  # [vis]
            out[t] = sc
    return out


def check_li(idx, val, q, k, w, lay_q, lay_k, act_q, act_k, table, mode, count):
    ref = li_scores(q, k, w, lay_q, lay_k, act_q, act_k, table, mode)
    idx = idx.cpu().reshape(-1, count)
    rows = idx.shape[0]
    for t in range(rows):
        row = idx[t]
        if t not in ref:
            assert (row == -1).all(), f"row {t} should be all -1: {row[:8]}"
            continue
        sc = ref[t]
        n = min(count, sc.numel())
        assert (row[n:] == -1).all(), f"row {t}: {n} valid entries expected"
        got = row[:n].long()
        assert (got >= 0).all() and got.unique().numel() == n, f"row {t}: {got[:8]}"
        want = torch.sort(sc, descending=True, stable=True).values[:n]
        torch.testing.assert_close(sc[got], want, rtol=1e-9, atol=1e-9)
        if val is not None:
            v = val.cpu().reshape(-1, count)[t][:n].double()
            torch.testing.assert_close(v, want.to(val.dtype).double(), rtol=1e-2, atol=1e-2)


def li_bsnd_case(dtype, wdtype, mode, ret):
    def f():
        torch.manual_seed(1)
        b, s1, s2, n1, d, count = 2, 3, 40, 4, 128, 16
        q = torch.randn(b, s1, n1, d).to(dtype)
        k = torch.randn(b, s2, 1, d).to(dtype)
        w = torch.randn(b, s1, n1).to(wdtype)
        aq, ak = [3, 2], [40, 25]
        idx, val = torch_npu.npu_lightning_indexer(
            q.to(D), k.to(D), w.to(D), actual_seq_lengths_query=i32(aq).to(D),
            actual_seq_lengths_key=i32(ak).to(D), layout_query="BSND", layout_key="BSND",
            sparse_count=count, sparse_mode=mode, return_value=ret)
        assert idx.shape == (b, s1, 1, count) and idx.dtype == torch.int32, idx.shape
        check_li(idx, val if ret else None, q, k, w, "BSND", "BSND", aq, ak, None, mode, count)
    return f


def li_tnd():
    torch.manual_seed(2)
    n1, d, count = 8, 128, 12
    aq, ak = [2, 5, 6], [10, 30, 47]
    q = torch.randn(6, n1, d).to(torch.float16)
    k = torch.randn(47, 1, d).to(torch.float16)
    w = torch.randn(6, n1, dtype=torch.float32)
    idx, _ = torch_npu.npu_lightning_indexer(
        q.to(D), k.to(D), w.to(D), actual_seq_lengths_query=i32(aq).to(D),
        actual_seq_lengths_key=i32(ak).to(D), layout_query="TND", layout_key="TND",
        sparse_count=count, sparse_mode=3)
    assert idx.shape == (6, 1, count), idx.shape
    check_li(idx, None, q, k, w, "TND", "TND", aq, ak, None, 3, count)


def li_pa_tnd_query():
    torch.manual_seed(3)
    n1, d, count, bs = 16, 128, 64, 16
    aq, ak = [1, 3], [40, 70]
    q = torch.randn(3, n1, d).to(torch.bfloat16)
    k = torch.randn(12, bs, 1, d).to(torch.bfloat16)
    table = [[7, 2, 9, 0, 0], [1, 11, 3, 5, 4]]
    w = torch.randn(3, n1).to(torch.bfloat16)
    idx, _ = torch_npu.npu_lightning_indexer(
        q.to(D), k.to(D), w.to(D), actual_seq_lengths_query=i32(aq).to(D),
        actual_seq_lengths_key=i32(ak).to(D), block_table=i32(table).to(D),
        layout_query="TND", layout_key="PA_BSND", sparse_count=count, sparse_mode=3)
    check_li(idx, None, q, k, w, "TND", "PA_BSND", aq, ak, table, 3, count)


def li_page_example():
    # torch_npu's npu_lightning_indexer page, single-operator example, as written.
    b = 1
    s1 = 1
    s2 = 8192
    n1 = 64
    n2 = 1
    d = 128
    block_size = 256
    query = torch.tensor(np.random.uniform(-10, 10, (b, s1, n1, d))).to(torch.bfloat16).npu()
    key = torch.tensor(np.random.uniform(-10, 10, (b*(s2//block_size), block_size, n2, d))).to(torch.bfloat16).npu()
    weights = torch.tensor(np.random.uniform(-1, 1, (b, s1, n1))).to(torch.bfloat16).npu()
    actual_seq_lengths_query = torch.tensor(np.random.uniform(s1, s1, (b))).to(torch.int32).npu()
    actual_seq_lengths_key = torch.tensor(np.random.uniform(s2, s2, (b))).to(torch.int32).npu()
    block_table = torch.tensor([range(b*s2//block_size)], dtype=torch.int32).reshape(b, -1).npu()
    layout_query = 'BSND'
    layout_key = 'PA_BSND'
    sparse_count = 2048
    sparse_mode = 3
    sparse_indices, sparse_values = torch_npu.npu_lightning_indexer(
            query, key, weights, actual_seq_lengths_query=actual_seq_lengths_query,
            actual_seq_lengths_key=actual_seq_lengths_key, block_table=block_table, layout_query=layout_query,
            layout_key=layout_key, sparse_count=sparse_count, sparse_mode=sparse_mode)
    print(sparse_indices)
    assert sparse_indices.shape == (1, 1, 1, 2048)
    check_li(sparse_indices, None, query.cpu(), key.cpu(), weights.cpu(), "BSND", "PA_BSND",
             [s1], [s2], block_table.cpu().tolist(), 3, sparse_count)


def li_bad_key_heads():
    q = torch.randn(1, 2, 4, 128, dtype=torch.float16).to(D)
    k = torch.randn(1, 8, 2, 128, dtype=torch.float16).to(D)
    w = torch.randn(1, 2, 4, dtype=torch.float16).to(D)
    expect_error(lambda: torch_npu.npu_lightning_indexer(q, k, w, sparse_count=4),
                 "161002", ["aclnnLightningIndexer", "N2"])


def li_bad_sparse_count():
    q = torch.randn(1, 2, 4, 128, dtype=torch.float16).to(D)
    k = torch.randn(1, 8, 1, 128, dtype=torch.float16).to(D)
    w = torch.randn(1, 2, 4, dtype=torch.float16).to(D)
    expect_error(lambda: torch_npu.npu_lightning_indexer(q, k, w, sparse_count=2500),
                 "161002", ["sparseCount"])


case("li_bsnd_bf16_causal", li_bsnd_case(torch.bfloat16, torch.bfloat16, 3, False))
case("li_bsnd_f16_all_values", li_bsnd_case(torch.float16, torch.float32, 0, True))
case("li_tnd_f32_weights", li_tnd)
case("li_pa_bsnd_tnd_query", li_pa_tnd_query)
case("li_page_example", li_page_example)
case("li_bad_key_heads", li_bad_key_heads)
case("li_bad_sparse_count", li_bad_sparse_count)


# ---------------------------------------------------------------------------------------
# npu_sparse_flash_attention


def sfa_ref(q, k, v, idx, qr, kr, scale, sbs, lay_q, lay_k, act_q, act_k, table, mode):
    n1, d = q.shape[-2], q.shape[-1]
    qf = q.double().reshape(-1, n1, d)
    kf = k.double().reshape(-1, d)  # N2 = 1
    vf = v.double().reshape(-1, v.shape[-1])
    qrf = qr.double().reshape(-1, n1, qr.shape[-1]) if qr is not None else None
    krf = kr.double().reshape(-1, kr.shape[-1]) if kr is not None else None
    kc = idx.shape[-1]
    ix = idx.reshape(-1, kc)
    rows = qf.shape[0]
    out = torch.zeros(rows, n1, vf.shape[-1], dtype=torch.float64)
    mx = torch.full((rows, n1), float("-inf"), dtype=torch.float64)
    sm = torch.zeros(rows, n1, dtype=torch.float64)
    for qrows, krows in batches(q, k, lay_q, lay_k, act_q, act_k, table):
        s1, s2 = len(qrows), len(krows)
        for i, t in enumerate(qrows):
            vis = visible(mode, s1, s2, i)
            pos = []
            for c in ix[t].tolist():
                if c < 0:
                    continue
                pos += [krows[p] for p in range(c * sbs, min(c * sbs + sbs, vis))]
            if not pos:
                continue
            s = qf[t] @ kf[pos].T
            if qrf is not None:
                s = s + qrf[t] @ krf[pos].T
            s = s * scale  # [n1, P]
            m = s.max(1).values
            e = torch.exp(s - m[:, None])
            out[t] = (e @ vf[pos]) / e.sum(1)[:, None]
            mx[t], sm[t] = m, e.sum(1)
    return out, mx, sm


def sfa_case(lay_q, lay_k, mode, sbs, lse, dtype):
    def f():
        torch.manual_seed(5)
        n1, d, dr, kc = 4, 512, 64, 6
        table = None
        if lay_q == "BSND":
            b, s1 = 2, 3
            aq = [3, 2]
            q = torch.randn(b, s1, n1, d)
            qr = torch.randn(b, s1, n1, dr)
            rows = b * s1
        else:
            aq = [2, 5]
            q = torch.randn(5, n1, d)
            qr = torch.randn(5, n1, dr)
            rows = 5
        if lay_k == "BSND":
            s2 = 48
            ak = [48, 30]
            k = torch.randn(2, s2, 1, d)
            kr = torch.randn(2, s2, 1, dr)
        elif lay_k == "TND":
            ak = [20, 64]
            k = torch.randn(64, 1, d)
            kr = torch.randn(64, 1, dr)
        else:
            bs = 16
            ak = [40, 30]
            k = torch.randn(8, bs, 1, d)
            kr = torch.randn(8, bs, 1, dr)
            table = [[5, 0, 7], [2, 6, 1]]
        q, qr, k, kr = (x.to(dtype) for x in (q, qr, k, kr))
        v = k.clone()
        # per token: kc block indices, some -1 at the tail
        g = torch.Generator().manual_seed(9)
        idx = torch.randint(0, 64 // sbs, (rows, 1, kc), generator=g, dtype=torch.int32)
        idx[::2, :, kc - 2:] = -1
        if lay_q == "BSND":
            idx = idx.reshape(2, 3, 1, kc)
        scale = 1.0 / (d + dr) ** 0.5
        kw = {}
        if table is not None:
            kw["block_table"] = i32(table).to(D)
        out, smax, ssum = torch_npu.npu_sparse_flash_attention(
            q.to(D), k.to(D), v.to(D), idx.to(D), scale, actual_seq_lengths_query=i32(aq).to(D),
            actual_seq_lengths_kv=i32(ak).to(D), query_rope=qr.to(D), key_rope=kr.to(D),
            sparse_block_size=sbs, layout_query=lay_q, layout_kv=lay_k, sparse_mode=mode,
            attention_mode=2, return_softmax_lse=lse, **kw)
        want, mx, sm = sfa_ref(q, k, v, idx, qr, kr, scale, sbs, lay_q, lay_k, aq, ak, table, mode)
        assert out.shape == q.shape, out.shape
        close(out.reshape(rows, n1, d), want, 2e-2, 2e-2)
        if lse:
            if lay_q == "BSND":
                mx = mx.reshape(2, 3, 1, n1).permute(0, 2, 1, 3)
                sm = sm.reshape(2, 3, 1, n1).permute(0, 2, 1, 3)
            else:
                mx = mx.reshape(rows, 1, n1).permute(1, 0, 2)
                sm = sm.reshape(rows, 1, n1).permute(1, 0, 2)
            assert smax.shape == mx.shape, (smax.shape, mx.shape)
            close(smax, mx, 1e-4, 1e-4)
            close(ssum, sm, 1e-4, 1e-4)
    return f


def sfa_page_example():
    # torch_npu's npu_sparse_flash_attention page, single-operator example, as written.
    query_type = torch.float16
    scale_value = 0.041666666666666664
    sparse_block_size = 1
    sparse_block_count = 2048
    b = 4
    s1 = 1
    s2 = 8192
    n1 = 128
    n2 = 1
    dn = 512
    dr = 64
    s2_act = 4096
    attention_mode = 2
    return_softmax_lse = False
    query = torch.tensor(np.random.uniform(-10, 10, (b, s1, n1, dn))).to(query_type)
    key = torch.tensor(np.random.uniform(-5, 10, (b, s2, n2, dn))).to(query_type)
    value = key.clone()
    idxs = random.sample(range(s2_act - s1 + 1), sparse_block_count)
    sparse_indices = torch.tensor([idxs for _ in range(b * s1 * n2)]).reshape(b, s1, n2, sparse_block_count). \
        to(torch.int32)
    query_rope = torch.tensor(np.random.uniform(-10, 10, (b, s1, n1, dr))).to(query_type)
    key_rope = torch.tensor(np.random.uniform(-10, 10, (b, s2, n2, dr))).to(query_type)
    act_seq_q = [s1] * b
    act_seq_kv = [s2_act] * b
    cpu = (query, key, value, sparse_indices, query_rope, key_rope)
    query = query.npu()
    key = key.npu()
    value = value.npu()
    sparse_indices = sparse_indices.npu()
    query_rope = query_rope.npu()
    key_rope = key_rope.npu()
    act_seq_q = torch.tensor(act_seq_q).to(torch.int32).npu()
    act_seq_kv = torch.tensor(act_seq_kv).to(torch.int32).npu()
    attention_out, softmax_max, softmax_sum = torch_npu.npu_sparse_flash_attention(
        query, key, value, sparse_indices, scale_value, block_table=None,
        actual_seq_lengths_query=act_seq_q, actual_seq_lengths_kv=act_seq_kv,
        query_rope=query_rope, key_rope=key_rope, sparse_block_size=sparse_block_size,
        layout_query='BSND', layout_kv='BSND', sparse_mode=3, pre_tokens=(1<<63)-1, next_tokens=(1<<63)-1,
        attention_mode = attention_mode, return_softmax_lse = return_softmax_lse)
    q, k, v, ix, qr, kr = cpu
    want, _, _ = sfa_ref(q, k, v, ix, qr, kr, scale_value, 1, "BSND", "BSND", [s1] * b,
                         [s2_act] * b, None, 3)
    close(attention_out.reshape(b * s1, n1, dn), want, 2e-2, 2e-2)


def sfa_with_lightning_indexer():
    # The two together: the indexer's top-k feeds the attention.
    torch.manual_seed(11)
    b, s1, s2, n1, d = 1, 4, 64, 8, 512
    qi = torch.randn(b, s1, 4, 128).to(torch.bfloat16)
    ki = torch.randn(b, s2, 1, 128).to(torch.bfloat16)
    w = torch.randn(b, s1, 4).to(torch.bfloat16)
    idx, _ = torch_npu.npu_lightning_indexer(qi.to(D), ki.to(D), w.to(D), sparse_count=16)
    q = torch.randn(b, s1, n1, d).to(torch.bfloat16)
    k = torch.randn(b, s2, 1, d).to(torch.bfloat16)
    qr = torch.randn(b, s1, n1, 64).to(torch.bfloat16)
    kr = torch.randn(b, s2, 1, 64).to(torch.bfloat16)
    out, _, _ = torch_npu.npu_sparse_flash_attention(
        q.to(D), k.to(D), k.to(D), idx, 0.05, query_rope=qr.to(D), key_rope=kr.to(D),
        attention_mode=2)
    want, _, _ = sfa_ref(q, k, k, idx.cpu(), qr, kr, 0.05, 1, "BSND", "BSND", None, None,
                         None, 3)
    close(out.reshape(-1, n1, d), want, 2e-2, 2e-2)


def sfa_args():
    q = torch.randn(1, 2, 4, 512, dtype=torch.float16).to(D)
    k = torch.randn(1, 8, 1, 512, dtype=torch.float16).to(D)
    qr = torch.randn(1, 2, 4, 64, dtype=torch.float16).to(D)
    kr = torch.randn(1, 8, 1, 64, dtype=torch.float16).to(D)
    ix = torch.zeros(1, 2, 1, 4, dtype=torch.int32).to(D)
    return q, k, qr, kr, ix


def sfa_bad_attention_mode():
    q, k, qr, kr, ix = sfa_args()
    expect_error(lambda: torch_npu.npu_sparse_flash_attention(
        q, k, k, ix, 0.1, query_rope=qr, key_rope=kr, attention_mode=0),
        "161002", ["aclnnSparseFlashAttention", "attentionMode"])


def sfa_bad_block_size():
    q, k, qr, kr, ix = sfa_args()
    expect_error(lambda: torch_npu.npu_sparse_flash_attention(
        q, k, k, ix, 0.1, query_rope=qr, key_rope=kr, attention_mode=2, sparse_block_size=3),
        "161002", ["sparseBlockSize"])


def sfa_sinks_refused():
    q, k, qr, kr, ix = sfa_args()
    sinks = torch.zeros(4, dtype=torch.float32).to(D)
    expect_error(lambda: torch_npu.npu_sparse_flash_attention(
        q, k, k, ix, 0.1, query_rope=qr, key_rope=kr, attention_mode=2, sinks=sinks),
        "361001", ["aclnnSparseFlashAttentionV2", "Ascend950"])


case("sfa_bsnd_causal_lse", sfa_case("BSND", "BSND", 3, 1, True, torch.bfloat16))
case("sfa_bsnd_blocks", sfa_case("BSND", "BSND", 3, 4, False, torch.float16))
case("sfa_tnd_all_lse", sfa_case("TND", "TND", 0, 2, True, torch.float16))
case("sfa_pa_bsnd_tnd_query", sfa_case("TND", "PA_BSND", 3, 8, False, torch.bfloat16))
case("sfa_page_example", sfa_page_example)
case("sfa_with_lightning_indexer", sfa_with_lightning_indexer)
case("sfa_bad_attention_mode", sfa_bad_attention_mode)
case("sfa_bad_block_size", sfa_bad_block_size)
case("sfa_sinks_refused", sfa_sinks_refused)


# ---------------------------------------------------------------------------------------
# npu_block_sparse_attention


def bsa_ref(q, k, v, mask, bx, by, scale, layout, q_lens, kv_lens):
    """float64: per batch b, head n (kv head n // G), row i: softmax over the key positions
    j < kv_len whose block mask[b, n, i // bx, j // by] is set."""
    if layout == "TND":
        qs = []
        q0 = k0 = 0
        for lq, lk in zip(q_lens, kv_lens):
            qs.append((q[q0:q0 + lq].permute(1, 0, 2), k[k0:k0 + lk].permute(1, 0, 2),
                       v[k0:k0 + lk].permute(1, 0, 2), q0))
            q0, k0 = q0 + lq, k0 + lk
    elif layout == "BNSD":
        qs = [(q[b, :, :lq], k[b, :, :lk], v[b, :, :lk], b) for b, (lq, lk) in
              enumerate(zip(q_lens, kv_lens))]
    else:
        qs = [(q[b, :lq].permute(1, 0, 2), k[b, :lk].permute(1, 0, 2),
               v[b, :lk].permute(1, 0, 2), b) for b, (lq, lk) in enumerate(zip(q_lens, kv_lens))]
    out = torch.zeros(q.shape, dtype=torch.float64)
    lse = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=torch.float64)
    hd = 1 if layout == "BNSD" else -2
    n1, n2 = q.shape[hd], k.shape[hd]
    g = n1 // n2
    for b, (qb, kb, vb, tag) in enumerate(qs):
        for n in range(n1):
            qq, kk, vv = qb[n].double(), kb[n // g].double(), vb[n // g].double()
            for i in range(qq.shape[0]):
                sel = [j for j in range(kk.shape[0]) if mask[b, n, i // bx, j // by] != 0]
                if not sel:
                    continue
                sc = scale * (kk[sel] @ qq[i])
                m = sc.max()
                e = torch.exp(sc - m)
                o = (e @ vv[sel]) / e.sum()
                l = m + torch.log(e.sum())
                if layout == "TND":
                    out[tag + i, n], lse[tag + i, n, 0] = o, l
                elif layout == "BNSD":
                    out[b, n, i], lse[b, n, i, 0] = o, l
                else:
                    out[b, i, n], lse[b, i, n, 0] = o, l
    return out, lse


def bsa_case(layout, dtype, precise, lens):
    def f():
        torch.manual_seed(21)
        n1, n2, d = 4, 2, 64
        bx, by = 8, 128
        if layout == "TND":
            q_lens, kv_lens = [20, 12], [150, 60]
            q = torch.randn(sum(q_lens), n1, d).to(dtype)
            k = torch.randn(sum(kv_lens), n2, d).to(dtype)
            v = torch.randn(sum(kv_lens), n2, d).to(dtype)
            kw = dict(actual_seq_lengths=q_lens, actual_seq_lengths_kv=kv_lens)
        else:
            b, s1, s2 = 2, 20, 200
            q_lens, kv_lens = ([20, 13], [200, 140]) if lens else ([s1] * b, [s2] * b)
            if layout == "BNSD":
                q = torch.randn(b, n1, s1, d).to(dtype)
                k = torch.randn(b, n2, s2, d).to(dtype)
                v = torch.randn(b, n2, s2, d).to(dtype)
            else:
                q = torch.randn(b, s1, n1, d).to(dtype)
                k = torch.randn(b, s2, n2, d).to(dtype)
                v = torch.randn(b, s2, n2, d).to(dtype)
            kw = dict(actual_seq_lengths=q_lens, actual_seq_lengths_kv=kv_lens) if lens else {}
        mq = (max(q_lens) + bx - 1) // bx
        mk = (max(kv_lens) + by - 1) // by
        mask = (torch.rand(len(q_lens), n1, mq, mk, generator=torch.Generator().manual_seed(4))
                > 0.3).to(torch.int8)
        mask[0, 0, 0, :] = 0  # one block row with no key at all
        out, lse = torch_npu.npu_block_sparse_attention(
            q.to(D), k.to(D), v.to(D), mask.to(D), [bx, by], q_input_layout=layout,
            kv_input_layout=layout, num_key_value_heads=n2, scale_value=d ** -0.5,
            inner_precise=precise, softmax_lse_flag=1, **kw)
        want, wl = bsa_ref(q, k, v, mask, bx, by, d ** -0.5, layout, q_lens, kv_lens)
        if layout == "TND":
            close(out, want, 2e-2, 2e-2)
            close(lse, wl, 1e-4, 1e-4)
        else:
            # rows past a batch's length are not defined by the reference page; compare valid ones
            for b, lq in enumerate(q_lens):
                if layout == "BNSD":
                    close(out[b, :, :lq], want[b, :, :lq], 2e-2, 2e-2)
                    close(lse[b, :, :lq], wl[b, :, :lq], 1e-4, 1e-4)
                else:
                    close(out[b, :lq], want[b, :lq], 2e-2, 2e-2)
                    close(lse[b, :lq], wl[b, :lq], 1e-4, 1e-4)
    return f


def bsa_page_example_bnsd():
    # torch_npu's npu_block_sparse_attention page, BNSD example, as written.
    B, N, S, D_ = 2, 8, 32, 64
    num_kv_heads = 8
    scale_value = 1.0 / (D_ ** 0.5)
    block_shape = [128, 128]
    ceil_q = (S + block_shape[0] - 1) // block_shape[0]
    ceil_kv = (S + block_shape[1] - 1) // block_shape[1]
    query = torch.randn(B, N, S, D_, dtype=torch.float16).npu()
    key = torch.randn(B, num_kv_heads, S, D_, dtype=torch.float16).npu()
    value = torch.randn(B, num_kv_heads, S, D_, dtype=torch.float16).npu()
    block_sparse_mask = torch.ones(B, N, ceil_q, ceil_kv, dtype=torch.int8).npu()
    attention_out, softmax_lse = torch_npu.npu_block_sparse_attention(
        query, key, value, block_sparse_mask, block_shape,
        q_input_layout="BNSD", kv_input_layout="BNSD",
        num_key_value_heads=num_kv_heads, scale_value=scale_value, inner_precise=1,
    )
    print(attention_out.shape)  # (B, N, S, D)
    assert attention_out.shape == (B, N, S, D_)
    want = torch.softmax(query.cpu().double() @ key.cpu().double().transpose(-1, -2) * scale_value,
                         -1) @ value.cpu().double()
    close(attention_out, want, 2e-2, 2e-2)


def bsa_page_example_tnd():
    # torch_npu's npu_block_sparse_attention page, TND example, as written.
    T, N, D_ = 32, 8, 64
    num_kv_heads = 8
    scale_value = 1.0 / (D_ ** 0.5)
    block_shape = [128, 128]
    ceil_q = (T + block_shape[0] - 1) // block_shape[0]
    ceil_kv = (T + block_shape[1] - 1) // block_shape[1]
    query = torch.randn(T, N, D_, dtype=torch.float16).npu()
    key = torch.randn(T, num_kv_heads, D_, dtype=torch.float16).npu()
    value = torch.randn(T, num_kv_heads, D_, dtype=torch.float16).npu()
    block_sparse_mask = torch.ones(1, N, ceil_q, ceil_kv, dtype=torch.int8).npu()
    attention_out, softmax_lse = torch_npu.npu_block_sparse_attention(
        query, key, value, block_sparse_mask, block_shape,
        q_input_layout="TND", kv_input_layout="TND",
        num_key_value_heads=num_kv_heads, scale_value=scale_value, inner_precise=1,
        actual_seq_lengths=[T], actual_seq_lengths_kv=[T],
    )
    print(attention_out.shape)  # (T, N, D)
    assert attention_out.shape == (T, N, D_)
    qd, kd, vd = (x.cpu().double().transpose(0, 1) for x in (query, key, value))
    want = (torch.softmax(qd @ kd.transpose(-1, -2) * scale_value, -1) @ vd).transpose(0, 1)
    close(attention_out, want, 2e-2, 2e-2)


def bsa_bad_block_y():
    q = torch.randn(1, 2, 16, 64, dtype=torch.float16).to(D)
    m = torch.ones(1, 2, 2, 1, dtype=torch.int8).to(D)
    expect_error(lambda: torch_npu.npu_block_sparse_attention(
        q, q, q, m, [8, 64], q_input_layout="BNSD", kv_input_layout="BNSD",
        num_key_value_heads=2, scale_value=0.1), "161002", ["aclnnBlockSparseAttention", "blockShapeY"])


def bsa_bad_precise_bf16():
    q = torch.randn(1, 2, 16, 64, dtype=torch.bfloat16).to(D)
    m = torch.ones(1, 2, 1, 1, dtype=torch.int8).to(D)
    expect_error(lambda: torch_npu.npu_block_sparse_attention(
        q, q, q, m, [128, 128], q_input_layout="BNSD", kv_input_layout="BNSD",
        num_key_value_heads=2, scale_value=0.1, inner_precise=1), "161002", ["innerPrecise"])


case("bsa_bnsd_lens_f16", bsa_case("BNSD", torch.float16, 1, True))
case("bsa_bsnd_bf16", bsa_case("BSND", torch.bfloat16, 0, False))
case("bsa_tnd_f16", bsa_case("TND", torch.float16, 0, True))
case("bsa_page_example_bnsd", bsa_page_example_bnsd)
case("bsa_page_example_tnd", bsa_page_example_tnd)
case("bsa_bad_block_y", bsa_bad_block_y)
case("bsa_bad_precise_bf16", bsa_bad_precise_bf16)


# ---------------------------------------------------------------------------------------
# npu_fused_floyd_attention (+ _backward)


def floyd_ref(q, k1, v1, k2, v2, mask, scale):
    """float64 autograd reference: s[b,h,n,m,k] = scale·(q·k1[n,k] + q·k2[k,m]), masked k
    excluded; out = Σ_k softmax(s)·(v1[n,k] + v2[k,m])."""
    q, k1, v1, k2, v2 = (x.double().detach().requires_grad_() for x in (q, k1, v1, k2, v2))
    s = scale * (torch.einsum("bhnmd,bhnkd->bhnmk", q, k1) + torch.einsum("bhnmd,bhkmd->bhnmk", q, k2))
    if mask is not None:
        s = s.masked_fill(mask.bool(), float("-inf"))
    mx = s.max(-1, keepdim=True).values
    e = torch.exp(s - mx)
    sm = e.sum(-1, keepdim=True)
    w = e / sm
    out = torch.einsum("bhnmk,bhnkd->bhnmd", w, v1) + torch.einsum("bhnmk,bhkmd->bhnmd", w, v2)
    return out, mx, sm, (q, k1, v1, k2, v2)


def floyd_case(dtype, with_mask):
    def f():
        torch.manual_seed(31)
        B, H, N, M, K, D_ = 1, 2, 16, 128, 128, 32
        q = torch.randn(B, H, N, M, D_).to(dtype)
        k1 = torch.randn(B, H, N, K, D_).to(dtype)
        v1 = torch.randn(B, H, N, K, D_).to(dtype)
        k2 = torch.randn(B, H, K, M, D_).to(dtype)
        v2 = torch.randn(B, H, K, M, D_).to(dtype)
        mask = (torch.rand(B, 1, N, 1, K) > 0.7) if with_mask else None
        scale = D_ ** -0.5
        kw = {"atten_mask": mask.to(D)} if with_mask else {}
        smax, ssum, out = torch_npu.npu_fused_floyd_attention(
            q.to(D), k1.to(D), v1.to(D), k2.to(D), v2.to(D), scale_value=scale, **kw)
        want, mx, sm, leaves = floyd_ref(q, k1, v1, k2, v2, mask, scale)
        assert smax.shape == (B, H, N, M, 8), smax.shape
        close(out, want.detach(), 2e-2, 2e-2)
        close(smax, mx.detach().expand(-1, -1, -1, -1, 8), 1e-3, 1e-3)
        close(ssum, sm.detach().expand(-1, -1, -1, -1, 8), 1e-3, 1e-3)
        dy = torch.randn(B, H, N, M, D_).to(dtype)
        grads = torch_npu.npu_fused_floyd_attention_backward(
            dy.to(D), q.to(D), k1.to(D), v1.to(D), k2.to(D), v2.to(D), out, smax, ssum,
            scale_value=scale, **kw)
        want.backward(dy.double())
        for g, leaf in zip(grads, leaves):
            close(g, leaf.grad, 5e-2, 5e-2)
    return f


def floyd_page_example():
    # torch_npu's npu_fused_floyd_attention page example, as written.
    import math

    def truncated_normal(mean, std, min, max, size):
        x = torch.normal(mean, std, size=size)
        x = torch.where((x < min) | (x > max), torch.tensor(0.0), x)
        return x
    B, N, S1, S2, S3, D_ = 1, 1, 16, 256, 256, 64
    Q = truncated_normal(0.0, 1, -10, 10, (B, N, S1, S2, D_)).to(torch.bfloat16).npu()
    K1 = truncated_normal(0.0, 1, -10, 10, (B, N, S1, S3, D_)).to(torch.bfloat16).npu()
    K2 = truncated_normal(0.0, 1, -10, 10, (B, N, S3, S2, D_)).to(torch.bfloat16).npu()
    V1 = truncated_normal(0.0, 1, -10, 10, (B, N, S1, S3, D_)).to(torch.bfloat16).npu()
    V2 = truncated_normal(0.0, 1, -10, 10, (B, N, S3, S2, D_)).to(torch.bfloat16).npu()
    atten_mask = torch.randint(0, 2, [B, 1, S1, 1, S3]).to(torch.bool).npu()
    scale = 1.0/math.sqrt(D_)
    x_max_npu, x_sum_npu, output_npu = torch_npu.npu_fused_floyd_attention(
        Q,
        K1,
        V1,
        K2,
        V2,
        atten_mask = atten_mask,
        scale_value = scale
    )
    want, _, _, _ = floyd_ref(Q.cpu(), K1.cpu(), V1.cpu(), K2.cpu(), V2.cpu(), atten_mask.cpu(), scale)
    close(output_npu, want.detach(), 3e-2, 3e-2)


def floyd_bad_m():
    q = torch.randn(1, 1, 16, 64, 32, dtype=torch.float16).to(D)
    k1 = torch.randn(1, 1, 16, 128, 32, dtype=torch.float16).to(D)
    k2 = torch.randn(1, 1, 128, 64, 32, dtype=torch.float16).to(D)
    expect_error(lambda: torch_npu.npu_fused_floyd_attention(q, k1, k1, k2, k2),
                 "561002", ["aclnnFusedFloydAttention", "M and K multiples of 128"])


case("floyd_f16_grad", floyd_case(torch.float16, False))
case("floyd_bf16_mask_grad", floyd_case(torch.bfloat16, True))
case("floyd_page_example", floyd_page_example)
case("floyd_bad_m", floyd_bad_m)

print(f"attention_sparse32: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
