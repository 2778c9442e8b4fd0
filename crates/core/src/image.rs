//! Registered binaries: device images (raw or wrapped in an LLVM OffloadBinary) and the host
//! entry table that names their kernels and globals.

use crate::error::{Error, Result};
use std::ffi::CStr;

/// Entry flags (`__tgt_offload_entry::flags`).
pub mod entry_flags {
    pub const LINK: u32 = 0x01;
    pub const CTOR: u32 = 0x02;
    pub const DTOR: u32 = 0x04;
    pub const INDIRECT: u32 = 0x08;
    pub const REQUIRES: u32 = 0x10;
    /// LLVM 22 (`OMP_DECLARE_TARGET_INDIRECT_VTABLE`): the entry is a C++ vtable of a class a
    /// target region maps; `size` is the vtable's, and the device symbol is one pointer that
    /// holds the device vtable's address.
    pub const INDIRECT_VTABLE: u32 = 0x20;
}

/// The offload ABI a registered binary was compiled for. It is decided per binary, not per
/// process (a clang-19 library may run inside a clang-22 program), and picks LLVM 19's or LLVM
/// 22's behaviour where the two runtimes differ (docs/ARCHITECTURE.md, "Two ABIs").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Abi {
    /// clang ≤ 19: 32-byte host entries; the program needs `libomptarget.so.19.1`.
    #[default]
    Llvm19,
    /// clang ≥ 20 (measured against clang 22): 56-byte `EntryTy` host entries, `ATTACH` map
    /// entries; the program needs `libomptarget.so.22.1`.
    Llvm22,
}

/// One host entry, decoded from either the 32-byte (clang ≤ 19) or 48-byte (LLVM ≥ 20) layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffloadEntry {
    /// The host address: a kernel's region id or a global variable.
    pub addr: usize,
    /// The device symbol name.
    pub name: &'static CStr,
    /// 0 for a kernel, the size in bytes for a global.
    pub size: usize,
    pub flags: u32,
    /// For a requires record, the requires flags.
    pub data: u64,
}

impl OffloadEntry {
    pub fn is_kernel(&self) -> bool {
        self.size == 0 && self.flags & (entry_flags::REQUIRES | entry_flags::LINK) == 0
    }
    pub fn name_str(&self) -> &'static str {
        self.name.to_str().unwrap_or("<non-UTF-8 name>")
    }
}

/// One device image, after unwrapping an OffloadBinary (borrowed from the registered bytes,
/// which live as long as the program: `'static` once registered).
#[derive(Clone, Copy, Debug)]
pub struct DeviceImage<'a> {
    pub bytes: &'a [u8],
    pub triple: Option<&'a str>,
    pub arch: Option<&'a str>,
}

/// A registered `__tgt_bin_desc`: everything one program or shared library brought.
///
/// The image bytes and entry names belong to that program or library: a library's are
/// unmapped by `dlclose` as soon as its unregistration returns. Whoever reads them outside
/// registration and unregistration (a device loading the binary) does so through
/// [`Binary::while_registered`], which unregistration waits for; nothing else waits there.
#[derive(Debug)]
pub struct Binary {
    /// The descriptor's address: the key `__tgt_unregister_lib` passes back.
    pub key: usize,
    pub images: Vec<DeviceImage<'static>>,
    pub entries: Vec<OffloadEntry>,
    pub abi: Abi,
    /// The address range of the program or library that registered it (its loaded segments;
    /// empty when unknown): constructs and kernels whose addresses lie in it are its own.
    pub object: std::ops::Range<usize>,
    /// Set until the binary is unregistered; held while its bytes are read.
    registered: std::sync::Mutex<bool>,
}

impl Binary {
    /// A binary of LLVM 19's ABI from no known object; see [`Binary::from_object`].
    pub fn new(key: usize, images: Vec<DeviceImage<'static>>, entries: Vec<OffloadEntry>) -> Self {
        Self {
            key,
            images,
            entries,
            abi: Abi::Llvm19,
            object: 0..0,
            registered: std::sync::Mutex::new(true),
        }
    }

