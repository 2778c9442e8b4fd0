//! The mapping table of one device: host address interval → device allocation, with the
//! dynamic and hold reference counts of OpenMP 5.2 §5.8.
//!
//! The table is a pure data structure: it never calls a device. Operations in `ops` look an
//! interval up, decide (from the map-type bits) what to do, and ask the table to record it.

mod entries;
mod table;

/// Map-type bits (`ArgTypes[i]`): what clang asks of each list item.
pub mod map_type {
    pub const TO: u64 = 0x01;
    pub const FROM: u64 = 0x02;
    pub const ALWAYS: u64 = 0x04;
    pub const DELETE: u64 = 0x08;
    pub const PTR_AND_OBJ: u64 = 0x10;
    pub const TARGET_PARAM: u64 = 0x20;
    pub const RETURN_PARAM: u64 = 0x40;
    pub const PRIVATE: u64 = 0x80;
    pub const LITERAL: u64 = 0x100;
    pub const IMPLICIT: u64 = 0x200;
    pub const CLOSE: u64 = 0x400;
    pub const PRESENT: u64 = 0x1000;
    pub const OMPX_HOLD: u64 = 0x2000;
    /// LLVM 22: attach a pointer to its pointee after the construct's other maps (attach.rs).
    pub const ATTACH: u64 = 0x4000;
    pub const NON_CONTIG: u64 = 1 << 44;
    pub const MEMBER_OF: u64 = 0xffff << 48;

    /// The index of the parent of a MEMBER_OF item, if it is one.
    pub fn member_of(ty: u64) -> Option<usize> {
        let field = (ty >> 48) as usize;
        field.checked_sub(1)
    }
}

pub use table::{Entry, EntryId, Lookup, MappingTable, RefCount, ShadowPointer, Shadows};

#[cfg(test)]
mod model_tests;
