//! Structural validation of ELF device images before a loader sees them.
//!
//! `dlopen` trusts a shared object's program headers, dynamic table and relocations, and the
//! CUDA driver trusts a cubin's section headers: an image truncated inside its loadable
//! segments makes `dlopen` fault (SIGBUS) and a few flipped bytes can crash glibc's loader
//! inside the program. [`validate_elf`] checks, without loading or executing anything, that
//! everything a loader reads or writes lies inside the image and inside its segments; an image
//! that passes can still hold wrong code, but the loader itself no longer walks off the image.
//! It is a pure function (fuzzed by `fuzz/fuzz_targets/device_image.rs`).

use object::elf;
use object::pod;
use object::read::elf::{Dyn as _, FileHeader as _, ProgramHeader as _, SectionHeader as _};
use object::{LittleEndian as LE, Pod};

type FileHeader = elf::FileHeader64<LE>;
type ProgramHeader = elf::ProgramHeader64<LE>;
type SectionHeader = elf::SectionHeader64<LE>;
type Dyn = elf::Dyn64<LE>;
type Rela = elf::Rela64<LE>;
type Sym = elf::Sym64<LE>;

/// The longest version chain followed (a longer one is corrupt).
const MAX_CHAIN: usize = 4096;

/// The largest address span the segments of an image may cover (1 TiB): more is no device
/// image, and `dlopen` would reserve it all.
const MAX_SPAN: u64 = 1 << 40;

/// What a valid image told us.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfImage {
    /// `e_machine` (62 x86_64, 190 CUDA).
    pub machine: u16,
    /// `e_type` (`ET_DYN` 3 for a shared object, `ET_REL` 1 / `ET_EXEC` 2 for a cubin).
    pub file_type: u16,
    /// The major version in a `clang version N` line of the `.comment` section, if any (the
    /// compiler that built the image, which fixes its kernels' calling convention).
    pub clang_major: Option<u32>,
}

/// Why an image is not a well-formed ELF file; the text says what is wrong and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfError(pub String);

impl std::fmt::Display for ElfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ElfError {}

fn bad(text: impl Into<String>) -> ElfError {
    ElfError(text.into())
}

/// Validates a 64-bit little-endian ELF image (a host shared object or a cubin): its header,
/// its program headers (every segment inside the file, `PT_LOAD`s sorted, aligned as
/// `dlopen` requires, not overlapping, within [`MAX_SPAN`]), its section headers (inside the
/// file, names inside the name table), and when it has a dynamic table everything `dlopen`
/// reads or writes through it (string, symbol, hash, relocation and init/fini tables inside
/// the segments; each relocation's target and each symbol inside the image).
pub fn validate_elf(bytes: &[u8]) -> Result<ElfImage, ElfError> {
    let header = FileHeader::parse(bytes).map_err(|e| bad(format!("ELF header: {e}")))?;
    if !header.is_class_64() || !header.is_little_endian() {
        return Err(bad("not a 64-bit little-endian ELF file"));
    }
    let endian = LE;
    let ident = header.e_ident();
    // (`e_version` is not checked: cubins carry the CUDA toolchain's own value there.)
    if ident.version != elf::EV_CURRENT {
        return Err(bad("unknown ELF version"));
    }
    if usize::from(header.e_ehsize(endian)) < std::mem::size_of::<FileHeader>() {
        return Err(bad("ELF header size too small"));
    }
    let segments = check_program_headers(header, bytes)?;
    let sections = check_section_headers(header, bytes)?;
    if let Some(dynamic) = segments.dynamic {
        check_dynamic(bytes, &segments.loads, dynamic)?;
    }
    Ok(ElfImage {
        machine: header.e_machine(endian),
        file_type: header.e_type(endian),
        clang_major: sections.and_then(|s| clang_major(header, bytes, s)),
    })
}

