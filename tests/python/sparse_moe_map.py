"""Sparse COO tensors and the routing-map MoE permutation through torch_npu, against CPU torch:
- coalesce() of COO tensors with duplicate indices (aclnnCoalesceSparse: torch_npu finds the
  unique flattened indices, the operator sums the values into them), float32, float16,
  bfloat16 (torch_npu computes those in float32), int32 and hybrid (dense trailing
  dimension) values; torch.sparse.sum over all and over one dimension; sparse + sparse;
  to_dense of a coalesced tensor;
- npu_moe_token_permute_with_routing_map (aclnnMoeTokenPermuteWithRoutingMap) with and
  without drop_and_pad and probs, against the golden of op-plugin's own test, and its
  backward (aclnnMoeTokenPermuteWithRoutingMapGrad) against CPU autograd of that golden;
- npu_moe_token_unpermute_with_routing_map (aclnnMoeTokenUnpermuteWithRoutingMap) in both
  modes with and without probs, and its backward (aclnnMoeTokenUnpermuteWithRoutingMapGrad);
- the documented argument errors (numOutTokens past tokens * experts, a 3-D routing map).
Prints PASS/FAIL per case and exits 1 when any case fails.
"""
import sys

import torch
import torch_npu  # noqa: F401

D = "npu"
FAILED = []
torch.manual_seed(0)


def case(name, f):
    try:
        f()
        torch.npu.synchronize()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else repr(e))


def close(got, want, tol, what):
    got = got.detach().cpu().float()
    want = want.detach().float()
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    err = (got - want).abs().max().item() if want.numel() else 0.0
    assert err <= tol, f"{what}: max error {err} > {tol}"


# ---------------------------------------------------------------- sparse COO


def coo(dtype, hybrid=False):
    i = torch.tensor([[0, 2, 1, 0, 2, 3, 0], [1, 0, 2, 1, 0, 3, 1]])
    shape = (4, 4, 3) if hybrid else (4, 4)
    v = torch.randn(7, 3) if hybrid else torch.randn(7)
    if dtype == torch.int32:
        v = torch.randint(-50, 50, v.shape)
    return torch.sparse_coo_tensor(i, v.to(dtype), shape)


def coalesce():
    for dtype, tol in ((torch.float32, 1e-6), (torch.float16, 2e-3), (torch.bfloat16, 2e-2),
                       (torch.int32, 0)):
        for hybrid in (False, True):
            s = coo(dtype, hybrid)
            want = s.coalesce()
            got = s.to(D).coalesce()
            assert got.is_coalesced()
            assert got.dtype == dtype, (got.dtype, dtype)
            gi = got.indices().cpu()
            assert torch.equal(gi, want.indices()), f"{dtype} hybrid={hybrid}: {gi.tolist()}"
            close(got.values(), want.values(), tol, f"{dtype} hybrid={hybrid} values")
            close(got.to_dense(), want.to_dense(), tol, f"{dtype} hybrid={hybrid} dense")
    # no duplicates: the same entries, sorted
    s = torch.sparse_coo_tensor(torch.tensor([[3, 0, 1]]), torch.tensor([1.0, 2.0, 3.0]), (5,))
    got = s.to(D).coalesce()
    assert got.indices().cpu().tolist() == [[0, 1, 3]] and got.values().cpu().tolist() == [2.0, 3.0, 1.0]


def sparse_sum():
    s = coo(torch.float32)
    close(torch.sparse.sum(s.to(D)), torch.sparse.sum(s), 1e-5, "sum all")
    got = torch.sparse.sum(s.to(D), dim=1)
    want = torch.sparse.sum(s, dim=1)
    close(got.to_dense(), want.to_dense(), 1e-5, "sum dim 1")
    h = coo(torch.float32, hybrid=True)
    close(torch.sparse.sum(h.to(D), dim=0).to_dense(), torch.sparse.sum(h, dim=0).to_dense(), 1e-5,
          "hybrid sum dim 0")


