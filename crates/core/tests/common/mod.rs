//! What the core's integration tests share: `mod common;` in a test file. Not every test
//! uses every helper.
#![allow(dead_code)]

use omptarget_core::MapArgs;

/// A value that lives for the rest of the test process (an address the runtime may keep).
pub fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

/// The address of `x`.
pub fn addr<T>(x: &T) -> usize {
    x as *const T as usize
}

/// Runs `f` with clang-style argument arrays for `items` (begin, size, map type; the base is
/// the begin), no names and no mappers.
pub fn with_args<R>(items: &[(usize, i64, u64)], f: impl FnOnce(&mut MapArgs<'_>) -> R) -> R {
    let mut bases: Vec<usize> = items.iter().map(|i| i.0).collect();
    let begins = bases.clone();
    let sizes: Vec<i64> = items.iter().map(|i| i.1).collect();
    let types: Vec<i64> = items.iter().map(|i| i.2 as i64).collect();
    let mut args = MapArgs {
        bases: &mut bases,
        begins: &begins,
        sizes: &sizes,
        types: &types,
        names: None,
        mappers: None,
    };
    f(&mut args)
}
