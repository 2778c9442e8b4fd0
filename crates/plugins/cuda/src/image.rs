//! Which NVIDIA images a device can run.

const EM_CUDA: u16 = 190;

/// What kind of code an image holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// A cubin for `sm_<sm>` (ELF ABI version 7 or 8).
    Cubin { sm: u32, abi: u8 },
    /// PTX text, compiled by the driver's JIT.
    Ptx,
    /// A CUDA fatbinary (the driver picks the code).
    Fatbin,
}

/// Classifies an image, or `None` if it is not NVIDIA code.
pub fn classify(bytes: &[u8]) -> Option<ImageKind> {
    if bytes.len() >= 64 && &bytes[..4] == b"\x7fELF" && bytes[4] == 2 {
        let machine = u16::from_le_bytes([bytes[18], bytes[19]]);
        if machine != EM_CUDA {
            return None;
        }
        let abi = bytes[8];
        let flags = u32::from_le_bytes(bytes[48..52].try_into().ok()?);
        // ABI 7 (CUDA ≤ 12.7) keeps the SM in the low byte; ABI 8 (CUDA 12.8+) in bits 8-15.
        let sm = if abi >= 8 {
            (flags >> 8) & 0xff
        } else {
            flags & 0xff
        };
        return Some(ImageKind::Cubin { sm, abi });
    }
    if bytes.len() >= 4 && u32::from_le_bytes(bytes[..4].try_into().ok()?) == 0xBA55_ED50 {
        return Some(ImageKind::Fatbin);
    }
    let text = &bytes[..bytes.len().min(4096)];
    if std::str::from_utf8(text).is_ok_and(|t| t.contains(".version") && t.contains(".target")) {
        return Some(ImageKind::Ptx);
    }
    None
}

/// Checks a cubin's ELF structure before the driver reads it (a truncated or corrupt cubin
/// is refused with the reason, not handed to `cuModuleLoadData`); PTX and fatbinaries pass.
pub fn check_structure(bytes: &[u8], kind: ImageKind) -> Result<(), String> {
    if !matches!(kind, ImageKind::Cubin { .. }) {
        return Ok(());
    }
    omptarget_plugin::elf::validate_elf(bytes)
        .map(|_| ())
        .map_err(|e| format!("the device image is corrupt (not loaded): {e}"))
}

/// `sm_90` → 90.
pub fn parse_arch(arch: &str) -> Option<u32> {
    arch.strip_prefix("sm_")?
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .ok()
}

/// Whether a cubin for `image_sm` runs on a device of compute capability `device_sm`
/// (`major * 10 + minor`): same major, minor not above the device's.
pub fn runs_on(image_sm: u32, device_sm: u32) -> bool {
    image_sm / 10 == device_sm / 10 && image_sm % 10 <= device_sm % 10
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_truncated_cubin_is_refused_before_the_driver_sees_it() {
        // An ET_REL cubin header whose section headers lie past the end.
        let mut cubin = vec![0u8; 64];
        cubin[..4].copy_from_slice(b"\x7fELF");
        cubin[4] = 2;
        cubin[5] = 1;
        cubin[6] = 1;
        cubin[7] = 0x33;
        cubin[8] = 7;
        cubin[16] = 1; // ET_REL
        cubin[18..20].copy_from_slice(&EM_CUDA.to_le_bytes());
        cubin[40..48].copy_from_slice(&4096u64.to_le_bytes()); // e_shoff
        cubin[48..52].copy_from_slice(&0x5a055au32.to_le_bytes());
        cubin[52] = 64;
        cubin[58] = 64; // e_shentsize
        cubin[60] = 3; // e_shnum
        let kind = classify(&cubin).unwrap();
        let e = check_structure(&cubin, kind).unwrap_err();
        assert!(
            e.starts_with("the device image is corrupt (not loaded): section headers"),
            "{e}"
        );
        // The same header without sections passes; PTX is not an ELF file.
        cubin[40..48].copy_from_slice(&0u64.to_le_bytes());
        assert_eq!(check_structure(&cubin, kind), Ok(()));
        assert_eq!(check_structure(b".version 8.0", ImageKind::Ptx), Ok(()));
    }

    /// A cubin's ELF header: ELF ABI version `abi`, `e_flags` = `flags`.
    pub(crate) fn cubin(abi: u8, flags: u32) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[7] = 0x33;
        b[8] = abi;
        b[18..20].copy_from_slice(&EM_CUDA.to_le_bytes());
        b[48..52].copy_from_slice(&flags.to_le_bytes());
        b
    }

    #[test]
    fn reads_the_sm_of_both_elf_abis() {
        assert_eq!(
            classify(&cubin(7, 0x0050_005a)),
            Some(ImageKind::Cubin { sm: 90, abi: 7 })
        );
        assert_eq!(
            classify(&cubin(8, 0x0000_5a02)),
            Some(ImageKind::Cubin { sm: 90, abi: 8 })
        );
        let mut x86 = cubin(0, 0);
        x86[18] = 62;
        x86[19] = 0;
        assert_eq!(classify(&x86), None);
        assert_eq!(
            classify(b"//\n.version 8.0\n.target sm_90\n"),
            Some(ImageKind::Ptx)
        );
        assert_eq!(classify(b"garbage"), None);
    }

    #[test]
    fn compatibility_rules() {
        assert!(runs_on(90, 90));
        assert!(runs_on(80, 86));
        assert!(!runs_on(86, 80));
        assert!(!runs_on(80, 90));
        assert_eq!(parse_arch("sm_90a"), Some(90));
        assert_eq!(parse_arch("gfx90a"), None);
    }
}
