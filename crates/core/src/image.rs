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

/// One device image, after unwrapping an OffloadBinary.
#[derive(Clone, Copy, Debug)]
pub struct DeviceImage {
    pub bytes: &'static [u8],
    pub triple: Option<&'static str>,
    pub arch: Option<&'static str>,
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
    pub images: Vec<DeviceImage>,
    pub entries: Vec<OffloadEntry>,
    /// Set until the binary is unregistered; held while its bytes are read.
    registered: std::sync::Mutex<bool>,
}

impl Binary {
    pub fn new(key: usize, images: Vec<DeviceImage>, entries: Vec<OffloadEntry>) -> Self {
        Self {
            key,
            images,
            entries,
            registered: std::sync::Mutex::new(true),
        }
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

const OFFLOAD_BINARY_MAGIC: [u8; 4] = [0x10, 0xFF, 0x10, 0xAD];
const HEADER_SIZE: usize = 32;
const ENTRY_SIZE: usize = 40;

/// Whether `bytes` starts with the OffloadBinary magic.
pub fn is_offload_binary(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && bytes[..4] == OFFLOAD_BINARY_MAGIC
}

fn read_u64(b: &[u8], at: usize) -> Result<u64> {
    b.get(at..at + 8)
        .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
        .ok_or_else(|| Error::InvalidImage(format!("OffloadBinary truncated at byte {at}")))
}

fn read_str(b: &'static [u8], at: u64) -> Result<&'static str> {
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
pub fn unwrap_image(bytes: &'static [u8]) -> Result<Vec<DeviceImage>> {
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

fn parse_one(b: &'static [u8]) -> Result<(Vec<DeviceImage>, usize)> {
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
        let key = read_str(b, read_u64(b, string_offset + 16 * i)?)?;
        let value = read_str(b, read_u64(b, string_offset + 16 * i + 8)?)?;
        match key {
            "triple" => triple = Some(value),
            "arch" => arch = Some(value),
            _ => {}
        }
    }
    // Bitcode (2) needs a JIT we do not have; every other kind goes to the plugins.
    let images = if image_kind == 2 {
        Vec::new()
    } else {
        vec![DeviceImage {
            bytes: image,
            triple,
            arch,
        }]
    };
    Ok((images, size))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds an OffloadBinary around `image` (leaked: images are `'static`).
    pub fn offload_binary(image: &[u8], triple: &str, arch: &str) -> &'static [u8] {
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
        Box::leak(b.into_boxed_slice())
    }

    #[test]
    fn unwraps_an_offload_binary() {
        let ob = offload_binary(b"\x7fELF-payload", "x86_64-pc-linux-gnu", "native");
        let images = unwrap_image(ob).unwrap();
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].bytes, b"\x7fELF-payload");
        assert_eq!(images[0].triple, Some("x86_64-pc-linux-gnu"));
        assert_eq!(images[0].arch, Some("native"));
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
        let cut: &'static [u8] = Box::leak(ob[..40].to_vec().into_boxed_slice());
        assert!(matches!(unwrap_image(cut), Err(Error::InvalidImage(_))));
        // Image offset past the end.
        let mut bad = ob.to_vec();
        bad[HEADER_SIZE + 24..HEADER_SIZE + 32].copy_from_slice(&u64::MAX.to_le_bytes());
        let bad: &'static [u8] = Box::leak(bad.into_boxed_slice());
        assert!(matches!(unwrap_image(bad), Err(Error::InvalidImage(_))));
        // Wrong version.
        let mut v = ob.to_vec();
        v[4] = 9;
        let v: &'static [u8] = Box::leak(v.into_boxed_slice());
        assert!(matches!(unwrap_image(v), Err(Error::InvalidImage(_))));
        // Only the magic.
        let m: &'static [u8] = &OFFLOAD_BINARY_MAGIC;
        assert!(matches!(unwrap_image(m), Err(Error::InvalidImage(_))));
    }
}
