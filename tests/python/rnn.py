"""Recurrent layers through the real torch_npu against CPU torch with identical weights:
nn.LSTM (aclnnLSTM / aclnnLstmBackward, and the aclop DynamicRNN / DynamicRNNGrad),
nn.LSTMCell (the aclop DynamicRNNV2 / DynamicRNNV2Grad), nn.GRU (aclnnGRU / aclnnGRUBackward),
torch_npu.npu_gru (the aclop DynamicGRUV2 / DynamicGRUV2Grad),
torch._thnn_fused_lstm_cell (aclnnThnnFusedLstmCell / aclnnThnnFusedLstmCellBackward),
nn.GRUCell and nn.RNN: the forward outputs and the gradients of the input, the initial states and every parameter, in
float32 and float16, and a small LSTM regressor trained for 20 Adam steps whose losses
follow CPU's.

torch_npu 2.9 sends nn.LSTM to aclnnLSTM only for one layer, one direction, with biases
(`ShouldFallbackToAclOp` in op-plugin's LSTMKernelNpuOpApi.cpp: any other params count, bf16
or mixed dtypes go to the aclop DynamicRNN, one call per layer and direction); the `dynrnn_`
cases are those shapes. nn.GRU reaches aclnnGRU for every shape. nn.LSTMCell goes to the aclop
DynamicRNNV2 (op-plugin registers `lstm_cell` for acl_op only); the fused cell behind
`torch._thnn_fused_lstm_cell` is aclnnThnnFusedLstmCell; nn.GRUCell
and nn.RNN run as torch's composite of linear algebra and pointwise operators. A
pack_padded_sequence reaches aclnnLSTM's packed form; nn.GRU on one does not reach aclnnGRU
(and its output does not fit torch_npu's padded packing), so it is not a case.

`python rnn.py [case-prefix]` runs the cases whose name starts with the prefix. Prints
PASS/FAIL per case and `rnn: N failed`; exits 1 when any case fails.
"""
import copy
import sys

import torch
import torch_npu  # noqa: F401

D = "npu"
FAILED = []
ONLY = sys.argv[1] if len(sys.argv) > 1 else ""
torch.manual_seed(0)


def case(name, f):
    if not name.startswith(ONLY):
        return
    try:
        f()
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300] if str(e) else repr(e))


def close(a, b, tol, what):
    torch.testing.assert_close(a.detach().float().cpu(), b.detach().float(), rtol=tol, atol=tol, msg=lambda m: f"{what}: {m}")


def run_layer(mod, x, state, half):
    """Forward + backward of `mod` on CPU (float32) and on the NPU (float16 when `half`,
    the CPU reference then takes the same float16-rounded weights and inputs); compares the
    outputs and every gradient."""
    tol = 2e-2 if half else 2e-4
    cpu = copy.deepcopy(mod)
    npu = copy.deepcopy(mod).to(D)
    if half:
        npu = npu.half()
        cpu = copy.deepcopy(npu).float().cpu()
        x = x.half().float()
        state = None if state is None else tuple(s.half().float() for s in state)
    dt = torch.float16 if half else torch.float32
    xc = x.clone().requires_grad_()
    xn = x.to(D, dt).requires_grad_()
    if state is None:
        oc, hc = cpu(xc)
        on, hn = npu(xn)
        sc = sn = ()
    else:
        sc = tuple(s.clone().requires_grad_() for s in state)
        sn = tuple(s.to(D, dt).requires_grad_() for s in state)
        arg_c = sc if len(sc) == 2 else sc[0]
        arg_n = sn if len(sn) == 2 else sn[0]
        oc, hc = cpu(xc, arg_c)
        on, hn = npu(xn, arg_n)
    hc = hc if isinstance(hc, tuple) else (hc,)
    hn = hn if isinstance(hn, tuple) else (hn,)
    close(on, oc, tol, "output")
    for i, (a, b) in enumerate(zip(hn, hc)):
        close(a, b, tol, f"state {i}")
    ws = [torch.randn(oc.shape)] + [torch.randn(h.shape) for h in hc]
    lc = sum((o * w).sum() for o, w in zip((oc,) + hc, ws))
    ln = sum((o.float() * w.to(D)).sum() for o, w in zip((on,) + hn, ws))
    lc.backward()
    ln.backward()
    close(xn.grad, xc.grad, tol, "input grad")
    for i, (a, b) in enumerate(zip(sn, sc)):
        close(a.grad, b.grad, tol, f"initial state {i} grad")
    for (name, pc), (_, pn) in zip(cpu.named_parameters(), npu.named_parameters()):
        close(pn.grad, pc.grad, tol * 5 if half else tol, f"{name} grad")


