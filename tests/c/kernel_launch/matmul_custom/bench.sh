#!/bin/bash
# The closing figure of issue 13: the MatmulCustom-style kernel at M = N = K (default 1024) on the
# emulated device vs numpy's float32 matmul (OpenBLAS) on the same host, in the same run,
# alternating, REPS times each; prints the medians.
#
#   tests/c/kernel_launch/matmul_custom/bench.sh [PREFIX [PYTHON [SIZE [REPS]]]]
#
# PREFIX: an npu-emu install (default target/npu-emu, what `make` leaves); PYTHON: a python with
# numpy (default python3). The kernel time is launch to aclrtSynchronizeStream (fp16 inputs,
# fp32 accumulation and output, every core of the emulated SoC); numpy multiplies float32
# matrices converted from the same fp16 values. Say the load average with the figure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="$(cd "${1:-$here/../../../../target/npu-emu}" && pwd)"
python="${2:-python3}"
size="${3:-1024}"
reps="${4:-5}"
work="$(mktemp -d /tmp/npuemu-matmul-bench.XXXXXX)"
trap 'rm -rf "$work" "/dev/shm/npu-emu-bench-$$"' EXIT
cp "$here"/CMakeLists.txt "$here"/*.cpp "$work"/
(
    source "$prefix/set_env.sh"
    cd "$work"
    cmake -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build -j2 >/dev/null
)
cat > "$work/np.py" <<'PY'
import sys, time
import numpy as np
n = int(sys.argv[1])
rng = np.random.default_rng(7)
a = rng.uniform(-2, 2, (n, n)).astype(np.float16).astype(np.float32)
b = rng.uniform(-0.5, 0.5, (n, n)).astype(np.float16).astype(np.float32)
a @ b  # warm-up
t = time.perf_counter()
c = a @ b
print("numpy %.3f ms" % ((time.perf_counter() - t) * 1e3))
PY
kernel=()
numpy=()
for _ in $(seq "$reps"); do
    k=$(source "$prefix/set_env.sh"; cd "$work"; MATMUL_NO_CHECK=1 NPU_EMU_NODE_DIR=/dev/shm/npu-emu-bench-$$ \
        ./build/matmul_custom "$size" "$size" "$size" 0 0 | sed -n 's/.*kernel \([0-9.]*\) ms.*/\1/p')
    p=$("$python" "$work/np.py" "$size" | sed -n 's/numpy \([0-9.]*\) ms/\1/p')
    kernel+=("$k")
    numpy+=("$p")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
km=$(median "${kernel[@]}")
nm=$(median "${numpy[@]}")
echo "matmul ${size}^3: MatmulCustom kernel on npu-emu ${km} ms (runs: ${kernel[*]}), numpy float32 ${nm} ms (runs: ${numpy[*]}), ratio $(awk -v a="$km" -v b="$nm" 'BEGIN{printf "%.1f", a/b}')x; load: $(cut -d' ' -f1-3 /proc/loadavg)"
