"""LLM-serving sampling through torch_npu against references written here:
npu_top_k_top_p_sample (aclnnTopKTopPSampleV2) in its None, qSample and multiNomial modes with
top-k, top-p and min-p (the kept set and its probabilities by the reference; the random modes
by their distribution: every pick inside the kept set, frequencies near the renormalised
probabilities, the same generator seed giving the same picks), and npu_sim_exponential_
(aclnnSimThreadExponential: the Exp(lambda) distribution, determinism per seed), and
npu_advance_step_flashattn (aclnnAdvanceStep, aclnnAdvanceStepV2: vLLM's advance step, with
and without speculative tokens, against a reference)."""
import sys

import torch
import torch_npu  # noqa: F401

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


def kept_ref(row, k, p, min_p, ks_max=1024, input_is_logits=True):
    """The kept token indices of one row (in the operator's order) and their probabilities."""
    row = row.float()
    v = row.numel()
    kmax = min((ks_max + 7) // 8 * 8, 1024)
    use_k = 1 <= k <= min(kmax, v)
    use_p = p < 1
    norm = (lambda x: torch.softmax(x, 0)) if input_is_logits else (lambda x: x)
    if not use_k and not use_p and min_p < 1:
        idx, pr = torch.arange(v), norm(row)
    else:
        vals, idx = torch.sort(row, descending=True, stable=True)
        if use_k:
            vals, idx = vals[:k], idx[:k]
        pr = norm(vals)
        if use_p:
            if p > 0:
                before = torch.cumsum(pr, 0) - pr
                n = max(int((before < p).sum()), 1)
            else:
                n = 1
            idx, pr = idx[:n], pr[:n].clone()
            if p <= 0 and input_is_logits:
                pr[0] = 1
    if 0 < min_p < 1:
        keep = pr >= pr.max() * min_p
        idx, pr = idx[keep], pr[keep]
    elif min_p >= 1:
        idx, pr = idx[:1], pr[:1]
    return idx, pr


def argmax_mode(dtype):
    def f():
        b, v = 6, 64
        logits = (torch.randn(b, v) * 2).to(dtype)
        ks = torch.tensor([0, 5, 20, 1, 2000, 8], dtype=torch.int32)
        ps = torch.tensor([0.6, 1.0, 0.3, 0.9, 1.0, 0.0]).to(dtype)
        mps = torch.tensor([0.0, 0.2, 0.0, 0.5, 0.1, 0.0]).to(dtype)
        idx, kp = torch_npu.npu_top_k_top_p_sample(logits.npu(), ks.npu(), ps.npu(), min_ps=mps.npu(),
                                                   is_need_logits=True, post_sample="None")
        want_kp = torch.full((b, v), float("-inf"))
        for r in range(b):
            ki, pr = kept_ref(logits[r], int(ks[r]), float(ps[r].float()), float(mps[r].float()))
            want = int(ki[int(torch.argmax(pr))])
            assert int(idx[r]) == want, f"row {r}: index {int(idx[r])} != {want}"
            want_kp[r, ki] = logits[r].float()[ki]
        assert torch.equal(kp.cpu(), want_kp), "logits_top_kp_select differs"
    return f


def freq_check(picks, logits_row, k, p, min_p, what):
    ki, pr = kept_ref(logits_row, k, p, min_p)
    want = torch.zeros(logits_row.numel())
    want[ki] = pr / pr.sum()
    allowed = set(ki.tolist())
    bad = [x for x in picks.tolist() if x not in allowed]
    assert not bad, f"{what}: picks {bad[:5]} outside the kept set {sorted(allowed)}"
    freq = torch.bincount(picks, minlength=logits_row.numel()).float() / picks.numel()
    err = (freq - want).abs().max().item()
    assert err < 0.03, f"{what}: frequency error {err} (freq {freq[ki].tolist()} want {want[ki].tolist()})"


def q_sample():
    b, v = 4000, 32
    row = torch.randn(v) * 1.5
    logits = row.repeat(b, 1)
    ks = torch.full((b,), 8, dtype=torch.int32)
    ps = torch.full((b,), 0.85)
    q = torch.empty(b, v, device="npu")
    gen = torch.Generator(device="npu")
    gen.manual_seed(7)
    torch_npu.npu_sim_exponential_(q, lambd=1.0, generator=gen)
    idx, _ = torch_npu.npu_top_k_top_p_sample(logits.npu(), ks.npu(), ps.npu(), q=q, post_sample="qSample")
    freq_check(idx.cpu(), row, 8, 0.85, -1, "qSample")


def multinomial():
    b, v = 4000, 24
    row = (torch.randn(v) * 2).half()
    logits = row.repeat(b, 1)
    ks = torch.full((b,), 10, dtype=torch.int32)
    ps = torch.full((b,), 0.9).half()
    mps = torch.full((b,), 0.05).half()

    def run(seed):
        gen = torch.Generator(device="npu")
        gen.manual_seed(seed)
        idx, kp = torch_npu.npu_top_k_top_p_sample(logits.npu(), ks.npu(), ps.npu(), min_ps=mps.npu(),
                                                   is_need_logits=True, post_sample="multiNomial", generator=gen)
        return idx.cpu(), kp.cpu()

    idx, kp = run(3)
    assert idx.shape == (b,), f"shape {tuple(idx.shape)}"
    freq_check(idx, row, 10, float(ps[0].float()), float(mps[0].float()), "multiNomial")
    ki, _ = kept_ref(row, 10, float(ps[0].float()), float(mps[0].float()))
    want_kp = torch.full((v,), float("-inf"))
    want_kp[ki] = row.float()[ki]
    assert torch.equal(kp[0], want_kp), "logits_top_kp_select differs"
    assert torch.equal(run(3)[0], idx), "the same generator seed gave other picks"
    assert not torch.equal(run(4)[0], idx), "another seed gave the same picks"


def doc_example():
    logits = torch.empty(2, 4).uniform_(-2, 2).half()
    top_ks = torch.tensor([1, 1], dtype=torch.int32)
    top_ps = torch.tensor([0.45, 0.42]).half()
    min_ps = torch.tensor([0.3, 0.2]).half()
    gen = torch.Generator(device="npu")
    gen.manual_seed(1)
    idx, kp = torch_npu.npu_top_k_top_p_sample(logits.npu(), top_ks.npu(), top_ps.npu(), q=None, eps=1e-8,
                                               is_need_logits=True, top_k_guess=32, min_ps=min_ps.npu(),
                                               ks_max=1024, input_is_logits=True, post_sample="multiNomial",
                                               generator=gen)
    want = torch.argmax(logits.float(), 1)
    assert torch.equal(idx.cpu(), want), f"{idx.cpu().tolist()} != {want.tolist()}"


def sim_exponential():
    x = torch.zeros(100, 400, device="npu")
    gen = torch.Generator(device="npu")
    gen.manual_seed(0)
    torch_npu.npu_sim_exponential_(x, lambd=4, generator=gen)
    a = x.cpu()
    assert (a >= 0).all() and torch.isfinite(a).all(), "draws must be finite and >= 0"
    m, var = a.mean().item(), a.var().item()
    assert abs(m - 0.25) < 0.01, f"mean {m} != 1/4"
    assert abs(var - 0.0625) < 0.006, f"variance {var} != 1/16"
    gen.manual_seed(0)
    y = torch.zeros(100, 400, device="npu").half()
    torch_npu.npu_sim_exponential_(y, lambd=4, generator=gen)
    assert torch.allclose(y.cpu().float(), a, rtol=1e-3, atol=1e-3), "the same seed gave other draws"
    z = torch.zeros(100, 400, device="npu")
    torch_npu.npu_sim_exponential_(z, lambd=4, generator=gen)
    assert not torch.equal(z.cpu(), a), "the generator did not advance"
    # Kolmogorov-Smirnov distance to Exp(4)
    s, _ = torch.sort(a.flatten().double())
    n = s.numel()
    cdf = 1 - torch.exp(-4 * s)
    d = torch.max((torch.arange(1, n + 1, dtype=torch.float64) / n - cdf).abs()).item()
    assert d < 0.012, f"KS distance {d}"


def advance_step():
    g = torch.Generator().manual_seed(5)
    ns, nq, bs = 12, 8, 4
    toks = torch.randint(1, 100, (ns,), generator=g)
    sampled = torch.randint(1, 100, (nq, 1), generator=g)
    pos = torch.randint(1, 20, (ns,), generator=g)
    lens = torch.randint(1, 20, (ns,), generator=g)
    slots = torch.randint(1, 20, (ns,), generator=g)
    bt = torch.randint(0, 50, (ns, 20 // bs + 1), generator=g)
    d = [t.npu() for t in (toks, pos, lens, slots)]
    torch_npu.npu_advance_step_flashattn(d[0], sampled.npu(), d[1], d[2], d[3], bt.npu(), ns, nq, bs)
    wt, wp, wl, ws = toks.clone(), pos.clone(), lens.clone(), slots.clone()
    for i in range(nq):
        wt[i] = sampled[i, 0]
        p = int(lens[i])
        wp[i], wl[i] = p, p + 1
        ws[i] = bt[i, p // bs] * bs + p % bs
    wt[nq:], wp[nq:], ws[nq:] = 0, 0, -1
    for got, want, what in zip(d, (wt, wp, wl, ws), ("input_tokens", "input_positions", "seq_lens", "slot_mapping")):
        assert torch.equal(got.cpu(), want), f"{what}: {got.cpu().tolist()} != {want.tolist()}"


def advance_step_spec():
    g = torch.Generator().manual_seed(6)
    ns, spec, bs = 5, 2, 4
    t = 1 + spec
    toks = torch.randint(1, 100, (ns * t,), generator=g)
    sampled = torch.randint(1, 100, (ns, t), generator=g)
    sampled[1, 2] = -1
    sampled[3, 1:] = -1
    pos = torch.randint(1, 12, (ns * t,), generator=g)
    lens = pos + 1
    slots = torch.zeros(ns * t, dtype=torch.int64)
    spec_tok = torch.randint(1, 100, (ns, spec), generator=g)
    acc = torch.randint(0, 3, (ns,), generator=g)
    bt = torch.randint(0, 50, (ns, 6), generator=g)
    d = [x.npu() for x in (toks, pos, lens, slots)]
    torch_npu.npu_advance_step_flashattn(d[0], sampled.npu(), d[1], d[2], d[3], bt.npu(), ns, ns, bs,
                                         spec_token=spec_tok.npu(), accepted_num=acc.npu())
    wp = pos + torch.repeat_interleave(acc, t) + 1
    wl = wp + 1
    last = []
    for i in range(ns):
        row = sampled[i].tolist()
        j = row.index(-1) if -1 in row else t
        last.append(row[j - 1])
    wt = toks.clone().view(ns, t)
    wt[:, 0] = torch.tensor(last)
    wt[:, 1:] = spec_tok
    req = torch.repeat_interleave(torch.arange(ns), t)
    ws = bt[req, wp // bs] * bs + wp % bs
    for got, want, what in zip(d, (wt.flatten(), wp, wl, ws), ("input_tokens", "input_positions", "seq_lens", "slot_mapping")):
        assert torch.equal(got.cpu(), want), f"{what}: {got.cpu().tolist()} != {want.tolist()}"


case("top_k_top_p_sample_none_f16", argmax_mode(torch.float16))
case("top_k_top_p_sample_none_bf16", argmax_mode(torch.bfloat16))
case("top_k_top_p_sample_none_f32", argmax_mode(torch.float32))
case("top_k_top_p_sample_qsample", q_sample)
case("top_k_top_p_sample_multinomial", multinomial)
case("top_k_top_p_sample_doc_example", doc_example)
case("sim_exponential", sim_exponential)
case("advance_step", advance_step)
case("advance_step_spec", advance_step_spec)

print(f"sampling_ops: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
