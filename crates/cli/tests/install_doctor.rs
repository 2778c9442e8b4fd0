//! `omptarget install` and `omptarget doctor` end to end, on the host: the installed prefix
//! runs a clang-19 program with nothing but `LD_LIBRARY_PATH`, re-installing upgrades in place,
//! system prefixes and foreign runtimes are refused; the doctor reports each finding with its
//! fix: LLVM's runtime first on the path, two runtimes in one process, a program built for a
//! GPU on a machine without one, `OMP_TARGET_OFFLOAD=DISABLED`, and the variables set.
//!
//! The library installed is the one cargo built for this test (`target/debug/deps`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("omptarget-idtest-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The runtime library cargo built beside the command.
fn library() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_omptarget"));
    let dir = exe.parent().unwrap();
    [
        dir.join("deps/libomptarget.so"),
        dir.join("libomptarget.so"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .expect("cargo builds libomptarget.so (omptarget-abi) for the command")
}

fn install(prefix: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_omptarget"))
        .arg("install")
        .arg("--prefix")
        .arg(prefix)
        .arg("--lib")
        .arg(library())
        .args(extra)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// One installation the doctor tests share.
fn shared_prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let p = scratch("shared").join("prefix");
        let o = install(&p, &[]);
        assert!(o.status.success(), "{}", text(&o));
        p
    })
}

fn clang(args: &[&str]) {
    let o = Command::new("clang-19")
        .args(args)
        .output()
        .expect("clang-19 runs");
    assert!(o.status.success(), "clang-19 {args:?}: {}", text(&o));
}

/// A clang-19 host-offload program from `examples/saxpy.c`, in `dir`.
fn saxpy(dir: &Path) -> PathBuf {
    let exe = dir.join("saxpy");
    let src = repo_root().join("examples/saxpy.c");
    clang(&[
        "-fopenmp",
        "-fopenmp-targets=x86_64-pc-linux-gnu",
        "-O1",
        src.to_str().unwrap(),
        "-o",
        exe.to_str().unwrap(),
    ]);
    exe
}

