//! The x86_64 host device backend: device images are shared objects loaded with `dlopen`,
//! kernels are called on the calling thread through libffi, and device memory is host memory.
//! It depends only on `omptarget-plugin` (and libc, libffi).
//!
//! Like LLVM's host plugin it reports four devices. Each device loads its own copy of each
//! image (so a `declare target` global has one copy per device) and work completes before each
//! call returns, so queues and events are only tokens.

mod ffi_call;
mod late;

use omptarget_plugin::record::RecordRegion;
use omptarget_plugin::{
    AllocKind, CopyKind, Device, DeviceInfo, DevicePtr, Error, ErrorKind, EventId, ImageInfo,
    KernelId, LaunchConfig, LoadEnv, ModuleId, Plugin, QueueId, Result,
};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

const EM_X86_64: u16 = 62;
const ET_DYN: u16 = 3;
/// LLVM's host plugin exposes four devices.
pub const NUM_DEVICES: usize = 4;

/// The host plugin.
#[derive(Debug, Default)]
pub struct HostPlugin;

impl Plugin for HostPlugin {
    fn name(&self) -> &'static str {
        "x86_64"
    }

    fn number_of_devices(&self) -> usize {
        NUM_DEVICES
    }

    fn is_compatible(&self, image: &ImageInfo<'_>) -> bool {
        if image.triple.is_some_and(|t| !t.starts_with("x86_64")) {
            return false;
        }
        elf_machine(image.bytes) == Some(EM_X86_64)
    }

    fn init_device(&self, index: usize) -> Result<Box<dyn Device>> {
        if index >= NUM_DEVICES {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("host device {index} does not exist"),
            ));
        }
        Ok(Box::new(HostDevice {
            index,
            modules: Mutex::new(HashMap::new()),
            next_token: AtomicUsize::new(1),
            record: std::sync::OnceLock::new(),
            late: late::Late::from_env(),
        }))
    }
}

/// The ELF machine of a 64-bit little-endian ELF file, if `bytes` is one.
pub fn elf_machine(bytes: &[u8]) -> Option<u16> {
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
        return None;
    }
    Some(u16::from_le_bytes([bytes[18], bytes[19]]))
}

/// One loaded image: the dlopen handle and the memfd that backs it. The descriptor stays open
/// while the image is loaded so that no other image can be loaded under the same
/// `/proc/self/fd/N` name (the dynamic loader would hand back this one).
struct LoadedImage {
    handle: *mut libc::c_void,
    fd: libc::c_int,
    /// The major version of the clang that built the image (its `.comment`), if it says.
    clang_major: Option<u32>,
}

// SAFETY: a dlopen handle may be used from any thread; we only pass it to dlsym and dlclose.
unsafe impl Send for LoadedImage {}

struct HostDevice {
    index: usize,
    modules: Mutex<HashMap<usize, LoadedImage>>,
    next_token: AtomicUsize,
    /// Record and replay: the mapping every allocation comes from (never unmapped: the
    /// program may use its blocks until it exits).
    record: std::sync::OnceLock<RecordRegion>,
    /// `OMPTARGET_RS_HOST_LATE_COPIES` (late.rs): copies back land when their queue completes.
    late: Option<late::Late>,
}

