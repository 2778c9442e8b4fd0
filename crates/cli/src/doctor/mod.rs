//! `omptarget doctor [PROGRAM]`: what a user needs to know when offloading does not do what
//! they expect, in plain words, each problem with the one line that fixes it:
//! - `program`: which `libomptarget` and `libomp` the program would load (the program's own
//!   loader says, without running it), and whether a second runtime would load beside ours;
//! - `devices`: which devices our runtime sees here, why a GPU is missing (no driver, no
//!   libcuda, a plugin switched off, `OMP_TARGET_OFFLOAD`), which of them can run each of the
//!   program's images (a cubin for another architecture), and whether the program's
//!   `requires unified_shared_memory` can be met;
//! - `environment`: which `OMPTARGET_*` / `LIBOMPTARGET_*` (and `OMP_*` offload) variables are
//!   set and what they do.
//!
//! The modules: `program` reads the ELF file, `loader` resolves libraries as the loader does,
//! `devices` asks the runtime, `env` explains the variables; this one writes the report.

mod devices;
mod env;
pub(crate) use devices::why_no_gpu;
mod loader;
mod program;

use std::path::{Path, PathBuf};

#[derive(clap::Args, Clone, Debug)]
pub struct Options {
    /// The program (or shared library) to examine; without it, only this machine and the
    /// environment are examined.
    pub program: Option<PathBuf>,
}

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Ok,
    Note,
    Problem,
}

/// One finding: what is so, and for a problem the line that fixes it.
#[derive(Clone, Debug)]
pub struct Finding {
    pub level: Level,
    pub text: String,
    pub fix: Option<String>,
}

/// The report: findings under headings.
#[derive(Default)]
pub struct Report {
    sections: Vec<(String, Vec<Finding>)>,
}

impl Report {
    fn section(&mut self, title: impl Into<String>) {
        self.sections.push((title.into(), Vec::new()));
    }

    fn push(&mut self, level: Level, text: impl Into<String>, fix: Option<String>) {
        if self.sections.is_empty() {
            self.section("");
        }
        let last = self.sections.last_mut().expect("a section");
        last.1.push(Finding {
            level,
            text: text.into(),
            fix,
        });
    }

    pub fn ok(&mut self, text: impl Into<String>) {
        self.push(Level::Ok, text, None);
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.push(Level::Note, text, None);
    }

    pub fn problem(&mut self, text: impl Into<String>, fix: impl Into<String>) {
        self.push(Level::Problem, text, Some(fix.into()));
    }

    pub fn problems(&self) -> usize {
        self.sections
            .iter()
            .flat_map(|(_, f)| f)
            .filter(|f| f.level == Level::Problem)
            .count()
    }

    /// The report as printed.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (title, findings) in &self.sections {
            if !title.is_empty() {
                out.push_str(title);
                out.push('\n');
            }
            for f in findings {
                let tag = match f.level {
                    Level::Ok => "ok     ",
                    Level::Note => "note   ",
                    Level::Problem => "PROBLEM",
                };
                out.push_str(&format!("  {tag} {}\n", f.text));
                if let Some(fix) = &f.fix {
                    out.push_str(&format!("          fix: {fix}\n"));
                }
            }
        }
        let n = self.problems();
        out.push_str(&match n {
            0 => "no problem found\n".to_string(),
            1 => "1 problem found\n".to_string(),
            n => format!("{n} problems found\n"),
        });
        out
    }
}

/// Where our library is, relative to this command, and the line that puts it first.
pub struct Ours {
    /// The library beside this command (`lib/libomptarget.so.19.1` of an installation, or a
    /// cargo build's `libomptarget.so`).
    pub lib: Option<PathBuf>,
}

impl Ours {
    fn find() -> Self {
        let lib = std::env::current_exe().ok().and_then(|exe| {
            let dir = exe.parent()?.to_path_buf();
            omptarget_cli::run::candidates(&dir)
                .into_iter()
                .find(|p| p.is_file())
                .and_then(|p| p.canonicalize().ok())
        });
        Ours { lib }
    }

    /// The folder that holds our library under both names, if there is one.
    fn folder(&self) -> Option<PathBuf> {
        let lib = self.lib.as_ref()?;
        let dir = lib.parent()?;
        let both = ["libomptarget.so.19.1", "libomptarget.so.22.1"]
            .iter()
            .all(|n| loader::same_file(&dir.join(n), lib));
        both.then(|| dir.to_path_buf())
    }

    /// The one line that makes programs load our library.
    pub fn fix(&self) -> String {
        match self.folder() {
            Some(dir) => format!("export LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH", dir.display()),
            None => "omptarget install --prefix $HOME/.local/omptarget-rs && export LD_LIBRARY_PATH=$HOME/.local/omptarget-rs/lib:$LD_LIBRARY_PATH".into(),
        }
    }
}

