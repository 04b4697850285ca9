"""torch_npu's fused operators of large-model code on `npu` against CPU torch reference
implementations written from torch_npu's documentation, forward and backward through
autograd: npu_rms_norm, npu_rotary_mul (half and interleave), npu_apply_rotary_pos_emb,
npu_swiglu, npu_fusion_attention (layouts BSH, SBH, BSND, BNSD; grouped key heads; causal
sparse modes with the compressed 2048x2048 mask; a full mask; dropout with keep_prob < 1),
npu_prompt_flash_attention (grouped key heads, a causal mask, actual_seq_lengths_kv) and
npu_incre_flash_attention (multi-query, actual_seq_lengths), npu_fused_infer_attention_score
(grouped heads with softmax_lse, causal, a decode step with kv lengths).

Tolerances: float32 1e-5 relative (the emulator computes in float64 and rounds once);
float16/bfloat16 against the float32 reference of the rounded inputs, to the dtype's
resolution.
"""
import math

import pytest
import torch
import torch.nn.functional as F
import torch_npu  # noqa: F401

from npu_ops import require

RTOL, ATOL = 1e-5, 1e-5
TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2)}


def rnd(*shape, seed=0, dtype=torch.float32):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def close(npu, cpu, dtype=torch.float32, scale=1.0):
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(npu.detach().cpu().float(), cpu.detach().float(), rtol=rtol * scale, atol=atol * scale)


def grads_match(fn_npu, fn_cpu, inputs, dtype=torch.float32, scale=1.0, seed=99):
    """Forward values and the gradients of every floating input (loss = Σ out·w)."""
    cpu_in = [x.clone().requires_grad_(True) for x in inputs]
    npu_in = [x.clone().npu().requires_grad_(True) for x in inputs]
    c, n = fn_cpu(*cpu_in), fn_npu(*npu_in)
    assert n.device.type == "npu" and n.dtype == c.dtype and n.shape == c.shape, (n.dtype, c.dtype, n.shape, c.shape)
    close(n, c, dtype, scale)
    w = rnd(*c.shape, seed=seed).to(c.dtype)
    (c.float() * w.float()).sum().backward()
    (n.float() * w.npu().float()).sum().backward()
    for a, b in zip(cpu_in, npu_in):
        assert b.grad is not None, "no gradient on npu"
        close(b.grad, a.grad, dtype, scale * 4)


# ---------------------------------------------------------------- RMS norm


def rms_ref(x, g, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * g.float()).to(x.dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_rms_norm(dtype):
    require("aclnnRmsNorm", "aclnnRmsNormGrad")
    x, g = rnd(2, 5, 32, seed=1, dtype=dtype), rnd(32, seed=2, dtype=dtype)
    y, rstd = torch_npu.npu_rms_norm(x.npu(), g.npu(), epsilon=1e-6)
    assert y.dtype == dtype and rstd.dtype == torch.float32 and rstd.shape == (2, 5, 1)
    close(y, rms_ref(x, g, 1e-6), dtype)
    close(rstd, torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6))
    if dtype == torch.float32:
        grads_match(lambda a, b: torch_npu.npu_rms_norm(a, b, 1e-6)[0], lambda a, b: rms_ref(a, b, 1e-6), [x, g])


# ---------------------------------------------------------------- rotary embedding


def rotary_ref(x, c, s, mode):
    if mode == "half":
        x1, x2 = x.chunk(2, -1)
        rot = torch.cat((-x2, x1), -1)
    else:
        rot = torch.stack((-x[..., 1::2], x[..., 0::2]), -1).reshape(x.shape)
    return x * c + rot * s


@pytest.mark.parametrize("mode", ["half", "interleave"])
def test_rotary_mul(mode):
    require("aclnnRotaryPositionEmbedding", "aclnnRotaryPositionEmbeddingGrad")
    x = rnd(2, 3, 6, 16, seed=3)  # BNSD
    c, s = rnd(1, 1, 6, 16, seed=4), rnd(1, 1, 6, 16, seed=5)
    grads_match(
        lambda a, b, d: torch_npu.npu_rotary_mul(a, b, d, rotary_mode=mode),
        lambda a, b, d: rotary_ref(a, b, d, mode),
        [x, c, s],
    )
    # BSND with cos/sin 1S1D, float16 forward
    xh, ch, sh = rnd(2, 6, 3, 16, seed=6, dtype=torch.float16), rnd(1, 6, 1, 16, seed=7, dtype=torch.float16), rnd(
        1, 6, 1, 16, seed=8, dtype=torch.float16
    )
    o = torch_npu.npu_rotary_mul(xh.npu(), ch.npu(), sh.npu(), rotary_mode=mode)
    close(o, rotary_ref(xh.float(), ch.float(), sh.float(), mode).half(), torch.float16)


