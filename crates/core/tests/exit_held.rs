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

/// While the exit waits for the constructs in flight, a construct of a libomp target task
/// (created before the exit began) passes the gate and the exit waits for it; any other
/// construct waits at the gate until the unregistration is over.
#[test]
fn a_target_task_construct_passes_the_draining_gate_and_is_waited_for() {
    let rt = runtime();
    // Something in flight keeps the exit draining while the other threads arrive.
    rt.note_held(1);
    let exiting = rt.clone();
    let exit = std::thread::spawn(move || {
        let started = Instant::now();
        exiting.begin_exit(Duration::from_secs(10));
        let took = started.elapsed();
        exiting.end_exit();
        took
    });
    std::thread::sleep(Duration::from_millis(50));
    assert!(rt.exiting());
    // A target task's construct passes at once and holds the exit while it runs.
    let task = rt.clone();
    let task = std::thread::spawn(move || {
        let began = Instant::now();
        let scope = task.construct_scope(None, || true);
        let waited = began.elapsed();
        task.note_held(-1);
        std::thread::sleep(Duration::from_millis(200));
        drop(scope);
        waited
    });
    // Any other construct waits for the end of the exit.
    std::thread::sleep(Duration::from_millis(20));
    let other = rt.clone();
    let plain = std::thread::spawn(move || {
        let _scope = other.construct_scope(None, || false);
        !other.exiting()
    });
    let task_waited = task.join().unwrap();
    let took = exit.join().unwrap();
    assert!(
        task_waited < Duration::from_millis(100),
        "the task's construct waited {task_waited:?} at the gate"
    );
    assert!(
        took >= Duration::from_millis(240) && took < Duration::from_secs(5),
        "the exit waited {took:?}, not for the task's construct"
    );
    assert!(
        plain.join().unwrap(),
        "a plain construct ran while the exit unloaded"
    );
}
