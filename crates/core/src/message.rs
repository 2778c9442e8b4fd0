//! Messages on stderr, in the words LLVM's runtime uses (programs and tests parse them).

use std::ffi::{CStr, c_char};
use std::fmt::Write as _;
use std::io::Write;

/// `omptarget message: ...`
pub fn message(args: std::fmt::Arguments<'_>) {
    emit("omptarget message: ", args);
}

/// `omptarget error: ...`
pub fn report(args: std::fmt::Arguments<'_>) {
    emit("omptarget error: ", args);
}

/// `"PluginInterface" error: ...`: LLVM's plugins report device failures (an allocation the
/// device refused) with this prefix.
pub fn plugin_error(args: std::fmt::Arguments<'_>) {
    emit("\"PluginInterface\" error: ", args);
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

/// The variable name of a map-name string, as LLVM's `getNameFromMapping` reads it: the text
/// between the first and the second `;` of clang's `;name;file;line;col;;`, the text after the
/// first `;` when there is no second, and the whole string when there is no `;` at all (the
/// symbol names of `declare target` globals, which LLVM's table entries carry as their names).
pub fn var_name(name: Option<&std::ffi::CStr>) -> String {
    let Some(name) = name else {
        return "unknown".to_owned();
    };
    let s = name.to_string_lossy();
    llvm_field(&s, 0).to_owned()
}

/// Field `n` of a `;`-separated location string, as LLVM's `SourceInfo::getSubstring(n)`
/// takes it (a missing `;` reads as "end of string"; a field past the end is empty, where
/// LLVM's `substr` would throw).
pub fn llvm_field(s: &str, n: usize) -> &str {
    // std::string's npos arithmetic, kept as it is: `find(';', npos + 1)` searches from 0.
    const NPOS: usize = usize::MAX;
    let find = |from: usize| match s.get(from..) {
        Some(rest) => rest.find(';').map_or(NPOS, |i| i + from),
        None => NPOS,
    };
    let mut begin = find(0);
    let mut end = find(begin.wrapping_add(1));
    for _ in 0..n {
        begin = end;
        end = find(begin.wrapping_add(1));
    }
    let start = begin.wrapping_add(1);
    if start > s.len() {
        return "";
    }
    let len = end.wrapping_sub(begin).wrapping_sub(1);
    &s[start..start.saturating_add(len).min(s.len())]
}

/// The file name of a path, as LLVM's `SourceInfo::removePath` prints it.
pub fn base_name(path: &str) -> &str {
    path.rfind('/').map_or(path, |i| &path[i + 1..])
}

/// A map-name string clang passes (`;name;file;line;col;;`), or `None` for a null pointer.
pub(crate) fn name_from_ptr(p: usize) -> Option<&'static CStr> {
    if p == 0 {
        return None;
    }
    // SAFETY: clang emits map names as NUL-terminated constant strings that live as long as
    // the program (or the shared library that holds the construct).
    Some(unsafe { CStr::from_ptr(p as *const c_char) })
}

/// `s` as a JSON string literal (record/replay's `.json` files, the profiler's trace).
pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
