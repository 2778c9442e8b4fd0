//! The C/C++ conformance suite: every program under `tests/c/` is compiled for the x86_64 host
//! device by each compiler and run under our library and under that compiler's own LLVM runtime
//! (the oracle):
//! - clang-19, run under our `libomptarget.so.19.1` and LLVM 19's (from libomp-19-dev);
//! - clang-22, run under our library named `libomptarget.so.22.1` (the same file) and LLVM 22's
//!   (unpacked into `build/llvm22` by `scripts/llvm22.sh`).
//!
//! Exit status and stdout must agree; where a program carries `// STDERR`, stderr must agree
//! too after addresses are normalised.
//!
//! Each run records the dynamic loader's trace (`LD_DEBUG=libs`) and the harness checks that
//! the intended library was the one initialised, so a run can never silently use the other.
//!
//! Directives (comment lines at the top of a program):
//! - `// ENV: A=1 B=2`        environment for both runs
//! - `// STDERR`              compare stderr too
//! - `// SHARED-LIB: x_lib.c` build `tests/c/x_lib.c` as a shared library and link it (a
//!   source named by such a directive is not a test itself); `// SHARED-LIB: x_lib.c clang19`
//!   builds the library with that compiler whatever the program's is
//! - `// ARGS: ...`           command-line arguments
//! - `// HOST-ONLY: why`      run here, left out of GPU builds by gpu/build.sh (what the program
//!   compares belongs to the host device, such as its allocator's address reuse)
//! - `// CFLAGS: -g`          extra compiler flags (after the harness's own `-g0`; sources are
//!   compiled by absolute path, so `-g` puts the full path into clang's location strings)
//! - `// ONLY: clang22`       the program is built and run for that compiler only (it uses
//!   what the other lacks); several names may follow
//! - `// DIVERGENCE: why`     the LLVM runtime contradicts the specification here: our output
//!   must equal `NAME.expected` (the specified result) and LLVM's must differ from it
//!   (docs/DIVERGENCES.md). `// DIVERGENCE(clang19): why` limits it to one compiler's oracle;
//!   `NAME.clang22.expected`, when present, is that compiler's expected output;
//!   `// DIVERGENCE(gpu): why` to the GPU builds of gpu/build.sh (here both runtimes must agree)
//! - `// EXTENSION: why`      a feature LLVM lacks (OMPT device tracing): checked as a
//!   divergence (ours prints `NAME.expected`, LLVM does not)
//! - `// TOOL: x_tool.c`      build `tests/c/x_tool.c` as an OMPT tool library and load it in both
//!   runs through `OMP_TOOL_LIBRARIES` (a source named by such a directive is not a test itself)
//! - `// ORACLE: llvm22 (why)` run the LLVM side under LLVM 22's runtime installed under both
//!   names (`build/llvm22/both`), whatever the compiler: for a program and a library built by
//!   different compilers, which need both names in one process. LLVM 22's runtime reads clang
//!   19's images too; LLVM 19's cannot read clang 22's.
//! - `// STATUS: exit 1`      the exit status the program must end with (default `exit 0`; an
//!   abort is `signal 6`): under both runtimes, or with DIVERGENCE under ours, for bad input
//!   that LLVM crashes on and we refuse with a fatal error. Two runs that agree on a status
//!   the program does not declare fail: a program failing under both checks nothing.
//!   `// STATUS(clang19): signal 6` for one compiler's builds; `// STATUS(gpu): ...` for the
//!   GPU builds of gpu/build.sh, where the device count differs (one GPU instead of the host
//!   plugin's four devices); this harness ignores it
//! - `// LATE-COPIES: why`    left out of the second pass, in which clang-19's builds of the
//!   programs with `nowait` constructs or asynchronous routines run again under ours with
//!   `OMPTARGET_RS_HOST_LATE_COPIES=3` (the host device lands copies back late and keeps queues
//!   running for 3 polls, as a GPU does): why the output may differ
//! - `// OURS-STDERR: text`   our stderr (addresses normalised) must contain this line: the
//!   message that says why, where LLVM prints nothing useful (repeatable); a text ending in
//!   `...` asks for a line that starts with what comes before (the rest names the device);
//!   `// OURS-STDERR(clang19): text` for one compiler's runs only