def test_apply_rotary_pos_emb_in_place():
    require("aclnnApplyRotaryPosEmb")
    q, k = rnd(2, 5, 4, 16, seed=9), rnd(2, 5, 2, 16, seed=10)
    c, s = rnd(2, 5, 1, 16, seed=11), rnd(2, 5, 1, 16, seed=12)
    qn, kn = q.npu(), k.npu()
    qo, ko = torch_npu.npu_apply_rotary_pos_emb(qn, kn, c.npu(), s.npu(), layout="BSND")
    close(qo, rotary_ref(q, c, s, "half"))
    close(ko, rotary_ref(k, c, s, "half"))
    close(qn, rotary_ref(q, c, s, "half"))  # in place


# ---------------------------------------------------------------- SwiGLU


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_swiglu(dim):
    require("aclnnSwiGlu", "aclnnSwiGluGrad")

    def ref(x):
        a, b = x.chunk(2, dim)
        return F.silu(a) * b

    grads_match(lambda x: torch_npu.npu_swiglu(x, dim=dim), ref, [rnd(4, 6, 8, seed=13) * 3])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_swiglu_half(dtype):
    require("aclnnSwiGlu")
    x = rnd(8, 32, seed=14, dtype=dtype)
    a, b = x.float().chunk(2, -1)
    close(torch_npu.npu_swiglu(x.npu()), (F.silu(a) * b).to(dtype), dtype)


# ---------------------------------------------------------------- flash attention


def to_bnsd(t, layout, n):
    if layout == "BSH":
        b, s, h = t.shape
        return t.view(b, s, n, h // n).transpose(1, 2)
    if layout == "SBH":
        s, b, h = t.shape
        return t.view(s, b, n, h // n).permute(1, 2, 0, 3)
    if layout == "BSND":
        return t.transpose(1, 2)
    return t


def from_bnsd(t, layout):
    b, n, s, d = t.shape
    if layout == "BSH":
        return t.transpose(1, 2).reshape(b, s, n * d)
    if layout == "SBH":
        return t.permute(2, 0, 1, 3).reshape(s, b, n * d)
    if layout == "BSND":
        return t.transpose(1, 2)
    return t


def attention_ref(q, k, v, n1, layout, scale, masked=None, keep=None, keep_prob=1.0):
    """softmax(scale·q·kᵀ, masked positions excluded) · v per head; key heads shared."""
    qb = to_bnsd(q, layout, n1).float()
    n2 = n1 * k.shape[-1] // q.shape[-1] if layout in ("BSH", "SBH") else None
    kb = to_bnsd(k, layout, n2).float()
    vb = to_bnsd(v, layout, n2).float()
    rep = qb.shape[1] // kb.shape[1]
    kb, vb = kb.repeat_interleave(rep, 1), vb.repeat_interleave(rep, 1)
    s = qb @ kb.transpose(-1, -2) * scale
    if masked is not None:
        s = s.masked_fill(masked, float("-inf"))
    p = torch.softmax(s, -1)
    if keep is not None:
        p = p * keep / keep_prob
    return from_bnsd(p @ vb, layout).to(q.dtype), s


CASES = [
    # layout, B, N1, N2, S1, S2, D
    ("BNSD", 2, 2, 2, 5, 7, 8),
    ("BSND", 1, 4, 2, 6, 6, 8),
    ("BSH", 2, 4, 1, 5, 9, 4),
    ("SBH", 1, 2, 2, 7, 5, 8),
]


def qkv(layout, b, n1, n2, s1, s2, d, dtype=torch.float32):
    shape = {
        "BSH": lambda s, n: (b, s, n * d),
        "SBH": lambda s, n: (s, b, n * d),
        "BSND": lambda s, n: (b, s, n, d),
        "BNSD": lambda s, n: (b, n, s, d),
    }[layout]
    return (
        rnd(*shape(s1, n1), seed=20, dtype=dtype),
        rnd(*shape(s2, n2), seed=21, dtype=dtype),
        rnd(*shape(s2, n2), seed=22, dtype=dtype),
    )


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_fusion_attention_layouts_and_backward(case):
    require("aclnnFlashAttentionScore", "aclnnFlashAttentionScoreGrad")
    layout, b, n1, n2, s1, s2, d = case
    q, k, v = qkv(layout, b, n1, n2, s1, s2, d)
    scale = 1 / math.sqrt(d)
    out = torch_npu.npu_fusion_attention(q.npu(), k.npu(), v.npu(), n1, layout, scale=scale)
    ref, s = attention_ref(q, k, v, n1, layout, scale)
    close(out[0], ref)
    # softmax_max / softmax_sum: [B, N1, S1, 8] float32, each row's value repeated
    mx = s.amax(-1, keepdim=True)
    sm = (s - mx).exp().sum(-1, keepdim=True)
    assert out[1].shape == (b, n1, s1, 8) and out[1].dtype == torch.float32
    close(out[1], mx.expand(b, n1, s1, 8))
    close(out[2], sm.expand(b, n1, s1, 8))
    grads_match(
        lambda a, bb, c: torch_npu.npu_fusion_attention(a, bb, c, n1, layout, scale=scale)[0],
        lambda a, bb, c: attention_ref(a, bb, c, n1, layout, scale)[0],
        [q, k, v],
    )


@pytest.mark.parametrize("sparse_mode", [2, 3])
def test_fusion_attention_causal(sparse_mode):
    require("aclnnFlashAttentionScore", "aclnnFlashAttentionScoreGrad")
    q, k, v = qkv("BNSD", 1, 2, 2, 6, 9, 8)
    mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), diagonal=1)
    i = torch.arange(6).view(-1, 1)
    j = torch.arange(9).view(1, -1)
    masked = j > i if sparse_mode == 2 else j > i + 3
    scale = 0.3
    grads_match(
        lambda a, b, c: torch_npu.npu_fusion_attention(
            a, b, c, 2, "BNSD", atten_mask=mask.npu(), scale=scale, sparse_mode=sparse_mode
        )[0],
        lambda a, b, c: attention_ref(a, b, c, 2, "BNSD", scale, masked=masked)[0],
        [q, k, v],
    )


