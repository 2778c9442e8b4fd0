//! Links the cdylib as `libomptarget.so.19.1` with every export versioned `VERS1.0`.
//!
//! rustc passes its own anonymous version script for a cdylib, which GNU ld refuses to combine
//! with a named one; the linker wrapper in `tools/` drops rustc's script when ours is present
//! (see docs/ARCHITECTURE.md).

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let map = format!("{dir}/libomptarget.map");
    println!("cargo:rerun-if-changed={map}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={map}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libomptarget.so.19.1");
}
