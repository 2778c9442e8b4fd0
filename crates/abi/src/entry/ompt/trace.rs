//! Device tracing (OpenMP 5.2 §19.6.2, the "tracing" entry points), which LLVM 19 lacks: a
//! tool finds the entry points through the `lookup` function it receives in
//! `ompt_callback_device_initialize`, chooses the record types (`ompt_set_trace_ompt`),
//! starts tracing with a buffer-request and a buffer-complete callback (`ompt_start_trace`),
//! and reads `ompt_record_ompt_t` records out of its completed buffers.
//!
//! Records: data operations (`ompt_callback_target_data_op`) and kernels
//! (`ompt_callback_target_submit`), with device timestamps (`time` = start, `end_time`) in
//! nanoseconds of the host's monotonic clock (`ompt_translate_time` converts them to
//! `omp_get_wtime`'s seconds). CUDA operations are timed by events recorded around them on
//! their stream, host-device ones by the host clock. A record is written once its queue's work
//! has completed, so the records of one queue are in the order the device ran them.
//! `thread_id` is the OS thread id (`gettid`) of the thread that issued the operation;
//! `target_id` and `host_op_id` are what the tool set in the EMI callbacks when it registered
//! them, else the runtime's ids (the ones the non-EMI callbacks carry).
//!
//! Buffers: the runtime asks for one when it has a record to write and none is open; a buffer
//! is completed (with `buffer_owned` 1: the runtime is done with it) when the next record does
//! not fit, at `ompt_flush_trace`, `ompt_stop_trace` and when the device is finalised. A
//! buffer too small for one record (0 bytes, or a null buffer) is not used: the record is
//! dropped and the next record asks again. Buffers come back in the order they were closed,
//! one completion callback at a time, so each thread's records reach the tool in the order
//! that thread's operations completed; `ompt_flush_trace` and `ompt_stop_trace` return once
//! what they closed has been handed back (except when called from a completion callback:
//! those buffers follow it). No runtime lock is held while a tool callback runs.

use super::{InterfaceFn, LIBOMP, SUBSCRIBER};
use omptarget_core::tools::{DataOpKind, RecordKind, TraceRecord};
use std::cell::Cell;
use std::collections::VecDeque;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

type BufferRequestFn = unsafe extern "C" fn(c_int, *mut *mut c_void, *mut usize);
type BufferCompleteFn = unsafe extern "C" fn(c_int, *mut c_void, usize, u64, c_int);

/// `ompt_record_target_data_op_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RecordDataOp {
    host_op_id: u64,
    optype: c_int,
    src_addr: *mut c_void,
    src_device_num: c_int,
    dest_addr: *mut c_void,
    dest_device_num: c_int,
    bytes: usize,
    end_time: u64,
    codeptr_ra: *const c_void,
}

/// `ompt_record_target_kernel_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RecordKernel {
    host_op_id: u64,
    requested_num_teams: c_uint,
    granted_num_teams: c_uint,
    end_time: u64,
}

/// The union of `ompt_record_ompt_t` (its largest member is 72 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
union RecordUnion {
    data_op: RecordDataOp,
    kernel: RecordKernel,
    size: [u64; 9],
}

/// `ompt_record_ompt_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RecordOmpt {
    kind: c_int,
    time: u64,
    thread_id: u64,
    target_id: u64,
    record: RecordUnion,
}

const RECORD: usize = std::mem::size_of::<RecordOmpt>();
const _: () = assert!(RECORD == 104);
const _: () = assert!(std::mem::offset_of!(RecordOmpt, record) == 32);
const _: () = assert!(std::mem::size_of::<RecordDataOp>() == 72);

// ompt_callbacks_t codes of the record types, and ompt_set_result_t.
const TARGET: u32 = 8;
const TARGET_DATA_OP: u32 = 9;
const TARGET_SUBMIT: u32 = 10;
const TARGET_EMI: u32 = 33;
const TARGET_DATA_OP_EMI: u32 = 34;
const TARGET_SUBMIT_EMI: u32 = 35;
const SET_NEVER: c_int = 1;
const SET_ALWAYS: c_int = 5;
/// `ompt_record_ompt`.
const RECORD_OMPT: c_int = 1;

/// Record types a tool enabled (bits).
const DATA_OPS: u32 = 1;
const KERNELS: u32 = 2;

/// A tool's buffer being filled.
struct Buffer {
    ptr: *mut u8,
    bytes: usize,
    used: usize,
}

