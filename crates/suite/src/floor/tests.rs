#[test]
fn ptx_declares_every_kernel_once() {
    let p = super::ptx();
    for k in ["empty", "fill", "touch1", "touch16", "copyk", "spin"] {
        assert_eq!(p.matches(&format!(".entry {k}(")).count(), 1, "{k}");
    }
    assert!(p.ends_with('\0'));
    assert_eq!(p.matches("ld.param.u64 r, [p15]").count(), 1);
}

/// Every scenario of bench/gpu_scenarios.c has a floor of the same name doing as many
/// iterations of as many regions (so `--floor` fills every row of the curve, 16 to 128
/// threads included). The `host_` probes (not in `all`, no offload) have none.
#[test]
fn every_gpu_scenario_has_its_floor() {
    let c = include_str!("../../../../bench/gpu_scenarios.c");
    let floor = include_str!("scenarios.rs");
    let rows: Vec<(&str, &str, &str)> = c
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix("{\"")?.strip_suffix("},")?;
            let (name, rest) = l.split_once('"')?;
            if crate::bench::is_host_probe(name) {
                return None;
            }
            let f: Vec<&str> = rest.split(',').map(str::trim).collect();
            (f.len() == 4).then(|| (name, f[2], f[3]))
        })
        .collect();
    assert!(rows.len() >= 13, "{} scenarios read", rows.len());
    for t in ["16", "32", "64", "128"] {
        let name = format!("threads{t}_map64B");
        assert!(rows.iter().any(|r| r.0 == name), "{name}");
    }
    for (name, iters, per) in rows {
        let want =
            format!("name: \"{name}\",\n            iters: {iters},\n            per: {per},");
        assert!(
            floor.contains(&want),
            "no floor for {name} ({iters} x {per})"
        );
    }
}

#[test]
fn selection_and_cpu_floors() {
    use super::{Floor, cpu_floor, selected, with_cpu_floors};
    assert!(selected("all", "kernel1s"));
    assert!(selected("host_clock,all", "empty_blocking_sync"));
    assert!(!selected("all", "beside_nowait4MiB"));
    assert!(selected("map64B,beside_nowait4MiB", "beside_nowait4MiB"));
    assert!(!selected("all", "beside_fixed4MiB"));
    assert!(!selected("beside_nowait4MiB", "beside_fixed4MiB"));
    assert!(!selected("map64B", "map64B_blocking_sync"));
    assert_eq!(
        with_cpu_floors("host_clock,map64B,all"),
        "host_clock,map64B,all,host_clock_blocking_sync,map64B_blocking_sync"
    );
    let f = |name: &str, cpu: f64| {
        (
            name.to_string(),
            Floor {
                name: name.into(),
                cpu_us: Some(cpu),
                ..Floor::default()
            },
        )
    };
    let floors = [
        f("empty", 9.0),
        f("empty_blocking_sync", 3.0),
        f("kernel1s", 40.0),
        f("map64B", 20.0),
    ]
    .into();
    // The blocking-sync floor's CPU time, or the floor's own where it blocks (kernel1s);
    // a floor that spins in cuStreamSynchronize is no CPU floor.
    assert_eq!(cpu_floor(&floors, "empty"), Some(3.0));
    assert_eq!(cpu_floor(&floors, "kernel1s"), Some(40.0));
    assert_eq!(cpu_floor(&floors, "map64B"), None);
}

#[test]
fn without_a_driver_it_says_so() {
    // On machines without libcuda (CI) this is the error; with a GPU it measures.
    // SAFETY: only probes for the library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        let e = super::run("empty", 1, 1, false, false).unwrap_err();
        assert!(e.contains("no CUDA driver"), "{e}");
    }
}
