//! The summary table of a run: the rows the runtime writes at exit
//! (`OMPTARGET_RS_PROFILE_SUMMARY`, tab-separated) and the tables `omptarget run --summary`
//! prints from them, in the layout of `nsys stats`.

use std::fmt::Write as _;

/// One row of the runtime's summary file (`OMPTARGET_RS_PROFILE_SUMMARY`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub section: String,
    pub name: String,
    pub location: String,
    pub count: u64,
    pub total_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub to_device: u64,
    pub from_device: u64,
    pub allocs: u64,
    pub alloc_bytes: u64,
}

/// The rows of a summary file; comment lines and lines that are not rows are skipped.
pub fn parse(text: &str) -> Vec<Row> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            if f.len() != 11 {
                return None;
            }
            let n = |i: usize| f[i].parse::<u64>().ok();
            Some(Row {
                section: f[0].into(),
                name: f[1].into(),
                location: f[2].into(),
                count: n(3)?,
                total_ns: n(4)?,
                min_ns: n(5)?,
                max_ns: n(6)?,
                to_device: n(7)?,
                from_device: n(8)?,
                allocs: n(9)?,
                alloc_bytes: n(10)?,
            })
        })
        .collect()
}

/// 1234567 → "1,234,567".
fn grouped(v: u64) -> String {
    let s = v.to_string();
    let mut o = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            o.push(',');
        }
        o.push(c);
    }
    o
}

/// The tables `--summary` prints (the layout of `nsys stats` reports: share of the time,
/// totals and averages in nanoseconds, then what the rows name).
pub fn tables(rows: &[Row]) -> String {
    let mut out = String::new();
    for (section, title, what) in [
        (
            "construct",
            "OpenMP offload constructs and omp_target_* routines (host time, omptarget-rs)",
            "Construct",
        ),
        (
            "device",
            "Device operations (device time: CUDA events on a GPU, the host clock on the host device)",
            "Operation",
        ),
    ] {
        let rs: Vec<&Row> = rows.iter().filter(|r| r.section == section).collect();
        let _ = writeln!(out, "\n ** {title}:\n");
        if rs.is_empty() {
            let _ = writeln!(out, " (none)");
            continue;
        }
        let total: u64 = rs.iter().map(|r| r.total_ns).sum::<u64>().max(1);
        let header = [
            "Time (%)",
            "Total Time (ns)",
            "Count",
            "Avg (ns)",
            "Min (ns)",
            "Max (ns)",
            "To Device (B)",
            "From Device (B)",
            "Allocs",
        ];
        let mut table: Vec<Vec<String>> = Vec::new();
        for r in &rs {
            table.push(vec![
                format!("{:.1}", r.total_ns as f64 * 100.0 / total as f64),
                grouped(r.total_ns),
                grouped(r.count),
                grouped(r.total_ns / r.count.max(1)),
                grouped(r.min_ns),
                grouped(r.max_ns),
                grouped(r.to_device),
                grouped(r.from_device),
                grouped(r.allocs),
            ]);
        }
        let widths: Vec<usize> = (0..header.len())
            .map(|i| {
                table
                    .iter()
                    .map(|row| row[i].len())
                    .chain([header[i].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String], tail: &str| {
            let mut l = String::from(" ");
            for (c, w) in cells.iter().zip(&widths) {
                let _ = write!(l, "{c:>w$}  ");
            }
            l.push_str(tail);
            l
        };
        let head: Vec<String> = header.iter().map(|s| s.to_string()).collect();
        let _ = writeln!(out, "{}", line(&head, &format!("{what}  Location")));
        let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        let _ = writeln!(
            out,
            "{}",
            line(&dashes, &format!("{}  --------", "-".repeat(what.len())))
        );
        for (r, cells) in rs.iter().zip(&table) {
            let _ = writeln!(
                out,
                "{}",
                line(cells, &format!("{}  {}", r.name, r.location))
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_rows_and_table() {
        let text = "# header\nconstruct\ttarget\tp.c:8\t2\t3000\t1000\t2000\t64\t32\t1\t64\nconstruct\ttarget update\tp.c:10\t1\t1000\t1000\t1000\t0\t8\t0\t0\ndevice\tkernel k\tdevice 0\t2\t1500000\t500000\t1000000\t0\t0\t0\t0\nbad\trow\n";
        let rows = parse(text);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].name, "target");
        assert_eq!(rows[2].total_ns, 1_500_000);
        let t = tables(&rows);
        assert!(t.contains(" ** OpenMP offload constructs"), "{t}");
        assert!(
            t.contains("Time (%)  Total Time (ns)  Count  Avg (ns)"),
            "{t}"
        );
        // 3000 of 4000 ns: 75%; the average of two is 1,500.
        let line = t.lines().find(|l| l.ends_with("target  p.c:8")).unwrap();
        assert!(line.trim_start().starts_with("75.0"), "{line}");
        assert!(line.contains("1,500"), "{line}");
        assert!(
            t.lines()
                .any(|l| l.ends_with("kernel k  device 0") && l.contains("1,500,000"))
        );
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(12), "12");
    }
}
