//! Generates the "not supported" stubs (`HCCL_E_NOT_SUPPORT`, through `src/stub.rs`) from
//! `abi/hccl_functions.tsv`, and passes the version script (`exports.map`: only
//! `Hccl*`/`Hcom*` are exported) and the SONAME. The generator is shared with libascendcl:
//! `abi/stubgen.rs`.

#[path = "../abi/stubgen.rs"]
mod stubgen;

fn main() {
    stubgen::run(&stubgen::Library {
        tsv: "../abi/hccl_functions.tsv",
        status_type: "HcclResult",
        soname: "libhccl.so",
        reasons: "",
    });
}