def test_fusion_attention_full_mask_half():
    require("aclnnFlashAttentionScore")
    for dtype in (torch.float16, torch.bfloat16):
        q, k, v = qkv("BSH", 2, 2, 2, 8, 8, 16, dtype)
        masked = torch.rand(8, 8, generator=torch.Generator().manual_seed(3)) < 0.3
        masked[:, 0] = False
        out = torch_npu.npu_fusion_attention(q.npu(), k.npu(), v.npu(), 2, "BSH", atten_mask=masked.npu(), scale=0.25)
        ref, _ = attention_ref(q.float(), k.float(), v.float(), 2, "BSH", 0.25, masked=masked)
        close(out[0], ref.to(dtype), dtype, 2)


def test_fusion_attention_dropout():
    require("aclnnFlashAttentionScore", "aclnnFlashAttentionScoreGrad", "aclnnDropoutGenMaskV2")
    q, k, v = qkv("BNSD", 1, 2, 2, 16, 16, 8)
    qn, kn, vn = (t.npu().requires_grad_(True) for t in (q, k, v))
    y = torch_npu.npu_fusion_attention(qn, kn, vn, 2, "BNSD", scale=0.35, keep_prob=0.8)[0]
    w = rnd(*y.shape, seed=5)
    (y * w.npu()).sum().backward()
    ref, _ = attention_ref(q, k, v, 2, "BNSD", 0.35)
    assert not torch.allclose(y.detach().cpu(), ref, atol=1e-3), "keep_prob 0.8 changed nothing"
    # y = P_drop·v is linear in v and dV = P_dropᵀ·w, so Σ y·w = Σ v·dV exactly when the
    # backward applied the forward's dropout mask
    lhs = (y.detach().cpu() * w).sum().item()
    rhs = (v * vn.grad.cpu()).sum().item()
    assert abs(lhs - rhs) <= 1e-4 * (1 + abs(lhs)), (lhs, rhs)
    # a mask given by the caller: bit i of byte i/8 keeps score i of [B, N, S1, S2]
    bits = torch.rand(512, generator=torch.Generator().manual_seed(8)) < 0.8
    packed = torch.zeros(64, dtype=torch.uint8)
    for i in range(512):
        if bits[i]:
            packed[i // 8] |= 1 << (i % 8)
    y2 = torch_npu.npu_fusion_attention(
        q.npu(), k.npu(), v.npu(), 2, "BNSD", scale=0.35, keep_prob=0.8, dropout_mask=packed.npu()
    )[0]
    ref2, _ = attention_ref(q, k, v, 2, "BNSD", 0.35, keep=bits.view(1, 2, 16, 16).float(), keep_prob=0.8)
    close(y2, ref2)


# ---------------------------------------------------------------- inference attention


def test_prompt_flash_attention():
    require("aclnnPromptFlashAttentionV3")
    b, n, nkv, s, d = 2, 4, 2, 6, 8
    q, k, v = qkv("BSH", b, n, nkv, s, s, d)
    sc = 1 / math.sqrt(d)
    o = torch_npu.npu_prompt_flash_attention(
        q.npu(), k.npu(), v.npu(), num_heads=n, num_key_value_heads=nkv, input_layout="BSH", scale_value=sc
    )
    close(o, attention_ref(q, k, v, n, "BSH", sc)[0])
    # a causal mask with next_tokens=0 (the documented default); BNSD in, BNSD out
    qb, kb, vb = qkv("BNSD", b, n, n, s, s, d)
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool), 1)
    o = torch_npu.npu_prompt_flash_attention(
        qb.npu(), kb.npu(), vb.npu(), num_heads=n, input_layout="BNSD", scale_value=sc, atten_mask=mask.npu()
    )
    close(o, attention_ref(qb, kb, vb, n, "BNSD", sc, masked=mask)[0])
    # actual_seq_lengths_kv: keys past each batch's length do not take part
    o = torch_npu.npu_prompt_flash_attention(
        qb.npu(), kb.npu(), vb.npu(), num_heads=n, input_layout="BNSD", scale_value=sc, actual_seq_lengths_kv=[3, 6]
    )
    masked = torch.zeros(b, 1, s, s, dtype=torch.bool)
    masked[0, ..., 3:] = True
    close(o, attention_ref(qb, kb, vb, n, "BNSD", sc, masked=masked)[0])