def lstm_case(layers=1, bidir=False, batch_first=False, bias=True, with_state=True, half=False, T=5, B=3, I=4, H=6):
    def f():
        mod = torch.nn.LSTM(I, H, num_layers=layers, bidirectional=bidir, batch_first=batch_first, bias=bias)
        x = torch.randn((B, T, I) if batch_first else (T, B, I))
        d = (2 if bidir else 1) * layers
        state = (torch.randn(d, B, H), torch.randn(d, B, H)) if with_state else None
        run_layer(mod, x, state, half)
    return f


def gru_case(layers=1, bidir=False, batch_first=False, bias=True, with_state=True, half=False, T=5, B=3, I=4, H=6):
    def f():
        mod = torch.nn.GRU(I, H, num_layers=layers, bidirectional=bidir, batch_first=batch_first, bias=bias)
        x = torch.randn((B, T, I) if batch_first else (T, B, I))
        d = (2 if bidir else 1) * layers
        state = (torch.randn(d, B, H),) if with_state else None
        run_layer(mod, x, state, half)
    return f


case("lstm_1layer", lstm_case())
case("lstm_1layer_no_state", lstm_case(with_state=False))
case("lstm_batch_first", lstm_case(batch_first=True))
case("lstm_fp16", lstm_case(half=True))
case("lstm_fp16_batch_first", lstm_case(half=True, batch_first=True))
case("lstm_one_step", lstm_case(T=1, B=1, I=1, H=1))


def lstm_eval():
    mod = torch.nn.LSTM(4, 5)
    npu = copy.deepcopy(mod).to(D)
    x = torch.randn(6, 2, 4)
    with torch.no_grad():
        oc, (hc, cc) = mod(x)
        on, (hn, cn) = npu(x.to(D))
    close(on, oc, 2e-4, "output")
    close(hn, hc, 2e-4, "h")
    close(cn, cc, 2e-4, "c")


case("lstm_eval_no_grad", lstm_eval)

case("gru_1layer", gru_case())
case("gru_2layer", gru_case(layers=2))
case("gru_bidirectional", gru_case(bidir=True))
case("gru_2layer_bidirectional", gru_case(layers=2, bidir=True))
case("gru_batch_first", gru_case(batch_first=True, layers=2))
case("gru_no_bias", gru_case(bias=False))
case("gru_no_state", gru_case(with_state=False, bidir=True))
case("gru_fp16", gru_case(half=True, layers=2, bidir=True))


def gru_eval():
    mod = torch.nn.GRU(4, 5, num_layers=2, bidirectional=True)
    npu = copy.deepcopy(mod).to(D)
    x = torch.randn(6, 2, 4)
    with torch.no_grad():
        oc, hc = mod(x)
        on, hn = npu(x.to(D))
    close(on, oc, 2e-4, "output")
    close(hn, hc, 2e-4, "h")


case("gru_eval_no_grad", gru_eval)