mod common;

use common::repo_root;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// A compiler and the LLVM runtime that shipped with it.
#[derive(Debug)]
struct Oracle {
    /// `clang19`, `clang22`: the name directives use.
    name: &'static str,
    cc: &'static str,
    cxx: &'static str,
    /// The library name the compiler's programs need.
    soname: &'static str,
    /// Extra compile flags (LLVM 22's headers and link-time library folder).
    flags: Vec<String>,
    /// The folder holding LLVM's runtime under `soname`.
    llvm_lib: PathBuf,
}

/// LLVM 22's runtime under both names (`ORACLE: llvm22`), made by scripts/llvm22.sh.
fn llvm22_both(root: &Path) -> PathBuf {
    root.join("build/llvm22/both")
}

fn oracles(root: &Path) -> Vec<Oracle> {
    let llvm22 = root.join("build/llvm22");
    vec![
        Oracle {
            name: "clang19",
            cc: "clang-19",
            cxx: "clang++-19",
            soname: "libomptarget.so.19.1",
            flags: Vec::new(),
            llvm_lib: PathBuf::from("/usr/lib/llvm-19/lib"),
        },
        Oracle {
            name: "clang22",
            cc: "clang-22",
            cxx: "clang++-22",
            soname: "libomptarget.so.22.1",
            flags: vec![
                format!("-I{}", llvm22.join("include").display()),
                format!("-L{}", llvm22.join("lib").display()),
            ],
            llvm_lib: llvm22.join("lib"),
        },
    ]
}

/// The folder holding our freshly built library, named as programs look for it (both
/// LLVM 19's and 22's names).
fn our_lib_dir() -> PathBuf {
    // CONFORMANCE_OURS_LIB: another build of ours (scripts/asan.sh: the AddressSanitizer one).
    let lib = std::env::var_os("CONFORMANCE_OURS_LIB")
        .map(PathBuf::from)
        .unwrap_or_else(common::our_lib);
    assert!(lib.exists(), "{} is missing", lib.display());
    common::link_dir(
        &lib,
        "conformance-lib",
        &["libomptarget.so.19.1", "libomptarget.so.22.1"],
    )
}

#[derive(Default, Debug)]
struct Directives {
    env: Vec<(String, String)>,
    stderr: bool,
    shared_lib: Option<String>,
    /// The compiler the shared library must be built with, if not the program's.
    shared_lib_compiler: Option<String>,
    args: Vec<String>,
    cflags: Vec<String>,
    /// (compiler it is limited to, why)
    divergence: Option<(Option<String>, String)>,
    only: Vec<String>,
    /// Run the LLVM side under LLVM 22's runtime serving both names.
    llvm22_for_both: bool,
    tool: Option<String>,
    status: Option<String>,
    /// `// STATUS(clang19): ...`: one compiler's status, before `status`.
    status_for: Vec<(String, String)>,
    /// (compiler it is limited to, line)
    ours_stderr: Vec<(Option<String>, String)>,
    /// `// LATE-COPIES: why`: not run in the late-copies pass.
    late_copies_skip: bool,
}

impl Directives {
    /// The exit status the program declares for one compiler's build (default `exit 0`).
    fn status_for(&self, oracle: &str) -> &str {
        self.status_for
            .iter()
            .find(|(o, _)| o == oracle)
            .map(|(_, s)| s.as_str())
            .or(self.status.as_deref())
            .unwrap_or("exit 0")
    }

    fn divergence_for(&self, oracle: &str) -> Option<&str> {
        match &self.divergence {
            Some((None, why)) => Some(why),
            Some((Some(o), why)) if o == oracle => Some(why),
            _ => None,
        }
    }
}