/// A `PT_LOAD` segment, as numbers.
#[derive(Clone, Copy, Debug)]
struct Load {
    vaddr: u64,
    memsz: u64,
    offset: u64,
    filesz: u64,
    writable: bool,
    executable: bool,
}

impl Load {
    /// Whether `[addr, addr + size)` lies in the segment's memory.
    fn holds(&self, addr: u64, size: u64) -> bool {
        addr >= self.vaddr
            && addr
                .checked_add(size)
                .is_some_and(|end| end <= self.vaddr + self.memsz)
    }

    /// The file bytes of `[addr, addr + size)` if they lie in the segment's file part.
    fn file_range(&self, addr: u64, size: u64) -> Option<(usize, usize)> {
        if addr < self.vaddr || addr.checked_add(size)? > self.vaddr + self.filesz {
            return None;
        }
        let start = self.offset + (addr - self.vaddr);
        Some((usize::try_from(start).ok()?, usize::try_from(size).ok()?))
    }
}

struct Segments {
    loads: Vec<Load>,
    /// File offset, size and address of `PT_DYNAMIC`.
    dynamic: Option<Dynamic>,
}

#[derive(Clone, Copy)]
struct Dynamic {
    offset: usize,
    size: usize,
    vaddr: u64,
}

fn check_program_headers(header: &FileHeader, bytes: &[u8]) -> Result<Segments, ElfError> {
    let endian = LE;
    let phnum = header.e_phnum(endian);
    if phnum > 0 && usize::from(header.e_phentsize(endian)) != std::mem::size_of::<ProgramHeader>()
    {
        return Err(bad("program header entry size is not 56"));
    }
    let headers = header
        .program_headers(endian, bytes)
        .map_err(|e| bad(format!("program headers: {e} (the image is truncated?)")))?;
    // The segment layout rules are `dlopen`'s (it maps each PT_LOAD at its address). The CUDA
    // driver loads a cubin by its sections: nvlink gives every cubin segment address 0, so
    // they overlap by design; only that they lie inside the file matters there.
    let mapped_by_address = header.e_machine(endian) != elf::EM_CUDA;
    let mut loads: Vec<Load> = Vec::new();
    let mut dynamic = None;
    for (i, ph) in headers.iter().enumerate() {
        let (offset, filesz) = (ph.p_offset(endian), ph.p_filesz(endian));
        let end = offset.checked_add(filesz);
        if end.is_none_or(|end| end > bytes.len() as u64) {
            return Err(bad(format!(
                "segment {i} (bytes {offset}..{}) lies beyond the image's {} bytes: the image is truncated or corrupt",
                offset.saturating_add(filesz),
                bytes.len()
            )));
        }
        match ph.p_type(endian) {
            elf::PT_LOAD if !mapped_by_address => {}
            elf::PT_LOAD => {
                let (vaddr, memsz, align) =
                    (ph.p_vaddr(endian), ph.p_memsz(endian), ph.p_align(endian));
                if filesz > memsz {
                    return Err(bad(format!(
                        "loadable segment {i} has more file bytes ({filesz}) than memory ({memsz})"
                    )));
                }
                if ph.p_flags(endian) & elf::PF_X != 0 && filesz != memsz {
                    // Code the file does not hold would run as zeros.
                    return Err(bad(format!(
                        "code segment {i} holds {filesz} of its {memsz} bytes"
                    )));
                }
                if align > 1 && (!align.is_power_of_two() || vaddr % align != offset % align) {
                    return Err(bad(format!(
                        "loadable segment {i}: address {vaddr:#x} and offset {offset:#x} are not aligned alike to {align:#x}"
                    )));
                }
                if vaddr.checked_add(memsz).is_none_or(|e| e > MAX_SPAN) {
                    return Err(bad(format!(
                        "loadable segment {i} ends beyond {MAX_SPAN:#x}"
                    )));
                }
                if let Some(prev) = loads.last()
                    && vaddr < prev.vaddr + prev.memsz
                {
                    return Err(bad(format!(
                        "loadable segment {i} at {vaddr:#x} overlaps or precedes the one before"
                    )));
                }
                loads.push(Load {
                    vaddr,
                    memsz,
                    offset,
                    filesz,
                    writable: ph.p_flags(endian) & elf::PF_W != 0,
                    executable: ph.p_flags(endian) & elf::PF_X != 0,
                });
            }
            elf::PT_DYNAMIC if mapped_by_address => {
                if filesz % std::mem::size_of::<Dyn>() as u64 != 0 || dynamic.is_some() {
                    return Err(bad("malformed dynamic segment"));
                }
                dynamic = Some(Dynamic {
                    offset: offset as usize,
                    size: filesz as usize,
                    vaddr: ph.p_vaddr(endian),
                });
            }
            _ => {}
        }
    }
    // Segments the loader reads through their addresses once the image is mapped: each must
    // lie in a loadable segment that maps its file bytes at that address.
    for (i, ph) in headers.iter().enumerate() {
        if !mapped_by_address {
            break;
        }
        let t = ph.p_type(endian);
        if !matches!(
            t,
            elf::PT_DYNAMIC
                | elf::PT_NOTE
                | elf::PT_TLS
                | elf::PT_PHDR
                | elf::PT_INTERP
                | elf::PT_GNU_RELRO
                | elf::PT_GNU_PROPERTY
        ) {
            continue;
        }
        let (vaddr, memsz) = (ph.p_vaddr(endian), ph.p_memsz(endian));
        let (offset, filesz) = (ph.p_offset(endian), ph.p_filesz(endian));
        let mapped = loads.iter().any(|l| {
            l.holds(vaddr, memsz)
                && (t == elf::PT_GNU_RELRO
                    || filesz == 0
                    || l.file_range(vaddr, filesz).map(|(at, _)| at as u64) == Some(offset))
        });
        if !mapped {
            return Err(bad(format!(
                "segment {i} (type {t:#x}) at {vaddr:#x} is not inside a loadable segment that maps it"
            )));
        }
    }
    Ok(Segments { loads, dynamic })
}

