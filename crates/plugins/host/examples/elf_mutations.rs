//! How well `validate_elf` keeps corrupt images away from `dlopen`: flips one bit of (or
//! truncates) an x86_64 device image N times, and `dlopen`s each variant the check lets through
//! in a child process, counting those that crash it.
//!
//!     cargo run -p omptarget-plugin-host --example elf_mutations -- IMAGE.so [N] [--no-check]
//!         [--keep DIR]
//!
//! (Extract IMAGE.so from a clang-19 program: `objcopy --dump-section .llvm.offloading=ob.bin
//! prog`, then the bytes from the first `\x7fELF` on. Run with LD_LIBRARY_PATH naming a
//! libomptarget.so.19.1 and libomp so that the image's own dependencies resolve.)

use std::process::Command;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--dlopen") {
        let path = std::ffi::CString::new(args[2].clone()).expect("a path");
        // SAFETY: loads the variant in this throw-away child; a crash is what we count.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        std::process::exit(if handle.is_null() { 1 } else { 0 });
    }
    let image = std::fs::read(
        args.get(1)
            .expect("usage: elf_mutations IMAGE.so [N] [--no-check]"),
    )
    .expect("the image");
    let n: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let check = !args.iter().any(|a| a == "--no-check");
    // `--keep DIR`: the variants that crash are written there.
    let keep = args
        .iter()
        .position(|a| a == "--keep")
        .and_then(|i| args.get(i + 1).cloned());
    let dir = std::env::temp_dir().join(format!("elf-mutations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let variant_path = dir.join("variant.so");
    let (mut refused, mut loaded, mut dlerror, mut crashed) = (0, 0, 0, 0);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    for k in 0..n {
        let mut bytes = image.clone();
        if k % 3 == 0 {
            bytes.truncate(next() as usize % image.len());
        } else {
            let at = next() as usize % bytes.len();
            bytes[at] ^= 1 << (next() % 8);
        }
        if check && omptarget_plugin::elf::validate_elf(&bytes).is_err() {
            refused += 1;
            continue;
        }
        std::fs::write(&variant_path, &bytes).expect("the variant");
        let status = Command::new(&args[0])
            .arg("--dlopen")
            .arg(&variant_path)
            .status()
            .expect("the child");
        // ld.so's own assertion failures end the process with status 127, as a crash does.
        match status.code() {
            Some(0) => loaded += 1,
            Some(1) => dlerror += 1,
            _ => {
                crashed += 1;
                if let Some(keep) = &keep {
                    let _ = std::fs::write(format!("{keep}/crash{crashed}.so"), &bytes);
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{n} variants: {refused} refused by validate_elf, {loaded} loaded, {dlerror} refused by dlopen, {crashed} crashed the loading process"
    );
}
