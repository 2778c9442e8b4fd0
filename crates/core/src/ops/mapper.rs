//! User-defined mappers (`declare mapper`). clang generates a function per mapper that calls
//! `__tgt_push_mapper_component` once per component; the runtime then maps the components as
//! if they were the construct's arguments.

use std::ffi::c_void;

/// One component a mapper pushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapperComponent {
    pub base: usize,
    pub begin: usize,
    pub size: i64,
    pub ty: i64,
    pub name: usize,
}

/// The handle a mapper function receives: `__tgt_mapper_num_components` and
/// `__tgt_push_mapper_component` act on it.
#[derive(Debug, Default)]
pub struct MapperComponents(pub Vec<MapperComponent>);

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
    let mut components = MapperComponents::default();
    // SAFETY: `mapper` is the address of a mapper function clang generated (it came from the
    // construct's mapper array), with the signature above; the handle lives for the call.
    unsafe {
        let f: MapperFn = std::mem::transmute::<usize, MapperFn>(mapper);
        f(
            (&raw mut components).cast(),
            base as *mut c_void,
            begin as *mut c_void,
            size,
            ty,
            name as *mut c_void,
        );
    }
    let c = components.0;
    let mut bases: Vec<usize> = c.iter().map(|c| c.base).collect();
    let begins: Vec<usize> = c.iter().map(|c| c.begin).collect();
    let sizes: Vec<i64> = c.iter().map(|c| c.size).collect();
    let types: Vec<i64> = c.iter().map(|c| c.ty).collect();
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
