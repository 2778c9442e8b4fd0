//! A fixed number of worker threads taking items in order from one list (`xargs -P`).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` on every item with at most `jobs` at once; results in the items' order.
pub fn map_parallel<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every item was taken by a worker"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn order_is_kept_and_at_most_jobs_run_at_once() {
        let items: Vec<u64> = (0..40).collect();
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let out = map_parallel(&items, 3, |&i| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2 + i % 3));
            running.fetch_sub(1, Ordering::SeqCst);
            i * 2
        });
        assert_eq!(out, (0..40).map(|i| i * 2).collect::<Vec<_>>());
        let most = most.load(Ordering::SeqCst);
        assert!((2..=3).contains(&most), "{most} at once");
        assert!(map_parallel(&[] as &[u8], 4, |_| 1).is_empty());
        assert_eq!(map_parallel(&[5], 0, |&x| x), [5]);
    }
}
