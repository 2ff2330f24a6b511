//! Making plain text safe to put into TracWiki markup.
//!
//! Trac turns many innocent-looking character sequences into markup:
//! CamelCase words and `ns:target` become links, `#12` a ticket link, `r12`
//! and `[12]` changeset links, `{1}` a report link, `''`/`**`/`//`/`__`/
//! `~~`/`^`/`,,` toggle fonts, `||` makes table cells. Trac's escape is a `!`
//! in front of a *recognised* token (a `!` before anything else stays
//! visible), so this module mirrors Trac 1.6's token rules closely enough to
//! put a `!` exactly where Trac will consume it. Backticks and triple braces
//! are wrapped as inline code instead, since an unpaired one is no token but
//! could pair with markup emitted later.

/// Zero-width space: breaks line-start rules (`= `, `>`, `----`) invisibly.
pub(crate) const ZWSP: char = '\u{200B}';

/// Escapes `text` for use inside a TracWiki paragraph, heading or cell.
/// `prev` is the character already emitted before it (for word boundaries).
pub(crate) fn escape_inline(text: &str, prev: Option<char>) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    let mut prev = prev;
    while i < chars.len() {
        let c = chars[i];
        let boundary = !prev.is_some_and(is_word_char);
        let start = out.len();
        let consumed = if boundary && let Some(n) = url_len(&chars[i..]) {
            // keep URLs whole: Trac links them, as Markdown renderers do
            copy(&mut out, &chars[i..i + n]);
            n
        } else if boundary
            && prev.is_none_or(|p| p != '/')
            && let Some(n) = camel_case_len(&chars[i..])
        {
            out.push('!');
            copy(&mut out, &chars[i..i + n]);
            n
        } else if boundary && let Some(n) = shref_len(&chars[i..]) {
            out.push('!');
            copy(&mut out, &chars[i..i + n]);
            n
        } else if boundary
            && c == 'r'
            && let Some(n) = changeset_rev_len(&chars[i..])
        {
            out.push('!');
            copy(&mut out, &chars[i..i + n]);
            n
        } else if c == '#' && prev != Some('&') && ticket_ref(&chars[i + 1..]) {
            out.push_str("!#");
            1
        } else if c == '['
            && let Some(n) = bracket_link_len(&chars[i..])
        {
            out.push('!');
            copy(&mut out, &chars[i..i + n]);
            n
        } else if c == '{'
            && let Some(n) = report_link_len(&chars[i..])
        {
            out.push('!');
            copy(&mut out, &chars[i..i + n]);
            n
        } else if c == '`' {
            out.push_str("{{{`}}}");
            1
        } else if starts_with(&chars[i..], "{{{") || starts_with(&chars[i..], "}}}") {
            out.push('`');
            copy(&mut out, &chars[i..i + 3]);
            out.push('`');
            3
        } else if c == '\'' {
            let run = run_len(&chars[i..], '\'');
            escape_quote_run(&mut out, run);
            run
        } else if matches!(c, '*' | '_' | '~' | ',' | '|' | '\\') || (c == '/' && prev != Some(':'))
        {
            let run = run_len(&chars[i..], c);
            for k in 0..run {
                if k % 2 == 0 && k + 1 < run {
                    out.push('!');
                }
                out.push(c);
            }
            run
        } else if c == '^' {
            out.push_str("!^");
            1
        } else {
            out.push(c);
            1
        };
        // `ns:!x` would be read as a link whose target starts with `!`:
        // keep a `!` we just wrote away from a preceding colon
        if out[start..].starts_with('!') && out[..start].ends_with(':') {
            out.insert(start, ZWSP);
        }
        i += consumed;
        prev = Some(chars[i - 1]);
    }
    out
}

/// Trac tokenises apostrophe runs greedily as `'''''`, `'''`, `''`; escape each token.
fn escape_quote_run(out: &mut String, mut run: usize) {
    while run > 0 {
        let token = match run {
            5.. => 5,
            3 | 4 => 3,
            2 => 2,
            _ => 1,
        };
        if token > 1 {
            out.push('!');
        }
        out.extend(std::iter::repeat_n('\'', token));
        run -= token;
    }
}

fn copy(out: &mut String, chars: &[char]) {
    out.extend(chars.iter());
}

fn starts_with(chars: &[char], s: &str) -> bool {
    let mut it = chars.iter();
    s.chars().all(|c| it.next() == Some(&c))
}

fn run_len(chars: &[char], c: char) -> usize {
    chars.iter().take_while(|x| **x == c).count()
}

/// `\w` in Python's Unicode regexes: letters, digits, underscore.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_scheme_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.' | '_')
}

/// `scheme://...` or `mailto:...` up to the next whitespace.
fn url_len(chars: &[char]) -> Option<usize> {
    if !chars.first()?.is_ascii_alphabetic() {
        return None;
    }
    let scheme = chars.iter().take_while(|c| is_scheme_char(**c)).count();
    let rest = &chars[scheme..];
    let is_url = starts_with(rest, "://")
        || chars[..scheme]
            .iter()
            .collect::<String>()
            .eq_ignore_ascii_case("mailto")
            && starts_with(rest, ":");
    is_url.then(|| chars.iter().take_while(|c| !c.is_whitespace()).count())
}

