#!/usr/bin/env bash
# Issue 10's two bars, measured in ONE run on this machine (a benchmark, never a timed test):
#   - aclnnAdd of two 64 MiB fp32 tensors as a fraction of aclrtMemcpy D2D bandwidth (>= 0.5);
#   - aclnnMm of 1024 x 1024 fp32 against numpy's matmul (>= 0.5 of numpy's GFLOP/s).
#
#   make install && tests/bench/aclnn_vs_numpy.sh [MiB] [N] [reps]
#
# It builds tests/bench/aclnn_ops_bench.cpp against the install tree (ASCEND_HOME_PATH, or
# target/npu-emu) exactly as a CANN user builds (-lopapi -lnnopbase -lascendcl), runs it on a
# private node directory, then numpy's matmul with the same N in the same run ($PY, default
# target/venv/bin/python), and prints both ratios with `uptime` before and after.
# numpy runs without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (set on some machines for old
# OpenBLAS builds; they slow a current one), and prints the BLAS it used when threadpoolctl is
# installed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
mib=${1:-64}
n=${2:-1024}
reps=${3:-15}
py=${PY:-$root/target/venv/bin/python}
if [ -z "${ASCEND_HOME_PATH:-}" ]; then
    # shellcheck disable=SC1091
    . "$root/target/npu-emu/set_env.sh"
fi
tmp=$(mktemp -d /tmp/aclnn-bench.XXXXXX)
export NPU_EMU_NODE_DIR=/dev/shm/npu-emu-aclnn-bench-$$
trap 'rm -rf "$tmp" "$NPU_EMU_NODE_DIR"' EXIT
g++ -std=c++17 -O2 "$here/aclnn_ops_bench.cpp" -I"$here" -I"$ASCEND_HOME_PATH/include" \
    -L"$ASCEND_HOME_PATH/lib64" -lopapi -lnnopbase -lascendcl -o "$tmp/aclnn_ops_bench"
echo "load before: $(uptime)"
"$tmp/aclnn_ops_bench" "$mib" "$n" "$reps" | tee "$tmp/out"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$py" - "$n" "$reps" <<'PY' | tee -a "$tmp/out"
import sys, time
import numpy as np
n, reps = int(sys.argv[1]), int(sys.argv[2])
a = np.random.rand(n, n).astype(np.float32)
b = np.random.rand(n, n).astype(np.float32)
a @ b
ts = []
for _ in range(reps):
    t0 = time.perf_counter()
    a @ b
    ts.append(time.perf_counter() - t0)
ts.sort()
print(f"numpy matmul fp32 {n}x{n}: {2 * n**3 / ts[len(ts) // 2] / 1e9:.1f} GFLOP/s (numpy {np.__version__})")
try:
    from threadpoolctl import threadpool_info
    for i in threadpool_info():
        print("numpy BLAS:", i.get("internal_api"), i.get("architecture"), "threads", i.get("num_threads"))
except ImportError:
    pass
PY
echo "load after: $(uptime)"
mm=$(sed -n 's/^aclnnMm fp32 .*: \([0-9.]*\) GFLOP\/s$/\1/p' "$tmp/out")
np=$(sed -n 's/^numpy matmul fp32 .*: \([0-9.]*\) GFLOP\/s.*$/\1/p' "$tmp/out")
echo "Mm / numpy matmul: $(awk -v a="$mm" -v b="$np" 'BEGIN { printf "%.2f", a / b }') (bar 0.5)"
echo "$(grep '^Add / memcpy' "$tmp/out") (bar 0.5)"
