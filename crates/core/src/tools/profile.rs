//! `LIBOMPTARGET_PROFILE=FILE`: a Chrome/Perfetto trace (JSON), a subscriber of the tool
//! events (see `mod.rs`).
//!
//! As LLVM 19's (its `TimeTrace` profiler, process `libomptarget`): complete events (`"ph":
//! "X"`) on the host thread that ran them, named as LLVM names them (`Runtime: target exe`,
//! `Runtime: Data Copy`, `Kernel Target`, `HostToDev`, `DevToHost`), with the construct's
//! location string (`;file;function;line;col;;`) and a detail in `args.detail`; events
//! shorter than `LIBOMPTARGET_PROFILE_GRANULARITY` µs (default 500) left out; a `Total NAME`
//! event per name (count, total, average); `beginningOfTime`. Beyond it: every thread's events
//! (LLVM's profiler records only the thread that started it), allocations and frees, and a
//! process per device with a lane per queue, holding each copy, kernel, allocation and free
//! as it ran on the device (device timestamps: CUDA events on a GPU, the host clock on the
//! host device), so overlap and stream-ordered frees show on the timeline.
//!
//! The file is written when the last image goes away (program exit), and again if images
//! come and go again. `OMPTARGET_RS_PROFILE_SUMMARY=FILE` also writes the table `omptarget
//! run --summary` prints: per construct kind and location, and per device operation.

use super::{
    ConstructKind, DataOp, DataOpKind, Endpoint, RecordKind, Region, Submit, Subscriber,
    TraceRecord, thread_id,
};
use crate::device::{Device, lock};
use crate::message::{json_string, llvm_field};
use omptarget_plugin::host_clock_ns;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

/// What a host event's `args.detail` says after the location (formatted when the trace is
/// written: events are recorded without allocating).
#[derive(Clone, Copy)]
enum Detail {
    Device(i32),
    Size(usize),
    Freed(usize),
    Kernel(&'static str, u32),
}

/// A host-side scope on a thread.
struct HostEvent {
    name: &'static str,
    loc: usize,
    detail: Detail,
    tid: u64,
    start: u64,
    dur: u64,
}

/// An operation as it ran on a device queue.
struct DeviceEvent {
    device: i32,
    lane: u32,
    kind: RecordKind,
    /// The construct's location string (0: none).
    loc: usize,
    in_construct: bool,
    start: u64,
    dur: u64,
}

impl Detail {
    fn text(self, loc: usize) -> String {
        let at = psource(loc);
        match self {
            Detail::Device(d) => format!("{at}Device={d}"),
            Detail::Size(b) => format!("{at}Size={b}B"),
            Detail::Freed(p) => format!("{at}TgtPtr={p:#x}"),
            Detail::Kernel(k, teams) => format!("{at}Kernel={k};NumTeams={teams}"),
        }
    }
}

/// A device event's name and arguments.
fn device_text(e: &DeviceEvent) -> (String, String) {
    let at = if e.in_construct {
        format!(",\"construct\":{}", json_string(&file_line(e.loc)))
    } else {
        String::new()
    };
    match &e.kind {
        RecordKind::DataOp { kind, bytes, .. } => (
            device_op_name(*kind).to_owned(),
            format!("\"bytes\":{bytes}{at}"),
        ),
        RecordKind::Kernel {
            requested_teams,
            granted_teams,
            name,
        } => (
            name.to_string(),
            format!("\"teams\":{granted_teams},\"requested teams\":{requested_teams}{at}"),
        ),
    }
}

fn device_op_name(kind: DataOpKind) -> &'static str {
    match kind {
        DataOpKind::TransferToDevice => "copy host to device",
        DataOpKind::TransferFromDevice => "copy device to host",
        DataOpKind::Alloc => "alloc",
        DataOpKind::Delete => "free",
        DataOpKind::Associate => "associate",
        DataOpKind::Disassociate => "disassociate",
    }
}

/// What a construct has done so far (between its begin and end events).
#[derive(Default, Clone, Copy)]
struct Open {
    start: u64,
    tid: u64,
    to_device: u64,
    from_device: u64,
    allocs: u64,
    alloc_bytes: u64,
}

/// A device operation of the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Op {
    Data(DataOpKind),
    Kernel(&'static str),
}

impl Op {
    fn label(self) -> String {
        match self {
            Op::Data(k) => device_op_name(k).to_owned(),
            Op::Kernel(name) => format!("kernel {name}"),
        }
    }
}