/// Trac's WikiPageNames: two or more `Upper lower+` groups (each optionally
/// followed by `/`), not followed by a word character or `:x`.
fn camel_case_len(chars: &[char]) -> Option<usize> {
    let mut i = 0;
    let mut groups = 0;
    while i < chars.len() && chars[i].is_uppercase() {
        let lower = chars[i + 1..]
            .iter()
            .take_while(|c| c.is_lowercase())
            .count();
        if lower == 0 {
            break;
        }
        i += 1 + lower;
        groups += 1;
        if chars.get(i) == Some(&'/') {
            i += 1;
        }
    }
    if groups < 2 {
        return None;
    }
    match chars.get(i) {
        None => Some(i),
        Some(':') => match chars.get(i + 1) {
            None => Some(i),
            Some(c) if c.is_whitespace() => Some(i),
            _ => None,
        },
        Some(c) if is_word_char(*c) => None,
        Some(_) => Some(i),
    }
}

/// `ns:target` as Trac's short-link rule sees it; returns the match length.
fn shref_len(chars: &[char]) -> Option<usize> {
    if !chars.first()?.is_ascii_alphabetic() {
        return None;
    }
    let scheme = chars.iter().take_while(|c| is_scheme_char(**c)).count();
    if chars.get(scheme) != Some(&':') {
        return None;
    }
    let target = &chars[scheme + 1..];
    let first = *target.first()?;
    if first == '"' || first == '\'' {
        let close = target[1..].iter().position(|c| *c == first)?;
        return Some(scheme + 1 + close + 2);
    }
    if !(first.is_alphanumeric() || matches!(first, '/' | '?' | '!' | '#' | '@')) {
        return None;
    }
    // middle: anything but whitespace and |<> ('|' only before a non-'|');
    // the match ends at the last [\w/=] (not '_') character
    let mut end = 1;
    let mut last_good = 1;
    while end < target.len() {
        let c = target[end];
        let ok = match c {
            '|' => target
                .get(end + 1)
                .is_some_and(|n| *n != '|' && !n.is_whitespace()),
            '<' | '>' => false,
            c => !c.is_whitespace(),
        };
        if !ok {
            break;
        }
        end += 1;
        if c.is_alphanumeric() || c == '/' || c == '=' {
            last_good = end;
        }
    }
    Some(scheme + 1 + last_good)
}

