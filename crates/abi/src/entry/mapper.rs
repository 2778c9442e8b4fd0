//! `declare mapper` components: the handle a mapper function fills (LLVM 19's
//! `llvm::SmallVector` layout, or a `std::vector` a program made; see core's `ops::mapper`).

use super::*;
use omptarget_core::ops::{MapperComponent, num_components, push_component};

export! {
    fn __tgt_mapper_num_components(handle: *mut c_void) -> i64 = 0; {
        // SAFETY: the handle is the one the runtime passed to the mapper, or one the program
        // made with one of LLVM's layouts; the layout is checked before it is read.
        match unsafe { num_components(handle) } {
            Ok(n) => n,
            Err(e) => {
                report(format_args!("__tgt_mapper_num_components: {e}"));
                0
            }
        }
    }
}

export! {
    fn __tgt_push_mapper_component(handle: *mut c_void, base: *mut c_void, begin: *mut c_void,
                                   size: i64, ty: i64, name: *mut c_void) {
        let component = MapperComponent {
            base: base as usize,
            begin: begin as usize,
            size,
            ty,
            name: name as usize,
        };
        // SAFETY: as in __tgt_mapper_num_components; the mapper runs on this thread.
        if let Err(e) = unsafe { push_component(handle, component) } {
            report(format_args!("__tgt_push_mapper_component: {e}"));
        }
    }
}