/// Summary rows per (construct kind, `file:line`) and per (device, operation).
pub type ConstructRows = Vec<((String, String), Row)>;
pub type DeviceRows = Vec<((i32, String), Row)>;
/// A device lane: (device, queue, thread of a queue-less operation).
type Lane = (i32, Option<usize>, u64);

/// One row of the summary: a construct kind at a location, or a device operation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    pub count: u64,
    pub total_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub to_device: u64,
    pub from_device: u64,
    pub allocs: u64,
    pub alloc_bytes: u64,
}

impl Row {
    fn add(&mut self, ns: u64) {
        self.min_ns = if self.count == 0 {
            ns
        } else {
            self.min_ns.min(ns)
        };
        self.max_ns = self.max_ns.max(ns);
        self.count += 1;
        self.total_ns += ns;
    }
}

#[derive(Default)]
struct State {
    host: Vec<HostEvent>,
    device: Vec<DeviceEvent>,
    /// Totals per event name (LLVM's `Total NAME` events): count, nanoseconds.
    totals: HashMap<&'static str, (u64, u64)>,
    open_constructs: HashMap<u64, Open>,
    open_ops: HashMap<u64, (u64, u64)>,
    open_submits: HashMap<u64, (u64, u64)>,
    /// Construct id → location string, for device events (which complete later).
    locations: HashMap<u64, usize>,
    /// (construct kind, file:line) → row.
    constructs: HashMap<(&'static str, String), Row>,
    /// (device, operation) → row (device time).
    device_ops: HashMap<(i32, Op), Row>,
    devices: HashMap<i32, String>,
    lanes: HashMap<Lane, u32>,
    threads: Vec<u64>,
}

/// The profiler (one per runtime, when `LIBOMPTARGET_PROFILE` is set).
pub struct Profiler {
    path: String,
    summary: Option<String>,
    granularity_ns: u64,
    origin: u64,
    origin_epoch_us: u64,
    state: Mutex<State>,
}

fn kind_label(k: ConstructKind, nowait: bool) -> &'static str {
    match (k, nowait) {
        (ConstructKind::Target, false) => "target",
        (ConstructKind::Target, true) => "target nowait",
        (ConstructKind::EnterData, false) => "target enter data",
        (ConstructKind::EnterData, true) => "target enter data nowait",
        (ConstructKind::ExitData, false) => "target exit data",
        (ConstructKind::ExitData, true) => "target exit data nowait",
        (ConstructKind::Update, false) => "target update",
        (ConstructKind::Update, true) => "target update nowait",
    }
}

/// The `ident_t` string at `loc` (LLVM's event detail starts with it).
fn psource(loc: usize) -> &'static str {
    if loc == 0 {
        return ";unknown;unknown;0;0;;";
    }
    // SAFETY: `loc` is clang's psource, a NUL-terminated string that lives as long as the
    // program (Region::loc).
    unsafe { std::ffi::CStr::from_ptr(loc as *const std::ffi::c_char) }
        .to_str()
        .unwrap_or(";unknown;unknown;0;0;;")
}

/// `file:line` of a location string.
fn file_line(loc: usize) -> String {
    let s = psource(loc);
    let file = crate::message::base_name(llvm_field(s, 0));
    format!("{file}:{}", llvm_field(s, 2))
}

/// Where in the program a routine was called from: `object+offset` (what `addr2line -e
/// object offset` resolves).
fn code_location(codeptr: usize) -> String {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables; `info` is a valid out-parameter.
    if codeptr != 0
        && unsafe { libc::dladdr(codeptr as *const libc::c_void, &mut info) } != 0
        && !info.dli_fname.is_null()
    {
        // SAFETY: dladdr gave a NUL-terminated path that lives while the object is loaded.
        let file = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy();
        return format!(
            "{}+{:#x}",
            crate::message::base_name(&file),
            codeptr.wrapping_sub(info.dli_fbase as usize)
        );
    }
    format!("{codeptr:#x}")
}

fn op_name(kind: DataOpKind) -> &'static str {
    match kind {
        DataOpKind::Alloc => "Alloc",
        DataOpKind::TransferToDevice => "HostToDev",
        DataOpKind::TransferFromDevice => "DevToHost",
        DataOpKind::Delete => "Free",
        DataOpKind::Associate => "Associate",
        DataOpKind::Disassociate => "Disassociate",
    }
}

/// Nanoseconds as the microseconds a trace holds.
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

