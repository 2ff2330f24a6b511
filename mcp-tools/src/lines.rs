//! The one reader of line-based files — permissions files (one permission per line) and
//! tokens files (`token permission…` per line): words separated by whitespace, `#` starts
//! a comment, blank and comment-only lines are skipped.

/// The meaningful lines of `text`: each with its 1-based number, the raw line (for
/// messages) and its words before any `#`.
pub(crate) fn entries(text: &str) -> impl Iterator<Item = (usize, &str, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(index, raw)| {
        let content = raw.split('#').next().unwrap_or("");
        let words: Vec<&str> = content.split_whitespace().collect();
        (!words.is_empty()).then_some((index + 1, raw, words))
    })
}

/// A permission name: ASCII letters, digits, `_`, `-`, `.` and `:`.
pub(crate) fn is_permission_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_blanks_and_words() {
        let text = "# header\n\nA B  # trailing\n   \nC#x\n";
        let lines: Vec<_> = entries(text).collect();
        assert_eq!(
            lines,
            [
                (3, "A B  # trailing", vec!["A", "B"]),
                (5, "C#x", vec!["C"])
            ]
        );
        assert!(is_permission_name("TICKET_VIEW:own.v-2"));
        assert!(!is_permission_name("WIKI VIEW") && !is_permission_name(""));
    }
}
