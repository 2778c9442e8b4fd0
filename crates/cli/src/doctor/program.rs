//! What a program's ELF file says about its offloading, read without running it: the libraries
//! it NEEDs, its interpreter, its device images (the `.llvm.offloading` section's
//! OffloadBinaries, with their `triple` and `arch`), which compiler's entry table it has, and
//! the `requires` flags its translation units recorded.

use object::LittleEndian as LE;
use object::elf::{DT_NEEDED, FileHeader64};
use object::read::elf::{Dyn as _, FileHeader as _, ProgramHeader as _, SectionHeader as _};
use omptarget_core::image::unwrap_image;
use std::path::{Path, PathBuf};

/// One device image of the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub triple: Option<String>,
    pub arch: Option<String>,
    pub bytes: Vec<u8>,
}

impl Image {
    /// `nvptx64-nvidia-cuda sm_90`, `x86_64-pc-linux-gnu`, or what the image itself is.
    pub fn describe(&self) -> String {
        match (&self.triple, &self.arch) {
            (Some(t), Some(a)) => format!("{t} {a}"),
            (Some(t), None) => t.clone(),
            (None, _) => match self.bytes.get(18..20) {
                Some([62, 0]) => "an x86_64 image".into(),
                Some([190, 0]) => "a CUDA image".into(),
                _ => "an image of unknown kind".into(),
            },
        }
    }

    /// Whether it is code for an NVIDIA GPU.
    pub fn is_nvidia(&self) -> bool {
        self.triple
            .as_deref()
            .is_some_and(|t| t.starts_with("nvptx"))
            || self.bytes.get(18..20) == Some(&[190, 0])
    }

    pub fn is_x86_64(&self) -> bool {
        self.triple
            .as_deref()
            .is_some_and(|t| t.starts_with("x86_64"))
    }
}

/// Which compiler's offload entry table the program has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entries {
    /// `omp_offloading_entries`, 32-byte entries: clang ≤ 19.
    Clang19,
    /// `llvm_offload_entries`, 56-byte entries: clang ≥ 20.
    Clang20,
}

/// What the doctor knows of a program.
#[derive(Clone, Debug)]
pub struct Program {
    pub path: PathBuf,
    pub needed: Vec<String>,
    pub interpreter: Option<String>,
    pub images: Vec<Image>,
    /// Why the `.llvm.offloading` section could not be read, if it could not.
    pub image_error: Option<String>,
    pub entries: Option<Entries>,
    /// The `requires` flags of every record, or-ed (0x8: `unified_shared_memory`).
    pub requires: u64,
}

/// The OpenMP `requires` record's entry flag.
const REGISTER_REQUIRES: u32 = 0x10;

/// Reads `path`.
pub fn read(path: &Path) -> Result<Program, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(path, &data)
}

fn parse(path: &Path, data: &[u8]) -> Result<Program, String> {
    let not_elf = |e: object::read::Error| {
        format!(
            "{}: not a 64-bit x86_64 ELF program or library ({e})",
            path.display()
        )
    };
    let header = FileHeader64::<LE>::parse(data).map_err(not_elf)?;
    let endian = header.endian().map_err(not_elf)?;
    let sections = header.sections(endian, data).map_err(not_elf)?;
    let mut program = Program {
        path: path.to_path_buf(),
        needed: Vec::new(),
        interpreter: None,
        images: Vec::new(),
        image_error: None,
        entries: None,
        requires: 0,
    };
    if let Some((dyns, link)) = sections.dynamic(endian, data).map_err(not_elf)? {
        let strings = sections.strings(endian, data, link).map_err(not_elf)?;
        for d in dyns {
            if d.tag32(endian) == Some(DT_NEEDED)
                && let Ok(name) = d.string(endian, strings)
            {
                program
                    .needed
                    .push(String::from_utf8_lossy(name).into_owned());
            }
        }
    }
    for ph in header.program_headers(endian, data).map_err(not_elf)? {
        if let Ok(Some(interp)) = ph.interpreter(endian, data) {
            program.interpreter = Some(String::from_utf8_lossy(interp).into_owned());
        }
    }
    for s in sections.iter() {
        let name = sections.section_name(endian, s).unwrap_or(b"");
        let Ok(bytes) = s.data(endian, data) else {
            continue;
        };
        match name {
            b".llvm.offloading" => match offload_images(bytes) {
                Ok(images) => program.images.extend(images),
                Err(e) => program.image_error = Some(e),
            },
            b"omp_offloading_entries" => {
                program.entries = Some(Entries::Clang19);
                program.requires |= requires(bytes, 32, 24, 28, 4);
            }
            b"llvm_offload_entries" => {
                program.entries = Some(Entries::Clang20);
                program.requires |= requires(bytes, 56, 12, 40, 8);
            }
            _ => {}
        }
    }
    Ok(program)
}