impl Profiler {
    /// `granularity_us`: `LIBOMPTARGET_PROFILE_GRANULARITY`.
    pub fn new(path: String, summary: Option<String>, granularity_us: u64) -> Self {
        let epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        Self {
            path,
            summary,
            granularity_ns: granularity_us.saturating_mul(1000),
            origin: host_clock_ns(),
            origin_epoch_us: epoch,
            state: Mutex::new(State::default()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn host_event(
        &self,
        s: &mut State,
        name: &'static str,
        loc: usize,
        detail: Detail,
        tid: u64,
        start: u64,
    ) {
        let end = host_clock_ns();
        let dur = end.saturating_sub(start);
        let t = s.totals.entry(name).or_insert((0, 0));
        t.0 += 1;
        t.1 += dur;
        if !s.threads.contains(&tid) {
            s.threads.push(tid);
        }
        if dur >= self.granularity_ns {
            s.host.push(HostEvent {
                name,
                loc,
                detail,
                tid,
                start,
                dur,
            });
        }
    }

    /// The summary rows: per (construct kind, location), and per (device, operation).
    pub fn summary(&self) -> (ConstructRows, DeviceRows) {
        let s = lock(&self.state);
        let mut c: ConstructRows = s
            .constructs
            .iter()
            .map(|((k, l), r)| ((k.to_string(), l.clone()), r.clone()))
            .collect();
        c.sort_by(|a, b| b.1.total_ns.cmp(&a.1.total_ns).then(a.0.cmp(&b.0)));
        let mut d: DeviceRows = s
            .device_ops
            .iter()
            .map(|(k, r)| ((k.0, k.1.label()), r.clone()))
            .collect();
        d.sort_by(|a, b| b.1.total_ns.cmp(&a.1.total_ns).then(a.0.cmp(&b.0)));
        (c, d)
    }

    /// The trace as JSON.
    pub fn trace_json(&self) -> String {
        let s = lock(&self.state);
        let pid = std::process::id();
        let rel = |t: u64| t.saturating_sub(self.origin);
        let mut out = String::from("{\"traceEvents\":[\n");
        let mut first = true;
        let mut push = |out: &mut String, e: String| {
            if !first {
                out.push_str(",\n");
            }
            first = false;
            out.push_str(&e);
        };
        for e in &s.host {
            let mut ev = format!(
                "{{\"pid\":{pid},\"tid\":{},\"ts\":{},\"ph\":\"X\",\"dur\":{},\"name\":{}",
                e.tid,
                us(rel(e.start)),
                us(e.dur),
                json_string(e.name)
            );
            let _ = write!(
                ev,
                ",\"args\":{{\"detail\":{}}}",
                json_string(&e.detail.text(e.loc))
            );
            ev.push('}');
            push(&mut out, ev);
        }
        // Devices are processes after the host's, one lane (thread) per queue.
        let device_pid = |d: i32| u64::from(pid) * 100 + 1 + d.max(0) as u64;
        for e in &s.device {
            let (name, args) = device_text(e);
            push(
                &mut out,
                format!(
                    "{{\"pid\":{},\"tid\":{},\"ts\":{},\"ph\":\"X\",\"dur\":{},\"name\":{},\"cat\":\"device\",\"args\":{{{}}}}}",
                    device_pid(e.device),
                    e.lane,
                    us(rel(e.start)),
                    us(e.dur),
                    json_string(&name),
                    args
                ),
            );
        }
        // LLVM's totals: one event per name, largest first, each on a thread of its own.
        let mut totals: Vec<(&&str, &(u64, u64))> = s.totals.iter().collect();
        totals.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        for (i, (name, (count, ns))) in totals.into_iter().enumerate() {
            push(
                &mut out,
                format!(
                    "{{\"pid\":{pid},\"tid\":{},\"ph\":\"X\",\"ts\":0,\"dur\":{},\"name\":{},\"args\":{{\"count\":{count},\"avg ms\":{}}}}}",
                    // Away from real thread ids (LLVM uses its own id plus one, and up).
                    i32::MAX as u64 - i as u64,
                    us(*ns),
                    json_string(&format!("Total {name}")),
                    ns / count.max(&1) / 1_000_000
                ),
            );
        }
        let program = std::env::args()
            .next()
            .map(|a| crate::message::base_name(&a).to_owned())
            .unwrap_or_default();
        push(
            &mut out,
            format!(
                "{{\"cat\":\"\",\"pid\":{pid},\"tid\":{pid},\"ts\":0,\"ph\":\"M\",\"name\":\"process_name\",\"args\":{{\"name\":\"libomptarget\"}}}}"
            ),
        );
        for &t in &s.threads {
            let name = if t == u64::from(pid) {
                program.clone()
            } else {
                format!("thread {t}")
            };
            push(
                &mut out,
                format!(
                    "{{\"cat\":\"\",\"pid\":{pid},\"tid\":{t},\"ts\":0,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
                    json_string(&name)
                ),
            );
        }
        let mut devices: Vec<(&i32, &String)> = s.devices.iter().collect();
        devices.sort();
        for (d, kind) in devices {
            push(
                &mut out,
                format!(
                    "{{\"cat\":\"\",\"pid\":{},\"tid\":0,\"ts\":0,\"ph\":\"M\",\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
                    device_pid(*d),
                    json_string(&format!("device {d} ({kind})"))
                ),
            );
            push(
                &mut out,
                format!(
                    "{{\"cat\":\"\",\"pid\":{},\"tid\":0,\"ts\":0,\"ph\":\"M\",\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":{}}}}}",
                    device_pid(*d),
                    1 + d
                ),
            );
        }
        let mut lanes: Vec<(&Lane, &u32)> = s.lanes.iter().collect();
        lanes.sort_by_key(|(k, v)| (k.0, **v));
        for ((d, q, tid), lane) in lanes {
            let name = match q {
                Some(q) => format!("queue {q:#x}"),
                None => format!("no queue (thread {tid})"),
            };
            push(
                &mut out,
                format!(
                    "{{\"cat\":\"\",\"pid\":{},\"tid\":{lane},\"ts\":0,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
                    device_pid(*d),
                    json_string(&name)
                ),
            );
        }
        let _ = write!(
            out,
            "\n],\n\"beginningOfTime\":{},\n\"displayTimeUnit\":\"ns\"}}\n",
            self.origin_epoch_us
        );
        out
    }

    /// The summary as tab-separated rows (`omptarget run --summary` prints them).
    pub fn summary_tsv(&self) -> String {
        let (c, d) = self.summary();
        let mut o = String::from(
            "# kind\tname\tlocation\tcount\ttotal_ns\tmin_ns\tmax_ns\tto_device\tfrom_device\tallocs\talloc_bytes\n",
        );
        // A row's numbers, in the header's order.
        let numbers = |o: &mut String, r: &Row| {
            let _ = writeln!(
                o,
                "\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                r.count,
                r.total_ns,
                r.min_ns,
                r.max_ns,
                r.to_device,
                r.from_device,
                r.allocs,
                r.alloc_bytes
            );
        };
        for ((k, l), r) in c {
            let _ = write!(o, "construct\t{k}\t{l}");
            numbers(&mut o, &r);
        }
        for ((dev, op), r) in d {
            let _ = write!(o, "device\t{op}\tdevice {dev}");
            numbers(&mut o, &r);
        }
        o
    }

    /// Writes the trace (and the summary) files.
    pub fn write(&self) {
        if let Err(e) = std::fs::write(&self.path, self.trace_json()) {
            crate::message::report(format_args!(
                "LIBOMPTARGET_PROFILE: cannot write {}: {e}",
                self.path
            ));
        }
        if let Some(p) = &self.summary
            && let Err(e) = std::fs::write(p, self.summary_tsv())
        {
            crate::message::report(format_args!(
                "OMPTARGET_RS_PROFILE_SUMMARY: cannot write {p}: {e}"
            ));
        }
    }
}

