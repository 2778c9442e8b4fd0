//! Text helpers for comparing and reporting program output: stderr normalisation, a line
//! diff in `diff`'s normal format, and cutting long output down for the summary.

/// The normalised form of a program's stderr, as compared for `STDERR` programs: every
/// hexadecimal number (`0x` and at least one hex digit) becomes `0xADDR`, and the one line
/// allowed to differ is dropped. LLVM sets an inactive primary context to blocking
/// synchronisation and says so under `LIBOMPTARGET_INFO` 0x10; we keep the driver's default
/// scheduling (about 16 us faster per synchronisation, docs/GPU.md) and say that instead.
pub fn normalise_stderr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if is_context_line(line) {
            continue;
        }
        out.push_str(&mask_hex(line));
    }
    out
}

/// `text` with the rows of each mapping table dump (`LIBOMPTARGET_INFO` 0x4: the lines after a
/// `Host Ptr  Target Ptr ...` header that start like it) sorted, for comparing two builds of
/// one program whose globals lie in another order.
pub fn sort_table_rows(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rows: Vec<&str> = Vec::new();
    let mut prefix: Option<&str> = None;
    let flush = |rows: &mut Vec<&str>, out: &mut String| {
        rows.sort_unstable();
        for r in rows.drain(..) {
            out.push_str(r);
        }
    };
    for line in text.split_inclusive('\n') {
        if let Some(p) = prefix {
            if line.starts_with(p) && line[p.len()..].starts_with("0x") {
                rows.push(line);
                continue;
            }
            flush(&mut rows, &mut out);
            prefix = None;
        }
        if let Some(at) = line.find("Host Ptr ") {
            prefix = Some(&line[..at]);
        }
        out.push_str(line);
    }
    flush(&mut rows, &mut out);
    out
}

/// `CUDA device N info: The primary context is inactive...`
fn is_context_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("CUDA device ") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].starts_with(" info: The primary context is inactive")
}

fn mask_hex(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if b[i] == b'0' && b.get(i + 1) == Some(&b'x') {
            let n = b[i + 2..]
                .iter()
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
            if n > 0 {
                out.push_str(&line[copied..i]);
                out.push_str("0xADDR");
                i += 2 + n;
                copied = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&line[copied..]);
    out
}

/// Line diff of `a` against `b` in `diff`'s normal format (`3c3`, `< old`, `---`, `> new`).
/// Empty when the texts are equal. Texts that differ only in the final newline give one line
/// saying so. Very long inputs whose middle parts differ are shown as one change.
pub fn diff(a: &str, b: &str) -> Vec<String> {
    if a == b {
        return Vec::new();
    }
    let la: Vec<&str> = a.lines().collect();
    let lb: Vec<&str> = b.lines().collect();
    if la == lb {
        return vec!["(the outputs differ only in their final newline)".into()];
    }
    let mut out = Vec::new();
    for h in hunks(&la, &lb) {
        let (a0, a1, b0, b1) = h;
        let range = |s: usize, e: usize| {
            if e - s == 1 {
                format!("{}", s + 1)
            } else {
                format!("{},{}", s + 1, e)
            }
        };
        if a0 == a1 {
            out.push(format!("{}a{}", a0, range(b0, b1)));
        } else if b0 == b1 {
            out.push(format!("{}d{}", range(a0, a1), b0));
        } else {
            out.push(format!("{}c{}", range(a0, a1), range(b0, b1)));
        }
        out.extend(la[a0..a1].iter().map(|l| format!("< {l}")));
        if a0 != a1 && b0 != b1 {
            out.push("---".into());
        }
        out.extend(lb[b0..b1].iter().map(|l| format!("> {l}")));
    }
    out
}

/// Cells of the longest-common-subsequence table above which the middle part is shown as
/// one change instead (program outputs are short; a runaway one must not cost minutes).
const MAX_CELLS: usize = 4_000_000;

/// The differing ranges `(a_start, a_end, b_start, b_end)`, in order.
fn hunks(a: &[&str], b: &[&str]) -> Vec<(usize, usize, usize, usize)> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let (n, m) = (ma.len(), mb.len());
    if n * m > MAX_CELLS || n == 0 || m == 0 {
        return vec![(pre, pre + n, pre, pre + m)];
    }
    // lcs[i][j]: longest common subsequence of ma[i..] and mb[j..].
    let w = m + 1;
    let mut lcs = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] = if ma[i] == mb[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut open: Option<(usize, usize)> = None;
    while i < n || j < m {
        if i < n && j < m && ma[i] == mb[j] {
            if let Some((si, sj)) = open.take() {
                out.push((pre + si, pre + i, pre + sj, pre + j));
            }
            i += 1;
            j += 1;
            continue;
        }
        open.get_or_insert((i, j));
        if j < m && (i == n || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j]) {
            j += 1;
        } else {
            i += 1;
        }
    }
    if let Some((si, sj)) = open {
        out.push((pre + si, pre + n, pre + sj, pre + m));
    }
    out
}