def cell_case(kind, half=False, bias=True):
    def f():
        tol = 2e-2 if half else 2e-4
        mod = (torch.nn.LSTMCell if kind == "lstm" else torch.nn.GRUCell)(4, 5, bias=bias)
        npu = copy.deepcopy(mod).to(D)
        if half:
            npu = npu.half()
        cpu = copy.deepcopy(npu).float().cpu()
        dt = torch.float16 if half else torch.float32
        x = torch.randn(3, 4).to(dt).float()
        states = [torch.randn(3, 5).to(dt).float() for _ in range(2 if kind == "lstm" else 1)]
        xc = x.clone().requires_grad_()
        xn = x.to(D, dt).requires_grad_()
        sc = [s.clone().requires_grad_() for s in states]
        sn = [s.to(D, dt).requires_grad_() for s in states]
        rc = cpu(xc, tuple(sc) if kind == "lstm" else sc[0])
        rn = npu(xn, tuple(sn) if kind == "lstm" else sn[0])
        rc = rc if isinstance(rc, tuple) else (rc,)
        rn = rn if isinstance(rn, tuple) else (rn,)
        ws = [torch.randn(r.shape) for r in rc]
        for a, b in zip(rn, rc):
            close(a, b, tol, "output")
        sum((r * w).sum() for r, w in zip(rc, ws)).backward()
        sum((r.float() * w.to(D)).sum() for r, w in zip(rn, ws)).backward()
        close(xn.grad, xc.grad, tol, "input grad")
        for a, b in zip(sn, sc):
            close(a.grad, b.grad, tol, "state grad")
        for (name, pc), (_, pn) in zip(cpu.named_parameters(), npu.named_parameters()):
            close(pn.grad, pc.grad, tol * 5 if half else tol, f"{name} grad")
    return f


def fused_cell_ref(ig, hg, cx, bi, bh):
    g = ig + hg
    if bi is not None:
        g = g + bi + bh
    i, f, c, o = g.chunk(4, 1)
    cy = torch.sigmoid(f) * cx + torch.sigmoid(i) * torch.tanh(c)
    return torch.sigmoid(o) * torch.tanh(cy), cy


def fused_cell_case(bias=True, half=False, only_h=False):
    """torch._thnn_fused_lstm_cell (aclnnThnnFusedLstmCell) and its gradient
    (_thnn_fused_lstm_cell_backward_impl, aclnnThnnFusedLstmCellBackward) against the cell
    written with CPU torch operations."""
    def f():
        tol = 2e-2 if half else 2e-4
        dt = torch.float16 if half else torch.float32
        B, H = 3, 5
        args = [torch.randn(B, 4 * H), torch.randn(B, 4 * H), torch.randn(B, H)]
        if bias:
            args += [torch.randn(4 * H), torch.randn(4 * H)]
        args = [a.to(dt).float() for a in args]
        ac = [a.clone().requires_grad_() for a in args]
        an = [a.to(D, dt).requires_grad_() for a in args]
        hc, cc = fused_cell_ref(*ac, *([None, None] if not bias else []))
        hn, cn, _ = torch.ops.aten._thnn_fused_lstm_cell(*an)
        close(hn, hc, tol, "hy")
        close(cn, cc, tol, "cy")
        wh, wc = torch.randn(B, H), torch.randn(B, H)
        if only_h:
            (hc * wh).sum().backward()
            (hn.float() * wh.to(D)).sum().backward()
        else:
            ((hc * wh).sum() + (cc * wc).sum()).backward()
            ((hn.float() * wh.to(D)).sum() + (cn.float() * wc.to(D)).sum()).backward()
        for k, (a, b) in enumerate(zip(an, ac)):
            close(a.grad, b.grad, tol, f"argument {k} grad")
    return f


case("fused_lstm_cell", fused_cell_case())
case("fused_lstm_cell_no_bias", fused_cell_case(bias=False))
case("fused_lstm_cell_only_h_grad", fused_cell_case(only_h=True))
case("fused_lstm_cell_fp16", fused_cell_case(half=True))
case("grucell", cell_case("gru"))


def rnn_case(nonlinearity, **kw):
    def f():
        mod = torch.nn.RNN(4, 5, nonlinearity=nonlinearity, **kw)
        x = torch.randn(5, 3, 4)
        d = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
        run_layer(mod, x, (torch.randn(d, 3, 5),), False)
    return f


case("rnn_tanh", rnn_case("tanh"))
case("rnn_relu_2layer_bidirectional", rnn_case("relu", num_layers=2, bidirectional=True))


