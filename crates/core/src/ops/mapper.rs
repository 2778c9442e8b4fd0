//! User-defined mappers (`declare mapper`). clang generates a function per mapper that calls
//! `__tgt_push_mapper_component` once per component on the handle it is given; the runtime
//! then maps the components as if they were the construct's arguments.
//!
//! The handle is LLVM's `MapperComponentsTy`, and programs may create one themselves (LLVM's
//! own test `declare_mapper_api.cpp` does), so both entry points accept the two layouts LLVM
//! has used, told apart by their words:
//! - LLVM 19: `llvm::SmallVector<MapComponentInfoTy>` (read off `__tgt_push_mapper_component`
//!   in `/usr/lib/llvm-19/lib/libomptarget.so.19.1`: size at +8 and capacity at +12 as 32-bit
//!   words, `grow_pod` with the inline element at +16). It grows with `malloc`/`realloc` and
//!   its destructor `free`s a buffer that is not the inline one, as `llvm::SmallVector` does.
//!   The handle the runtime creates has this layout.
//! - LLVM ≤ 17 (and its test): `std::vector<MapComponentInfoTy>`, three pointers (begin, end,
//!   end of capacity). Its destructor hands the buffer to `::operator delete`, so it grows with
//!   the process's `::operator new` / `::operator delete` (looked up by symbol: a program may
//!   replace them, and libstdc++'s and libc++'s both `malloc`/`free` underneath), with
//!   libstdc++'s growth rule (double, at least one).

use std::ffi::{c_char, c_void};
use std::mem::{MaybeUninit, size_of};
use std::sync::OnceLock;

/// One component a mapper pushed: LLVM's `MapComponentInfoTy` (40 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MapperComponent {
    pub base: usize,
    pub begin: usize,
    pub size: i64,
    pub ty: i64,
    pub name: usize,
}

const COMPONENT: usize = size_of::<MapperComponent>();

/// LLVM 19's `MapperComponentsTy`: `llvm::SmallVector<MapComponentInfoTy>` with its one inline
/// element.
#[repr(C)]
pub struct MapperHandle {
    begin: *mut MapperComponent,
    size: u32,
    capacity: u32,
    inline: [MaybeUninit<MapperComponent>; 1],
}

impl MapperHandle {
    /// An empty handle. It points at itself once pinned by [`MapperHandle::reset`]. The
    /// inline element starts zeroed: the layout check reads its first word.
    fn new() -> Self {
        Self {
            begin: std::ptr::null_mut(),
            size: 0,
            capacity: 1,
            inline: [MaybeUninit::zeroed()],
        }
    }

    /// Points the handle at its inline element (empty), as a new `SmallVector` is.
    fn reset(&mut self) {
        self.begin = self.inline.as_mut_ptr().cast();
        self.size = 0;
        self.capacity = 1;
    }

    fn components(&self) -> &[MapperComponent] {
        if self.size == 0 {
            return &[];
        }
        // SAFETY: `begin` holds `size` initialised components (only `push_component` grows it).
        unsafe { std::slice::from_raw_parts(self.begin, self.size as usize) }
    }
}

impl Drop for MapperHandle {
    fn drop(&mut self) {
        if !self.begin.is_null() && self.begin != self.inline.as_mut_ptr().cast() {
            // SAFETY: a buffer that is not the inline element came from malloc/realloc in
            // `push_small`.
            unsafe { free(self.begin.cast()) };
        }
    }
}

unsafe extern "C" {
    fn malloc(size: usize) -> *mut u8;
    fn realloc(ptr: *mut u8, size: usize) -> *mut u8;
    fn free(ptr: *mut u8);
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// Which layout a handle has (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    SmallVector,
    StdVector,
}

/// Tells the layouts apart from the handle's first three words. A `std::vector` is all null
/// or three ordered pointers a whole number of components apart; a `SmallVector` has a
/// non-null buffer and, in its second word, a size no larger than its capacity (at least 1),
/// which read as a pointer lies below the buffer (a capacity of 2^14 components or more would
/// be needed to reach a heap or stack address).
///
/// # Safety
/// `handle` points at 24 readable bytes.
unsafe fn layout_of(handle: *const c_void) -> Option<Layout> {
    // SAFETY: the caller guarantees three readable words.
    let [w0, w1, w2] = unsafe { std::ptr::read_unaligned(handle as *const [usize; 3]) };
    let aligned = w0 % std::mem::align_of::<MapperComponent>() == 0;
    if w0 == 0 && w1 == 0 && w2 == 0 {
        return Some(Layout::StdVector);
    }
    if w0 != 0
        && aligned
        && w0 <= w1
        && w1 <= w2
        && (w1 - w0) % COMPONENT == 0
        && (w2 - w0) % COMPONENT == 0
    {
        return Some(Layout::StdVector);
    }
    let (size, capacity) = (w1 as u32, (w1 >> 32) as u32);
    (w0 != 0 && aligned && capacity >= 1 && size <= capacity).then_some(Layout::SmallVector)
}

