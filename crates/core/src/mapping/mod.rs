//! The mapping table of one device: host address interval → device allocation, with the
//! dynamic and hold reference counts of OpenMP 5.2 §5.8.
//!
//! The table is a pure data structure: it never calls a device. Operations in `ops` look an
//! interval up, decide (from the map-type bits) what to do, and ask the table to record it.

mod table;

pub use table::{Entry, EntryId, Lookup, MappingTable, RefCount, ShadowPointer};

#[cfg(test)]
mod model_tests;