def lstm_packed(with_state):
    """nn.LSTM on a pack_padded_sequence of lengths 5, 3, 2 (aclnnLSTM's packed form: torch_npu's
    _pack_padded_sequence keeps the padded [T*B, I] rows and passes batchSizes): outputs, final
    states and the gradients of the parameters and the initial states. The input's gradient is
    not compared: aclnnLstmBackward returns it in the input's (padded) layout, as documented,
    while torch_npu leaves _pack_padded_sequence_backward to torch, which reads it as compact
    packed rows."""
    def f():
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
        mod = torch.nn.LSTM(4, 5)
        npu = copy.deepcopy(mod).to(D)
        x = torch.randn(5, 3, 4)
        lens = torch.tensor([5, 3, 2])
        xc, xn = x.clone().requires_grad_(), x.to(D).requires_grad_()
        st = [torch.randn(1, 3, 5) for _ in range(2)]
        sc = [s.clone().requires_grad_() for s in st]
        sn = [s.to(D).requires_grad_() for s in st]
        oc, (hc, cc) = mod(pack_padded_sequence(xc, lens), tuple(sc) if with_state else None)
        on, (hn, cn) = npu(pack_padded_sequence(xn, lens), tuple(sn) if with_state else None)
        oc, _ = pad_packed_sequence(oc)
        on, _ = pad_packed_sequence(on)
        close(on, oc, 2e-4, "output")
        close(hn, hc, 2e-4, "h")
        close(cn, cc, 2e-4, "c")
        w, wh = torch.randn(oc.shape), torch.randn(hc.shape)
        ((oc * w).sum() + (hc * wh).sum()).backward()
        ((on * w.to(D)).sum() + (hn * wh.to(D)).sum()).backward()
        if with_state:
            close(sn[0].grad, sc[0].grad, 2e-4, "h0 grad")
            close(sn[1].grad, sc[1].grad, 2e-4, "c0 grad")
        for (name, pc), (_, pn) in zip(mod.named_parameters(), npu.named_parameters()):
            close(pn.grad, pc.grad, 2e-4, f"{name} grad")
    return f


case("lstm_packed_sequence", lstm_packed(True))
case("lstm_packed_sequence_no_state", lstm_packed(False))

# The shapes torch_npu sends to the aclop DynamicRNN / DynamicRNNGrad (one call per layer
# and direction; the reverse direction on the flipped sequence) and nn.LSTMCell's
# DynamicRNNV2 / DynamicRNNV2Grad.
case("dynrnn_lstm_2layer", lstm_case(layers=2))
case("dynrnn_lstm_bidirectional", lstm_case(bidir=True))
case("dynrnn_lstm_3layer_bidirectional", lstm_case(layers=3, bidir=True, T=4, B=2))
case("dynrnn_lstm_no_bias", lstm_case(bias=False))
case("dynrnn_lstm_2layer_batch_first_no_state", lstm_case(layers=2, batch_first=True, with_state=False))
case("dynrnn_lstm_fp16_bidirectional", lstm_case(half=True, bidir=True, layers=2))
case("dynrnn_lstm_one_step", lstm_case(layers=2, T=1, B=1, I=1, H=1))
case("dynrnn_lstmcell", cell_case("lstm"))
case("dynrnn_lstmcell_no_bias", cell_case("lstm", bias=False))
case("dynrnn_lstmcell_fp16", cell_case("lstm", half=True))