/// The section headers and the section-name table's bytes, when the image has sections.
struct Sections<'data> {
    headers: &'data [SectionHeader],
    names: &'data [u8],
}

fn check_section_headers<'data>(
    header: &FileHeader,
    bytes: &'data [u8],
) -> Result<Option<Sections<'data>>, ElfError> {
    let endian = LE;
    if header.e_shoff(endian) == 0 {
        return Ok(None);
    }
    if usize::from(header.e_shentsize(endian)) != std::mem::size_of::<SectionHeader>() {
        return Err(bad("section header entry size is not 64"));
    }
    let headers = header
        .section_headers(endian, bytes)
        .map_err(|e| bad(format!("section headers: {e} (the image is truncated?)")))?;
    for (i, sh) in headers.iter().enumerate() {
        if sh.sh_type(endian) != elf::SHT_NOBITS && sh.data(endian, bytes).is_err() {
            return Err(bad(format!(
                "section {i} lies beyond the image's {} bytes: the image is truncated or corrupt",
                bytes.len()
            )));
        }
        if sh.sh_link(endian) as usize >= headers.len().max(1) {
            return Err(bad(format!(
                "section {i} links to a section that does not exist"
            )));
        }
    }
    let index = header
        .shstrndx(endian, bytes)
        .map_err(|e| bad(format!("section names: {e}")))? as usize;
    let names = match headers.get(index) {
        Some(sh) if index != 0 => sh
            .data(endian, bytes)
            .map_err(|_| bad("the section-name table lies beyond the image"))?,
        _ => &[],
    };
    for (i, sh) in headers.iter().enumerate() {
        if i != 0 && sh.sh_name(endian) as usize >= names.len().max(1) {
            return Err(bad(format!(
                "section {i}'s name lies outside the name table"
            )));
        }
    }
    Ok(Some(Sections { headers, names }))
}

