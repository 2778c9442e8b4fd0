//! The cubins clang 19 and nvlink really produce pass the structural check the plugin runs
//! before `cuModuleLoadData` (the check once refused every one of them: their PT_LOAD
//! segments all sit at address 0, which the host loader's rules call overlapping).
//!
//! `tests/data/*.cubin`: the sm_90 device image of `tests/c/api_is_present.c`, built by
//! `gpu/build.sh` with CUDA 12 (ELF ABI 7) and CUDA 13 (ABI 8) toolchains.

use omptarget_plugin_cuda::image::{ImageKind, check_structure, classify};

fn check(name: &str, abi: u8) {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap();
    let kind = classify(&bytes).expect("a cubin");
    assert!(
        matches!(kind, ImageKind::Cubin { sm: 90, abi: a } if a == abi),
        "{name}: {kind:?}"
    );
    check_structure(&bytes, kind).unwrap_or_else(|e| panic!("{name}: {e}"));
    // Cut inside its section headers, it is refused.
    let cut = &bytes[..bytes.len() - 100];
    assert!(check_structure(cut, kind).is_err(), "{name} truncated");
}

#[test]
fn an_abi7_cubin_passes_the_structural_check() {
    check("api_is_present.sm_90.abi7.cubin", 7);
}

#[test]
fn an_abi8_cubin_passes_the_structural_check() {
    check("api_is_present.sm_90.abi8.cubin", 8);
}
