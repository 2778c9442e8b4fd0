//! The exit waits for `nowait` constructs left running in their libomp task's slot
//! (`Runtime::note_held`) as for constructs running on other threads: between polls no thread
//! is inside them, but the unregistration that follows frees the devices' memory and queues
//! their work still uses. A fork child starts with none.

use omptarget_core::{Config, NoHostRuntime, Runtime};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn runtime() -> Arc<Runtime> {
    Arc::new(Runtime::new(
        Config::default(),
        Vec::new(),
        Box::new(NoHostRuntime),
    ))
}

#[test]
fn the_exit_waits_for_a_held_construct_until_it_completes() {
    let rt = runtime();
    rt.note_held(1);
    let other = rt.clone();
    let poller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        other.note_held(-1);
    });
    let started = Instant::now();
    rt.begin_exit(Duration::from_secs(10));
    let took = started.elapsed();
    rt.end_exit();
    poller.join().unwrap();
    assert!(
        took >= Duration::from_millis(140) && took < Duration::from_secs(5),
        "the exit waited {took:?}"
    );
}

#[test]
fn a_held_construct_that_never_completes_delays_the_exit_only_its_bound() {
    let rt = runtime();
    rt.note_held(1);
    let started = Instant::now();
    rt.begin_exit(Duration::from_millis(200));
    let took = started.elapsed();
    rt.end_exit();
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(5),
        "the exit waited {took:?}"
    );
}

#[test]
fn a_fork_child_holds_none_of_its_parents_constructs() {
    let rt = runtime();
    rt.note_held(2);
    rt.after_fork_in_child();
    let started = Instant::now();
    rt.begin_exit(Duration::from_secs(10));
    rt.end_exit();
    assert!(started.elapsed() < Duration::from_secs(1));
}
