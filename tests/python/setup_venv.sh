#!/usr/bin/env bash
# Create (or check) the Python environment the PyTorch tests and samples use:
#   tests/python/setup_venv.sh [DIR]        (default: target/venv in the repository)
#
# It holds the pinned torch + torch_npu pair, numpy, pytest and maturin (for the pyo3 `hccl`
# module). Running it again on a complete environment does nothing.
#
# The pair: torch 2.9.0 with torch_npu 2.9.0.post9 (the newest torch_npu whose CANN imports are
# closest to the latest release's, see README "PyTorch"). torch_npu pins `torch==2.9.0+cpu`, a
# build the package registry does not have; the registry's torch 2.9.0 (the x86-64 CUDA build,
# with its nvidia-* wheels) works with it, so torch_npu is installed with --no-deps and its two
# other requirements (numpy, pyyaml) are listed here. Newer pairs (2.10 and later) abort at
# `import torch_npu` with that CUDA build (both register the allocator-config keys
# `pinned_reserve_segment_size_mb` and `per_process_memory_fraction`).
#
# Download: about 3 GB (torch's CUDA dependencies), 7 GB on disk; 2.5 minutes on an idle
# 2-core machine, 7 minutes under heavy load. Disk: nothing is cached (--no-cache-dir) and torch's
# requirements are installed one at a time, so the peak is the installed 7 GB plus the largest
# wheel (about 0.9 GB), not plus every download at once.
set -euo pipefail

TORCH_VERSION=2.9.0
TORCH_NPU_VERSION=2.9.0.post9

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${1:-$root/target/venv}"
python="${PYTHON:-python3}"

if [ -x "$dir/bin/python" ] && "$dir/bin/python" - "$TORCH_VERSION" "$TORCH_NPU_VERSION" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
want_torch, want_npu = sys.argv[1], sys.argv[2]
ok = (version("torch").split("+")[0] == want_torch and version("torch_npu") == want_npu)
for p in ("numpy", "pytest", "maturin", "pyyaml"):
    version(p)
sys.exit(0 if ok else 1)
PY
then
    echo "setup_venv: $dir already has torch $TORCH_VERSION + torch_npu $TORCH_NPU_VERSION"
    exit 0
fi

start=$(date +%s)
echo "setup_venv: creating $dir (torch $TORCH_VERSION + torch_npu $TORCH_NPU_VERSION)"
mkdir -p "$dir"
# Say so before pip does, with the figure: pip's own message is a bare "No space left on device".
need_kb=$((8 * 1024 * 1024))
free_kb=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
if [ -n "$free_kb" ] && [ "$free_kb" -lt "$need_kb" ]; then
    echo "setup_venv: $((free_kb / 1024)) MiB free on the file system of $dir; torch $TORCH_VERSION" \
        "with its CUDA wheels needs about 8 GiB (7 GiB installed + the largest wheel)" >&2
    df -h "$dir" >&2
    exit 1
fi
"$python" -m venv "$dir"
pip=("$dir/bin/python" -m pip --disable-pip-version-check --no-cache-dir)
"${pip[@]}" install -q numpy pyyaml pytest maturin
# torch and its requirements one wheel at a time (see "Disk" above): pip resolves the set without
# downloading it (--dry-run --report), then each pinned wheel is installed on its own, torch last.
report="$dir/torch-install-report.json"
"${pip[@]}" install -q --dry-run --ignore-installed --report "$report" "torch==$TORCH_VERSION"
"$dir/bin/python" - "$report" <<'PY' | while read -r req; do "${pip[@]}" install -q --no-deps "$req"; done
import json, sys
for item in reversed(json.load(open(sys.argv[1]))["install"]):
    print(f'{item["metadata"]["name"]}=={item["metadata"]["version"]}')
PY
rm -f "$report"
# --no-deps: torch_npu asks for torch==2.9.0+cpu, which the registry does not serve (see above).
"${pip[@]}" install -q --no-deps "torch-npu==$TORCH_NPU_VERSION"
TORCH_DEVICE_BACKEND_AUTOLOAD=0 "$dir/bin/python" -c "import torch, numpy; print('setup_venv: torch', torch.__version__, 'numpy', numpy.__version__)"
echo "setup_venv: done in $(( $(date +%s) - start )) s"