/// Why a handle was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleError {
    Null,
    UnknownLayout,
    OutOfMemory,
}

impl std::fmt::Display for HandleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HandleError::Null => "null mapper handle",
            HandleError::UnknownLayout => {
                "the handle is neither an llvm::SmallVector nor a std::vector of mapper components"
            }
            HandleError::OutOfMemory => "out of memory growing the mapper handle",
        })
    }
}

/// `__tgt_mapper_num_components`.
///
/// # Safety
/// `handle` is null or points at a live `MapperComponentsTy` of either layout.
pub unsafe fn num_components(handle: *mut c_void) -> Result<i64, HandleError> {
    if handle.is_null() {
        return Err(HandleError::Null);
    }
    // SAFETY: both layouts are at least 24 bytes.
    match unsafe { layout_of(handle) } {
        Some(Layout::SmallVector) => {
            // SAFETY: a SmallVector's 32-bit size sits at +8.
            Ok(
                unsafe { std::ptr::read_unaligned((handle as *const u8).add(8) as *const u32) }
                    as i64,
            )
        }
        Some(Layout::StdVector) => {
            // SAFETY: three pointer words, checked ordered by `layout_of`.
            let [begin, end, _] = unsafe { std::ptr::read_unaligned(handle as *const [usize; 3]) };
            Ok(((end - begin) / COMPONENT) as i64)
        }
        None => Err(HandleError::UnknownLayout),
    }
}

/// `__tgt_push_mapper_component`.
///
/// # Safety
/// As [`num_components`]; the handle is used by this thread only during the call.
pub unsafe fn push_component(
    handle: *mut c_void,
    component: MapperComponent,
) -> Result<(), HandleError> {
    if handle.is_null() {
        return Err(HandleError::Null);
    }
    // SAFETY: both layouts are at least 24 bytes.
    match unsafe { layout_of(handle) } {
        // SAFETY: the layout was checked; the caller owns the handle for the call.
        Some(Layout::SmallVector) => unsafe { push_small(handle.cast(), component) },
        // SAFETY: as above.
        Some(Layout::StdVector) => unsafe { push_std(handle.cast(), component) },
        None => Err(HandleError::UnknownLayout),
    }
}

/// `SmallVector::push_back` with LLVM's `grow_pod`: capacity `2 * capacity + 1`; the inline
/// element is left for a `malloc`ed buffer, a `malloc`ed buffer is `realloc`ed.
///
/// # Safety
/// `h` is a live SmallVector-layout handle.
unsafe fn push_small(h: *mut MapperHandle, c: MapperComponent) -> Result<(), HandleError> {
    // SAFETY: the header is 16 bytes of a SmallVector; the inline element follows it.
    unsafe {
        let inline = (h as *mut u8).add(16) as *mut MapperComponent;
        let begin = std::ptr::read_unaligned(&raw const (*h).begin);
        let size = std::ptr::read_unaligned(&raw const (*h).size);
        let capacity = std::ptr::read_unaligned(&raw const (*h).capacity);
        let mut buf = begin;
        if size >= capacity {
            let new_capacity = (2 * capacity as u64 + 1).min(u32::MAX as u64) as u32;
            if new_capacity <= size {
                return Err(HandleError::OutOfMemory);
            }
            let bytes = new_capacity as usize * COMPONENT;
            buf = if begin == inline {
                let fresh = malloc(bytes) as *mut MapperComponent;
                if !fresh.is_null() {
                    std::ptr::copy_nonoverlapping(begin, fresh, size as usize);
                }
                fresh
            } else {
                realloc(begin.cast(), bytes) as *mut MapperComponent
            };
            if buf.is_null() {
                return Err(HandleError::OutOfMemory);
            }
            std::ptr::write_unaligned(&raw mut (*h).begin, buf);
            std::ptr::write_unaligned(&raw mut (*h).capacity, new_capacity);
        }
        std::ptr::write_unaligned(buf.add(size as usize), c);
        std::ptr::write_unaligned(&raw mut (*h).size, size + 1);
    }
    Ok(())
}