    /// The binary compiled for `abi` by the program or library loaded at `object`.
    pub fn from_object(mut self, abi: Abi, object: std::ops::Range<usize>) -> Self {
        self.abi = abi;
        self.object = object;
        self
    }

    fn registered(&self) -> std::sync::MutexGuard<'_, bool> {
        self.registered.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `read` on the binary while it stays registered (its bytes stay mapped), or returns
    /// `None` once it is unregistered. `read` must only copy: unregistration, which may run
    /// under the dynamic loader's lock, waits for it.
    pub fn while_registered<R>(&self, read: impl FnOnce(&Binary) -> R) -> Option<R> {
        let registered = self.registered();
        registered.then(|| read(self))
    }

    /// Whether the binary is still registered.
    pub fn is_registered(&self) -> bool {
        *self.registered()
    }

    /// Marks the binary unregistered, after any read in progress: from now on nobody reads
    /// its bytes or names.
    pub fn retire(&self) {
        *self.registered() = false;
    }
}

/// The size of a host entry of clang ≤ 19 (`__tgt_offload_entry`).
pub const ENTRY_SIZE_32: usize = 32;
/// The size of a host entry of LLVM ≥ 20 (`llvm::offloading::EntryTy`: seven 8-byte words).
pub const ENTRY_SIZE_V20: usize = 56;

fn word(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// `llvm::object::OffloadKind::OFK_OpenMP`: the kind of the LLVM ≥ 20 entries this runtime
/// serves (a binary may also carry CUDA or HIP entries, which LLVM's runtime skips too).
const OFFLOAD_KIND_OPENMP: u16 = 1;

/// The ABI whose layout a host entry table has (`None` for an empty one): LLVM 20's 56-byte
/// entries start with a zero word, clang 19's with a non-null address.
pub fn entry_table_abi(bytes: &[u8]) -> Option<Abi> {
    match bytes.get(..8) {
        None => None,
        Some(w) if w == [0; 8] => Some(Abi::Llvm22),
        Some(_) => Some(Abi::Llvm19),
    }
}

/// Decodes a host entry table from its bytes: the 32-byte entries of clang ≤ 19, or LLVM
/// 20's 56-byte ones, told apart by the first word (LLVM 20's `Reserved`, always 0; a
/// clang-19 entry starts with a non-null address). LLVM 20 entries of another kind than
/// OpenMP's (CUDA, HIP) are left out. `name` turns a symbol-name pointer into
/// the name (the C boundary reads the program's string; a null pointer is an error).
pub fn decode_entry_table(
    bytes: &[u8],
    mut name: impl FnMut(usize) -> std::result::Result<&'static CStr, String>,
) -> std::result::Result<Vec<OffloadEntry>, String> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let v20 = bytes.len() >= 8 && word(bytes, 0) == 0;
    let size = if v20 { ENTRY_SIZE_V20 } else { ENTRY_SIZE_32 };
    if !bytes.len().is_multiple_of(size) {
        return Err(format!(
            "host entry table of {} bytes is not a multiple of {size}",
            bytes.len()
        ));
    }
    bytes
        .chunks_exact(size)
        .filter(|e| !v20 || u16::from_le_bytes([e[10], e[11]]) == OFFLOAD_KIND_OPENMP)
        .map(|e| {
            Ok(if v20 {
                OffloadEntry {
                    addr: word(e, 16) as usize,
                    name: name(word(e, 24) as usize)?,
                    size: word(e, 32) as usize,
                    flags: u32::from_le_bytes(e[12..16].try_into().expect("4 bytes")),
                    data: word(e, 40),
                }
            } else {
                OffloadEntry {
                    addr: word(e, 0) as usize,
                    name: name(word(e, 8) as usize)?,
                    size: word(e, 16) as usize,
                    flags: u32::from_le_bytes(e[24..28].try_into().expect("4 bytes")),
                    data: u64::from(u32::from_le_bytes(e[28..32].try_into().expect("4 bytes"))),
                }
            })
        })
        .collect()
}

