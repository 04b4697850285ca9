//! Generates the "not supported" stubs from `abi/acl_functions.tsv`, and passes the version
//! script (`exports.map`: only `acl*` and our `npuemu_*` interface are exported) and the
//! SONAME. The generator is shared with libhccl: `abi/stubgen.rs`.

#[path = "../abi/stubgen.rs"]
mod stubgen;

fn main() {
    stubgen::run(&stubgen::Library {
        tsv: "../abi/acl_functions.tsv",
        status_type: "aclError",
        soname: "libascendcl.so",
        reasons: "../abi/acl_stubs.tsv",
    });
}
