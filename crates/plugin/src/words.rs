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
            let mut heap = Vec::with_capacity(N * 2);
            heap.extend_from_slice(self.inline_slice());
            self.heap = heap;
        }
        self.heap.push(w);
        self.len += 1;
    }

    /// Forgets every word (keeping what was allocated for spilled ones).
    pub fn clear(&mut self) {
        self.len = 0;
        self.heap.clear();
    }

    /// The inline words written so far (all of them while nothing spilled).
    fn inline_slice(&self) -> &[T] {
        let n = self.len.min(N);
        // SAFETY: `push` wrote the first `len` inline slots (at most N) before counting
        // them, and `MaybeUninit<T>` has `T`'s layout.
        unsafe { std::slice::from_raw_parts(self.inline.as_ptr().cast::<T>(), n) }
    }

    pub fn as_slice(&self) -> &[T] {
        if self.heap.is_empty() {
            self.inline_slice()
        } else {
            &self.heap
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        if self.heap.is_empty() {
            let n = self.len.min(N);
            // SAFETY: as in `inline_slice`; the borrow is exclusive.
            unsafe { std::slice::from_raw_parts_mut(self.inline.as_mut_ptr().cast::<T>(), n) }
        } else {
            &mut self.heap
        }
    }
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
}