fn directives(src: &str) -> Directives {
    let mut d = Directives::default();
    for line in src
        .lines()
        .take_while(|l| l.starts_with("//") || l.trim().is_empty())
    {
        let line = line.trim_start_matches("//").trim();
        if let Some(rest) = line.strip_prefix("ENV:") {
            for kv in rest.split_whitespace() {
                if let Some((k, v)) = kv.split_once('=') {
                    d.env.push((k.into(), v.into()));
                }
            }
        } else if line == "STDERR" {
            d.stderr = true;
        } else if let Some(rest) = line.strip_prefix("SHARED-LIB:") {
            let mut words = rest.split_whitespace();
            d.shared_lib = words.next().map(String::from);
            d.shared_lib_compiler = words.next().map(String::from);
        } else if let Some(rest) = line.strip_prefix("ARGS:") {
            d.args = rest.split_whitespace().map(String::from).collect();
        } else if let Some(rest) = line.strip_prefix("CFLAGS:") {
            d.cflags = rest.split_whitespace().map(String::from).collect();
        } else if let Some(rest) = line.strip_prefix("DIVERGENCE:") {
            d.divergence = Some((None, rest.trim().into()));
        } else if let Some(rest) = line.strip_prefix("DIVERGENCE(")
            && let Some((oracle, why)) = rest.split_once("):")
        {
            d.divergence = Some((Some(oracle.trim().into()), why.trim().into()));
        } else if let Some(rest) = line.strip_prefix("ONLY:") {
            // Compiler names, then an optional parenthesised reason.
            d.only = rest
                .split_whitespace()
                .take_while(|w| !w.starts_with('('))
                .map(String::from)
                .collect();
        } else if let Some(rest) = line.strip_prefix("STATUS:") {
            d.status = Some(rest.trim().into());
        } else if let Some(rest) = line.strip_prefix("STATUS(")
            && let Some((oracle, status)) = rest.split_once("):")
        {
            d.status_for
                .push((oracle.trim().into(), status.trim().into()));
        } else if let Some(rest) = line.strip_prefix("OURS-STDERR:") {
            d.ours_stderr.push((None, rest.trim().into()));
        } else if let Some(rest) = line.strip_prefix("OURS-STDERR(")
            && let Some((oracle, text)) = rest.split_once("):")
        {
            d.ours_stderr
                .push((Some(oracle.trim().into()), text.trim().into()));
        } else if let Some(rest) = line.strip_prefix("EXTENSION:") {
            d.divergence = Some((None, format!("an extension LLVM lacks: {}", rest.trim())));
        } else if let Some(rest) = line.strip_prefix("TOOL:") {
            d.tool = Some(rest.trim().into());
        } else if line.starts_with("LATE-COPIES:") {
            d.late_copies_skip = true;
        } else if let Some(rest) = line.strip_prefix("ORACLE:") {
            d.llvm22_for_both = rest.split_whitespace().next() == Some("llvm22");
        }
    }
    d
}

fn clang_for(oracle: &Oracle, path: &Path) -> &'static str {
    if path.extension().is_some_and(|e| e == "cpp") {
        oracle.cxx
    } else {
        oracle.cc
    }
}

