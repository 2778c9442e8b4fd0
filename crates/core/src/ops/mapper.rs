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

/// Runs a clang-generated mapper function and returns the components it pushed, as owned
/// argument arrays.
pub(super) struct ExpandedArgs {
    pub bases: Vec<usize>,
    pub begins: Vec<usize>,
    pub sizes: Vec<i64>,
    pub types: Vec<i64>,
    pub names: Vec<usize>,
}

pub(super) fn expand(
    mapper: usize,
    base: usize,
    begin: usize,
    size: i64,
    ty: i64,
    name: usize,
) -> ExpandedArgs {
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
    ExpandedArgs {
        bases: c.iter().map(|c| c.base).collect(),
        begins: c.iter().map(|c| c.begin).collect(),
        sizes: c.iter().map(|c| c.size).collect(),
        types: c.iter().map(|c| c.ty).collect(),
        names: c.iter().map(|c| c.name).collect(),
    }
}
