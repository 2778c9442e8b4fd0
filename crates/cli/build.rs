//! Embeds the user documentation (README.md, CHANGELOG.md, docs/*.md and the images they show) in the
//! `omptarget` command, so that `omptarget install` lays it out under `share/doc/omptarget-rs`
//! from any copy of the command: a cargo build folder or an installed prefix. Also records the
//! commit the command is built from (`OMPTARGET_COMMIT`, for `omptarget --version`): `git
//! rev-parse --short HEAD`, or `unknown` where there is no git or no repository (a source
//! tarball).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().expect("the repository root");
    let mut files = vec![
        ("README.md".to_owned(), root.join("README.md")),
        ("CHANGELOG.md".to_owned(), root.join("CHANGELOG.md")),
    ];
    let docs = root.join("docs");
    let mut names: Vec<String> = std::fs::read_dir(&docs)
        .expect("docs/")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md") || n.ends_with(".png") || n.ends_with(".svg"))
        .collect();
    names.sort();
    for n in names {
        files.push((format!("docs/{n}"), docs.join(&n)));
    }
    let mut out = String::from(
        "/// The documentation installed under `share/doc/omptarget-rs`: (relative path, bytes).\n",
    );
    out.push_str("pub const DOCS: &[(&str, &[u8])] = &[\n");
    for (rel, path) in &files {
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("docs.rs");
    std::fs::write(dest, out).expect("write docs.rs");
    println!("cargo:rerun-if-changed={}", docs.display());
    for top in ["README.md", "CHANGELOG.md"] {
        println!("cargo:rerun-if-changed={}", root.join(top).display());
    }
    let commit = git(&root, &["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=OMPTARGET_COMMIT={commit}");
    // A commit or checkout appends to logs/HEAD (per worktree), so the commit is re-read then.
    if let Some(log) = git(&root, &["rev-parse", "--git-path", "logs/HEAD"]) {
        let log = root.join(log);
        if log.exists() {
            println!("cargo:rerun-if-changed={}", log.display());
        }
    }
}

/// `git ARGS` in `root`: its first output line, or `None` when git is missing or fails.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    let line = String::from_utf8(out.stdout)
        .ok()?
        .lines()
        .next()?
        .trim()
        .to_owned();
    (out.status.success() && !line.is_empty()).then_some(line)
}
