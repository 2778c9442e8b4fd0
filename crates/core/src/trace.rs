//! `LIBOMPTARGET_INFO` lines, in LLVM 19's exact words (its test suite and users parse them).

use crate::config::info;
use crate::image::Abi;
use crate::mapping::map_type as mt;
use crate::mapping::{Entry, RefCount};
use crate::message::{Addr, base_name, device_info, llvm_field, var_name};
use std::ffi::CStr;
use std::io::Write;

/// Where a construct comes from: `file:line:col` of an `ident_t`, or LLVM's `unknown:0:0`.
/// It keeps clang's `psource` string as it is and reads the fields only when something prints
/// them: every construct makes one, and parsing it cost ~700 instructions a region.
#[derive(Clone, Copy, Debug, Default)]
pub struct SourceLoc {
    psource: Psource,
}

#[derive(Clone, Copy, Debug, Default)]
enum Psource {
    #[default]
    None,
    Text(&'static str),
    /// A NUL-terminated C string that lives as long as the program (clang's `ident_t`).
    C(usize),
}

impl SourceLoc {
    /// The location LLVM gives dumps it makes on its own (`ompx_dump_mapping_tables`, the
    /// dump at teardown): `;libomptarget;libomptarget;0;0;;`.
    pub const RUNTIME: SourceLoc = SourceLoc {
        psource: Psource::Text(";libomptarget;libomptarget;0;0;;"),
    };

    /// Clang's `;file;function;line;col;;`, read as LLVM's `SourceInfo(ident_t *)` does.
    pub fn from_psource(psource: &'static str) -> Self {
        Self {
            psource: Psource::Text(psource),
        }
    }

    /// The same from the `ident_t`'s C string, without reading it yet.
    ///
    /// # Safety
    /// `psource` is null or a NUL-terminated string that lives as long as the program.
    pub unsafe fn from_c_psource(psource: *const std::ffi::c_char) -> Self {
        Self {
            psource: if psource.is_null() {
                Psource::None
            } else {
                Psource::C(psource as usize)
            },
        }
    }

    fn text(&self) -> Option<&'static str> {
        match self.psource {
            Psource::None => None,
            Psource::Text(t) => Some(t),
            // SAFETY: `from_c_psource`'s contract: a NUL-terminated string for the program's
            // life.
            Psource::C(p) => unsafe { CStr::from_ptr(p as *const std::ffi::c_char) }
                .to_str()
                .ok(),
        }
    }

    /// The file's base name (LLVM's `SourceInfo` drops the path), line and column, read from
    /// the string once.
    fn fields(&self) -> (Option<&'static str>, u32, u32) {
        match self.text() {
            None => (None, 0, 0),
            Some(t) => (
                Some(base_name(llvm_field(t, 0))),
                leading_int(llvm_field(t, 2)),
                leading_int(llvm_field(t, 3)),
            ),
        }
    }

    /// Whether the location is known (LLVM's `SourceInfo::isAvailible`).
    pub fn is_known(&self) -> bool {
        let (_, line, col) = self.fields();
        line != 0 || col != 0
    }
}

impl std::fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (file, line, col) = self.fields();
        write!(f, "{}:{line}:{col}", file.unwrap_or("unknown"))
    }
}

/// `std::stoi` on a location field: leading blanks, a sign and digits (0 where LLVM's would
/// throw).
fn leading_int(s: &str) -> u32 {
    let t = s.trim_start();
    let digits = t.strip_prefix('+').unwrap_or(t);
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().unwrap_or(0)
}

/// The region kinds LLVM names when it lists a construct's arguments.
#[derive(Clone, Copy, Debug)]
pub enum Region {
    DataBegin,
    DataEnd,
    DataUpdate,
    /// The `nowait` forms of the three data constructs (`__tgt_target_data_*_nowait_mapper`).
    DataBeginNowait,
    DataEndNowait,
    DataUpdateNowait,
    Kernel,
}

