//! Messages on stderr, in the words LLVM's runtime uses (programs and tests parse them).

use std::io::Write;

/// `omptarget message: ...`
pub fn message(args: std::fmt::Arguments<'_>) {
    emit("omptarget message: ", args);
}

/// `omptarget error: ...`
pub fn report(args: std::fmt::Arguments<'_>) {
    emit("omptarget error: ", args);
}

/// `omptarget: ...` (LLVM's `INFO` lines).
pub fn info(args: std::fmt::Arguments<'_>) {
    emit("omptarget device 0 info: ", args);
}

/// An `INFO` line for a device.
pub fn device_info(device: usize, args: std::fmt::Arguments<'_>) {
    let mut line = format!("omptarget device {device} info: ");
    std::fmt::write(&mut line, args).ok();
    line.push('\n');
    write_all(&line);
}

/// `omptarget fatal error N: ...`, then abort, as LLVM does.
pub fn fatal(code: i32, text: &str) -> ! {
    write_all(&format!("omptarget fatal error {code}: {text}\n"));
    std::process::abort()
}

fn emit(prefix: &str, args: std::fmt::Arguments<'_>) {
    let mut line = String::with_capacity(128);
    line.push_str(prefix);
    std::fmt::write(&mut line, args).ok();
    line.push('\n');
    write_all(&line);
}

/// One write per line so that lines from several threads do not interleave.
fn write_all(line: &str) {
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Formats an address the way LLVM's `DPxMOD` does (`0x` and 16 hex digits).
pub struct Addr(pub usize);

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "0x{:016x}", self.0)
    }
}

/// The variable name in a clang map-name string (`;name;file;line;col;;`), or `unknown`.
pub fn var_name(name: Option<&std::ffi::CStr>) -> String {
    name.and_then(|c| c.to_str().ok())
        .and_then(|s| s.split(';').nth(1))
        .filter(|s| !s.is_empty())
        .unwrap_or("unknown")
        .to_owned()
}
