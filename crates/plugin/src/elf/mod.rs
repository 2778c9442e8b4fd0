//! Structural validation of ELF device images before a loader sees them.
//!
//! `dlopen` trusts a shared object's program headers, dynamic table and relocations, and the
//! CUDA driver trusts a cubin's section headers: an image truncated inside its loadable
//! segments makes `dlopen` fault (SIGBUS) and a few flipped bytes can crash glibc's loader
//! inside the program. [`validate_elf`] checks, without loading or executing anything, that
//! everything a loader reads or writes lies inside the image and inside its segments; an image
//! that passes can still hold wrong code, but the loader itself no longer walks off the image.
//! It is a pure function (fuzzed by `fuzz/fuzz_targets/device_image.rs`).
//!
//! The checks, by what they read: `segments` the program headers (the layout `dlopen` maps,
//! and the CUDA exception to it), `sections` the section headers and the compiler's
//! `.comment`, `dynamic` the dynamic table with its strings, symbols, hashes, relocations and
//! constructors, `versions` the symbol-version chains.

mod dynamic;
mod sections;
mod segments;
mod versions;

#[cfg(test)]
mod tests;

use dynamic::check_dynamic;
use object::LittleEndian as LE;
use object::elf;
use object::read::elf::FileHeader as _;
use sections::{check_section_headers, clang_major};
use segments::check_program_headers;

// The 64-bit little-endian structures every check reads.
type FileHeader = elf::FileHeader64<LE>;
type ProgramHeader = elf::ProgramHeader64<LE>;
type SectionHeader = elf::SectionHeader64<LE>;
type Dyn = elf::Dyn64<LE>;
type Rela = elf::Rela64<LE>;
type Sym = elf::Sym64<LE>;

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

/// The names of an ELF image's symbol table (`.symtab`), or `None` when it has none or it
/// cannot be read. A cubin's globals and kernels are its symbols: a loader that knows them
/// need not ask the driver for a symbol the image lacks (a failed `cuModuleGetGlobal` is an
/// error to compute-sanitizer; LLVM 19 reads a kernel's environment from the image too).
pub fn symbol_names(bytes: &[u8]) -> Option<std::collections::HashSet<Box<str>>> {
    use object::read::elf::ElfFile64;
    use object::{Object as _, ObjectSymbol as _};
    // The reader wants the ELF structures 8-byte aligned: an image at another offset is read
    // from a copy.
    let mut copy = Vec::new();
    let bytes = if bytes.as_ptr().align_offset(8) == 0 {
        bytes
    } else {
        copy.resize(bytes.len() + 7, 0u8);
        let at = copy.as_ptr().align_offset(8);
        copy[at..at + bytes.len()].copy_from_slice(bytes);
        &copy[at..at + bytes.len()]
    };
    let file = ElfFile64::<LE>::parse(bytes).ok()?;
    let names: std::collections::HashSet<Box<str>> = file
        .symbols()
        .filter_map(|s| s.name().ok().filter(|n| !n.is_empty()).map(Box::from))
        .collect();
    (!names.is_empty()).then_some(names)
}

/// Validates a 64-bit little-endian ELF image (a host shared object or a cubin): its header,
/// its program headers (every segment inside the file, `PT_LOAD`s sorted, aligned as
/// `dlopen` requires, not overlapping, within 1 TiB of address space), its section
/// headers (inside the file, names inside the name table), and when it has a dynamic table
/// everything `dlopen` reads or writes through it (string, symbol, hash, relocation and
/// init/fini tables inside the segments; each relocation's target and each symbol inside the
/// image).
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
