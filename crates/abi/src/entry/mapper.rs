//! `declare mapper` components: the handle a mapper function fills.

use super::*;

export! {
    fn __tgt_mapper_num_components(handle: *mut c_void) -> i64 = 0; {
        if handle.is_null() {
            return 0;
        }
        // SAFETY: the handle is the MapperComponents the runtime passed to the mapper.
        unsafe { (*(handle as *const MapperComponents)).0.len() as i64 }
    }
}

export! {
    fn __tgt_push_mapper_component(handle: *mut c_void, base: *mut c_void, begin: *mut c_void,
                                   size: i64, ty: i64, name: *mut c_void) {
        if handle.is_null() {
            report(format_args!("__tgt_push_mapper_component called without a mapper handle"));
            return;
        }
        // SAFETY: as in __tgt_mapper_num_components; the mapper runs on this thread.
        let components = unsafe { &mut *(handle as *mut MapperComponents) };
        components.0.push(omptarget_core::ops::MapperComponent {
            base: base as usize,
            begin: begin as usize,
            size,
            ty,
            name: name as usize,
        });
    }
}