def npu_gru_case(no_state=False):
    """torch_npu.npu_gru (the aclop DynamicGRUV2, gate_order "rzh": nn.GRU's r, z, n with its
    weights transposed) against CPU nn.GRU with the same float16-rounded weights: y, the
    saved gates update/reset/new/hidden_new against their formulas, and the autograd
    backward (DynamicGRUV2Grad) of y and of the last output_h step for x, both weights, both
    biases and hx."""
    def f():
        T, B, I, H = 5, 3, 4, 6
        mod = torch.nn.GRU(I, H)
        x = torch.randn(T, B, I)
        h0 = torch.zeros(B, H) if no_state else torch.randn(B, H)
        rnd = lambda t: t.detach().half().float()  # noqa: E731
        w_ih, w_hh, b_ih, b_hh = (rnd(p) for p in (mod.weight_ih_l0, mod.weight_hh_l0, mod.bias_ih_l0, mod.bias_hh_l0))
        xc, hc = rnd(x).requires_grad_(True), rnd(h0).requires_grad_(True)
        wi_c, wh_c = w_ih.t().contiguous().requires_grad_(True), w_hh.t().contiguous().requires_grad_(True)
        bi_c, bh_c = b_ih.clone().requires_grad_(True), b_hh.clone().requires_grad_(True)
        # CPU reference: nn.GRU's recurrence, step by step, with the gates kept
        h, ys, gates = hc, [], []
        for t in range(T):
            gi = xc[t] @ wi_c + bi_c
            gh = h @ wh_c + bh_c
            r = torch.sigmoid(gi[:, :H] + gh[:, :H])
            z = torch.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
            hn = gh[:, 2 * H:]
            n = torch.tanh(gi[:, 2 * H:] + r * hn)
            h = (1 - z) * n + z * h
            ys.append(h)
            gates.append((z, r, n, hn))
        y_ref = torch.stack(ys)
        with torch.no_grad():
            gru = torch.nn.GRU(I, H)
            gru.weight_ih_l0.copy_(w_ih)
            gru.weight_hh_l0.copy_(w_hh)
            gru.bias_ih_l0.copy_(b_ih)
            gru.bias_hh_l0.copy_(b_hh)
            y_torch, _ = gru(rnd(x), rnd(h0).unsqueeze(0))
        close(y_ref, y_torch, 1e-5, "reference recurrence vs nn.GRU")
        dev = lambda t: t.detach().half().to(D).requires_grad_(True)  # noqa: E731
        xn, hn_, wi_n, wh_n, bi_n, bh_n = (dev(t) for t in (xc, hc, wi_c, wh_c, bi_c, bh_c))
        seq = torch.zeros((), dtype=torch.half).to(D)
        y, out_h, upd, rst, new, hid_new = torch_npu.npu_gru(
            xn, hn_, wi_n, wh_n, bi_n, bh_n, seq, True, 1, 0.0, True, False, False)
        close(y, y_ref, 3e-3, "y")
        close(out_h, y_ref, 3e-3, "output_h")
        for k, (got, name) in enumerate(((upd, "update"), (rst, "reset"), (new, "new"), (hid_new, "hidden_new"))):
            close(got, torch.stack([g[k] for g in gates]), 3e-3, name)
        gy = torch.randn(T, B, H)
        gl = torch.randn(B, H)
        ((y_ref * gy).sum() + (y_ref[-1] * gl).sum()).backward()
        ((y.float() * gy.to(D)).sum() + (out_h[-1].float() * gl.to(D)).sum()).backward()
        for got, want, name in ((xn, xc, "x"), (hn_, hc, "hx"), (wi_n, wi_c, "weight_input"),
                                (wh_n, wh_c, "weight_hidden"), (bi_n, bi_c, "bias_input"),
                                (bh_n, bh_c, "bias_hidden")):
            close(got.grad, want.grad, 2e-2, f"grad of {name}")
    return f


# torch_npu.npu_gru: the aclop DynamicGRUV2 / DynamicGRUV2Grad.
case("dyngru_npu_gru", npu_gru_case())
case("dyngru_npu_gru_no_state", npu_gru_case(no_state=True))


def npu_gru_float32_refused():
    """DynamicGRUV2's x and weights are FLOAT16 only (CANN's prototype): a float32 call fails
    with a message naming the tensor."""
    T, B, I, H = 2, 2, 3, 4
    args = [torch.randn(T, B, I), torch.randn(B, H), torch.randn(I, 3 * H), torch.randn(H, 3 * H),
            torch.randn(3 * H), torch.randn(3 * H)]
    try:
        torch_npu.npu_gru(*[a.to(D) for a in args], torch.zeros(()).to(D), True, 1, 0.0, True, False, False)
        torch.npu.synchronize()
    except RuntimeError as e:
        assert "DynamicGRUV2" in str(e) and "FLOAT16" in str(e), str(e)[:400]
    else:
        raise AssertionError("float32 x was accepted")



