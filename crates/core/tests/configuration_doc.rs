//! docs/CONFIGURATION.md lists exactly the environment variables that are read: every name the
//! runtime (the core's configuration, the ABI layer, the plugins) or the `omptarget` command
//! reads must have a row, and every row must name a variable something reads. A variable added
//! in the source without documentation, or a row left behind after a variable is removed,
//! fails here. `omptarget doctor` explains the variables from the same page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Read by libomp, not by this tree, and documented because they decide which device a
/// construct gets.
const READ_BY_LIBOMP: &[&str] = &["OMP_DEFAULT_DEVICE"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn is_variable(s: &str) -> bool {
    ["OMP_", "LIBOMPTARGET_", "OMPTARGET_"]
        .iter()
        .any(|p| s.starts_with(p))
        && s.len() > 6
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The part of a source file outside its unit tests (`#[cfg(test)] mod tests`, last by
/// convention in this tree), whose names are examples, not reads.
fn non_test(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests")
        .map_or(text, |i| &text[..i])
}

/// The names passed to a reader: in a `config.rs` (the core's `Reader`, whose methods and
/// closures take the name as their first argument) every quoted variable name; elsewhere a
/// quoted name directly inside `env::var(` or `env::var_os(`.
fn read_names() -> BTreeSet<String> {
    let mut files = Vec::new();
    for dir in [
        "crates/core/src",
        "crates/abi/src",
        "crates/plugin/src",
        "crates/plugins/cuda/src",
        "crates/plugins/host/src",
        "crates/cli/src",
    ] {
        sources(&root().join(dir), &mut files);
    }
    let mut names = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let text = non_test(&text);
        if file.file_name().is_some_and(|n| n == "config.rs") {
            for quoted in text.split('"').skip(1).step_by(2) {
                if is_variable(quoted) {
                    names.insert(quoted.to_owned());
                }
            }
        }
        for call in ["env::var(\"", "env::var_os(\""] {
            for rest in text.split(call).skip(1) {
                let name = rest.split('"').next().unwrap();
                if is_variable(name) {
                    names.insert(name.to_owned());
                }
            }
        }
    }
    names
}

/// The names in the first column of the page's tables (`| `A`, `B` | default | meaning |`).
fn documented_names(page: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in page.lines().filter(|l| l.starts_with("| `")) {
        let first = line.split(" | ").next().unwrap().trim_start_matches('|');
        for name in first.split(',') {
            let name = name.trim().trim_matches('`');
            assert!(is_variable(name), "`{name}` in docs/CONFIGURATION.md");
            names.insert(name.to_owned());
        }
    }
    names
}

#[test]
fn the_configuration_page_lists_exactly_the_variables_that_are_read() {
    let page = std::fs::read_to_string(root().join("docs/CONFIGURATION.md")).unwrap();
    let documented = documented_names(&page);
    let mut read = read_names();
    // The reading itself must be found, or the comparison proves nothing.
    for sure in [
        "LIBOMPTARGET_INFO",
        "OMPTARGET_RS_CUDA_STAGING_LIMIT",
        "OMPTARGET_RS_PROFILE",
    ] {
        assert!(read.contains(sure), "{sure} not found among the reads");
    }
    read.extend(READ_BY_LIBOMP.iter().map(|s| s.to_string()));
    let undocumented: Vec<_> = read.difference(&documented).collect();
    let unread: Vec<_> = documented.difference(&read).collect();
    assert!(
        undocumented.is_empty(),
        "read in the source but missing from docs/CONFIGURATION.md: {undocumented:?}"
    );
    assert!(
        unread.is_empty(),
        "listed in docs/CONFIGURATION.md but read nowhere: {unread:?}"
    );
}