def test_incre_flash_attention():
    require("aclnnIncreFlashAttentionV4")
    b, n, nkv, s, d = 2, 4, 1, 9, 8
    q, _, _ = qkv("BSH", b, n, nkv, 1, s, d)
    _, k, v = qkv("BSH", b, n, nkv, s, s, d)
    sc = 0.3
    o = torch_npu.npu_incre_flash_attention(
        q.npu(), k.npu(), v.npu(), num_heads=n, num_key_value_heads=nkv, input_layout="BSH", scale_value=sc
    )
    close(o, attention_ref(q, k, v, n, "BSH", sc)[0])
    o = torch_npu.npu_incre_flash_attention(
        q.npu(), k.npu(), v.npu(), num_heads=n, num_key_value_heads=nkv, input_layout="BSH", scale_value=sc,
        actual_seq_lengths=[5, 9],
    )
    masked = torch.zeros(b, 1, 1, s, dtype=torch.bool)
    masked[0, ..., 5:] = True
    close(o, attention_ref(q, k, v, n, "BSH", sc, masked=masked)[0])


def test_fused_infer_attention_score():
    require("aclnnFusedInferAttentionScoreV3")
    b, n, nkv, s, d = 2, 4, 2, 6, 8
    q, k, v = qkv("BNSD", b, n, nkv, s, s, d)
    out, lse = torch_npu.npu_fused_infer_attention_score(
        q.npu(), k.npu(), v.npu(), num_heads=n, num_key_value_heads=nkv, input_layout="BNSD", scale=0.3,
        softmax_lse_flag=True,
    )
    ref, sc = attention_ref(q, k, v, n, "BNSD", 0.3)
    close(out, ref)
    assert lse.shape == (b, n, s, 1) and lse.dtype == torch.float32
    close(lse, torch.logsumexp(sc, -1, keepdim=True))
    # a causal mask with next_tokens=0, and a decode step (one query row) with kv lengths
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool), 1)
    out, _ = torch_npu.npu_fused_infer_attention_score(
        q.npu(), k.npu(), v.npu(), num_heads=n, num_key_value_heads=nkv, input_layout="BNSD", scale=0.3,
        atten_mask=mask.npu(), next_tokens=0,
    )
    close(out, attention_ref(q, k, v, n, "BNSD", 0.3, masked=mask)[0])
    q1 = q[:, :, :1].contiguous()
    out, _ = torch_npu.npu_fused_infer_attention_score(
        q1.npu(), k.npu(), v.npu(), num_heads=n, num_key_value_heads=nkv, input_layout="BNSD", scale=0.3,
        actual_seq_lengths_kv=[3, 6],
    )
    masked = torch.zeros(b, 1, 1, s, dtype=torch.bool)
    masked[0, ..., 3:] = True
    close(out, attention_ref(q1, k, v, n, "BNSD", 0.3, masked=masked)[0])
