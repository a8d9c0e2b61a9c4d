//! The document as YAML that YAML 1.1 readers take as the same document.

/// Quotes the plain scalars that a YAML 1.1 parser (PyYAML, SnakeYAML, which many
/// client generators use) would not read as strings: `17:00` is the sexagesimal
/// integer 1020 there, and `2026-12-07` a date. YAML 1.2 reads them the same either
/// way, so the document does not change for our own tools.
pub(super) fn quote_yaml_1_1_lookalikes(yaml: &str) -> String {
    let lookalike = |v: &str| {
        let b = v.as_bytes();
        let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
        (b.len() == 5 && b[2] == b':' && digits(0..2) && digits(3..5))
            || (b.len() == 10
                && b[4] == b'-'
                && b[7] == b'-'
                && digits(0..4)
                && digits(5..7)
                && digits(8..10))
    };
    let mut out = String::with_capacity(yaml.len() + 64);
    for line in yaml.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        match body.rsplit_once(": ") {
            Some((key, value)) if lookalike(value) => {
                out.push_str(&format!("{key}: '{value}'"));
                out.push_str(&line[body.len()..]);
            }
            _ => out.push_str(line),
        }
    }
    out
}
