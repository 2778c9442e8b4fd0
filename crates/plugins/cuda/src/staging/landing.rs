//! Device → host copies landing: the DMA went into pinned buffers; when the stream is found
//! complete (or, for a large copy, as each chunk's event completes) the bytes are copied home
//! in issue order and the buffers go back to the pool.

use super::{PARALLEL_MIN, Staging, buffers::Slot, copy_bytes};
use omptarget_plugin::Result;

/// Landed chunks of a large copy go home in pieces of this size, several threads per chunk:
/// one thread copies ~5x slower than the DMA fills, so the last chunk's copy home (the only
/// host work left after the DMA) is split too.
const LAND_PIECE: usize = 256 << 10;

/// Device → host copies waiting to land, in issue order: each copy's chunks
/// (`(destination, bytes, buffer)`) end at `chunks[copies[k].0]`; `copies[k].1`: each chunk's
/// event was recorded after its DMA (large copies).
#[derive(Default)]
pub(super) struct Landings {
    chunks: Vec<(usize, usize, Slot)>,
    copies: Vec<(usize, bool)>,
}

impl Landings {
    pub(super) fn is_empty(&self) -> bool {
        self.copies.is_empty()
    }

    pub(super) fn push(
        &mut self,
        chunks: impl IntoIterator<Item = (usize, usize, Slot)>,
        evented: bool,
    ) {
        self.chunks.extend(chunks);
        self.copies.push((self.chunks.len(), evented));
    }
}

impl Staging {
    /// Lands `stream`'s staged copies in the order they were issued and frees its buffers.
    /// `wait` waits for the whole stream and is called at most once, when a landing needs it
    /// (`None`: the stream is known complete). Large copies land chunk by chunk as each
    /// chunk's event completes, overlapping the rest of the stream.
    pub fn finish(
        &self,
        stream: usize,
        mut wait: Option<&mut dyn FnMut() -> Result<()>>,
    ) -> Result<()> {
        if wait.is_some() {
            self.flush(stream)?;
        }
        // The stream's work is taken out; the emptied vectors go back afterwards.
        let (mut landings, mut release) = {
            let mut pending = self.shard(stream).streams.lock();
            match pending.get_mut(&stream) {
                Some(ps) => {
                    // The stream's owner completes it now: its direct copies are over once
                    // this returns (nobody else asks about this stream meanwhile).
                    ps.direct = false;
                    if let Some(a) = ps.arena.take() {
                        ps.release.push(a.slot);
                    }
                    if ps.landings.copies.is_empty() && ps.release.is_empty() {
                        drop(pending);
                        return wait_once(&mut wait);
                    }
                    (
                        std::mem::take(&mut ps.landings),
                        std::mem::take(&mut ps.release),
                    )
                }
                None => {
                    drop(pending);
                    return wait_once(&mut wait);
                }
            }
        };
        let mut result = self.land(&landings, &mut wait);
        // Also after a failure: no buffer goes back while a copy may still fill it.
        let waited = wait_once(&mut wait);
        if result.is_ok() {
            result = waited;
        }
        self.give_back(
            landings
                .chunks
                .drain(..)
                .map(|c| c.2)
                .chain(release.drain(..)),
        );
        landings.copies.clear();
        let mut pending = self.shard(stream).streams.lock();
        if let Some(ps) = pending.get_mut(&stream)
            && ps.landings.copies.is_empty()
            && ps.release.is_empty()
        {
            ps.landings = landings;
            ps.release = release;
        }
        result
    }

