//! Telling Markdown from TracWiki.
//!
//! Markdown-only constructs are found by parsing the text with pulldown-cmark
//! and looking at the source of what it recognised (ATX `#` headings, fenced
//! code, `[text](url)` links, images, pipe tables, `_`/`*` emphasis, lists at
//! column 0). TracWiki-only constructs are found line by line (`= h =`
//! headings, `{{{ }}}`, `'''`/`''`, `[[Macro]]`, `[url label]`, `||` rows,
//! indented ` * ` lists). The side with the higher weighted score wins; a text
//! with neither is [`WikiFormat::Plain`].

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag};

use super::{FormatDetection, WikiFormat, line_of};

/// At most this many occurrences of one construct count towards a score.
const MAX_PER_CONSTRUCT: u32 = 3;

#[derive(Default)]
struct Tally {
    score: u32,
    /// (construct, weight, count, first line)
    seen: Vec<(&'static str, u32, u32, usize)>,
}

impl Tally {
    fn add(&mut self, construct: &'static str, weight: u32, line: usize) {
        match self.seen.iter_mut().find(|s| s.0 == construct) {
            Some(entry) => {
                if entry.2 < MAX_PER_CONSTRUCT {
                    self.score += weight;
                }
                entry.2 += 1;
            }
            None => {
                self.score += weight;
                self.seen.push((construct, weight, 1, line));
            }
        }
    }

    fn evidence<'a>(&'a self, side: &'a str) -> impl Iterator<Item = String> + 'a {
        self.seen.iter().map(move |(construct, _, count, line)| {
            let times = if *count > 1 {
                format!(", {count} times")
            } else {
                String::new()
            };
            format!("{side}: {construct} (line {line}{times})")
        })
    }
}

/// Guesses whether `text` is Markdown, TracWiki, or plain text.
pub fn detect_format(text: &str) -> FormatDetection {
    let markdown = markdown_signals(text);
    let tracwiki = tracwiki_signals(text);
    let format = match (markdown.score, tracwiki.score) {
        (0, 0) => WikiFormat::Plain,
        (md, tw) if md > tw => WikiFormat::Markdown,
        _ => WikiFormat::TracWiki,
    };
    FormatDetection {
        format,
        markdown_score: markdown.score,
        tracwiki_score: tracwiki.score,
        evidence: markdown
            .evidence("markdown")
            .chain(tracwiki.evidence("tracwiki"))
            .collect(),
    }
}

fn markdown_signals(text: &str) -> Tally {
    let mut t = Tally::default();
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        let line = line_of(text, range.start);
        let source = text.get(range.clone()).unwrap_or("");
        match event {
            Event::Start(Tag::Heading { .. }) if source.starts_with('#') => {
                t.add("ATX heading", 3, line)
            }
            Event::Start(Tag::Heading { .. }) => t.add("setext heading", 2, line),
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => {
                t.add("fenced code block", 3, line)
            }
            Event::Start(Tag::Link { link_type, .. }) => match link_type {
                LinkType::Inline => t.add("[text](url) link", 3, line),
                LinkType::Reference | LinkType::Collapsed | LinkType::Shortcut => {
                    t.add("reference link", 2, line)
                }
                LinkType::Autolink | LinkType::Email => t.add("<url> autolink", 2, line),
                _ => {}
            },
            Event::Start(Tag::Image { .. }) => t.add("image", 3, line),
            Event::Start(Tag::Table(_)) => t.add("pipe table", 3, line),
            Event::Start(Tag::Emphasis) if source.starts_with('*') || source.starts_with('_') => {
                t.add("*emphasis*", 1, line)
            }
            Event::Start(Tag::Strong) if source.starts_with("__") => t.add("__strong__", 1, line),
            Event::Start(Tag::List(_)) if !source.starts_with(char::is_whitespace) => {
                t.add("list at column 0", 1, line)
            }
            Event::TaskListMarker(_) => t.add("task list item", 2, line),
            _ => {}
        }
    }
    t
}