/// The first `n` characters of a line (by characters, not bytes).
pub fn cut(line: &str, n: usize) -> String {
    line.chars().take(n).collect()
}

/// The last `n` lines of a text.
pub fn tail(text: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// Words joined by spaces into lines of at most `width` characters (a longer word gets a
/// line of its own).
pub fn fold_words<'a>(words: impl IntoIterator<Item = &'a str>, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for w in words {
        if !line.is_empty() && line.len() + 1 + w.len() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_numbers_are_masked_and_the_context_line_dropped() {
        let text = "omptarget error: Pointer 0x7ffd1234 was not mapped\n\
                    CUDA device 0 info: The primary context is inactive, setting its flags\n\
                    size 0x10, 0xZZ, x0x1f0x2\n";
        assert_eq!(
            normalise_stderr(text),
            "omptarget error: Pointer 0xADDR was not mapped\n\
             size 0xADDR, 0xZZ, x0xADDRx2\n"
        );
        // Only that line, and only at the start of a line.
        let kept = "CUDA device 0 info: other\n note CUDA device 0 info: The primary context is inactive\n";
        assert_eq!(normalise_stderr(kept), kept);
        assert_eq!(normalise_stderr("0x"), "0x");
        assert_eq!(normalise_stderr("end 0xff"), "end 0xADDR");
    }

    #[test]
    fn diff_uses_the_normal_format() {
        assert!(diff("a\nb\n", "a\nb\n").is_empty());
        assert_eq!(diff("a\nb\nc\n", "a\nB\nc\n"), ["2c2", "< b", "---", "> B"]);
        assert_eq!(diff("a\nc\n", "a\nb\nc\n"), ["1a2", "> b"]);
        assert_eq!(diff("a\nb\nc\n", "a\n"), ["2,3d1", "< b", "< c"]);
        assert_eq!(diff("", "x\ny\n"), ["0a1,2", "> x", "> y"]);
        assert_eq!(
            diff("1\n2\n3\n4\n5\n", "1\nX\n3\n4\nY\nZ\n"),
            [
                "2c2", "< 2", "---", "> X", "5c5,6", "< 5", "---", "> Y", "> Z"
            ]
        );
        assert_eq!(
            diff("a\n", "a"),
            ["(the outputs differ only in their final newline)"]
        );
    }

    #[test]
    fn diff_of_huge_outputs_is_one_change() {
        let a: String = (0..3000).map(|i| format!("{i}\n")).collect();
        let b: String = (0..3000).map(|i| format!("{}\n", i * 7)).collect();
        let d = diff(&a, &b);
        assert_eq!(d[0], "2,3000c2,3000");
        assert_eq!(d.len(), 1 + 2999 + 1 + 2999);
    }

    #[test]
    fn cutting_and_folding() {
        assert_eq!(cut("äbcdef", 3), "äbc");
        assert_eq!(tail("1\n2\n3\n", 2), ["2", "3"]);
        assert_eq!(tail("1\n", 5), ["1"]);
        assert_eq!(
            fold_words(["aa", "bb", "cc", "dddddddd"], 5),
            ["aa bb", "cc", "dddddddd"]
        );
        assert!(fold_words([], 5).is_empty());
    }

    #[test]
    fn table_rows_are_compared_as_sets() {
        let a = "x\nd info: Host Ptr  Target Ptr\nd info: 0xADDR 0xADDR 32 table\nd info: 0xADDR 0xADDR 4 counter\nd info: next\n";
        let b = "x\nd info: Host Ptr  Target Ptr\nd info: 0xADDR 0xADDR 4 counter\nd info: 0xADDR 0xADDR 32 table\nd info: next\n";
        assert_ne!(a, b);
        assert_eq!(sort_table_rows(a), sort_table_rows(b));
        let c = b.replace("next", "other");
        assert_ne!(
            sort_table_rows(a),
            sort_table_rows(&c),
            "lines after the rows still count"
        );
    }
}
