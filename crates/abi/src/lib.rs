//! `libomptarget.so.19.1`: the C boundary of omptarget-rs.
//!
//! Only this crate knows C layouts. Each export validates its raw arguments into Rust values,
//! calls `omptarget-core`, and turns the result into LLVM's return code; every export is
//! wrapped in a panic guard (`ffi::export!`).

mod entry;
mod ffi;
mod host;

pub use entry::runtime;
