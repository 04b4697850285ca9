"""The closing figures of the torch_npu issue: the time of `import torch_npu` and of one
training step of the transformer block (tests/python/models.py) on `npu` (emulated) and on CPU
torch, from the same run. A benchmark program, not a test.

    source target/npu-emu/set_env.sh
    target/venv/bin/python tests/perf/torch_step.py [--steps 30] [--imports 3]

Import: `python -c "import torch, torch_npu"` in a fresh interpreter, and `python -c "import
torch"` with TORCH_DEVICE_BACKEND_AUTOLOAD=0 (plain torch, no plugin) for comparison, each `--imports` times, medians.
Step: forward, cross-entropy, backward, gradient clipping and AdamW step of the block on a
batch of 8 × 8 tokens, ending with `loss.item()` (which synchronises the device), timed after
3 warm-up steps, alternating CPU and NPU step by step so both see the same machine load;
medians. Say the load average (`uptime`) with the figures.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python"))


def time_import(stmt, n, env=None):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", stmt], check=True, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--imports", type=int, default=3)
    args = ap.parse_args()

    # torch >= 2.5 imports installed device plugins (torch_npu) with `import torch` unless
    # TORCH_DEVICE_BACKEND_AUTOLOAD=0, so plain torch is timed with autoloading off.
    plain = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    t_torch = time_import("import torch", args.imports, plain)
    t_npu = time_import("import torch, torch_npu", args.imports)

    import torch
    import torch.nn.functional as F
    import torch_npu  # noqa: F401

    from models import Block, block_batch

    def setup(device):
        torch.manual_seed(0)
        model = Block(dropout=0.1).to(device).train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        x, y = block_batch()
        return model, opt, x.to(device), y.to(device)

    def step(model, opt, x, y):
        opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    runs = {d: setup(d) for d in ("cpu", "npu")}
    for _ in range(3):
        for d in runs:
            step(*runs[d])
    times = {d: [] for d in runs}
    for _ in range(args.steps):
        for d in runs:
            t0 = time.perf_counter()
            step(*runs[d])
            times[d].append(time.perf_counter() - t0)
    cpu = statistics.median(times["cpu"]) * 1e3
    npu = statistics.median(times["npu"]) * 1e3
    load = os.getloadavg()[0]
    print(f"import torch             {t_torch:7.2f} s")
    print(f"import torch + torch_npu {t_npu:7.2f} s  (torch_npu adds {t_npu - t_torch:.2f} s)")
    print(f"block training step  cpu {cpu:7.2f} ms  (torch threads: {torch.get_num_threads()})")
    print(f"block training step  npu {npu:7.2f} ms  (npu/cpu {npu / cpu:.2f}x)")
    print(f"load average (1 min) {load:.1f}")


if __name__ == "__main__":
    main()