impl Subscriber for Profiler {
    fn device_initialize(&self, device: &Arc<Device>) {
        let kind = device
            .backend()
            .map(|b| b.compute_unit_kind())
            .unwrap_or_default();
        lock(&self.state).devices.insert(device.id as i32, kind);
    }

    fn construct(&self, endpoint: Endpoint, region: &Region) {
        let now = host_clock_ns();
        let mut s = lock(&self.state);
        match endpoint {
            Endpoint::Begin => {
                s.locations.insert(region.id, region.loc);
                s.open_constructs.insert(
                    region.id,
                    Open {
                        start: now,
                        tid: thread_id(),
                        ..Open::default()
                    },
                );
            }
            Endpoint::End => {
                let Some(o) = s.open_constructs.remove(&region.id) else {
                    return;
                };
                let name = match region.kind {
                    ConstructKind::Target => "Runtime: target exe",
                    _ => "Runtime: Data Copy",
                };
                self.host_event(
                    &mut s,
                    name,
                    region.loc,
                    Detail::Device(region.device),
                    o.tid,
                    o.start,
                );
                let row = s
                    .constructs
                    .entry((
                        kind_label(region.kind, region.nowait),
                        file_line(region.loc),
                    ))
                    .or_default();
                row.add(now.saturating_sub(o.start));
                row.to_device += o.to_device;
                row.from_device += o.from_device;
                row.allocs += o.allocs;
                row.alloc_bytes += o.alloc_bytes;
            }
        }
    }