fn compile(oracle: &Oracle, src: &Path, out: &Path, extra: &[String]) -> Result<(), String> {
    let cc = clang_for(oracle, src);
    let output = Command::new(cc)
        .args([
            "-fopenmp",
            "-fopenmp-targets=x86_64-pc-linux-gnu",
            "-O1",
            "-g0",
        ])
        .args(&oracle.flags)
        .arg(src)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .map_err(|e| format!("cannot run {cc}: {e} (scripts/deps.sh installs it)"))?;
    if !output.status.success() {
        return Err(format!(
            "compiling {} failed:\n{}",
            src.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

#[derive(Debug, PartialEq)]
struct Outcome {
    status: String,
    stdout: String,
    stderr: String,
}

/// Replaces every hex address with `0xADDR`.
fn normalise(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'0' && i + 1 < b.len() && b[i + 1] == b'x' {
            let mut j = i + 2;
            while j < b.len() && b[j].is_ascii_hexdigit() {
                j += 1;
            }
            if j > i + 2 {
                out.push_str("0xADDR");
                i = j;
                continue;
            }
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

fn run(
    exe: &Path,
    lib_dir: &Path,
    ours: bool,
    d: &Directives,
    trace: &Path,
) -> Result<Outcome, String> {
    let mut cmd = Command::new(exe);
    cmd.args(&d.args)
        .env("LD_LIBRARY_PATH", lib_dir)
        .env("LD_DEBUG", "libs")
        .env("LD_DEBUG_OUTPUT", trace)
        .env_remove("LIBOMPTARGET_INFO")
        .env_remove("OMP_TARGET_OFFLOAD");
    for (k, v) in &d.env {
        cmd.env(k, v);
    }
    // CONFORMANCE_OURS_PRELOAD: preloaded into runs under ours only (the sanitizer runtime an
    // instrumented build of ours needs; LLVM's runs stay as they are).
    if let Some(preload) = std::env::var_os("CONFORMANCE_OURS_PRELOAD")
        && ours
    {
        cmd.env("LD_PRELOAD", preload);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let status = match (
        out.status.code(),
        std::os::unix::process::ExitStatusExt::signal(&out.status),
    ) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "unknown".into(),
    };
    Ok(Outcome {
        status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: normalise(&String::from_utf8_lossy(&out.stderr)),
    })
}

/// Which libomptarget the dynamic loader initialised, from the `LD_DEBUG` trace files.
/// A process that needs both names initialises one file once, under the first name.
fn loaded_library(trace_prefix: &Path) -> Option<PathBuf> {
    let dir = trace_prefix.parent()?;
    let stem = trace_prefix.file_name()?.to_str()?.to_owned();
    let mut found = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(&format!("{stem}.")) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            if let Some(p) = line.split("calling init: ").nth(1)
                && (p.trim().ends_with("libomptarget.so.19.1")
                    || p.trim().ends_with("libomptarget.so.22.1"))
            {
                found = Some(PathBuf::from(p.trim()));
            }
        }
        let _ = std::fs::remove_file(entry.path());
    }
    found
}

/// Builds an OMPT tool library (plain C, no offloading) as `build/lib<stem>.so`.
fn compile_tool(src: &Path, out: &Path) -> Result<(), String> {
    let output = Command::new("clang-19")
        .args(["-shared", "-fPIC", "-O1", "-g0", "-Wall", "-Werror"])
        .arg(src)
        .arg("-o")
        .arg(out)
        .output()
        .map_err(|e| format!("cannot run clang-19: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "compiling the tool {} failed:\n{}",
            src.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

/// One program of one compiler under both runtimes; `late`: the late-copies pass, which runs
/// what the first pass built, with `OMPTARGET_RS_HOST_LATE_COPIES=3` under ours.
fn check_program(
    oracle: &Oracle,
    src: &Path,
    build: &Path,
    ours: &Path,
    late: bool,
) -> Result<(), String> {
    let text = std::fs::read_to_string(src).map_err(|e| e.to_string())?;
    let mut d = directives(&text);
    let stem = src.file_stem().unwrap().to_string_lossy().into_owned();
    let exe = build.join(&stem);
    if let Some(tool) = &d.tool {
        // One library per program (programs are checked in parallel).
        let so = build.join(format!("lib{stem}_tool.so"));
        if !late {
            compile_tool(&src.parent().unwrap().join(tool), &so)?;
        }
        d.env
            .push(("OMP_TOOL_LIBRARIES".into(), so.display().to_string()));
    }
    let mut extra = Vec::new();
    if let Some(lib) = &d.shared_lib {
        let lib_src = src.parent().unwrap().join(lib);
        let lib_name = Path::new(lib)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let so = build.join(format!("lib{lib_name}.so"));
        let root = repo_root();
        if late {
            // Built by the first pass.
        } else {
            let lib_oracle = match &d.shared_lib_compiler {
                Some(name) => oracles(&root)
                    .into_iter()
                    .find(|o| o.name == name)
                    .ok_or_else(|| format!("{stem}: unknown compiler {name} in SHARED-LIB"))?,
                None => oracles(&root)
                    .into_iter()
                    .find(|o| o.name == oracle.name)
                    .expect("the oracle is one of the list"),
            };
            compile(
                &lib_oracle,
                &lib_src,
                &so,
                &["-shared".into(), "-fPIC".into()],
            )?;
        }
        extra.extend([
            format!("-L{}", build.display()),
            format!("-l{lib_name}"),
            format!("-Wl,-rpath,{}", build.display()),
        ]);
    }
    extra.extend(d.cflags.iter().cloned());
    if !late {
        compile(oracle, src, &exe, &extra)?;
    }

    let trace_ours = build.join(format!("{stem}.ours.trace"));
    if late {
        d.env
            .push(("OMPTARGET_RS_HOST_LATE_COPIES".into(), "3".into()));
    }
    let ours_out = run(&exe, ours, true, &d, &trace_ours)?;
    if late {
        d.env.pop();
    }
    let ours_lib = loaded_library(&trace_ours);
    match &ours_lib {
        Some(p) if p.starts_with(ours) => {}
        other => {
            return Err(format!(
                "{stem}: our run loaded {other:?}, not {}",
                ours.display()
            ));
        }
    }
    let describe = |o: &Outcome| {
        format!(
            "  status: {}\n  stdout:\n{}\n  stderr:\n{}",
            o.status, o.stdout, o.stderr
        )
    };
    let expected = || {
        let specific = src.with_extension(format!("{}.expected", oracle.name));
        let path = if specific.exists() {
            specific
        } else {
            src.with_extension("expected")
        };
        std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{stem}: the expected output {} is missing: {e}",
                path.display()
            )
        })
    };
    let llvm_dir = if d.llvm22_for_both {
        llvm22_both(&repo_root())
    } else {
        oracle.llvm_lib.clone()
    };
    let trace_llvm = build.join(format!("{stem}.llvm.trace"));
    let llvm_out = run(&exe, &llvm_dir, false, &d, &trace_llvm)?;
    let llvm_lib = loaded_library(&trace_llvm);
    match &llvm_lib {
        Some(p) if p.starts_with(&llvm_dir) => {}
        other => {
            return Err(format!(
                "{stem}: the LLVM run loaded {other:?}, not {}",
                llvm_dir.display()
            ));
        }
    }

    for (only, line) in &d.ours_stderr {
        if only.as_ref().is_some_and(|o| o != oracle.name) {
            continue;
        }
        let matches = |l: &str| match line.strip_suffix("...") {
            Some(prefix) => l.starts_with(prefix),
            None => l.trim_end() == line,
        };
        if !ours_out.stderr.lines().any(matches) {
            return Err(format!(
                "{stem}: our stderr lacks the line `{line}`\n{}",
                describe(&ours_out)
            ));
        }
    }
    if let Some(why) = d.divergence_for(oracle.name) {
        // The specification's result is recorded; ours must produce it and LLVM must not.
        let expected = expected()?;
        let status = d.status_for(oracle.name);
        if ours_out.stdout != expected || ours_out.status != status {
            if let Some(lines) = line_differences(&expected, &ours_out.stdout) {
                return Err(format!(
                    "{stem}: expected the specified result ({why}); ours ends with `{}`, \
                     stdout differs from NAME.expected in {lines}",
                    ours_out.status
                ));
            }
            return Err(format!(
                "{stem}: expected the specified result ({why}):\n{expected}\nours:\n{}",
                describe(&ours_out)
            ));
        }
        if llvm_out.stdout == expected && llvm_out.status == status {
            return Err(format!(
                "{stem}: marked as an LLVM divergence, but {}'s runtime now agrees: remove the mark",
                oracle.name
            ));
        }
        return Ok(());
    }
    let same = ours_out.status == llvm_out.status
        && ours_out.stdout == llvm_out.stdout
        && (!d.stderr || ours_out.stderr == llvm_out.stderr);
    if !same {
        // A generated program's hundreds of lines: the lines that differ, not both outputs.
        if let Some(lines) = line_differences(&llvm_out.stdout, &ours_out.stdout) {
            let stderr = if d.stderr && ours_out.stderr != llvm_out.stderr {
                line_differences(&llvm_out.stderr, &ours_out.stderr)
                    .map(|l| format!("\nstderr differs in {l}"))
                    .unwrap_or_else(|| {
                        format!(
                            "\n--- ours' stderr\n{}\n--- LLVM's stderr\n{}",
                            ours_out.stderr, llvm_out.stderr
                        )
                    })
            } else {
                String::new()
            };
            return Err(format!(
                "{stem}: outputs differ (status: ours `{}`, LLVM ({}) `{}`); stdout differs in \
                 {lines}{stderr}",
                ours_out.status, oracle.name, llvm_out.status
            ));
        }
        return Err(format!(
            "{stem}: outputs differ\n--- ours\n{}\n--- LLVM ({})\n{}",
            describe(&ours_out),
            oracle.name,
            describe(&llvm_out)
        ));
    }
    // Agreement on a failure is not a pass: a program that fails under both runtimes checks
    // nothing unless its status is the one it declares (a fatal error on bad input).
    let status = d.status_for(oracle.name);
    if ours_out.status != status {
        return Err(format!(
            "{stem}: both runtimes end with `{}`, the program declares `{status}` \
             (`// STATUS:`)\n{}",
            ours_out.status,
            describe(&ours_out)
        ));
    }
    Ok(())
}

/// For long outputs (a generated suite's one line per case): how many lines differ and the
/// first of them, each as LLVM's (or the expected) line then ours, with its number. `None`
/// when both outputs are short enough to be shown whole (or do not differ).
fn line_differences(theirs: &str, ours: &str) -> Option<String> {
    const LONG: usize = 60;
    const SHOWN: usize = 12;
    let (a, b): (Vec<&str>, Vec<&str>) = (theirs.lines().collect(), ours.lines().collect());
    if a.len().max(b.len()) <= LONG || theirs == ours {
        return None;
    }
    let differing: Vec<usize> = (0..a.len().max(b.len()))
        .filter(|&i| a.get(i) != b.get(i))
        .collect();
    let mut out = format!(
        "{} of {} lines ({} against {} lines):",
        differing.len(),
        a.len().max(b.len()),
        a.len(),
        b.len()
    );
    for &i in differing.iter().take(SHOWN) {
        out.push_str(&format!(
            "\n  line {}\n    them: {}\n    ours: {}",
            i + 1,
            a.get(i).unwrap_or(&"(none)"),
            b.get(i).unwrap_or(&"(none)")
        ));
    }
    if differing.len() > SHOWN {
        out.push_str(&format!("\n  ... {} more", differing.len() - SHOWN));
    }
    Some(out)
}

/// Every program, built by each compiler, agrees with that compiler's LLVM runtime.
/// `CONFORMANCE_FILTER=substr` keeps programs whose name contains it; `CONFORMANCE_ORACLE=clang22`
/// keeps one compiler.
#[test]
fn c_programs_agree_with_llvm() {
    let root = repo_root();
    let tests_dir = root.join("tests/c");
    let ours = our_lib_dir();
    let only_oracle = std::env::var("CONFORMANCE_ORACLE").unwrap_or_default();
    let oracles: Vec<Oracle> = oracles(&root)
        .into_iter()
        .filter(|o| only_oracle.is_empty() || o.name == only_oracle)
        .collect();
    assert!(!oracles.is_empty(), "no oracle named {only_oracle}");
    assert!(
        llvm22_both(&root).join("libomptarget.so.19.1").exists(),
        "{} is missing: run scripts/deps.sh",
        llvm22_both(&root).display()
    );
    for o in &oracles {
        assert!(
            o.llvm_lib.join(o.soname).exists(),
            "{}'s LLVM runtime {} is missing: run scripts/deps.sh",
            o.name,
            o.llvm_lib.join(o.soname).display()
        );
    }
    let filter = std::env::var("CONFORMANCE_FILTER").unwrap_or_default();
    let sources: Vec<PathBuf> = std::fs::read_dir(&tests_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.ends_with(".c") || name.ends_with(".cpp")
        })
        .collect();
    // A source is a shared library or a tool (not a test) exactly when a program names it.
    let libraries: Vec<String> = sources
        .iter()
        .flat_map(|p| {
            let d = directives(&std::fs::read_to_string(p).unwrap_or_default());
            d.shared_lib.into_iter().chain(d.tool)
        })
        .collect();
    let mut programs: Vec<PathBuf> = sources
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            !libraries.contains(&name) && name.contains(&filter)
        })
        .collect();
    programs.sort();
    assert!(
        !programs.is_empty(),
        "no programs under {}",
        tests_dir.display()
    );
    // (oracle index, program), each built into the oracle's own folder; and the late-copies
    // pass: clang-19's builds again (the runtime's paths are the same for both compilers), once
    // the first pass has built them, of the programs whose constructs may complete after they
    // return (`nowait`, the `_async` routines, interop, detached tasks): a blocking construct
    // waits for its copies back to land, late or not.
    let mut jobs: Vec<(usize, PathBuf)> = Vec::new();
    let mut late_jobs: Vec<(usize, PathBuf)> = Vec::new();
    for (i, o) in oracles.iter().enumerate() {
        let build = ours
            .parent()
            .unwrap()
            .join("conformance-build")
            .join(o.name);
        std::fs::create_dir_all(&build).unwrap();
        for p in &programs {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            let d = directives(&text);
            if !d.only.is_empty() && !d.only.iter().any(|n| n == o.name) {
                continue;
            }
            jobs.push((i, p.clone()));
            let completes_later = ["nowait", "_async", "interop", "detach"]
                .iter()
                .any(|w| text.contains(w));
            if o.name == "clang19" && completes_later && !d.late_copies_skip {
                late_jobs.push((i, p.clone()));
            }
        }
    }
    late_jobs.reverse();
    jobs.reverse();

    let results: Mutex<BTreeMap<String, Result<(), String>>> = Mutex::new(BTreeMap::new());
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    for (jobs, late) in [(jobs, false), (late_jobs, true)] {
        let queue = Mutex::new(jobs);
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    while let Some((i, p)) = queue.lock().unwrap().pop() {
                        let o = &oracles[i];
                        let build = ours
                            .parent()
                            .unwrap()
                            .join("conformance-build")
                            .join(o.name);
                        let r = check_program(o, &p, &build, &ours, late);
                        let name = p.file_name().unwrap().to_string_lossy().into_owned();
                        let pass = if late { "+late-copies" } else { "" };
                        results
                            .lock()
                            .unwrap()
                            .insert(format!("{}{pass}/{name}", o.name), r);
                    }
                });
            }
        });
    }
    let results = results.into_inner().unwrap();
    let failed: Vec<_> = results.iter().filter(|(_, r)| r.is_err()).collect();
    for (name, r) in &results {
        println!("{} {name}", if r.is_ok() { "ok  " } else { "FAIL" });
    }
    for (name, r) in &failed {
        println!("\n[{name}] {}", r.as_ref().unwrap_err());
    }
    let passes = oracles
        .iter()
        .map(|o| o.name.to_string())
        .chain(["clang19+late-copies".to_string()]);
    for o in passes {
        let prefix = format!("{o}/");
        let total = results.keys().filter(|k| k.starts_with(&prefix)).count();
        let bad = failed
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .count();
        if total > 0 {
            println!(
                "conformance {o}: {} of {total} agree, {bad} failed",
                total - bad
            );
        }
    }
    assert!(
        failed.is_empty(),
        "{} programs disagree with their LLVM runtime",
        failed.len()
    );
}

#[test]
fn long_outputs_are_compared_line_by_line() {
    let theirs: String = (0..100).map(|i| format!("case {i} ok\n")).collect();
    let ours = theirs.replace("case 7 ok", "case 7 bad");
    let report = line_differences(&theirs, &ours).expect("long outputs that differ");
    assert!(report.starts_with("1 of 100 lines"), "{report}");
    assert!(report.contains("line 8\n    them: case 7 ok\n    ours: case 7 bad"));
    assert_eq!(line_differences(&theirs, &theirs), None);
    assert_eq!(line_differences("a\n", "b\n"), None);
}

#[test]
fn normalise_replaces_addresses() {
    assert_eq!(
        normalise("at 0x00007ffc1 (4 bytes) 0x"),
        "at 0xADDR (4 bytes) 0x"
    );
}
