"""torch_npu's expert-parallel MoE APIs (npu_moe_distribute_dispatch / _combine) against CPU torch.

Launched with N ranks by `npu-emu run -n N python dist_moe_dist.py` (or torchrun). Every
rank makes every rank's tokens and routing from seeds, so each computes on the CPU:

- dispatch: expand_x = the rows routed to this rank's experts, grouped by local expert,
  then source rank, then the row-major order of the source's expert_ids; expert_token_nums
  (counts, expert_token_nums_type=1); the first local*N entries of ep_recv_counts (the
  expert-major running sum); expand_scales; and with quant_mode=2 the int8 rows and the
  dynamic scales (max|x| / 127);
- combine after an expert f_e(x) = 2x + e (applied per row, e the row's global expert):
  x[t] = sum_k expert_scales[t, k] * f_{e_k}(x[t]), accumulated in float32;
- the _v2 forms (npu_moe_distribute_dispatch_v2 / npu_moe_distribute_combine_v2) with
  x_active_mask (odd ranks leave their last token out: it is not sent and combines to
  shared_expert_x alone) and shared_expert_x added to the sum;
- npu_moe_distribute_combine_add_rms_norm after dispatch_v2 (bfloat16): x = round(combine) +
  residual, y = x / sqrt(mean(x^2) + eps) * gamma, rstd.

Prints "ok <name>" per check and "dist_moe_dist rank R/N passed (K checks)", or exits 1.
"""
import os
import sys
import traceback

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

rank = int(os.environ["RANK"])
ws = int(os.environ["WORLD_SIZE"])
torch.npu.set_device(int(os.environ.get("LOCAL_RANK", rank)))
dist.init_process_group("hccl")
dev = torch.device("npu", torch.npu.current_device())
pg = dist.distributed_c10d._get_default_group()
hcom = pg._get_backend(dev).get_hccl_comm_name(rank)
checks = 0
failed = []
BS, H, K, LOCAL = 5, 64, 2, 2
E = LOCAL * ws


def check(name, fn):
    global checks
    try:
        fn()
        checks += 1
        print(f"ok {name}", flush=True)
    except Exception:  # report every failure, then fail the rank
        failed.append(name)
        print(f"FAIL {name}:\n{traceback.format_exc()}", flush=True)


def tokens(r, dtype, seed):
    g = torch.Generator().manual_seed(1000 * seed + r)
    x = (torch.rand((BS, H), generator=g) * 2 - 1).to(dtype)
    ids = torch.stack([torch.randperm(E, generator=g)[:K] for _ in range(BS)]).to(torch.int32)
    scales = torch.rand((BS, K), generator=g) * 0.5 + 0.25
    return x, ids, scales


