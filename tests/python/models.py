"""The two models the training tests use, and a deterministic training loop.

`train(model_fn, device, optimizer_name, steps)` builds the model from a fixed seed on the
CPU, moves it to `device`, trains it on a fixed synthetic batch, and returns the loss of
every step, so the same call on "cpu" and "npu" can be compared.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    """A small classifier: 16 features -> 32 -> 32 -> 4 classes."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                                 nn.Linear(32, 4))

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    """A pre-norm transformer block over token ids: embedding + positions, layer norm,
    single-head... multi-head self-attention with softmax, residuals, a GELU MLP, dropout,
    and a vocabulary head."""

    def __init__(self, vocab=50, d=32, heads=4, seq=8, dropout=0.1):
        super().__init__()
        self.heads, self.d = heads, d
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.02)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.drop = nn.Dropout(dropout)
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        h = self.heads
        q = q.reshape(b, t, h, d // h).transpose(1, 2)
        k = k.reshape(b, t, h, d // h).transpose(1, 2)
        v = v.reshape(b, t, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // h)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), diagonal=1)
        att = att.masked_fill(mask, float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        return self.drop(self.proj(y))

    def forward(self, ids):
        x = self.tok(ids) + self.pos[: ids.shape[1]]
        x = x + self.attention(self.ln1(x))
        # approximate="tanh": torch_npu runs F.gelu through aclnnGelu, which CANN defines as
        # the tanh form, so the CPU run computes the same function (test_ops.py checks it).
        x = x + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh")))
        return self.head(self.ln_f(x))


def mlp_batch():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 16, generator=g)
    y = torch.randint(0, 4, (64,), generator=g)
    return x, y


def block_batch(vocab=50, seq=8):
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(0, vocab, (8, seq + 1), generator=g)
    return ids[:, :-1], ids[:, 1:]


OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.05),
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-2),
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-2),
}


def train(kind, device, optimizer, steps=8, clip=1.0, dropout=0.0):
    """Losses of `steps` training steps of `kind` ("mlp" or "block") on `device`."""
    torch.manual_seed(0)
    model = MLP() if kind == "mlp" else Block(dropout=dropout)
    model.to(device).train()
    opt = OPTIMIZERS[optimizer](model.parameters())
    if kind == "mlp":
        x, y = mlp_batch()
    else:
        x, y = block_batch()
    x, y = x.to(device), y.to(device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        losses.append(loss.item())
    return losses
