//! The tables of what a shared node sees: CPU time per region, and the host loop beside
//! `target nowait` regions, each with its goal lines.

use super::*;

/// The scenarios whose CPU time per region ours must keep at or below LLVM 19's.
const CPU_GOALS: [&str; 4] = ["empty", "map64B", "nowait32x4MiB", "kernel1s"];

/// The CPU table: per scenario, LLVM 19's and our CPU time per region (user + system of every
/// thread of the process, over the timed repetitions), ours/LLVM and, where a blocking-sync
/// floor was measured, the floor's; then the goal lines of CPU_GOALS.
pub(super) fn cpu_table(
    runs: usize,
    llvm: &Samples,
    ours: &Samples,
    floors: Option<&BTreeMap<String, crate::floor::Floor>>,
) -> String {
    let mut t = String::from(
        "CPU time per region (us: user + system of every thread of the process, getrusage)\n",
    );
    let _ = write!(
        t,
        "{:<32} {:>14} {:>14} {:>12}",
        "scenario", "LLVM 19 (us)", "ours (us)", "ours/LLVM"
    );
    if floors.is_some() {
        let _ = write!(t, " {:>12} {:>11}", "floor (us)", "ours/floor");
    }
    t.push('\n');
    let mut goals = String::new();
    for (scenario, lm, rm) in rows(llvm, ours) {
        let _ = write!(t, "{scenario:<32} {lm:>14.3} {rm:>14.3} {:>11.2}x", rm / lm);
        if let Some(f) = floors.and_then(|f| crate::floor::cpu_floor(f, scenario)) {
            let _ = write!(t, " {f:>12.3} {:>10.2}x", rm / f);
        }
        t.push('\n');
        if CPU_GOALS.contains(&scenario) {
            let _ = writeln!(
                goals,
                "goal cpu {scenario}: ours/LLVM {:.2} (<= 1): {}",
                rm / lm,
                if rm <= lm { "met" } else { "MISSED" }
            );
        }
    }
    let _ = writeln!(
        t,
        "(median over {runs} runs of each run's CPU time per region; ours/LLVM below 1: ours takes \
         less; floor: the driver's work waited for with blocking-sync events, where measured)"
    );
    t.push_str(&goals);
    t
}

/// The slowdown of the host loop beside GPU work that ours must keep to.
const BESIDE_GOAL_PCT: f64 = 5.0;

