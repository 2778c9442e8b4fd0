//! A small vector of argument words that lives on the stack for the common case, so a kernel
//! launch allocates nothing on the heap for up to `INLINE` arguments.

/// Arguments kept inline.
pub const INLINE: usize = 32;

/// Up to [`INLINE`] words inline, more on the heap.
pub struct Words<T: Copy + Default> {
    inline: [T; INLINE],
    len: usize,
    heap: Vec<T>,
}

impl<T: Copy + Default> Default for Words<T> {
    fn default() -> Self {
        Self {
            inline: [T::default(); INLINE],
            len: 0,
            heap: Vec::new(),
        }
    }
}

impl<T: Copy + Default> Words<T> {
    pub fn push(&mut self, w: T) {
        if self.heap.is_empty() && self.len < INLINE {
            self.inline[self.len] = w;
        } else {
            if self.heap.is_empty() {
                self.heap.extend_from_slice(&self.inline[..self.len]);
            }
            self.heap.push(w);
        }
        self.len += 1;
    }

    pub fn as_slice(&self) -> &[T] {
        if self.heap.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        if self.heap.is_empty() {
            &mut self.inline[..self.len]
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
    }
}
