//! `libomptarget.so.19.1`: the C boundary of omptarget-rs, and its composition root.
//!
//! Only this crate knows C layouts. Each export validates its raw arguments into Rust values,
//! calls `omptarget-core`, and turns the result into LLVM's return code; every export is
//! wrapped in a panic guard (`ffi::export!`). It also decides which backends a process has
//! ([`default_plugins`]) and hands them to the core.
//!
//! May use: `omptarget-core` (and the plugin interface it re-exports), the concrete plugins
//! (only in `plugins.rs`), `libc`. Nothing in the workspace depends on it but the `omptarget`
//! command, which builds its runtime through the same [`default_plugins`].

pub mod entry;
pub(crate) mod ffi;
mod host;
mod plugins;

pub use entry::runtime;
pub use plugins::default_plugins;

#[cfg(test)]
mod tests {
    use crate::entry::*;
    use crate::ffi::{BinDesc, DeviceImage, OffloadEntry32, export};
    use std::ffi::c_void;

    export! {
        fn test_only_panics(x: i32) -> i32 = -7; {
            if x > 0 {
                panic!("boom");
            }
            x
        }
    }

    #[test]
    fn a_panic_becomes_the_failure_value() {
        // SAFETY: a plain Rust call of an extern "C" function we defined.
        unsafe {
            assert_eq!(test_only_panics(0), 0);
            assert_eq!(test_only_panics(1), -7);
        }
    }

    #[test]
    fn null_and_malformed_descriptors_are_refused_without_a_crash() {
        // SAFETY: these calls exercise the null and bounds checks of the C boundary.
        unsafe {
            __tgt_register_lib(std::ptr::null_mut());
            __tgt_unregister_lib(std::ptr::null_mut());
            // Two images claimed, no image array.
            let mut d = BinDesc {
                num_device_images: 2,
                device_images: std::ptr::null_mut(),
                host_entries_begin: std::ptr::null_mut(),
                host_entries_end: std::ptr::null_mut(),
            };
            __tgt_register_lib(&mut d);
            // An entry table whose size is not a whole number of entries.
            let entries = [OffloadEntry32 {
                addr: std::ptr::dangling_mut::<c_void>(),
                name: c"k".as_ptr(),
                size: 0,
                flags: 0,
                data: 0,
            }];
            let mut img = DeviceImage {
                image_start: b"junk".as_ptr() as *mut c_void,
                image_end: b"junk".as_ptr().add(4) as *mut c_void,
                entries_begin: std::ptr::null_mut(),
                entries_end: std::ptr::null_mut(),
            };
            let mut d = BinDesc {
                num_device_images: 1,
                device_images: &mut img,
                host_entries_begin: entries.as_ptr() as *mut c_void,
                host_entries_end: (entries.as_ptr() as *mut u8).add(20) as *mut c_void,
            };
            __tgt_register_lib(&mut d);
            __tgt_unregister_lib(&mut d);
        }
        assert_eq!(runtime().num_devices(), 0);
    }

    #[test]
    fn null_argument_arrays_are_refused() {
        // SAFETY: null arrays with a non-zero count must be rejected before any access.
        unsafe {
            __tgt_target_data_begin_mapper(
                std::ptr::null(),
                -1,
                3,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            assert_ne!(
                __tgt_target_kernel(
                    std::ptr::null(),
                    -1,
                    0,
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut()
                ),
                0
            );
            assert_eq!(
                omp_target_memcpy(std::ptr::null_mut(), std::ptr::null(), 8, 0, 0, 0, 0),
                !0
            );
            assert_eq!(
                omp_target_memcpy(std::ptr::null_mut(), std::ptr::null(), 0, 0, 0, 0, 0),
                0
            );
        }
    }
}
