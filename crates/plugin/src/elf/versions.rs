//! The symbol versions a shared object needs and defines, which glibc's loader follows as
//! chains of entries.

use super::segments::{Load, table};
use super::{ElfError, bad};
use object::elf::{self, Verdaux, Vernaux};
use object::{LittleEndian as LE, Pod};

/// The longest version chain followed (a longer one is corrupt).
const MAX_CHAIN: usize = 4096;

/// The symbol versions: the needed and defined version chains (each entry, name and link
/// inside the image) and the version index of each symbol (no index beyond those defined).
pub(super) fn check_versions(
    bytes: &[u8],
    loads: &[Load],
    tag: &dyn Fn(u32) -> Option<u64>,
    strsz: u64,
    symbols: usize,
) -> Result<(), ElfError> {
    let endian = LE;
    let mut highest = 1u64; // VER_NDX_GLOBAL
    if let Some(at) = tag(elf::DT_VERNEED) {
        let what = "the needed-version table";
        follow_chain(at, |at| {
            let need = &table::<elf::Verneed<LE>>(bytes, loads, at, 1, what)?[0];
            if need.vn_version.get(endian) != elf::VER_NEED_CURRENT
                || u64::from(need.vn_file.get(endian)) >= strsz
            {
                return Err(bad(format!("{what} is corrupt")));
            }
            let aux_at = at + u64::from(need.vn_aux.get(endian));
            check_names(bytes, loads, aux_at, strsz, what, |aux: &Vernaux<LE>| {
                highest = highest.max(u64::from(aux.vna_other.get(endian) & 0x7fff));
                (aux.vna_name.get(endian), aux.vna_next.get(endian))
            })?;
            Ok(need.vn_next.get(endian))
        })?;
    }
    if let Some(at) = tag(elf::DT_VERDEF) {
        let what = "the version-definition table";
        follow_chain(at, |at| {
            let def = &table::<elf::Verdef<LE>>(bytes, loads, at, 1, what)?[0];
            if def.vd_version.get(endian) != elf::VER_DEF_CURRENT {
                return Err(bad(format!("{what} is corrupt")));
            }
            highest = highest.max(u64::from(def.vd_ndx.get(endian) & 0x7fff));
            let aux_at = at + u64::from(def.vd_aux.get(endian));
            check_names(bytes, loads, aux_at, strsz, what, |aux: &Verdaux<LE>| {
                (aux.vda_name.get(endian), aux.vda_next.get(endian))
            })?;
            Ok(def.vd_next.get(endian))
        })?;
    }
    let has_versions = tag(elf::DT_VERNEED).is_some() || tag(elf::DT_VERDEF).is_some();
    if has_versions && tag(elf::DT_VERSYM).is_none() {
        return Err(bad("symbol versions without a symbol-version table"));
    }
    if let Some(at) = tag(elf::DT_VERSYM) {
        let versions: &[object::U16<LE>] =
            table(bytes, loads, at, symbols, "the symbol-version table")?;
        if let Some(i) = versions
            .iter()
            .position(|v| u64::from(v.get(endian) & 0x7fff) > highest)
        {
            return Err(bad(format!(
                "dynamic symbol {i} has a version that is neither needed nor defined"
            )));
        }
    }
    Ok(())
}

/// Follows a chain of version entries from `at` as glibc does: by each entry's offset to the
/// next, until one is 0, whatever the counts say. `visit` checks the entry at an address and
/// returns that offset. Whether the chain ended within [`MAX_CHAIN`] entries.
fn follow_chain(
    mut at: u64,
    mut visit: impl FnMut(u64) -> Result<u32, ElfError>,
) -> Result<bool, ElfError> {
    for _ in 0..MAX_CHAIN {
        match visit(at)? {
            0 => return Ok(true),
            next => at += u64::from(next),
        }
    }
    Ok(false)
}

/// An entry's chain of version names (`Vernaux` or `Verdaux` entries, from which
/// `name_and_next` takes the name's offset and the offset to the next): each name inside the
/// string table, and an end to the chain.
fn check_names<T: Pod>(
    bytes: &[u8],
    loads: &[Load],
    at: u64,
    strsz: u64,
    what: &str,
    mut name_and_next: impl FnMut(&T) -> (u32, u32),
) -> Result<(), ElfError> {
    let ended = follow_chain(at, |at| {
        let (name, next) = name_and_next(&table::<T>(bytes, loads, at, 1, what)?[0]);
        if u64::from(name) >= strsz {
            return Err(bad(format!(
                "{what} names a version outside the string table"
            )));
        }
        Ok(next)
    })?;
    if ended {
        Ok(())
    } else {
        Err(bad(format!("{what} has a chain with no end")))
    }
}
