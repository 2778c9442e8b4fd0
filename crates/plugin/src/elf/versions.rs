//! The symbol versions a shared object needs and defines, which glibc's loader follows as
//! chains of entries.

use super::segments::{Load, table};
use super::{ElfError, bad};
use object::LittleEndian as LE;
use object::elf;

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
    if let Some(mut at) = tag(elf::DT_VERNEED) {
        let what = "the needed-version table";
        // glibc follows vn_next and vna_next to 0, whatever the counts say.
        for _ in 0..MAX_CHAIN {
            let need: &[elf::Verneed<LE>] = table(bytes, loads, at, 1, what)?;
            let need = &need[0];
            if need.vn_version.get(endian) != elf::VER_NEED_CURRENT
                || u64::from(need.vn_file.get(endian)) >= strsz
            {
                return Err(bad(format!("{what} is corrupt")));
            }
            let mut aux_at = at + u64::from(need.vn_aux.get(endian));
            for step in 0..=MAX_CHAIN {
                if step == MAX_CHAIN {
                    return Err(bad(format!("{what} has a chain with no end")));
                }
                let aux: &[elf::Vernaux<LE>] = table(bytes, loads, aux_at, 1, what)?;
                if u64::from(aux[0].vna_name.get(endian)) >= strsz {
                    return Err(bad(format!(
                        "{what} names a version outside the string table"
                    )));
                }
                highest = highest.max(u64::from(aux[0].vna_other.get(endian) & 0x7fff));
                match aux[0].vna_next.get(endian) {
                    0 => break,
                    next => aux_at += u64::from(next),
                }
            }
            match need.vn_next.get(endian) {
                0 => break,
                next => at += u64::from(next),
            }
        }
    }
    if let Some(mut at) = tag(elf::DT_VERDEF) {
        let what = "the version-definition table";
        for _ in 0..MAX_CHAIN {
            let def: &[elf::Verdef<LE>] = table(bytes, loads, at, 1, what)?;
            let def = &def[0];
            if def.vd_version.get(endian) != elf::VER_DEF_CURRENT {
                return Err(bad(format!("{what} is corrupt")));
            }
            highest = highest.max(u64::from(def.vd_ndx.get(endian) & 0x7fff));
            let mut aux_at = at + u64::from(def.vd_aux.get(endian));
            for step in 0..=MAX_CHAIN {
                if step == MAX_CHAIN {
                    return Err(bad(format!("{what} has a chain with no end")));
                }
                let aux: &[elf::Verdaux<LE>] = table(bytes, loads, aux_at, 1, what)?;
                if u64::from(aux[0].vda_name.get(endian)) >= strsz {
                    return Err(bad(format!(
                        "{what} names a version outside the string table"
                    )));
                }
                match aux[0].vda_next.get(endian) {
                    0 => break,
                    next => aux_at += u64::from(next),
                }
            }
            match def.vd_next.get(endian) {
                0 => break,
                next => at += u64::from(next),
            }
        }
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
