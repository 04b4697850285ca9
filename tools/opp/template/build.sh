#!/bin/bash
# Build the custom operator package: build_out/custom_opp_<os>_<arch>.run (CMakePresets.json gives
# ASCEND_CANN_PACKAGE_PATH, vendor_name, ASCEND_COMPUTE_UNIT).
script_path=$(realpath "$(dirname "$0")")
cd "$script_path" || exit 1
rm -rf build_out
mkdir -p build_out
cmake -S "$script_path" -B "$script_path/build_out" --preset=default || exit 1
cmake --build "$script_path/build_out" -j"$(nproc)" || exit 1
ls "$script_path"/build_out/*.run
