//! The section headers (inside the file, links and names inside their tables), which is what
//! the CUDA driver reads of a cubin, and the compiler's `.comment` line.

use super::{ElfError, FileHeader, SectionHeader, bad};
use object::LittleEndian as LE;
use object::elf;
use object::read::elf::{FileHeader as _, SectionHeader as _};

/// The section headers and the section-name table's bytes, when the image has sections.
pub(super) struct Sections<'data> {
    headers: &'data [SectionHeader],
    names: &'data [u8],
}

pub(super) fn check_section_headers<'data>(
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
pub(super) fn clang_major(header: &FileHeader, bytes: &[u8], s: Sections<'_>) -> Option<u32> {
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
