//! An internal error of the runtime inside a construct is a failure of that construct under
//! the offload policy: `tests/ours/internal_error_policy.c` under our debug
//! build, with `OMPTARGET_RS_DEBUG_PANIC` naming the entry point that fails. Before, a panic
//! there returned a plain failure code and clang's host fallback ran the region on the host,
//! exit status 0, even under `OMP_TARGET_OFFLOAD=MANDATORY`.
//!
//! The failure is injected only in debug builds of the runtime, and this test runs the build
//! of its own profile: it exists in debug test builds only.

#![cfg(debug_assertions)]

mod common;

use common::{compile, our_lib_dir, profile_dir, repo_root, run_with_deadline};
use std::time::Duration;

const FATAL: &str =
    "omptarget fatal error 1: failure of target construct while offloading is mandatory";

#[test]
fn a_panic_inside_a_construct_is_a_construct_failure() {
    let build = profile_dir().join("internal-error-build");
    std::fs::create_dir_all(&build).unwrap();
    let exe = build.join("internal_error_policy");
    compile(
        &repo_root().join("tests/ours/internal_error_policy.c"),
        &exe,
        &[],
    );
    let lib_dir = our_lib_dir("internal-error-lib");
    let run = |mode: &str, entry: &str, policy: Option<&str>| {
        let mut env = vec![("OMPTARGET_RS_DEBUG_PANIC", entry), ("RUST_BACKTRACE", "0")];
        if let Some(p) = policy {
            env.push(("OMP_TARGET_OFFLOAD", p));
        }
        run_with_deadline(
            &exe,
            &[mode.to_owned()],
            &env,
            &lib_dir,
            Duration::from_secs(60),
        )
        .unwrap()
    };
    for (mode, entry) in [
        ("target", "__tgt_target_kernel"),
        ("enter", "__tgt_target_data_begin_mapper"),
    ] {
        for policy in [Some("MANDATORY"), None] {
            let (code, stdout, stderr) = run(mode, entry, policy);
            // LLVM's fatal errors abort (SIGABRT: 128 + 6).
            assert_eq!(
                code, 134,
                "{mode} {policy:?}: stdout:\n{stdout}\nstderr:\n{stderr}"
            );
            assert!(
                stderr.contains(&format!("internal error in {entry}")) && stderr.contains(FATAL),
                "{mode} {policy:?}: stderr:\n{stderr}"
            );
            assert!(
                !stdout.contains("after"),
                "{mode} {policy:?}: went on:\n{stdout}"
            );
        }
    }
    // Without the injected failure the same program runs on the device.
    let (code, stdout, stderr) = run("target", "none", Some("MANDATORY"));
    assert_eq!(code, 0, "stderr:\n{stderr}");
    assert!(stdout.contains("after target: x 2 on host 0"), "{stdout}");
}
