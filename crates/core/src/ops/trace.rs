//! `LIBOMPTARGET_INFO` lines, in LLVM 19's exact words (its test suite and users parse them).

use super::map_type as mt;
use crate::config::info;
use crate::device::{Device, lock};
use crate::mapping::{Entry, RefCount};
use crate::message::{Addr, device_info, var_name};
use std::ffi::CStr;
use std::io::Write;

/// Where a construct comes from: `file:line:col` of an `ident_t`, or LLVM's `unknown:0:0`.
#[derive(Clone, Debug, Default)]
pub struct SourceLoc {
    /// The file name inside clang's `psource` string, which lives as long as the program.
    pub file: Option<&'static str>,
    pub line: u32,
    pub col: u32,
}

impl std::fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            self.file.unwrap_or("unknown"),
            self.line,
            self.col
        )
    }
}

/// The region kinds LLVM names when it lists a construct's arguments.
#[derive(Clone, Copy, Debug)]
pub enum Region {
    DataBegin,
    DataEnd,
    DataUpdate,
    Kernel,
}

impl Region {
    fn title(self) -> &'static str {
        match self {
            // "being_mapper" is LLVM 19's own spelling.
            Region::DataBegin => "Entering OpenMP data region with being_mapper",
            Region::DataEnd => "Exiting OpenMP data region with end_mapper",
            Region::DataUpdate => "Updating data within the OpenMP data region with update_mapper",
            Region::Kernel => "Entering OpenMP kernel",
        }
    }
}

/// 0x01: the construct and each of its arguments.
pub fn arguments(
    level: u32,
    device: usize,
    region: Region,
    loc: &SourceLoc,
    sizes: &[i64],
    types: &[i64],
    names: Option<&[usize]>,
) {
    if level & info::KERNEL_ARGS == 0 {
        return;
    }
    device_info(
        device,
        format_args!(
            "{} at {loc} with {} arguments:",
            region.title(),
            sizes.len()
        ),
    );
    for (i, (&size, &ty)) in sizes.iter().zip(types).enumerate() {
        let ty = ty as u64;
        let kind = if ty & mt::TO != 0 && ty & mt::FROM != 0 {
            "tofrom"
        } else if ty & mt::TO != 0 {
            "to"
        } else if ty & mt::FROM != 0 {
            "from"
        } else if ty & mt::PRIVATE != 0 {
            "private"
        } else if ty & mt::LITERAL != 0 {
            "firstprivate"
        } else if size != 0 {
            "alloc"
        } else {
            "use_address"
        };
        let name = super::name_from_ptr(names.and_then(|n| n.get(i).copied()).unwrap_or(0));
        device_info(
            device,
            format_args!(
                "{kind}({})[{size}] {}",
                var_name(name),
                if ty & mt::IMPLICIT != 0 {
                    "(implicit)"
                } else {
                    ""
                }
            ),
        );
    }
}

/// What happened to a reference count, for the "Mapping exists" line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefAction {
    Incremented,
    Decremented,
    Reset,
    Suppressed,
}

impl RefAction {
    fn text(self) -> &'static str {
        match self {
            RefAction::Incremented => "incremented",
            RefAction::Decremented => "decremented",
            RefAction::Reset => "reset",
            RefAction::Suppressed => "update suppressed",
        }
    }
}

fn refs(r: RefCount) -> String {
    r.to_string()
}

/// 0x02: an existing mapping was found.
#[allow(clippy::too_many_arguments)]
pub fn mapping_exists(
    level: u32,
    device: usize,
    e: &Entry,
    begin: usize,
    size: usize,
    implicit: bool,
    hold: bool,
    action: RefAction,
    delayed_deletion: bool,
    name: Option<Option<&CStr>>,
) {
    if level & info::MAPPING_EXISTS == 0 {
        return;
    }
    let suffix = format!(
        " ({}{})",
        action.text(),
        if delayed_deletion {
            ", delayed deletion"
        } else {
            ""
        }
    );
    let (dyn_suffix, hold_suffix) = if hold {
        ("", suffix.as_str())
    } else {
        (suffix.as_str(), "")
    };
    let name_part = match name {
        Some(n) => format!(", Name={}", var_name(n)),
        None => String::new(),
    };
    device_info(
        device,
        format_args!(
            "Mapping exists{} with HstPtrBegin={}, TgtPtrBegin={}, Size={}, DynRefCount={}{}, HoldRefCount={}{}{}",
            if implicit { " (implicit)" } else { "" },
            Addr(begin),
            Addr(e.tgt_ptr(begin)),
            size,
            refs(e.dyn_refs),
            dyn_suffix,
            e.hold_refs,
            hold_suffix,
            name_part
        ),
    );
}

