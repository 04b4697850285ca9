#!/usr/bin/env bash
# The 8-byte all-reduce latency and the 64 MiB all-reduce bandwidth through `import hccl`, next
# to the C API's (tests/perf/hccl-perf), in one run: for each rank count and size, hccl-perf
# then perf.py, back to back, so both see the same machine load.
#
#   source target/npu-emu/set_env.sh; make perf
#   PYTHON=target/venv/bin/python tests/python/hccl/perf_compare.sh
#
# Environment: RANKS ("2 8"), PLACES ("host,npu"; npu needs torch_npu), ITERS (20),
# LAT_ITERS (1000), PYTHON (python3).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
perf="$root/tests/perf/hccl-perf"
py="${PYTHON:-python3}"
[ -x "$perf" ] || { echo "perf_compare.sh: build $perf first (make perf)" >&2; exit 1; }
command -v npu-emu >/dev/null || { echo "perf_compare.sh: source set_env.sh first" >&2; exit 1; }
RANKS=${RANKS:-"2 8"}
PLACES=${PLACES:-host,npu}
ITERS=${ITERS:-20}
LAT_ITERS=${LAT_ITERS:-1000}
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $RANKS; do
    for size in 8 64M; do
        if [ "$size" = 8 ]; then it=$LAT_ITERS; else it=$ITERS; fi
        echo "== $n ranks, $size bytes: C API (hccl-perf)"
        npu-emu run -n "$n" "$perf" -o allreduce -d fp32 -r sum --sizes "$size" -w 5 -n "$it" \
            | sed -n 's/^\[rank 0\] //p' | grep -v '^#$'
        echo "== $n ranks, $size bytes: Python (import hccl)"
        npu-emu run -n "$n" "$py" "$here/perf.py" --sizes "$size" --place "$PLACES" \
            --iters "$ITERS" --lat-iters "$LAT_ITERS" | sed -n 's/^\[rank 0\] //p'
    done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