// SAFETY: the buffer belongs to the tool, which handed it over for us to fill; we touch it
// under the device's trace lock only.
unsafe impl Send for Buffer {}

#[derive(Default)]
struct TraceState {
    request: Option<BufferRequestFn>,
    complete: Option<BufferCompleteFn>,
    buffer: Option<Buffer>,
    /// A buffer another thread asked for while one was open, used when that one fills.
    spare: Option<Buffer>,
    /// Buffers closed and not yet handed back, oldest first, each with the callback that
    /// gets it (a `stop_trace` inside a completion callback must not lose them).
    closed: VecDeque<(Buffer, BufferCompleteFn)>,
    /// A thread is handing `closed` back to the tool (it empties the queue before it stops).
    /// Whenever the lock is free and this is set, exactly one buffer is in the tool's hands.
    delivering: bool,
    /// Buffers handed back since tracing began.
    delivered: u64,
    /// Threads in a flush or stop waiting for buffers queued before them.
    waiting: u32,
}

impl TraceState {
    /// Queues a closed buffer for the tool (dropped when tracing has stopped: nobody could
    /// read it).
    fn close(&mut self, b: Buffer) {
        if let Some(complete) = self.complete {
            self.closed.push_back((b, complete));
        }
    }

    /// The value `delivered` reaches once every buffer closed so far is handed back (those
    /// queued, and the one in the tool's hands).
    fn delivered_once_drained(&self) -> u64 {
        self.delivered + self.closed.len() as u64 + u64::from(self.delivering)
    }
}

/// The tracing state of one device.
#[derive(Default)]
pub(crate) struct DeviceTrace {
    /// Started and not paused.
    running: AtomicBool,
    /// `DATA_OPS | KERNELS` as `ompt_set_trace_ompt` enabled them.
    types: AtomicU32,
    /// Records dropped because the tool gave no room for them.
    dropped: AtomicU64,
    state: Mutex<TraceState>,
    /// Signalled each time a buffer has been handed back.
    handed_back: Condvar,
}

thread_local! {
    /// This thread is inside a buffer-complete callback (a flush it makes there must not
    /// wait for the delivery it is part of).
    static IN_COMPLETION: Cell<bool> = const { Cell::new(false) };
}

impl DeviceTrace {
    /// Whether operations on the device are to be timed (checked once per construct).
    pub(crate) fn on(&self) -> bool {
        self.running.load(Ordering::Acquire) && self.types.load(Ordering::Relaxed) != 0
    }

