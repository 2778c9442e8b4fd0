//! The library part of the `omptarget` command: how to run a program on omptarget-rs without
//! set-up (`run`), how to read the summary the runtime writes at exit (`summary`), and how to
//! install the runtime into a prefix (`install`). The
//! `omptarget` binary and the project's GPU harness (`omptarget-suite`) both use it.
//!
//! It may use only `std` and `clap` (for `run`'s options): no runtime crate, so that what
//! runs a program stays apart from the runtime it runs on.

pub mod install;
pub mod run;
pub mod summary;
