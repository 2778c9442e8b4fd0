use super::*;

/// Per-scenario samples from literal rows (the bench tables' tests, here and in node.rs).
pub(super) fn samples(rows: &[(&str, &[f64])]) -> Samples {
    rows.iter()
        .map(|(s, v)| (s.to_string(), v.to_vec()))
        .collect()
}

/// A table line's whitespace-separated columns.
pub(super) fn cols(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

fn gpu(launches: u64) -> gomp::Check {
    gomp::Check {
        offload: gomp::Offload::Gpu {
            launches,
            regions: 10,
        },
        first_launch: Some("GOMP_OFFLOAD_run: kernel f: launch [(teams: 2), 1, 1]".into()),
    }
}

#[test]
fn the_gcc_column_shows_times_only_where_kernels_ran_on_the_gpu() {
    let llvm = samples(&[
        ("a", &[30.0, 32.0]),
        ("b", &[90.0, 90.0]),
        ("c", &[9.0, 9.0]),
        ("d", &[9.0, 9.0]),
        ("e", &[9.0, 9.0]),
    ]);
    let ours = samples(&[
        ("a", &[10.0, 10.0]),
        ("b", &[15.0, 15.0]),
        ("c", &[3.0, 3.0]),
        ("d", &[3.0, 3.0]),
        ("e", &[3.0, 3.0]),
    ]);
    let g = GccRuns {
        samples: samples(&[("a", &[20.0, 24.0]), ("b", &[45.0]), ("c", &[1.0])]),
        failures: vec![(2, "signal 11".into(), "Segmentation fault".into())],
        checks: [
            ("a".to_string(), gpu(14)),
            ("b".to_string(), gpu(10)),
            (
                "c".to_string(),
                gomp::Check {
                    offload: gomp::Offload::Host,
                    first_launch: None,
                },
            ),
            ("d".to_string(), gpu(12)),
        ]
        .into(),
        check_failed: None,
    };
    let floors: BTreeMap<String, crate::floor::Floor> = [(
        "a".to_string(),
        crate::floor::Floor {
            name: "a".into(),
            median_us: 8.0,
            ..Default::default()
        },
    )]
    .into();
    let t = table(2, &llvm, &ours, Some(&g), Some(&floors));
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        cols(lines[0]),
        [
            "scenario",
            "LLVM",
            "19",
            "(us)",
            "ours",
            "(us)",
            "LLVM/ours",
            "GCC",
            "12",
            "(us)",
            "GCC/ours",
            "floor",
            "(us)",
            "ours/floor"
        ]
    );
    // LLVM, ours, LLVM/ours, GCC, GCC/ours, floor, ours/floor side by side.
    assert_eq!(
        cols(lines[1]),
        [
            "a", "31.000", "10.000", "3.10x", "22.000", "2.20x", "8.000", "1.25x"
        ]
    );
    assert_eq!(
        cols(lines[2]),
        ["b", "90.000", "15.000", "6.00x", "45.000", "3.00x"]
    );
    // GCC printed a time for c, on the host: no number.
    assert!(
        lines[3].ends_with("3.00x              host fallback"),
        "{t}"
    );
    assert!(lines[4].ends_with(" failed (signal 11)"), "{t}");
    assert!(lines[5].ends_with(" not in check run"), "{t}");
    // The columns line up: GCC's cells end where the header's GCC/ours does.
    let gcc_end = lines[0].find("GCC/ours").unwrap() + "GCC/ours".len();
    for l in &lines[1..6] {
        assert_ne!(&l[gcc_end - 1..gcc_end], " ", "{t}");
        assert!(
            matches!(l.get(gcc_end..gcc_end + 1), None | Some(" ")),
            "{t}"
        );
    }
    assert!(lines[6].starts_with("(median over 2 runs"));

    let r = gcc_report(&llvm, &ours, &g);
    let lines: Vec<&str> = r.lines().collect();
    assert!(
        lines[0].starts_with("GCC 12 on the GPU: 3 of 5 scenarios"),
        "{r}"
    );
    assert_eq!(
        cols(lines[1]).join(" "),
        "gcc check a gpu: 14 launches for 10 timed regions | GOMP_OFFLOAD_run: kernel f: launch [(teams: 2), 1, 1]"
    );
    assert!(
        lines[3].contains(" HOST FALLBACK: no kernel launch logged"),
        "{r}"
    );
    assert!(lines[5].ends_with(" not in the check run"), "{r}");
    assert_eq!(lines[6], "gcc run 2: signal 11: Segmentation fault");

    // Without the GCC build or the floors, the table is the two runtimes' as before.
    let t = table(2, &llvm, &ours, None, None);
    assert_eq!(
        t.lines().nth(1).unwrap(),
        "a                                        31.000         10.000        3.10x"
    );
}

