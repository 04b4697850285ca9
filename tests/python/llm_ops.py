"""Large-model utility operators through torch_npu against CPU torch references written from
CANN's formulas: torch_npu.scatter_update / scatter_update_ (aclnnInplaceScatterUpdate),
npu_anti_quant (aclnnAscendAntiQuant), npu_top_k_top_p (aclnnApplyTopKTopP) and
npu_moe_token_permute / npu_moe_token_unpermute with their backward (aclnnMoeTokenPermute,
...Grad, aclnnMoeTokenUnpermute, ...Grad). Prints PASS/FAIL per case and exits 1 when any
case fails.
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


def close(got, want, tol=0.0):
    got = got.detach().cpu()
    if not torch.allclose(got.double(), want.double(), rtol=tol, atol=tol, equal_nan=True):
        raise AssertionError(f"got {got.flatten()[:8].tolist()} want {want.flatten()[:8].tolist()}")


def scatter_update():
    torch.manual_seed(0)
    data = torch.randn(2, 3, 8, 4, dtype=torch.float16)
    upd = torch.randn(2, 3, 2, 4, dtype=torch.float16)
    idx = torch.tensor([5, 1], dtype=torch.int64)
    want = data.clone()
    for i in range(2):
        want[i, :, idx[i]:idx[i] + 2, :] = upd[i]
    got = torch_npu.scatter_update(data.to(D), idx.to(D), upd.to(D), -2)
    close(got, want)
    d = data.to(D)
    torch_npu.scatter_update_(d, idx.to(D), upd.to(D), -2)
    close(d, want)


def anti_quant():
    torch.manual_seed(1)
    x = torch.randint(-128, 128, (4, 16), dtype=torch.int8)
    scale = torch.rand(16) + 0.1
    offset = torch.randn(16)
    got = torch_npu.npu_anti_quant(x.to(D), scale.to(D), offset=offset.to(D), dst_dtype=torch.float16)
    want = ((x.float() + offset) * scale).half()
    if got.dtype != torch.float16:
        raise AssertionError(f"dtype {got.dtype}")
    close(got, want)
    got = torch_npu.npu_anti_quant(x.to(D), scale.to(D), dst_dtype=torch.bfloat16)
    close(got, (x.float() * scale).bfloat16())


def top_k_top_p_ref(logits, p, k):
    sv, si = torch.sort(logits, dim=-1, descending=False, stable=True)
    v = logits.shape[1]
    kk = k.long().clamp(1, v)
    thr = sv.gather(1, (v - kk).unsqueeze(1))
    use_k = ((k > 0) & (k < v)).unsqueeze(1)
    sv = torch.where(use_k & (sv < thr), torch.tensor(float("-inf")), sv)
    probs = sv.softmax(-1)
    cum = probs.cumsum(-1)
    mask = cum <= 1 - p.unsqueeze(1)
    mask[:, -1] = False
    sv = sv.masked_fill(mask, float("-inf"))
    return torch.empty_like(sv).scatter_(1, si, sv)


def top_k_top_p():
    torch.manual_seed(2)
    logits = torch.randn(4, 32)
    p = torch.tensor([0.9, 0.5, 0.3, 1.0])
    k = torch.tensor([5, 0, 32, 10], dtype=torch.int32)
    got = torch_npu.npu_top_k_top_p(logits.to(D), p.to(D), k.to(D))
    close(got, top_k_top_p_ref(logits, p, k))


def moe_ref(tokens, indices, probs):
    topk = indices.shape[1]
    sorted_idx = torch.argsort(indices.flatten(), stable=True)
    permuted = tokens.index_select(0, sorted_idx // topk)
    restored = torch.zeros(sorted_idx.numel(), tokens.shape[1], dtype=tokens.dtype)
    restored.index_copy_(0, sorted_idx, permuted)
    out = (restored.reshape(-1, topk, tokens.shape[1]) * probs.unsqueeze(-1)).sum(1)
    return permuted, out


def moe_permute_unpermute():
    torch.manual_seed(3)
    tokens = torch.randn(6, 8, requires_grad=True)
    indices = torch.randint(0, 4, (6, 2), dtype=torch.int32)
    probs = torch.softmax(torch.randn(6, 2), -1).requires_grad_(True)
    gout = torch.randn(6, 8)
    # CPU reference and its gradients
    perm_ref, out_ref = moe_ref(tokens, indices.long(), probs)
    (out_ref * gout).sum().backward()
    gt_ref, gp_ref = tokens.grad.clone(), probs.grad.clone()
    # NPU
    tn = tokens.detach().to(D).requires_grad_(True)
    pn = probs.detach().to(D).requires_grad_(True)
    perm, sorted_indices = torch_npu.npu_moe_token_permute(tn, indices.to(D))
    close(perm, perm_ref.detach(), 1e-6)
    out = torch_npu.npu_moe_token_unpermute(perm, sorted_indices, pn)
    close(out, out_ref.detach(), 1e-5)
    out.backward(gout.to(D))
    close(tn.grad, gt_ref, 1e-5)
    close(pn.grad, gp_ref, 1e-5)


def moe_permute_num_out_tokens():
    torch.manual_seed(4)
    tokens = torch.randn(5, 4)
    indices = torch.randint(0, 3, (5, 2), dtype=torch.int64)
    perm, _ = torch_npu.npu_moe_token_permute(tokens.to(D), indices.to(D), num_out_tokens=7)
    perm_ref, _ = moe_ref(tokens, indices, torch.ones(5, 2))
    close(perm, perm_ref[:7])


for name, f in [
    ("scatter_update", scatter_update),
    ("anti_quant", anti_quant),
    ("top_k_top_p", top_k_top_p),
    ("moe_permute_unpermute", moe_permute_unpermute),
    ("moe_permute_num_out_tokens", moe_permute_num_out_tokens),
]:
    case(name, f)
print(f"llm_ops: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