    fn state(&self) -> MutexGuard<'_, TraceState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes one record (the device's operation completed).
    pub(crate) fn push(&self, r: &TraceRecord, device: i32, ids: IdSource) {
        let wanted = match r.kind {
            RecordKind::DataOp { .. } => DATA_OPS,
            RecordKind::Kernel { .. } => KERNELS,
        };
        if !self.running.load(Ordering::Acquire) || self.types.load(Ordering::Relaxed) & wanted == 0
        {
            return;
        }
        let record = encode(r, ids);
        loop {
            let request = {
                let mut st = self.state();
                if st.request.is_none() {
                    return; // stopped meanwhile
                }
                if let Some(b) = st.buffer.as_mut()
                    && b.used + RECORD <= b.bytes
                {
                    // SAFETY: the tool's buffer has `bytes` bytes; the record fits at `used`.
                    unsafe {
                        std::ptr::write_unaligned(b.ptr.add(b.used).cast::<RecordOmpt>(), record)
                    };
                    b.used += RECORD;
                    return;
                }
                // No room: the open buffer (if any) is complete, queued for the tool in the
                // same critical section that closes it; a spare takes its place.
                if let Some(full) = st.buffer.take() {
                    st.close(full);
                }
                st.buffer = st.spare.take();
                let request = if st.buffer.is_some() {
                    None
                } else {
                    st.request
                };
                self.deliver(device, st, false);
                request
            };
            if let Some(request) = request {
                let mut ptr: *mut c_void = std::ptr::null_mut();
                let mut bytes = 0usize;
                // SAFETY: the tool's buffer-request callback with valid out-parameters.
                unsafe { request(device, &mut ptr, &mut bytes) };
                if ptr.is_null() || bytes < RECORD {
                    // No room (the tool's choice): this record is lost, the next asks again.
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                    if !ptr.is_null() {
                        let mut st = self.state();
                        st.close(Buffer {
                            ptr: ptr.cast(),
                            bytes,
                            used: 0,
                        });
                        self.deliver(device, st, false);
                    }
                    return;
                }
                let fresh = Buffer {
                    ptr: ptr.cast(),
                    bytes,
                    used: 0,
                };
                let mut st = self.state();
                if st.buffer.is_none() {
                    st.buffer = Some(fresh);
                } else if st.spare.is_none() {
                    st.spare = Some(fresh);
                } else {
                    st.close(fresh);
                    self.deliver(device, st, false);
                }
            }
        }
    }

    /// Hands the closed buffers back to the tool in the order they were closed: a thread's
    /// records lie in buffers closed one after another (a buffer is queued in the critical
    /// section that closes it), so a tool reading its buffers in the order it gets them reads
    /// each thread's records in order. The first thread to find nobody delivering delivers
    /// the whole queue, one callback at a time with no lock held; the others return at once,
    /// or with `wait` (a flush or a stop: the tool must have the buffers when it returns)
    /// once what was queued before they came has been delivered. A thread inside a
    /// completion callback never waits: the delivery it is part of hands its buffers back
    /// next. The condition variable is signalled only while someone waits (no system call
    /// per buffer otherwise).
    fn deliver<'a>(&'a self, device: i32, mut st: MutexGuard<'a, TraceState>, wait: bool) {
        if wait && !IN_COMPLETION.with(Cell::get) {
            let mine = st.delivered_once_drained();
            st.waiting += 1;
            while st.delivering && st.delivered < mine {
                st = self.handed_back.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            st.waiting -= 1;
        }
        if st.delivering {
            return; // the thread delivering hands back what was queued
        }
        st.delivering = true;
        while let Some((b, complete)) = st.closed.pop_front() {
            drop(st);
            let was = IN_COMPLETION.with(|c| c.replace(true));
            // SAFETY: the tool's buffer-complete callback with its own buffer; records start
            // at cursor 0 and fill `used` bytes.
            unsafe { complete(device, b.ptr.cast(), b.used, 0, 1) };
            IN_COMPLETION.with(|c| c.set(was));
            st = self.state();
            st.delivered += 1;
            if st.waiting > 0 {
                self.handed_back.notify_all();
            }
        }
        st.delivering = false;
    }

    /// Completes the open buffers (`ompt_flush_trace`).
    fn flush(&self, device: i32) {
        let mut st = self.state();
        for b in [st.buffer.take(), st.spare.take()].into_iter().flatten() {
            st.close(b);
        }
        self.deliver(device, st, true);
    }

    /// Stops tracing: the open buffers are completed, nothing more is recorded.
    pub(crate) fn stop(&self, device: i32) {
        if self.state().request.is_none() {
            return;
        }
        self.running.store(false, Ordering::Release);
        self.flush(device);
        let mut st = self.state();
        st.request = None;
        st.complete = None;
    }
}

/// Where a record's `target_id` and `host_op_id` come from: the construct's and the
/// operation's tool words when the tool registered a callback of that kind (EMI: what the
/// tool set; non-EMI: the id the callback got, which the subscriber keeps in the same word),
/// else the runtime's internal ids (nothing to correlate with, but distinct).
#[derive(Clone, Copy)]
pub(crate) struct IdSource {
    pub(crate) target: bool,
    pub(crate) data_op: bool,
    pub(crate) submit: bool,
}

fn data_op_kind(kind: DataOpKind) -> c_int {
    super::data_op_kind(kind)
}

fn encode(r: &TraceRecord, ids: IdSource) -> RecordOmpt {
    let target_id = if ids.target {
        r.region_tool_data
    } else {
        r.region_id
    };
    let (kind, record) = match r.kind {
        RecordKind::DataOp {
            kind,
            src,
            src_device,
            dst,
            dst_device,
            bytes,
            codeptr,
        } => (
            TARGET_DATA_OP,
            RecordUnion {
                data_op: RecordDataOp {
                    host_op_id: if ids.data_op { r.op_tool_data } else { r.op_id },
                    optype: data_op_kind(kind),
                    src_addr: src as *mut c_void,
                    src_device_num: src_device,
                    dest_addr: dst as *mut c_void,
                    dest_device_num: dst_device,
                    bytes,
                    end_time: r.end,
                    codeptr_ra: codeptr as *const c_void,
                },
            },
        ),
        RecordKind::Kernel {
            requested_teams,
            granted_teams,
            ..
        } => (
            TARGET_SUBMIT,
            RecordUnion {
                kernel: RecordKernel {
                    host_op_id: if ids.submit { r.op_tool_data } else { r.op_id },
                    requested_num_teams: requested_teams,
                    granted_num_teams: granted_teams,
                    end_time: r.end,
                },
            },
        ),
    };
    RecordOmpt {
        kind: kind as c_int,
        time: r.start,
        thread_id: r.thread_id,
        target_id,
        record,
    }
}