def sparse_add():
    a, b = coo(torch.float32), coo(torch.float32)
    got = (a.to(D) + b.to(D)).coalesce()
    want = (a + b).coalesce()
    assert torch.equal(got.indices().cpu(), want.indices())
    close(got.values(), want.values(), 1e-5, "a + b")


# ---------------------------------------------------------------- routing-map MoE


def permute_golden(tokens, routing_map, probs, num_out_tokens, drop_and_pad):
    """op-plugin's test_npu_moe_token_permute_with_routing_map.py golden (differentiable)."""
    num_tokens = tokens.shape[0]
    num_experts = routing_map.shape[1]
    if drop_and_pad:
        cap = num_out_tokens // num_experts
        rm = routing_map.to(torch.int8).T.contiguous()
        si = rm.sort(dim=-1, descending=True, stable=True)[1][:, :cap].contiguous().view(-1)
        pp = None
        if probs is not None:
            idx = (torch.arange(num_experts).unsqueeze(-1) * num_tokens + si.view(num_experts, cap)).view(-1)
            pp = probs.T.contiguous().view(-1).index_select(0, idx)
        return tokens.index_select(0, si), pp, si.to(torch.int32)
    rm = routing_map.bool().T.contiguous()
    ti = torch.arange(num_tokens).unsqueeze(0).expand(num_experts, -1)
    si = ti.masked_select(rm)
    si2 = torch.sort(si.float(), stable=True)[1]
    pp = probs.T.masked_select(rm) if probs is not None else None
    return tokens.index_select(0, si), pp, si2.to(torch.int32)


def topk_map(t, e, k):
    m = torch.zeros(t, e, dtype=torch.bool)
    for i in range(t):
        m[i, torch.randperm(e)[:k]] = True
    return m


def permute():
    t, e, k, h = 6, 4, 2, 8
    for dtype, tol in ((torch.float32, 1e-6), (torch.bfloat16, 1e-2)):
        rm = topk_map(t, e, k)
        for drop_and_pad, n_out in ((False, t * k), (True, 8)):
            for with_probs in (False, True):
                x = torch.randn(t, h).to(dtype)
                p = torch.rand(t, e).to(dtype) * rm if with_probs else None
                what = f"{dtype} drop_and_pad={drop_and_pad} probs={with_probs}"
                xc = x.clone().float().requires_grad_(True)
                pc = p.clone().float().requires_grad_(True) if with_probs else None
                w0, w1, w2 = permute_golden(xc, rm, pc, n_out, drop_and_pad)
                xn = x.to(D).requires_grad_(True)
                pn = p.to(D).requires_grad_(True) if with_probs else None
                g0, g1, g2 = torch_npu.npu_moe_token_permute_with_routing_map(
                    xn, rm.to(D), probs=pn, num_out_tokens=n_out, drop_and_pad=drop_and_pad)
                assert g2.dtype == torch.int32
                assert torch.equal(g2.cpu(), w2), f"{what}: sorted_indices {g2.cpu().tolist()} != {w2.tolist()}"
                close(g0, w0, tol, f"{what}: permuted tokens")
                if with_probs:
                    close(g1, w1, tol, f"{what}: permuted probs")
                # backward with a non-uniform upstream gradient
                gw = torch.randn(w0.shape)
                loss_c = (w0 * gw).sum() + ((w1 * torch.arange(w1.numel())).sum() if with_probs else 0)
                loss_c.backward()
                loss_n = (g0.float() * gw.to(D)).sum()
                if with_probs:
                    loss_n = loss_n + (g1.float() * torch.arange(g1.numel()).to(D)).sum()
                loss_n.backward()
                close(xn.grad, xc.grad, 4 * tol + 1e-5, f"{what}: tokens grad")
                if with_probs:
                    close(pn.grad, pc.grad, 4 * tol + 1e-5, f"{what}: probs grad")


