#!/usr/bin/env bash
# Run every sample at the number of ranks the document assumes (after `source set_env.sh`,
# with a Python that has torch and torch_npu: PYTHON=..., default python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
py="${PYTHON:-python3}"
npu-emu run -n 4 "$py" allreduce.py
npu-emu run -n 4 "$py" allgather.py
npu-emu run -n 4 "$py" reduce_scatter.py
npu-emu run -n 8 "$py" groups.py
npu-emu run -n 2 "$py" overlap.py
