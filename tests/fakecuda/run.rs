//! Running a Rust test on the fake driver (`tests/fakecuda/fakecuda.c`), shared by the tests
//! that include this file (`#[path = ...] mod fake_run;`): the driver is found through
//! `LD_LIBRARY_PATH`, which the loader reads when the process starts, so the test builds the
//! fake and runs itself again, as a child, with the fake's folder in front.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in the child: the test's body runs there.
pub const CHILD: &str = "OMPTARGET_RS_FAKE_CUDA_CHILD";

/// Whether this process is the child that runs on the fake driver.
pub fn in_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// `tests/fakecuda/fakecuda.c` (found above the crate's folder) built into `dir` as
/// `libcuda.so.1` and `libcuda.so`, with the first C compiler that works.
fn build_fake(dir: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("tests/fakecuda/fakecuda.c"))
        .find(|p| p.exists())
        .expect("tests/fakecuda/fakecuda.c above the crate");
    let lib = dir.join("libcuda.so.1");
    let built = ["cc", "clang-19", "clang", "gcc"].iter().any(|cc| {
        Command::new(cc)
            .args(["-O1", "-shared", "-fPIC", "-o"])
            .arg(&lib)
            .arg(&source)
            .arg("-lpthread")
            .status()
            .is_ok_and(|s| s.success())
    });
    assert!(built, "no C compiler built {}", source.display());
    let link = dir.join("libcuda.so");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("libcuda.so.1", &link).unwrap();
}

/// Runs test `name` of this binary again in a child on the fake driver, with `envs`, and
/// checks that it succeeded and printed `done`.
pub fn on_fake(name: &str, envs: &[(&str, &str)], done: &str) {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("omptarget-fakecuda-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    build_fake(&dir);
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("LD_LIBRARY_PATH", &dir)
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(done),
        "on the fake driver: {}\n{stdout}\n{stderr}",
        out.status
    );
}
