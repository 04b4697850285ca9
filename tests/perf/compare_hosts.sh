#!/usr/bin/env bash
# npu-emu's HCCL across two emulated servers next to OpenMPI's TCP transport across the same
# two, measured in the same run.
#
#   sudo tests/perf/compare_hosts.sh     (after `make perf`; needs root, iproute2, mpirun and
#                                         hccl-perf-mpi)
#
# The two servers are network namespaces joined by veth links to a bridge (as the tests'
# `tests/src/hosts.rs` makes them): 10.202.0.1 and 10.202.0.2, each with its own host name
# and npu-emu node directory. For each layout in LAYOUTS (ranks per server: "1 2" means one
# rank on each server, then two on each) it runs ONE mpirun job of `hccl-perf-mpi --mpi`
# across them: for every size, HCCL on emulated devices (shared memory inside a server, TCP
# between servers) and then the same collective with MPI on host buffers (OpenMPI's tcp btl
# between servers, its shared-memory btl inside one), so both see the same load. Results are
# checked (#wrong must be 0). Everything it creates is removed on exit.
#
# Environment: OPS (default allreduce,allgather), SIZES (8M,128M), ITERS (50), WARMUP (3),
# ITER_BYTES (512M: 4 iterations at 128 MiB), LAYOUTS ("1 2 4"), OUT (raw output file).
# ITERS was 10 before 2026-12-04: with 8 ranks on 2 vCPUs the last operation of a timed loop
# ended 10-20 ms late for some ranks (likely: those done first start checking their results
# and take the CPU), which at 10 operations of 8 MiB added 1-2 ms to each (npu-emu's 2 x 4 AllReduce:
# 14.2-15.0 ms per operation with 10, 12.0-12.4 with 100, same build).
# Before the layouts it measures the link with tcp_link (built by `make perf`), and prints how
# close each library comes to it with one rank per server.
#
# TCP_CC (default reno) is the TCP congestion control inside the two servers, for both
# libraries; TCP_CC=host keeps the machine's default. It is pinned because the result depends
# on it far more than on either library: on a machine whose default is bbr (as on the 2-vCPU
# VMs this was measured on), bbr paces each connection at its estimate of a bottleneck that
# on a veth link is only the CPU, and both libraries ran 1.5-3x slower (2026-12-04, 2 x 2
# AllGather 8 MiB: OpenMPI 9.4 ms with bbr, 3.0-4.2 with cubic or reno; npu-emu 4.9 and 2.8).
# Linux's own default is cubic; a namespace other than the first may only choose a congestion
# control the machine allows to everyone (net.ipv4.tcp_allowed_congestion_control), which
# always includes reno, and on a link that loses nothing reno and cubic behave alike (measured
# equal within the noise).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ -z "${ASCEND_HOME_PATH:-}" ]; then
    # shellcheck disable=SC1091
    . "$root/target/npu-emu/set_env.sh"
fi
perf_mpi="$here/hccl-perf-mpi"
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$perf_mpi" ]; then
    echo "compare_hosts.sh: needs mpirun and $perf_mpi (apt-get install openmpi-bin libopenmpi-dev; then make perf)" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null 2>&1; then
    echo "compare_hosts.sh: needs root and iproute2's ip to make the two emulated servers (network namespaces)" >&2
    exit 1
fi

OPS=${OPS:-allreduce,allgather}
SIZES=${SIZES:-8M,128M}
ITERS=${ITERS:-50}
WARMUP=${WARMUP:-3}
ITER_BYTES=${ITER_BYTES:-512M}
LAYOUTS=${LAYOUTS:-"1 2 4"}
TCP_CC=${TCP_CC:-reno}
OUT=${OUT:-$(mktemp /tmp/hccl-perf-hosts.XXXXXX)}