/// 0x02 for a lookup that leaves the counts alone (update, kernel arguments).
pub fn mapping_looked_up(level: u32, device: usize, e: &Entry, begin: usize, size: usize) {
    mapping_exists(
        level,
        device,
        e,
        begin,
        size,
        false,
        false,
        RefAction::Suppressed,
        false,
        None,
    );
}

/// 0x08: a new mapping.
pub fn creating(level: u32, device: usize, e: &Entry) {
    if level & info::MAPPING_CHANGED == 0 {
        return;
    }
    device_info(
        device,
        format_args!(
            "Creating new map entry with HstPtrBase={}, HstPtrBegin={}, TgtAllocBegin={}, TgtPtrBegin={}, Size={}, DynRefCount={}, HoldRefCount={}, Name={}",
            Addr(e.host_base),
            Addr(e.host_begin),
            Addr(e.tgt_alloc),
            Addr(e.tgt_begin),
            e.size(),
            refs(e.dyn_refs),
            e.hold_refs,
            var_name(e.name)
        ),
    );
}

/// 0x08: a mapping went away.
pub fn removing(level: u32, device: usize, e: &Entry) {
    if level & info::MAPPING_CHANGED == 0 {
        return;
    }
    device_info(
        device,
        format_args!(
            "Removing map entry with HstPtrBegin={}, TgtPtrBegin={}, Size={}, Name={}",
            Addr(e.host_begin),
            Addr(e.tgt_begin),
            e.size(),
            var_name(e.name)
        ),
    );
}

/// 0x20: a copy between host and device.
pub fn transfer(
    level: u32,
    device: usize,
    to_device: bool,
    host: usize,
    tgt: usize,
    size: usize,
    name: Option<&CStr>,
) {
    if level & info::DATA_TRANSFER == 0 {
        return;
    }
    if to_device {
        device_info(
            device,
            format_args!(
                "Copying data from host to device, HstPtr={}, TgtPtr={}, Size={size}, Name={}",
                Addr(host),
                Addr(tgt),
                var_name(name)
            ),
        );
    } else {
        device_info(
            device,
            format_args!(
                "Copying data from device to host, TgtPtr={}, HstPtr={}, Size={size}, Name={}",
                Addr(tgt),
                Addr(host),
                var_name(name)
            ),
        );
    }
}

/// 0x10: a kernel launch, as LLVM's plugins print it.
pub fn launch(level: u32, device: usize, kernel: &str, blocks: u32, threads: u32, mode: &str) {
    if level & info::KERNEL_GEOMETRY == 0 {
        return;
    }
    let line = format!(
        "\"PluginInterface\" device {device} info: Launching kernel {kernel} with {blocks} blocks and {threads} threads in {mode} mode\n"
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// `ompx_dump_mapping_tables` (to stdout) and the 0x04 dump after each construct (stderr).
pub fn dump_table(dev: &Device, loc: &SourceLoc, to_stdout: bool) {
    let mut text = String::new();
    let prefix = format!("omptarget device {} info: ", dev.id);
    {
        let table = lock(&dev.table);
        if table.is_empty() {
            text.push_str(&format!(
                "{prefix}OpenMP Host-Device pointer mappings table empty\n"
            ));
        } else {
            text.push_str(&format!(
                "{prefix}OpenMP Host-Device pointer mappings after block at {loc}:\n"
            ));
            text.push_str(&format!(
                "{prefix}{:<18} {:<18} {} {} {} {}\n",
                "Host Ptr", "Target Ptr", "Size (B)", "DynRefCount", "HoldRefCount", "Declaration"
            ));
            for e in table.iter() {
                let (name, file, line, col) = declaration(e.name);
                text.push_str(&format!(
                    "{prefix}{} {} {:<8} {:<11} {:<12} {name} at {file}:{line}:{col}\n",
                    Addr(e.host_begin),
                    Addr(e.tgt_begin),
                    e.size(),
                    refs(e.dyn_refs),
                    e.hold_refs,
                ));
            }
        }
    }
    if to_stdout {
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    } else {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}

/// Name, file, line and column of a map-name string (`;name;file;line;col;;`).
fn declaration(name: Option<&CStr>) -> (String, String, u32, u32) {
    let s = name.and_then(|c| c.to_str().ok()).unwrap_or("");
    let mut parts = s.split(';').skip(1);
    let n = parts.next().filter(|s| !s.is_empty()).unwrap_or("unknown");
    let file = parts.next().filter(|s| !s.is_empty()).unwrap_or("unknown");
    let line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    let col = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    (n.to_owned(), file.to_owned(), line, col)
}