    /// Copies landed bytes home, copy by copy in issue order; `wait` (the whole stream) is
    /// called at most once, before the first copy that has no events.
    fn land(
        &self,
        landings: &Landings,
        wait: &mut Option<&mut dyn FnMut() -> Result<()>>,
    ) -> Result<()> {
        let mut start = 0;
        for &(end, evented) in &landings.copies {
            let chunks = &landings.chunks[start..end];
            start = end;
            if !evented {
                // Small: the stream is complete once waited for; one thread copies.
                wait_once(wait)?;
                for (dst, len, slot) in chunks {
                    copy_bytes(*dst, slot.buf, *len);
                }
                continue;
            }
            // None: the stream is known complete (waited for, or found so by a query).
            let known_done = wait.is_none();
            let bytes = chunks.iter().map(|c| c.1).sum();
            // Pieces per chunk: several when the copy is shared between threads.
            let per = if bytes >= PARALLEL_MIN {
                chunks
                    .iter()
                    .map(|c| c.1.div_ceil(LAND_PIECE))
                    .max()
                    .unwrap_or(1)
            } else {
                1
            };
            self.parallel(chunks.len() * per, bytes, |i| {
                let (dst, len, slot) = &chunks[i / per];
                let (off, piece) = if per == 1 {
                    (0, *len)
                } else {
                    let off = (i % per) * LAND_PIECE;
                    (off, LAND_PIECE.min(len.saturating_sub(off)))
                };
                if piece == 0 {
                    return Ok(());
                }
                if !known_done {
                    self.waiter.event(slot.event)?;
                }
                self.host_copy(dst + off, slot.buf + off, piece, bytes);
                Ok(())
            })?;
        }
        Ok(())
    }
}