/// Maps `size` bytes of fresh memory, at `at` exactly when given (`None` when that address
/// is taken or the system refuses).
fn map_region(size: usize, at: Option<usize>) -> Option<usize> {
    let fixed = if at.is_some() {
        libc::MAP_FIXED_NOREPLACE
    } else {
        0
    };
    // SAFETY: an anonymous private mapping; MAP_FIXED_NOREPLACE never replaces a mapping.
    let p = unsafe {
        libc::mmap(
            at.unwrap_or(0) as *mut libc::c_void,
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | fixed,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    if at.is_some_and(|a| a != p as usize) {
        // A kernel older than MAP_FIXED_NOREPLACE took it as a hint.
        // SAFETY: the mapping just made, unmapped once.
        unsafe { libc::munmap(p, size) };
        return None;
    }
    Some(p as usize)
}

fn dl_error(what: &str) -> Error {
    // SAFETY: dlerror returns a thread-local C string or null.
    let msg = unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".to_owned()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    };
    Error::new(ErrorKind::InvalidImage, format!("{what}: {msg}"))
}

impl HostDevice {
    /// `OMPTARGET_RS_HOST_LATE_COPIES`: the copy's bytes land when its queue completes. Out
    /// of line, and `copy` tests only cheap conditions before calling it: with the test and
    /// the call written in `copy` the host device's `map64` region cost 15 instructions more.
    #[cold]
    #[inline(never)]
    fn copy_back_late(
        &self,
        queue: Option<QueueId>,
        dst: usize,
        src: usize,
        size: usize,
    ) -> Result<()> {
        if let (Some(late), Some(q)) = (&self.late, queue) {
            late.copy_back(q, dst, src, size);
        }
        Ok(())
    }

    fn token(&self) -> usize {
        self.next_token.fetch_add(1, Ordering::Relaxed)
    }

    fn symbol(&self, module: ModuleId, name: &str) -> Result<*mut libc::c_void> {
        // The table lock is not held across dlsym, which takes the dynamic loader's lock: a
        // thread in dlopen/dlclose (holding that lock) may be unloading another image here.
        let handle = self
            .modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&module.0)
            .map(|image| image.handle)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidArgument,
                    "unknown image handle".to_owned(),
                )
            })?;
        let cname = CString::new(name)
            .map_err(|_| Error::new(ErrorKind::SymbolNotFound, format!("bad symbol {name:?}")))?;
        // SAFETY: the handle is a live dlopen handle (the core looks symbols up only between
        // loading an image and unloading it) and the name is a NUL-terminated string.
        let sym = unsafe { libc::dlsym(handle, cname.as_ptr()) };
        if sym.is_null() {
            return Err(Error::new(
                ErrorKind::SymbolNotFound,
                format!(
                    "symbol '{name}' not found in the image on host device {}",
                    self.index
                ),
            ));
        }
        Ok(sym)
    }
}

impl Device for HostDevice {
    /// Host code runs the regions: all host memory is accessible.
    fn host_memory_accessible(&self, _ptr: usize, _size: usize) -> bool {
        true
    }