def unpermute_golden(permuted, sorted_indices, routing_map, probs, padded, restore_shape):
    """op-plugin's test_npu_moe_token_unpermute_with_routing_map.py golden (differentiable)."""
    if padded:
        if probs is not None:
            e, t = probs.size(1), probs.size(0)
            cap = sorted_indices.size(0) // e
            idx = (torch.arange(e).unsqueeze(-1) * t + sorted_indices.view(e, cap)).view(-1)
            permuted = permuted * probs.T.contiguous().view(-1).index_select(0, idx).unsqueeze(-1)
        out = torch.zeros(restore_shape, dtype=permuted.dtype)
        return out.index_add(0, sorted_indices.long(), permuted)
    k = permuted.shape[0] // routing_map.shape[0]
    u = permuted.index_select(0, sorted_indices.long()).reshape(-1, k, permuted.size(-1))
    if probs is not None:
        u = u * probs.masked_select(routing_map.bool()).reshape(-1, k).unsqueeze(-1)
    return u.sum(dim=1)


def unpermute():
    t, e, k, h = 8, 4, 2, 6
    for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 5e-3)):
        rm = topk_map(t, e, k).to(torch.int8)
        for padded in (False, True):
            for with_probs in (False, True):
                what = f"{dtype} padded={padded} probs={with_probs}"
                if padded:
                    cap = 3
                    si = rm.T.contiguous().argsort(dim=-1, descending=True, stable=True)[:, :cap]
                    si = si.contiguous().to(torch.int32).view(-1)
                    x = torch.randn(e * cap, h).to(dtype)
                else:
                    rt = rm.bool().T.contiguous()
                    ti = torch.arange(t).unsqueeze(0).expand(e, -1).masked_select(rt)
                    si = torch.sort(ti.float(), stable=True)[1].to(torch.int32)
                    x = torch.randn(t * k, h).to(dtype)
                p = torch.randn(t, e).to(dtype) if with_probs else None
                xc = x.float().clone().requires_grad_(True)
                pc = p.float().clone().requires_grad_(True) if with_probs else None
                want = unpermute_golden(xc, si, rm, pc, padded, [t, h])
                xn = x.to(D).requires_grad_(True)
                pn = p.to(D).requires_grad_(True) if with_probs else None
                got = torch_npu.npu_moe_token_unpermute_with_routing_map(
                    xn, si.to(D), [t, h], probs=pn, routing_map=rm.to(D), drop_and_pad=padded)
                close(got, want, 4 * tol, f"{what}: unpermuted")
                gw = torch.randn(t, h)
                (want * gw).sum().backward()
                (got.float() * gw.to(D)).sum().backward()
                close(xn.grad, xc.grad, 4 * tol, f"{what}: permuted tokens grad")
                if with_probs:
                    close(pn.grad, pc.grad, 8 * tol, f"{what}: probs grad")


def errors():
    x = torch.randn(4, 8).to(D)
    rm = topk_map(4, 2, 1).to(D)
    for kwargs, words in (({"num_out_tokens": 9}, "numOutTokens"),):
        try:
            torch_npu.npu_moe_token_permute_with_routing_map(x, rm, **kwargs)
            torch.npu.synchronize()
        except RuntimeError as err:
            assert words in str(err) and "161002" in str(err), str(err)[:400]
        else:
            raise AssertionError(f"{kwargs}: no error")
    # a routing map that does not send every token to topK experts fails the launch
    bad = torch.zeros(4, 2, dtype=torch.bool)
    bad[0, 0] = True
    try:
        torch_npu.npu_moe_token_permute_with_routing_map(x, bad.to(D), num_out_tokens=4)
        torch.npu.synchronize()
    except RuntimeError as err:
        assert "topK experts" in str(err), str(err)[:400]
    else:
        raise AssertionError("uneven routing map: no error")


case("coalesce", coalesce)
case("sparse_sum", sparse_sum)
case("sparse_add", sparse_add)
case("moe_permute_with_routing_map", permute)
case("moe_unpermute_with_routing_map", unpermute)
case("moe_routing_map_errors", errors)

print(f"sparse_moe_map: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
