//! The tool state of one construct or routine call: what its hook points need to dispatch
//! events and to time operations on a traced device.

use super::{
    DataOp, DataOpKind, Endpoint, RecordKind, Region, Submit, TimedQueue, Tools, TraceRecord,
    thread_id,
};
use omptarget_plugin::{Device as Backend, Timestamp};
use std::cell::Cell;
use std::sync::Arc;

thread_local! {
    /// The return address of the `omp_target_*` routine running on this thread.
    static API_CODEPTR: Cell<usize> = const { Cell::new(0) };
}

/// The return address of the `omp_target_*` routine this thread is in (0 outside one).
pub fn api_codeptr() -> usize {
    API_CODEPTR.with(|c| c.get())
}

/// Marks the calling thread as inside an `omp_target_*` routine called from `codeptr`, until
/// dropped: the routine's data operations report that return address.
pub struct ApiCall {
    previous: usize,
}

impl ApiCall {
    pub fn enter(codeptr: usize) -> Self {
        Self {
            previous: API_CODEPTR.with(|c| c.replace(codeptr)),
        }
    }
}

impl Drop for ApiCall {
    fn drop(&mut self) {
        API_CODEPTR.with(|c| c.set(self.previous));
    }
}

/// An operation between its begin and end events.
pub(crate) struct OpScope {
    queue: Option<usize>,
    op: DataOp,
    pub(crate) start: Option<Timestamp>,
    thread: u64,
}

/// A kernel submission between its begin and end events.
pub struct SubmitScope(Submit, Option<Timestamp>, u64, Option<usize>);

/// A traced operation waiting for its device timestamps.
struct Pending {
    start: Timestamp,
    end: Timestamp,
    record: TraceRecord,
    /// The construct it belonged to (its tool word is read once the record is complete).
    region: Option<Arc<Region>>,
}

/// The tool state of an `AsyncInfo` (a construct, or an `omp_target_*` routine's work).
pub(crate) struct ToolCtx {
    tools: Arc<Tools>,
    pub(crate) region: Option<Arc<Region>>,
    codeptr: usize,
    /// `omp_get_initial_device()`: the host's device number in data operations.
    pub(crate) host_device: i32,
    traced: bool,
    traced_device: i32,
    pending: Vec<Pending>,
}

impl ToolCtx {
    pub(crate) fn new(tools: Arc<Tools>, host_device: i32, device: i32) -> Box<Self> {
        let traced = tools.traced(device);
        Box::new(Self {
            tools,
            region: None,
            codeptr: super::api_codeptr(),
            host_device,
            traced,
            traced_device: device,
            pending: Vec::new(),
        })
    }

    /// Makes this the state of construct `region`.
    pub(crate) fn set_region(&mut self, region: Arc<Region>) {
        self.codeptr = region.codeptr;
        self.traced = region.traced;
        self.region = Some(region);
    }