    /// Kernels run in the program's own process: every host address is theirs.
    fn unified_shared_memory(&self) -> std::result::Result<(), String> {
        Ok(())
    }

    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: format!("x86_64 host device {}", self.index),
            properties: vec![("Kind".into(), "generic-elf-64bit (host)".into())],
        }
    }

    fn load(&self, image: &ImageInfo<'_>, _env: &LoadEnv) -> Result<ModuleId> {
        // dlopen trusts the image's headers, segments and relocations: a truncated or corrupt
        // image faults inside the loader (SIGBUS) instead of failing.
        let elf = omptarget_plugin::elf::validate_elf(image.bytes).map_err(|e| {
            Error::new(
                ErrorKind::InvalidImage,
                format!("the device image is corrupt (not loaded): {e}"),
            )
        })?;
        if elf.machine != EM_X86_64 || elf.file_type != ET_DYN {
            return Err(Error::new(
                ErrorKind::InvalidImage,
                "the device image is not an x86_64 shared object (not loaded)",
            ));
        }
        // SAFETY: memfd_create with a NUL-terminated name; the result is checked.
        let fd = unsafe { libc::memfd_create(c"omptarget-image".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(Error::new(
                ErrorKind::Backend,
                format!("memfd_create failed: {}", std::io::Error::last_os_error()),
            ));
        }
        let close = |e: Error| {
            // SAFETY: fd is ours and still open.
            unsafe { libc::close(fd) };
            e
        };
        let mut written = 0;
        while written < image.bytes.len() {
            let rest = &image.bytes[written..];
            // SAFETY: writes from a live slice to our descriptor.
            let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
            if n <= 0 {
                return Err(close(Error::new(
                    ErrorKind::Backend,
                    format!(
                        "writing the image failed: {}",
                        std::io::Error::last_os_error()
                    ),
                )));
            }
            written += n as usize;
        }
        let path = CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL in a path");
        // SAFETY: dlopen of a file we wrote; RTLD_LOCAL keeps its symbols (the kernels, globals)
        // from interposing on the program's own.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(close(dl_error("cannot load the x86_64 image")));
        }
        let id = self.token();
        self.modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                id,
                LoadedImage {
                    handle,
                    fd,
                    clang_major: elf.clang_major,
                },
            );
        Ok(ModuleId(id))
    }

    fn unload(&self, module: ModuleId) -> Result<()> {
        let image = self
            .modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&module.0);
        if let Some(image) = image {
            // SAFETY: the handle came from dlopen and is closed once (removed from the table).
            unsafe {
                libc::dlclose(image.handle);
                libc::close(image.fd);
            }
        }
        Ok(())
    }

    fn kernel(&self, module: ModuleId, name: &str) -> Result<KernelId> {
        self.symbol(module, name).map(|p| KernelId(p as usize))
    }

    /// Kernels of clang 18 and later take the launch environment first; the image's
    /// `.comment` says which clang built it (a host kernel has no other trace of it).
    fn takes_launch_environment(&self, module: ModuleId, _name: &str) -> Option<bool> {
        let modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        modules.get(&module.0)?.clang_major.map(|v| v >= 18)
    }

    fn global(&self, module: ModuleId, name: &str) -> Result<(DevicePtr, usize)> {
        // dlsym does not report a size; the host entry carries it.
        self.symbol(module, name).map(|p| (p as usize, 0))
    }

    fn alloc(&self, size: usize, kind: AllocKind, _queue: Option<QueueId>) -> Result<DevicePtr> {
        if kind == AllocKind::Device
            && let Some(r) = self.record.get()
        {
            return r.alloc(size).ok_or_else(|| {
                Error::new(
                    ErrorKind::OutOfMemory,
                    format!(
                        "out of memory allocating {size} bytes on host device {}: the record/replay region ({} bytes) is full",
                        self.index,
                        r.size()
                    ),
                )
            });
        }
        // SAFETY: plain malloc; a null result is reported below.
        let p = unsafe { libc::malloc(size.max(1)) };
        if p.is_null() {
            return Err(Error::new(
                ErrorKind::OutOfMemory,
                format!(
                    "out of memory allocating {size} bytes on host device {}",
                    self.index
                ),
            ));
        }
        Ok(p as usize)
    }

    fn free(&self, ptr: DevicePtr, _kind: AllocKind, _queue: Option<QueueId>) -> Result<()> {
        if let Some(r) = self.record.get()
            && r.contains(ptr)
        {
            return Ok(());
        }
        // SAFETY: the core frees only what alloc returned, once.
        unsafe { libc::free(ptr as *mut libc::c_void) };
        Ok(())
    }

    /// The region is an anonymous mapping (pages are backed when touched): at the recorded
    /// address for a replay, anywhere for a recording. Without a size, 64 GiB of address
    /// space, less (1 GiB at a time, as LLVM's heuristic) where the system refuses.
    fn begin_record_replay(
        &self,
        size: Option<usize>,
        at: Option<usize>,
    ) -> Result<(usize, usize)> {
        const GIB: usize = 1 << 30;
        let page = 4096;
        let want = size.unwrap_or(64 * GIB).max(1).next_multiple_of(page);
        let mut got = None;
        if let Some(a) = at.filter(|a| a % page == 0) {
            got = map_region(want, Some(a)).map(|p| (p, want));
        }
        let mut total = want;
        while got.is_none() && total > 0 {
            got = map_region(total, None).map(|p| (p, total));
            total = total.saturating_sub(GIB);
        }
        let Some((base, total)) = got else {
            return Err(Error::new(
                ErrorKind::OutOfMemory,
                format!(
                    "cannot map {want} bytes for record/replay on host device {}",
                    self.index
                ),
            ));
        };
        let (start, offset) = omptarget_plugin::record::place(base, total, at, size.unwrap_or(0));
        let region = RecordRegion::new(start, total - (start - base));
        if self.record.set(region).is_err() {
            // SAFETY: the mapping made above, unused.
            unsafe { libc::munmap(base as *mut libc::c_void, total) };
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "record/replay is active on host device {} already",
                    self.index
                ),
            ));
        }
        Ok((start, offset))
    }

    fn record_region(&self) -> Option<(usize, usize)> {
        self.record.get().map(RecordRegion::used)
    }

    fn copy(
        &self,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
        queue: Option<QueueId>,
    ) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        if dst == 0 || src == 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "copy with a null pointer",
            ));
        }
        if self.late.is_some() && kind == CopyKind::DeviceToHost && queue.is_some() {
            return self.copy_back_late(queue, dst, src, size);
        }
        // SAFETY: the core passes ranges it checked against its mapping table or the caller
        // vouched for (omp_target_memcpy); ranges of distinct allocations do not overlap, and
        // memmove handles a copy within one allocation.
        unsafe { libc::memmove(dst as *mut libc::c_void, src as *const libc::c_void, size) };
        Ok(())
    }

    fn memset(&self, dst: DevicePtr, value: u8, size: usize, _q: Option<QueueId>) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        // SAFETY: as for copy.
        unsafe { libc::memset(dst as *mut libc::c_void, value as i32, size) };
        Ok(())
    }

    fn launch(
        &self,
        kernel: KernelId,
        args: &[usize],
        config: &LaunchConfig,
        _queue: QueueId,
    ) -> Result<()> {
        if let Some(lang) = config.language
            && lang.size > 0
        {
            return Err(refuse_language_parameters(lang.size));
        }
        // Version 3 kernels take the launch environment first; the host device has none.
        let hidden = usize::from(config.version >= 3);
        ffi_call::call(kernel.0, hidden, args)
    }

    fn create_queue(&self) -> Result<QueueId> {
        Ok(QueueId(self.token()))
    }
    fn destroy_queue(&self, _queue: QueueId) -> Result<()> {
        Ok(())
    }
    fn synchronize(&self, queue: QueueId) -> Result<()> {
        if let Some(late) = &self.late {
            late.synchronize(queue);
        }
        Ok(())
    }
    fn query(&self, queue: QueueId) -> Result<bool> {
        Ok(self.late.as_ref().is_none_or(|late| late.query(queue)))
    }
    fn create_event(&self) -> Result<EventId> {
        Ok(EventId(self.token()))
    }
    fn destroy_event(&self, _event: EventId) -> Result<()> {
        Ok(())
    }
    fn record_event(&self, _event: EventId, _queue: QueueId) -> Result<()> {
        Ok(())
    }
    fn wait_event(&self, _event: EventId, _queue: QueueId) -> Result<()> {
        Ok(())
    }
}

