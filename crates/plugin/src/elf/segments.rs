//! The program headers: every segment inside the file and, for an image `dlopen` maps by
//! address, the `PT_LOAD` layout it requires; and reading a table at a virtual address
//! through that layout.

use super::{Dyn, ElfError, FileHeader, ProgramHeader, bad};
use object::elf;
use object::pod;
use object::read::elf::{FileHeader as _, ProgramHeader as _};
use object::{LittleEndian as LE, Pod};

/// The largest address span the segments of an image may cover (1 TiB): more is no device
/// image, and `dlopen` would reserve it all.
pub(super) const MAX_SPAN: u64 = 1 << 40;

/// A `PT_LOAD` segment, as numbers.
#[derive(Clone, Copy, Debug)]
pub(super) struct Load {
    pub(super) vaddr: u64,
    pub(super) memsz: u64,
    pub(super) offset: u64,
    pub(super) filesz: u64,
    pub(super) writable: bool,
    pub(super) executable: bool,
}

impl Load {
    /// Whether `[addr, addr + size)` lies in the segment's memory.
    pub(super) fn holds(&self, addr: u64, size: u64) -> bool {
        addr >= self.vaddr
            && addr
                .checked_add(size)
                .is_some_and(|end| end <= self.vaddr + self.memsz)
    }

    /// The file bytes of `[addr, addr + size)` if they lie in the segment's file part.
    pub(super) fn file_range(&self, addr: u64, size: u64) -> Option<(usize, usize)> {
        if addr < self.vaddr || addr.checked_add(size)? > self.vaddr + self.filesz {
            return None;
        }
        let start = self.offset + (addr - self.vaddr);
        Some((usize::try_from(start).ok()?, usize::try_from(size).ok()?))
    }
}

pub(super) struct Segments {
    pub(super) loads: Vec<Load>,
    /// File offset, size and address of `PT_DYNAMIC`.
    pub(super) dynamic: Option<Dynamic>,
}

#[derive(Clone, Copy)]
pub(super) struct Dynamic {
    pub(super) offset: usize,
    pub(super) size: usize,
    pub(super) vaddr: u64,
}

pub(super) fn check_program_headers(
    header: &FileHeader,
    bytes: &[u8],
) -> Result<Segments, ElfError> {
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

/// Reads `count` values of `T` at virtual address `addr`, which must lie in a segment's file
/// part.
pub(super) fn table<'data, T: Pod>(
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
