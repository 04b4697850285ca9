#!/usr/bin/env bash
# Side-by-side figures: npu-emu's HCCL against OpenMPI, measured in the same run.
#
#   tests/perf/compare.sh            (after `make perf`; needs mpirun and hccl-perf-mpi)
#
# For 2, 4 and 8 ranks it runs AllReduce, AllGather, ReduceScatter and Broadcast on fp32 at
# 64 KiB, 8 MiB and 128 MiB, then the 8-byte AllReduce latency at 2 and 8 ranks. Each
# configuration is ONE mpirun job of hccl-perf-mpi --mpi: for every size it times HCCL on
# emulated devices first, then the same collective with MPI on host buffers, so both see the
# same machine load (this VM is noisy). Results are checked (#wrong must be 0).
#
# OpenMPI settings: --bind-to none (our stream workers are threads; binding a rank to one core
# would starve them) and, when ranks outnumber cores, --mca mpi_yield_when_idle 1 (busy polling
# collapses to milliseconds when oversubscribed; yielding is OpenMPI's best setting there).
#
# `compare.sh --table RAW` prints the table again from a raw output file of an earlier run.
#
# Two builds of the libraries: source the other install's set_env.sh first. With
# ASCEND_HOME_PATH set, compare.sh runs this hccl-perf-mpi on the environment's libraries, so
# both builds are timed by the same benchmark binary.
#
# Environment: ITERS (default 200), WARMUP (5), ITER_BYTES (cap on iterations x size, 512M:
# 64 iterations at 8 MiB, 4 at 128 MiB), LAT_ITERS (1000), RANKS ("2 4 8"), OUT (raw output
# file). The default was 20 before 2026-12-04: 20 operations of 64 KiB last about a
# millisecond, less than a scheduler timeslice, so with ranks outnumbering cores a single
# descheduling decided the cell (one build's 8-rank 64 KiB AllReduce took 40-76 us per
# operation in runs minutes apart).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ -z "${ASCEND_HOME_PATH:-}" ]; then
    # shellcheck disable=SC1091
    . "$root/target/npu-emu/set_env.sh"
fi
perf_mpi="$here/hccl-perf-mpi"
if [ "${1:-}" != "--table" ] && { ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$perf_mpi" ]; }; then
    echo "compare.sh: needs mpirun and $perf_mpi (install OpenMPI: apt-get install openmpi-bin libopenmpi-dev; then make perf)" >&2
    exit 1
fi

ITERS=${ITERS:-200}
WARMUP=${WARMUP:-5}
ITER_BYTES=${ITER_BYTES:-512M}
LAT_ITERS=${LAT_ITERS:-1000}
RANKS=${RANKS:-"2 4 8"}
OUT=${OUT:-$(mktemp /tmp/hccl-perf-compare.XXXXXX)}
cores=$(nproc)

mpi_run() {
    local n=$1
    shift
    local flags=(--oversubscribe --bind-to none -np "$n")
    if [ "$(id -u)" -eq 0 ]; then flags+=(--allow-run-as-root); fi
    if [ "$n" -gt "$cores" ]; then flags+=(--mca mpi_yield_when_idle 1); fi
    mpirun "${flags[@]}" "$perf_mpi" --mpi "$@"
}

table_only=
if [ "${1:-}" = "--table" ]; then
    table_only=1
    OUT=$2
fi

if [ -z "$table_only" ]; then
: >"$OUT"
for n in $RANKS; do
    echo "== $n ranks: allreduce, allgather, reducescatter, broadcast (fp32)" | tee -a "$OUT" >&2
    mpi_run "$n" -o allreduce,allgather,reducescatter,broadcast -d fp32 -r sum \
        --sizes 64K,8M,128M -w "$WARMUP" -n "$ITERS" -I "$ITER_BYTES" -c 1 | sed "s/^/$n /" >>"$OUT"
done
for n in 2 8; do
    echo "== $n ranks: 8-byte allreduce latency" | tee -a "$OUT" >&2
    mpi_run "$n" -o allreduce -d fp32 -r sum --sizes 8 -w 50 -n "$LAT_ITERS" -c 1 \
        | sed "s/^/$n /" | sed -E 's/^([0-9]+) ( *[0-9])/\1 lat \2/' >>"$OUT"
done
fi

# Rows look like: "<n> [lat] <size> <count> <type> <redop> <us> <algbw> <busbw> <wrong> | <us> <algbw> <busbw> <wrong>"
awk '
    /^[0-9]+ # [a-z]+$/ { op[$1] = $3; next }
    /^[0-9]+ #/ { next }
    $2 == "lat" && NF >= 15 {
        if ($10 != 0 || $15 != 0) bad = 1
        lat[++nl] = sprintf("| %-9s | %5d | %6s B | %10.2f | %10.2f | %7.2fx | %s/%s |", "allreduce", $1, $3, $7, $12, ($12 > 0 && $7 > 0) ? $12 / $7 : 0, $10, $15)
        next
    }
    $2 != "lat" && NF >= 14 {
        if ($9 != 0 || $14 != 0) bad = 1
        s = $2; unit = "B"
        if (s >= 1048576) { s = s / 1048576; unit = "MiB" } else if (s >= 1024) { s = s / 1024; unit = "KiB" }
        rows[++nr] = sprintf("| %-13s | %5d | %6g %-3s | %8.2f | %8.2f | %7.2fx | %10.1f | %10.1f | %s/%s |", op[$1], $1, s, unit, $8, $13, ($13 > 0) ? $8 / $13 : 0, $6, $11, $9, $14)
    }
    END {
        print ""
        print "busbw in GB/s (nccl-tests factors); ours = npu-emu HCCL on emulated devices, mpi = OpenMPI on host buffers, same run"
        print "| op            | ranks |       size |  ours    |   mpi    | ours/mpi | ours (us)  |  mpi (us)  | #wrong ours/mpi |"
        print "|---------------|------:|-----------:|---------:|---------:|---------:|-----------:|-----------:|-----------------|"
        for (i = 1; i <= nr; i++) print rows[i]
        print ""
        print "8-byte allreduce latency (us, slowest rank, average per call)"
        print "| op        | ranks |   size   |  ours (us) |  mpi (us)  | mpi/ours | #wrong |"
        print "|-----------|------:|---------:|-----------:|-----------:|---------:|--------|"
        for (i = 1; i <= nl; i++) print lat[i]
        if (bad) print "\nFAIL: some results were wrong (#wrong > 0)"
        exit bad ? 1 : 0
    }
' "$OUT" || status=$?
echo
echo "raw output: $OUT"
exit "${status:-0}"
