//! The core's modules stand in floors, and imports only look down (docs/ARCHITECTURE.md).
//!
//! Reads every file under `src/`, collects the `crate::X` paths it names (`use` lines, `use
//! crate::{a::.., b::..}` groups and paths in code) and the `super::` paths that leave a
//! top-level module, and checks each edge between two top-level modules against [`FLOORS`]:
//! no edge may point to a higher floor, and the edges (same-floor ones included) may form no
//! cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first. A module may import modules of its own floor (without a cycle) or below.
const FLOORS: &[(&str, &[&str])] = &[
    // Plain data and rules: errors, messages and LLVM's INFO lines, configuration, images,
    // the mapping table, the rules of indirect entries.
    (
        "data and rules",
        &[
            "error", "message", "mapping", "config", "image", "trace", "indirect",
        ],
    ),
    // One device: its backend, images, mapping table, queues and memory policy.
    ("one device", &["device"]),
    // What a device carries for features: tool events and subscribers, record/replay,
    // requirements, interop objects.
    (
        "device features",
        &["tools", "record", "requires", "interop"],
    ),
    // The constructs: target data, update and kernel operations on one device.
    ("constructs", &["ops"]),
    // The registry of devices and images, and the runtime's entry points of each feature.
    ("registry", &["runtime"]),
    // What is built on the runtime: the omp_target_* routines.
    ("routines", &["api"]),
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, ms)| ms.contains(&module))
}

/// The source without comments, string and character literals (their contents replaced by
/// spaces, so that line numbers stay).
fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&b, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < b.len() {
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &ch in &b[i..j.min(b.len())] {
                out.push(blank(ch));
            }
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            let end = if next == Some('\\') {
                (i + 2..b.len()).find(|&k| b[k] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    for _ in i..=e {
                        out.push(' ');
                    }
                    i = e + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && is_ident(b[i - 1])
}

fn ident_at(b: &[char], mut i: usize) -> (String, usize) {
    while i < b.len() && b[i].is_whitespace() {
        i += 1;
    }
    let start = i;
    while i < b.len() && is_ident(b[i]) {
        i += 1;
    }
    (b[start..i].iter().collect(), i)
}

/// The first segments of the paths in a `{ ... }` group starting at `b[i] == '{'`.
fn group_heads(b: &[char], i: usize) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            '{' => {
                depth += 1;
                expect_head = depth == 1;
                j += 1;
            }
            '}' => {
                depth -= 1;
                j += 1;
                if depth == 0 {
                    break;
                }
            }
            ',' => {
                expect_head = depth == 1;
                j += 1;
            }
            c if is_ident(c) && expect_head => {
                let (id, k) = ident_at(b, j);
                heads.push(id);
                expect_head = false;
                j = k;
            }
            _ => j += 1,
        }
    }
    heads
}

