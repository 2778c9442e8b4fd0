//! `omptarget install --prefix DIR`: lays out the runtime as a library of its field is laid out,
//! for use with one's own programs through `LD_LIBRARY_PATH` or an environment module:
//!
//! ```text
//! DIR/lib/libomptarget.so.19.1            the runtime (what clang 19 programs NEED)
//! DIR/lib/libomptarget.so.22.1            a link to it (clang 22): one file, so a process
//!                                          needing both names loads one runtime
//! DIR/bin/omptarget                       this command
//! DIR/share/doc/omptarget-rs/             README.md and docs/
//! DIR/share/modulefiles/omptarget-rs/V.lua  an Lmod modulefile
//! DIR/share/omptarget-rs/install-manifest.txt  what the installation wrote (for upgrades)
//! ```
//!
//! Re-running it over the same prefix upgrades in place: each file is written beside its
//! destination and renamed over it (a running program keeps the file it mapped), and files a
//! former installation listed in its manifest that this one does not write are removed. A
//! prefix whose `lib` the system's loader searches (`/usr`, `/usr/local`, any folder of
//! `/etc/ld.so.conf`), or one holding a `libomptarget.so.*` we did not install, is refused
//! without `--force`: our library there would replace LLVM's for every program.

use std::path::{Component, Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/docs.rs"));

/// The library's two names: the file, and the link to it.
pub const LIB_NAME: &str = "libomptarget.so.19.1";
pub const LIB_LINK: &str = "libomptarget.so.22.1";
const MANIFEST: &str = "share/omptarget-rs/install-manifest.txt";
const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(clap::Args, Clone, Debug)]
pub struct Options {
    /// Where to install: DIR/lib, DIR/bin, DIR/share.
    #[arg(long, value_name = "DIR")]
    pub prefix: PathBuf,
    /// Install even where our library would shadow a system one (a prefix whose lib/ the
    /// system's loader searches, or a libomptarget we did not install).
    #[arg(long)]
    pub force: bool,
    /// The runtime library to install (default: the one next to this command).
    #[arg(long, value_name = "FILE")]
    pub lib: Option<PathBuf>,
}

/// The folders the dynamic loader searches without `LD_LIBRARY_PATH`: glibc's trusted folders
/// and those `/etc/ld.so.conf` names (with its `include` globs), as written.
pub fn loader_folders(conf: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = [
        "/lib",
        "/usr/lib",
        "/lib64",
        "/usr/lib64",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    read_conf(conf, &mut dirs, 0);
    dirs
}

fn read_conf(conf: &Path, dirs: &mut Vec<PathBuf>, depth: u32) {
    let Ok(text) = std::fs::read_to_string(conf) else {
        return;
    };
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(pattern) = line.strip_prefix("include") {
            let pattern = pattern.trim();
            if depth < 8 {
                for file in glob(pattern, conf.parent().unwrap_or(Path::new("/"))) {
                    read_conf(&file, dirs, depth + 1);
                }
            }
        } else if line.starts_with('/') {
            dirs.push(PathBuf::from(line));
        }
    }
}

/// The files a `DIR/*.conf`-like pattern names (a `*` in the last component only, as
/// ld.so.conf's includes use it), sorted.
fn glob(pattern: &str, base: &Path) -> Vec<PathBuf> {
    let p = base.join(pattern);
    let (Some(dir), Some(name)) = (p.parent(), p.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    let Some((head, tail)) = name.split_once('*') else {
        return vec![p.clone()];
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name().to_str().is_some_and(|n| {
                n.len() >= head.len() + tail.len() && n.starts_with(head) && n.ends_with(tail)
            })
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// `path` with symbolic links resolved as far as it exists, and `.`/`..` folded in the rest.
pub fn resolve(path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = existing.canonicalize() {
            let mut out = c;
            for part in rest.iter().rev() {
                match part {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::Normal(n) => out.push(n),
                    _ => {}
                }
            }
            return out;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            _ => return path,
        }
    }
}

/// Why installing into `prefix` would shadow a system library, or `None`. `loader` is what
/// [`loader_folders`] returns.
pub fn shadowing(prefix: &Path, loader: &[PathBuf]) -> Option<String> {
    let prefix = resolve(prefix);
    let lib = prefix.join("lib");
    if ["/", "/usr", "/usr/local"]
        .iter()
        .any(|s| resolve(Path::new(s)) == prefix)
    {
        return Some(format!(
            "{} is a system prefix: {} would be found by every program, in place of LLVM's runtime",
            prefix.display(),
            lib.join(LIB_NAME).display()
        ));
    }
    if let Some(d) = loader.iter().find(|d| resolve(d) == lib) {
        return Some(format!(
            "{} is searched by the system's loader ({}): every program would load our {LIB_NAME} in place of LLVM's",
            lib.display(),
            d.display()
        ));
    }
    None
}

/// The paths (relative to the prefix) a former installation wrote, from its manifest.
fn former(prefix: &Path) -> Vec<String> {
    std::fs::read_to_string(prefix.join(MANIFEST))
        .map(|t| t.lines().map(String::from).collect())
        .unwrap_or_default()
}

/// The runtime library to install: `--lib`, else the one beside this command.
fn find_library(o: &Options, exe_dir: &Path) -> Result<PathBuf, String> {
    if let Some(l) = &o.lib {
        return if l.is_file() {
            Ok(l.clone())
        } else {
            Err(format!("--lib {}: no such file", l.display()))
        };
    }
    crate::run::candidates(exe_dir)
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "no libomptarget.so next to {}: build it beside this command (cargo build --release -p omptarget-abi -p omptarget-cli, which leaves both in target/release), or pass --lib FILE",
                exe_dir.display()
            )
        })
}

