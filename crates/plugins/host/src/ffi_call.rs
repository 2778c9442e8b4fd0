//! Calls a host kernel `void kernel(u64 w0, ..., u64 wN-1)` whose arity is known only at run
//! time, through libffi. A prepared call interface per arity is built once and reused, so a
//! launch allocates nothing for kernels of up to `INLINE_ARGS` words.

use libffi::low::{CodePtr, ffi_abi_FFI_DEFAULT_ABI, ffi_cif, ffi_type, prep_cif, types};
use omptarget_plugin::{Error, ErrorKind, Result};
use std::sync::OnceLock;

/// Arities with a cached call interface.
const CACHED_ARITIES: usize = 64;
/// Argument words kept on the stack during a call.
const INLINE_ARGS: usize = 32;

/// A prepared call interface and the argument-type array it points into.
struct Interface {
    cif: ffi_cif,
    _types: Box<[*mut ffi_type]>,
}

// SAFETY: after preparation the interface is only read (ffi_call does not write to it), and
// the type array it points at is owned by it and points at libffi's immutable static types.
unsafe impl Send for Interface {}
unsafe impl Sync for Interface {}

fn prepare(arity: usize) -> Result<Interface> {
    // SAFETY: `types::uint64` and `types::void` are libffi's static type descriptors; libffi
    // only reads them.
    let mut arg_types: Box<[*mut ffi_type]> = (0..arity).map(|_| &raw mut types::uint64).collect();
    let mut cif = ffi_cif::default();
    // SAFETY: the cif and the type array outlive every call through them (both are owned by
    // the Interface, and the Box's heap storage does not move when the Interface does).
    unsafe {
        prep_cif(
            &mut cif,
            ffi_abi_FFI_DEFAULT_ABI,
            arity,
            &raw mut types::void,
            arg_types.as_mut_ptr(),
        )
    }
    .map_err(|e| Error::new(ErrorKind::Backend, format!("libffi prep_cif failed: {e:?}")))?;
    Ok(Interface {
        cif,
        _types: arg_types,
    })
}

static CACHE: [OnceLock<Interface>; CACHED_ARITIES] = [const { OnceLock::new() }; CACHED_ARITIES];

/// Calls `func` with `hidden` leading `~0` words (the unused launch environment) followed by
/// one word per argument.
pub fn call(func: usize, hidden: usize, args: &[usize]) -> Result<()> {
    if func == 0 {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            "null kernel address",
        ));
    }
    let arity = hidden + args.len();
    let owned;
    let iface: &Interface = if arity < CACHED_ARITIES {
        match CACHE[arity].get() {
            Some(i) => i,
            None => {
                let i = prepare(arity)?;
                let _ = CACHE[arity].set(i);
                CACHE[arity].get().expect("just set")
            }
        }
    } else {
        owned = prepare(arity)?;
        &owned
    };

    let mut inline_words = [0u64; INLINE_ARGS];
    let mut heap_words = Vec::new();
    let words: &mut [u64] = if arity <= INLINE_ARGS {
        &mut inline_words[..arity]
    } else {
        heap_words.resize(arity, 0);
        &mut heap_words
    };
    for w in &mut words[..hidden] {
        *w = u64::MAX;
    }
    for (w, a) in words[hidden..].iter_mut().zip(args) {
        *w = *a as u64;
    }
    let mut inline_ptrs = [std::ptr::null_mut::<libc::c_void>(); INLINE_ARGS];
    let mut heap_ptrs = Vec::new();
    let ptrs: &mut [*mut libc::c_void] = if arity <= INLINE_ARGS {
        &mut inline_ptrs[..arity]
    } else {
        heap_ptrs.resize(arity, std::ptr::null_mut());
        &mut heap_ptrs
    };
    for (p, w) in ptrs.iter_mut().zip(words.iter_mut()) {
        *p = (w as *mut u64).cast();
    }
    let cif = (&raw const iface.cif).cast_mut();
    // SAFETY: `func` is a kernel symbol of a loaded image with the signature
    // `void(u64 x arity)` (clang's host-offload kernel ABI: every argument is one pointer-sized
    // word); `ptrs` holds `arity` pointers to live words. libffi does not modify the cif.
    unsafe {
        ffi_call(
            cif,
            Some(*CodePtr(func as *mut libc::c_void).as_fun()),
            std::ptr::null_mut(),
            ptrs.as_mut_ptr(),
        )
    };
    Ok(())
}

// libffi's `ffi_call`, declared `C-unwind`: the kernel is the program's code, and a foreign
// unwind may leave it (glibc's forced unwind of a thread cancelled at a cancellation point
// inside the region, a C++ exception); libffi's assembly has the unwind tables for it. The
// binding libffi-sys declares is plain `C`, through which an unwind is undefined behaviour.
unsafe extern "C-unwind" {
    fn ffi_call(
        cif: *mut ffi_cif,
        func: Option<unsafe extern "C" fn()>,
        rvalue: *mut libc::c_void,
        avalue: *mut *mut libc::c_void,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    static SUM: AtomicU64 = AtomicU64::new(0);

    extern "C" fn eight(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64, g: u64, h: u64) {
        // Weighted so that a swapped or dropped argument changes the result.
        let v = [b, c, d, e, f, g, h]
            .iter()
            .zip(2u64..)
            .fold(a, |acc, (x, w)| acc.wrapping_add(x * w));
        SUM.store(v, Ordering::SeqCst);
    }

    #[test]
    fn passes_hidden_word_and_stack_spilled_arguments() {
        let args = [1usize, 2, 3, 4, 5, 6, 7];
        let f: extern "C" fn(u64, u64, u64, u64, u64, u64, u64, u64) = eight;
        call(f as usize, 1, &args).unwrap();
        let expect = u64::MAX.wrapping_add(2 + 3 * 2 + 4 * 3 + 5 * 4 + 6 * 5 + 7 * 6 + 8 * 7);
        assert_eq!(SUM.load(Ordering::SeqCst), expect);
        assert!(call(0, 0, &[]).is_err());
    }
}