def received(all_tokens):
    """(source rank, token, k, expert) of the rows this rank receives, in order."""
    rows = []
    for le in range(LOCAL):
        e = rank * LOCAL + le
        for s, (_, ids, _) in enumerate(all_tokens):
            for i, v in enumerate(ids.flatten().tolist()):
                if v == e:
                    rows.append((s, i // K, i % K, e))
    return rows


def dispatch_combine(dtype):
    all_tokens = [tokens(r, dtype, 1) for r in range(ws)]
    x, ids, scales = all_tokens[rank]
    rows = received(all_tokens)
    out = torch_npu.npu_moe_distribute_dispatch(
        x.to(dev), ids.to(dev), hcom, ws, rank, E, expert_scales=scales.to(dev),
        global_bs=0, expert_token_nums_type=1)
    expand_x, _, expand_idx, token_nums, ep_recv, tp_recv, expand_scales = out
    n = len(rows)
    got = expand_x.cpu()
    assert got.dtype == dtype and got.shape[1] == H, f"expand_x {got.dtype} {tuple(got.shape)}"
    want = torch.stack([all_tokens[s][0][t] for s, t, _, _ in rows])
    assert torch.equal(got[:n], want), "expand_x rows differ"
    counts = [sum(1 for r in rows if r[3] == rank * LOCAL + le and r[0] == s)
              for le in range(LOCAL) for s in range(ws)]
    run = torch.tensor(counts).cumsum(0).to(torch.int32)
    assert torch.equal(ep_recv.cpu()[:LOCAL * ws], run), f"ep_recv_counts {ep_recv.cpu()} want {run}"
    per = [sum(counts[le * ws:(le + 1) * ws]) for le in range(LOCAL)]
    assert token_nums.cpu().tolist() == per, f"expert_token_nums {token_nums.cpu().tolist()} want {per}"
    want_s = torch.tensor([all_tokens[s][2][t, j].item() for s, t, j, _ in rows])
    assert torch.equal(expand_scales.cpu()[:n], want_s), "expand_scales differ"
    # the expert: 2x + e per row
    y = got.float().clone()
    for i, (_, _, _, e) in enumerate(rows):
        y[i] = y[i] * 2 + e
    y = y.to(dtype)
    comb = torch_npu.npu_moe_distribute_combine(
        y.to(dev), ids.to(dev), expand_idx, ep_recv, scales.to(dev), hcom, ws, rank, E,
        tp_send_counts=tp_recv, expand_scales=expand_scales, global_bs=0)
    want_c = torch.zeros((BS, H), dtype=torch.float32)
    for j in range(K):
        f = (x.float() * 2 + ids[:, j:j + 1].float()).to(dtype).float()
        want_c = want_c + scales[:, j:j + 1] * f
    gc = comb.cpu().float()
    err = ((gc - want_c.to(dtype).float()).abs() / (1 + want_c.abs())).max().item()
    assert comb.dtype == dtype and err <= 1e-2, f"combine error {err}"


def dispatch_quant():
    dtype = torch.bfloat16
    all_tokens = [tokens(r, dtype, 2) for r in range(ws)]
    x, ids, _ = all_tokens[rank]
    rows = received(all_tokens)
    expand_x, dyn, *_ = torch_npu.npu_moe_distribute_dispatch(
        x.to(dev), ids.to(dev), hcom, ws, rank, E, quant_mode=2, expert_token_nums_type=0)
    n = len(rows)
    assert expand_x.dtype == torch.int8, f"expand_x {expand_x.dtype}"
    v = torch.stack([all_tokens[s][0][t].float() for s, t, _, _ in rows])
    s = v.abs().amax(1) / 127
    q = torch.round(v / s[:, None]).clamp(-128, 127).to(torch.int8)
    assert torch.equal(dyn.cpu()[:n], s), "dynamic scales differ"
    assert (expand_x.cpu()[:n].int() - q.int()).abs().max().item() <= 1, "int8 rows differ"


def dispatch_combine_v2(dtype):
    all_tokens = [tokens(r, dtype, 3) for r in range(ws)]
    active = [BS - r % 2 for r in range(ws)]
    routed = [(x, ids[:active[r]], s) for r, (x, ids, s) in enumerate(all_tokens)]
    x, ids, scales = all_tokens[rank]
    mask = torch.arange(BS) < active[rank]
    rows = received(routed)
    out = torch_npu.npu_moe_distribute_dispatch_v2(
        x.to(dev), ids.to(dev), hcom, ws, rank, E, x_active_mask=mask.to(dev),
        expert_scales=scales.to(dev), expert_token_nums_type=1, comm_alg="hierarchy")
    expand_x, _, assist, token_nums, ep_recv, tp_recv, expand_scales = out
    n = len(rows)
    got = expand_x.cpu()
    want = torch.stack([all_tokens[s][0][t] for s, t, _, _ in rows])
    assert torch.equal(got[:n], want), "expand_x rows differ"
    per = [sum(1 for r in rows if r[3] == rank * LOCAL + le) for le in range(LOCAL)]
    assert token_nums.cpu().tolist() == per, f"expert_token_nums {token_nums.cpu().tolist()} want {per}"
    y = got.float().clone()
    for i, (_, _, _, e) in enumerate(rows):
        y[i] = y[i] * 2 + e
    y = y.to(dtype)
    g = torch.Generator().manual_seed(77 + rank)
    shared = (torch.rand((BS, H), generator=g) * 2 - 1).to(dtype)
    comb = torch_npu.npu_moe_distribute_combine_v2(
        y.to(dev), ids.to(dev), assist, ep_recv, scales.to(dev), hcom, ws, rank, E,
        tp_send_counts=tp_recv, x_active_mask=mask.to(dev), expand_scales=expand_scales,
        shared_expert_x=shared.to(dev), comm_alg="hierarchy")
    acc = torch.zeros((BS, H), dtype=torch.float32)
    for j in range(K):
        f = (x.float() * 2 + ids[:, j:j + 1].float()).to(dtype).float()
        acc = acc + scales[:, j:j + 1] * f
    acc[~mask] = 0
    want_c = (shared.float() + acc).to(dtype).float()
    gc = comb.cpu().float()
    err = ((gc - want_c).abs() / (1 + want_c.abs())).max().item()
    assert comb.dtype == dtype and err <= 1e-2, f"combine_v2 error {err}"


def combine_add_rms_norm():
    dtype = torch.bfloat16
    all_tokens = [tokens(r, dtype, 4) for r in range(ws)]
    x, ids, scales = all_tokens[rank]
    expand_x, _, assist, _, ep_recv, tp_recv, _ = torch_npu.npu_moe_distribute_dispatch_v2(
        x.to(dev), ids.to(dev), hcom, ws, rank, E, expert_scales=scales.to(dev))
    g = torch.Generator().manual_seed(55 + rank)
    residual = (torch.rand((BS, 1, H), generator=g) * 2 - 1).to(dtype)
    gamma = (torch.rand((H,), generator=g) + 0.5).to(dtype)
    y, rstd, xo = torch_npu.npu_moe_distribute_combine_add_rms_norm(
        expand_x, ids.to(dev), assist, ep_recv, scales.to(dev), residual.to(dev), gamma.to(dev),
        hcom, ws, rank, E, tp_send_counts=tp_recv, norm_eps=1e-6)
    # the combine sums k in order in float32
    acc = torch.zeros((BS, H))
    for j in range(K):
        acc = acc + scales[:, j:j + 1] * x.float()
    comb = acc.to(dtype)
    want_x = (comb.double() + residual[:, 0].double()).to(dtype)
    inv = 1 / torch.sqrt(want_x.double().pow(2).mean(1, keepdim=True) + 1e-6)
    want_y = (want_x.double() * inv * gamma.double()).to(dtype)
    assert torch.equal(xo.cpu()[:, 0], want_x), "x differs"
    err = ((y.cpu()[:, 0].float() - want_y.float()).abs() / (1 + want_y.float().abs())).max().item()
    assert err <= 8e-3, f"y error {err}"
    assert torch.allclose(rstd.cpu()[:, 0].double(), inv, rtol=1e-5), "rstd differs"


for dt in (torch.float16, torch.bfloat16):
    check(f"dispatch+combine {dt}", lambda: dispatch_combine(dt))
    check(f"dispatch_v2+combine_v2 {dt}", lambda: dispatch_combine_v2(dt))
check("dispatch quant_mode 2", dispatch_quant)
check("combine_add_rms_norm", combine_add_rms_norm)

dist.destroy_process_group()
if failed:
    print(f"dist_moe_dist rank {rank}/{ws} FAILED: {failed}", flush=True)
    sys.exit(1)
print(f"dist_moe_dist rank {rank}/{ws} passed ({checks} checks)", flush=True)
