//! The environment variables that change what the runtime does: those of
//! docs/CONFIGURATION.md's tables (read from the page itself, so the doctor says what the
//! documentation says), and any `LIBOMPTARGET_*` / `OMPTARGET_*` variable it does not know
//! (LLVM's own, or a misspelling).

/// docs/CONFIGURATION.md, whose tables are the reference.
const CONFIGURATION: &str = include_str!("../../../../docs/CONFIGURATION.md");

/// One variable the doctor knows: its name and what it does (the table's meaning, first
/// sentence).
pub fn known() -> Vec<(String, String)> {
    table(CONFIGURATION)
}

/// The rows of docs/CONFIGURATION.md's tables: `| `NAME`[, `NAME`] | default | meaning |`.
pub fn table(readme: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in readme.lines() {
        let cells: Vec<&str> = line.split(" | ").collect();
        if !line.starts_with("| `") || cells.len() < 3 {
            continue;
        }
        let names = cells[0].trim_start_matches('|');
        let default = cells[1].trim();
        let meaning = cells[2..].join(" | ");
        let meaning = first_sentence(meaning.trim_end_matches('|').trim());
        for name in names.split(',') {
            let name = name.trim().trim_matches('`');
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                out.push((
                    name.to_owned(),
                    format!("{meaning} (default {default})").replace('`', ""),
                ));
            }
        }
    }
    out
}

/// The first sentences, up to 80 characters or more (at most 240).
fn first_sentence(text: &str) -> String {
    let mut end = 0;
    while end < text.len() && end < 80 {
        end = text[end..].find(". ").map_or(text.len(), |i| end + i + 1);
    }
    let s = text[..end].trim();
    if s.chars().count() > 240 {
        let cut: String = s.chars().take(237).collect();
        format!("{cut}...")
    } else {
        s.to_owned()
    }
}

/// What a variable set in the environment means for the doctor's report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setting {
    /// Known: name, value, meaning.
    Known(String, String, String),
    /// A `LIBOMPTARGET_*` / `OMPTARGET_*` name the runtime does not read.
    Unknown(String, String),
}

/// The settings among `vars`, sorted by name.
pub fn settings(vars: impl IntoIterator<Item = (String, String)>) -> Vec<Setting> {
    let known = known();
    let mut out: Vec<Setting> = vars
        .into_iter()
        .filter_map(|(name, value)| {
            if let Some((_, meaning)) = known.iter().find(|(n, _)| *n == name) {
                Some(Setting::Known(name, value, meaning.clone()))
            } else if name.starts_with("LIBOMPTARGET_") || name.starts_with("OMPTARGET_") {
                Some(Setting::Unknown(name, value))
            } else {
                None
            }
        })
        .collect();
    out.sort_by(|a, b| key(a).cmp(key(b)));
    out
}

fn key(s: &Setting) -> &str {
    match s {
        Setting::Known(n, ..) | Setting::Unknown(n, _) => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_tables_give_every_variable_the_runtime_reads() {
        let names: Vec<String> = known().into_iter().map(|(n, _)| n).collect();
        for n in [
            "OMP_TARGET_OFFLOAD",
            "LIBOMPTARGET_INFO",
            "LIBOMPTARGET_STACK_SIZE",
            "LIBOMPTARGET_HEAP_SIZE",
            "OMPTARGET_DISABLE_HOST_PLUGIN",
            "OMPTARGET_RS_DISABLE_CUDA_PLUGIN",
            "OMPTARGET_RS_CUDA_POOL_RELEASE_THRESHOLD",
        ] {
            assert!(names.iter().any(|k| k == n), "{n} missing");
        }
        // The runtime's configuration reads only variables the doctor can explain.
        let config = include_str!("../../../core/src/config.rs");
        for quoted in config.split('"').skip(1).step_by(2) {
            if quoted.len() > 4
                && quoted.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                && (quoted.starts_with("LIBOMPTARGET_")
                    || quoted.starts_with("OMPTARGET_")
                    || quoted.starts_with("OMP_"))
            {
                assert!(
                    names.iter().any(|k| k == quoted),
                    "{quoted} (read in config.rs) is not explained"
                );
            }
        }
    }

    #[test]
    fn settings_explain_known_names_and_flag_unknown_ones() {
        let s = settings([
            ("PATH".to_string(), "/bin".to_string()),
            ("LIBOMPTARGET_INFO".to_string(), "4".to_string()),
            ("LIBOMPTARGET_KERNEL_TRACE".to_string(), "1".to_string()),
        ]);
        assert_eq!(s.len(), 2);
        assert!(
            matches!(&s[0], Setting::Known(n, v, m) if n == "LIBOMPTARGET_INFO" && v == "4" && m.starts_with("bit mask"))
        );
        assert!(matches!(&s[1], Setting::Unknown(n, _) if n == "LIBOMPTARGET_KERNEL_TRACE"));
    }
}