fn tracwiki_signals(text: &str) -> Tally {
    let mut t = Tally::default();
    let mut in_fence = false;
    for (k, raw) in text.lines().enumerate() {
        let line = k + 1;
        let trimmed = raw.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if is_trac_heading(trimmed) {
            t.add("= heading =", 3, line);
        }
        if trimmed == "{{{" || trimmed.starts_with("{{{#!") {
            t.add("{{{ block }}}", 3, line);
        } else if trimmed.contains("{{{") && trimmed.contains("}}}") {
            t.add("{{{inline}}}", 2, line);
        }
        if trimmed.starts_with("||") && trimmed.ends_with("||") {
            t.add("|| table row", 3, line);
        }
        if raw.starts_with(' ') && is_list_item(trimmed) {
            t.add("indented list item", 1, line);
        }
        if has_quote_pair(trimmed, "'''") {
            t.add("'''bold'''", 2, line);
        } else if has_quote_pair(trimmed, "''") {
            t.add("''italic''", 2, line);
        }
        if trimmed.contains("[[") && trimmed.contains("]]") {
            t.add("[[Macro]]", 3, line);
        }
        if has_bracket_link(trimmed) {
            t.add("[target label] link", 3, line);
        }
        if [
            "wiki:",
            "ticket:",
            "milestone:",
            "source:",
            "changeset:",
            "report:",
        ]
        .iter()
        .any(|ns| trimmed.contains(ns))
        {
            t.add("TracLink", 1, line);
        }
    }
    t
}

fn is_trac_heading(line: &str) -> bool {
    let eq = line.chars().take_while(|c| *c == '=').count();
    if !(1..=6).contains(&eq) || !line[eq..].starts_with(' ') {
        return false;
    }
    // `== Title ==` or `== Title == #anchor`
    let body = line
        .rsplit_once(" #")
        .filter(|(_, a)| !a.contains(' '))
        .map_or(line, |(b, _)| b.trim_end());
    body.len() > eq * 2 && body.ends_with(&"=".repeat(eq))
}

fn is_list_item(trimmed: &str) -> bool {
    trimmed.starts_with("* ")
        || trimmed.starts_with("- ")
        || trimmed
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// `''x''` / `'''x'''` with something between the markers.
fn has_quote_pair(line: &str, marker: &str) -> bool {
    line.split_once(marker)
        .and_then(|(_, rest)| rest.split_once(marker))
        .is_some_and(|(inner, _)| !inner.is_empty() && !inner.starts_with('\''))
}

/// `[http://x label]`, `[wiki:Page label]`, `[#anchor label]`: a bracket
/// with a target and a label that is not followed by `(` (Markdown).
fn has_bracket_link(line: &str) -> bool {
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            return false;
        };
        let inner = &after[..close];
        let followed_by_paren = after[close + 1..].starts_with('(');
        let target = inner.split_whitespace().next().unwrap_or("");
        let targetish = target.contains("://")
            || target.starts_with('#') && target.len() > 1
            || target.split_once(':').is_some_and(|(ns, t)| {
                !ns.is_empty() && ns.chars().all(|c| c.is_ascii_alphabetic()) && !t.is_empty()
            });
        if targetish && !followed_by_paren && !inner.starts_with('[') {
            return true;
        }
        rest = &after[close + 1..];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_detected_with_evidence() {
        let d = detect_format(
            "# Title\n\nSee [docs](https://x.org).\n\n```rust\nfn main() {}\n```\n\n- a\n- b\n",
        );
        assert_eq!(d.format, WikiFormat::Markdown, "{d:?}");
        assert_eq!(d.tracwiki_score, 0, "{d:?}");
        assert!(
            d.evidence
                .iter()
                .any(|e| e == "markdown: ATX heading (line 1)"),
            "{d:?}"
        );
    }

    #[test]
    fn tracwiki_is_detected() {
        let d = detect_format(
            "= Title =\n\n'''bold''' text, see [wiki:Other the page].\n\n{{{\ncode\n}}}\n\n * item\n||a||b||\n",
        );
        assert_eq!(d.format, WikiFormat::TracWiki, "{d:?}");
        assert!(d.tracwiki_score > d.markdown_score, "{d:?}");
        assert!(
            d.evidence
                .iter()
                .any(|e| e.starts_with("tracwiki: = heading = (line 1)")),
            "{d:?}"
        );
    }

    #[test]
    fn plain_text_is_plain() {
        let d = detect_format("Just a sentence.\nAnother one.\n");
        assert_eq!(
            (d.format, d.markdown_score, d.tracwiki_score),
            (WikiFormat::Plain, 0, 0)
        );
        assert!(d.evidence.is_empty());
        assert_eq!(detect_format("").format, WikiFormat::Plain);
    }

    #[test]
    fn code_fences_hide_their_content() {
        let d = detect_format("```\n= not a heading =\n'''x'''\n```\n");
        assert_eq!(d.format, WikiFormat::Markdown, "{d:?}");
        assert_eq!(d.tracwiki_score, 0);
    }

    #[test]
    fn trac_headings() {
        assert!(is_trac_heading("== Sub =="));
        assert!(is_trac_heading("= T = #anchor"));
        assert!(!is_trac_heading("=not="));
        assert!(!is_trac_heading("= only opening"));
    }
}
