//! Held `nowait` constructs through the C entry points and libomp: `tests/ours/held_late_copies.c`
//! under `OMPTARGET_RS_HOST_LATE_COPIES`, with which the host device lands copies back to the
//! host late, as the CUDA device does, and keeps every queue "running" for its first polls.
//! libomp's hidden-helper tasks then map one variable at once, and the sum is right only if a
//! construct that copies it in first completes the held constructs that copy it back
//! (crates/core/src/ops/held.rs): without that rule 6 of 8 runs printed a wrong sum. The
//! second part's tasks (a parallel region's task reduction) also find the variable mapped with
//! no reference left while its copy back is still to land; sharing that device copy lost a
//! part in 1 of 6 runs until such a construct completed the held one first (300 runs at
//! each of 1, 3 and 8 late polls: 241 / 253 / 251 right before, 299 / 300 / 299 after).
//!
//! One wrong run in twelve is tolerated: two tasks whose regions run at the same moment share
//! one device copy of the variable (libomp hands both the variable), and a region preempted
//! between its read and its write of it loses the other's part, under any runtime (about 1 run
//! in 200 on a loaded 2-core machine). docs/ARCHITECTURE.md, "Held constructs".

mod common;

use common::{compile, our_lib_dir, profile_dir, repo_root, run_with_deadline};
use std::time::Duration;

#[test]
fn nowait_tasks_sharing_a_variable_keep_every_part_with_late_copies_back() {
    let build = profile_dir().join("held-host-build");
    std::fs::create_dir_all(&build).unwrap();
    let exe = build.join("held_late_copies");
    compile(
        &repo_root().join("tests/ours/held_late_copies.c"),
        &exe,
        &[],
    );
    let lib_dir = our_lib_dir("held-host-lib");
    let mut wrong = Vec::new();
    let settings = ["0", "1", "8"]
        .into_iter()
        .chain(std::iter::repeat_n("3", 9));
    for late in settings {
        let (code, stdout, stderr) = run_with_deadline(
            &exe,
            &[],
            &[("OMPTARGET_RS_HOST_LATE_COPIES", late)],
            &lib_dir,
            Duration::from_secs(60),
        )
        .unwrap();
        let sum = stdout.trim();
        assert!(
            sum.starts_with("sum=") && code == i32::from(sum != "sum=36000 s2=50"),
            "OMPTARGET_RS_HOST_LATE_COPIES={late}: exit {code}, stdout {stdout:?}, stderr:\n{stderr}"
        );
        if code != 0 {
            wrong.push(format!("OMPTARGET_RS_HOST_LATE_COPIES={late}: {sum}"));
        }
    }
    assert!(
        wrong.len() <= 1,
        "wrong sums (want sum=36000 s2=50): {wrong:?}"
    );
}