/// Whether `a` and `b` are the same file (same device and inode).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Writes `bytes` to `dest` by way of a file beside it renamed over it, with `mode`.
fn write_file(dest: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let dir = dest.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let name = dest.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.new-{}", std::process::id()));
    let result = std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode)))
        .and_then(|()| std::fs::rename(&tmp, dest));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| format!("{}: {e}", dest.display()))
}

/// Copies `src` to `dest` (as [`write_file`]) unless they are already the same file.
fn copy_file(src: &Path, dest: &Path, mode: u32) -> Result<(), String> {
    if same_file(src, dest) {
        return Ok(());
    }
    let bytes = std::fs::read(src).map_err(|e| format!("{}: {e}", src.display()))?;
    write_file(dest, &bytes, mode)
}

/// Makes `link` a symbolic link to `target` (a link beside it renamed over it).
fn symlink(target: &str, link: &Path) -> Result<(), String> {
    let dir = link.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".link.new-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)
        .and_then(|()| std::fs::rename(&tmp, link))
        .map_err(|e| format!("{}: {e}", link.display()))
}

/// The Lmod modulefile for an installation at `prefix`.
pub fn modulefile(prefix: &Path) -> String {
    let p = prefix
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    format!(
        r#"-- omptarget-rs {VERSION}: Lmod modulefile written by `omptarget install`.
help([[
omptarget-rs {VERSION}: an OpenMP offloading runtime, a drop-in replacement for LLVM's
libomptarget.so.19.1 (clang 19 programs) and libomptarget.so.22.1 (clang 22 programs).
Loading this module puts it first in LD_LIBRARY_PATH, so OpenMP offload programs run on it,
and `omptarget` (info, run, doctor) in PATH. `omptarget doctor PROGRAM` says which runtime
and devices a program would use, and why not the ones expected.
Documentation: {p}/share/doc/omptarget-rs/README.md
]])
whatis("Name: omptarget-rs")
whatis("Version: {VERSION}")
whatis("Description: OpenMP offloading runtime (libomptarget.so.19.1 / .22.1) in Rust")
family("libomptarget")

local prefix = "{p}"
prepend_path("LD_LIBRARY_PATH", pathJoin(prefix, "lib"))
prepend_path("PATH", pathJoin(prefix, "bin"))
"#
    )
}