/// A kernel-language launch with parameters (`llvmLaunchKernel`): no compiler makes
/// host-device kernels of a kernel language (clang's -foffload-via-llvm targets GPUs), and the
/// buffer's layout says nothing of the parameters' types, which the host calling convention
/// needs (LLVM 22's host plugin drops the buffer and runs the kernel without it). Out of line:
/// the launch path stays as small as it was.
#[cold]
#[inline(never)]
fn refuse_language_parameters(size: usize) -> Error {
    Error::new(
        ErrorKind::InvalidArgument,
        format!(
            "a kernel-language launch passes {size} bytes of parameters; the host device runs only OpenMP kernels, whose parameters are pointer words"
        ),
    )
}

impl Drop for HostDevice {
    fn drop(&mut self) {
        let modules = std::mem::take(self.modules.get_mut().unwrap_or_else(|e| e.into_inner()));
        for (_, image) in modules {
            // SAFETY: each handle and descriptor is released once.
            unsafe {
                libc::dlclose(image.handle);
                libc::close(image.fd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_x86_64_elf_only() {
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[18] = 62;
        let plugin = HostPlugin;
        fn info(b: &[u8]) -> ImageInfo<'_> {
            ImageInfo {
                bytes: b,
                triple: None,
                arch: None,
            }
        }
        assert!(plugin.is_compatible(&info(&elf)));
        elf[18] = 190; // EM_CUDA
        assert!(!plugin.is_compatible(&info(&elf)));
        assert!(!plugin.is_compatible(&info(b"garbage")));
    }

    #[test]
    fn memory_round_trip() {
        let dev = HostPlugin.init_device(0).unwrap();
        let p = dev.alloc(16, AllocKind::Device, None).unwrap();
        let src = [7u8; 16];
        let mut dst = [0u8; 16];
        dev.copy(CopyKind::HostToDevice, p, src.as_ptr() as usize, 16, None)
            .unwrap();
        dev.copy(
            CopyKind::DeviceToHost,
            dst.as_mut_ptr() as usize,
            p,
            16,
            None,
        )
        .unwrap();
        assert_eq!(dst, src);
        dev.free(p, AllocKind::Device, None).unwrap();
        assert!(HostPlugin.init_device(NUM_DEVICES).is_err());
    }

    #[test]
    fn rejects_an_unloadable_image() {
        let dev = HostPlugin.init_device(1).unwrap();
        let err = dev
            .load(
                &ImageInfo {
                    bytes: b"\x7fELF not really",
                    triple: None,
                    arch: None,
                },
                &LoadEnv::default(),
            )
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidImage);
    }
}
