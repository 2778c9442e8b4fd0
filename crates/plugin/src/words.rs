//! A small vector of argument words that lives on the stack for the common case, so a kernel
//! launch allocates nothing on the heap for up to `INLINE` arguments.

/// Arguments kept inline.
pub const INLINE: usize = 32;

/// Up to `N` (by default [`INLINE`]) words inline, more on the heap. The inline part is not
/// initialised until written: a construct makes several of these on its path, and zeroing
/// them cost more than the words they held (about 2 KiB of `memset` per target region).
pub struct Words<T: Copy, const N: usize = INLINE> {
    inline: [MaybeUninit<T>; N],
    len: usize,
    heap: Vec<T>,
}

use std::mem::MaybeUninit;

impl<T: Copy, const N: usize> Default for Words<T, N> {
    fn default() -> Self {
        Self {
            inline: [const { MaybeUninit::uninit() }; N],
            len: 0,
            heap: Vec::new(),
        }
    }
}

impl<T: Copy, const N: usize> Words<T, N> {
    #[inline]
    pub fn push(&mut self, w: T) {
        if self.heap.is_empty() && self.len < N {
            self.inline[self.len].write(w);
            self.len += 1;
        } else {
            self.push_spilled(w);
        }
    }

    /// [`Words::push`] past the inline words: they move to the heap the first time.
    #[cold]
    #[inline(never)]
    fn push_spilled(&mut self, w: T) {
        if self.heap.is_empty() {
            // Into what an earlier spill allocated, if anything (`clear` keeps it).
            self.heap.reserve(N * 2);
            self.heap.extend_from_slice(written(&self.inline, self.len));
        }
        self.heap.push(w);
        self.len += 1;
    }

    /// Forgets every word (keeping what was allocated for spilled ones).
    pub fn clear(&mut self) {
        self.len = 0;
        self.heap.clear();
    }

    pub fn as_slice(&self) -> &[T] {
        if self.heap.is_empty() {
            written(&self.inline, self.len)
        } else {
            &self.heap
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        if self.heap.is_empty() {
            let n = self.len.min(N);
            // SAFETY: as in `written`; the borrow is exclusive.
            unsafe { std::slice::from_raw_parts_mut(self.inline.as_mut_ptr().cast::<T>(), n) }
        } else {
            &mut self.heap
        }
    }
}

/// The inline words of a list of `len` words: the first `len` slots, at most `N`.
fn written<T: Copy, const N: usize>(inline: &[MaybeUninit<T>; N], len: usize) -> &[T] {
    // SAFETY: `push` writes the first `len` inline slots (at most N) before counting them,
    // and `MaybeUninit<T>` has `T`'s layout.
    unsafe { std::slice::from_raw_parts(inline.as_ptr().cast::<T>(), len.min(N)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_to_the_heap_past_the_inline_capacity() {
        let mut w: Words<usize> = Words::default();
        for i in 0..INLINE + 5 {
            w.push(i);
            assert_eq!(w.as_slice().len(), i + 1);
        }
        assert_eq!(w.as_slice(), (0..INLINE + 5).collect::<Vec<_>>().as_slice());
        w.as_mut_slice()[0] = 99;
        assert_eq!(w.as_slice()[0], 99);
        let mut small: Words<u8, 2> = Words::default();
        for i in 0..5 {
            small.push(i);
        }
        assert_eq!(small.as_slice(), &[0, 1, 2, 3, 4]);
    }

    #[test]
    fn cleared_words_fill_again_and_spill_into_the_kept_allocation() {
        let mut w: Words<usize, 4> = Default::default();
        for i in 0..20 {
            w.push(i);
        }
        let kept = w.heap.as_ptr();
        w.clear();
        assert!(w.as_slice().is_empty());
        for i in 100..110 {
            w.push(i);
        }
        assert_eq!(w.as_slice(), (100..110).collect::<Vec<_>>().as_slice());
        assert_eq!(w.heap.as_ptr(), kept, "no second allocation");
    }
}