/// Runs the doctor; returns the report.
pub fn doctor(o: &Options) -> Report {
    let ours = Ours::find();
    let mut report = Report::default();
    report.section(format!(
        "omptarget doctor: omptarget-rs {} ({})",
        env!("CARGO_PKG_VERSION"),
        match &ours.lib {
            Some(l) => format!("library {}", l.display()),
            None => "no library beside this command".into(),
        }
    ));
    let program = match &o.program {
        Some(p) => match program::read(p) {
            Ok(prog) => Some(prog),
            Err(e) => {
                report.problem(
                    e,
                    "name an OpenMP program (or library) built for x86_64 Linux",
                );
                None
            }
        },
        None => None,
    };
    match &program {
        Some(prog) => {
            report.section(format!("program {}", prog.path.display()));
            devices::describe_program(&mut report, prog);
            libraries_of_program(&mut report, prog, &ours);
        }
        None => {
            report.section("libraries (for a program started here now: LD_LIBRARY_PATH, then the loader's cache)");
            libraries_here(&mut report, &ours);
        }
    }
    report.section("devices");
    devices::check(&mut report, program.as_ref());
    report.section("environment");
    environment(&mut report);
    report
}

/// The program's libraries as its loader resolves them.
fn libraries_of_program(report: &mut Report, prog: &program::Program, ours: &Ours) {
    let list = match loader::list(&prog.path, prog.interpreter.as_deref()) {
        Ok(l) => l,
        Err(e) => {
            report.problem(
                e,
                format!(
                    "check that {} is a program for this machine",
                    prog.path.display()
                ),
            );
            return;
        }
    };
    let wants_runtime = list.iter().any(|r| r.name.starts_with("libomptarget.so"));
    if !wants_runtime {
        report.note(format!(
            "{} does not load libomptarget (not built with -fopenmp -fopenmp-targets=...): no OpenMP offloading runtime is involved",
            prog.path.display()
        ));
    }
    for r in &list {
        let is_runtime = r.name.starts_with("libomptarget.so");
        if !is_runtime && r.name != "libomp.so.5" && r.name != "libomp.so" {
            continue;
        }
        let Some(path) = &r.path else {
            if is_runtime {
                report.problem(
                    format!("{} => not found: the program will not start", r.name),
                    ours.fix(),
                );
            } else {
                report.problem(
                    format!(
                        "{} => not found: the program will not start (LLVM's OpenMP runtime)",
                        r.name
                    ),
                    "apt-get install libomp5-19   (or the module of your LLVM installation)",
                );
            }
            continue;
        };
        if !is_runtime {
            report.ok(format!(
                "{} => {} (the OpenMP host runtime)",
                r.name,
                path.display()
            ));
            continue;
        }
        runtime_line(report, &r.name, path, ours);
    }
    let runtimes = loader::runtimes(&list);
    if runtimes.len() > 1 {
        let each: Vec<String> = runtimes
            .iter()
            .map(|(p, names)| format!("{} (for {})", p.display(), names.join(", ")))
            .collect();
        report.problem(
            format!(
                "two offloading runtimes would be loaded: {}. Each keeps its own devices and mappings, so data mapped by one is unknown to the other",
                each.join(" and ")
            ),
            ours.fix(),
        );
    }
}

/// The line about one resolved `libomptarget`.
fn runtime_line(report: &mut Report, name: &str, path: &Path, ours: &Ours) {
    match loader::owner(path, ours.lib.as_deref()) {
        loader::Owner::ThisInstallation => {
            report.ok(format!("{name} => {}: omptarget-rs (this installation)", path.display()))
        }
        loader::Owner::OtherOmptargetRs => report.note(format!(
            "{name} => {}: omptarget-rs, another copy than this command's",
            path.display()
        )),
        loader::Owner::Other => report.problem(
            format!(
                "{name} => {}: not omptarget-rs (LLVM's runtime), first in the loader's search order: the program runs on it",
                path.display()
            ),
            ours.fix(),
        ),
    }
}

/// Without a program: where the loader finds each runtime name now.
fn libraries_here(report: &mut Report, ours: &Ours) {
    let cache = loader::cache();
    let path = std::env::var("LD_LIBRARY_PATH").ok();
    for name in ["libomptarget.so.19.1", "libomptarget.so.22.1"] {
        match loader::search(name, path.as_deref(), &cache) {
            Some(p) => runtime_line(report, name, &p, ours),
            None => report.problem(
                format!(
                    "{name} is not found: OpenMP offload programs (clang {}) will not start",
                    &name[16..18]
                ),
                ours.fix(),
            ),
        }
    }
    match loader::search("libomp.so.5", path.as_deref(), &cache) {
        Some(p) => report.ok(format!("libomp.so.5 => {} (the OpenMP host runtime)", p.display())),
        None => report.problem(
            "libomp.so.5 (LLVM's OpenMP runtime) is not found: OpenMP programs built by clang will not start",
            "apt-get install libomp5-19   (or the module of your LLVM installation)",
        ),
    }
}

/// The variables set, and what they do.
fn environment(report: &mut Report) {
    let settings = env::settings(std::env::vars());
    if settings.is_empty() {
        report.ok(
            "no OMPTARGET_* / LIBOMPTARGET_* / OpenMP offload variable is set: the defaults apply",
        );
    }
    for s in settings {
        match s {
            env::Setting::Known(name, value, meaning) => {
                report.note(format!("{name}={value}: {meaning}"))
            }
            env::Setting::Unknown(name, value) => report.note(format!(
                "{name}={value} is not read by omptarget-rs (LLVM's runtime's own variable, or a misspelling: docs/CONFIGURATION.md lists ours): it has no effect"
            )),
        }
    }
}
