//! The host side of staged copies: the program's bytes into pinned buffers and back. Small
//! copies use `memcpy`; a large copy's bytes are read once and, on their side of the copy,
//! not touched by the CPU again (the DMA reads a filled buffer, and the program's array
//! outgrows the caches), so large copies may store past the caches ([`copy_streaming`]).

/// Copies whose whole (every chunk together) is at least this large store past the caches
/// when the device allows it (`Options::streaming`): the copies shared between threads,
/// which outgrow a core's caches, so regular stores would first read each destination line
/// (a third pass over memory) only to evict it again. `bench/tools/memcpy_bw.c`'s "again"
/// lines copy one array again and again with both buffers hot, the case streaming helps
/// least: on the development VM 64 MiB took 5.0 ms streaming against 9.2 with `memcpy`, 16
/// MiB 1.25 against 1.19 ms, 4 MiB 309 against 294 µs, 1 MiB 49 against 33 µs; and with 4 MiB
/// copies streaming `nowait32x4MiB`'s host copies took as long as before under the fake
/// driver (`docs/results/host-2026-12-05-streaming.txt`), so smaller copies keep `memcpy` by
/// default (`OMPTARGET_RS_CUDA_STREAMING_MIN` moves the bound: both H200 VMs measured a hot
/// 4 MiB copy 7-17% faster streamed).
pub(crate) const STREAM_MIN: usize = super::PARALLEL_MIN;

/// How the host copies are counted under `OMPTARGET_RS_PROFILE=1`.
const HOST_COPY: &str = "(host copy to/from staging buffers)";

pub(super) fn copy_bytes(dst: usize, src: usize, size: usize) {
    // SAFETY: callers pass ranges the core guarantees live (the program's host memory for
    // the construct's duration) and pinned buffers of at least `size` bytes; they never
    // overlap (one is ours).
    crate::driver::profile::timed(HOST_COPY, || unsafe {
        std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, size)
    });
}

/// [`copy_bytes`] with non-temporal stores (x86-64: SSE2 `movntdq`) of whole cache lines from
/// the first 64-byte aligned destination byte on (a line written in part leaves its
/// write-combining buffer early: 16-byte alignment alone ran 9.5 against 11.8 GB/s when the
/// buffers were not page-aligned), four pages side by side, then a store fence, so the bytes
/// are visible to the DMA and to other threads before anything this thread does next.
/// `bench/tools/memcpy_bw.c` compares it with `memcpy` in 1 MiB pieces: on the development
/// VM 11.0 against 6.9 GB/s on one thread, 20.5 against 12.6 on two
/// (`docs/results/host-2026-12-05-streaming.txt`).
pub(super) fn copy_streaming(dst: usize, src: usize, size: usize) {
    // SAFETY: as in `copy_bytes`.
    crate::driver::profile::timed(HOST_COPY, || unsafe {
        stream(dst as *mut u8, src as *const u8, size)
    });
}

/// # Safety
/// `src` readable and `dst` writable for `n` bytes, not overlapping.
#[cfg(target_arch = "x86_64")]
unsafe fn stream(dst: *mut u8, src: *const u8, n: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    const PAGE: usize = 4096;
    /// 64 bytes from `s` to `d` (a cache line) past the caches.
    ///
    /// # Safety
    /// Both ranges inside the caller's.
    #[inline(always)]
    unsafe fn line(d: *mut u8, s: *const u8) {
        let (d, s) = (d.cast::<__m128i>(), s.cast::<__m128i>());
        // SAFETY: the caller's ranges; `d` is 64-byte aligned.
        unsafe {
            let (a, b, c, e) = (
                _mm_loadu_si128(s),
                _mm_loadu_si128(s.add(1)),
                _mm_loadu_si128(s.add(2)),
                _mm_loadu_si128(s.add(3)),
            );
            _mm_stream_si128(d, a);
            _mm_stream_si128(d.add(1), b);
            _mm_stream_si128(d.add(2), c);
            _mm_stream_si128(d.add(3), e);
        }
    }
    let head = dst.align_offset(64).min(n);
    // SAFETY: the caller's ranges; every access below stays inside `[0, n)` of both, and
    // the streamed stores go to 16-byte aligned addresses (`head` aligns `dst` to a line).
    // SSE2 is part of x86-64.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        let mut i = head;
        // Four pages at a time, a line of each in turn: four streams keep more of the
        // memory system busy than one (as glibc's own large copies do).
        while i + 4 * PAGE <= n {
            for j in (0..PAGE).step_by(64) {
                for p in 0..4 {
                    let o = i + p * PAGE + j;
                    line(dst.add(o), src.add(o));
                }
            }
            i += 4 * PAGE;
        }
        while i + 64 <= n {
            line(dst.add(i), src.add(i));
            i += 64;
        }
        while i + 16 <= n {
            _mm_stream_si128(
                dst.add(i).cast::<__m128i>(),
                _mm_loadu_si128(src.add(i).cast::<__m128i>()),
            );
            i += 16;
        }
        std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), n - i);
        _mm_sfence();
    }
}

/// # Safety
/// As on x86-64.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn stream(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: the caller's ranges.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length and alignment of both ends around the 16- and 64-byte steps copies
    /// exactly the bytes asked for, and nothing outside them.
    #[test]
    fn streaming_copies_exactly_the_range() {
        let src: Vec<u8> = (0..1024u32).map(|i| (i * 7 + 3) as u8).collect();
        for so in 0..17 {
            for d_off in 0..17 {
                for n in [0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 300, 900] {
                    let mut dst = vec![0xEEu8; 1024 + 64];
                    copy_streaming(
                        dst.as_mut_ptr() as usize + d_off,
                        src.as_ptr() as usize + so,
                        n,
                    );
                    assert_eq!(&dst[d_off..d_off + n], &src[so..so + n], "{so} {d_off} {n}");
                    assert!(dst[..d_off].iter().all(|&b| b == 0xEE), "before");
                    assert!(dst[d_off + n..].iter().all(|&b| b == 0xEE), "after");
                }
            }
        }
        // Across the four-page blocks: several blocks and every kind of remainder.
        let big: Vec<u8> = (0..70_000u32).map(|i| (i * 13 + i / 251) as u8).collect();
        for (so, d_off, n) in [
            (0, 0, 65_536),
            (3, 5, 65_536),
            (1, 0, 69_000),
            (0, 9, 16_383),
        ] {
            let mut dst = vec![0xEEu8; 70_000 + 32];
            copy_streaming(
                dst.as_mut_ptr() as usize + d_off,
                big.as_ptr() as usize + so,
                n,
            );
            assert_eq!(&dst[d_off..d_off + n], &big[so..so + n], "{so} {d_off} {n}");
            assert!(dst[..d_off].iter().all(|&b| b == 0xEE));
            assert!(dst[d_off + n..].iter().all(|&b| b == 0xEE));
        }
    }
}
