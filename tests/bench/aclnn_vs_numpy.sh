#!/usr/bin/env bash
# Mm against numpy's matmul in one run, on the same machine (issue 10's bar: at least 0.5 of
# numpy's speed), and Add against aclrtMemcpy D2D (at least 0.5).
#
#   source <prefix>/set_env.sh
#   g++ -std=c++17 -O2 tests/bench/aclnn_ops_bench.cpp -Itests/bench \
#       -I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lopapi -lnnopbase -lascendcl \
#       -o /tmp/aclnn_ops_bench
#   python3 -m venv /tmp/venv-aclnn && /tmp/venv-aclnn/bin/pip install numpy threadpoolctl
#   tests/bench/aclnn_vs_numpy.sh /tmp/aclnn_ops_bench /tmp/venv-aclnn/bin/python [N] [reps]
#
# numpy runs without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (set on some machines for old
# OpenBLAS builds; they slow a current one), and prints the BLAS it used.
set -euo pipefail
bench=${1:?path of the aclnn_ops_bench binary}
py=${2:?python with numpy}
n=${3:-1024}
reps=${4:-15}
uptime
"$bench" 64 "$n" "$reps" | tee /tmp/aclnn_vs_numpy.$$
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$py" - "$n" "$reps" <<'PY' | tee -a /tmp/aclnn_vs_numpy.$$
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
print(f"numpy matmul fp32 {n}x{n}: {2 * n**3 / ts[len(ts) // 2] / 1e9:.1f} GFLOP/s")
try:
    from threadpoolctl import threadpool_info
    for i in threadpool_info():
        print("numpy BLAS:", i.get("internal_api"), i.get("architecture"), "threads", i.get("num_threads"))
except ImportError:
    pass
PY
mm=$(sed -n 's/^aclnnMm fp32 .*: \([0-9.]*\) GFLOP\/s$/\1/p' /tmp/aclnn_vs_numpy.$$)
np=$(sed -n 's/^numpy matmul fp32 .*: \([0-9.]*\) GFLOP\/s$/\1/p' /tmp/aclnn_vs_numpy.$$)
rm -f /tmp/aclnn_vs_numpy.$$
echo "Mm / numpy matmul: $(python3 -c "print(f'{$mm / $np:.2f}')")"
uptime
