//! The dynamic table of a shared object and everything `dlopen` reads or writes through it:
//! the string table and the names in it, the symbol and hash tables, the relocations, and the
//! constructors and destructors it calls.

use super::segments::{Dynamic, Load, table};
use super::versions::check_versions;
use super::{Dyn, ElfError, Rela, Sym, bad};
use object::LittleEndian as LE;
use object::elf;
use object::pod;
use object::read::elf::Dyn as _;

/// The dynamic table and what `dlopen` reads and writes through it.
pub(super) fn check_dynamic(
    bytes: &[u8],
    loads: &[Load],
    dynamic: Dynamic,
) -> Result<(), ElfError> {
    let endian = LE;
    let data = &bytes[dynamic.offset..dynamic.offset + dynamic.size];
    let entries: &[Dyn] =
        pod::slice_from_all_bytes(data).map_err(|_| bad("malformed dynamic table"))?;
    // glibc files each tag it knows into a table by ranges of tags; another tag may land in a
    // slot that means something else.
    for (i, d) in entries
        .iter()
        .take_while(|d| d.d_tag(endian) != u64::from(elf::DT_NULL))
        .enumerate()
    {
        let t = d.d_tag(endian);
        // glibc's ranges: the standard tags, then DT_VALRNG, DT_ADDRRNG, the version tags,
        // DT_AUXILIARY..DT_FILTER, and x86_64's processor tags.
        let known = t < 38
            || (0x6fff_fdf4..=0x6fff_fdff).contains(&t)
            || (0x6fff_fef5..=0x6fff_feff).contains(&t)
            || (0x6fff_fff0..=0x6fff_ffff).contains(&t)
            || (0x7fff_fffd..=0x7fff_ffff).contains(&t)
            || (0x7000_0000..=0x7000_0003).contains(&t);
        if !known {
            return Err(bad(format!("dynamic entry {i} has an unknown tag {t:#x}")));
        }
    }
    // A tag given twice: glibc keeps the last one.
    let tag = |t: u32| -> Option<u64> {
        entries
            .iter()
            .take_while(|d| d.d_tag(endian) != u64::from(elf::DT_NULL))
            .filter(|d| d.tag32(endian) == Some(t))
            .last()
            .map(|d| d.d_val(endian))
    };
    let in_image = |addr: u64, size: u64| loads.iter().any(|l| l.holds(addr, size));
    // Strings: the table, and every name that points into it.
    let strtab = tag(elf::DT_STRTAB).ok_or_else(|| bad("the dynamic table has no string table"))?;
    let strsz =
        tag(elf::DT_STRSZ).ok_or_else(|| bad("the dynamic table has no string table size"))?;
    let strings: &[u8] = table(
        bytes,
        loads,
        strtab,
        strsz as usize,
        "the dynamic string table",
    )?;
    for d in entries
        .iter()
        .take_while(|d| d.d_tag(endian) != u64::from(elf::DT_NULL))
    {
        if matches!(
            d.tag32(endian),
            Some(elf::DT_NEEDED | elf::DT_SONAME | elf::DT_RPATH | elf::DT_RUNPATH)
        ) && d.d_val(endian) >= strsz
        {
            return Err(bad("a library name lies outside the dynamic string table"));
        }
    }
    // Symbols: as many as the hash table says.
    let symtab = tag(elf::DT_SYMTAB).ok_or_else(|| bad("the dynamic table has no symbol table"))?;
    if tag(elf::DT_SYMENT).is_some_and(|e| e != std::mem::size_of::<Sym>() as u64) {
        return Err(bad("dynamic symbol entry size is not 24"));
    }
    // glibc asserts these (a missing entry size is a null dereference in the loader).
    if tag(elf::DT_RELA).is_some()
        && tag(elf::DT_RELAENT) != Some(std::mem::size_of::<Rela>() as u64)
    {
        return Err(bad("relocation entry size is not 24"));
    }
    if tag(elf::DT_REL).is_some() {
        return Err(bad("REL relocations, which x86_64 does not use"));
    }
    if tag(elf::DT_JMPREL).is_some() && tag(elf::DT_PLTREL) != Some(u64::from(elf::DT_RELA)) {
        return Err(bad("PLT relocations that are not RELA"));
    }
    // DT_RELR (36) and DT_RELRENT (37), newer than this version of `object`.
    if tag(36).is_some() && tag(37) != Some(8) {
        return Err(bad("relative relocation entry size is not 8"));
    }
    let text_relocations = tag(elf::DT_TEXTREL).is_some()
        || tag(elf::DT_FLAGS).is_some_and(|f| f & u64::from(elf::DF_TEXTREL) != 0);
    let writable = |addr: u64, size: u64| {
        loads
            .iter()
            .any(|l| (l.writable || text_relocations) && l.holds(addr, size))
            && (addr.saturating_add(size) <= dynamic.vaddr
                || addr >= dynamic.vaddr + dynamic.size as u64)
    };
    let count = match (tag(elf::DT_HASH), tag(elf::DT_GNU_HASH)) {
        (Some(hash), _) => {
            let head: &[object::U32<LE>] = table(bytes, loads, hash, 2, "the symbol hash table")?;
            let (nbucket, nchain) = (head[0].get(endian) as usize, head[1].get(endian) as usize);
            table::<object::U32<LE>>(
                bytes,
                loads,
                hash,
                2usize.saturating_add(nbucket).saturating_add(nchain),
                "the symbol hash table",
            )?;
            nchain
        }
        (None, Some(gnu)) => gnu_hash_symbols(bytes, loads, gnu)?,
        (None, None) => return Err(bad("the dynamic table has no symbol hash table")),
    };
    // A GNU hash table counts only the symbols it hashes (the defined ones); the loader
    // reads whichever symbol a relocation names, so the table must hold those too.
    let mut named = 0usize;
    for (addr_tag, size_tag) in [
        (elf::DT_RELA, elf::DT_RELASZ),
        (elf::DT_JMPREL, elf::DT_PLTRELSZ),
    ] {
        if let (Some(at), Some(size)) = (tag(addr_tag), tag(size_tag)) {
            let n = (size / std::mem::size_of::<Rela>() as u64) as usize;
            let relocations: &[Rela] = table(bytes, loads, at, n, "a relocation table")?;
            for r in relocations {
                named = named.max(r.r_sym(endian, false) as usize + 1);
            }
        }
    }
    let count = count.max(named);
    let symbols: &[Sym] = table(bytes, loads, symtab, count, "the dynamic symbol table")?;
    for (i, s) in symbols.iter().enumerate() {
        if u64::from(s.st_name.get(endian)) >= strsz.max(1) {
            return Err(bad(format!(
                "dynamic symbol {i}'s name lies outside the string table"
            )));
        }
        let shndx = s.st_shndx.get(endian);
        let value = s.st_value.get(endian);
        if i > 0
            && shndx == elf::SHN_UNDEF
            && (s.st_visibility() != elf::STV_DEFAULT || s.st_bind() == elf::STB_LOCAL)
        {
            return Err(bad(format!(
                "dynamic symbol {i} ({}) is undefined but not visible",
                name_at(strings, s.st_name.get(endian))
            )));
        }
        if shndx != elf::SHN_UNDEF
            && shndx != elf::SHN_ABS
            && s.st_type() != elf::STT_TLS
            && value != 0
            && !in_image(value, 0)
        {
            return Err(bad(format!(
                "dynamic symbol {i} ({}) at {value:#x} lies outside the image's segments",
                name_at(strings, s.st_name.get(endian))
            )));
        }
    }
    // Where each relative relocation writes, and what (constructor tables hold such words).
    let mut relative: Vec<(u64, u64)> = Vec::new();
    // Relocations: each target word inside the image, each symbol in the table, each
    // relative address inside the image.
    for (addr_tag, size_tag, what) in [
        (elf::DT_RELA, elf::DT_RELASZ, "the relocation table"),
        (elf::DT_JMPREL, elf::DT_PLTRELSZ, "the PLT relocation table"),
    ] {
        let (Some(at), Some(size)) = (tag(addr_tag), tag(size_tag)) else {
            continue;
        };
        if size % std::mem::size_of::<Rela>() as u64 != 0 {
            return Err(bad(format!("{what}'s size is not a multiple of 24")));
        }
        let relocations: &[Rela] = table(
            bytes,
            loads,
            at,
            (size / std::mem::size_of::<Rela>() as u64) as usize,
            what,
        )?;
        if addr_tag == elf::DT_RELA
            && let Some(relative) = tag(elf::DT_RELACOUNT)
            && (relative > relocations.len() as u64
                || relocations[..relative as usize]
                    .iter()
                    .any(|r| r.r_type(endian, false) != elf::R_X86_64_RELATIVE))
        {
            // glibc applies the first DT_RELACOUNT relocations as relative ones unchecked.
            return Err(bad(
                "the count of relative relocations does not match the relocation table",
            ));
        }
        for (i, r) in relocations.iter().enumerate() {
            let target = r.r_offset.get(endian);
            if r.r_type(endian, false) == elf::R_X86_64_RELATIVE {
                relative.push((target, r.r_addend.get(endian) as u64));
            }
            if !writable(target, 8) {
                return Err(bad(format!(
                    "relocation {i} of {what} writes at {target:#x}, outside the image's writable data"
                )));
            }
            let kind = r.r_type(endian, false);
            // The relocations glibc's x86_64 loader applies; it stops on any other.
            if !matches!(
                kind,
                0 | 1 | 2 | 5 | 6 | 7 | 8 | 10 | 16 | 17 | 18 | 32 | 33 | 36 | 37
            ) {
                return Err(bad(format!(
                    "relocation {i} of {what} has type {kind}, which no x86_64 loader applies"
                )));
            }
            if r.r_type(endian, false) == elf::R_X86_64_RELATIVE {
                let value = r.r_addend.get(endian) as u64;
                if !in_image(value, 0) {
                    return Err(bad(format!(
                        "relocation {i} of {what} points at {value:#x}, outside the image's segments"
                    )));
                }
            }
        }
    }
    check_versions(bytes, loads, &tag, strsz, count)?;
    // Constructors and destructors `dlopen` and `dlclose` call.
    for (addr_tag, size_tag, what) in [
        (
            elf::DT_INIT_ARRAY,
            elf::DT_INIT_ARRAYSZ,
            "the constructor table",
        ),
        (
            elf::DT_FINI_ARRAY,
            elf::DT_FINI_ARRAYSZ,
            "the destructor table",
        ),
    ] {
        if let Some(at) = tag(addr_tag) {
            let size = tag(size_tag).unwrap_or(0);
            if at % 8 != 0
                || size % 8 != 0
                || !loads.iter().any(|l| l.writable && l.holds(at, size))
            {
                return Err(bad(format!(
                    "{what} is not an array of pointers in the image's data"
                )));
            }
            // In a shared object each slot is filled by a relative relocation with the address
            // of a function of the image's code (the loader calls each one).
            for slot in (0..size / 8).map(|k| at + 8 * k) {
                let code = relative
                    .iter()
                    .find(|(target, _)| *target == slot)
                    .is_some_and(|&(_, value)| {
                        loads.iter().any(|l| l.executable && l.holds(value, 1))
                    });
                if !code {
                    return Err(bad(format!(
                        "{what} entry at {slot:#x} is not set to a function of the image"
                    )));
                }
            }
        }
    }
    for (t, what) in [
        (elf::DT_INIT, "the init function"),
        (elf::DT_FINI, "the fini function"),
    ] {
        if let Some(at) = tag(t)
            && !loads.iter().any(|l| l.executable && l.holds(at, 1))
        {
            return Err(bad(format!(
                "{what} at {at:#x} lies outside the image's code"
            )));
        }
    }
    Ok(())
}

