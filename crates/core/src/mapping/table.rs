use super::entries::Entries;
use std::ffi::CStr;

/// A dynamic reference count that may be infinite (`declare target` globals and
/// `omp_target_associate_ptr` mappings never go away through map clauses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefCount {
    Finite(u64),
    Infinite,
}

impl RefCount {
    pub fn is_zero(self) -> bool {
        self == RefCount::Finite(0)
    }
}

impl std::fmt::Display for RefCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefCount::Finite(n) => write!(f, "{n}"),
            RefCount::Infinite => f.write_str("INF"),
        }
    }
}

/// The key of an entry: its host begin address (entries never overlap).
pub type EntryId = usize;

/// One mapped host interval `[host_begin, host_end)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The base address the mapping was created with (the array or struct it belongs to).
    pub host_base: usize,
    pub host_begin: usize,
    pub host_end: usize,
    /// What the device allocation starts at (freed when the entry goes away).
    pub tgt_alloc: usize,
    /// The device address of `host_begin`.
    pub tgt_begin: usize,
    pub dyn_refs: RefCount,
    pub hold_refs: u64,
    /// The allocation belongs to the user (`omp_target_associate_ptr`) or to the image (a
    /// global): the runtime must not free it.
    pub owns_allocation: bool,
    /// The map-clause name string clang passed (`;a[0:n];file;line;col;;`), if any.
    pub name: Option<&'static CStr>,
    /// Pointers inside this entry's host range whose device copies were attached to device
    /// data (PTR_AND_OBJ): copies from the device must not clobber the host values.
    pub shadows: Shadows,
    /// The queue of a construct that created or filled this entry and has not synchronised
    /// yet: another queue that uses the entry must first wait for that queue's work.
    pub pending: Option<omptarget_plugin::QueueId>,
    /// Constructs that used this entry on a queue and have not synchronised yet (devices that
    /// free on the queue only): its memory may be freed only after all of them.
    pub users: u32,
}

/// An attached pointer: its host address, its host value and its device value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShadowPointer {
    pub host_addr: usize,
    pub host_value: usize,
    pub tgt_value: usize,
}

/// The attached pointers of one entry, by host address: an array of N structs, each with a
/// pointer attached to its own data, holds N of them, and each attach, each copy into part
/// of the array and each copy back of part of it finds its own in O(log N) (a list searched
/// from the start made a deep copy of N structs cost O(N^2)).
///
/// Most entries never hold one: an empty map is dropped without walking it (a `BTreeMap`'s
/// drop visits its root even when there is none, ~45 instructions on every region's exit).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shadows(std::mem::ManuallyDrop<std::collections::BTreeMap<usize, ShadowPointer>>);

impl Drop for Shadows {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            // SAFETY: dropped once, here. Nothing removes a shadow (`set` replaces), so an
            // empty map is one that never had a node and owns no memory: skipping its drop
            // leaks nothing.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.0) }
        }
    }
}

impl Shadows {
    /// Records `shadow`; false when the same pointer was attached with the same values.
    pub fn set(&mut self, shadow: ShadowPointer) -> bool {
        self.0.insert(shadow.host_addr, shadow) != Some(shadow)
    }

    /// The attached pointers whose word lies in `[begin, begin + size)`.
    pub fn within(&self, begin: usize, size: usize) -> impl Iterator<Item = &ShadowPointer> {
        let end = begin.saturating_add(size);
        self.0
            .range(begin..end)
            .map(|(_, s)| s)
            .filter(move |s| s.host_addr.saturating_add(std::mem::size_of::<usize>()) <= end)
    }

    /// Appends `(host address, host value)` of each attached pointer in `[begin, begin +
    /// size)` to `out`: what a copy back of that range must restore. Most entries have none,
    /// and then nothing is searched or extended (on every copy back of every region).
    pub fn restores_within(&self, begin: usize, size: usize, out: &mut Vec<(usize, usize)>) {
        if !self.0.is_empty() {
            out.extend(
                self.within(begin, size)
                    .map(|s| (s.host_addr, s.host_value)),
            );
        }
    }