def lstm2_eval():
    mod = torch.nn.LSTM(4, 5, num_layers=2, bidirectional=True, dropout=0.3).eval()
    npu = copy.deepcopy(mod).to(D)
    x = torch.randn(6, 2, 4)
    with torch.no_grad():
        oc, (hc, cc) = mod(x)
        on, (hn, cn) = npu(x.to(D))
    close(on, oc, 2e-4, "output")
    close(hn, hc, 2e-4, "h")
    close(cn, cc, 2e-4, "c")


case("dynrnn_lstm_eval_dropout_layers", lstm2_eval)


def lstm_packed_bidir():
    """A bidirectional nn.LSTM on a pack_padded_sequence (DynamicRNN with torch_npu's
    seq_length mask; the reverse direction REDIRECTIONAL): outputs, final states and the
    parameter gradients against CPU."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    mod = torch.nn.LSTM(4, 5, bidirectional=True)
    npu = copy.deepcopy(mod).to(D)
    x = torch.randn(5, 3, 4)
    lens = torch.tensor([5, 3, 2])
    oc, (hc, cc) = mod(pack_padded_sequence(x, lens))
    on, (hn, cn) = npu(pack_padded_sequence(x.to(D), lens))
    oc, _ = pad_packed_sequence(oc)
    on, _ = pad_packed_sequence(on)
    close(on, oc, 2e-4, "output")
    close(hn, hc, 2e-4, "h")
    close(cn, cc, 2e-4, "c")
    w = torch.randn(oc.shape)
    (oc * w).sum().backward()
    (on * w.to(D)).sum().backward()
    for (name, pc), (_, pn) in zip(mod.named_parameters(), npu.named_parameters()):
        close(pn.grad, pc.grad, 2e-4, f"{name} grad")


case("dynrnn_lstm_packed_bidirectional", lstm_packed_bidir)


def lstm_packed_2layer():
    """A 2-layer nn.LSTM on a pack_padded_sequence: outputs and final states against CPU."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    mod = torch.nn.LSTM(4, 5, num_layers=2)
    npu = copy.deepcopy(mod).to(D)
    x = torch.randn(6, 3, 4)
    lens = torch.tensor([6, 4, 1])
    oc, (hc, cc) = mod(pack_padded_sequence(x, lens))
    on, (hn, cn) = npu(pack_padded_sequence(x.to(D), lens))
    close(pad_packed_sequence(on)[0], pad_packed_sequence(oc)[0], 2e-4, "output")
    close(hn, hc, 2e-4, "h")
    close(cn, cc, 2e-4, "c")


case("dynrnn_lstm_packed_2layer", lstm_packed_2layer)

class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(3, 8, batch_first=True)
        self.head = torch.nn.Linear(8, 1)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


def training():
    torch.manual_seed(1)
    model = Regressor()
    x = torch.randn(16, 7, 3)
    target = x.sum(dim=(1, 2)).unsqueeze(1) * 0.1
    losses = {}
    for dev in ("cpu", D):
        m = copy.deepcopy(model).to(dev)
        opt = torch.optim.Adam(m.parameters(), lr=0.05)
        xs, ts = x.to(dev), target.to(dev)
        run = []
        for _ in range(20):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(m(xs), ts)
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses[dev] = run
    c, n = torch.tensor(losses["cpu"]), torch.tensor(losses[D])
    torch.testing.assert_close(n, c, rtol=2e-3, atol=1e-5)
    if not c[-1] < c[0] * 0.5:
        raise AssertionError(f"the regressor did not learn: {c.tolist()}")


case("lstm_regressor_adam_20_steps", training)

# last: an operator error leaves torch_npu's task queue failing the operators after it
case("dyngru_float32_refused", npu_gru_float32_refused)

print(f"rnn: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
