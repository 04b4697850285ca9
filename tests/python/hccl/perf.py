"""All-reduce through `import hccl`, timed like tests/perf/hccl-perf (nccl-tests columns), to
put next to the C API's figures of the same run. A benchmark program, not a test.

    npu-emu run -n 2 python tests/python/hccl/perf.py --sizes 8,64M --place host,npu

For each place (``host``: numpy arrays, staged through device memory on every call; ``npu``:
torch_npu tensors, which stay on the device) and size it times two loops:

- ``sync``:  `iters` calls of ``hccl.all_reduce(x)``, each returning when done (what a script
  writes);
- ``async``: `iters` calls of ``hccl.all_reduce_async(x)``, then one ``wait`` on the last (the
  way hccl-perf enqueues its iterations before one stream synchronisation).

``time`` is the slowest rank's average per iteration (the per-rank times all-reduced with MAX),
from after a barrier to the end of the loop; ``algbw = size / time``; ``busbw = algbw ×
2(n−1)/n``. After timing, every rank checks one more all-reduce of known values (``#wrong``).
Only rank 0 prints.
"""

import argparse
import sys
import time

import numpy as np

import hccl


def parse_size(s):
    s = s.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    return int(s[:-1] if mult > 1 else s) * mult


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="8,64M", help="comma list of sizes in bytes (8, 64K, 64M)")
    ap.add_argument("--place", default="host,npu", help="host and/or npu")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iter-bytes", default="512M", help="at most this many bytes × iterations per size")
    ap.add_argument("--lat-iters", type=int, default=1000, help="iterations for sizes up to 1 KiB")
    args = ap.parse_args()

    rank, n = hccl.get_rank(), hccl.get_world_size()
    places = [p for p in args.place.split(",") if p]
    torch = None
    if "npu" in places:
        try:
            import torch
            import torch_npu  # noqa: F401
            torch.npu.set_device(hccl.get_device())
        except Exception as e:
            if rank == 0:
                print(f"# npu: torch_npu unavailable ({e}); host only", flush=True)
            places.remove("npu")
    cap = parse_size(args.iter_bytes)
    factor = 2 * (n - 1) / n if n > 1 else 0.0
    if rank == 0:
        print(f"# hccl (Python) all_reduce float32 sum, {n} ranks; libraries: {hccl.__libraries__}")
        print(f"# {'place':>5} {'mode':>5} {'size(B)':>12} {'count':>11} {'iters':>6} "
              f"{'time(us)':>10} {'algbw':>8} {'busbw':>8} {'#wrong':>7}", flush=True)
    total_wrong = 0
    for place in places:
        for size in (parse_size(s) for s in args.sizes.split(",")):
            count = max(size // 4, 1)
            iters = args.lat_iters if size <= 1024 else max(2, min(args.iters, cap // size))
            if place == "host":
                x = np.ones(count, dtype=np.float32)
            else:
                x = torch.ones(count, dtype=torch.float32).npu()
            for mode in ("sync", "async"):
                for _ in range(args.warmup):
                    hccl.all_reduce(x)
                hccl.barrier()
                t0 = time.perf_counter()
                if mode == "sync":
                    for _ in range(iters):
                        hccl.all_reduce(x)
                else:
                    w = None
                    for _ in range(iters):
                        w = hccl.all_reduce_async(x)
                    hccl.wait(w)
                us = (time.perf_counter() - t0) * 1e6 / iters
                t = np.array([us], dtype=np.float64)
                hccl.all_reduce(t, op=hccl.Max)
                us = float(t[0])
                # check: one more all-reduce of ones
                if place == "host":
                    x[:] = 1
                else:
                    x = torch.ones(count, dtype=torch.float32).npu()
                hccl.all_reduce(x)
                got = x if place == "host" else x.cpu().numpy()
                wrong = np.array([np.count_nonzero(got != n)], dtype=np.int64)
                hccl.all_reduce(wrong)
                total_wrong += int(wrong[0])
                algbw = size / us / 1e3
                if rank == 0:
                    print(f"  {place:>5} {mode:>5} {size:>12} {count:>11} {iters:>6} {us:>10.2f} "
                          f"{algbw:>8.2f} {algbw * factor:>8.2f} {int(wrong[0]):>7}", flush=True)
    if rank == 0:
        print(f"# total #wrong: {total_wrong}", flush=True)
    sys.exit(1 if total_wrong else 0)


if __name__ == "__main__":
    main()
