//! Host copies between the program's pageable memory and the pinned staging buffers.
//!
//! A large staged copy is bound by the host's memory bandwidth (docs/PERFORMANCE.md, `probe
//! host-copies`). An ordinary store to a line not in the cache first reads the line (a
//! read-for-ownership), so copying N bytes moves 3N over the memory bus; non-temporal stores
//! write whole lines without reading them, 2N. [`copy`] uses them for copies of at least
//! [`STREAM_MIN`] bytes (smaller ones stay in the cache for the next reader), on x86-64 with
//! AVX2, unless `OMPTARGET_RS_CUDA_STREAMING_COPIES=0`.

/// Copies of fewer bytes use `memcpy`: the data stays in the cache, where its next reader
/// (the DMA engine snooping, or the program) finds it.
pub const STREAM_MIN: usize = 64 << 10;

/// Whether [`copy`] may use non-temporal stores (`OMPTARGET_RS_CUDA_STREAMING_COPIES`,
/// default on, and AVX2), decided once.
pub fn streaming() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    static ON: AtomicU8 = AtomicU8::new(0);
    match ON.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let on = std::env::var("OMPTARGET_RS_CUDA_STREAMING_COPIES")
                .map_or(true, |v| !matches!(v.trim(), "0" | "false" | "off" | "no"))
                && avx2();
            ON.store(if on { 1 } else { 2 }, Ordering::Relaxed);
            on
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn avx2() -> bool {
    std::is_x86_feature_detected!("avx2")
}

#[cfg(not(target_arch = "x86_64"))]
fn avx2() -> bool {
    false
}

/// Copies `len` bytes from `src` to `dst`.
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes, the two not overlapping.
pub unsafe fn copy(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if len >= STREAM_MIN && streaming() {
        // SAFETY: the caller's contract; AVX2 was detected by `streaming`.
        unsafe { stream(dst, src, len) };
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
}

/// The non-temporal copy: `memcpy` up to `dst`'s first 32-byte boundary, 128 bytes per step
/// (unaligned loads, aligned streaming stores), `memcpy` for the rest; a store fence orders
/// the streaming stores before whatever the caller does next (queue a DMA, report the copy
/// done).
///
/// # Safety
/// As [`copy`], and the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn stream(dst: *mut u8, src: *const u8, len: usize) {
    use std::arch::x86_64::{__m256i, _mm_sfence, _mm256_loadu_si256, _mm256_stream_si256};
    let head = dst.align_offset(32).min(len);
    // SAFETY (all blocks below): within the caller's ranges; `d` is 32-byte aligned after
    // the head.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        let (mut d, mut s) = (dst.add(head), src.add(head));
        let body = (len - head) & !127;
        let end = d.add(body);
        while d < end {
            let a = _mm256_loadu_si256(s.cast::<__m256i>());
            let b = _mm256_loadu_si256(s.add(32).cast::<__m256i>());
            let c = _mm256_loadu_si256(s.add(64).cast::<__m256i>());
            let e = _mm256_loadu_si256(s.add(96).cast::<__m256i>());
            _mm256_stream_si256(d.cast::<__m256i>(), a);
            _mm256_stream_si256(d.add(32).cast::<__m256i>(), b);
            _mm256_stream_si256(d.add(64).cast::<__m256i>(), c);
            _mm256_stream_si256(d.add(96).cast::<__m256i>(), e);
            d = d.add(128);
            s = s.add(128);
        }
        std::ptr::copy_nonoverlapping(s, d, len - head - body);
        _mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every offset and length around the edges of the aligned body, through both paths.
    #[test]
    fn copies_every_byte_at_any_alignment() {
        let n = STREAM_MIN + 512;
        let src: Vec<u8> = (0..n + 64).map(|i| (i * 7 + 3) as u8).collect();
        for len in [
            0,
            1,
            31,
            127,
            128,
            4096,
            STREAM_MIN - 1,
            STREAM_MIN,
            STREAM_MIN + 129,
            n,
        ] {
            for (so, doff) in [(0, 0), (1, 0), (0, 1), (5, 31), (33, 7), (64, 64)] {
                let mut dst = vec![0u8; n + 128];
                // SAFETY: both ranges lie inside the vectors.
                unsafe { copy(dst.as_mut_ptr().add(doff), src.as_ptr().add(so), len) };
                assert_eq!(
                    &dst[doff..doff + len],
                    &src[so..so + len],
                    "len {len} +{so} +{doff}"
                );
                assert!(dst[..doff].iter().all(|&b| b == 0));
                assert!(dst[doff + len..].iter().all(|&b| b == 0));
            }
        }
    }
}