impl Region {
    fn title(self) -> &'static str {
        match self {
            // "being_mapper" is LLVM 19's own spelling.
            Region::DataBegin => "Entering OpenMP data region with being_mapper",
            Region::DataEnd => "Exiting OpenMP data region with end_mapper",
            Region::DataUpdate => "Updating data within the OpenMP data region with update_mapper",
            Region::DataBeginNowait => "Entering OpenMP data region with being_nowait_mapper",
            Region::DataEndNowait => "Exiting OpenMP data region with end_nowait_mapper",
            Region::DataUpdateNowait => {
                "Updating data within the OpenMP data region with update_nowait_mapper"
            }
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
        // ATTACH bits come from clang 22 only; LLVM 22 names them first.
        let kind = if ty & mt::ATTACH != 0 && ty & mt::ALWAYS != 0 {
            "attach:always"
        } else if ty & mt::ATTACH != 0 {
            "attach"
        } else if ty & mt::TO != 0 && ty & mt::FROM != 0 {
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
        let name =
            crate::message::name_from_ptr(names.and_then(|n| n.get(i).copied()).unwrap_or(0));
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

pub(crate) fn refs(r: RefCount) -> String {
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
    // LLVM adds "delayed deletion" to a count it decremented or reset, never to a suppressed
    // update.
    let delayed_deletion = delayed_deletion && action != RefAction::Suppressed;
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

/// 0x08: a mapping went away. `size` is that of the list item whose exit removed it, which
/// LLVM prints (not the entry's own size).
pub fn removing(level: u32, device: usize, e: &Entry, size: usize) {
    if level & info::MAPPING_CHANGED == 0 {
        return;
    }
    device_info(
        device,
        format_args!(
            "Removing map entry with HstPtrBegin={}, TgtPtrBegin={}, Size={size}, Name={}",
            Addr(e.host_begin),
            Addr(e.tgt_begin),
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

/// 0x40: a list item with no device counterpart (LLVM's `OMP_INFOTYPE_EMPTY_MAPPING`, e.g.
/// `use_device_ptr` of a pointer nothing is mapped at).
pub fn empty_mapping(level: u32, device: usize, name: Option<&CStr>) {
    if level & info::EMPTY_MAPPING == 0 {
        return;
    }
    device_info(
        device,
        format_args!(
            "variable {} does not have a valid device counterpart",
            var_name(name)
        ),
    );
}

/// 0x10: a kernel launch, as LLVM's plugins print it.
///
/// LLVM 22 prints all three dimensions (`[x,y,z]`); the second and third are the construct's
/// own, at least 1.
#[allow(clippy::too_many_arguments)]
pub fn launch(
    level: u32,
    device: usize,
    abi: Abi,
    kernel: &str,
    blocks: u32,
    threads: u32,
    mode: &str,
    config: &omptarget_plugin::LaunchConfig,
) {
    if level & info::KERNEL_GEOMETRY == 0 {
        return;
    }
    let line = match abi {
        Abi::Llvm19 => format!(
            "\"PluginInterface\" device {device} info: Launching kernel {kernel} with {blocks} blocks and {threads} threads in {mode} mode\n"
        ),
        Abi::Llvm22 => {
            let [_, by, bz] = config.num_teams.map(|v| v.max(1));
            let [_, ty, tz] = config.thread_limit.map(|v| v.max(1));
            format!(
                "\"PluginInterface\" device {device} info: Launching kernel {kernel} with [{blocks},{by},{bz}] blocks and [{threads},{ty},{tz}] threads in {mode} mode\n"
            )
        }
    };
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Name, file, line and column of a map-name string, as LLVM's `SourceInfo(map_var_info_t)`
/// reads it: no string is `;unknown;unknown;0;0;;`, a string without `;` (a global's symbol
/// name) is `;NAME;unknown;0;0;;`, and the file loses its path.
pub(crate) fn declaration(name: Option<&CStr>) -> (String, String, u32, u32) {
    let text = match name.map(|c| c.to_string_lossy()) {
        None => ";unknown;unknown;0;0;;".to_owned(),
        Some(s) if !s.contains(';') => format!(";{s};unknown;0;0;;"),
        Some(s) => s.into_owned(),
    };
    (
        llvm_field(&text, 0).to_owned(),
        base_name(llvm_field(&text, 1)).to_owned(),
        leading_int(llvm_field(&text, 2)),
        leading_int(llvm_field(&text, 3)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_print_the_base_name_as_llvm_does() {
        let l = SourceLoc::from_psource(";/home/u/src/prog.c;main;64;1;;");
        assert_eq!(l.to_string(), "prog.c:64:1");
        let l = SourceLoc::from_psource(";prog.c;main;7;3;;");
        assert_eq!(l.to_string(), "prog.c:7:3");
        let l = SourceLoc::from_psource(";unknown;unknown;0;0;;");
        assert_eq!(l.to_string(), "unknown:0:0");
        assert!(!l.is_known());
    }

    #[test]
    fn declarations_read_as_llvm_source_info() {
        let d = |s: Option<&CStr>| declaration(s);
        assert_eq!(
            d(Some(c";a[0:n];/tmp/x/prog.c;12;7;;")),
            ("a[0:n]".into(), "prog.c".into(), 12, 7)
        );
        assert_eq!(d(Some(c"gv")), ("gv".into(), "unknown".into(), 0, 0));
        assert_eq!(d(None), ("unknown".into(), "unknown".into(), 0, 0));
    }

    #[test]
    fn names_read_as_llvm_get_name_from_mapping() {
        assert_eq!(var_name(Some(c";s.p[0:4];f.c;8;12;;")), "s.p[0:4]");
        assert_eq!(var_name(Some(c"gv")), "gv");
        assert_eq!(var_name(Some(c";x")), "x");
        assert_eq!(var_name(Some(c";;f.c;1;1;;")), "");
        assert_eq!(var_name(None), "unknown");
    }
}
