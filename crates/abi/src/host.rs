//! The link to libomp: `omp_get_default_device`, `__kmpc_get_target_offload` and the tasking
//! entry points, looked up by name once at run time (libomp is loaded before us; a program
//! without it gets the defaults).

use omptarget_core::HostRuntime;
use std::ffi::CStr;

type IntFn = unsafe extern "C" fn() -> i32;

pub struct Libomp {
    default_device: Option<IntFn>,
    target_offload: Option<IntFn>,
}

fn lookup(name: &CStr) -> Option<IntFn> {
    let p = symbol(name);
    // SAFETY: both names are libomp's `int(void)` functions.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, IntFn>(p) })
}

impl Libomp {
    pub fn new() -> Self {
        Self {
            default_device: lookup(c"omp_get_default_device"),
            target_offload: lookup(c"__kmpc_get_target_offload"),
        }
    }
}

impl HostRuntime for Libomp {
    fn default_device(&self) -> i32 {
        // SAFETY: libomp's omp_get_default_device takes no arguments.
        self.default_device.map_or(0, |f| unsafe { f() })
    }

    fn target_offload(&self) -> i32 {
        // SAFETY: libomp's __kmpc_get_target_offload takes no arguments.
        self.target_offload.map_or(1, |f| unsafe { f() })
    }
}

/// libomp's `kmp_depend_info_t` (what an `omp_depend_t` object points at).
#[repr(C)]
#[derive(Clone, Copy)]
struct DependInfo {
    base_addr: isize,
    len: usize,
    flags: u32,
}

type GlobalThreadNum = unsafe extern "C" fn(*const libc::c_void) -> i32;
type WaitDeps =
    unsafe extern "C" fn(*const libc::c_void, i32, i32, *mut DependInfo, i32, *mut DependInfo);
type AsyncHandlePtr = unsafe extern "C" fn(i32) -> *mut *mut libc::c_void;
type TaskEntry = unsafe extern "C" fn(i32, *mut libc::c_void) -> i32;
type TaskAlloc = unsafe extern "C" fn(
    *const libc::c_void,
    i32,
    i32,
    usize,
    usize,
    TaskEntry,
) -> *mut libc::c_void;
type TaskWithDeps = unsafe extern "C" fn(
    *const libc::c_void,
    i32,
    *mut libc::c_void,
    i32,
    *mut libc::c_void,
    i32,
    *mut libc::c_void,
) -> i32;
type InExplicitTask = unsafe extern "C" fn() -> libc::c_int;
type TaskWait = unsafe extern "C" fn(*const libc::c_void, i32) -> i32;

/// libomp's tasking entry points, looked up by name once (a `nowait` construct needs two of
/// them every time).
struct Tasking {
    global_thread_num: Option<GlobalThreadNum>,
    wait_deps: Option<WaitDeps>,
    async_handle: Option<AsyncHandlePtr>,
    in_explicit_task: Option<InExplicitTask>,
    task_alloc: Option<TaskAlloc>,
    task_with_deps: Option<TaskWithDeps>,
    taskwait: Option<TaskWait>,
}

fn symbol(name: &CStr) -> *mut libc::c_void {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name; null when absent.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

fn tasking() -> &'static Tasking {
    static TASKING: std::sync::OnceLock<Tasking> = std::sync::OnceLock::new();
    if let Some(t) = TASKING.get() {
        return t;
    }
    // Looked up outside the OnceLock: dlsym takes the dynamic loader's lock, which another
    // thread may hold while it waits for this lock.
    let found = {
        let (g, w, h, e, a, d, t) = (
            symbol(c"__kmpc_global_thread_num"),
            symbol(c"__kmpc_omp_wait_deps"),
            symbol(c"__kmpc_omp_get_target_async_handle_ptr"),
            symbol(c"omp_in_explicit_task"),
            symbol(c"__kmpc_omp_task_alloc"),
            symbol(c"__kmpc_omp_task_with_deps"),
            symbol(c"__kmpc_omp_taskwait"),
        );
        // SAFETY: non-null results are libomp's functions with the signatures above.
        unsafe {
            Tasking {
                global_thread_num: (!g.is_null()).then(|| std::mem::transmute(g)),
                wait_deps: (!w.is_null()).then(|| std::mem::transmute(w)),
                async_handle: (!h.is_null()).then(|| std::mem::transmute(h)),
                in_explicit_task: (!e.is_null()).then(|| std::mem::transmute(e)),
                task_alloc: (!a.is_null()).then(|| std::mem::transmute(a)),
                task_with_deps: (!d.is_null()).then(|| std::mem::transmute(d)),
                taskwait: (!t.is_null()).then(|| std::mem::transmute(t)),
            }
        }
    };
    TASKING.get_or_init(|| found)
}