/// The clang major version of the `.comment` section (`... clang version 19.1.7 ...`).
fn clang_major(header: &FileHeader, bytes: &[u8], s: Sections<'_>) -> Option<u32> {
    let endian = LE;
    let _ = header;
    let comment = s.headers.iter().find(|sh| {
        let at = sh.sh_name(endian) as usize;
        s.names
            .get(at..)
            .is_some_and(|n| n.starts_with(b".comment\0"))
    })?;
    let data = comment.data(endian, bytes).ok()?;
    data.split(|&b| b == 0).find_map(|line| {
        let text = std::str::from_utf8(line).ok()?;
        let (_, rest) = text.split_once("clang version ")?;
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    })
}

/// Reads `count` values of `T` at virtual address `addr`, which must lie in a segment's file
/// part.
fn table<'data, T: Pod>(
    bytes: &'data [u8],
    loads: &[Load],
    addr: u64,
    count: usize,
    what: &str,
) -> Result<&'data [T], ElfError> {
    let size = (count as u64)
        .checked_mul(std::mem::size_of::<T>() as u64)
        .ok_or_else(|| bad(format!("{what} is too large")))?;
    let (start, len) = loads
        .iter()
        .find_map(|l| l.file_range(addr, size))
        .ok_or_else(|| {
            bad(format!(
                "{what} at {addr:#x} ({size} bytes) lies outside the image's segments"
            ))
        })?;
    let data = bytes
        .get(start..start.saturating_add(len))
        .ok_or_else(|| bad(format!("{what} lies beyond the image")))?;
    pod::slice_from_all_bytes(data).map_err(|_| bad(format!("{what} is misaligned")))
}

