//! The target-independent OpenMP offload runtime of omptarget-rs.
//!
//! It knows OpenMP's rules (images, devices, the mapping table, map-type semantics, the
//! `omp_target_*` routines) and neither C layouts (see `omptarget-abi`) nor device APIs (see
//! the plugins).
//!
//! May use: the `Plugin`/`Device` traits of `omptarget-plugin` (never a concrete plugin: the
//! library hands its backends to [`Runtime::new`]), `libc`. Its modules stand in floors and
//! import only their floor and below (docs/ARCHITECTURE.md, checked by `tests/layering.rs`):
//! data and rules (`error`, `message`, `mapping`, `config`, `image`, `trace`, `indirect`) →
//! one device (`device`) → what a device carries for features (`tools`, `record`,
//! `requires`, `interop`) → the constructs (`ops`) → the registry (`runtime`) → the
//! routines (`api`).

pub mod api;
pub mod config;
pub mod device;
pub mod error;
pub mod image;
mod indirect;
pub mod interop;
pub mod mapping;
pub mod message;
pub mod ops;
pub mod record;
pub mod requires;
pub mod runtime;
pub mod tools;
pub mod trace;

pub use config::Config;
pub use device::Device;
pub use error::{Error, Result};
pub use omptarget_plugin as plugin;
pub use ops::{AsyncInfo, MapArgs};
pub use runtime::{HostRuntime, NoHostRuntime, Policy, Runtime};