# Names start with npuemu-<pid>- like the tests' hosts, so a later test run removes them if
# this script is killed before its trap runs.
tag="npuemu-$$-perf"
br="$tag-br"
work=$(mktemp -d /tmp/hccl-perf-hosts-work.XXXXXX)
cleanup() {
    for i in 0 1; do
        for p in $(ip netns pids "$tag-h$i" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
        ip netns del "$tag-h$i" 2>/dev/null || true
        rm -rf "/dev/shm/npu-emu-$tag-h$i"
    done
    ip netns del "$br" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$br"
ip -n "$br" link add br0 type bridge
ip -n "$br" link set br0 up
agent_cases=
for i in 0 1; do
    ns="$tag-h$i"
    ip netns add "$ns"
    ip link add "v$i" netns "$br" type veth peer name eth0 netns "$ns"
    ip -n "$br" link set "v$i" master br0 up
    ip -n "$ns" addr add "10.202.0.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    if [ "$TCP_CC" != host ] &&
        ! ip netns exec "$ns" sysctl -qw "net.ipv4.tcp_congestion_control=$TCP_CC"; then
        echo "compare_hosts.sh: cannot choose the congestion control $TCP_CC in the servers (TCP_CC=host keeps the machine's)" >&2
        exit 1
    fi
    agent_cases+="  10.202.0.$((i + 1))|npuemu-h$i) ns=$ns; name=npuemu-h$i; export NPU_EMU_NODE_DIR=/dev/shm/npu-emu-$tag-h$i ;;
"
done
# OpenMPI's "ssh" to an emulated server: run the command in its namespace under its name.
cat >"$work/rsh-agent.sh" <<EOF
#!/bin/sh
host=\$1; shift
case "\$host" in
$agent_cases  *) echo "no emulated host \$host" >&2; exit 255 ;;
esac
exec ip netns exec "\$ns" unshare --uts -- sh -c 'hostname "\$0" && exec sh -c "\$1"' "\$name" "\$*"
EOF
chmod +x "$work/rsh-agent.sh"

cores=$(nproc)
: >"$OUT"
echo "# TCP congestion control in both servers: $(ip netns exec "$tag-h0" sysctl -n net.ipv4.tcp_congestion_control)" | tee -a "$OUT" >&2
# The link itself, first: one TCP connection between the servers, both directions at once (what
# a rank pair across them needs), at each size an AllReduce (S each way) and an AllGather
# (S/2 each way, 2 ranks) moves. This is the bound of both libraries with one rank per server.
link="$here/tcp_link"
if [ -x "$link" ]; then
    link_sizes=()
    for s in ${SIZES//,/ }; do
        b=$(numfmt --from=iec "$s")
        link_sizes+=("$b" "$((b / 2))")
    done
    ip netns exec "$tag-h0" "$link" server 10.202.0.1 29731 "${link_sizes[@]}" &
    if ! ip netns exec "$tag-h1" "$link" client 10.202.0.1 29731 "${link_sizes[@]}" >>"$OUT"; then
        echo "compare_hosts.sh: the link measurement failed" >&2
        exit 1
    fi
    wait
else
    echo "compare_hosts.sh: $link is missing (make perf builds it): no link bound in the table" >&2
fi
for k in $LAYOUTS; do
    n=$((2 * k))
    echo "== 2 servers x $k ranks: $OPS (fp32) at $SIZES" | tee -a "$OUT" >&2
    flags=(--allow-run-as-root --oversubscribe --bind-to none
        --mca plm_rsh_agent "$work/rsh-agent.sh" --mca plm_rsh_no_tree_spawn 1
        --mca oob_tcp_if_include 10.202.0.0/24 --mca btl_tcp_if_include 10.202.0.0/24
        -x LD_LIBRARY_PATH -x PATH --host "10.202.0.1:$k,10.202.0.2:$k" -np "$n")
    if [ "$n" -gt "$cores" ]; then flags+=(--mca mpi_yield_when_idle 1); fi
    (cd "$work" && ip netns exec "$tag-h0" unshare --uts -- sh -c 'hostname npuemu-h0 && exec "$@"' sh \
        mpirun "${flags[@]}" "$perf_mpi" --mpi -o "$OPS" -d fp32 -r sum --sizes "$SIZES" \
        -w "$WARMUP" -n "$ITERS" -I "$ITER_BYTES" -c 1) | sed "s/^/$n /" >>"$OUT"
done
echo "load: $(uptime)"
"$here/compare.sh" --table "$OUT" | sed '/^8-byte allreduce latency/,/^|-----------|/d'
# One rank per server against the link: busbw bound = GB/s per direction of the exchange the
# 2-rank collective needs (AllReduce of S: S each way; AllGather of S: S/2 each way).
awk '
    $1 == "link" { gbs[$2] = $4; nl++ }
    $1 == "2" && $2 == "#" && NF == 3 { op = $3 }
    $1 == "2" && $2 ~ /^[0-9]+$/ && NF >= 13 {
        k = op SUBSEP $2
        if (!(k in ours)) order[++m] = k
        ours[k] = $8; mpi[k] = $13
    }
    END {
        if (m == 0 || nl == 0) exit
        print ""
        print "one rank per server against the link (tcp_link: one connection, both directions at once, same run)"
        print "| op            |       size | link bound |  ours    |   mpi    | ours/link | mpi/link |"
        print "|---------------|-----------:|-----------:|---------:|---------:|----------:|---------:|"
        for (i = 1; i <= m; i++) {
            k = order[i]
            split(k, kk, SUBSEP); o = kk[1]; s = kk[2]
            need = (o == "allgather") ? s / 2 : s
            if (!(need in gbs) || gbs[need] == 0) continue
            b = gbs[need]
            printf "| %-13s | %6d MiB | %10.2f | %8.2f | %8.2f | %8.0f%% | %7.0f%% |\n", o, s / 1048576, b, ours[k], mpi[k], 100 * ours[k] / b, 100 * mpi[k] / b
        }
    }' "$OUT"