/// Blocks until the tasks that the `ndeps` depend objects at `deps` name have completed
/// (`__kmpc_omp_wait_deps`), so an `_async` routine can run in order right away.
pub fn wait_depend_objects(ndeps: i32, deps: *mut libc::c_void) {
    if ndeps <= 0 || deps.is_null() {
        return;
    }
    let t = tasking();
    let (Some(gtid), Some(wait)) = (t.global_thread_num, t.wait_deps) else {
        return;
    };
    // SAFETY: `deps` holds `ndeps` omp_depend_t values, each pointing at a kmp_depend_info_t
    // that libomp initialised (`depobj` construct).
    let mut list: Vec<DependInfo> = (0..ndeps as usize)
        .map(|i| unsafe { **(deps as *const *const DependInfo).add(i) })
        .collect();
    // SAFETY: libomp's functions, called with a list of `ndeps` dependences.
    unsafe {
        let id = gtid(std::ptr::null());
        wait(
            std::ptr::null(),
            id,
            ndeps,
            list.as_mut_ptr(),
            0,
            std::ptr::null_mut(),
        );
    }
}

/// The async-handle slot of the libomp target task running on this thread
/// (`__kmpc_omp_get_target_async_handle_ptr`), or `None` outside a target task or without
/// libomp: the construct then completes before returning.
pub fn target_async_handle() -> Option<*mut *mut libc::c_void> {
    let t = tasking();
    let (Some(gtid), Some(handle)) = (t.global_thread_num, t.async_handle) else {
        return None;
    };
    // Outside any explicit task (a program calling a `_nowait` entry point directly) libomp
    // still hands out the implicit task's slot, but nobody would ever poll it: such a
    // construct completes at once, as a blocking one.
    // SAFETY: libomp's function, no arguments.
    if let Some(in_task) = t.in_explicit_task
        && unsafe { in_task() } == 0
    {
        return None;
    }
    // SAFETY: libomp's functions; the slot belongs to the calling thread's current task.
    let slot = unsafe { handle(gtid(std::ptr::null())) };
    (!slot.is_null()).then_some(slot)
}

/// Blocks until the tasks that a construct's dependences (`ndeps` `kmp_depend_info_t` values at
/// `deps`, as clang passes them to `__tgt_interop_*`) name have completed.
pub fn wait_dependences(loc: *const libc::c_void, gtid: i32, ndeps: i32, deps: *mut libc::c_void) {
    wait_dependence_lists(loc, gtid, (ndeps, deps), (0, std::ptr::null_mut()));
}

/// [`wait_dependences`] with a `noalias` list too (LLVM 22's `dep_pack_t`).
pub fn wait_dependence_lists(
    loc: *const libc::c_void,
    gtid: i32,
    (ndeps, deps): (i32, *mut libc::c_void),
    (nnoalias, noalias): (i32, *mut libc::c_void),
) {
    let ndeps = if deps.is_null() { 0 } else { ndeps.max(0) };
    let nnoalias = if noalias.is_null() {
        0
    } else {
        nnoalias.max(0)
    };
    if ndeps == 0 && nnoalias == 0 {
        return;
    }
    let t = tasking();
    let Some(wait) = t.wait_deps else { return };
    // SAFETY: libomp's function with two dependence arrays of the given lengths.
    unsafe { wait(loc, gtid, ndeps, deps.cast(), nnoalias, noalias.cast()) };
}

/// Waits for the tasks that the program's initial thread generated (`taskwait`), when the
/// calling thread is that thread (libomp knows it: the runtime asked libomp on it at
/// registration, before `main`). The program's exit calls it before the program's image is
/// unloaded: the `target nowait` tasks `main` issued belong to that image, and the
/// specification has them complete by the end of the program's implicit parallel region;
/// libomp would otherwise start them on its helper threads after the image is gone, on a
/// device where it may never have been loaded.
pub fn wait_for_initial_tasks() {
    // SAFETY: plain system calls without arguments.
    if unsafe { libc::gettid() != libc::getpid() } {
        return;
    }
    let t = tasking();
    let (Some(gtid), Some(wait)) = (t.global_thread_num, t.taskwait) else {
        return;
    };
    // SAFETY: libomp's `__kmpc_global_thread_num(ident_t *)` and `__kmpc_omp_taskwait(ident_t
    // *, kmp_int32 gtid)`; a null location is allowed.
    unsafe {
        wait(std::ptr::null(), gtid(std::ptr::null()));
    }
}

/// The calling thread's libomp global thread number (0 without libomp).
pub fn current_gtid() -> i32 {
    match tasking().global_thread_num {
        // SAFETY: libomp's function; a null location is allowed.
        Some(g) => unsafe { g(std::ptr::null()) },
        None => 0,
    }
}

/// Work a deferred task runs.
type Deferred = Box<dyn FnOnce() + Send>;

/// Bytes of libomp's `kmp_task_t` (shareds, routine, part_id, two compiler data words); our
/// private word, the boxed work, follows it.
const KMP_TASK_BYTES: usize = 40;

unsafe extern "C" fn run_deferred(_gtid: i32, task: *mut libc::c_void) -> i32 {
    // SAFETY: `defer` wrote a `Box<Deferred>` pointer after the kmp_task_t; libomp runs the
    // task once.
    let work = unsafe {
        Box::from_raw(
            *(task as *mut u8)
                .add(KMP_TASK_BYTES)
                .cast::<*mut Deferred>(),
        )
    };
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(*work)).is_err() {
        omptarget_core::message::report(format_args!("internal error in a deferred interop task"));
    }
    0
}