/// Installs into `o.prefix`; returns what to tell the user.
pub fn install(o: &Options) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("where am I: {e}"))?;
    let exe_dir = exe.parent().unwrap_or(Path::new("."));
    let lib = find_library(o, exe_dir)?;
    if !std::fs::read(&lib).is_ok_and(|b| b.starts_with(b"\x7fELF")) {
        return Err(format!("{}: not an ELF shared library", lib.display()));
    }
    let prefix = resolve(&o.prefix);
    let former = former(&prefix);
    if !o.force {
        if let Some(why) = shadowing(&prefix, &loader_folders(Path::new("/etc/ld.so.conf"))) {
            return Err(format!(
                "refusing to install: {why}. Choose another --prefix (e.g. $HOME/.local/omptarget-rs or /opt/omptarget-rs), or pass --force"
            ));
        }
        for name in [LIB_NAME, LIB_LINK] {
            let rel = format!("lib/{name}");
            let path = prefix.join(&rel);
            if path.symlink_metadata().is_ok() && !former.contains(&rel) {
                return Err(format!(
                    "refusing to install: {} exists and was not installed by omptarget install (LLVM's runtime?); remove it, choose another --prefix, or pass --force",
                    path.display()
                ));
            }
        }
    }
    let mut written: Vec<String> = Vec::new();
    let lib_dest = prefix.join("lib").join(LIB_NAME);
    copy_file(&lib, &lib_dest, 0o755)?;
    written.push(format!("lib/{LIB_NAME}"));
    symlink(LIB_NAME, &prefix.join("lib").join(LIB_LINK))?;
    written.push(format!("lib/{LIB_LINK}"));
    copy_file(&exe, &prefix.join("bin/omptarget"), 0o755)?;
    written.push("bin/omptarget".into());
    for (rel, bytes) in DOCS {
        let rel = format!("share/doc/omptarget-rs/{rel}");
        write_file(&prefix.join(&rel), bytes, 0o644)?;
        written.push(rel);
    }
    let module_rel = format!("share/modulefiles/omptarget-rs/{VERSION}.lua");
    write_file(
        &prefix.join(&module_rel),
        modulefile(&prefix).as_bytes(),
        0o644,
    )?;
    written.push(module_rel.clone());
    // What an earlier installation wrote and this one does not (an older version's
    // modulefile, a document since removed) goes.
    let mut removed = 0;
    for rel in former.iter().filter(|r| !written.contains(r)) {
        let safe = Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if safe && std::fs::remove_file(prefix.join(rel)).is_ok() {
            removed += 1;
        }
    }
    let mut manifest = written.join("\n");
    manifest.push('\n');
    write_file(&prefix.join(MANIFEST), manifest.as_bytes(), 0o644)?;
    let p = prefix.display();
    let mut msg = format!(
        "{} omptarget-rs {VERSION} in {p}:\n  {p}/lib/{LIB_NAME} (and {LIB_LINK}, a link to it)\n  {p}/bin/omptarget\n  {p}/share/doc/omptarget-rs ({} files)\n  {p}/{module_rel}\n",
        if former.is_empty() {
            "installed"
        } else {
            "upgraded"
        },
        DOCS.len()
    );
    if removed > 0 {
        msg.push_str(&format!(
            "  ({removed} files of the former installation removed)\n"
        ));
    }
    msg.push_str(&format!(
        "Use it:   export LD_LIBRARY_PATH={p}/lib:$LD_LIBRARY_PATH   (then run OpenMP offload programs as usual)\n  or:     module use {p}/share/modulefiles && module load omptarget-rs\nCheck it: {p}/bin/omptarget doctor ./your-program\n"
    ));
    Ok(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("omptarget-install-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn system_prefixes_and_loader_folders_are_refused() {
        let loader = vec![PathBuf::from("/usr/lib"), PathBuf::from("/opt/site/lib")];
        assert!(shadowing(Path::new("/"), &loader).is_some());
        assert!(shadowing(Path::new("/usr"), &loader).is_some());
        assert!(shadowing(Path::new("/usr/local"), &loader).is_some());
        assert!(shadowing(Path::new("/usr/local/"), &loader).is_some());
        assert!(shadowing(Path::new("/opt/site"), &loader).is_some());
        assert!(shadowing(Path::new("/opt/site/../site"), &loader).is_some());
        assert!(shadowing(Path::new("/opt/omptarget-rs"), &loader).is_none());
        assert!(shadowing(Path::new("/tmp/x"), &loader).is_none());
    }

    #[test]
    fn ld_so_conf_includes_are_followed() {
        let d = scratch("conf");
        std::fs::create_dir_all(d.join("ld.so.conf.d")).unwrap();
        std::fs::write(
            d.join("ld.so.conf"),
            "include ld.so.conf.d/*.conf\n/a/lib # c\n",
        )
        .unwrap();
        std::fs::write(d.join("ld.so.conf.d/x.conf"), "# comment\n/b/lib\n").unwrap();
        std::fs::write(d.join("ld.so.conf.d/y.txt"), "/c/lib\n").unwrap();
        let dirs = loader_folders(&d.join("ld.so.conf"));
        assert!(dirs.contains(&PathBuf::from("/a/lib")));
        assert!(dirs.contains(&PathBuf::from("/b/lib")));
        assert!(!dirs.contains(&PathBuf::from("/c/lib")));
        assert!(dirs.contains(&PathBuf::from("/usr/lib")));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn resolve_folds_what_does_not_exist_yet() {
        let d = scratch("resolve").canonicalize().unwrap();
        assert_eq!(resolve(&d.join("new/../other/x")), d.join("other/x"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_modulefile_prepends_both_paths() {
        let m = modulefile(Path::new("/opt/o"));
        assert!(m.contains("local prefix = \"/opt/o\""));
        assert!(m.contains("prepend_path(\"LD_LIBRARY_PATH\", pathJoin(prefix, \"lib\"))"));
        assert!(m.contains("prepend_path(\"PATH\", pathJoin(prefix, \"bin\"))"));
    }

    #[test]
    fn the_docs_are_embedded() {
        assert!(DOCS.iter().any(|(n, b)| *n == "README.md" && !b.is_empty()));
        assert!(DOCS.iter().any(|(n, _)| *n == "docs/ARCHITECTURE.md"));
    }
}
