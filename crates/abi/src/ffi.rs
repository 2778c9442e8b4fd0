//! The panic boundary and the C layouts clang 19 uses.

use std::ffi::{c_char, c_void};

/// Defines an exported `extern "C"` function whose body runs inside `catch_unwind`: a panic
/// becomes an `omptarget error:` line and the given failure value, never an abort.
macro_rules! export {
    (
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $fail:expr; $body:block
    ) => {
        $(#[$meta])*
        #[unsafe(no_mangle)]
        #[allow(clippy::missing_safety_doc)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> $ret { $body })) {
                Ok(v) => v,
                Err(payload) => {
                    $crate::ffi::report_panic(stringify!($name), payload);
                    $fail
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block
    ) => {
        export!($(#[$meta])* fn $name($($arg: $ty),*) -> () = (); $body);
    };
}
pub(crate) use export;

/// [`export!`] for an entry point whose caller's return address tools see (OMPT's
/// `codeptr_ra`): on x86_64 the exported symbol is a four-instruction trampoline that stores
/// its return address in a thread-local word (`ompt::return_address`) and jumps to the Rust
/// function, which is not exported under its own name.
macro_rules! export_ra {
    // A construct's entry point: `extern "C-unwind"` without a `catch_unwind`, so that a
    // foreign unwind (a thread cancellation inside a region on the host device, a C++
    // exception) passes through our frames, which release what they hold as it goes; a
    // panic inside it is the construct's failure, decided by the panic hook
    // (`entry::construct_guard`).
    (
        $(#[$meta:meta])*
        unwind fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block
    ) => {
        $(#[$meta])*
        #[cfg_attr(not(target_arch = "x86_64"), unsafe(no_mangle))]
        #[allow(clippy::missing_safety_doc)]
        pub unsafe extern "C-unwind" fn $name($($arg: $ty),*) $(-> $ret)? $body
        $crate::ffi::export_ra!(@trampoline $name);
    };
    (@trampoline $name:ident) => {
        #[cfg(target_arch = "x86_64")]
        std::arch::global_asm!(
            concat!(".pushsection .text.omptarget_ra.", stringify!($name), ",\"ax\",@progbits"),
            concat!(".globl ", stringify!($name)),
            concat!(".type ", stringify!($name), ",@function"),
            ".p2align 4",
            concat!(stringify!($name), ":"),
            ".cfi_startproc",
            // rax and r11 carry no argument of these (non-variadic) functions.
            "mov rax, qword ptr [rsp]",
            "mov r11, qword ptr [rip + omptarget_rs_codeptr@gottpoff]",
            "mov qword ptr fs:[r11], rax",
            "jmp {target}",
            ".cfi_endproc",
            concat!(".size ", stringify!($name), ", .-", stringify!($name)),
            ".popsection",
            target = sym $name,
        );
    };
    (
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $fail:expr; $body:block
    ) => {
        $(#[$meta])*
        #[cfg_attr(not(target_arch = "x86_64"), unsafe(no_mangle))]
        #[allow(clippy::missing_safety_doc)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> $ret { $body })) {
                Ok(v) => v,
                Err(payload) => {
                    $crate::ffi::report_panic(stringify!($name), payload);
                    $fail
                }
            }
        }
        #[cfg(target_arch = "x86_64")]
        std::arch::global_asm!(
            concat!(".pushsection .text.omptarget_ra.", stringify!($name), ",\"ax\",@progbits"),
            concat!(".globl ", stringify!($name)),
            concat!(".type ", stringify!($name), ",@function"),
            ".p2align 4",
            concat!(stringify!($name), ":"),
            // rax and r11 carry no argument of these (non-variadic) functions.
            "mov rax, qword ptr [rsp]",
            "mov r11, qword ptr [rip + omptarget_rs_codeptr@gottpoff]",
            "mov qword ptr fs:[r11], rax",
            "jmp {target}",
            concat!(".size ", stringify!($name), ", .-", stringify!($name)),
            ".popsection",
            target = sym $name,
        );
    };
    (
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block
    ) => {
        export_ra!($(#[$meta])* fn $name($($arg: $ty),*) -> () = (); $body);
    };
}
pub(crate) use export_ra;

pub(crate) fn report_panic(name: &str, payload: Box<dyn std::any::Any + Send>) {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    omptarget_core::message::report(format_args!(
        "internal error in {name}: {what} (the runtime's state is unchanged where possible)"
    ));
}

/// `ident_t`.
#[repr(C)]
pub struct Ident {
    pub reserved_1: i32,
    pub flags: i32,
    pub reserved_2: i32,
    pub reserved_3: i32,
    pub psource: *const c_char,
}

/// The 32-byte `__tgt_offload_entry` of clang ≤ 19.
#[repr(C)]
pub struct OffloadEntry32 {
    pub addr: *mut c_void,
    pub name: *const c_char,
    pub size: usize,
    pub flags: i32,
    pub data: i32,
}

/// The entry of LLVM ≥ 20 (`llvm::offloading::EntryTy`). ABI.md calls it 48 bytes; its seven
/// eight-byte words make it 56, which is what LLVM 20's headers define.
#[repr(C)]
pub struct OffloadEntryV20 {
    pub reserved: u64,
    pub version: u16,
    pub kind: u16,
    pub flags: u32,
    pub address: *mut c_void,
    pub symbol_name: *const c_char,
    pub size: u64,
    pub data: u64,
    pub aux_addr: *mut c_void,
}

/// `__tgt_device_image`.
#[repr(C)]
pub struct DeviceImage {
    pub image_start: *mut c_void,
    pub image_end: *mut c_void,
    pub entries_begin: *mut c_void,
    pub entries_end: *mut c_void,
}

/// `__tgt_bin_desc`.
#[repr(C)]
pub struct BinDesc {
    pub num_device_images: i32,
    pub device_images: *mut DeviceImage,
    pub host_entries_begin: *mut c_void,
    pub host_entries_end: *mut c_void,
}

/// `KernelArgsTy` (version 2 and 3; version 1 is its first 64 bytes).
#[repr(C)]
pub struct KernelArgs {
    pub version: u32,
    pub num_args: u32,
    pub arg_base_ptrs: *mut *mut c_void,
    pub arg_ptrs: *mut *mut c_void,
    pub arg_sizes: *mut i64,
    pub arg_types: *mut i64,
    pub arg_names: *mut *mut c_void,
    pub arg_mappers: *mut *mut c_void,
    pub tripcount: u64,
    pub flags: u64,
    pub num_teams: [u32; 3],
    pub thread_limit: [u32; 3],
    pub dyn_cgroup_mem: u32,
}

const _: () = assert!(std::mem::size_of::<KernelArgs>() == 104);
const _: () =
    assert!(std::mem::size_of::<OffloadEntry32>() == omptarget_core::image::ENTRY_SIZE_32);
const _: () =
    assert!(std::mem::size_of::<OffloadEntryV20>() == omptarget_core::image::ENTRY_SIZE_V20);
const _: () = assert!(std::mem::size_of::<BinDesc>() == 32);