#[test]
fn each_runs_time_is_listed_with_the_spread() {
    let llvm = samples(&[("a", &[30.0, 31.0, 32.0]), ("b", &[9.0])]);
    let ours = samples(&[("a", &[10.0, 13.0, 10.4]), ("c", &[1.0])]);
    let t = per_run(&llvm, &ours);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 2, "{t}");
    assert_eq!(lines[0], "per run (us, in run order):");
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>().join(" "),
        "a ours 10.0 13.0 10.4 (spread 1.30) | LLVM 19 30.0 31.0 32.0"
    );
}

#[test]
fn the_host_clock_is_listed_per_run_and_is_no_row() {
    let llvm = samples(&[("a", &[30.0, 31.0]), ("host_clock", &[1.5, 1.4])]);
    let ours = samples(&[("a", &[10.0, 13.0]), ("host_clock", &[1.4, 1.6])]);
    let t = table(2, &llvm, &ours, None, None);
    assert!(!t.contains("host_clock"), "{t}");
    let t = per_run(&llvm, &ours);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 4, "{t}");
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>().join(" "),
        "host_clock ours 1.400 1.600 (spread 1.14) | LLVM 19 1.500 1.400"
    );
    assert!(lines[3].starts_with("(host_clock: ns per step"), "{t}");
}

#[test]
fn a_failed_check_run_marks_the_rows_it_did_not_reach() {
    let g = GccRuns {
        samples: samples(&[("a", &[5.0]), ("b", &[5.0])]),
        checks: [("a".to_string(), gpu(10))].into(),
        check_failed: Some("timeout".into()),
        ..GccRuns::default()
    };
    assert_eq!(g.cell("a"), Ok(5.0));
    assert_eq!(g.cell("b"), Err("check failed (timeout)".into()));
    let partly = GccRuns {
        checks: [(
            "a".to_string(),
            gomp::Check {
                offload: gomp::Offload::Partly {
                    launches: 3,
                    regions: 10,
                },
                first_launch: None,
            },
        )]
        .into(),
        ..g
    };
    assert_eq!(partly.cell("a"), Err("partly host (3/10)".into()));
}

#[test]
fn kernel_means_come_from_the_device_rows() {
    let rows = omptarget_cli::summary::parse(
        "construct\ttarget\tp.c:3\t10\t99000\t1\t1\t0\t0\t0\t0\n\
         device\tkernel __omp_offloading_a\tdevice 0\t4\t8000\t1\t1\t0\t0\t0\t0\n\
         device\tkernel __omp_offloading_b\tdevice 0\t1\t7000\t1\t1\t0\t0\t0\t0\n\
         device\tcopy host to device\tdevice 0\t5\t50000\t1\t1\t64\t0\t0\t0\n",
    );
    assert_eq!(kernel_mean_us(&rows), Some(3.0));
    assert_eq!(kernel_mean_us(&rows[..1]), None);
}

#[test]
fn scenario_lines_give_time_and_cpu_and_beside_lines_their_row() {
    let out = "scenario=empty median_us=9.5 min_us=9 reps=5 iters=10 cpu_us=2.5 cyc=none cpu_pct=99\n\
               scenario=old median_us=3 min_us=1 reps=5 iters=10\n\
               beside=beside_nowait4MiB alone_ms=90.5 beside_ms=93 slowdown_pct=2.76 regions_during=210 reps=5\n\
               beside=broken alone_ms=1\n";
    let (mut time, mut cpu, mut beside) = (Samples::new(), Samples::new(), BesideRuns::new());
    parse_samples(out, None, &mut time);
    parse_field(out, "scenario", "cpu_us", Some("t"), &mut cpu);
    parse_beside(out, None, &mut beside);
    assert_eq!(time, samples(&[("empty", &[9.5]), ("old", &[3.0])]));
    // A line without cpu_us (an older program) has no CPU sample.
    assert_eq!(cpu, samples(&[("empty_t", &[2.5])]));
    assert_eq!(
        beside["beside_nowait4MiB"],
        [Beside {
            alone_ms: 90.5,
            beside_ms: 93.0,
            slowdown_pct: 2.76,
            regions_during: 210.0
        }]
    );
    assert_eq!(beside.len(), 1);
}

