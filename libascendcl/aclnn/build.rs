//! Passes the linker version script (`exports.map`: only the vendor `acl*`/`Acl*` names are
//! exported) and the SONAME. No stubs are generated: every function of the shipped aclnn
//! headers is written by hand in `src/`.

fn main() {
    let manifest = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    println!("cargo:rerun-if-changed=exports.map");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        manifest.join("exports.map").display()
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libnnopbase.so");
}