/// The dynamic table and what `dlopen` reads and writes through it.
fn check_dynamic(bytes: &[u8], loads: &[Load], dynamic: Dynamic) -> Result<(), ElfError> {
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

/// The symbol versions: the needed and defined version chains (each entry, name and link
/// inside the image) and the version index of each symbol (no index beyond those defined).
fn check_versions(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn header(phnum: u16, shnum: u16) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2; // 64-bit
        b[5] = 1; // little-endian
        b[6] = 1; // EV_CURRENT
        b[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
        b[18..20].copy_from_slice(&62u16.to_le_bytes()); // x86_64
        b[20..24].copy_from_slice(&1u32.to_le_bytes());
        b[32..40].copy_from_slice(&(if phnum > 0 { 64u64 } else { 0 }).to_le_bytes());
        b[52..54].copy_from_slice(&64u16.to_le_bytes());
        b[54..56].copy_from_slice(&56u16.to_le_bytes());
        b[56..58].copy_from_slice(&phnum.to_le_bytes());
        b[58..60].copy_from_slice(&64u16.to_le_bytes());
        b[60..62].copy_from_slice(&shnum.to_le_bytes());
        b
    }

    fn load(b: &mut Vec<u8>, offset: u64, vaddr: u64, filesz: u64, memsz: u64, align: u64) {
        let mut ph = vec![0u8; 56];
        ph[..4].copy_from_slice(&elf::PT_LOAD.to_le_bytes());
        ph[8..16].copy_from_slice(&offset.to_le_bytes());
        ph[16..24].copy_from_slice(&vaddr.to_le_bytes());
        ph[32..40].copy_from_slice(&filesz.to_le_bytes());
        ph[40..48].copy_from_slice(&memsz.to_le_bytes());
        ph[48..56].copy_from_slice(&align.to_le_bytes());
        b.extend(ph);
    }

    #[test]
    fn a_minimal_image_passes() {
        let mut b = header(1, 0);
        load(&mut b, 0, 0, 120, 4096, 4096);
        let image = validate_elf(&b).unwrap();
        assert_eq!(image.machine, 62);
        assert_eq!(image.file_type, 3);
        assert_eq!(image.clang_major, None);
    }

    #[test]
    fn truncation_inside_a_segment_is_refused() {
        let mut b = header(1, 0);
        load(&mut b, 0, 0, 8192, 8192, 4096);
        let e = validate_elf(&b).unwrap_err();
        assert!(e.0.contains("lies beyond the image's 120 bytes"), "{e}");
        // Truncated inside the header or the program headers.
        assert!(validate_elf(&b[..40]).is_err());
        assert!(validate_elf(&b[..100]).is_err());
    }

    #[test]
    fn bad_segments_are_refused() {
        for (offset, vaddr, filesz, memsz, align, why) in [
            (0, 0, 120, 64, 4096, "more file bytes"),
            (0, 8, 120, 4096, 4096, "not aligned alike"),
            (0, 0, 120, 4096, 3000, "not aligned alike"),
            (0, u64::MAX - 10, 0, 100, 0, "ends beyond"),
        ] {
            let mut b = header(1, 0);
            load(&mut b, offset, vaddr, filesz, memsz, align);
            let e = validate_elf(&b).unwrap_err();
            assert!(e.0.contains(why), "{why}: {e}");
        }
        // Overlapping loadable segments.
        let mut b = header(2, 0);
        load(&mut b, 0, 0, 176, 4096, 4096);
        load(&mut b, 0, 4000, 176, 4096, 0);
        let e = validate_elf(&b).unwrap_err();
        assert!(e.0.contains("overlaps"), "{e}");
    }

    /// The program headers nvlink writes into a CUDA 12 (ELF ABI 7) cubin, as `readelf -l`
    /// shows them for `tests/c/api_is_present.c` built for sm_90: PHDR and three PT_LOADs, all
    /// at address 0. The host loader's layout rules refused every such cubin (all GPU programs
    /// stopped with "loadable segment 2 ... overlaps or precedes the one before").
    #[test]
    fn a_cubins_overlapping_segments_pass_but_not_a_host_images() {
        for (machine, ok) in [(elf::EM_CUDA, true), (elf::EM_X86_64, false)] {
            let mut b = header(4, 0);
            b[7] = 0x33; // ELFOSABI_CUDA
            b[8] = 7; // ABI version 7
            b[16..18].copy_from_slice(&elf::ET_EXEC.to_le_bytes());
            b[18..20].copy_from_slice(&machine.to_le_bytes());
            let phdr_at = b.len() as u64;
            let mut ph = vec![0u8; 56];
            ph[..4].copy_from_slice(&elf::PT_PHDR.to_le_bytes());
            ph[8..16].copy_from_slice(&phdr_at.to_le_bytes());
            ph[32..40].copy_from_slice(&224u64.to_le_bytes());
            ph[40..48].copy_from_slice(&224u64.to_le_bytes());
            b.extend(ph);
            load(&mut b, 0, 0, 0x40, 0x40, 8);
            load(&mut b, 0x40, 0, 0x20, 0xec, 8);
            load(&mut b, phdr_at, 0, 224, 224, 8);
            b.resize(0x200, 0);
            let r = validate_elf(&b);
            assert_eq!(r.is_ok(), ok, "machine {machine}: {r:?}");
            if ok {
                assert_eq!(r.unwrap().machine, elf::EM_CUDA);
            } else {
                assert!(r.unwrap_err().0.contains("overlaps"));
            }
        }
        // A cubin's segments must still lie inside the file.
        let mut b = header(1, 0);
        b[18..20].copy_from_slice(&elf::EM_CUDA.to_le_bytes());
        load(&mut b, 0, 0, 8192, 8192, 8);
        assert!(validate_elf(&b).unwrap_err().0.contains("lies beyond"));
    }

    #[test]
    fn not_elf_or_wrong_class_is_refused() {
        assert!(validate_elf(b"garbage").is_err());
        let mut b = header(0, 0);
        b[4] = 1; // 32-bit
        assert!(validate_elf(&b).is_err());
        let mut b = header(0, 0);
        b[6] = 9; // EI_VERSION
        assert!(validate_elf(&b).is_err());
    }
}