/// The beside table: per row, each runtime's host loop alone and beside the GPU work, the
/// slowdown and the regions completed during the loop (medians over the runs; the floor's
/// loop beside its regions and slowdown where measured); the goal line (ours at most 5% and at
/// most LLVM 19's), a warning for runs where no region completed during the loop, and each
/// run's slowdown.
pub(super) fn beside_table(
    runs: usize,
    llvm: &BesideRuns,
    ours: &BesideRuns,
    floors: Option<&BTreeMap<String, crate::floor::Floor>>,
) -> String {
    let mut t = String::from(
        "Host loop on all cores beside target nowait regions (ms; slowdown: beside over alone - 1)\n",
    );
    let _ = writeln!(
        t,
        "{:<24} {:<8} {:>11} {:>11} {:>10} {:>15}",
        "row", "runtime", "alone (ms)", "beside (ms)", "slowdown", "regions during"
    );
    let med = |v: &[Beside], f: fn(&Beside) -> f64| median(&v.iter().map(f).collect::<Vec<_>>());
    let mut after = String::new();
    let names: std::collections::BTreeSet<&String> = llvm.keys().chain(ours.keys()).collect();
    for name in names {
        let mut slow = BTreeMap::new();
        for (label, r) in [("LLVM 19", llvm.get(name)), ("ours", ours.get(name))] {
            let Some(r) = r.filter(|r| !r.is_empty()) else {
                continue;
            };
            let p = med(r, |b| b.slowdown_pct);
            slow.insert(label, p);
            let _ = writeln!(
                t,
                "{name:<24} {label:<8} {:>11.3} {:>11.3} {:>9.2}% {:>15.0}",
                med(r, |b| b.alone_ms),
                med(r, |b| b.beside_ms),
                p,
                med(r, |b| b.regions_during)
            );
            let none = r.iter().filter(|b| b.regions_during <= 0.0).count();
            if none > 0 {
                let _ = writeln!(
                    after,
                    "beside {name}: under {label}, no region completed during the loop in {none} of {} runs: the GPU work did not overlap it there",
                    r.len()
                );
            }
            let _ = writeln!(
                after,
                "  {name:<24} {label:<8} slowdown per run (%): {}",
                r.iter()
                    .map(|b| format!("{:.2}", b.slowdown_pct))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        let pageable = format!("{name}{}", crate::floor::PAGEABLE);
        for (label, key) in [("floor", name.as_str()), ("pageable", pageable.as_str())] {
            if let Some(f) = floors.and_then(|f| f.get(key))
                && let Some(p) = f.slowdown_pct
            {
                let _ = writeln!(
                    t,
                    "{name:<24} {label:<8} {:>11} {:>11.3} {p:>9.2}% {:>15}",
                    "-",
                    f.median_us / 1e3,
                    "-"
                );
            }
        }
        if let (Some(&r), Some(p)) = (
            slow.get("ours"),
            floors
                .and_then(|f| f.get(pageable.as_str()))
                .and_then(|f| f.slowdown_pct),
        ) {
            let _ = writeln!(
                after,
                "bound beside {name}: the pageable floor (only the host copies of pageable data a runtime must make) slows the loop {p:.2}%, ours {r:.2}%"
            );
        }
        if let (Some(&r), Some(&l)) = (slow.get("ours"), slow.get("LLVM 19")) {
            let _ = writeln!(
                after,
                "goal beside {name}: ours {r:.2}% (<= {BESIDE_GOAL_PCT}% and <= LLVM 19's {l:.2}%): {}",
                if r <= BESIDE_GOAL_PCT && r <= l {
                    "met"
                } else {
                    "MISSED"
                }
            );
        }
    }
    let _ = writeln!(
        t,
        "(median over {runs} runs of each run's medians; regions during: target nowait regions completed while the loop ran; floor: the same loop beside the driver's regions from pinned memory; pageable: beside the same regions from pageable arrays, each copied into pinned memory and back by one of 8 threads that sleep while the device works, the least host work a runtime must add)"
    );
    t.push_str(&after);
    t
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cols, samples};
    use super::*;

    #[test]
    fn the_cpu_table_shows_cpu_floors_only_where_the_floor_blocks() {
        let llvm = samples(&[("empty", &[20.0]), ("map64B", &[30.0]), ("alloc", &[5.0])]);
        let ours = samples(&[("empty", &[10.0]), ("map64B", &[40.0]), ("alloc", &[5.0])]);
        let f = |name: &str, cpu: f64| {
            (
                name.to_string(),
                crate::floor::Floor {
                    name: name.into(),
                    cpu_us: Some(cpu),
                    ..Default::default()
                },
            )
        };
        let floors = [f("empty_blocking_sync", 4.0), f("map64B", 30.0)].into();
        let t = cpu_table(3, &llvm, &ours, Some(&floors));
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            cols(lines[1]),
            [
                "scenario",
                "LLVM",
                "19",
                "(us)",
                "ours",
                "(us)",
                "ours/LLVM",
                "floor",
                "(us)",
                "ours/floor"
            ]
        );
        assert_eq!(cols(lines[2]), ["alloc", "5.000", "5.000", "1.00x"]);
        assert_eq!(
            cols(lines[3]),
            ["empty", "20.000", "10.000", "0.50x", "4.000", "2.50x"]
        );
        // map64B's floor spins: no CPU floor.
        assert_eq!(cols(lines[4]), ["map64B", "30.000", "40.000", "1.33x"]);
        assert!(lines[5].starts_with("(median over 3 runs"), "{t}");
        assert_eq!(lines[6], "goal cpu empty: ours/LLVM 0.50 (<= 1): met");
        assert_eq!(lines[7], "goal cpu map64B: ours/LLVM 1.33 (<= 1): MISSED");
        assert_eq!(lines.len(), 8, "{t}");
    }

    #[test]
    fn the_beside_table_shows_the_floor_when_measured() {
        let b = |p: f64| Beside {
            alone_ms: 100.0,
            beside_ms: 100.0 + p,
            slowdown_pct: p,
            regions_during: 50.0,
        };
        let llvm: BesideRuns = [("beside_x".to_string(), vec![b(3.0)])].into();
        let ours: BesideRuns = [("beside_x".to_string(), vec![b(4.0)])].into();
        let floors = [(
            "beside_x".to_string(),
            crate::floor::Floor {
                name: "beside_x".into(),
                median_us: 101_000.0,
                slowdown_pct: Some(1.0),
                ..Default::default()
            },
        )]
        .into();
        let t = beside_table(1, &llvm, &ours, Some(&floors));
        let floor = t.lines().find(|l| l.contains(" floor ")).expect(&t);
        assert_eq!(
            floor.split_whitespace().collect::<Vec<_>>(),
            ["beside_x", "floor", "-", "101.000", "1.00%", "-"]
        );
        // Ours within 5% but above LLVM 19's: missed.
        assert!(
            t.contains("goal beside beside_x: ours 4.00% (<= 5% and <= LLVM 19's 3.00%): MISSED"),
            "{t}"
        );
    }
}