    fn data_op(&self, endpoint: Endpoint, region: Option<&Region>, op: &mut DataOp) {
        let now = host_clock_ns();
        let mut s = lock(&self.state);
        match endpoint {
            Endpoint::Begin => {
                s.open_ops.insert(op.id, (now, thread_id()));
            }
            Endpoint::End => {
                let Some((start, tid)) = s.open_ops.remove(&op.id) else {
                    return;
                };
                let loc = region.map_or(0, |r| r.loc);
                let detail = match op.kind {
                    // A free names the device address, not a size.
                    DataOpKind::Delete => Detail::Freed(op.src),
                    _ => Detail::Size(op.bytes),
                };
                self.host_event(&mut s, op_name(op.kind), loc, detail, tid, start);
                let key = match region {
                    Some(r) => {
                        if let Some(o) = s.open_constructs.get_mut(&r.id) {
                            match op.kind {
                                DataOpKind::TransferToDevice => o.to_device += op.bytes as u64,
                                DataOpKind::TransferFromDevice => o.from_device += op.bytes as u64,
                                DataOpKind::Alloc => {
                                    o.allocs += 1;
                                    o.alloc_bytes += op.bytes as u64;
                                }
                                _ => {}
                            }
                            return;
                        }
                        (kind_label(r.kind, r.nowait), file_line(r.loc))
                    }
                    None => ("omp_target_* routines", code_location(op.codeptr)),
                };
                let row = s.constructs.entry(key).or_default();
                match op.kind {
                    DataOpKind::TransferToDevice => row.to_device += op.bytes as u64,
                    DataOpKind::TransferFromDevice => row.from_device += op.bytes as u64,
                    DataOpKind::Alloc => {
                        row.allocs += 1;
                        row.alloc_bytes += op.bytes as u64;
                    }
                    _ => {}
                }
                if region.is_none() {
                    row.add(now.saturating_sub(start));
                }
            }
        }
    }

    fn submit(&self, endpoint: Endpoint, region: &Region, submit: &mut Submit) {
        let now = host_clock_ns();
        let mut s = lock(&self.state);
        match endpoint {
            Endpoint::Begin => {
                s.open_submits.insert(submit.id, (now, thread_id()));
            }
            Endpoint::End => {
                if let Some((start, tid)) = s.open_submits.remove(&submit.id) {
                    let detail = Detail::Kernel(submit.kernel, submit.requested_teams);
                    self.host_event(&mut s, "Kernel Target", region.loc, detail, tid, start);
                }
            }
        }
    }

    fn traces(&self, _device: i32) -> bool {
        true
    }

    fn record(&self, r: &TraceRecord) {
        let mut s = lock(&self.state);
        let n = s.lanes.len() as u32;
        let lane = *s
            .lanes
            .entry((
                r.device,
                r.queue,
                if r.queue.is_some() { 0 } else { r.thread_id },
            ))
            .or_insert(n);
        let loc = s.locations.get(&r.region_id).copied().unwrap_or(0);
        let dur = r.end.saturating_sub(r.start);
        let (op, bytes) = match &r.kind {
            RecordKind::DataOp { kind, bytes, .. } => (Op::Data(*kind), *bytes as u64),
            RecordKind::Kernel { name, .. } => (Op::Kernel(name), 0),
        };
        let row = s.device_ops.entry((r.device, op)).or_default();
        row.add(dur);
        match op {
            Op::Data(DataOpKind::TransferToDevice) => row.to_device += bytes,
            Op::Data(DataOpKind::TransferFromDevice) => row.from_device += bytes,
            Op::Data(DataOpKind::Alloc) => {
                row.allocs += 1;
                row.alloc_bytes += bytes;
            }
            _ => {}
        }
        s.device.push(DeviceEvent {
            device: r.device,
            lane,
            kind: r.kind.clone(),
            loc,
            in_construct: r.region_id != 0,
            start: r.start,
            dur,
        });
    }

    fn finish(&self) {
        self.write();
    }
}