const OFFLOAD_BINARY_MAGIC: [u8; 4] = [0x10, 0xFF, 0x10, 0xAD];
const HEADER_SIZE: usize = 32;
const ENTRY_SIZE: usize = 40;

/// Whether `bytes` is LLVM bitcode (raw, or in its wrapper), as `-fopenmp-target-jit` embeds.
pub fn is_bitcode(bytes: &[u8]) -> bool {
    bytes.starts_with(b"BC\xC0\xDE") || bytes.starts_with(&[0xDE, 0xC0, 0x17, 0x0B])
}

/// Whether `bytes` starts with the OffloadBinary magic.
pub fn is_offload_binary(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && bytes[..4] == OFFLOAD_BINARY_MAGIC
}

fn read_u64(b: &[u8], at: usize) -> Result<u64> {
    b.get(at..at.saturating_add(8))
        .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
        .ok_or_else(|| Error::InvalidImage(format!("OffloadBinary truncated at byte {at}")))
}

fn read_str(b: &[u8], at: u64) -> Result<&str> {
    let at = usize::try_from(at).map_err(|_| Error::InvalidImage("bad string offset".into()))?;
    let rest = b
        .get(at..)
        .ok_or_else(|| Error::InvalidImage(format!("string offset {at} out of bounds")))?;
    let end = rest
        .iter()
        .position(|&c| c == 0)
        .ok_or_else(|| Error::InvalidImage("unterminated string".into()))?;
    std::str::from_utf8(&rest[..end]).map_err(|_| Error::InvalidImage("non-UTF-8 string".into()))
}

/// Unwraps a device image: an OffloadBinary yields each image it holds (with its triple and
/// arch); anything else is taken as a raw image.
pub fn unwrap_image(bytes: &[u8]) -> Result<Vec<DeviceImage<'_>>> {
    if !is_offload_binary(bytes) {
        return Ok(vec![DeviceImage {
            bytes,
            triple: None,
            arch: None,
        }]);
    }
    let mut out = Vec::new();
    let mut rest = bytes;
    // Several OffloadBinaries may be concatenated; each header gives its own size.
    while is_offload_binary(rest) {
        let (images, size) = parse_one(rest)?;
        out.extend(images);
        rest = &rest[size..];
        // Binaries are 8-byte aligned when concatenated.
        let pad = rest.iter().take_while(|&&b| b == 0).count().min(7);
        rest = &rest[pad..];
    }
    Ok(out)
}