/// The process's `::operator new(size_t)` and `::operator delete(void *)`.
struct CxxAllocator {
    new: unsafe extern "C" fn(usize) -> *mut u8,
    delete: unsafe extern "C" fn(*mut u8),
}

fn cxx_allocator() -> &'static CxxAllocator {
    static ALLOCATOR: OnceLock<CxxAllocator> = OnceLock::new();
    if let Some(found) = ALLOCATOR.get() {
        return found;
    }
    // Looked up before the OnceLock is entered: dlsym takes the dynamic loader's lock, and a
    // thread in dlclose (holding it) may be waiting for whatever holds the OnceLock.
    let found = {
        // SAFETY: dlsym with RTLD_DEFAULT (null) searches the global scope: a replacement the
        // program defines comes before libstdc++'s (or libc++'s) own. Both symbols have these
        // signatures (`_Znwm`: operator new(unsigned long), `_ZdlPv`: operator delete(void*)).
        unsafe {
            let new = dlsym(std::ptr::null_mut(), c"_Znwm".as_ptr());
            let delete = dlsym(std::ptr::null_mut(), c"_ZdlPv".as_ptr());
            if new.is_null() || delete.is_null() {
                // No C++ runtime in the process: what its operator new would call.
                CxxAllocator {
                    new: malloc,
                    delete: free,
                }
            } else {
                CxxAllocator {
                    new: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(usize) -> *mut u8>(
                        new,
                    ),
                    delete: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut u8)>(
                        delete,
                    ),
                }
            }
        }
    };
    ALLOCATOR.get_or_init(|| found)
}

/// `std::vector::push_back`: a full vector moves to a buffer from `::operator new` twice as
/// large (at least one element) and gives the old one to `::operator delete`.
///
/// # Safety
/// `h` is a live std::vector-layout handle.
unsafe fn push_std(
    h: *mut [*mut MapperComponent; 3],
    c: MapperComponent,
) -> Result<(), HandleError> {
    // SAFETY: the three words of a std::vector, ordered (checked by `layout_of`); a buffer
    // from `::operator new` holds `capacity` components.
    unsafe {
        let [begin, end, cap] = std::ptr::read_unaligned(h);
        let size = (end as usize - begin as usize) / COMPONENT;
        let capacity = (cap as usize - begin as usize) / COMPONENT;
        let (mut begin, mut end, mut cap) = (begin, end, cap);
        if size == capacity {
            let new_capacity = size + size.max(1);
            let bytes = new_capacity
                .checked_mul(COMPONENT)
                .ok_or(HandleError::OutOfMemory)?;
            let alloc = cxx_allocator();
            // operator new throws instead of returning null; a throw cannot cross into Rust,
            // so the request is bounded first (std::vector's max_size).
            if bytes > isize::MAX as usize {
                return Err(HandleError::OutOfMemory);
            }
            let fresh = (alloc.new)(bytes) as *mut MapperComponent;
            if fresh.is_null() {
                return Err(HandleError::OutOfMemory);
            }
            if size > 0 {
                std::ptr::copy_nonoverlapping(begin, fresh, size);
            }
            if !begin.is_null() {
                (alloc.delete)(begin.cast());
            }
            begin = fresh;
            end = fresh.add(size);
            cap = fresh.add(new_capacity);
        }
        std::ptr::write_unaligned(end, c);
        end = end.add(1);
        std::ptr::write_unaligned(h, [begin, end, cap]);
    }
    Ok(())
}

/// `void mapper(void *handle, void *base, void *begin, int64_t size, int64_t type, void *name)`.
type MapperFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void, i64, i64, *mut c_void);