/// Runs `work` in a deferred libomp task with the construct's dependences (the `nowait` form
/// of a construct that completes when `work` returns): later tasks that depend on them wait
/// for it. Without libomp's tasking entry points `work` comes back, to be run at once.
pub fn defer(
    loc: *const libc::c_void,
    gtid: i32,
    ndeps: i32,
    deps: *mut libc::c_void,
    work: Deferred,
) -> Result<(), Deferred> {
    defer_with(tasking(), loc, gtid, ndeps, deps, work)
}

fn defer_with(
    t: &Tasking,
    loc: *const libc::c_void,
    gtid: i32,
    ndeps: i32,
    deps: *mut libc::c_void,
    work: Deferred,
) -> Result<(), Deferred> {
    let (Some(alloc), Some(spawn)) = (t.task_alloc, t.task_with_deps) else {
        return Err(work);
    };
    // SAFETY: libomp's task allocation: flags 1 (tied), room for our private word after the
    // kmp_task_t, no shared data; the entry has libomp's task-routine signature.
    let task = unsafe {
        alloc(
            loc,
            gtid,
            1,
            KMP_TASK_BYTES + std::mem::size_of::<usize>(),
            0,
            run_deferred,
        )
    };
    if task.is_null() {
        return Err(work);
    }
    let boxed: *mut Deferred = Box::into_raw(Box::new(work));
    // SAFETY: the task has KMP_TASK_BYTES + 8 bytes, aligned for pointers; the task owns the
    // box from here (run_deferred takes it back).
    unsafe {
        *(task as *mut u8)
            .add(KMP_TASK_BYTES)
            .cast::<*mut Deferred>() = boxed;
        spawn(
            loc,
            gtid,
            task,
            ndeps.max(0),
            if ndeps > 0 {
                deps
            } else {
                std::ptr::null_mut()
            },
            0,
            std::ptr::null_mut(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// libomp 19's tasking entry points, from its own library (the test binary does not link
    /// it): a deferred task runs its work once, by the taskwait at the latest, with a
    /// dependence that a later task waits for.
    #[test]
    fn deferred_work_runs_as_a_libomp_task_with_dependences() {
        // SAFETY: loading libomp and looking up its entry points by name; each non-null
        // result has the signature its type names.
        unsafe {
            let h = libc::dlopen(
                c"/usr/lib/llvm-19/lib/libomp.so.5".as_ptr(),
                libc::RTLD_NOW | libc::RTLD_GLOBAL,
            );
            assert!(!h.is_null(), "libomp-19-dev provides libomp.so.5");
            let sym = |n: &CStr| libc::dlsym(h, n.as_ptr());
            let t = Tasking {
                global_thread_num: Some(std::mem::transmute::<*mut libc::c_void, GlobalThreadNum>(
                    sym(c"__kmpc_global_thread_num"),
                )),
                wait_deps: Some(std::mem::transmute::<*mut libc::c_void, WaitDeps>(sym(
                    c"__kmpc_omp_wait_deps",
                ))),
                async_handle: None,
                in_explicit_task: None,
                task_alloc: Some(std::mem::transmute::<*mut libc::c_void, TaskAlloc>(sym(
                    c"__kmpc_omp_task_alloc",
                ))),
                task_with_deps: Some(std::mem::transmute::<*mut libc::c_void, TaskWithDeps>(sym(
                    c"__kmpc_omp_task_with_deps",
                ))),
                taskwait: Some(std::mem::transmute::<*mut libc::c_void, TaskWait>(sym(
                    c"__kmpc_omp_taskwait",
                ))),
            };
            let taskwait = t.taskwait.unwrap();
            let gtid = (t.global_thread_num.unwrap())(std::ptr::null());
            let order = Arc::new(AtomicU32::new(0));
            let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
            let x = 0u64;
            // kmp_depend_info_t {base_addr, len, flags}: out (bit 1) on x, then in (bit 0).
            let mut out_dep = DependInfo {
                base_addr: &x as *const u64 as isize,
                len: 8,
                flags: 3,
            };
            let mut in_dep = DependInfo {
                base_addr: &x as *const u64 as isize,
                len: 8,
                flags: 1,
            };
            for (dep, want) in [(&mut out_dep, 0), (&mut in_dep, 1)] {
                let (o, seen) = (order.clone(), seen.clone());
                let r = defer_with(
                    &t,
                    std::ptr::null(),
                    gtid,
                    1,
                    (dep as *mut DependInfo).cast(),
                    Box::new(move || {
                        seen.lock()
                            .unwrap()
                            .push((o.fetch_add(1, Ordering::SeqCst), want));
                    }),
                );
                assert!(r.is_ok());
            }
            taskwait(std::ptr::null(), gtid);
            assert_eq!(order.load(Ordering::SeqCst), 2, "both tasks ran");
            assert_eq!(
                *seen.lock().unwrap(),
                [(0, 0), (1, 1)],
                "in dependence order"
            );
        }
    }
}
