//! Corrupt device images (`tests/ours/corrupt_image.c`): the runtime refuses each with a
//! message naming what is wrong, and the program stops with the fatal error of a failed
//! construct. Under LLVM 19 the same program dies inside `dlopen` (SIGBUS for a truncated
//! image, SIGSEGV for a relocation outside the image: docs/DIVERGENCES.md), so it runs under
//! ours only.

mod common;

use common::{compile, our_lib_dir, profile_dir, repo_root, run_with_deadline};
use std::time::Duration;

#[test]
fn corrupt_images_are_refused_with_the_reason_before_the_loader_sees_them() {
    let build = profile_dir().join("ours-only-build");
    std::fs::create_dir_all(&build).unwrap();
    let exe = build.join("corrupt_image");
    compile(
        &repo_root().join("tests/ours/corrupt_image.c"),
        &exe,
        &["-ldl"],
    );
    let lib_dir = our_lib_dir("ours-only-lib");
    for (mode, why) in [
        ("truncate", "lies beyond the image's"),
        ("segment", "lies beyond the image's"),
        ("reloc", "relocation 0 of the relocation table writes at"),
    ] {
        let (code, stdout, stderr) = run_with_deadline(
            &exe,
            &[],
            &[("CORRUPT", mode)],
            &lib_dir,
            Duration::from_secs(60),
        )
        .unwrap_or_else(|e| panic!("{mode}: {e}"));
        let describe = format!("{mode}: exit {code}\nstdout:\n{stdout}\nstderr:\n{stderr}");
        // 128 + SIGABRT: the fatal error of a failed construct (not SIGBUS / SIGSEGV).
        assert_eq!(code, 134, "{describe}");
        assert_eq!(
            stdout,
            format!("running a region from a corrupt image ({mode})\n"),
            "{describe}"
        );
        let line = stderr
            .lines()
            .find(|l| l.contains("the device image is corrupt (not loaded): "))
            .unwrap_or_else(|| panic!("no line saying why: {describe}"));
        assert!(
            line.starts_with("omptarget error: loading the device image failed on device 0: "),
            "{describe}"
        );
        assert!(line.contains(why), "{mode}: `{why}` not in `{line}`");
        assert!(
            stderr.contains(
                "omptarget fatal error 1: failure of target construct while offloading is mandatory"
            ),
            "{describe}"
        );
    }
}
