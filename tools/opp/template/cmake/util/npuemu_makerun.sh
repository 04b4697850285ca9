#!/bin/sh
# npuemu_makerun.sh STAGE VENDOR OUT.run: a self-extracting installer of STAGE/packages/vendors/VENDOR.
set -e
stage=$1; vendor=$2; out=$3
tmp="$out.tmp.$$"
cat > "$tmp" <<HEADER
#!/bin/bash
# Custom operator package "$vendor" (npu-emu). Options:
#   --install-path=DIR   install into DIR/vendors/$vendor (default: \$ASCEND_OPP_PATH/vendors/$vendor)
#   --quiet              print nothing but errors
#   --help
vendor="$vendor"
HEADER
cat >> "$tmp" <<'BODY'
install_path=""
quiet=0
for a in "$@"; do
    case "$a" in
        --install-path=*) install_path="${a#--install-path=}" ;;
        --quiet) quiet=1 ;;
        --install) ;;
        --help|-h) sed -n '2,5p' "$0"; exit 0 ;;
        *) echo "[ops_custom] [ERROR] unknown option $a (--install-path=DIR, --quiet, --help)" >&2; exit 1 ;;
    esac
done
say() { [ "$quiet" = 1 ] || echo "[ops_custom] [INFO] $*"; }
if [ -n "$install_path" ]; then
    mkdir -p "$install_path" || exit 1
    root=$(cd "$install_path" && pwd)
else
    if [ -z "$ASCEND_OPP_PATH" ]; then
        echo "[ops_custom] [ERROR] ASCEND_OPP_PATH is not set: source set_env.sh of the CANN install first, or give --install-path=DIR" >&2
        exit 1
    fi
    root="$ASCEND_OPP_PATH"
fi
dest="$root/vendors/$vendor"
tmpd=$(mktemp -d) || exit 1
trap 'rm -rf "$tmpd"' EXIT
line=$(awk '/^__NPUEMU_ARCHIVE_BELOW__$/ {print NR + 1; exit 0}' "$0")
tail -n +"$line" "$0" | tar -xzf - -C "$tmpd" || { echo "[ops_custom] [ERROR] the package is damaged" >&2; exit 1; }
say "installing $vendor into $dest"
rm -rf "$dest"
mkdir -p "$root/vendors" || exit 1
cp -a "$tmpd/packages/vendors/$vendor" "$dest" || exit 1
if [ -n "$install_path" ]; then
    cat > "$dest/bin/set_env.bash" <<ENV
export ASCEND_CUSTOM_OPP_PATH=$dest\${ASCEND_CUSTOM_OPP_PATH:+:\$ASCEND_CUSTOM_OPP_PATH}
export LD_LIBRARY_PATH=$dest/op_api/lib/\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
ENV
    say "source $dest/bin/set_env.bash to use it"
else
    cfg="$root/vendors/config.ini"
    prio=""
    if [ -f "$cfg" ]; then
        prio=$(sed -n 's/^load_priority=//p' "$cfg" | tr ',' '\n' | grep -vx "$vendor" | paste -sd, -)
    fi
    if [ -n "$prio" ]; then prio="$vendor,$prio"; else prio="$vendor"; fi
    echo "load_priority=$prio" > "$cfg"
    cat > "$dest/bin/set_env.bash" <<ENV
export LD_LIBRARY_PATH=$dest/op_api/lib/\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
ENV
fi
say "SUCCESS"
exit 0
__NPUEMU_ARCHIVE_BELOW__
BODY
tar -czf - -C "$stage" packages >> "$tmp"
chmod +x "$tmp"
mv "$tmp" "$out"
