#!/bin/sh
# tools/opp/install.sh PREFIX: the custom-operator tools in an npu-emu install tree (run by
# `make install` after `npu-emu install`):
#   PREFIX/tools/opbuild/op_build                          the aclnn API generator
#   PREFIX/tools/op_project_templates/ascendc/customize/   the project template msopgen copies
#   PREFIX/tools/msopgen/bin/msopgen, PREFIX/bin/msopgen, PREFIX/python/site-packages/bin/msopgen
#   PREFIX/include/exe_graph/                              the op_host context headers
set -e
prefix=$1
here=$(cd "$(dirname "$0")" && pwd)
[ -n "$prefix" ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
mkdir -p "$prefix/tools/opbuild" "$prefix/tools/msopgen/bin" "$prefix/python/site-packages/bin" "$prefix/bin"
install -m 755 "$here/op_build" "$prefix/tools/opbuild/op_build"
install -m 755 "$here/msopgen" "$prefix/tools/msopgen/bin/msopgen"
ln -sfn ../tools/msopgen/bin/msopgen "$prefix/bin/msopgen"
ln -sfn ../../../tools/msopgen/bin/msopgen "$prefix/python/site-packages/bin/msopgen"
tpl="$prefix/tools/op_project_templates/ascendc/customize"
rm -rf "$tpl"
mkdir -p "$tpl"
cp -R "$here/template/." "$tpl/"
# the op_host headers also where CANN keeps them (include/), next to tiling/ and register/
hdr="$here/../../headers/ascendc"
for d in exe_graph graph register; do
    rm -rf "$prefix/include/$d.tmp"
    cp -R "$hdr/$d" "$prefix/include/$d.tmp"
    rm -rf "$prefix/include/$d"
    mv "$prefix/include/$d.tmp" "$prefix/include/$d"
done