// ---------------------------------------------------------------- entry points

/// Runs `f` for the device a tool's handle names; `fail` when it names none (or `f` panics).
fn with_device<R>(handle: *mut c_void, fail: R, f: impl FnOnce(&super::OmptDevice) -> R) -> R {
    let Some(ompt) = SUBSCRIBER.get() else {
        return fail;
    };
    let Some(device) = ompt.device(handle) else {
        return fail;
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&device))) {
        Ok(r) => r,
        Err(_) => fail,
    }
}

/// `ompt_set_trace_ompt`: records of data operations and kernels can be traced (their EMI
/// and non-EMI codes name the same records; 0 names both); target regions cannot.
unsafe extern "C" fn set_trace_ompt(device: *mut c_void, enable: c_uint, etype: c_uint) -> c_int {
    with_device(device, 0, |d| {
        let bits = match etype {
            0 => DATA_OPS | KERNELS,
            TARGET_DATA_OP | TARGET_DATA_OP_EMI => DATA_OPS,
            TARGET_SUBMIT | TARGET_SUBMIT_EMI => KERNELS,
            TARGET | TARGET_EMI => return SET_NEVER,
            _ => return SET_NEVER,
        };
        if enable != 0 {
            d.trace.types.fetch_or(bits, Ordering::AcqRel);
        } else {
            d.trace.types.fetch_and(!bits, Ordering::AcqRel);
        }
        SET_ALWAYS
    })
}

/// `ompt_start_trace`: 1 when tracing started (both callbacks given, not already running).
unsafe extern "C" fn start_trace(
    device: *mut c_void,
    request: Option<BufferRequestFn>,
    complete: Option<BufferCompleteFn>,
) -> c_int {
    with_device(device, 0, |d| {
        let (Some(request), Some(complete)) = (request, complete) else {
            return 0;
        };
        let mut st = d.trace.state();
        if st.request.is_some() {
            return 0;
        }
        st.request = Some(request);
        st.complete = Some(complete);
        d.trace.running.store(true, Ordering::Release);
        if let Some(ompt) = SUBSCRIBER.get() {
            ompt.tracing.store(true, Ordering::Release);
        }
        1
    })
}

/// `ompt_pause_trace`: pauses (`begin_pause` non-zero) or resumes a started trace.
unsafe extern "C" fn pause_trace(device: *mut c_void, begin_pause: c_int) -> c_int {
    with_device(device, 0, |d| {
        let st = d.trace.state();
        if st.request.is_none() {
            return 0;
        }
        d.trace.running.store(begin_pause == 0, Ordering::Release);
        1
    })
}

/// `ompt_flush_trace`: the open buffers are completed now; operations still running are
/// recorded when they complete.
unsafe extern "C" fn flush_trace(device: *mut c_void) -> c_int {
    with_device(device, 0, |d| {
        if d.trace.state().request.is_none() {
            return 0;
        }
        d.trace.flush(d.id);
        1
    })
}

/// `ompt_stop_trace`.
unsafe extern "C" fn stop_trace(device: *mut c_void) -> c_int {
    with_device(device, 0, |d| {
        if d.trace.state().request.is_none() {
            return 0;
        }
        d.trace.stop(d.id);
        1
    })
}

/// `ompt_advance_buffer_cursor`: records lie back to back from cursor 0.
unsafe extern "C" fn advance_buffer_cursor(
    _device: *mut c_void,
    buffer: *mut c_void,
    size: usize,
    current: u64,
    next: *mut u64,
) -> c_int {
    if buffer.is_null() || next.is_null() {
        return 0;
    }
    let n = current.saturating_add(RECORD as u64);
    if n.saturating_add(RECORD as u64) > size as u64 {
        return 0;
    }
    // SAFETY: the tool's out-parameter.
    unsafe { *next = n };
    1
}

/// `ompt_get_record_type`: every record we write is an OMPT record.
unsafe extern "C" fn get_record_type(buffer: *mut c_void, _current: u64) -> c_int {
    if buffer.is_null() { 3 } else { RECORD_OMPT }
}

