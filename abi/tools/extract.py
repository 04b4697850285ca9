#!/usr/bin/env python3
"""Extract the machine-readable ABI list (abi/*.tsv) from reference/abi.md.

Usage: python3 abi/tools/extract.py [path/to/abi.md]

Reads the function tables (§1.2, Appendix A, §2.2), the enum tables (§1.4, §2.3) and the
error-code tables (§1.5 A/B/C) of abi.md, adds the hand-kept rows of abi/tools/extra_*.tsv
(tables whose cells are prose in abi.md, and acl_prof.h/acl_op.h which abi.md does not list),
checks the result against reference/functions/{acl,hccl}.txt and writes
abi/{acl_functions,hccl_functions,enums,constants}.tsv. abi/structs.tsv is kept by hand
(abi.md §1.6/§2.6/§2.7 describe layouts in prose) and is checked by the ABI test.
Python is not needed to build or test: the outputs are committed.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ABI = os.path.dirname(HERE)
REF = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/reference/abi.md"
FUNCS = os.path.join(os.path.dirname(REF), "functions")


def cells(line):
    parts = line.strip().strip("|").split("|")
    return [p.strip().replace("`", "").strip() for p in parts]


def read_extra(name):
    rows = []
    with open(os.path.join(HERE, name)) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            rows.append(line.split("\t"))
    return rows


def main():
    lines = open(REF, encoding="utf-8").read().split("\n")
    acl_funcs, hccl_funcs, enums, consts = [], [], [], []
    section = ""
    enum_name = None
    header_cols = None
    for line in lines:
        if line.startswith("#"):
            section = line.lstrip("#").strip()
            header_cols = None
            enum_name = None
            if section.startswith("A. "):
                err_kind = ("static_const_int", "acl_base_rt.h")
            elif section.startswith("B. "):
                err_kind = ("define", "error_codes/rt_error_codes.h")
            elif section.startswith("C. "):
                err_kind = ("static_const_u32", "error_codes/ge_error_codes.h")
            continue
        m = re.match(r"^\*\*(\w+)\*\* \(underlying type", line)
        if m:
            enum_name = m.group(1)
            continue
        if not line.startswith("|"):
            header_cols = None
            continue
        c = cells(line)
        if header_cols is None:
            header_cols = c
            continue
        if set("".join(c)) <= set("-: "):
            continue
        h = header_cols
        if h[:2] == ["Return", "Function"]:
            ret, name, params = c[0], c[1], c[2]
            if not re.match(r"^[A-Za-z_]\w*$", name):
                continue  # §1.7 prose rows: kept in extra_functions.tsv
            if section.startswith("2.2"):
                hdr = c[4].split("→")[0].strip().split("/")[-1]
                hccl_funcs.append([ret, name, params, hdr])
            elif section.startswith("1.2") or section.startswith("Appendix A"):
                acl_funcs.append([ret, name, params, c[3]])
        elif enum_name and h[0] == "Name" and h[1] == "Value":
            for i in range(0, len(c) - 1, 2):
                if c[i]:
                    enums.append([enum_name, c[i], c[i + 1].split()[0]])
        elif section.startswith("2.3") and h[0] == "Name":
            if re.match(r"^-?\d+$", c[1]):
                enums.append(["HcclResult", c[0], c[1]])
        elif section[:2] in ("A.", "B.", "C.") and h[0] == "Name":
            for i in range(0, len(c) - 1, 2):
                if c[i]:
                    nm = c[i].replace("(†)", "").strip()
                    consts.append([nm, c[i + 1], err_kind[0], err_kind[1]])

    acl_funcs += [r for r in read_extra("extra_functions.tsv")]
    enums += read_extra("extra_enums.tsv")
    consts = read_extra("extra_constants.tsv") + consts

    # Checks against the name lists every export must cover.
    want_acl = set(open(os.path.join(FUNCS, "acl.txt")).read().split())
    want_hccl = set(open(os.path.join(FUNCS, "hccl.txt")).read().split())
    have_acl = [r[1] for r in acl_funcs]
    have_hccl = [r[1] for r in hccl_funcs]
    assert len(have_acl) == len(set(have_acl)), "duplicate ACL function"
    assert len(have_hccl) == len(set(have_hccl)), "duplicate HCCL function"
    missing = want_acl - set(have_acl)
    assert not missing, f"acl.txt names missing from the tables: {sorted(missing)}"
    assert want_hccl == set(have_hccl), set(have_hccl) ^ want_hccl
    # Beyond the CANN 8.5 list: functions frameworks look up (torch_npu's ProcessGroupHCCL).
    hccl_funcs += read_extra("extra_hccl_functions.tsv")
    have_hccl = [r[1] for r in hccl_funcs]
    assert len(have_hccl) == len(set(have_hccl)), "duplicate HCCL function"
    names = [e[1] for e in enums] + [k[0] for k in consts]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate enum/constant names: {dup}"

    def write(name, head, rows):
        with open(os.path.join(ABI, name), "w") as f:
            f.write("\t".join(head) + "\n")
            for r in rows:
                assert len(r) == len(head), r
                f.write("\t".join(r) + "\n")

    write("acl_functions.tsv", ["return", "name", "params", "header"], acl_funcs)
    write("hccl_functions.tsv", ["return", "name", "params", "header"], hccl_funcs)
    write("enums.tsv", ["enum", "name", "value"], enums)
    write("constants.tsv", ["name", "value", "kind", "header"], consts)
    print(f"acl {len(acl_funcs)} (acl.txt {len(want_acl)}), hccl {len(hccl_funcs)}, "
          f"enums {len(enums)}, constants {len(consts)}")


if __name__ == "__main__":
    main()