#[test]
fn medians() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    assert!(median(&[]).is_nan());
}

#[test]
fn floor_goals_compare_the_median_and_the_spread_of_ours_runs() {
    let floor = |name: &str, us: f64| {
        (
            name.to_string(),
            crate::floor::Floor {
                name: name.into(),
                median_us: us,
                ..Default::default()
            },
        )
    };
    let floors: BTreeMap<_, _> = [
        floor("empty", 10.0),
        floor("nowait32x4MiB", 100.0),
        floor("tofrom64MiB_pageable", 2000.0),
        floor("map64B", 10.0),
    ]
    .into();
    let ours = samples(&[
        ("empty", &[10.4, 10.5, 11.0]),
        ("nowait32x4MiB", &[150.0, 190.0, 210.0]),
        ("tofrom64MiB_pageable", &[2400.0]),
        ("map64B", &[99.0]),
    ]);
    let t = floor_goals(&ours, &floors);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines,
        [
            "goal floor empty: ours/floor 1.05 (<= 1.05): met",
            "goal floor nowait32x4MiB: ours/floor 1.90 (<= 2), spread 1.40 (<= 1.3): MISSED",
            "goal floor tofrom64MiB_pageable: ours/floor 1.20 (<= 1.15): MISSED",
        ],
        "map64B has no floor goal"
    );
    // A scenario that did not run, or has no floor, has no line.
    let t = floor_goals(&samples(&[("empty", &[9.0])]), &BTreeMap::new());
    assert_eq!(t, "");
    let steady = samples(&[("nowait32x4MiB", &[150.0, 160.0, 170.0])]);
    assert_eq!(
        floor_goals(&steady, &floors),
        "goal floor nowait32x4MiB: ours/floor 1.60 (<= 2), spread 1.13 (<= 1.3): met\n"
    );
}

#[test]
fn the_beside_table_shows_the_pinned_and_the_pageable_floor() {
    let run = |p: f64| Beside {
        alone_ms: 100.0,
        beside_ms: 100.0 + p,
        slowdown_pct: p,
        regions_during: 32.0,
    };
    let mut ours = BesideRuns::new();
    ours.insert("beside_fixed4MiB".into(), vec![run(10.0)]);
    let mut llvm = BesideRuns::new();
    llvm.insert("beside_fixed4MiB".into(), vec![run(12.0)]);
    let floor = |name: &str, p: f64| crate::floor::Floor {
        name: name.into(),
        median_us: (100.0 + p) * 1e3,
        slowdown_pct: Some(p),
        ..Default::default()
    };
    let floors: BTreeMap<_, _> = [
        floor("beside_fixed4MiB", 0.5),
        floor("beside_fixed4MiB_pageable", 15.0),
    ]
    .into_iter()
    .map(|f| (f.name.clone(), f))
    .collect();
    let t = node::beside_table(1, &llvm, &ours, Some(&floors));
    let row = |label: &str| {
        t.lines()
            .map(cols)
            .find(|c| c[0] == "beside_fixed4MiB" && c[1] == label)
            .unwrap_or_else(|| panic!("no {label} row in\n{t}"))
    };
    assert_eq!(row("floor")[4], "0.50%");
    assert_eq!(row("pageable")[4], "15.00%");
    assert_eq!(row("pageable")[3], "115.000");
    assert_eq!(row("ours")[4], "10.00%");
    assert!(t.contains(
        "goal beside beside_fixed4MiB: ours 10.00% (<= 5% and <= LLVM 19's 12.00%): MISSED"
    ));
    assert!(t.contains("bound beside beside_fixed4MiB: the pageable floor (only the host copies of pageable data a runtime must make) slows the loop 15.00%, ours 10.00%"));
}