/// Waits for the stream unless that was done already (`wait` is then `None`).
fn wait_once(wait: &mut Option<&mut dyn FnMut() -> Result<()>>) -> Result<()> {
    match wait.take() {
        Some(w) => w(),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::CHUNK;
    use super::*;

    /// With `pack`, a stream's small copies take consecutive 64-byte-aligned places in one
    /// arena (the program's bytes copied there, the copy batched), a new arena once it is
    /// full; a copy home from the arena lands like any other, and every arena goes back to
    /// the pool when the stream completes (and nothing else: a place in an arena is not a
    /// buffer). (No CUDA call: the pool holds fake arenas, and the batch is emptied unissued.)
    #[test]
    fn small_copies_share_an_arena_until_the_stream_completes() {
        use crate::staging::{ARENA, PACK_ALIGN};
        use std::sync::atomic::Ordering;
        let st = Staging::for_tests(1);
        let class = super::super::buffers::class_of(ARENA);
        let mut mem = vec![0u8; 3 * ARENA];
        let base = mem.as_mut_ptr() as usize;
        for k in 0..3 {
            st.pool.lock().free[class].push(Slot {
                buf: base + k * ARENA,
                class,
                event: 0,
            });
        }
        let stream = 9;
        let program = [7u8; 2048];
        let mut device = 0x1_0000_0000usize;
        // Queues a copy of `size` program bytes to a device range of its own; its place.
        let mut place = |size: usize| {
            device += 4096;
            let src = program.as_ptr() as usize;
            assert!(st.queue_packed(stream, true, device, src, size).unwrap());
            let pending = st.shard(stream).streams.lock();
            *pending[&stream].batch.srcs.last().unwrap() as usize
        };
        let first = place(32);
        assert_eq!((first - base) % ARENA, 0, "an arena's start");
        assert_eq!(mem[first - base..][..32], [7; 32], "the program's bytes");
        assert_eq!(mem[first - base + 32], 0, "and no more");
        assert_eq!(place(8), first + PACK_ALIGN);
        let mut last = 0;
        for _ in 2..ARENA / PACK_ALIGN {
            last = place(PACK_ALIGN);
        }
        assert_eq!(
            last,
            first + ARENA - PACK_ALIGN,
            "the arena is used to its end"
        );
        let next = place(2048);
        assert_eq!((next - base) % ARENA, 0);
        assert_ne!(next, first, "a second arena");
        assert_eq!(st.pool.lock().free[class].len(), 1);
        {
            let shard = st.shard(stream);
            let mut pending = shard.streams.lock();
            let batch = &mut pending.get_mut(&stream).unwrap().batch;
            assert_eq!(
                batch.sizes.len(),
                ARENA / PACK_ALIGN + 1,
                "every copy batched"
            );
            batch.clear();
            shard.batched.store(0, Ordering::Relaxed);
        }
        // A copy home from the second arena.
        // SAFETY: `next` lies in `mem`, 2048 bytes reserved above.
        unsafe { std::ptr::write_bytes(next as *mut u8, 5, 4) };
        let mut home = [0u8; 4];
        st.shard(stream)
            .streams
            .lock()
            .entry(stream)
            .or_default()
            .landings
            .push([(home.as_mut_ptr() as usize, 4, Slot::packed(next))], false);
        let mut wait = || Ok(());
        st.finish(stream, Some(&mut wait)).unwrap();
        assert_eq!(home, [5; 4]);
        let pool = st.pool.lock();
        assert_eq!(
            pool.free[class].len(),
            3,
            "both arenas back, no place given back"
        );
        assert!(
            pool.free
                .iter()
                .enumerate()
                .all(|(c, f)| c == class || f.is_empty())
        );
        drop(pool);
        drop(mem);
    }

    /// Small copies out of the device land in issue order (a later copy to the same bytes
    /// wins), after one wait for the stream; the buffers go back; the stream's vectors keep
    /// their capacity for the next construct. (No CUDA call: non-evented copies only.)
    #[test]
    fn landings_arrive_in_order_after_one_wait_and_keep_their_capacity() {
        let st = Staging::for_tests(1);
        let mut bufs = [[1u8; 4], [2u8; 4], [3u8; 4]];
        let mut home = [0u8; 6];
        let stream = 7;
        for round in 0..2 {
            {
                let mut pending = st.shard(stream).streams.lock();
                let ps = pending.entry(stream).or_default();
                for (k, b) in bufs.iter_mut().enumerate() {
                    let slot = Slot {
                        buf: b.as_mut_ptr() as usize,
                        class: 0,
                        event: 0,
                    };
                    // Copies 0 and 1 write home[0..4], copy 2 home[2..6].
                    let at = if k == 2 { 2 } else { 0 };
                    ps.landings
                        .push([(home.as_mut_ptr() as usize + at, 4, slot)], false);
                }
            }
            let mut waits = 0;
            let mut wait = || {
                waits += 1;
                Ok(())
            };
            st.finish(stream, Some(&mut wait)).unwrap();
            assert_eq!(waits, 1, "round {round}");
            assert_eq!(home, [2, 2, 3, 3, 3, 3], "round {round}");
            let pending = st.shard(stream).streams.lock();
            let ps = &pending[&stream];
            assert!(ps.landings.copies.is_empty() && ps.landings.chunks.is_empty());
            assert!(ps.landings.chunks.capacity() >= 3, "capacity kept");
            drop(pending);
            // The buffers went back to the pool (reused, not freed: they are not CUDA's here).
            st.pool.lock().free[0].clear();
            home = [0; 6];
        }
        // Nothing pending: finish only waits.
        let mut waits = 0;
        let mut wait = || {
            waits += 1;
            Ok(())
        };
        st.finish(stream, Some(&mut wait)).unwrap();
        assert_eq!(waits, 1);
    }

    /// A large copy's chunks land in pieces shared by several threads: every byte once, in
    /// its place, the last chunk shorter than the others.
    #[test]
    fn large_landings_go_home_in_pieces() {
        let st = Staging::for_tests(4);
        let size = PARALLEL_MIN + CHUNK / 2 + 3;
        let src: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
        let mut bufs: Vec<Vec<u8>> = src.chunks(CHUNK).map(|c| c.to_vec()).collect();
        let mut home = vec![0u8; size];
        let stream = 9;
        {
            let mut pending = st.shard(stream).streams.lock();
            let ps = pending.entry(stream).or_default();
            let chunks = bufs.iter_mut().enumerate().map(|(k, b)| {
                let slot = Slot {
                    buf: b.as_mut_ptr() as usize,
                    class: 0,
                    event: 0,
                };
                (home.as_mut_ptr() as usize + k * CHUNK, b.len(), slot)
            });
            ps.landings.push(chunks.collect::<Vec<_>>(), true);
        }
        // Known complete: no event is asked.
        st.finish(stream, None).unwrap();
        assert!(home == src, "every byte landed in its place");
        st.pool.lock().free[0].clear();
    }
}