/// `ompt_get_record_ompt`: the record at `current` in `buffer`.
unsafe extern "C" fn get_record_ompt(buffer: *mut c_void, current: u64) -> *mut c_void {
    if buffer.is_null() {
        return std::ptr::null_mut();
    }
    buffer.cast::<u8>().wrapping_add(current as usize).cast()
}

/// `ompt_get_device_time`: the device's clock now (ns, the records' time base).
unsafe extern "C" fn get_device_time(device: *mut c_void) -> u64 {
    with_device(device, 0, |d| {
        super::runtime()
            .device_unloaded(i64::from(d.id))
            .ok()
            .and_then(|dev| dev.backend().ok().map(|b| b.device_time()))
            .unwrap_or(0)
    })
}

/// `ompt_translate_time`: a device time in seconds on `omp_get_wtime`'s clock (the wall
/// clock): device times are the host's monotonic clock, whose offset from the wall clock is
/// measured once.
unsafe extern "C" fn translate_time(device: *mut c_void, time: u64) -> f64 {
    with_device(device, 0.0, |_| {
        static OFFSET: std::sync::OnceLock<(f64, u64)> = std::sync::OnceLock::new();
        let (wall, mono) = *OFFSET.get_or_init(|| {
            let mono = omptarget_core::plugin::host_clock_ns();
            let wall = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0);
            (wall, mono)
        });
        wall + (time as f64 - mono as f64) * 1e-9
    })
}