/// Runs item `i`'s mapper function and `apply` on the components it pushed, as the argument
/// arrays of a construct (LLVM's `targetDataMapper`).
pub(super) fn with_components<R>(
    args: &super::MapArgs<'_>,
    i: usize,
    apply: impl FnOnce(&mut super::MapArgs<'_>) -> R,
) -> R {
    let (mapper, base, begin, size, ty, name) = (
        args.mapper(i),
        args.bases[i],
        args.begins[i],
        args.sizes[i],
        args.types[i],
        args.name_ptr(i),
    );
    let mut handle = MapperHandle::new();
    handle.reset();
    // SAFETY: `mapper` is the address of a mapper function clang generated (it came from the
    // construct's mapper array), with the signature above; the handle lives for the call and
    // does not move (it points at its own inline element).
    unsafe {
        let f: MapperFn = std::mem::transmute::<usize, MapperFn>(mapper);
        f(
            (&raw mut handle).cast(),
            base as *mut c_void,
            begin as *mut c_void,
            size,
            ty,
            name as *mut c_void,
        );
    }
    let c = handle.components();
    let mut bases: Vec<usize> = c.iter().map(|c| c.base).collect();
    let begins: Vec<usize> = c.iter().map(|c| c.begin).collect();
    let sizes: Vec<i64> = c.iter().map(|c| c.size).collect();
    // clang 19's mapper functions combine the item's map type with each component's (map-type
    // decay) but drop its `always` modifier; the modifier still asks for the item's storage,
    // which the components with `to` or `from` are, to move whatever the counts say.
    let always = ty as u64 & super::map_type::ALWAYS;
    let moves = super::map_type::TO | super::map_type::FROM;
    let types: Vec<i64> = c
        .iter()
        .map(|c| {
            if c.ty as u64 & moves != 0 {
                (c.ty as u64 | always) as i64
            } else {
                c.ty
            }
        })
        .collect();
    let names: Vec<usize> = c.iter().map(|c| c.name).collect();
    apply(&mut super::MapArgs {
        bases: &mut bases,
        begins: &begins,
        sizes: &sizes,
        types: &types,
        names: Some(&names),
        mappers: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component(i: usize) -> MapperComponent {
        MapperComponent {
            base: 0x1000,
            begin: 0x1000 + 4 * i,
            size: 4,
            ty: 3,
            name: 0,
        }
    }

    #[test]
    fn our_handle_grows_like_a_small_vector_and_frees_its_buffer() {
        let mut h = MapperHandle::new();
        h.reset();
        let p = (&raw mut h).cast::<c_void>();
        // SAFETY: a live handle of ours.
        unsafe {
            assert_eq!(layout_of(p), Some(Layout::SmallVector));
            assert_eq!(num_components(p), Ok(0));
            push_component(p, component(0)).unwrap();
            // A raw borrow of the inline element: a `&mut` to it (`as_mut_ptr`) would invalidate
            // the handle's own pointer to it (Miri, Stacked Borrows).
            assert_eq!(
                h.begin,
                (&raw mut h.inline).cast(),
                "one element fits inline"
            );
            for i in 1..10 {
                push_component(p, component(i)).unwrap();
                assert_eq!(layout_of(p), Some(Layout::SmallVector));
            }
            assert_eq!(num_components(p), Ok(10));
        }
        // 1 → 3 → 7 → 15, as grow_pod.
        assert_eq!(h.capacity, 15);
        let expected: Vec<_> = (0..10).map(component).collect();
        assert_eq!(h.components(), &expected[..]);
    }

    #[test]
    fn a_std_vector_handle_grows_as_libstdcxx_would() {
        let mut v = [std::ptr::null_mut::<MapperComponent>(); 3];
        let p = (&raw mut v).cast::<c_void>();
        // SAFETY: an empty std::vector layout; its buffer goes back to operator delete below.
        unsafe {
            assert_eq!(num_components(p), Ok(0));
            for i in 0..5 {
                push_component(p, component(i)).unwrap();
                assert_eq!(layout_of(p), Some(Layout::StdVector));
            }
            assert_eq!(num_components(p), Ok(5));
            // 1 → 2 → 4 → 8 elements of capacity.
            assert_eq!((v[2] as usize - v[0] as usize) / COMPONENT, 8);
            let got = std::slice::from_raw_parts(v[0], 5);
            assert_eq!(got, &(0..5).map(component).collect::<Vec<_>>()[..]);
            (cxx_allocator().delete)(v[0].cast());
        }
    }

    #[test]
    fn a_handle_of_neither_layout_is_refused() {
        // A "SmallVector" whose size exceeds its capacity, and a null handle.
        let words: [usize; 3] = [0x1000, (1usize << 32) | 5, 0];
        let p = words.as_ptr() as *mut c_void;
        // SAFETY: three readable words; nothing is written for a refused handle.
        unsafe {
            assert_eq!(num_components(p), Err(HandleError::UnknownLayout));
            assert_eq!(
                push_component(p, component(0)),
                Err(HandleError::UnknownLayout)
            );
            assert_eq!(num_components(std::ptr::null_mut()), Err(HandleError::Null));
        }
    }
}
