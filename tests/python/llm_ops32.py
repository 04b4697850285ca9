"""mHC and causal-convolution operators of torch_npu's API pages.

npu_mhc_post (aclnnMhcPost, which CANN's operator reference lists for Atlas A2/A3) against a
float64 CPU reference of the documented formula, y[j, d] = sum_i h_res[i, j] x[i, d] +
h_out[d] h_post[j] (x + h_out (x) h_post without h_res), in BSND and TND layouts, float16 and
bfloat16, non-contiguous inputs, and the page's example as written; a bad h_res dtype gives
161002 naming hRes.

The operators the reference lists for Ascend 950PR/950DT only are refused as CANN refuses them
on Atlas A2 (161002 naming the platform): npu_mhc_sinkhorn and npu_mhc_sinkhorn_backward,
npu_masked_causal_conv1d and its backward, npu_fused_causal_conv1d (each through its page's
example). torch_npu 2.9 itself refuses npu_mhc_post_backward (so the autograd of npu_mhc_post)
and npu_mhc_pre below CANN 9.0; npu-emu reports CANN 8.5, and those refusals are checked too.
Prints PASS/FAIL per case and exits 1 when any fails.
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
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else repr(e))


def expect_error(f, words):
    try:
        f()
        torch.npu.synchronize()
    except RuntimeError as err:
        s = str(err)
        for w in words:
            assert w in s, f"{w!r} not in: {s[:600]}"
    else:
        raise AssertionError("no error")


def close(got, want, rtol, atol):
    torch.testing.assert_close(got.cpu().double(), want.double(), rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------
# npu_mhc_post


def mhc_post_ref(x, h_res, h_out, h_post):
    """Loops over the documented formula in float64 (rows flattened)."""
    n, d = x.shape[-2], x.shape[-1]
    xs = x.double().reshape(-1, n, d)
    ho = h_out.double().reshape(-1, d)
    hp = h_post.double().reshape(-1, n)
    hr = None if h_res is None else h_res.double().reshape(-1, n, n)
    y = torch.zeros_like(xs)
    for r in range(xs.shape[0]):
        for j in range(n):
            acc = ho[r] * hp[r, j]
            if hr is None:
                acc = acc + xs[r, j]
            else:
                for i in range(n):
                    acc = acc + hr[r, i, j] * xs[r, i]
            y[r, j] = acc
    return y.reshape(x.shape)


def mhc_post_case(lead, n, d, dtype, with_res, strided=False):
    def f():
        torch.manual_seed(7)
        if strided:
            # every other row of a wider tensor: a non-contiguous x and h_out
            x = torch.randn(*lead, n, 2 * d, dtype=dtype)[..., ::2]
            h_out = torch.randn(*lead, 2 * d, dtype=dtype)[..., ::2]
        else:
            x = torch.randn(*lead, n, d, dtype=dtype)
            h_out = torch.randn(*lead, d, dtype=dtype)
        h_res = torch.rand(*lead, n, n) if with_res else None
        h_post = torch.rand(*lead, n) * 2
        xn, hon = x.to(D), h_out.to(D)
        if strided:
            xn = torch.randn(*lead, n, 2 * d, dtype=dtype).to(D)[..., ::2].copy_(x.to(D))
            hon = torch.randn(*lead, 2 * d, dtype=dtype).to(D)[..., ::2].copy_(h_out.to(D))
            assert not xn.is_contiguous()
        y = torch_npu.npu_mhc_post(xn, None if h_res is None else h_res.to(D), hon, h_post.to(D))
        assert y.dtype == dtype and tuple(y.shape) == tuple(x.shape), (y.dtype, y.shape)
        want = mhc_post_ref(x, h_res, h_out, h_post)
        tol = 1e-2 if dtype == torch.float16 else 4e-2
        close(y, want, tol, tol)

    return f


def mhc_post_page_example():
    # torch_npu-npu_mhc_post.md, single-operator example, as written (TND: T=1, n=4, D=512)
    x_shape = [1, 4, 512]
    h_res_shape = [1, 4, 4]
    h_out_shape = [1, 512]
    h_post_shape = [1, 4]
    x = torch.rand(x_shape, dtype=torch.float16)
    h_res = torch.rand(h_res_shape, dtype=torch.float32)
    h_out = torch.rand(h_out_shape, dtype=torch.float16)
    h_post = torch.rand(h_post_shape, dtype=torch.float32)
    y_npu = torch_npu.npu_mhc_post(x.npu(), h_res.npu(), h_out.npu(), h_post.npu())
    close(y_npu, mhc_post_ref(x, h_res, h_out, h_post), 1e-2, 1e-2)
    y_npu = torch_npu.npu_mhc_post(x.npu(), None, h_out.npu(), h_post.npu())
    close(y_npu, mhc_post_ref(x, None, h_out, h_post), 1e-2, 1e-2)


def mhc_post_empty():
    # the page allows empty tensors: T = 0 gives an empty result
    y = torch_npu.npu_mhc_post(torch.randn(0, 4, 64, dtype=torch.float16).to(D), torch.rand(0, 4, 4).to(D),
                               torch.randn(0, 64, dtype=torch.float16).to(D), torch.rand(0, 4).to(D))
    torch.npu.synchronize()
    assert tuple(y.shape) == (0, 4, 64), y.shape


def mhc_post_bad_hres():
    x = torch.randn(2, 4, 64, dtype=torch.float16).to(D)
    expect_error(lambda: torch_npu.npu_mhc_post(
        x, torch.rand(2, 4, 4, dtype=torch.float16).to(D),
        torch.randn(2, 64, dtype=torch.float16).to(D), torch.rand(2, 4).to(D)),
        ["161002", "hRes"])


def mhc_post_bad_hpost_shape():
    x = torch.randn(1, 2, 4, 64, dtype=torch.bfloat16).to(D)
    expect_error(lambda: torch_npu.npu_mhc_post(
        x, torch.rand(1, 2, 4, 4).to(D),
        torch.randn(1, 2, 64, dtype=torch.bfloat16).to(D), torch.rand(1, 2, 3).to(D)),
        ["161002", "hPost"])


def mhc_post_backward_refused():
    # torch_npu checks the CANN version before calling aclnnMhcPostBackward (>= 9.0.0)
    n, d = 4, 128
    gy = torch.randn(2, n, d, dtype=torch.float16).to(D)
    x = torch.randn(2, n, d, dtype=torch.float16).to(D)
    expect_error(lambda: torch_npu.npu_mhc_post_backward(
        gy, x, torch.rand(2, n, n).to(D), torch.randn(2, d, dtype=torch.float16).to(D),
        torch.rand(2, n).to(D)), ["npu_mhc_post_backward requires CANN >= 9.0.0"])
    # and so the autograd of npu_mhc_post
    xr = x.clone().requires_grad_()
    y = torch_npu.npu_mhc_post(xr, torch.rand(2, n, n).to(D),
                               torch.randn(2, d, dtype=torch.float16).to(D), torch.rand(2, n).to(D))
    expect_error(lambda: y.float().sum().backward(), ["requires CANN >= 9.0.0"])


# ---------------------------------------------------------------------------------------
# Ascend 950-only operators: refused on the emulated Atlas A2 as CANN refuses them

A5 = ["161002", "Ascend 950", "Ascend910B"]


def mhc_sinkhorn_refused():
    # torch_npu-npu_mhc_sinkhorn.md, single-operator example, as written
    device = torch.device('npu:0')
    torch_npu.npu.set_device(device)
    x_shape = [1, 128, 4, 4]
    x = torch.rand(x_shape, dtype=torch.float32).clamp(min=1e-4)
    x_npu = x.npu()
    eps = 1e-6
    num_iters = 20
    out_flag = 0
    expect_error(lambda: torch_npu.npu_mhc_sinkhorn(x_npu, eps=eps, num_iters=num_iters,
                                                     out_flag=out_flag),
                 A5 + ["aclnnMhcSinkhorn"])


def mhc_sinkhorn_backward_refused():
    t, n, iters = 8, 4, 2
    gy = torch.randn(t, n, n).to(D)
    norm = torch.rand(2 * iters * t * n * 8).to(D)
    s = torch.rand(2 * iters * t * 8).to(D)
    expect_error(lambda: torch_npu.npu_mhc_sinkhorn_backward(gy, norm, s),
                 A5 + ["aclnnMhcSinkhornBackward"])


def masked_causal_conv1d_refused():
    # torch_npu-npu_masked_causal_conv1d.md, single-operator example, as written
    S, B, H, W = 2048, 4, 768, 3
    input = torch.randn(S, B, H, dtype=torch.bfloat16).npu()  # noqa: A001
    weight = torch.randn(W, H, dtype=torch.bfloat16).npu()
    mask = torch.rand(B, S).npu() > 0.3  # bool [B, S]
    expect_error(lambda: torch_npu.npu_masked_causal_conv1d(input, weight, mask=mask),
                 A5 + ["aclnnMaskedCausalConv1d"])


def masked_causal_conv1d_backward_refused():
    S, B, H, W = 16, 2, 384, 3
    x = torch.randn(S, B, H, dtype=torch.float16).to(D)
    w = torch.randn(W, H, dtype=torch.float16).to(D)
    expect_error(lambda: torch_npu.npu_masked_causal_conv1d_backward(torch.randn_like(x), x, w),
                 A5 + ["aclnnMaskedCausalConv1dBackward"])


def fused_causal_conv1d_refused():
    # torch_npu-npu_fused_causal_conv1d.md, prefill example, as written
    K = 3
    dim = 128
    dtype = torch.bfloat16
    weight = torch.randn(K, dim, dtype=dtype).npu()
    seq_lens = [15, 12, 20, 10]
    cu_seq_len = sum(seq_lens)
    x = torch.randn(cu_seq_len, dim, dtype=dtype).npu()
    query_start_loc = torch.tensor([0, 15, 27, 47, 57], dtype=torch.int32).npu()
    num_slots = 8
    conv_states = torch.randn(num_slots, K - 1, dim, dtype=dtype).npu()
    cache_indices = torch.tensor([0, 3, 1, 5], dtype=torch.int32).npu()
    num_computed_tokens = torch.tensor([10, 5, 0, 0], dtype=torch.int32).npu()
    max_query_len = max(seq_lens)
    block_size = 128
    conv_mode = "default"
    residual_connection = 0
    before = conv_states.cpu()
    expect_error(lambda: torch_npu.npu_fused_causal_conv1d(
        x, weight, conv_states, query_start_loc=query_start_loc, cache_indices=cache_indices,
        initial_state_mode=None, bias=None, num_accepted_tokens=None,
        num_computed_tokens=num_computed_tokens, block_idx_first_scheduled_token=None,
        block_idx_last_scheduled_token=None, initial_state_idx=None, activation="None",
        pad_slot_id=-1, run_mode=0, max_query_len=max_query_len,
        residual_connection=residual_connection, block_size=block_size, conv_mode=conv_mode),
        A5 + ["aclnnFusedCausalConv1d"])
    assert torch.equal(conv_states.cpu(), before), "conv_states changed by a refused call"


def mhc_pre_refused():
    # torch_npu-npu_mhc_pre.md example (smaller D): torch_npu needs CANN >= 9.0.0
    T, n, Dm = 8, 4, 256
    x = torch.randn(T, n, Dm, dtype=torch.bfloat16).npu()
    phi = torch.randn(n * n + 2 * n, n * Dm, dtype=torch.float32).npu()
    alpha = torch.tensor([1.0, 1.0, 1.0], dtype=torch.float32).npu()
    bias = torch.full((n * n + 2 * n,), 0.01, dtype=torch.float32).npu()
    gamma = torch.randn(n, Dm, dtype=torch.float32).npu()
    expect_error(lambda: torch_npu.npu_mhc_pre(x, phi, alpha, bias, gamma=gamma, out_flag=1),
                 ["npu_mhc_pre requires CANN >= 9.0.0"])


case("mhc_post_bsnd_f16", mhc_post_case([2, 3], 4, 64, torch.float16, True))
case("mhc_post_tnd_bf16", mhc_post_case([5], 6, 128, torch.bfloat16, True))
case("mhc_post_no_hres", mhc_post_case([2, 2], 4, 32, torch.float16, False))
case("mhc_post_strided", mhc_post_case([3], 4, 48, torch.bfloat16, True, strided=True))
case("mhc_post_page_example", mhc_post_page_example)
case("mhc_post_empty", mhc_post_empty)
case("mhc_post_bad_hres", mhc_post_bad_hres)
case("mhc_post_bad_hpost_shape", mhc_post_bad_hpost_shape)
case("mhc_post_backward_refused", mhc_post_backward_refused)
case("mhc_sinkhorn_refused", mhc_sinkhorn_refused)
case("mhc_sinkhorn_backward_refused", mhc_sinkhorn_backward_refused)
case("masked_causal_conv1d_refused", masked_causal_conv1d_refused)
case("masked_causal_conv1d_backward_refused", masked_causal_conv1d_backward_refused)
case("fused_causal_conv1d_refused", fused_causal_conv1d_refused)
case("mhc_pre_refused", mhc_pre_refused)

print(f"llm_ops32: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
