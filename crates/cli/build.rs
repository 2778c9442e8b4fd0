//! Embeds the user documentation (README.md, docs/*.md and the images they show) in the
//! `omptarget` command, so that `omptarget install` lays it out under `share/doc/omptarget-rs`
//! from any copy of the command: a cargo build folder or an installed prefix.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().expect("the repository root");
    let mut files = vec![("README.md".to_owned(), root.join("README.md"))];
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
    println!(
        "cargo:rerun-if-changed={}",
        root.join("README.md").display()
    );
}
