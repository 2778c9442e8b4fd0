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

#[test]
fn symbol_names_come_from_the_symbol_table() {
    // This test's own executable: an x86_64 ELF file with a symbol table holding `main`.
    let exe = std::fs::read("/proc/self/exe").unwrap();
    let names = symbol_names(&exe).expect("the test binary has a symbol table");
    assert!(names.contains("main"));
    assert!(!names.contains("no_such_symbol_in_this_binary"));
    // The same image at an odd address: read from an aligned copy.
    let mut odd = vec![0u8];
    odd.extend_from_slice(&exe);
    assert_eq!(symbol_names(&odd[1..]), Some(names));
    // No symbol table, or not ELF: nothing known.
    let mut b = header(1, 0);
    load(&mut b, 0, 0, 120, 4096, 4096);
    assert_eq!(symbol_names(&b), None);
    assert_eq!(symbol_names(b".version 8.0\n.target sm_90\n"), None);
}
