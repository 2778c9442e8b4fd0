//! The sanitize mode's tables and logs: per tool and suite, the counts under both runtimes,
//! the rows that are not ok with their first report lines, results.tsv and sanitize.log.

use super::findings::{Counts, Outcome, RowVerdict, row_verdict};
use super::{Item, jobs};
use crate::run::Ctx;
use crate::run::manifest::{Program, Suite};

/// Per (tool, suite): the counts under both runtimes and the rows' verdicts.
struct Group<'s> {
    tool: &'static str,
    suite: &'s Suite,
    ours: Counts,
    oracle: Counts,
    rows: Vec<(&'s Program, RowVerdict, usize)>,
}

/// The tables, the results.tsv rows and sanitize.log of a finished queue (`items[k]` ran
/// under ours, `items[k + 1]` under the oracle; `outcomes` in the same order).
pub fn report(ctx: &Ctx, items: &[Item], outcomes: &[Outcome], started: std::time::Instant) {
    let passed = ctx.deadline.passed();
    let mut groups: Vec<Group> = Vec::new();
    let mut tsv = String::from("# sanitize\n# tool\tname\tverdict\tours\tllvm\n");
    let mut log = String::new();
    for k in (0..items.len()).step_by(2) {
        let it = &items[k];
        let (ours, oracle) = (&outcomes[k], &outcomes[k + 1]);
        let v = row_verdict(
            ours,
            oracle,
            passed,
            it.program.divergence || it.program.uncompared,
        );
        let name = if it.suite.label.is_empty() {
            it.program.name.clone()
        } else {
            format!("{}/{}", it.suite.label, it.program.name)
        };
        tsv.push_str(&format!(
            "{}\t{name}\t{v}\t{}\t{}\n",
            it.tool,
            ours.describe(),
            oracle.describe()
        ));
        log.push_str(&format!(
            "=================== {} {name}: {v}  (ours {}; llvm {})\n",
            it.tool,
            ours.describe(),
            oracle.describe()
        ));
        if !matches!(v, RowVerdict::Ok | RowVerdict::Skip(_)) {
            for (label, o) in [("ours", ours), ("llvm", oracle)] {
                log.push_str(&format!("--- {label} (loaded: {}):\n", o.loaded));
                log.push_str(&capped(&o.output, 150));
            }
        }
        let at = match groups
            .iter()
            .position(|g| g.tool == it.tool && std::ptr::eq(g.suite, it.suite))
        {
            Some(i) => i,
            None => {
                groups.push(Group {
                    tool: it.tool,
                    suite: it.suite,
                    ours: Counts::default(),
                    oracle: Counts::default(),
                    rows: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[at];
        g.ours.add(&ours.finding);
        g.oracle.add(&oracle.finding);
        g.rows.push((it.program, v, k));
    }
    ctx.append("results.tsv", &tsv);
    ctx.append("sanitize.log", &log);

    let several = ctx.suites.len() > 1;
    let group_name = |g: &Group| {
        if g.suite.label.is_empty() {
            g.tool.to_owned()
        } else {
            format!("{}/{}", g.tool, g.suite.label)
        }
    };
    // Rows not ok first (short), then the table and the totals: the tail is what comes back.
    let mut budget: usize = 3500;
    for g in &groups {
        for (p, v, k) in &g.rows {
            if !matches!(v, RowVerdict::Fail(_) | RowVerdict::OursBetter(_)) {
                continue;
            }
            let mut chunk = vec![format!("-- {} {}: {v}", group_name(g), p.name)];
            for (label, o) in [("ours", &outcomes[*k]), ("llvm", &outcomes[*k + 1])] {
                chunk.extend(o.first_errors.iter().map(|l| format!("      {label}| {l}")));
            }
            let chunk = chunk.join("\n");
            if chunk.len() < budget {
                budget -= chunk.len();
                ctx.say(chunk);
            } else {
                ctx.say(format!(
                    "-- {} {}: {v} (details in sanitize.log)",
                    group_name(g),
                    p.name
                ));
            }
        }
    }
    let mut disabled: Vec<(String, Vec<&str>)> = Vec::new();
    for g in &groups {
        for (p, v, _) in &g.rows {
            if *v == RowVerdict::Disabled {
                match disabled.iter_mut().find(|(n, _)| *n == p.name) {
                    Some((_, tools)) => tools.push(g.tool),
                    None => disabled.push((p.name.clone(), vec![g.tool])),
                }
            }
        }
    }
    if !disabled.is_empty() {
        ctx.say(format!(
            "sanitizer disabled itself under both runtimes (CUDA initialised before it, in a library constructor; not checked): {}",
            disabled
                .iter()
                .map(|(n, t)| format!("{n} ({})", t.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    let oracle_label = if several {
        "oracle".to_owned()
    } else {
        ctx.main_suite().oracle.label.clone()
    };
    ctx.say(
        "== sanitize table: programs clean / with errors / sanitizer disabled / no result (timeout, crash) / skipped",
    );
    ctx.say(format!(
        "{:<18}{:-^35} {:-^35}  {:^9}",
        "",
        " ours ",
        format!(" {oracle_label} "),
        "rows"
    ));
    ctx.say(format!(
        "{:<18} {:>6} {:>6} {:>8} {:>5} {:>5}  {:>6} {:>6} {:>8} {:>5} {:>5}  {:>4} {:>4}",
        "tool",
        "clean",
        "errors",
        "disabled",
        "none",
        "skip",
        "clean",
        "errors",
        "disabled",
        "none",
        "skip",
        "FAIL",
        "of"
    ));
    let mut failed = false;
    let mut unfinished = Vec::new();
    for g in &groups {
        let fails = g.rows.iter().filter(|(_, v, _)| v.is_fail()).count();
        let (o, l) = (g.ours, g.oracle);
        ctx.say(format!(
            "{:<18} {:>6} {:>6} {:>8} {:>5} {:>5}  {:>6} {:>6} {:>8} {:>5} {:>5}  {:>4} {:>4}",
            group_name(g),
            o.clean,
            o.errors,
            o.disabled,
            o.none,
            o.skipped,
            l.clean,
            l.errors,
            l.disabled,
            l.none,
            l.skipped,
            fails,
            g.rows.len()
        ));
        ctx.total(format!(
            "sanitize {} (ours vs {}): ours {} clean, {} with errors, {} disabled; {} {} clean, {} with errors, {} disabled; {fails} FAIL, {} skipped, of {}",
            group_name(g),
            g.suite.oracle.label,
            o.clean, o.errors, o.disabled,
            g.suite.oracle.label,
            l.clean, l.errors, l.disabled,
            g.rows.iter().filter(|(_, v, _)| matches!(v, RowVerdict::Skip(_))).count(),
            g.rows.len()
        ));
        failed |= fails > 0;
        let late = g
            .rows
            .iter()
            .filter(|(_, v, _)| *v == RowVerdict::Skip("time".into()))
            .count();
        if late > 0 && !unfinished.contains(&g.tool) {
            unfinished.push(g.tool);
        }
    }
    // Measured cost, for budgeting the next call: seconds of runs per tool (both runtimes),
    // the slowest run, and the wall time of the whole mode.
    let mut cost = Vec::new();
    for g in &groups {
        let walls = g
            .rows
            .iter()
            .flat_map(|(p, _, k)| [(&outcomes[*k], p), (&outcomes[*k + 1], p)]);
        let total: f64 = walls.clone().map(|(o, _)| o.wall.as_secs_f64()).sum();
        let slowest = walls.max_by(|a, b| a.0.wall.cmp(&b.0.wall));
        cost.push(format!(
            "{} {total:.0} s{}",
            group_name(g),
            slowest.map_or(String::new(), |(o, p)| format!(
                " (slowest {} {:.1} s)",
                p.name,
                o.wall.as_secs_f64()
            ))
        ));
    }
    ctx.say(format!(
        "sanitize run time (sum over runs, {} at once; wall {:.0} s): {}",
        jobs(ctx),
        started.elapsed().as_secs_f64(),
        cost.join(", ")
    ));
    if failed {
        ctx.fail();
    }
    if !unfinished.is_empty() {
        ctx.incomplete();
        ctx.say(format!(
            "sanitize: not finished inside the budget: {}; run them in another call with SAN_TOOLS={}",
            unfinished.join(", "),
            unfinished.join(",")
        ));
    }
}

/// At most `n` lines of a run's output for sanitize.log.
fn capped(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut s: String = lines.iter().take(n).map(|l| format!("  | {l}\n")).collect();
    if lines.len() > n {
        s.push_str(&format!(
            "  | ... ({} more lines in runs.tar.gz)\n",
            lines.len() - n
        ));
    }
    s
}
