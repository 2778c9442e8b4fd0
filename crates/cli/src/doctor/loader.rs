//! Which files the dynamic loader would give a program for its libraries, found the way the
//! loader itself finds them: for a program, the program's own interpreter asked to list them
//! (`LD_TRACE_LOADED_OBJECTS=1 ld.so PROGRAM`, what `ldd` does: the loader maps the libraries,
//! prints where it found each, or `not found`, and stops before any of the program's code);
//! without one, `LD_LIBRARY_PATH`'s folders in order, then the loader's cache (`ldconfig -p`).
//! Then: which of them is a `libomptarget`, and whose.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One library the loader resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub name: String,
    /// `None`: not found.
    pub path: Option<PathBuf>,
}

/// Parses the loader's trace (`ldd`'s output).
pub fn parse_list(text: &str) -> Vec<Resolved> {
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once(" => ")?;
            let rest = rest.trim();
            let path = if rest.starts_with("not found") {
                None
            } else {
                Some(PathBuf::from(
                    rest.split(" (0x").next().unwrap_or(rest).trim(),
                ))
            };
            Some(Resolved {
                name: name.trim().to_owned(),
                path,
            })
        })
        .collect()
}

/// The libraries `program` would load (all of them, its libraries' libraries too), by its
/// interpreter.
pub fn list(program: &Path, interpreter: Option<&str>) -> Result<Vec<Resolved>, String> {
    let interp = interpreter.unwrap_or("/lib64/ld-linux-x86-64.so.2");
    let out = Command::new(interp)
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .arg(program)
        .output()
        .map_err(|e| format!("cannot run the loader {interp}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let list = parse_list(&text);
    if list.is_empty() && !out.status.success() {
        return Err(format!(
            "the loader {interp} cannot list {}'s libraries: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(list)
}

/// Where the loader would find `name` for a program without RPATH/RUNPATH (as clang's are):
/// `LD_LIBRARY_PATH` (`ld_library_path`) first, then the loader's cache (`cache`, the output of
/// `ldconfig -p`).
pub fn search(name: &str, ld_library_path: Option<&str>, cache: &str) -> Option<PathBuf> {
    for dir in ld_library_path.unwrap_or("").split([':', ';']) {
        // An empty entry is the working directory, as for the loader.
        let p = Path::new(if dir.is_empty() { "." } else { dir }).join(name);
        if p.is_file() {
            return Some(p);
        }
    }
    cache.lines().find_map(|l| {
        let (left, path) = l.trim().split_once(" => ")?;
        (left.split_whitespace().next() == Some(name) && left.contains("x86-64"))
            .then(|| PathBuf::from(path.trim()))
    })
}

/// The loader's cache, as `ldconfig -p` prints it (empty when it cannot be read).
pub fn cache() -> String {
    Command::new("ldconfig")
        .arg("-p")
        .output()
        .or_else(|_| Command::new("/sbin/ldconfig").arg("-p").output())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// Whose a `libomptarget` file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The library this doctor belongs to (the same file).
    ThisInstallation,
    /// omptarget-rs, another copy or build.
    OtherOmptargetRs,
    /// Not omptarget-rs (LLVM's runtime, as a rule).
    Other,
}

/// A string only our library holds (the prefix of its `LIBOMPTARGET_DEBUG` lines).
const OUR_MARK: &[u8] = b"omptarget-rs debug:";

/// Whose `path` is; `ours` is the library beside this doctor, if any.
pub fn owner(path: &Path, ours: Option<&Path>) -> Owner {
    if ours.is_some_and(|o| same_file(o, path)) {
        return Owner::ThisInstallation;
    }
    match std::fs::read(path) {
        Ok(bytes) if bytes.windows(OUR_MARK.len()).any(|w| w == OUR_MARK) => {
            Owner::OtherOmptargetRs
        }
        _ => Owner::Other,
    }
}

/// Whether `a` and `b` are one file (device and inode: a link and its target are).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// The distinct files among the resolved `libomptarget.so.*` (a process loads each file
/// once, whatever names lead to it), with the names that lead to each.
pub fn runtimes(list: &[Resolved]) -> Vec<(PathBuf, Vec<String>)> {
    let mut out: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for r in list
        .iter()
        .filter(|r| r.name.starts_with("libomptarget.so"))
    {
        let Some(p) = &r.path else { continue };
        match out.iter_mut().find(|(q, _)| same_file(p, q)) {
            Some((_, names)) => {
                if !names.contains(&r.name) {
                    names.push(r.name.clone())
                }
            }
            None => out.push((p.clone(), vec![r.name.clone()])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_lists_are_parsed() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibomp.so.5 => /usr/lib/x86_64-linux-gnu/libomp.so.5 (0x00007f10)\n\tlibomptarget.so.19.1 => not found\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f20)\n";
        assert_eq!(
            parse_list(text),
            vec![
                Resolved {
                    name: "libomp.so.5".into(),
                    path: Some("/usr/lib/x86_64-linux-gnu/libomp.so.5".into())
                },
                Resolved {
                    name: "libomptarget.so.19.1".into(),
                    path: None
                },
            ]
        );
    }

    #[test]
    fn search_takes_ld_library_path_first_then_the_cache() {
        let d =
            std::env::temp_dir().join(format!("omptarget-doctor-search-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("libx.so.1"), b"").unwrap();
        let cache = "2 libs found in cache `/etc/ld.so.cache'\n\tlibx.so.1 (libc6,x86-64) => /usr/lib/libx.so.1\n\tliby.so.2 (libc6,x86-64) => /usr/lib/liby.so.2\n";
        let path = format!("/nonexistent:{}", d.display());
        assert_eq!(
            search("libx.so.1", Some(&path), cache),
            Some(d.join("libx.so.1"))
        );
        assert_eq!(
            search("libx.so.1", None, cache),
            Some("/usr/lib/libx.so.1".into())
        );
        assert_eq!(
            search("liby.so.2", Some(&path), cache),
            Some("/usr/lib/liby.so.2".into())
        );
        assert_eq!(search("libz.so", Some(&path), cache), None);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn one_file_under_two_names_is_one_runtime() {
        let d = std::env::temp_dir().join(format!("omptarget-doctor-rt-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("a.so"), b"x").unwrap();
        std::fs::write(d.join("b.so"), b"x").unwrap();
        let _ = std::fs::remove_file(d.join("link.so"));
        std::os::unix::fs::symlink("a.so", d.join("link.so")).unwrap();
        let r = |name: &str, file: &str| Resolved {
            name: name.into(),
            path: Some(d.join(file)),
        };
        assert_eq!(
            runtimes(&[
                r("libomptarget.so.19.1", "a.so"),
                r("libomptarget.so.22.1", "link.so")
            ])
            .len(),
            1
        );
        assert_eq!(
            runtimes(&[
                r("libomptarget.so.19.1", "a.so"),
                r("libomptarget.so.22.1", "b.so")
            ])
            .len(),
            2
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