/// `r123` as a whole word, not `r1:2`.
fn changeset_rev_len(chars: &[char]) -> Option<usize> {
    let digits = chars[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let end = 1 + digits;
    match chars.get(end) {
        Some(c) if is_word_char(*c) => None,
        Some(':') if chars.get(end + 1).is_some_and(|c| c.is_ascii_digit()) => None,
        _ => Some(end),
    }
}

/// After `#`: optional letters (InterTrac prefix), then a digit.
fn ticket_ref(after: &[char]) -> bool {
    let prefix = after
        .iter()
        .take_while(|c| c.is_ascii_alphabetic() || matches!(c, '.' | '+' | '-'))
        .count();
    after.get(prefix).is_some_and(|c| c.is_ascii_digit())
}

/// `[...]` forms Trac links: `[123]`, `[ns:target ...]`, `[/path]`, `[CamelCase label]`,
/// `["quoted"]`, `[=#anchor]`, `[[macro]]`. Returns the length through the closing bracket.
fn bracket_link_len(chars: &[char]) -> Option<usize> {
    let inner = &chars[1..];
    if inner.first() == Some(&'[') {
        let close =
            (1..inner.len()).find(|k| inner[*k] == ']' && inner.get(k + 1) == Some(&']'))?;
        return Some(1 + close + 2);
    }
    let close = inner.iter().position(|c| *c == ']' || *c == '\n')?;
    if inner[close] != ']' || close == 0 {
        return None;
    }
    let body = &inner[..close];
    let first = body[0];
    let hexlike = body.iter().take_while(|c| c.is_ascii_hexdigit()).count();
    let looks_like_link = first.is_ascii_digit()
        || hexlike >= 8
        || matches!(first, '/' | '"' | '\'')
        || starts_with(body, "./")
        || starts_with(body, "../")
        || starts_with(body, "=#")
        || camel_case_len(body).is_some()
        || shref_len(body).is_some()
        || (first.is_ascii_alphabetic() && {
            let scheme = body.iter().take_while(|c| is_scheme_char(**c)).count();
            body.get(scheme) == Some(&':')
        });
    looks_like_link.then_some(1 + close + 1)
}

/// `{123}` report links (with optional InterTrac prefix).
fn report_link_len(chars: &[char]) -> Option<usize> {
    let inner = &chars[1..];
    let prefix = inner.iter().take_while(|c| c.is_ascii_alphabetic()).count();
    let digits = inner[prefix..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    (digits > 0 && inner.get(prefix + digits) == Some(&'}')).then_some(1 + prefix + digits + 1)
}

/// Guards a line of paragraph text against Trac's line-start rules; `indented`
/// lines (list continuations) are also guarded against list and definition rules.
pub(crate) fn guard_line_start(line: &str, indented: bool) -> String {
    let body = line.trim_start();
    let lead = &line[..line.len() - body.len()];
    let heading = {
        let eq = body.chars().take_while(|c| *c == '=').count();
        (1..=6).contains(&eq) && body[eq..].starts_with(char::is_whitespace)
    };
    let hazard = heading
        || body.starts_with('>')
        || body.starts_with("----")
        || body.starts_with("||")
        || body.starts_with("{{{")
        || body.starts_with("}}}")
        || (indented && starts_like_list_item(body));
    let mut guarded = String::with_capacity(line.len() + 3);
    guarded.push_str(lead);
    if hazard {
        guarded.push(ZWSP);
    }
    if indented {
        guarded.push_str(&break_definition(body));
    } else {
        guarded.push_str(body);
    }
    guarded
}

fn starts_like_list_item(body: &str) -> bool {
    let marker_end = if body.starts_with(['*', '-', '•']) {
        body.chars().next().map(char::len_utf8)
    } else {
        let n = body
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        (n > 0 && body[n..].starts_with('.')).then_some(n + 1)
    };
    marker_end.is_some_and(|end| body[end..].starts_with(char::is_whitespace))
}

/// `term:: text` on an indented line is a definition list in Trac.
fn break_definition(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 3);
    let mut rest = body;
    while let Some(pos) = rest.find("::") {
        let after = &rest[pos + 2..];
        out.push_str(&rest[..pos + 1]);
        if after.is_empty() || after.starts_with(char::is_whitespace) {
            out.push(ZWSP);
        }
        out.push(':');
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str) -> String {
        escape_inline(s, None)
    }

    #[test]
    fn links_are_escaped() {
        assert_eq!(
            esc("Use JavaScript and McDonald, not IPv6 or Abc1Def"),
            "Use !JavaScript and !McDonald, not IPv6 or Abc1Def"
        );
        assert_eq!(
            esc("see #12 and #T3 but &#12; r42 ar42 r1:2"),
            "see !#12 and !#T3 but &#12; !r42 ar42 !r1:2"
        );
        assert_eq!(
            esc("wiki:Foo ticket:1 Note: x"),
            "!wiki:Foo !ticket:1 Note: x"
        );
        assert_eq!(
            esc("[12] [abcdef12] [wiki:X y] [not a link] [[BR]]"),
            "![12] ![abcdef12] ![wiki:X y] [not a link] ![[BR]]"
        );
        assert_eq!(esc("{7} {x}"), "!{7} {x}");
        assert_eq!(
            esc("go to http://example.org/a//b_c now"),
            "go to http://example.org/a//b_c now"
        );
    }

    #[test]
    fn font_tokens_are_escaped() {
        assert_eq!(esc("a ''b'' '''c''' d's"), "a !''b!'' !'''c!''' d's");
        assert_eq!(esc("''''''x"), "!''''''x");
        assert_eq!(esc("'''''''x"), "!'''''!''x");
        assert_eq!(
            esc("2**3 a // b foo__bar ~~s~~ x^2 a,,b a||b c\\\\d"),
            "2!**3 a !// b foo!__bar !~~s!~~ x!^2 a!,,b a!||b c!\\\\d"
        );
        assert_eq!(esc("a_b *c* ~d"), "a_b *c* ~d");
    }

    #[test]
    fn escapes_after_a_colon_cannot_become_link_targets() {
        assert_eq!(esc("C:\\\\d x:^2"), "C:\u{200B}!\\\\d x:\u{200B}!^2");
    }

    #[test]
    fn code_delimiters_are_wrapped() {
        assert_eq!(esc("a ` b {{{ c }}}"), "a {{{`}}} b `{{{` c `}}}`");
    }

    #[test]
    fn word_boundaries_use_prev() {
        assert_eq!(escape_inline("JavaScript", Some('x')), "JavaScript");
        assert_eq!(escape_inline("JavaScript", Some('(')), "!JavaScript");
    }

    #[test]
    fn line_starts_are_guarded() {
        assert_eq!(guard_line_start("= x =", false), "\u{200B}= x =");
        assert_eq!(guard_line_start("=x", false), "=x");
        assert_eq!(guard_line_start("> q", false), "\u{200B}> q");
        assert_eq!(
            guard_line_start("   1986. year", true),
            "   \u{200B}1986. year"
        );
        assert_eq!(guard_line_start("   term:: x", true), "   term:\u{200B}: x");
        assert_eq!(guard_line_start("   a::b", true), "   a::b");
    }
}
