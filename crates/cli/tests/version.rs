//! `omptarget --version` names the version and the commit the command was built from, so a
//! report from a user's installation says which source it ran.

use std::process::Command;

#[test]
fn version_names_the_crate_version_and_a_commit() {
    let o = Command::new(env!("CARGO_BIN_EXE_omptarget"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    let line = out.trim();
    let prefix = format!("omptarget {} (commit ", env!("CARGO_PKG_VERSION"));
    let commit = line
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("`{line}` is not `{prefix}COMMIT)`"));
    // An abbreviated hash from `git rev-parse --short` (7+ hex digits), or `unknown` when the
    // command was built outside a git checkout.
    let hash = commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit());
    assert!(hash || commit == "unknown", "commit `{commit}`");
    // The tests run from a git checkout: the commit must then be known, and be HEAD's.
    if let Ok(head) = Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
        .output()
        && head.status.success()
    {
        let head = String::from_utf8(head.stdout).unwrap();
        assert!(
            head.trim().starts_with(commit),
            "{commit} is not HEAD {head}"
        );
    }
}
