#!/bin/sh
# Build and run the runtime benchmarks of this directory, each beside a peer measured in the
# same run (benchmarks, not tests: figures on a shared machine vary, so compare only figures
# of one run, and read them with the load printed before and after).
#
#   tests/bench/run.sh [stream|kernel|malloc|memcpy|all] [program arguments]
#
#   stream  aclrtMemcpyAsync / aclrtLaunchHostFunc round trips vs the work alone and a
#           pthread condvar ping-pong (acl_overhead.c)
#   kernel  Ascend C launch + synchronize at 1/8/48 blocks vs 48 std::thread spawn+join and
#           an OpenMP loop of 48 iterations (kernel_launch.cpp)
#   malloc  aclrtMalloc / aclrtFree / first and second aclrtMemset up to 1 GiB vs an anonymous
#           mmap and its first memset (malloc.c)
#   memcpy  aclrtMemcpy bandwidth vs memcpy (memcpy_bw.c)
#
# Run from anywhere; builds the workspace (cargo build --release) unless NO_BUILD=1, puts the
# programs in target/bench, and runs them on a private node directory that is removed after.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WHAT=${1:-all}
[ $# -gt 0 ] && shift
B=$ROOT/target/bench
REL=$ROOT/target/release
mkdir -p "$B"
cd "$ROOT"
if [ "${NO_BUILD:-0}" != 1 ]; then
    cargo build --release --workspace --quiet
fi
CFLAGS="-O2 -Iheaders/include -Itests/bench"
LIBS="-L$REL -lascendcl -Wl,-rpath,$REL"

NPU_EMU_NODE_DIR=/dev/shm/npu-emu-bench-$$
export NPU_EMU_NODE_DIR
trap 'rm -rf "$NPU_EMU_NODE_DIR"' EXIT INT TERM

load() { echo "load ($1): $(uptime | sed 's/.*load average/load average/')"; }

run_stream() {
    gcc -std=c11 $CFLAGS tests/bench/acl_overhead.c -o "$B/acl_overhead" $LIBS -pthread
    echo "== stream hand-off (tests/bench/acl_overhead.c)"
    "$B/acl_overhead" "$@"
}

run_kernel() {
    rm -rf "$B/gen"
    "$REL/npu-emu" ascendc-stub --out-dir "$B/gen" tests/bench/kernel_launch_kernels.cpp >/dev/null
    g++ -std=c++17 -O2 -fPIC -shared -pthread -Iheaders/ascendc -Iheaders/include \
        "$B"/gen/*.npuemu.cpp -o "$B/libbenchk.so" $LIBS
    g++ -std=c++17 $CFLAGS -fopenmp -I"$B/gen/include" tests/bench/kernel_launch.cpp \
        -o "$B/kernel_launch" -L"$B" -lbenchk -Wl,-rpath,"$B" $LIBS -pthread
    echo "== kernel launch (tests/bench/kernel_launch.cpp)"
    "$B/kernel_launch" "$@"
}

run_malloc() {
    gcc -std=c11 $CFLAGS tests/bench/malloc.c -o "$B/malloc" $LIBS
    echo "== aclrtMalloc (tests/bench/malloc.c)"
    "$B/malloc" "$@"
}

run_memcpy() {
    gcc -std=c11 $CFLAGS tests/bench/memcpy_bw.c -o "$B/memcpy_bw" $LIBS
    echo "== copy bandwidth (tests/bench/memcpy_bw.c)"
    "$B/memcpy_bw" "$@"
}

echo "cpus: $(nproc)"
load before
case $WHAT in
stream | kernel | malloc | memcpy) "run_$WHAT" "$@" ;;
all)
    run_stream
    run_kernel
    run_malloc
    run_memcpy
    ;;
*)
    echo "usage: tests/bench/run.sh [stream|kernel|malloc|memcpy|all] [program arguments]" >&2
    exit 2
    ;;
esac
load after