/// The number of dynamic symbols a GNU hash table implies: one past the last symbol any of
/// its chains reaches.
fn gnu_hash_symbols(bytes: &[u8], loads: &[Load], at: u64) -> Result<usize, ElfError> {
    let endian = LE;
    let what = "the GNU symbol hash table";
    let head: &[object::U32<LE>] = table(bytes, loads, at, 4, what)?;
    let (nbucket, symoffset, bloom) = (
        head[0].get(endian) as u64,
        head[1].get(endian) as u64,
        head[2].get(endian) as u64,
    );
    let buckets_at = at + 16 + bloom * 8;
    let buckets: &[object::U32<LE>] = table(bytes, loads, buckets_at, nbucket as usize, what)?;
    let Some(last) = buckets.iter().map(|b| u64::from(b.get(endian))).max() else {
        return Ok(symoffset as usize);
    };
    if last < symoffset {
        return Ok(symoffset as usize);
    }
    // Walk the last chain to its end (the low bit marks the end).
    let chains_at = buckets_at + nbucket * 4;
    let mut index = last;
    loop {
        let word: &[object::U32<LE>] =
            table(bytes, loads, chains_at + (index - symoffset) * 4, 1, what)?;
        if word[0].get(endian) & 1 != 0 {
            return Ok(index as usize + 1);
        }
        index += 1;
        if index > (1 << 24) {
            return Err(bad(format!("{what} has a chain with no end")));
        }
    }
}

fn name_at(strings: &[u8], at: u32) -> String {
    strings
        .get(at as usize..)
        .and_then(|s| s.split(|&b| b == 0).next())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .unwrap_or_default()
}
