//! What gpu/build.sh made: a suite folder holds `manifest.tsv` (one program a line: name,
//! env, args, flags, shared library; `-` for none), one folder of binaries per ABI, and
//! optionally `suite.conf` saying which runtime is its oracle. The default suite (gpu/out) is
//! clang 19's programs, ABI v7 compared with LLVM 19, ABI v8 compared with our v7 run; another
//! compiler's suite (e.g. clang 22 with LLVM 22 as oracle) is one more folder with its own
//! `suite.conf`, passed with `--suite DIR`.

use std::path::{Path, PathBuf};

/// One program of the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub name: String,
    /// `NAME=VALUE` pairs of `// ENV:`.
    pub env: Vec<(String, String)>,
    /// `// ARGS:`, split at white space.
    pub args: Vec<String>,
    /// `// STDERR`: normalised stderr must agree too.
    pub stderr: bool,
    /// `// DIVERGENCE:`: ours must print the `.expected` file, LLVM must not.
    pub divergence: bool,
    /// `// GPU-UNCOMPARED: why`: on the GPU LLVM 19's run is no oracle for this program (it
    /// crashes, or its CUDA plugin lacks what the program tests): ours runs and is checked
    /// against itself (ABI v8 against v7, `OURS-STDERR` lines), LLVM's outcome is reported.
    pub uncompared: bool,
    /// `// GPU-TIMEOUT-S: N`: this program's time limit on the GPU, in seconds, instead of the
    /// suite's (`TIMEOUT=N` among the flags).
    pub timeout_s: Option<u64>,
    /// `// STATUS:`: the exit status the program must end with, as `exit N` or `signal N`
    /// (default `exit 0`): under both runtimes, or under ours for a DIVERGENCE.
    pub status: Option<String>,
    /// The fields as written, for the logs.
    pub raw_env: String,
    pub raw_args: String,
    pub raw_flags: String,
}

/// `-` means none.
fn none(s: &str) -> &str {
    if s == "-" { "" } else { s }
}

/// Parses `manifest.tsv` (name, env, args, flags, shared library, status); lines starting
/// with `#` and blank lines are skipped, missing fields are `-`, later ones are ignored (room
/// for more columns).
pub fn parse(text: &str) -> Result<Vec<Program>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let field = |k: usize| f.get(k).map(|s| s.trim()).unwrap_or("-");
        let name = field(0);
        if name.is_empty() || name == "-" || name.contains('/') {
            return Err(format!(
                "manifest line {}: bad program name {name:?}",
                i + 1
            ));
        }
        let env = none(field(1))
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let args = none(field(2))
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let flags: Vec<&str> = none(field(3)).split(',').map(str::trim).collect();
        out.push(Program {
            name: name.to_owned(),
            env,
            args,
            stderr: flags.contains(&"STDERR"),
            divergence: flags.iter().any(|f| f.starts_with("DIVERGENCE")),
            uncompared: flags.contains(&"GPU-UNCOMPARED"),
            timeout_s: flags
                .iter()
                .find_map(|f| f.strip_prefix("TIMEOUT="))
                .and_then(|v| v.parse().ok()),
            status: Some(none(field(5)))
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            raw_env: field(1).to_owned(),
            raw_args: field(2).to_owned(),
            raw_flags: field(3).to_owned(),
        });
    }
    Ok(out)
}

/// Puts the folder of the suite's OMPT tool libraries where gpu/build.sh wrote `@TOOLS@`
/// (a `// TOOL:` program's `OMP_TOOL_LIBRARIES=@TOOLS@/libNAME.so`).
pub fn place_tools(programs: &mut [Program], bin: &Path) {
    let bin = bin.display().to_string();
    for p in programs {
        for (_, v) in &mut p.env {
            if v.contains("@TOOLS@") {
                *v = v.replace("@TOOLS@", &bin);
            }
        }
    }
}

/// A runtime folder: a label for the tables and the folder first in `LD_LIBRARY_PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runtime {
    pub label: String,
    pub dir: PathBuf,
}

/// A suite: programs built by one compiler, run under its oracle runtime and ours.
#[derive(Clone, Debug)]
pub struct Suite {
    /// Empty for the default suite (its lines in the summary keep their old form).
    pub label: String,
    pub dir: PathBuf,
    pub programs: Vec<Program>,
    /// ABI folders: the first is compared with the oracle, each other one with ours on the
    /// first.
    pub abis: Vec<String>,
    /// The library name the programs load (the loader trace is checked for it).
    pub soname: String,
    pub ours: Runtime,
    pub oracle: Runtime,
}

/// `suite.conf`: `key = value` lines, `#` comments (whole lines, or after a space). Paths are
/// relative to the suite folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteConf {
    pub label: String,
    /// Oracle runtime candidates: a folder holding `soname`, or a `.tar.xz` of one; the
    /// first that exists wins (`|`-separated).
    pub oracle: Vec<String>,
    pub oracle_label: String,
    pub soname: String,
    pub ours: String,
    pub abis: Vec<String>,
}