/// `(line, module named)` for every path leaving `module` (a file's module path, e.g.
/// `["ops", "data"]`) in `text`.
fn references(text: &str, module: &[String]) -> Vec<(usize, String)> {
    let b: Vec<char> = text.chars().collect();
    let line_of = |i: usize| b[..i].iter().filter(|&&c| c == '\n').count() + 1;
    let mut found = Vec::new();
    // Inline modules (`mod tests { ... }`) deepen the module path for `super::`.
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == '}' {
            depth = depth.saturating_sub(1);
            if inline.last().is_some_and(|(d, _)| *d == depth) {
                inline.pop();
            }
            i += 1;
            continue;
        }
        if !is_ident(c) || ident_before(&b, i) {
            i += 1;
            continue;
        }
        let (word, end) = ident_at(&b, i);
        let rest: String = b[end..b.len().min(end + 2)].iter().collect();
        if word == "mod" {
            let (name, k) = ident_at(&b, end);
            let mut k2 = k;
            while k2 < b.len() && b[k2].is_whitespace() {
                k2 += 1;
            }
            if b.get(k2) == Some(&'{') {
                inline.push((depth, name));
            }
            i = k;
            continue;
        }
        if (word == "crate" || word == "super") && rest == "::" {
            // The absolute path this prefix stands for.
            let mut path: Vec<String> = module.to_vec();
            path.extend(inline.iter().map(|(_, n)| n.clone()));
            let mut j = i;
            if word == "crate" {
                path.clear();
                j = end + 2;
            } else {
                loop {
                    let (w, e) = ident_at(&b, j);
                    let r: String = b[e..b.len().min(e + 2)].iter().collect();
                    if w == "super" && r == "::" {
                        path.pop();
                        j = e + 2;
                    } else {
                        break;
                    }
                }
            }
            if path.is_empty() {
                // At the crate root: the next segment (or each head of a group) is a module.
                while j < b.len() && b[j].is_whitespace() {
                    j += 1;
                }
                let heads = if b.get(j) == Some(&'{') {
                    group_heads(&b, j)
                } else {
                    vec![ident_at(&b, j).0]
                };
                for h in heads.into_iter().filter(|h| !h.is_empty()) {
                    found.push((line_of(i), h));
                }
            } else if path[0] != module[0] {
                found.push((line_of(i), path[0].clone()));
            }
            i = j.max(end);
            continue;
        }
        i = end;
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src/` (`ops/mod.rs` → `["ops"]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Every edge between two top-level modules, with where it is named.
type Edges = BTreeMap<(String, String), Vec<String>>;

fn edges(src: &Path) -> (Edges, BTreeSet<String>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut edges = Edges::new();
    let mut modules = BTreeSet::new();
    for f in files {
        let module = module_path(src, &f);
        if module == ["lib"] {
            continue;
        }
        modules.insert(module[0].clone());
        let text = strip(&std::fs::read_to_string(&f).unwrap());
        for (line, to) in references(&text, &module) {
            if to == module[0] || to == "plugin" {
                // `crate::plugin` is the plugin crate, re-exported.
                continue;
            }
            let at = format!("{}:{line}", f.strip_prefix(src).unwrap().display());
            edges.entry((module[0].clone(), to)).or_default().push(at);
        }
    }
    (edges, modules)
}

/// The problems with `edges`: unknown modules, upward edges, cycles.
fn violations(edges: &Edges, modules: &BTreeSet<String>) -> Vec<String> {
    let mut bad = Vec::new();
    for m in modules {
        if floor_of(m).is_none() {
            bad.push(format!("module `{m}` stands on no floor: add it to FLOORS"));
        }
    }
    for ((from, to), at) in edges {
        match (floor_of(from), floor_of(to)) {
            (Some(f), Some(t)) if t > f => bad.push(format!(
                "`{from}` ({}) imports `{to}` ({}), a higher floor, at {}",
                FLOORS[f].0,
                FLOORS[t].0,
                at.join(", ")
            )),
            (_, None) if !modules.contains(to) => bad.push(format!(
                "`{from}` names `crate::{to}`, no module, at {}",
                at[0]
            )),
            _ => {}
        }
    }
    // Cycles: depth-first search over the module graph.
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    fn visit<'a>(
        m: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
        bad: &mut Vec<String>,
    ) {
        if let Some(at) = stack.iter().position(|&s| s == m) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(m);
            bad.push(format!("import cycle: {}", cycle.join(" -> ")));
            return;
        }
        if !done.insert(m) {
            return;
        }
        stack.push(m);
        for &n in next.get(m).into_iter().flatten() {
            visit(n, next, stack, done, bad);
        }
        stack.pop();
    }
    let mut done = BTreeSet::new();
    for m in modules {
        visit(m, &next, &mut Vec::new(), &mut done, &mut bad);
    }
    bad
}

#[test]
fn core_modules_import_only_their_floor_and_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (edges, modules) = edges(&src);
    let mut picture = String::new();
    for m in &modules {
        let to: Vec<&str> = edges
            .keys()
            .filter(|(f, _)| f == m)
            .map(|(_, t)| t.as_str())
            .collect();
        picture.push_str(&format!("  {m} -> {}\n", to.join(", ")));
    }
    let bad = violations(&edges, &modules);
    assert!(
        bad.is_empty(),
        "the core's layering is broken:\n{}\nmodule -> modules it imports:\n{picture}",
        bad.join("\n")
    );
    println!("module -> modules it imports:\n{picture}");
}

#[test]
fn the_check_sees_groups_supers_and_upward_imports() {
    let module = |s: &str| s.split('/').map(str::to_owned).collect::<Vec<_>>();
    let text = strip(
        "use crate::{device::Device, ops::{a, b}};\n\
         // crate::runtime in a comment\n\
         let s = \"crate::api\";\n\
         fn f() -> crate::tools::X { super::super::record::y(); super::z() }\n\
         mod tests { use super::*; }\n",
    );
    let found: Vec<String> = references(&text, &module("ops/kernel"))
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    assert_eq!(found, ["device", "ops", "tools", "record"]);
    // `super::` of a top-level module's own file leaves it; of an inline module inside it,
    // it does not.
    let found: Vec<String> = references(&text, &module("ops"))
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    assert_eq!(found, ["device", "ops", "tools", "record", "z"]);

    let mut e = Edges::new();
    let modules: BTreeSet<String> = ["device", "ops", "config"].map(String::from).into();
    e.insert(("device".into(), "ops".into()), vec!["device.rs:1".into()]);
    e.insert(("ops".into(), "device".into()), vec!["ops/mod.rs:1".into()]);
    let bad = violations(&e, &modules);
    assert!(bad.iter().any(|b| b.contains("a higher floor")), "{bad:?}");
    assert!(bad.iter().any(|b| b.contains("import cycle")), "{bad:?}");
    e.clear();
    e.insert(
        ("config".into(), "device".into()),
        vec!["config.rs:1".into()],
    );
    assert!(!violations(&e, &modules).is_empty());
    e.clear();
    e.insert(("ops".into(), "config".into()), vec!["ops/mod.rs:1".into()]);
    assert!(violations(&e, &modules).is_empty());
}