/// Runs the installed doctor on `program` with `LD_LIBRARY_PATH` and `env`, nothing else of
/// ours set.
fn doctor(program: Option<&Path>, ld_library_path: &str, env: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = Command::new(shared_prefix().join("bin/omptarget"));
    cmd.arg("doctor");
    if let Some(p) = program {
        cmd.arg(p);
    }
    for (k, _) in std::env::vars() {
        if k.starts_with("OMP") || k.starts_with("LIBOMPTARGET") || k.starts_with("LD_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("LD_LIBRARY_PATH", ld_library_path)
        .envs(env.iter().copied());
    let o = cmd.output().unwrap();
    (o.status.success(), text(&o))
}

fn has(report: &str, line: &str) {
    assert!(report.contains(line), "no '{line}' in:\n{report}");
}

#[test]
fn an_installed_prefix_runs_a_clang19_program_with_only_ld_library_path() {
    let dir = scratch("install");
    let prefix = dir.join("prefix");
    let o = install(&prefix, &[]);
    assert!(o.status.success(), "{}", text(&o));
    has(&text(&o), "installed omptarget-rs");
    let lib = prefix.join("lib");
    let file = lib.join("libomptarget.so.19.1");
    let link = lib.join("libomptarget.so.22.1");
    assert!(file.symlink_metadata().unwrap().file_type().is_file());
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("libomptarget.so.19.1")
    );
    assert!(prefix.join("bin/omptarget").is_file());
    assert!(prefix.join("share/doc/omptarget-rs/README.md").is_file());
    assert!(prefix.join("share/doc/omptarget-rs/docs/GPU.md").is_file());
    let module = std::fs::read_to_string(prefix.join(format!(
        "share/modulefiles/omptarget-rs/{}.lua",
        env!("CARGO_PKG_VERSION")
    )))
    .unwrap();
    has(
        &module,
        &format!(
            "local prefix = \"{}\"",
            prefix.canonicalize().unwrap().display()
        ),
    );
    has(
        &module,
        "prepend_path(\"LD_LIBRARY_PATH\", pathJoin(prefix, \"lib\"))",
    );
    has(&module, "prepend_path(\"PATH\", pathJoin(prefix, \"bin\"))");

    // The program loads our library from the prefix: the loader's trace names it.
    let exe = saxpy(&dir);
    let o = Command::new(&exe)
        .env_remove("OMP_TARGET_OFFLOAD")
        .env("LD_LIBRARY_PATH", &lib)
        .env("LD_DEBUG", "files")
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{out}{err}");
    has(&out, "ran on: offload device 0");
    has(&out, "check: OK");
    has(
        &err,
        &format!("calling init: {}", file.canonicalize().unwrap().display()),
    );

    // Re-running upgrades in place: a file of the former installation that this one does not
    // write (an older version's modulefile) goes; the installed command installs itself.
    let stale = "share/modulefiles/omptarget-rs/0.0.1.lua";
    std::fs::write(prefix.join(stale), "-- old\n").unwrap();
    let manifest = prefix.join("share/omptarget-rs/install-manifest.txt");
    let mut m = std::fs::read_to_string(&manifest).unwrap();
    m.push_str(stale);
    m.push('\n');
    std::fs::write(&manifest, m).unwrap();
    let o = Command::new(prefix.join("bin/omptarget"))
        .arg("install")
        .arg("--prefix")
        .arg(&prefix)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    has(&text(&o), "upgraded omptarget-rs");
    assert!(!prefix.join(stale).exists());
    assert!(file.is_file() && link.is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn system_prefixes_and_foreign_runtimes_are_refused_without_force() {
    let existed = Path::new("/usr/local/lib/libomptarget.so.19.1").exists();
    let o = install(Path::new("/usr/local"), &[]);
    assert!(!o.status.success());
    has(
        &text(&o),
        "refusing to install: /usr/local is a system prefix",
    );
    assert_eq!(
        Path::new("/usr/local/lib/libomptarget.so.19.1").exists(),
        existed
    );

    // A prefix already holding LLVM's runtime.
    let dir = scratch("foreign");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    let llvm = dir.join("lib/libomptarget.so.19.1");
    std::fs::write(&llvm, b"\x7fELF not ours").unwrap();
    let o = install(&dir, &[]);
    assert!(!o.status.success());
    has(
        &text(&o),
        "exists and was not installed by omptarget install",
    );
    assert_eq!(std::fs::read(&llvm).unwrap(), b"\x7fELF not ours");
    let o = install(&dir, &["--force"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_ne!(std::fs::read(&llvm).unwrap(), b"\x7fELF not ours");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn doctor_finds_llvms_runtime_first_on_the_path() {
    let dir = scratch("wrong");
    let exe = saxpy(&dir);
    let lib = shared_prefix().join("lib");
    let (ok, r) = doctor(
        Some(&exe),
        &format!("/usr/lib/llvm-19/lib:{}", lib.display()),
        &[],
    );
    assert!(!ok, "{r}");
    has(
        &r,
        "PROBLEM libomptarget.so.19.1 => /usr/lib/llvm-19/lib/libomptarget.so.19.1: not omptarget-rs (LLVM's runtime)",
    );
    let lib = lib.canonicalize().unwrap();
    has(
        &r,
        &format!(
            "fix: export LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH",
            lib.display()
        ),
    );
    // With ours first, nothing is wrong.
    let (ok, r) = doctor(Some(&exe), lib.to_str().unwrap(), &[]);
    assert!(ok, "{r}");
    has(
        &r,
        &format!(
            "ok      libomptarget.so.19.1 => {}/libomptarget.so.19.1: omptarget-rs (this installation)",
            lib.display()
        ),
    );
    has(
        &r,
        "its x86_64-pc-linux-gnu image runs on the x86_64 plugin's devices",
    );
    has(&r, "no problem found");
    // Without a program: where the loader finds each name now.
    let (ok, r) = doctor(None, lib.to_str().unwrap(), &[]);
    assert!(ok, "{r}");
    has(
        &r,
        &format!(
            "libomptarget.so.22.1 => {}/libomptarget.so.22.1: omptarget-rs (this installation)",
            lib.display()
        ),
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn doctor_finds_a_second_runtime_beside_ours() {
    // A clang-19 program whose library NEEDs libomptarget.so.22.1, with our library copied
    // under each name into two folders: two files, two runtimes in one process.
    let dir = scratch("two");
    let d = dir.to_str().unwrap();
    std::fs::create_dir_all(dir.join("stub")).unwrap();
    std::fs::write(dir.join("stub.c"), "int stub_symbol;\n").unwrap();
    clang(&[
        "-shared",
        "-fPIC",
        "-Wl,-soname,libomptarget.so.22.1",
        &format!("{d}/stub.c"),
        "-o",
        &format!("{d}/stub/libomptarget.so.22.1"),
    ]);
    std::fs::write(dir.join("needs22.c"), "int needs22(void) { return 22; }\n").unwrap();
    clang(&[
        "-shared",
        "-fPIC",
        &format!("{d}/needs22.c"),
        "-o",
        &format!("{d}/libneeds22.so"),
        "-Wl,--no-as-needed",
        &format!("-L{d}/stub"),
        "-l:libomptarget.so.22.1",
    ]);
    std::fs::write(dir.join("main.c"), "int needs22(void);\nint main(void) {\n  int x = 0;\n#pragma omp target map(tofrom: x)\n  x = 1;\n  return needs22() != 22 || x != 1;\n}\n").unwrap();
    clang(&[
        "-fopenmp",
        "-fopenmp-targets=x86_64-pc-linux-gnu",
        &format!("{d}/main.c"),
        "-o",
        &format!("{d}/main"),
        "-Wl,--no-as-needed",
        &format!("-L{d}"),
        "-lneeds22",
        "-Wl,-rpath,$ORIGIN",
    ]);
    for (folder, name) in [("a", "libomptarget.so.19.1"), ("b", "libomptarget.so.22.1")] {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
        std::fs::copy(library(), dir.join(folder).join(name)).unwrap();
    }
    let (ok, r) = doctor(Some(&dir.join("main")), &format!("{d}/a:{d}/b"), &[]);
    assert!(!ok, "{r}");
    has(&r, "PROBLEM two offloading runtimes would be loaded: ");
    has(
        &r,
        &format!(
            "{d}/a/libomptarget.so.19.1 (for libomptarget.so.19.1) and {d}/b/libomptarget.so.22.1 (for libomptarget.so.22.1)"
        ),
    );
    has(&r, "fix: export LD_LIBRARY_PATH=");
    // The installation's one file under both names is one runtime.
    let (ok, r) = doctor(
        Some(&dir.join("main")),
        shared_prefix().join("lib").to_str().unwrap(),
        &[],
    );
    assert!(ok, "{r}");
    assert!(!r.contains("two offloading runtimes"), "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An OffloadBinary holding a cubin header for `sm_90` (ELF ABI 7), as clang embeds it.
fn gpu_section() -> Vec<u8> {
    let mut cubin = vec![0u8; 64];
    cubin[..9].copy_from_slice(b"\x7fELF\x02\x01\x01\x33\x07");
    cubin[16..18].copy_from_slice(&2u16.to_le_bytes());
    cubin[18..20].copy_from_slice(&190u16.to_le_bytes());
    cubin[48..52].copy_from_slice(&(90u32 | (90 << 16)).to_le_bytes());
    let (triple, arch) = ("nvptx64-nvidia-cuda", "sm_90");
    let strings = format!("triple\0{triple}\0arch\0{arch}\0");
    let (table, str_data) = (72usize, 104usize);
    let image_at = (str_data + strings.len()).next_multiple_of(8);
    let size = image_at + cubin.len();
    let mut b = vec![0u8; size];
    let put = |b: &mut Vec<u8>, at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    b[..4].copy_from_slice(&[0x10, 0xFF, 0x10, 0xAD]);
    b[4..8].copy_from_slice(&1u32.to_le_bytes());
    put(&mut b, 8, size as u64);
    put(&mut b, 16, 32);
    put(&mut b, 24, 40);
    b[32..34].copy_from_slice(&3u16.to_le_bytes()); // cubin
    put(&mut b, 40, table as u64);
    put(&mut b, 48, 2);
    put(&mut b, 56, image_at as u64);
    put(&mut b, 64, cubin.len() as u64);
    for (i, o) in [0, 7, 8 + triple.len(), 13 + triple.len()]
        .iter()
        .enumerate()
    {
        put(&mut b, table + 8 * i, (str_data + o) as u64);
    }
    b[str_data..str_data + strings.len()].copy_from_slice(strings.as_bytes());
    b[image_at..].copy_from_slice(&cubin);
    b
}

/// Whether this machine has the NVIDIA driver's library where the loader finds it.
fn libcuda_here() -> bool {
    let cache = Command::new("ldconfig")
        .arg("-p")
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default();
    String::from_utf8_lossy(&cache).contains("libcuda.so.1")
}

#[test]
fn info_says_why_the_cuda_plugin_has_no_device() {
    let o = Command::new(env!("CARGO_BIN_EXE_omptarget"))
        .arg("info")
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    if out.contains("plugin cuda: 0 device(s)") {
        // The doctor's words for the reason, on the next line.
        let why = out
            .lines()
            .skip_while(|l| !l.starts_with("plugin cuda:"))
            .nth(1)
            .unwrap_or("");
        assert!(why.starts_with("  why: "), "{out}");
        if !libcuda_here() {
            has(
                why,
                "the NVIDIA driver's library libcuda.so.1 cannot be loaded",
            );
        }
    } else {
        assert!(!out.contains("  why: "), "{out}");
    }
}

#[test]
fn doctor_explains_a_gpu_program_on_a_machine_without_a_gpu() {
    // A program whose only device image is an sm_90 cubin (the section clang writes for
    // --offload-arch=sm_90, which needs a CUDA toolchain to build for real).
    let dir = scratch("gpu");
    let bytes: Vec<String> = gpu_section().iter().map(|b| b.to_string()).collect();
    let src = format!(
        "__attribute__((section(\".llvm.offloading\"), used, aligned(8)))\nstatic const unsigned char image[] = {{{}}};\nint main(void) {{ return 0; }}\n",
        bytes.join(",")
    );
    std::fs::write(dir.join("gpu.c"), src).unwrap();
    let exe = dir.join("gpu");
    clang(&[
        "-fopenmp",
        dir.join("gpu.c").to_str().unwrap(),
        "-o",
        exe.to_str().unwrap(),
        "-Wl,--no-as-needed",
        "-L/usr/lib/llvm-19/lib",
        "-lomptarget",
    ]);
    let lib = shared_prefix().join("lib");
    let (ok, r) = doctor(Some(&exe), lib.to_str().unwrap(), &[]);
    has(&r, "1 device image: nvptx64-nvidia-cuda sm_90");
    if libcuda_here() {
        // A GPU machine: the image runs, or the doctor names the architecture mismatch.
        assert!(
            r.contains("image runs on the cuda plugin's devices")
                || r.contains("image cannot run here"),
            "{r}"
        );
        return;
    }
    assert!(!ok, "{r}");
    has(
        &r,
        "PROBLEM it is built for an NVIDIA GPU (nvptx64-nvidia-cuda sm_90), but there is none: the NVIDIA driver's library libcuda.so.1 cannot be loaded",
    );
    has(&r, "its target regions run on the host instead");
    has(&r, "          fix: ");
    let (_, r) = doctor(
        Some(&exe),
        lib.to_str().unwrap(),
        &[("OMP_TARGET_OFFLOAD", "MANDATORY")],
    );
    has(
        &r,
        "the program stops at its first target region (OMP_TARGET_OFFLOAD=MANDATORY)",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn doctor_explains_offload_disabled_and_the_variables_set() {
    let dir = scratch("disabled");
    let exe = saxpy(&dir);
    let lib = shared_prefix().join("lib");
    let (ok, r) = doctor(
        Some(&exe),
        lib.to_str().unwrap(),
        &[
            ("OMP_TARGET_OFFLOAD", "DISABLED"),
            ("LIBOMPTARGET_INFO", "16"),
            ("LIBOMPTARGET_KERNEL_TRACE", "1"),
        ],
    );
    assert!(!ok, "{r}");
    has(
        &r,
        "PROBLEM OMP_TARGET_OFFLOAD=DISABLED: the runtime offers no device and every target region runs on the host",
    );
    has(&r, "fix: unset OMP_TARGET_OFFLOAD");
    has(&r, "none offered while OMP_TARGET_OFFLOAD=DISABLED");
    has(&r, "note    LIBOMPTARGET_INFO=16: bit mask");
    has(
        &r,
        "note    LIBOMPTARGET_KERNEL_TRACE=1 is not read by omptarget-rs",
    );
    // And the host plugin switched off: the program's image has no device.
    let (ok, r) = doctor(
        Some(&exe),
        lib.to_str().unwrap(),
        &[("OMPTARGET_DISABLE_HOST_PLUGIN", "1")],
    );
    assert!(!ok, "{r}");
    has(&r, "needs the host device, which is switched off");
    has(&r, "fix: unset OMPTARGET_DISABLE_HOST_PLUGIN");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn doctor_checks_unified_shared_memory() {
    let dir = scratch("usm");
    std::fs::write(dir.join("usm.c"), "#pragma omp requires unified_shared_memory\nint main(void) {\n  int x = 0;\n#pragma omp target map(tofrom: x)\n  x = 1;\n  return x != 1;\n}\n").unwrap();
    let exe = dir.join("usm");
    clang(&[
        "-fopenmp",
        "-fopenmp-targets=x86_64-pc-linux-gnu",
        dir.join("usm.c").to_str().unwrap(),
        "-o",
        exe.to_str().unwrap(),
    ]);
    let (ok, r) = doctor(
        Some(&exe),
        shared_prefix().join("lib").to_str().unwrap(),
        &[],
    );
    assert!(ok, "{r}");
    has(&r, "it requires unified_shared_memory");
    has(
        &r,
        "ok      unified_shared_memory can be met: the x86_64 plugin's 4 devices reach host memory",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
