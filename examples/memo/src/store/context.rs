//! Renders memos into one markdown document that never exceeds a byte budget.

use std::fmt::Write as _;

use crate::model::{Memo, MemoContext};

/// Bytes kept free for the truncation note at the end.
const FOOTER_RESERVE: usize = 256;

/// Accumulates memo sections until the budget is spent.
pub(crate) struct ContextWriter {
    markdown: String,
    max_bytes: usize,
    total: u64,
    included: u64,
    truncated: bool,
}

impl ContextWriter {
    /// Starts a document for a store holding `total` memos, bounded to `max_bytes`.
    pub(crate) fn new(total: u64, max_bytes: u32) -> Self {
        let mut markdown = String::from("# Memos\n\n");
        match total {
            0 => markdown.push_str("No memos yet.\n"),
            1 => markdown.push_str("1 memo.\n\n"),
            n => {
                let _ = write!(markdown, "{n} memos, newest first.\n\n");
            }
        }
        ContextWriter {
            markdown,
            max_bytes: max_bytes as usize,
            total,
            included: 0,
            truncated: false,
        }
    }

    /// Adds one memo; returns `false` once the budget is spent and no more memos fit.
    pub(crate) fn push(&mut self, memo: &Memo) -> bool {
        let head = format!(
            "## {}\n\n- id: `{}`\n- created: {}\n- updated: {}\n\n",
            memo.title,
            memo.id,
            memo.created_at
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            memo.updated_at
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        );
        let body = memo.content.trim_end();
        const TAIL: &str = "\n\n---\n\n";
        let room = self
            .max_bytes
            .saturating_sub(self.markdown.len() + FOOTER_RESERVE);
        let full = head.len() + body.len() + TAIL.len();
        if full <= room {
            self.markdown.push_str(&head);
            self.markdown.push_str(body);
            self.markdown.push_str(TAIL);
            self.included += 1;
            return true;
        }
        self.truncated = true;
        // A memo too large for an empty document is shown cut, so the result is never empty.
        const CUT: &str = "\n\n[… rest of this memo cut to fit the size bound]";
        if self.included == 0 && head.len() + CUT.len() + TAIL.len() < room {
            let keep = floor_char_boundary(body, room - head.len() - CUT.len() - TAIL.len());
            self.markdown.push_str(&head);
            self.markdown.push_str(&body[..keep]);
            self.markdown.push_str(CUT);
            self.markdown.push_str(TAIL);
            self.included += 1;
        }
        false
    }

    /// Finishes the document, adding a note when memos were left out or cut.
    pub(crate) fn finish(mut self) -> MemoContext {
        if self.truncated {
            let _ = writeln!(
                self.markdown,
                "_Truncated to {} bytes: {} of {} memos shown. Use memo_search or memo_get \
                 to read the others._",
                self.max_bytes, self.included, self.total
            );
        }
        MemoContext {
            markdown: self.markdown,
            included: self.included,
            total: self.total,
            truncated: self.truncated,
            max_bytes: self.max_bytes as u32,
        }
    }
}

/// The largest index `<= at` that falls on a character boundary of `s`.
pub(crate) fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    let mut i = at;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn memo(title: &str, content: &str) -> Memo {
        let t = Utc.timestamp_millis_opt(1_700_000_000_000).unwrap();
        Memo {
            id: "01ARZ3NDEKTSV4RRFFQ69G5FAV".into(),
            title: title.into(),
            content: content.into(),
            created_at: t,
            updated_at: t,
            created_by: None,
        }
    }

    #[test]
    fn small_documents_are_complete() {
        let mut w = ContextWriter::new(2, 4096);
        assert!(w.push(&memo("First", "alpha")));
        assert!(w.push(&memo("Second", "beta")));
        let ctx = w.finish();
        assert!(!ctx.truncated);
        assert_eq!(ctx.included, 2);
        assert!(ctx.markdown.contains("## First\n"));
        assert!(ctx.markdown.contains("beta"));
        assert!(ctx.markdown.find("First") < ctx.markdown.find("Second"));
    }

    #[test]
    fn budget_is_never_exceeded_even_with_multibyte_text() {
        for max in [1024u32, 1500, 2000, 5000] {
            let mut w = ContextWriter::new(3, max);
            let big = "é€🦀".repeat(400);
            let mut n = 0;
            while n < 3 && w.push(&memo("Big", &big)) {
                n += 1;
            }
            let ctx = w.finish();
            assert!(
                ctx.markdown.len() <= max as usize,
                "{max}: {}",
                ctx.markdown.len()
            );
            assert!(ctx.truncated);
            assert!(
                ctx.included >= 1,
                "the first memo is shown cut, not dropped"
            );
            assert!(ctx.markdown.contains("Truncated to"));
        }
    }

    #[test]
    fn empty_store_says_so() {
        let ctx = ContextWriter::new(0, 1024).finish();
        assert!(ctx.markdown.contains("No memos yet."));
        assert!(!ctx.truncated);
    }

    #[test]
    fn char_boundaries() {
        assert_eq!(floor_char_boundary("aé", 2), 1);
        assert_eq!(floor_char_boundary("aé", 3), 3);
        assert_eq!(floor_char_boundary("aé", 99), 3);
    }
}