/// The images of a `.llvm.offloading` section: OffloadBinaries, 8-byte aligned one after the
/// other (each object file contributes its own).
fn offload_images(mut bytes: &[u8]) -> Result<Vec<Image>, String> {
    let mut out = Vec::new();
    loop {
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        bytes = &bytes[skip..];
        if bytes.is_empty() {
            return Ok(out);
        }
        if !omptarget_core::image::is_offload_binary(bytes) {
            return Err(format!(
                "{} bytes in .llvm.offloading are not an OffloadBinary",
                bytes.len()
            ));
        }
        let size = bytes
            .get(8..16)
            .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")) as usize)
            .filter(|&s| s >= 32 && s <= bytes.len())
            .ok_or("an OffloadBinary in .llvm.offloading is truncated")?;
        for image in unwrap_image(&bytes[..size]).map_err(|e| e.to_string())? {
            out.push(Image {
                triple: image.triple.map(String::from),
                arch: image.arch.map(String::from),
                bytes: image.bytes.to_vec(),
            });
        }
        bytes = &bytes[size..];
    }
}

/// The `requires` flags of the records in an entry table of `size`-byte entries, whose flags
/// (u32) and data (`data_len` bytes) lie at `flags_at` and `data_at`.
fn requires(table: &[u8], size: usize, flags_at: usize, data_at: usize, data_len: usize) -> u64 {
    table
        .chunks_exact(size)
        .filter(|e| {
            u32::from_le_bytes(e[flags_at..flags_at + 4].try_into().expect("4"))
                == REGISTER_REQUIRES
        })
        .map(|e| {
            let mut b = [0u8; 8];
            b[..data_len].copy_from_slice(&e[data_at..data_at + data_len]);
            u64::from_le_bytes(b)
        })
        .fold(0, |a, f| a | f)
}

/// Builds an OffloadBinary holding `image` with `triple` and `arch` (for tests and for the
/// doctor's own test programs).
#[cfg(test)]
pub fn offload_binary(image: &[u8], triple: &str, arch: &str) -> Vec<u8> {
    let strings = format!("triple\0{triple}\0arch\0{arch}\0");
    let (header, entry) = (32usize, 40usize);
    let table = header + entry;
    let str_data = table + 32;
    let image_at = (str_data + strings.len()).next_multiple_of(8);
    let size = image_at + image.len();
    let mut b = vec![0u8; size];
    b[..4].copy_from_slice(&[0x10, 0xFF, 0x10, 0xAD]);
    b[4..8].copy_from_slice(&1u32.to_le_bytes());
    b[8..16].copy_from_slice(&(size as u64).to_le_bytes());
    b[16..24].copy_from_slice(&(header as u64).to_le_bytes());
    b[24..32].copy_from_slice(&(entry as u64).to_le_bytes());
    let e = header;
    b[e..e + 2].copy_from_slice(&3u16.to_le_bytes());
    b[e + 8..e + 16].copy_from_slice(&(table as u64).to_le_bytes());
    b[e + 16..e + 24].copy_from_slice(&2u64.to_le_bytes());
    b[e + 24..e + 32].copy_from_slice(&(image_at as u64).to_le_bytes());
    b[e + 32..e + 40].copy_from_slice(&(image.len() as u64).to_le_bytes());
    let offs = [0, 7, 7 + triple.len() + 1, 7 + triple.len() + 1 + 5];
    for (i, o) in offs.iter().enumerate() {
        let at = table + 8 * i;
        b[at..at + 8].copy_from_slice(&((str_data + o) as u64).to_le_bytes());
    }
    b[str_data..str_data + strings.len()].copy_from_slice(strings.as_bytes());
    b[image_at..].copy_from_slice(image);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenated_offload_binaries_give_each_image() {
        let mut section = offload_binary(b"\x7fELF-host", "x86_64-pc-linux-gnu", "");
        section.resize(section.len().next_multiple_of(8), 0);
        section.extend(offload_binary(&[7u8; 70], "nvptx64-nvidia-cuda", "sm_90"));
        let images = offload_images(&section).unwrap();
        assert_eq!(images.len(), 2);
        assert_eq!(images[0].describe(), "x86_64-pc-linux-gnu");
        assert!(images[0].is_x86_64());
        assert_eq!(images[1].describe(), "nvptx64-nvidia-cuda sm_90");
        assert!(images[1].is_nvidia());
        assert!(offload_images(b"junk").is_err());
    }

    #[test]
    fn requires_records_of_both_entry_forms() {
        // clang 19: {addr, name, size, i32 flags, i32 data}; a kernel, then a USM record.
        let mut t19 = vec![0u8; 64];
        t19[56..60].copy_from_slice(&0x10u32.to_le_bytes());
        t19[60..64].copy_from_slice(&0x8u32.to_le_bytes());
        assert_eq!(requires(&t19, 32, 24, 28, 4), 0x8);
        // clang 20+: {u64 0, u16 version, u16 kind, u32 flags, addr, name, size, u64 data, aux}.
        let mut t22 = vec![0u8; 112];
        t22[56 + 12..56 + 16].copy_from_slice(&0x10u32.to_le_bytes());
        t22[56 + 40..56 + 48].copy_from_slice(&0x8u64.to_le_bytes());
        assert_eq!(requires(&t22, 56, 12, 40, 8), 0x8);
        assert_eq!(requires(&t22[..56], 56, 12, 40, 8), 0);
    }

    #[test]
    fn a_file_that_is_not_elf_is_refused_with_its_name() {
        let e = parse(Path::new("x.txt"), b"hello").unwrap_err();
        assert!(e.starts_with("x.txt: not a 64-bit"), "{e}");
    }
}