    /// Dispatches the begin event of a data operation and, on a traced device, marks its
    /// start on `queue`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn op_begin(
        &mut self,
        backend: &dyn Backend,
        queue: TimedQueue,
        kind: DataOpKind,
        src: usize,
        src_device: i32,
        dst: usize,
        dst_device: i32,
        bytes: usize,
    ) -> OpScope {
        let scope = self.op_begin_at(kind, src, src_device, dst, dst_device, bytes);
        let start = if self.traced {
            backend.timestamp(queue).ok()
        } else {
            None
        };
        OpScope {
            start,
            queue: queue.map(|q| q.0),
            ..scope
        }
    }

    /// Marks the start of a traced operation on `queue` before it is known whether the
    /// operation happens (its events follow with [`ToolCtx::op_begin_at`]).
    pub(crate) fn stamp(&self, backend: &dyn Backend, queue: TimedQueue) -> Option<Timestamp> {
        if self.traced {
            backend.timestamp(queue).ok()
        } else {
            None
        }
    }

    /// Dispatches the begin event of a data operation whose start (if traced) is set by the
    /// caller.
    pub(crate) fn op_begin_at(
        &mut self,
        kind: DataOpKind,
        src: usize,
        src_device: i32,
        dst: usize,
        dst_device: i32,
        bytes: usize,
    ) -> OpScope {
        let mut op = DataOp {
            kind,
            src,
            src_device,
            dst,
            dst_device,
            bytes,
            codeptr: self.codeptr,
            id: self.tools.next_id(),
            tool_data: 0,
        };
        let region = self.region.as_deref();
        self.tools
            .each(|s| s.data_op(Endpoint::Begin, region, &mut op));
        OpScope {
            op,
            start: None,
            thread: if self.traced { thread_id() } else { 0 },
            queue: None,
        }
    }

    /// Ends a data operation; `dst` is the address an allocation returned.
    pub(crate) fn op_end(
        &mut self,
        backend: &dyn Backend,
        queue: TimedQueue,
        mut scope: OpScope,
        dst: Option<usize>,
    ) {
        if let Some(d) = dst {
            scope.op.dst = d;
        }
        if scope.queue.is_none() {
            scope.queue = queue.map(|q| q.0);
        }
        let end = scope.start.and_then(|_| backend.timestamp(queue).ok());
        let region = self.region.as_deref();
        self.tools
            .each(|s| s.data_op(Endpoint::End, region, &mut scope.op));
        if let (Some(start), Some(end)) = (scope.start, end) {
            let op = scope.op;
            let record = TraceRecord {
                device: self.traced_device,
                start: 0,
                end: 0,
                thread_id: scope.thread,
                queue: scope.queue,
                region_id: region.map_or(0, |r| r.id),
                region_tool_data: 0,
                op_id: op.id,
                op_tool_data: op.tool_data,
                kind: RecordKind::DataOp {
                    kind: op.kind,
                    src: op.src,
                    src_device: op.src_device,
                    dst: op.dst,
                    dst_device: op.dst_device,
                    bytes: op.bytes,
                    codeptr: op.codeptr,
                },
            };
            let region = self.region.clone();
            self.pending.push(Pending {
                start,
                end,
                record,
                region,
            });
        }
    }

    /// Dispatches a kernel submission's begin event; `None` outside a construct.
    pub(crate) fn submit_begin(
        &mut self,
        backend: &dyn Backend,
        queue: TimedQueue,
        requested_teams: u32,
        kernel: &'static str,
    ) -> Option<SubmitScope> {
        let region = self.region.as_deref()?;
        let mut submit = Submit {
            requested_teams,
            kernel,
            id: self.tools.next_id(),
            tool_data: 0,
        };
        self.tools
            .each(|s| s.submit(Endpoint::Begin, region, &mut submit));
        let start = if self.traced {
            backend.timestamp(queue).ok()
        } else {
            None
        };
        Some(SubmitScope(
            submit,
            start,
            if self.traced { thread_id() } else { 0 },
            queue.map(|q| q.0),
        ))
    }

    /// Ends a kernel submission; `granted_teams` is what the device launched.
    pub(crate) fn submit_end(
        &mut self,
        backend: &dyn Backend,
        queue: TimedQueue,
        scope: Option<SubmitScope>,
        granted_teams: impl FnOnce() -> u32,
    ) {
        let Some(SubmitScope(mut submit, start, thread, on)) = scope else {
            return;
        };
        let end = start.and_then(|_| backend.timestamp(queue).ok());
        let Some(region) = self.region.as_deref() else {
            return;
        };
        self.tools
            .each(|s| s.submit(Endpoint::End, region, &mut submit));
        if let (Some(start), Some(end)) = (start, end) {
            let record = TraceRecord {
                device: self.traced_device,
                start: 0,
                end: 0,
                thread_id: thread,
                queue: on,
                region_id: region.id,
                region_tool_data: 0,
                op_id: submit.id,
                op_tool_data: submit.tool_data,
                kind: RecordKind::Kernel {
                    requested_teams: submit.requested_teams,
                    granted_teams: granted_teams(),
                    name: submit.kernel,
                },
            };
            let region = self.region.clone();
            self.pending.push(Pending {
                start,
                end,
                record,
                region,
            });
        }
    }

    /// The queued work is done: resolves the device timestamps of traced operations and
    /// hands their records to the subscribers.
    pub(crate) fn complete(&mut self, backend: Option<&dyn Backend>) {
        if self.pending.is_empty() {
            return;
        }
        for mut p in std::mem::take(&mut self.pending) {
            let Some(b) = backend else { continue };
            let (Ok(start), Ok(end)) = (b.resolve_timestamp(p.start), b.resolve_timestamp(p.end))
            else {
                continue;
            };
            p.record.start = start;
            p.record.end = end.max(start);
            p.record.region_tool_data = p.region.as_deref().map_or(0, |r| r.tool_data());
            self.tools.record(&p.record);
        }
    }
}
