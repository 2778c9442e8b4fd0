//! Record and replay on the host device (docs/RECORD-REPLAY.md): `tests/record/
//! record_kernels.c` runs under our library with `LIBOMPTARGET_RECORD=1`, every kernel's
//! files are checked against LLVM 19's format, and LLVM's own `llvm-omp-kernel-replay-19`
//! replays each of them on our library with `--verify` (the device memory after the replay
//! must equal the memory after the recorded run). LLVM 19's host plugin records nothing (it
//! says so four times), so there is no LLVM recording to replay here; on a GPU both directions
//! run (`gpu/run.sh tools`).

mod common;

use common::{profile_dir, repo_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let d = profile_dir()
        .join("record-tests")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn compile(out: &Path) {
    common::compile(&repo_root().join("tests/record/record_kernels.c"), out, &[]);
}

fn run(cmd: &mut Command) -> Output {
    let o = cmd.output().expect("the program runs");
    assert!(
        o.status.success(),
        "{:?} failed: {}\n{}",
        cmd,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Records every kernel of the program in `dir` under `lib`; returns the kernels' names.
fn record(dir: &Path, lib: &Path) -> Vec<String> {
    let exe = dir.join("record_kernels");
    compile(&exe);
    let o = run(Command::new(&exe)
        .current_dir(dir)
        .env("LD_LIBRARY_PATH", lib)
        .env("LIBOMPTARGET_RECORD", "1")
        .env("LIBOMPTARGET_RR_SAVE_OUTPUT", "1"));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "a[1]=4.5 b[1]=66 bias=1 sum=8128\n",
        "recording changes nothing the program sees"
    );
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .map(String::from)
        })
        .collect();
    names.sort();
    names
}

/// The value of `key` in a one-line JSON object (a number, a string or an array of numbers).
fn field<'a>(json: &'a str, key: &str) -> &'a str {
    let at = json
        .find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("{key} missing from {json}"))
        + key.len()
        + 3;
    let rest = &json[at..];
    let end = if rest.starts_with('[') {
        rest.find(']').unwrap() + 1
    } else if let Some(text) = rest.strip_prefix('"') {
        text.find('"').unwrap() + 2
    } else {
        rest.find([',', '}']).unwrap()
    };
    &rest[..end]
}

fn numbers(array: &str) -> Vec<i64> {
    array
        .trim_matches(['[', ']'])
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

/// The replay tool, on our library, with --verify; returns its stdout and the library the
/// loader initialised.
fn replay(dir: &Path, lib: &Path, name: &str) -> (String, String) {
    let o = run(Command::new("llvm-omp-kernel-replay-19")
        .current_dir(dir)
        .env("LD_LIBRARY_PATH", lib)
        .env("LD_DEBUG", "libs")
        .arg("--verify")
        .arg(format!("{name}.json")));
    let err = String::from_utf8_lossy(&o.stderr);
    let loaded = err
        .lines()
        .filter_map(|l| l.split("calling init: ").nth(1))
        .find(|l| l.contains("libomptarget.so.19.1"))
        .unwrap_or("")
        .trim()
        .to_owned();
    (String::from_utf8_lossy(&o.stdout).into_owned(), loaded)
}

#[test]
fn llvm_replays_what_we_record() {
    let lib = common::our_lib_dir("record-lib");
    let dir = scratch("roundtrip");
    let names = record(&dir, &lib);
    assert_eq!(names.len(), 4, "one recording per kernel: {names:?}");
    for name in &names {
        let file = |ext: &str| dir.join(format!("{name}.{ext}"));
        let json = std::fs::read_to_string(file("json")).unwrap();
        assert!(
            json.starts_with("{\"ArgOffsets\":[") && json.ends_with('}'),
            "{json}"
        );
        assert_eq!(field(&json, "Name"), format!("\"{name}\""));
        let args = numbers(field(&json, "ArgPtrs"));
        let offsets = numbers(field(&json, "ArgOffsets"));
        assert_eq!(
            field(&json, "NumArgs").parse::<usize>().unwrap(),
            args.len()
        );
        assert!(offsets.iter().all(|&o| o == 0) && offsets.len() == args.len());
        assert_eq!(
            args[0], -1,
            "clang 19's kernels get the launch environment first (none: ~0)"
        );
        let memory = std::fs::read(file("memory")).unwrap();
        let size: usize = field(&json, "DeviceMemorySize").parse().unwrap();
        assert_eq!(memory.len(), size);
        assert_eq!(
            size % 16,
            0,
            "LLVM's bump allocator hands out 16-byte steps"
        );
        assert_eq!(std::fs::read(file("original.output")).unwrap().len(), size);
        let start: i64 = field(&json, "BumpAllocVAStart").parse().unwrap();
        assert!(start > 0);
        assert!(
            args[1..]
                .iter()
                .any(|&a| a >= start && a < start + size as i64),
            "a pointer argument points into the recorded memory"
        );
        assert_eq!(field(&json, "DeviceId"), "0");
        assert!(
            std::fs::read(file("image"))
                .unwrap()
                .starts_with(b"\x7fELF")
        );
        let globals = std::fs::read(file("globals")).unwrap();
        assert_eq!(&globals[..9], b"bias\0\x08\0\0\0", "name, NUL, 32-bit size");
        assert_eq!(globals.len(), 9 + 8);
        let (out, loaded) = replay(&dir, &lib, name);
        assert_eq!(
            out, "[llvm-omp-kernel-replay] Replay device memory verified!\n",
            "{name}"
        );
        assert!(
            loaded.starts_with(lib.to_str().unwrap()),
            "the tool ran on our library: {loaded}"
        );
    }
}

/// The replay really runs the kernel on the recorded memory: changed input, changed output.
#[test]
fn a_changed_memory_fails_verification() {
    let lib = common::our_lib_dir("record-lib");
    let dir = scratch("mutated");
    let names = record(&dir, &lib);
    let name = &names[0];
    let path = dir.join(format!("{name}.memory"));
    let mut memory = std::fs::read(&path).unwrap();
    memory[8] ^= 0xff;
    std::fs::write(&path, memory).unwrap();
    let (out, _) = replay(&dir, &lib, name);
    assert_eq!(
        out,
        "[llvm-omp-kernel-replay] Replay device memory failed to verify!\n"
    );
}

/// Nothing is written unless asked for; LLVM 19 itself records nothing on the host device.
#[test]
fn nothing_is_recorded_unless_asked() {
    let dir = scratch("off");
    let exe = dir.join("record_kernels");
    compile(&exe);
    run(Command::new(&exe)
        .current_dir(&dir)
        .env("LD_LIBRARY_PATH", common::our_lib_dir("record-lib")));
    let llvm = run(Command::new(&exe)
        .current_dir(&dir)
        .env("LD_LIBRARY_PATH", "/usr/lib/llvm-19/lib")
        .env("LIBOMPTARGET_RECORD", "1"));
    assert!(
        String::from_utf8_lossy(&llvm.stderr)
            .contains("WARNING RR did not intialize RR-properly with 0 bytes(Error: Cannot determine Device Memory Size)"),
        "LLVM 19's host plugin cannot record"
    );
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(files, 1, "only the program itself");
}