fn parse_one(b: &[u8]) -> Result<(Vec<DeviceImage<'_>>, usize)> {
    if b.len() < HEADER_SIZE {
        return Err(Error::InvalidImage("OffloadBinary header truncated".into()));
    }
    let version = u32::from_le_bytes(b[4..8].try_into().expect("4 bytes"));
    if version != 1 {
        return Err(Error::InvalidImage(format!(
            "unsupported OffloadBinary version {version}"
        )));
    }
    let size = read_u64(b, 8)?;
    let size = usize::try_from(size)
        .ok()
        .filter(|&s| (HEADER_SIZE..=b.len()).contains(&s))
        .ok_or_else(|| {
            Error::InvalidImage(format!(
                "OffloadBinary size {size} does not fit the {} bytes given",
                b.len()
            ))
        })?;
    let b = &b[..size];
    let entry_offset = read_u64(b, 16)? as usize;
    let entry_size = read_u64(b, 24)? as usize;
    if entry_size < ENTRY_SIZE
        || entry_offset
            .checked_add(entry_size)
            .is_none_or(|e| e > size)
    {
        return Err(Error::InvalidImage(
            "OffloadBinary entry out of bounds".into(),
        ));
    }
    let e = entry_offset;
    let image_kind = u16::from_le_bytes(b[e..e + 2].try_into().expect("2 bytes"));
    let string_offset = read_u64(b, e + 8)? as usize;
    let num_strings = read_u64(b, e + 16)? as usize;
    let image_offset = read_u64(b, e + 24)? as usize;
    let image_size = read_u64(b, e + 32)? as usize;
    let image = image_offset
        .checked_add(image_size)
        .filter(|&end| end <= size)
        .map(|end| &b[image_offset..end])
        .ok_or_else(|| Error::InvalidImage("OffloadBinary image out of bounds".into()))?;
    if num_strings > size / 16 {
        return Err(Error::InvalidImage(
            "OffloadBinary string table too large".into(),
        ));
    }
    let (mut triple, mut arch) = (None, None);
    for i in 0..num_strings {
        let at = string_offset.saturating_add(16 * i);
        let key = read_str(b, read_u64(b, at)?)?;
        let value = read_str(b, read_u64(b, at.saturating_add(8))?)?;
        // An empty value says nothing (LLVM 19 then goes by the image itself).
        match key {
            "triple" if !value.is_empty() => triple = Some(value),
            "arch" if !value.is_empty() => arch = Some(value),
            _ => {}
        }
    }
    // Every kind goes to the registration: bitcode (kind 2) is reported there as an image no
    // device can run (it needs a JIT), the plugins judge the rest.
    let _ = image_kind;
    let images = vec![DeviceImage {
        bytes: image,
        triple,
        arch,
    }];
    Ok((images, size))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds an OffloadBinary around `image`.
    pub fn offload_binary(image: &[u8], triple: &str, arch: &str) -> Vec<u8> {
        let strings = format!("triple\0{triple}\0arch\0{arch}\0");
        let str_table = HEADER_SIZE + ENTRY_SIZE;
        let str_data = str_table + 32;
        let image_at = (str_data + strings.len()).next_multiple_of(8);
        let size = image_at + image.len();
        let mut b = vec![0u8; size];
        b[..4].copy_from_slice(&OFFLOAD_BINARY_MAGIC);
        b[4..8].copy_from_slice(&1u32.to_le_bytes());
        b[8..16].copy_from_slice(&(size as u64).to_le_bytes());
        b[16..24].copy_from_slice(&(HEADER_SIZE as u64).to_le_bytes());
        b[24..32].copy_from_slice(&(ENTRY_SIZE as u64).to_le_bytes());
        let e = HEADER_SIZE;
        b[e..e + 2].copy_from_slice(&1u16.to_le_bytes()); // object
        b[e + 8..e + 16].copy_from_slice(&(str_table as u64).to_le_bytes());
        b[e + 16..e + 24].copy_from_slice(&2u64.to_le_bytes());
        b[e + 24..e + 32].copy_from_slice(&(image_at as u64).to_le_bytes());
        b[e + 32..e + 40].copy_from_slice(&(image.len() as u64).to_le_bytes());
        let offs = [0, 7, 7 + triple.len() + 1, 7 + triple.len() + 1 + 5];
        for (i, o) in offs.iter().enumerate() {
            let at = str_table + 8 * i;
            b[at..at + 8].copy_from_slice(&((str_data + o) as u64).to_le_bytes());
        }
        b[str_data..str_data + strings.len()].copy_from_slice(strings.as_bytes());
        b[image_at..].copy_from_slice(image);
        b
    }

    fn names(p: usize) -> std::result::Result<&'static CStr, String> {
        match p {
            0 => Err("an offload entry has no name".into()),
            1 => Ok(c"k"),
            _ => Ok(c"g"),
        }
    }

    #[test]
    fn decodes_both_entry_layouts() {
        let mut e32 = vec![0u8; 64];
        e32[0] = 0x10; // addr
        e32[8] = 1; // name
        e32[32] = 0x20;
        e32[40] = 2;
        e32[48] = 4; // size
        e32[56] = 0x10; // flags: requires
        e32[60] = 8; // data
        let t = decode_entry_table(&e32, names).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].addr, t[0].name_str(), t[0].size), (0x10, "k", 0));
        assert_eq!((t[1].flags, t[1].data, t[1].size), (0x10, 8, 4));
        let mut e56 = vec![0u8; 56];
        e56[10] = 1; // kind: OpenMP
        e56[12] = 2; // flags: ctor
        e56[16] = 0x30; // address
        e56[24] = 1; // name
        e56[40] = 7; // data
        let t = decode_entry_table(&e56, names).unwrap();
        assert_eq!((t[0].addr, t[0].flags, t[0].data), (0x30, 2, 7));
        assert!(decode_entry_table(&e56[..40], names).is_err());
        // Entries of other offload kinds (CUDA's is 2) are not OpenMP's.
        let mut cuda = e56.clone();
        cuda[10] = 2;
        assert!(decode_entry_table(&cuda, names).unwrap().is_empty());
        assert_eq!(entry_table_abi(&e56), Some(Abi::Llvm22));
        assert_eq!(entry_table_abi(&e32), Some(Abi::Llvm19));
        assert_eq!(entry_table_abi(&[]), None);
        assert!(decode_entry_table(&e32[..33], names).is_err());
        e32[8] = 0;
        assert_eq!(
            decode_entry_table(&e32, names).unwrap_err(),
            "an offload entry has no name"
        );
        assert_eq!(decode_entry_table(&[], names).unwrap(), vec![]);
    }

    #[test]
    fn unwraps_an_offload_binary() {
        let ob = offload_binary(b"\x7fELF-payload", "x86_64-pc-linux-gnu", "native");
        let images = unwrap_image(&ob).unwrap();
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].bytes, b"\x7fELF-payload");
        assert_eq!(images[0].triple, Some("x86_64-pc-linux-gnu"));
        assert_eq!(images[0].arch, Some("native"));
    }

    #[test]
    fn an_empty_triple_or_arch_says_nothing() {
        let ob = offload_binary(b"\x7fELF-payload", "", "");
        let images = unwrap_image(&ob).unwrap();
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].triple, None, "judged by the image itself");
        assert_eq!(images[0].arch, None);
    }

    #[test]
    fn bitcode_is_recognised() {
        assert!(is_bitcode(b"BC\xC0\xDE\x35\x14"));
        assert!(!is_bitcode(b"\x7fELF"));
    }

    #[test]
    fn raw_images_pass_through() {
        let raw: &'static [u8] = b"\x7fELF raw";
        let images = unwrap_image(raw).unwrap();
        assert_eq!(images[0].bytes, raw);
        assert_eq!(images[0].triple, None);
    }

    #[test]
    fn corrupt_offload_binaries_are_errors() {
        let ob = offload_binary(b"\x7fELF-payload", "x86_64-pc-linux-gnu", "native");
        // Truncated.
        assert!(matches!(
            unwrap_image(&ob[..40]),
            Err(Error::InvalidImage(_))
        ));
        // Image offset past the end.
        let mut bad = ob.to_vec();
        bad[HEADER_SIZE + 24..HEADER_SIZE + 32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(unwrap_image(&bad), Err(Error::InvalidImage(_))));
        // Wrong version.
        let mut v = ob.to_vec();
        v[4] = 9;
        assert!(matches!(unwrap_image(&v), Err(Error::InvalidImage(_))));
        // Only the magic.
        let m: &'static [u8] = &OFFLOAD_BINARY_MAGIC;
        assert!(matches!(unwrap_image(m), Err(Error::InvalidImage(_))));
        // A string table at the end of the address space (found by fuzz/device_image: the
        // offset arithmetic overflowed).
        let mut far = ob.to_vec();
        far[HEADER_SIZE + 8..HEADER_SIZE + 16].copy_from_slice(&(u64::MAX - 4).to_le_bytes());
        assert!(matches!(unwrap_image(&far), Err(Error::InvalidImage(_))));
    }
}
