"""torch_npu's inference attention with the inputs of a serving engine's decode step, on
`npu` against CPU references: a paged key/value cache (block_table with block_size, the
vLLM-style [num_blocks, block_size, H] cache and the [num_blocks, N, block_size, D] one) in
npu_incre_flash_attention and npu_fused_infer_attention_score, and an INT8 key/value cache
with antiquant scales (npu_incre_flash_attention's antiquant_scale/antiquant_offset,
npu_fused_infer_attention_score's key/value_antiquant_scale per-channel and per-token),
paged too; and the INT8 output of npu_incre_flash_attention (quant_scale2, quant_offset2).
The reference gathers the blocks into a contiguous cache (dequantised by hand,
(x + offset)·scale) and computes softmax(scale·q·kᵀ)·v in float32.
"""
import torch
import torch_npu  # noqa: F401

from npu_ops import require

B, N, NKV, D, BS = 2, 4, 2, 16, 16
LENS = [37, 20]


def rnd(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def reference(q, k, v, lens, scale):
    """q [B, N, Sq, D], k/v [B, NKV, S, D] float32; keys j < lens[b]."""
    g = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(g, 1)
    v = v.repeat_interleave(g, 1)
    s = scale * q @ k.transpose(-1, -2)
    for b, n in enumerate(lens):
        s[b, ..., n:] = float("-inf")
    return torch.softmax(s, -1) @ v


def page(x, table, lens, heads_first, fill=7.0):
    """x [B, NKV, S, D] -> a cache of blocks addressed by `table` ([B, max_blocks])."""
    nblocks = int(table.max()) + 2
    if heads_first:
        cache = torch.full((nblocks, NKV, BS, D), fill, dtype=x.dtype)
    else:
        cache = torch.full((nblocks, BS, NKV * D), fill, dtype=x.dtype)
    for b, n in enumerate(lens):
        for s in range(n):
            blk, w = int(table[b, s // BS]), s % BS
            if heads_first:
                cache[blk, :, w] = x[b, :, s]
            else:
                cache[blk, w] = x[b, :, s].reshape(-1)
    return cache


TABLE = torch.tensor([[4, 0, 2], [5, 1, -1]], dtype=torch.int32)
S = TABLE.shape[1] * BS


def bsh(x):
    """[B, N, S, D] -> [B, S, N*D]."""
    return x.transpose(1, 2).reshape(x.shape[0], x.shape[2], -1)


def test_incre_flash_attention_paged_cache():
    require("aclnnIncreFlashAttentionV4")
    q = rnd(B, N, 1, D, seed=1).half()
    k, v = rnd(B, NKV, S, D, seed=2).half(), rnd(B, NKV, S, D, seed=3).half()
    kc, vc = page(k, TABLE, LENS, False), page(v, TABLE, LENS, False)
    out = torch_npu.npu_incre_flash_attention(
        bsh(q).npu(), kc.npu(), vc.npu(), num_heads=N, num_key_value_heads=NKV, input_layout="BSH",
        scale_value=0.25, actual_seq_lengths=LENS, block_table=TABLE.npu(), block_size=BS,
    )
    want = reference(q.float(), k.float(), v.float(), LENS, 0.25)
    torch.testing.assert_close(out.cpu().float(), bsh(want), rtol=2e-3, atol=2e-3)


def test_fused_infer_attention_score_paged_cache():
    require("aclnnFusedInferAttentionScoreV3")
    q = rnd(B, N, 1, D, seed=4).to(torch.bfloat16)
    k, v = rnd(B, NKV, S, D, seed=5).to(torch.bfloat16), rnd(B, NKV, S, D, seed=6).to(torch.bfloat16)
    want = reference(q.float(), k.float(), v.float(), LENS, 0.3)
    for heads_first in (True, False):
        kc, vc = page(k, TABLE, LENS, heads_first), page(v, TABLE, LENS, heads_first)
        out, _ = torch_npu.npu_fused_infer_attention_score(
            q.npu(), kc.npu(), vc.npu(), num_heads=N, num_key_value_heads=NKV, input_layout="BNSD", scale=0.3,
            actual_seq_lengths_kv=LENS, block_table=TABLE.npu(), block_size=BS,
        )
        torch.testing.assert_close(out.cpu().float(), want, rtol=1.6e-2, atol=1.6e-2)


def int8(*shape, seed):
    return (rnd(*shape, seed=seed) * 40).round().clamp(-127, 127).to(torch.int8)


def test_incre_flash_attention_int8_antiquant():
    require("aclnnIncreFlashAttentionV4")
    s = 24
    q = rnd(B, N, 1, D, seed=7).half()
    k8, v8 = int8(B, NKV, s, D, seed=8), int8(B, NKV, s, D, seed=9)
    scale = (0.01 + 0.02 * torch.rand(2, NKV * D, generator=torch.Generator().manual_seed(10))).half()
    offset = torch.randint(-3, 4, (2, NKV * D), generator=torch.Generator().manual_seed(11)).half()
    out = torch_npu.npu_incre_flash_attention(
        bsh(q).npu(), bsh(k8).npu(), bsh(v8).npu(), num_heads=N, num_key_value_heads=NKV, input_layout="BSH",
        scale_value=0.25, antiquant_scale=scale.npu(), antiquant_offset=offset.npu(), actual_seq_lengths=[24, 11],
    )

    def deq(x8, i):
        per = (x8.float() + offset[i].float().view(NKV, 1, D)) * scale[i].float().view(NKV, 1, D)
        return per

    want = reference(q.float(), deq(k8, 0), deq(v8, 1), [24, 11], 0.25)
    torch.testing.assert_close(out.cpu().float(), bsh(want), rtol=3e-3, atol=3e-3)


def test_fused_infer_attention_score_int8_per_token_paged():
    require("aclnnFusedInferAttentionScoreV3")
    q = rnd(B, N, 1, D, seed=12).half()
    k8, v8 = int8(B, NKV, S, D, seed=13), int8(B, NKV, S, D, seed=14)
    kscale = (0.01 + 0.01 * torch.rand(1, NKV, 1, D, generator=torch.Generator().manual_seed(15))).half()
    vscale = 0.005 + 0.02 * torch.rand(1, B, S, generator=torch.Generator().manual_seed(16))
    kc, vc = page(k8, TABLE, LENS, True, fill=0), page(v8, TABLE, LENS, True, fill=0)
    out, _ = torch_npu.npu_fused_infer_attention_score(
        q.npu(), kc.npu(), vc.npu(), num_heads=N, num_key_value_heads=NKV, input_layout="BNSD", scale=0.3,
        actual_seq_lengths_kv=LENS, block_table=TABLE.npu(), block_size=BS,
        key_antiquant_scale=kscale.npu(), value_antiquant_scale=vscale.npu(), key_antiquant_mode=0,
        value_antiquant_mode=1,
    )
    k = k8.float() * kscale.float()
    v = v8.float() * vscale[0].view(B, 1, S, 1)
    want = reference(q.float(), k, v, LENS, 0.3)
    torch.testing.assert_close(out.cpu().float(), want, rtol=3e-3, atol=3e-3)


def test_incre_flash_attention_int8_output():
    require("aclnnIncreFlashAttentionV4")
    s = 10
    q = rnd(B, N, 1, D, seed=17).half()
    k, v = rnd(B, NKV, s, D, seed=18).half(), rnd(B, NKV, s, D, seed=19).half()
    qs2 = 40 + 60 * torch.rand(N * D, generator=torch.Generator().manual_seed(20))
    qo2 = torch.randint(-3, 4, (N * D,), generator=torch.Generator().manual_seed(21)).float()
    out = torch_npu.npu_incre_flash_attention(
        bsh(q).npu(), bsh(k).npu(), bsh(v).npu(), num_heads=N, num_key_value_heads=NKV, input_layout="BSH",
        scale_value=0.25, quant_scale2=qs2.npu(), quant_offset2=qo2.npu(),
    )
    assert out.dtype == torch.int8
    att = bsh(reference(q.double(), k.double(), v.double(), [s, s], 0.25))
    want = torch.round(att * qs2.double() + qo2.double()).clamp(-128, 127).to(torch.int8)
    torch.testing.assert_close(out.cpu(), want, rtol=0, atol=0)
