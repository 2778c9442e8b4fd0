//! `declare mapper` components on the mock backend: which host bytes reach the device when a
//! struct mapped through (nested) mappers is new in a construct, and which do not when it was
//! mapped before. The component lists are the ones clang 19 generates (read off
//! `LIBOMPTARGET_DEBUG=1` runs of `tests/c/mapper_nested_member_copy.c`).

use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::CopyKind;
use omptarget_core::{AsyncInfo, Config, Device, Error, MapArgs, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, MockState, Op};
use std::sync::Arc;

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

struct Fixture {
    rt: Runtime,
    state: Arc<MockState>,
}

fn fixture() -> Fixture {
    let plugin = MockPlugin::new(1, false, false);
    let state = plugin.state.clone();
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let key = leak(1u64) as *const u64 as usize;
    let image: &'static [u8] = MAGIC;
    rt.register(key, &[image], Vec::new());
    Fixture { rt, state }
}

/// One component: (base, begin, size, type).
type Component = (usize, usize, i64, u64);

/// MEMBER_OF field for parent index `p` (0-based).
fn member_of(p: u64) -> u64 {
    (p + 1) << 48
}

fn with_args<R>(items: &[Component], f: impl FnOnce(&mut MapArgs<'_>) -> R) -> R {
    let mut bases: Vec<usize> = items.iter().map(|c| c.0).collect();
    let begins: Vec<usize> = items.iter().map(|c| c.1).collect();
    let sizes: Vec<i64> = items.iter().map(|c| c.2).collect();
    let types: Vec<i64> = items.iter().map(|c| c.3 as i64).collect();
    f(&mut MapArgs {
        bases: &mut bases,
        begins: &begins,
        sizes: &sizes,
        types: &types,
        names: None,
        mappers: None,
    })
}

fn construct(
    fx: &Fixture,
    items: &[Component],
    op: impl FnOnce(&Runtime, &Device, &mut MapArgs<'_>, &mut AsyncInfo) -> Result<(), Error>,
) {
    let dev = fx.rt.device(0).unwrap();
    with_args(items, |args| {
        let mut ai = fx.rt.async_info(&dev);
        let r = op(&fx.rt, &dev, args, &mut ai);
        ai.synchronize().and(r).unwrap();
    })
}

fn enter(fx: &Fixture, items: &[Component]) {
    construct(fx, items, |rt, dev, args, ai| rt.data_begin(dev, args, ai));
}

fn exit(fx: &Fixture, items: &[Component]) {
    construct(fx, items, |rt, dev, args, ai| rt.data_end(dev, args, ai));
}

/// The entry half and the exit half of a region in one construct (no kernel).
fn region(fx: &Fixture, items: &[Component]) {
    construct(fx, items, |rt, dev, args, ai| {
        rt.data_begin(dev, args, ai)?;
        rt.data_end(dev, args, ai)
    });
}

/// Host ranges (offset from `host`, size) copied to the device since the log was cleared,
/// within `[host, host + len)`, in order.
fn copied_in(fx: &Fixture, host: usize, len: usize) -> Vec<(usize, usize)> {
    fx.state
        .log()
        .iter()
        .filter_map(|op| match *op {
            Op::Copy {
                kind: CopyKind::HostToDevice,
                src,
                size,
                ..
            } if src >= host && src + size <= host + len => Some((src - host, size)),
            _ => None,
        })
        .collect()
}

fn addr<T>(x: &T) -> usize {
    x as *const T as usize
}

#[repr(C)]
struct In {
    a: i32,
    b: i32,
}

#[repr(C)]
struct Out {
    p: *const i32,
    inner: In,
    k: i32,
}

/// `map(tofrom: o)` of `struct Out` with `declare mapper(struct In v) map(v)` and
/// `declare mapper(struct Out o) map(o.p[0:4], o.in, o.k)`, flattened as clang 19 pushes them:
/// the combined entry, the pointee (PTR_AND_OBJ), then `o.in` from the nested mapper, whose
/// MEMBER_OF names the component before it (the pointee), not the struct, and `o.k`.
fn out_components(o: &Out, d: &[i32; 4]) -> Vec<Component> {
    let tofrom = mt::TO | mt::FROM;
    vec![
        (addr(o), addr(o), std::mem::size_of::<Out>() as i64, 0),
        (
            addr(&o.p),
            addr(d),
            16,
            member_of(0) | mt::PTR_AND_OBJ | tofrom,
        ),
        (addr(&o.inner), addr(&o.inner), 8, member_of(1) | tofrom),
        (addr(o), addr(&o.k), 4, member_of(0) | tofrom),
    ]
}

/// The bug this guards: the members of a struct new in the construct were copied in only when
/// the component their MEMBER_OF names had a reference count of 1. The nested mapper's member
/// names the pointee, which was already present (count 2), so `o.in` never reached the device.
#[test]
fn members_of_a_struct_new_in_the_construct_are_copied_whatever_came_before_them() {
    let fx = fixture();
    let d = Box::new([1i32, 2, 3, 4]);
    enter(&fx, &[(addr(&*d), addr(&*d), 16, mt::TO)]);
    let o = Box::new(Out {
        p: d.as_ptr(),
        inner: In { a: 5, b: 6 },
        k: 7,
    });
    fx.state.clear_log();
    let components = out_components(&o, &d);
    region(&fx, &components);
    let size = std::mem::size_of::<Out>();
    // o.in (offset 8, 8 bytes) and o.k (offset 16, 4 bytes): every `to` member. The pointer
    // word is written on the device from a staged copy (not from the struct).
    assert_eq!(copied_in(&fx, addr(&*o), size), vec![(8, 8), (16, 4)]);
    assert!(
        copied_in(&fx, addr(&*d), 16).is_empty(),
        "the present pointee is not copied again"
    );
    assert!(!fx.rt.target_is_present(addr(&*o), 0), "no leak");
    assert!(fx.rt.target_is_present(addr(&*d), 0));
}

/// "New in this construct" is what the construct did, not a count: here two counted items
/// name the struct before its member (count 2), and the member is still copied.
#[test]
fn a_member_is_copied_when_the_construct_created_its_struct_even_at_count_two() {
    let fx = fixture();
    let s = Box::new(In { a: 1, b: 2 });
    fx.state.clear_log();
    enter(
        &fx,
        &[
            (addr(&*s), addr(&*s), 8, 0),
            (addr(&*s), addr(&*s), 8, 0),
            (addr(&*s), addr(&s.b), 4, member_of(0) | mt::TO),
        ],
    );
    assert_eq!(copied_in(&fx, addr(&*s), 8), vec![(4, 4)]);
    exit(&fx, &[(addr(&*s), addr(&*s), 8, mt::DELETE)]);
    assert!(!fx.rt.target_is_present(addr(&*s), 0));
}

/// The benefit of counting the mapper's first component (docs/DIVERGENCES.md 1): a struct
/// mapped before is present, so a later construct copies none of its members; and once the last
/// reference goes, a later construct maps it afresh and copies them again.
#[test]
fn members_of_a_struct_mapped_before_are_not_copied_and_a_released_struct_is_new_again() {
    let fx = fixture();
    let d = Box::new([1i32, 2, 3, 4]);
    let o = Box::new(Out {
        p: d.as_ptr(),
        inner: In { a: 5, b: 6 },
        k: 7,
    });
    let size = std::mem::size_of::<Out>();
    let components = out_components(&o, &d);
    // target enter data map(to: o): the struct is new, its members and the pointee come in.
    let to_only: Vec<Component> = components
        .iter()
        .map(|&(b, p, s, t)| (b, p, s, t & !mt::FROM))
        .collect();
    fx.state.clear_log();
    enter(&fx, &to_only);
    assert_eq!(copied_in(&fx, addr(&*o), size), vec![(8, 8), (16, 4)]);
    assert_eq!(copied_in(&fx, addr(&*d), 16), vec![(0, 16)]);
    // A region on the present struct copies nothing in and nothing out.
    fx.state.clear_log();
    region(&fx, &components);
    assert!(copied_in(&fx, addr(&*o), size).is_empty());
    assert!(copied_in(&fx, addr(&*d), 16).is_empty());
    assert!(fx.rt.target_is_present(addr(&*o), 0));
    // target exit data map(release: o) drops the last references: nothing is left.
    let release: Vec<Component> = components
        .iter()
        .map(|&(b, p, s, t)| (b, p, s, t & !(mt::TO | mt::FROM)))
        .collect();
    exit(&fx, &release);
    assert!(!fx.rt.target_is_present(addr(&*o), 0), "no leak");
    assert!(!fx.rt.target_is_present(addr(&*d), 0));
    // Mapped again: new, so its members are copied in again.
    fx.state.clear_log();
    region(&fx, &components);
    assert_eq!(copied_in(&fx, addr(&*o), size), vec![(8, 8), (16, 4)]);
    let cached = fx.rt.device(0).unwrap().cached_blocks();
    assert_eq!(fx.state.memory.live(), cached, "only blocks kept for reuse");
}