    /// The attached pointers in `[begin, begin + size)`, copied out (none without searching
    /// when the entry has none).
    pub fn copied_within(&self, begin: usize, size: usize) -> Vec<ShadowPointer> {
        if self.0.is_empty() {
            return Vec::new();
        }
        self.within(begin, size).copied().collect()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Entry {
    /// An entry of `size` bytes at `begin` with one dynamic reference, its device copy at
    /// `0x9000_0000 + begin` (the mapping module's tests).
    #[cfg(test)]
    pub(crate) fn for_tests(begin: usize, size: usize) -> Entry {
        Entry {
            host_base: begin,
            host_begin: begin,
            host_end: begin + size,
            tgt_alloc: 0x9000_0000 + begin,
            tgt_begin: 0x9000_0000 + begin,
            dyn_refs: RefCount::Finite(1),
            hold_refs: 0,
            owns_allocation: true,
            name: None,
            shadows: Shadows::default(),
            pending: None,
            users: 0,
        }
    }

    pub fn size(&self) -> usize {
        self.host_end - self.host_begin
    }

    /// The device address of host address `host` (which must lie in or at the entry).
    pub fn tgt_ptr(&self, host: usize) -> usize {
        self.tgt_begin
            .wrapping_add(host.wrapping_sub(self.host_begin))
    }

    /// `dyn + hold`, or `None` when infinite.
    pub fn total_refs(&self) -> Option<u64> {
        match self.dyn_refs {
            RefCount::Infinite => None,
            RefCount::Finite(n) => Some(n + self.hold_refs),
        }
    }

    /// Adds one reference of the given kind.
    pub fn add_ref(&mut self, hold: bool) {
        if hold {
            self.hold_refs += 1;
        } else if let RefCount::Finite(n) = &mut self.dyn_refs {
            *n += 1;
        }
    }

    /// The counts after releasing one reference of the given kind, or after `delete`, which
    /// zeroes the count of that kind (OpenMP's `delete` map type; with `ompx_hold`, the hold
    /// count).
    fn counts_after(&self, hold: bool, delete: bool) -> Option<(u64, u64)> {
        let RefCount::Finite(dyn_refs) = self.dyn_refs else {
            return None;
        };
        Some(match (hold, delete) {
            (false, true) => (0, self.hold_refs),
            (true, true) => (dyn_refs, 0),
            (false, false) => (dyn_refs.saturating_sub(1), self.hold_refs),
            (true, false) => (dyn_refs, self.hold_refs.saturating_sub(1)),
        })
    }

    /// Whether releasing one reference of the given kind (or deleting) removes the last
    /// reference: the entry ends with none, and a plain release found one of its kind to
    /// release (releasing a count that is already 0 removes nothing; LLVM's
    /// `decShouldRemove`).
    pub fn release_would_remove(&self, hold: bool, delete: bool) -> bool {
        let had_one = delete
            || if hold {
                self.hold_refs > 0
            } else {
                self.dyn_refs != RefCount::Finite(0)
            };
        had_one && self.counts_after(hold, delete) == Some((0, 0))
    }

    /// The `delete` of a struct member, which holds no reference of its own (LLVM's
    /// `resetRefCount` on an item whose count update is suppressed): a count of its kind above
    /// 1 drops to 1, so that the release of the struct's own item, which the construct
    /// processes after its members, removes the entry. A count of 0 stays 0: a `delete` never
    /// adds a reference (LLVM 19 sets it to 1, so that a held entry outlives its hold;
    /// docs/DIVERGENCES.md).
    pub fn reset_for_member_delete(&mut self, hold: bool) {
        if hold {
            self.hold_refs = self.hold_refs.min(1);
        } else if let RefCount::Finite(n) = &mut self.dyn_refs {
            *n = (*n).min(1);
        }
    }

    /// Releases one reference of the given kind, or zeroes it for `delete`. Returns whether
    /// the entry now has no references. A hold reference on an entry with an infinite
    /// dynamic count (`omp_target_associate_ptr`, globals) is released too.
    pub fn release(&mut self, hold: bool, delete: bool) -> bool {
        match self.counts_after(hold, delete) {
            Some((d, h)) => {
                self.dyn_refs = RefCount::Finite(d);
                self.hold_refs = h;
            }
            None if hold => {
                self.hold_refs = if delete {
                    0
                } else {
                    self.hold_refs.saturating_sub(1)
                };
            }
            None => {}
        }
        self.total_refs() == Some(0)
    }
}

/// How a host interval relates to the table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lookup {
    /// The entry the interval touches, if any.
    pub entry: Option<EntryId>,
    /// The interval lies inside the entry.
    pub contained: bool,
    /// The interval starts before the entry and reaches into it.
    pub extends_before: bool,
    /// The interval starts inside the entry and reaches past its end.
    pub extends_after: bool,
}

impl Lookup {
    /// The interval touches a mapping but is not inside it.
    pub fn is_extension(&self) -> bool {
        self.extends_before || self.extends_after
    }
}

/// An entry of [`MappingTable::note_in_flight`]: host range, queue, thread (`pthread_self`).
type InFlight = (usize, usize, omptarget_plugin::QueueId, libc::pthread_t);

/// Host interval → device allocation, for one device: the entries by host begin address
/// (`entries.rs`: a sorted vector while the table is small, a B-tree map when large).
#[derive(Default)]
pub struct MappingTable {
    entries: Entries,
    /// Host ranges that constructs still running copy back into from entries they released
    /// the last reference to, with each construct's queue and thread (devices that free on
    /// the queue, where such an entry leaves the table when its construct has issued its
    /// work, not when that work is done): a construct that would map such memory anew waits
    /// until they complete (`ops/data/waits.rs::after_retired`).
    in_flight: Vec<InFlight>,
    /// Entries whose references constructs released while their work may still run (entry,
    /// device allocation, the construct's queue; devices that free on the queue): the
    /// construct that releases an entry's last reference orders its copy back after those
    /// queues' work, which under OpenMP ended before their release. Empty for most programs.
    exits: Vec<(EntryId, usize, omptarget_plugin::QueueId)>,
}

impl std::fmt::Debug for MappingTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl MappingTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.len() == 0
    }

    pub fn get(&self, id: EntryId) -> Option<&Entry> {
        self.entries.get(id)
    }

    pub fn get_mut(&mut self, id: EntryId) -> Option<&mut Entry> {
        self.entries.get_mut(id)
    }

    /// The entries in address order.
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().map(|(_, e)| e)
    }

    /// Classifies `[begin, begin + size)` against the table, the way OpenMP's map rules need:
    /// a zero-size interval is "contained" when it lies in an entry (or between an entry's base
    /// and its end, for pointers into a partly mapped struct).
    pub fn lookup(&self, begin: usize, size: usize) -> Lookup {
        let mut result = Lookup::default();
        let end = begin.saturating_add(size);
        // The last entry starting at or before `begin`; the first starting after it only
        // when that one does not answer.
        let left = self.entries.at_or_before(begin);
        if size == 0 {
            if let Some(e) = left {
                result.entry = Some(e.host_begin);
                // An empty entry (an indirect function's) contains the empty interval at its
                // own address.
                result.contained =
                    begin < e.host_end || begin < e.host_base || e.host_begin == begin;
            }
            if !result.contained
                && let Some(e) = self.entries.after(begin)
            {
                result.entry = Some(e.host_begin);
                result.contained = begin >= e.host_base;
            }
            if !result.contained {
                result.entry = None;
            }
            return result;
        }
        // An entry that begins at `begin` holds part of the interval even when it is empty
        // (an indirect function's): the interval cannot be mapped beside it.
        if let Some(e) = left
            && (begin < e.host_end || e.host_begin == begin)
        {
            result.entry = Some(e.host_begin);
            result.contained = end <= e.host_end;
            result.extends_after = end > e.host_end;
        }
        if result.entry.is_none()
            && let Some(e) = self.entries.after(begin)
            && end > e.host_begin
        {
            result.entry = Some(e.host_begin);
            result.extends_before = true;
            result.extends_after = end > e.host_end;
        }
        result
    }

    /// The entry LLVM's `lookupMapping` settles on for `[begin, begin + size)`, mapped or not,
    /// which names the copies LLVM traces without an entry of their own (`printCopyInfo`):
    /// for a non-empty interval the entry it starts in when it reaches into it, else the first
    /// entry after `begin`, else the last one before; for an empty one the last entry at or
    /// before `begin` when `begin` lies under it, else the first after, else the last before.
    pub fn lookup_for_trace(&self, begin: usize, size: usize) -> Option<&Entry> {
        let left = self.entries.at_or_before(begin);
        let left_holds = left.is_some_and(|e| {
            if size == 0 {
                begin < e.host_end || begin < e.host_base
            } else {
                begin < e.host_end
            }
        });
        if left_holds {
            return left;
        }
        self.entries.after(begin).or(left)
    }

    /// The id of the entry that holds all of `[begin, begin + size)`, if one does.
    pub fn containing(&self, begin: usize, size: usize) -> Option<EntryId> {
        let l = self.lookup(begin, size);
        l.entry.filter(|_| l.contained)
    }

    /// Records a new mapping. The caller has checked (with [`MappingTable::lookup`]) that the
    /// interval is free; a zero-size entry is allowed only where no entry begins.
    pub fn insert(&mut self, entry: Entry) -> EntryId {
        let id = entry.host_begin;
        let added = self.entries.insert(entry);
        debug_assert!(added, "mapping entries must not overlap");
        id
    }

    /// Removes an entry and returns it.
    pub fn remove(&mut self, id: EntryId) -> Option<Entry> {
        self.entries.remove(id)
    }

    /// Notes that the construct of `queue` copies back into `[begin, end)` from an entry it
    /// released the last reference to: until [`MappingTable::forget_in_flight`], nobody maps
    /// that memory anew.
    pub(crate) fn note_in_flight(
        &mut self,
        begin: usize,
        end: usize,
        queue: omptarget_plugin::QueueId,
    ) {
        // SAFETY: pthread_self has no preconditions.
        let thread = unsafe { libc::pthread_self() };
        self.in_flight.push((begin, end, queue, thread));
    }

    /// The construct of `queue` completed: its copies back have landed.
    pub(crate) fn forget_in_flight(&mut self, queue: omptarget_plugin::QueueId) {
        self.in_flight.retain(|r| r.2 != queue);
    }

    /// Whether any construct still running copies back from an entry it released last.
    #[inline]
    pub(crate) fn has_in_flight(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// Whether a construct still running copies back into `[begin, end)` from an entry it
    /// released the last reference to, other than the one of queue `own` and, unless
    /// `this_thread`, other than this thread's (which cannot complete while this thread waits
    /// for them, unless held).
    pub(crate) fn in_flight_overlaps(
        &self,
        begin: usize,
        end: usize,
        own: Option<omptarget_plugin::QueueId>,
        this_thread: bool,
    ) -> bool {
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        self.in_flight
            .iter()
            .any(|&(b, e, q, t)| b < end && begin < e && Some(q) != own && (this_thread || t != me))
    }

    /// Notes that the construct of `queue` released a reference to entry `id` (allocation
    /// `alloc`) while its work may still run.
    pub(crate) fn note_exit(
        &mut self,
        id: EntryId,
        alloc: usize,
        queue: omptarget_plugin::QueueId,
    ) {
        self.exits.push((id, alloc, queue));
    }

    /// The construct of `queue` completed: its note on entry `(id, alloc)` goes.
    pub(crate) fn forget_exit(
        &mut self,
        id: EntryId,
        alloc: usize,
        queue: omptarget_plugin::QueueId,
    ) {
        if let Some(at) = self.exits.iter().position(|&r| r == (id, alloc, queue)) {
            self.exits.swap_remove(at);
        }
    }

    /// The queues of constructs still running that released a reference to entry `id` (of
    /// any allocation there: ordering after one more queue is harmless), or none.
    #[inline]
    pub(crate) fn exit_queues(&self, id: EntryId) -> Vec<omptarget_plugin::QueueId> {
        if self.exits.is_empty() {
            return Vec::new();
        }
        self.exits
            .iter()
            .filter(|r| r.0 == id)
            .map(|r| r.2)
            .collect()
    }

    /// Removes every entry (device teardown), in address order.
    pub fn drain(&mut self) -> Vec<Entry> {
        self.entries.drain()
    }

    /// Checks the table's structural invariants (for tests, fuzzing and fault injection):
    /// each entry is keyed by its host begin, its interval is well formed and lies at or
    /// after its base where the base is below it, and no two entries overlap. Returns the
    /// first violation found.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut previous: Option<&Entry> = None;
        for (key, e) in self.entries.iter() {
            if key != e.host_begin {
                return Err(format!(
                    "entry keyed {key:#x} begins at {:#x}",
                    e.host_begin
                ));
            }
            if e.host_end < e.host_begin {
                return Err(format!(
                    "entry [{:#x}, {:#x}) ends before it begins",
                    e.host_begin, e.host_end
                ));
            }
            if let Some(p) = previous
                && p.host_end > e.host_begin
            {
                return Err(format!(
                    "entries [{:#x}, {:#x}) and [{:#x}, {:#x}) overlap",
                    p.host_begin, p.host_end, e.host_begin, e.host_end
                ));
            }
            previous = Some(e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadows_are_found_by_range_and_replaced_by_address() {
        let shadow = |host_addr, tgt_value| ShadowPointer {
            host_addr,
            host_value: 1,
            tgt_value,
        };
        let mut s = Shadows::default();
        // Pointers at 0x1000, 0x1010, ... 0x1090, inserted out of order.
        for i in (0..10).rev() {
            assert!(s.set(shadow(0x1000 + 16 * i, 7)));
        }
        assert!(!s.set(shadow(0x1010, 7)), "the same attach changes nothing");
        assert!(
            s.set(shadow(0x1010, 8)),
            "a new device value replaces the old"
        );
        assert_eq!(s.len(), 10);
        let at =
            |begin, size| -> Vec<usize> { s.within(begin, size).map(|p| p.host_addr).collect() };
        assert_eq!(at(0x1010, 16), vec![0x1010]);
        assert_eq!(
            at(0x1010, 7),
            Vec::<usize>::new(),
            "a word that straddles the end"
        );
        assert_eq!(at(0x1008, 0x20), vec![0x1010, 0x1020]);
        assert_eq!(at(0x1000, 0x1000).len(), 10);
        assert_eq!(
            at(usize::MAX - 4, 8),
            Vec::<usize>::new(),
            "no overflow at the top"
        );
        assert_eq!(s.within(0x1010, 8).next().unwrap().tgt_value, 8);
    }

    fn entry(begin: usize, size: usize) -> Entry {
        Entry::for_tests(begin, size)
    }

    #[test]
    fn the_entry_a_trace_names_is_the_one_llvm_lookup_settles_on() {
        let mut t = MappingTable::new();
        assert!(t.lookup_for_trace(10, 4).is_none());
        t.insert(entry(100, 50));
        t.insert(entry(300, 10));
        let at = |b, s| t.lookup_for_trace(b, s).map(|e| e.host_begin);
        assert_eq!(at(120, 4), Some(100), "inside");
        assert_eq!(at(140, 40), Some(100), "reaching past the end");
        assert_eq!(at(10, 4), Some(100), "before everything: the first after");
        assert_eq!(at(200, 4), Some(300), "between: the next one");
        assert_eq!(at(400, 4), Some(300), "after everything: the last one");
        assert_eq!(at(150, 0), Some(300), "empty at an end: the next one");
        assert_eq!(at(120, 0), Some(100));
    }

    #[test]
    fn invariant_check_finds_overlaps_and_bad_keys() {
        let mut t = MappingTable::new();
        t.insert(entry(100, 50));
        t.insert(entry(150, 10));
        assert_eq!(t.check_invariants(), Ok(()));
        t.insert(entry(155, 10));
        assert!(t.check_invariants().unwrap_err().contains("overlap"));
        let mut t = MappingTable::new();
        let mut e = entry(100, 8);
        e.host_begin = 104;
        t.entries = Entries::Large(std::collections::BTreeMap::from([(100, e)]));
        assert!(t.check_invariants().unwrap_err().contains("keyed"));
    }

    #[test]
    fn classifies_intervals() {
        let mut t = MappingTable::new();
        t.insert(entry(100, 50));
        let l = t.lookup(100, 50);
        assert!(l.contained && !l.is_extension());
        let l = t.lookup(120, 10);
        assert!(l.contained);
        assert_eq!(l.entry, Some(100));
        let l = t.lookup(140, 20);
        assert!(l.extends_after && !l.contained && !l.extends_before);
        let l = t.lookup(90, 20);
        assert!(l.extends_before && !l.extends_after);
        let l = t.lookup(90, 70);
        assert!(l.extends_before && l.extends_after);
        assert_eq!(t.lookup(150, 10), Lookup::default());
        assert_eq!(t.lookup(10, 90), Lookup::default());
    }

    #[test]
    fn zero_size_lookups_find_the_enclosing_entry() {
        let mut t = MappingTable::new();
        t.insert(entry(100, 50));
        assert!(t.lookup(100, 0).contained);
        assert!(t.lookup(149, 0).contained);
        assert!(!t.lookup(150, 0).contained);
        assert!(!t.lookup(99, 0).contained);
    }

    /// entry_table fuzzing: an empty entry (an indirect function's) was seen by no lookup, so
    /// an interval starting at its address was inserted under the same key and replaced it.
    #[test]
    fn an_empty_entry_blocks_an_interval_that_starts_at_it() {
        let mut t = MappingTable::new();
        t.insert(entry(100, 0));
        let l = t.lookup(100, 8);
        assert_eq!(l.entry, Some(100));
        assert!(!l.contained && l.extends_after);
        assert_eq!(t.lookup(96, 4), Lookup::default(), "ends where it begins");
        assert_eq!(t.lookup(101, 4), Lookup::default());
        assert!(
            t.lookup(100, 0).contained,
            "the empty interval at its key is its own"
        );
        assert!(!t.lookup(101, 0).contained);
    }

    #[test]
    fn reference_counts_follow_openmp_rules() {
        let mut e = entry(0, 8);
        e.add_ref(false);
        assert_eq!(e.dyn_refs, RefCount::Finite(2));
        assert!(!e.release_would_remove(false, false));
        assert!(!e.release(false, false));
        assert!(e.release_would_remove(false, false));
        // delete zeroes the dynamic count but a hold reference keeps the entry.
        e.add_ref(true);
        assert!(!e.release_would_remove(false, true));
        assert!(!e.release(false, true));
        assert_eq!(e.dyn_refs, RefCount::Finite(0));
        assert!(e.release_would_remove(true, false));
        assert!(e.release(true, false));
        // A release that finds its count already 0 removes nothing (a `from` item after a
        // `delete` of the same list item in one construct), a delete still does.
        let mut z = entry(0, 8);
        assert!(z.release(false, true));
        assert!(!z.release_would_remove(false, false));
        assert!(!z.release_would_remove(true, false));
        assert!(z.release_would_remove(false, true));
        // Infinite entries never go away.
        let mut g = entry(0, 8);
        g.dyn_refs = RefCount::Infinite;
        assert!(!g.release(false, true));
        assert_eq!(g.total_refs(), None);
        g.reset_for_member_delete(false);
        assert_eq!(g.dyn_refs, RefCount::Infinite);
    }

    #[test]
    fn a_member_delete_leaves_one_reference_for_its_struct_to_release() {
        let mut e = entry(0, 8);
        e.add_ref(false);
        e.add_ref(false);
        e.reset_for_member_delete(false);
        assert_eq!(e.dyn_refs, RefCount::Finite(1));
        assert!(
            e.release_would_remove(false, false),
            "the struct's release removes it"
        );
        // A held entry without dynamic references gets none.
        let mut h = entry(0, 8);
        h.add_ref(true);
        h.release(false, true);
        h.reset_for_member_delete(false);
        assert_eq!((h.dyn_refs, h.hold_refs), (RefCount::Finite(0), 1));
        assert!(h.release(true, false), "the hold's end removes it");
    }
}
