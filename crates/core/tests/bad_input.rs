//! Bad input to the core on the mock backend: each case is an error that leaves the mapping
//! table and device memory as they were.

use omptarget_core::ops::map_type as mt;
use omptarget_core::{Config, Error, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MockPlugin, MockState};
use std::sync::Arc;

mod common;
use common::{addr, enter, exit, register_image, update};

/// A runtime over one mock device of the given model with one registered binary (a kernel
/// `inc` that adds 1 to the i32 its first argument points at).
struct Fixture {
    rt: Runtime,
    state: Arc<MockState>,
}

fn fixture(stream_ordered: bool, asynchronous: bool) -> Fixture {
    let plugin = MockPlugin::new(1, stream_ordered, asynchronous);
    let state = plugin.state.clone();
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    register_image(&rt, c"inc");
    rt.device(0).expect("the mock device loads");
    Fixture { rt, state }
}

/// The three device models: synchronous, asynchronous, stream-ordered.
const MODELS: [(bool, bool); 3] = [(false, false), (false, true), (true, true)];

#[test]
fn negative_sizes_are_refused_by_every_construct_and_change_nothing() {
    for (stream_ordered, asynchronous) in MODELS {
        let fx = fixture(stream_ordered, asynchronous);
        let a = Box::new([1i32, 2, 3, 4]);
        let p = addr(&*a);
        let base = fx.state.memory.live();
        // Entry: nothing is mapped, and the item after the bad one is not mapped either.
        let other = Box::new(5i32);
        let err = enter(&fx.rt, &[(p, -16, mt::TO), (addr(&*other), 4, mt::TO)]).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
        assert!(!fx.rt.target_is_present(p, 0));
        assert!(!fx.rt.target_is_present(addr(&*other), 0));
        assert_eq!(fx.state.memory.live(), base);
        // Update and exit of a mapped array with a negative size: refused, the mapping and
        // its count stay (before, the size was clamped to 0 and the exit removed the entry).
        enter(&fx.rt, &[(p, 16, mt::TO)]).unwrap();
        assert!(update(&fx.rt, &[(p, -16, mt::FROM)]).is_err());
        assert!(exit(&fx.rt, &[(p, -16, mt::FROM)]).is_err());
        assert!(fx.rt.target_is_present(p, 0), "the mapping is untouched");
        exit(&fx.rt, &[(p, 16, mt::FROM)]).unwrap();
        assert!(!fx.rt.target_is_present(p, 0), "its count was still 1");
    }
}

#[test]
fn a_section_that_wraps_around_the_address_space_is_refused() {
    let fx = fixture(false, false);
    let err = enter(&fx.rt, &[(usize::MAX - 7, 16, mt::TO)]).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    assert_eq!(fx.state.memory.live(), 0);
}

#[test]
fn an_association_whose_device_address_is_null_fails_the_construct_that_maps_it() {
    let fx = fixture(false, false);
    let a = Box::new([0i32; 4]);
    let p = addr(&*a);
    fx.rt.associate_ptr(p, 0, 16, 0).unwrap();
    let err = enter(&fx.rt, &[(p, 16, mt::TO | mt::FROM)]).unwrap_err();
    assert!(matches!(err, Error::NullPointer(_)), "{err:?}");
    // The failed construct took no reference: the association can still be removed.
    fx.rt.disassociate_ptr(p, 0).unwrap();
    // A host range that wraps around cannot be associated at all.
    assert!(fx.rt.associate_ptr(usize::MAX - 3, 0x1000, 16, 0).is_err());
}

#[test]
fn a_second_omp_target_free_is_refused_and_the_block_is_not_handed_out_twice() {
    for (stream_ordered, asynchronous) in MODELS {
        let fx = fixture(stream_ordered, asynchronous);
        let kind = omptarget_core::plugin::AllocKind::Device;
        let a = fx.rt.target_alloc(64, 0, kind).unwrap();
        fx.rt.target_free(a, 0, kind).unwrap();
        let err = fx.rt.target_free(a, 0, kind).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
        let b = fx.rt.target_alloc(64, 0, kind).unwrap();
        let c = fx.rt.target_alloc(64, 0, kind).unwrap();
        assert_ne!(b, c, "one block handed out twice");
        // A pointer omp_target_alloc never gave out is refused as well.
        assert!(fx.rt.target_free(b + 8, 0, kind).is_err());
        fx.rt.target_free(b, 0, kind).unwrap();
        fx.rt.target_free(c, 0, kind).unwrap();
    }
}
