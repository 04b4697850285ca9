#!/usr/bin/env python3
"""Regenerate the generated regions of headers/include from the abi/ TSV files.

Usage: python3 abi/tools/gen_headers.py

Each header keeps hand-written types, structs and macros; the enum definitions and function
declarations sit between `BEGIN GENERATED: constants|enums|functions` / `END GENERATED` marker lines and
are rewritten here from abi/constants.tsv, abi/enums.tsv, abi/acl_functions.tsv and abi/hccl_functions.tsv, so
the headers and the exports (libascendcl/build.rs, libhccl/build.rs read the same TSVs) cannot
drift apart. The output is committed; the build does not need Python.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INC = os.path.join(ROOT, "headers", "include")

ENUM_HOME = {
    "aclDataType": "acl/acl_base_rt.h", "aclFormat": "acl/acl_base_rt.h",
    "aclLogLevel": "acl/acl_base_rt.h", "aclMemType": "acl/acl_base_rt.h",
    "aclSysParamOpt": "acl/acl_base_rt.h", "aclCannAttr": "acl/acl_base_rt.h",
    "aclDeviceInfo": "acl/acl_base_rt.h",
    "aclopEngineType": "acl/acl_op.h", "aclopCompileType": "acl/acl_op_compiler.h",
    "aclCompileOpt": "acl/acl_op_compiler.h", "aclOpCompileFlag": "acl/acl_op_compiler.h",
    "acldumpType": "acl/acl_dump.h", "acltdtTensorType": "acl/acl_tdt.h",
    "acltdtQueueAttrType": "acl/acl_tdt_queue.h", "acltdtQueueRouteParamType": "acl/acl_tdt_queue.h",
    "acltdtQueueRouteQueryMode": "acl/acl_tdt_queue.h",
    "acltdtQueueRouteQueryInfoParamType": "acl/acl_tdt_queue.h", "acltdtAllocBufType": "acl/acl_tdt_queue.h",
    "aclAippInputFormat": "acl/acl_mdl.h", "aclmdlConfigAttr": "acl/acl_mdl.h",
    "aclmdlExecConfigAttr": "acl/acl_mdl.h", "aclmdlInputAippType": "acl/acl_mdl.h",
}
# Declared as `enum X { ... };` without a typedef in CANN 8.5 (abi.md §1.4).
UNTYPEDEFED = {"aclrtMemPgType", "aclrtMemType"}
DEPRECATED = {
    "aclGetDataBufferSize": "aclGetDataBufferSize is deprecated, use aclGetDataBufferSizeV2 instead",
    "aclGetTensorDescDim": "aclGetTensorDescDim is deprecated, use aclGetTensorDescDimV2 instead",
    "aclrtQueryEvent": "aclrtQueryEvent is deprecated, use aclrtQueryEventStatus instead",
    "aclSetTensorStorageFormat": "aclSetTensorStorageFormat is deprecated",
    "aclSetTensorStorageShape": "aclSetTensorStorageShape is deprecated",
    "aclsysGetCANNVersion": "aclsysGetCANNVersion is deprecated, use aclsysGetVersionStr instead",
    "aclmdlRIDebugPrint": "aclmdlRIDebugPrint is deprecated, use aclmdlRIDebugJsonPrint instead",
    # CANN 8.x GE acl_op.h (mirror-cann/ge, hicann/ge).
    "aclopExecute": "aclopExecute is deprecated, use aclopExecuteV2 instead",
}


def tsv(name):
    with open(os.path.join(ROOT, "abi", name)) as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    return rows[1:]


def enum_home(e):
    if e in ENUM_HOME:
        return ENUM_HOME[e]
    if e.startswith("Hccl"):
        return "hccl/hccl_types.h"
    if e.startswith("aclprof"):
        return "acl/acl_prof.h"
    return "acl/acl_rt.h"


def wrap(head, params, width=100):
    """`head(params);`, continuing the parameter list on indented lines past `width`."""
    line = f"{head}({params});"
    if len(line) <= width:
        return line
    out, cur = [], head + "("
    parts = params.split(", ")
    for i, p in enumerate(parts):
        piece = p + (", " if i + 1 < len(parts) else ");")
        if len(cur) + len(piece.rstrip()) > width and cur.strip() not in ("", head + "("):
            out.append(cur.rstrip())
            cur = "    "
        cur += piece
    out.append(cur.rstrip())
    return "\n".join(out)


def decl(ret, name, params, acl):
    sep = "" if ret.endswith("*") else " "
    if acl:
        if name in DEPRECATED:
            dep = f'ACL_FUNC_VISIBILITY ACL_DEPRECATED_MESSAGE("{DEPRECATED[name]}")\n'
            return dep + wrap(f"{ret}{sep}{name}", params)
        return wrap(f"ACL_FUNC_VISIBILITY {ret}{sep}{name}", params)
    return wrap(f"extern {ret}{sep}{name}", params)


def main():
    enums = {}
    for e, n, v in tsv("enums.tsv"):
        enums.setdefault(e, []).append((n, v))
    blocks = {}  # (header, kind) -> lines
    for e, items in enums.items():
        body = "".join(f"    {n} = {v},\n" for n, v in items)
        if e in UNTYPEDEFED:
            text = f"enum {e} {{\n{body}}};\n"
        else:
            text = f"typedef enum {e} {{\n{body}}} {e};\n"
        blocks.setdefault((enum_home(e), "enums"), []).append(text)
    for ret, name, params, hdr in tsv("acl_functions.tsv"):
        blocks.setdefault(("acl/" + hdr, "functions"), []).append(decl(ret, name, params, True) + "\n")
    for ret, name, params, hdr in tsv("hccl_functions.tsv"):
        blocks.setdefault(("hccl/" + hdr, "functions"), []).append(decl(ret, name, params, False) + "\n")

    for name, value, kind, hdr in tsv("constants.tsv"):
        home = ("hccl/" if hdr.startswith("hccl") else "acl/") + hdr
        if kind == "define":
            text = f"#define {name} {value}\n"
        elif kind == "static_const_int":
            text = f"static const int {name} = {value};\n"
        elif kind == "static_const_u32":
            text = f"static const uint32_t {name} = {value};\n"
        else:
            ty = {"const_u32": "uint32_t", "const_i32": "int32_t"}[kind]
            text = (f"#ifdef __cplusplus\nconst {ty} {name} = {value};\n#else\n"
                    f"#define {name} (({ty}){value})\n#endif\n")
        blocks.setdefault((home, "constants"), []).append(text)

    used = set()
    for dirpath, _, files in os.walk(INC):
        for fn in sorted(files):
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, INC)
            text = open(path).read()
            for kind in ("constants", "enums", "functions"):
                pat = re.compile(
                    r"(/\* BEGIN GENERATED: %s[^\n]*\*/\n).*?(/\* END GENERATED: %s \*/)" % (kind, kind),
                    re.S)
                if not pat.search(text):
                    continue
                sep = "\n" if kind == "enums" else ""
                body = sep.join(blocks.get((rel, kind), []))
                text = pat.sub(lambda m: m.group(1) + body + m.group(2), text)
                used.add((rel, kind))
            open(path, "w").write(text)
    missing = set(blocks) - used
    assert not missing, f"headers without a generated region for: {sorted(missing)}"


if __name__ == "__main__":
    main()