/// The lookup function given to `ompt_callback_device_initialize`: the tracing entry points,
/// then libomp's.
pub(crate) unsafe extern "C" fn lookup(name: *const c_char) -> Option<InterfaceFn> {
    if name.is_null() {
        return None;
    }
    // SAFETY: the tool passes a NUL-terminated name.
    let n = unsafe { CStr::from_ptr(name) }.to_bytes();
    // SAFETY (each transmute): a function pointer cast to the generic interface type, as
    // OMPT's lookup returns every entry point.
    let f: Option<InterfaceFn> = unsafe {
        match n {
            b"ompt_set_trace_ompt" => Some(std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, c_uint, c_uint) -> c_int,
                InterfaceFn,
            >(set_trace_ompt)),
            b"ompt_start_trace" => Some(std::mem::transmute::<
                unsafe extern "C" fn(
                    *mut c_void,
                    Option<BufferRequestFn>,
                    Option<BufferCompleteFn>,
                ) -> c_int,
                InterfaceFn,
            >(start_trace)),
            b"ompt_pause_trace" => Some(std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, c_int) -> c_int,
                InterfaceFn,
            >(pause_trace)),
            b"ompt_flush_trace" => Some(std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void) -> c_int,
                InterfaceFn,
            >(flush_trace)),
            b"ompt_stop_trace" => Some(std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void) -> c_int,
                InterfaceFn,
            >(stop_trace)),
            b"ompt_advance_buffer_cursor" => Some(std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, *mut c_void, usize, u64, *mut u64) -> c_int,
                InterfaceFn,
            >(advance_buffer_cursor)),
            b"ompt_get_record_type" => Some(std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, u64) -> c_int,
                InterfaceFn,
            >(get_record_type)),
            b"ompt_get_record_ompt" => Some(std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, u64) -> *mut c_void,
                InterfaceFn,
            >(get_record_ompt)),
            b"ompt_get_device_time" => Some(std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void) -> u64,
                InterfaceFn,
            >(get_device_time)),
            b"ompt_translate_time" => Some(std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, u64) -> f64,
                InterfaceFn,
            >(translate_time)),
            _ => None,
        }
    };
    if f.is_some() {
        return f;
    }
    let libomp = LIBOMP.get()?;
    // SAFETY: forwarded to libomp's lookup with the tool's NUL-terminated name.
    unsafe { (libomp.lookup)(name) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    const RUNTIME_IDS: IdSource = IdSource {
        target: false,
        data_op: false,
        submit: false,
    };

    /// A trace of kernel records started with `complete` and one-record buffers (`request`),
    /// so every record closes a buffer.
    fn started(trace: &DeviceTrace, complete: BufferCompleteFn) {
        let mut st = trace.state();
        st.request = Some(request);
        st.complete = Some(complete);
        trace.types.store(KERNELS, Ordering::Relaxed);
        trace.running.store(true, Ordering::Release);
    }

    unsafe extern "C" fn request(_: c_int, ptr: *mut *mut c_void, bytes: *mut usize) {
        let b = Box::leak(vec![0u8; RECORD].into_boxed_slice());
        unsafe {
            *ptr = b.as_mut_ptr().cast();
            *bytes = RECORD;
        }
    }

    /// What a completion callback does with `request`'s buffer: the start time of its record,
    /// if it holds one; the buffer is freed.
    fn take_buffer(buf: *mut c_void, bytes: usize) -> Option<u64> {
        // SAFETY: `request` allocated `bytes` bytes at `buf`, written by `push` up to a record.
        unsafe {
            let time =
                (bytes >= RECORD).then(|| std::ptr::read_unaligned(buf.cast::<RecordOmpt>()).time);
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                buf.cast::<u8>(),
                bytes,
            )));
            time
        }
    }

    fn record(start: u64) -> TraceRecord {
        TraceRecord {
            device: 0,
            start,
            end: start,
            thread_id: 1,
            queue: None,
            region_id: 0,
            region_tool_data: 0,
            op_id: start,
            op_tool_data: 0,
            kind: RecordKind::Kernel {
                requested_teams: 1,
                granted_teams: 1,
                name: "k",
            },
        }
    }

    // The first buffer's completion is slow (a tool preempted before it reads), as a loaded
    // machine makes it now and then.
    static ORDER: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    static COMPLETIONS: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn complete(_: c_int, buf: *mut c_void, bytes: usize, _: u64, _: c_int) {
        if COMPLETIONS.fetch_add(1, Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(100));
        }
        if let Some(time) = take_buffer(buf, bytes) {
            ORDER.lock().unwrap().push(time);
        }
    }

    fn order_without(other: u64) -> Vec<u64> {
        let order = ORDER.lock().unwrap();
        order.iter().copied().filter(|&t| t != other).collect()
    }

    #[test]
    fn buffers_are_handed_back_in_the_order_they_closed() {
        let trace = DeviceTrace::default();
        started(&trace, complete);
        std::thread::scope(|s| {
            // This thread's record 1 fills the first buffer; another thread's record closes
            // it and is slow in the tool's callback.
            trace.push(&record(1), 0, RUNTIME_IDS);
            s.spawn(|| trace.push(&record(1000), 0, RUNTIME_IDS));
            while COMPLETIONS.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            // Meanwhile this thread writes records 2..=20, closing the next buffers: the
            // tool must still get record 1 first. A flush returns once all of them are
            // handed back, though the other thread is still delivering.
            for t in 2..=20 {
                trace.push(&record(t), 0, RUNTIME_IDS);
            }
            trace.flush(0);
            assert_eq!(order_without(1000), (1..=20).collect::<Vec<u64>>());
        });
        trace.flush(0);
        assert_eq!(order_without(1000), (1..=20).collect::<Vec<u64>>());
        assert_eq!(ORDER.lock().unwrap().len(), 21);
    }

    // A tool that stops tracing from inside its completion callback (the runtime is
    // delivering then): nothing waits on itself, and the buffers still queued reach it.
    static REENTRANT: std::sync::OnceLock<DeviceTrace> = std::sync::OnceLock::new();
    static REENTRANT_SEEN: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    static REENTRANT_CALLS: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn complete_and_stop(
        device: c_int,
        buf: *mut c_void,
        bytes: usize,
        _: u64,
        _: c_int,
    ) {
        REENTRANT_CALLS.fetch_add(1, Ordering::SeqCst);
        if let Some(time) = take_buffer(buf, bytes) {
            REENTRANT_SEEN.lock().unwrap().push(time);
        }
        let trace = REENTRANT.get().unwrap();
        trace.flush(device);
        trace.stop(device);
    }

    #[test]
    fn a_stop_inside_a_completion_callback_neither_waits_nor_loses_buffers() {
        let trace = REENTRANT.get_or_init(DeviceTrace::default);
        started(trace, complete_and_stop);
        trace.push(&record(1), 0, RUNTIME_IDS);
        // A spare is open once record 1's buffer closes; the callback flushes it (queued
        // behind the buffer being delivered) and stops, so record 2 is not written.
        trace.state().spare = Some(Buffer {
            ptr: Box::leak(vec![0u8; RECORD].into_boxed_slice()).as_mut_ptr(),
            bytes: RECORD,
            used: 0,
        });
        trace.push(&record(2), 0, RUNTIME_IDS);
        assert_eq!(*REENTRANT_SEEN.lock().unwrap(), vec![1]);
        assert_eq!(
            REENTRANT_CALLS.load(Ordering::SeqCst),
            2,
            "the flushed spare came back"
        );
        let st = trace.state();
        assert!(st.request.is_none() && !st.delivering && st.closed.is_empty());
    }
}