impl Default for SuiteConf {
    /// The default suite as gpu/build.sh makes it.
    fn default() -> Self {
        SuiteConf {
            label: String::new(),
            oracle: vec!["llvm19.tar.xz".into(), "/usr/lib/llvm-19/lib".into()],
            oracle_label: "LLVM 19".into(),
            soname: "libomptarget.so.19.1".into(),
            ours: "ours".into(),
            abis: vec!["v7".into(), "v8".into()],
        }
    }
}

pub fn parse_conf(text: &str) -> Result<SuiteConf, String> {
    let mut c = SuiteConf::default();
    for (i, line) in text.lines().enumerate() {
        let line = match line.find(" #") {
            Some(at) => &line[..at],
            None => line,
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(format!("suite.conf line {}: expected key = value", i + 1));
        };
        let v = v.trim();
        let list = |sep: char| -> Vec<String> {
            v.split(sep)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        };
        match k.trim() {
            "label" => c.label = v.to_owned(),
            "oracle" => c.oracle = list('|'),
            "oracle_label" => c.oracle_label = v.to_owned(),
            "soname" => c.soname = v.to_owned(),
            "ours" => c.ours = v.to_owned(),
            "abis" => c.abis = list(','),
            other => return Err(format!("suite.conf line {}: unknown key {other}", i + 1)),
        }
    }
    if c.abis.is_empty() {
        return Err("suite.conf: abis is empty".into());
    }
    Ok(c)
}

/// `p` relative to `base` unless absolute.
pub fn resolve(base: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_owned()
    } else {
        base.join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_lines() {
        let text = "# name\tenv\targs\tflags\tshared_lib\n\
                    api_alloc\t-\t-\t-\t-\n\
                    \n\
                    info_bits\tLIBOMPTARGET_INFO=40 A=b=c junk\t-\tSTDERR\t-\n\
                    div\t-\t1  2\tSTDERR,DIVERGENCE\t-\tsignal 6\textra\n\
                    lib\t-\t-\tDIVERGENCE(clang19)\tlib_lib.c\n\
                    short\n\
                    slow\t-\t-\tSTDERR,TIMEOUT=300\t-\n";
        let p = parse(text).unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!((p[0].timeout_s, p[5].timeout_s), (None, Some(300)));
        assert!(p[5].stderr);
        assert_eq!(p[0].name, "api_alloc");
        assert!(p[0].env.is_empty() && p[0].args.is_empty() && !p[0].stderr && !p[0].divergence);
        assert_eq!(
            p[1].env,
            [
                ("LIBOMPTARGET_INFO".into(), "40".into()),
                ("A".into(), "b=c".into())
            ]
        );
        assert!(p[1].stderr && !p[1].divergence);
        assert_eq!(p[2].args, ["1", "2"]);
        assert!(p[2].stderr && p[2].divergence);
        assert_eq!(p[2].raw_flags, "STDERR,DIVERGENCE");
        assert_eq!(p[2].status.as_deref(), Some("signal 6"));
        assert_eq!(p[0].status, None);
        assert!(p[3].divergence);
        assert_eq!(p[4].raw_env, "-");
        assert!(parse("../x\t-\n").is_err());
    }

    #[test]
    fn tool_libraries_are_placed() {
        let mut p =
            parse("ompt\tA=1 OMP_TOOL_LIBRARIES=@TOOLS@/libompt_tool.so\t-\t-\t-\n").unwrap();
        place_tools(&mut p, Path::new("/g/out/bin"));
        assert_eq!(
            p[0].env,
            [
                ("A".into(), "1".into()),
                (
                    "OMP_TOOL_LIBRARIES".into(),
                    "/g/out/bin/libompt_tool.so".into()
                )
            ]
        );
    }

    #[test]
    fn suite_conf() {
        assert_eq!(parse_conf("").unwrap(), SuiteConf::default());
        let c = parse_conf(
            "# clang 22\nlabel = clang22\noracle = llvm22.tar.xz | /usr/lib/llvm-22/lib\n\
             oracle_label=LLVM 22\nsoname=libomptarget.so.22.1   # the name it loads\nours=../ours\nabis=v7\n",
        )
        .unwrap();
        assert_eq!(c.label, "clang22");
        assert_eq!(c.oracle, ["llvm22.tar.xz", "/usr/lib/llvm-22/lib"]);
        assert_eq!(c.oracle_label, "LLVM 22");
        assert_eq!(c.soname, "libomptarget.so.22.1");
        assert_eq!(c.abis, ["v7"]);
        assert!(parse_conf("colour = red\n").is_err());
        assert!(parse_conf("abis =\n").is_err());
        assert_eq!(resolve(Path::new("/a"), "b"), Path::new("/a/b"));
        assert_eq!(resolve(Path::new("/a"), "/c"), Path::new("/c"));
    }
}
