//! TracWiki → Markdown for the common constructs (there is no maintained
//! TracWiki parser crate, so this is a small line-based reader of Trac's
//! documented syntax).
//!
//! Blocks: `= headings =`, ` * ` / ` 1. ` lists (nested by indentation),
//! `{{{ }}}` blocks (with `#!lang`, `#!html`, `#!comment`), `||` tables,
//! `>` citations, indented text, `----`. Inline: `'''`/`''`/`**`/`//`,
//! `~~`, `{{{x}}}`/`` `x` ``, `[target label]` links, `[[BR]]`,
//! `[[Image()]]`, `!` escapes. Everything else is kept as text and reported.

use super::{Conversion, ConversionIssue};

/// Converts TracWiki markup to CommonMark (with GitHub tables and strikethrough).
pub fn tracwiki_to_markdown(wiki: &str) -> Conversion {
    let mut r = Reader {
        out: Vec::new(),
        issues: Vec::new(),
        lists: Vec::new(),
        table: Vec::new(),
        line: 0,
    };
    let lines: Vec<&str> = wiki.lines().collect();
    let mut k = 0;
    while k < lines.len() {
        r.line = k + 1;
        let raw = lines[k].trim_end();
        let trimmed = raw.trim_start();
        if trimmed == "{{{" || (trimmed.starts_with("{{{") && trimmed.starts_with("{{{#!")) {
            k = r.code_block(&lines, k);
            continue;
        }
        if trimmed.starts_with("||") {
            r.end_list();
            r.table.push(trimmed.to_string());
            k += 1;
            continue;
        }
        r.flush_table();
        if trimmed.is_empty() {
            r.end_list();
            r.blank();
        } else if let Some((level, text)) = heading(trimmed) {
            r.end_list();
            r.blank();
            let text = r.inline(text);
            r.out.push(format!("{} {text}", "#".repeat(level)));
            r.blank();
        } else if trimmed.len() >= 4 && trimmed.chars().all(|c| c == '-') {
            r.end_list();
            r.blank();
            r.out.push("---".into());
            r.blank();
        } else if trimmed.starts_with('>') {
            r.end_list();
            let depth = trimmed
                .chars()
                .take_while(|c| *c == '>' || *c == ' ')
                .filter(|c| *c == '>')
                .count();
            let rest = trimmed.trim_start_matches(['>', ' ']);
            let text = r.inline(rest);
            r.out.push(
                format!("{} {text}", ">".repeat(depth))
                    .trim_end()
                    .to_string(),
            );
        } else if raw.starts_with(char::is_whitespace) {
            let indent = raw.len() - trimmed.len();
            if let Some((marker, text)) = list_item(trimmed) {
                r.list_item(indent, marker, text);
            } else if let Some(content) = r.lists.last().map(|l| l.md_indent + l.md_width) {
                let text = r.inline(trimmed);
                r.out.push(format!("{}{text}", " ".repeat(content)));
            } else if let Some((term, def)) = definition(trimmed) {
                r.issue(
                    "definition",
                    "definition list rendered as a bold term and a paragraph".into(),
                );
                let (term, def) = (r.inline(term), r.inline(def));
                r.out.push(format!("**{term}**  "));
                r.out.push(def);
            } else {
                // indented text is a blockquote in Trac
                let text = r.inline(trimmed);
                r.out.push(format!("> {text}"));
            }
        } else {
            r.end_list();
            let text = r.inline(trimmed);
            r.out.push(guard_md_line_start(&text));
        }
        k += 1;
    }
    r.flush_table();
    while r.out.last().is_some_and(|l| l.is_empty()) {
        r.out.pop();
    }
    let mut text = r.out.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    Conversion {
        text,
        issues: r.issues,
    }
}

struct ListLevel {
    /// Indentation of the Trac marker.
    trac_indent: usize,
    /// Indentation and marker width in the Markdown output.
    md_indent: usize,
    md_width: usize,
}

struct Reader {
    out: Vec<String>,
    issues: Vec<ConversionIssue>,
    lists: Vec<ListLevel>,
    table: Vec<String>,
    line: usize,
}

impl Reader {
    fn issue(&mut self, construct: &str, message: String) {
        self.issues.push(ConversionIssue {
            line: self.line,
            construct: construct.to_string(),
            message,
        });
    }

    fn blank(&mut self) {
        if self.out.last().is_some_and(|l| !l.is_empty()) {
            self.out.push(String::new());
        }
    }

    fn end_list(&mut self) {
        if !self.lists.is_empty() {
            self.lists.clear();
            self.blank();
        }
    }

    fn list_item(&mut self, indent: usize, marker: &str, text: &str) {
        while self.lists.last().is_some_and(|l| l.trac_indent > indent) {
            self.lists.pop();
        }
        if self.lists.is_empty() {
            self.blank();
        }
        let md_marker = if marker == "*" || marker == "-" || marker == "•" {
            "-".to_string()
        } else {
            let n = marker.trim_end_matches('.');
            if n.chars().all(|c| c.is_ascii_digit()) {
                format!("{n}.")
            } else {
                self.issue("list", format!("list numbering {marker:?} became 1."));
                "1.".to_string()
            }
        };
        let md_width = md_marker.len() + 1;
        match self.lists.last_mut() {
            Some(l) if l.trac_indent == indent => l.md_width = md_width,
            _ => {
                let md_indent = self.lists.last().map_or(0, |l| l.md_indent + l.md_width);
                self.lists.push(ListLevel {
                    trac_indent: indent,
                    md_indent,
                    md_width,
                });
            }
        }
        let md_indent = self.lists.last().map_or(0, |l| l.md_indent);
        let text = self.inline(text);
        self.out
            .push(format!("{}{md_marker} {text}", " ".repeat(md_indent)));
    }

    fn flush_table(&mut self) {
        if self.table.is_empty() {
            return;
        }
        // raw cells keep their padding, which carries Trac's alignment
        let raw_rows: Vec<Vec<String>> = std::mem::take(&mut self.table)
            .iter()
            .map(|row| {
                let inner = row.trim().trim_start_matches("||");
                let inner = inner.strip_suffix("||").unwrap_or(inner);
                inner.split("||").map(str::to_string).collect()
            })
            .collect();
        let width = raw_rows.iter().map(Vec::len).max().unwrap_or(0);
        let is_header = |cell: &str| {
            let t = cell.trim();
            t.len() >= 2 && t.starts_with('=') && t.ends_with('=')
        };
        let body = raw_rows.iter().find(|r| !r.iter().all(|c| is_header(c)));
        let aligns: Vec<&str> = (0..width)
            .map(|i| {
                body.and_then(|r| r.get(i))
                    .map_or("---", |c| cell_alignment(c))
            })
            .collect();
        self.blank();
        for (k, row) in raw_rows.iter().enumerate() {
            let cells: Vec<String> = (0..width)
                .map(|i| {
                    let cell = row.get(i).map(String::as_str).unwrap_or("").trim();
                    let cell = if is_header(cell) {
                        cell[1..cell.len() - 1].trim()
                    } else {
                        cell
                    };
                    self.inline(cell).replace('|', "\\|")
                })
                .collect();
            self.out.push(format!("| {} |", cells.join(" | ")));
            if k == 0 {
                self.out.push(format!("|{}|", aligns.join("|")));
            }
        }
        self.blank();
    }

    /// Reads a `{{{ ... }}}` block starting at line `start`; returns the next line index.
    fn code_block(&mut self, lines: &[&str], start: usize) -> usize {
        self.end_list();
        self.flush_table();
        let first = lines[start].trim();
        let mut processor = first.strip_prefix("{{{#!").map(|p| p.trim().to_string());
        let mut body: Vec<&str> = Vec::new();
        let mut depth = 1;
        let mut k = start + 1;
        if processor.is_none()
            && let Some(p) = lines.get(k).and_then(|l| l.trim().strip_prefix("#!"))
        {
            processor = Some(p.trim().to_string());
            k += 1;
        }
        while k < lines.len() {
            let t = lines[k].trim();
            if t.starts_with("{{{") && !t.contains("}}}") {
                depth += 1;
            } else if t == "}}}" {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            body.push(lines[k]);
            k += 1;
        }
        let name = processor
            .as_deref()
            .map(|p| p.split_whitespace().next().unwrap_or(""));
        self.blank();
        match name {
            Some("html") => body.iter().for_each(|l| self.out.push(l.to_string())),
            Some("comment") => {
                self.out.push("<!--".into());
                body.iter()
                    .for_each(|l| self.out.push(l.replace("--", "- -")));
                self.out.push("-->".into());
            }
            _ => {
                let lang = match name {
                    None | Some("default") | Some("text") | Some("text/plain") => "",
                    Some(p) => match markdown_language(p) {
                        Some(lang) => lang,
                        None => {
                            self.issue("processor", format!("processor #!{p} has no Markdown equivalent; kept as a code block"));
                            ""
                        }
                    },
                };
                let fence = if body.iter().any(|l| l.trim_start().starts_with("```")) {
                    "~~~~"
                } else {
                    "```"
                };
                self.out.push(format!("{fence}{lang}"));
                body.iter().for_each(|l| self.out.push(l.to_string()));
                self.out.push(fence.to_string());
            }
        }
        self.blank();
        k + 1
    }

    /// Converts the inline markup of one line.
    fn inline(&mut self, text: &str) -> String {
        let chars: Vec<char> = text.chars().collect();
        let mut out = String::new();
        let mut open: Vec<&'static str> = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let rest = &chars[i..];
            let at = |s: &str| starts(rest, s);
            let prev = if i == 0 { None } else { Some(chars[i - 1]) };
            if rest[0] == '!' && rest.len() > 1 && !rest[1].is_whitespace() && is_escapable(rest) {
                // `!` escape: the following token (a font marker run, or
                // else the whole word) is literal
                let next = rest[1];
                let len = if matches!(next, '\'' | '*' | '/' | '_' | '~' | '^' | ',' | '|' | '\\') {
                    rest[1..].iter().take_while(|c| **c == next).count()
                } else {
                    rest[1..].iter().take_while(|c| !c.is_whitespace()).count()
                };
                out.push_str(&md_escape(&rest[1..1 + len].iter().collect::<String>()));
                i += 1 + len;
            } else if at("{{{")
                && let Some(end) = find(rest, "}}}", 3)
            {
                out.push_str(&code_span(&rest[3..end].iter().collect::<String>()));
                i += end + 3;
            } else if rest[0] == '`'
                && let Some(end) = find(rest, "`", 1)
            {
                out.push_str(&code_span(&rest[1..end].iter().collect::<String>()));
                i += end + 1;
            } else if at("[[")
                && let Some(end) = find(rest, "]]", 2)
            {
                let body: String = rest[2..end].iter().collect();
                out.push_str(&self.macro_call(&body));
                i += end + 2;
            } else if rest[0] == '['
                && let Some(end) = find(rest, "]", 1)
            {
                let body: String = rest[1..end].iter().collect();
                match self.bracket_link(&body) {
                    Some(link) => out.push_str(&link),
                    None => out.push_str(&md_escape(&format!("[{body}]"))),
                }
                i += end + 1;
            } else if let Some(n) =
                url_len(rest).filter(|_| !prev.is_some_and(|p| p.is_alphanumeric()))
            {
                out.push('<');
                out.extend(&rest[..n]);
                out.push('>');
                i += n;
            } else if let Some((token, md, width)) = font_token(rest, prev) {
                toggle(&mut out, &mut open, token, md);
                i += width;
            } else {
                out.push_str(&md_escape(&rest[0].to_string()));
                i += 1;
            }
        }
        while let Some(token) = open.pop() {
            out.push_str(closing(token));
        }
        out
    }

    fn macro_call(&mut self, body: &str) -> String {
        let (name, args) = match body.split_once('(') {
            Some((n, a)) => (n.trim(), a.trim_end_matches(')')),
            None => (body.trim(), ""),
        };
        match name.to_ascii_lowercase().as_str() {
            "br" => "<br>".into(),
            "image" => {
                let mut parts = args.split(',').map(str::trim);
                let src = parts.next().unwrap_or("");
                let alt = parts.find_map(|p| p.strip_prefix("alt=")).unwrap_or("");
                format!("![{alt}]({src})")
            }
            _ => {
                self.issue(
                    "macro",
                    format!("macro [[{body}]] has no Markdown equivalent; kept as code"),
                );
                code_span(&format!("[[{body}]]"))
            }
        }
    }

    /// `[target label]` → `[label](target)`; `None` if it is no link.
    fn bracket_link(&mut self, body: &str) -> Option<String> {
        let body = body.trim();
        let (target, label) = if let Some(rest) = body.strip_prefix('"') {
            let (t, l) = rest.split_once('"')?;
            (t.to_string(), l.trim().to_string())
        } else {
            let (t, l) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
            (t.to_string(), l.trim().to_string())
        };
        let label = label.trim_matches('"').to_string();
        let href =
            if target.contains("://") || target.starts_with("mailto:") || target.starts_with('#') {
                target.clone()
            } else if let Some(page) = target.strip_prefix("wiki:") {
                page.trim_matches('"').to_string()
            } else if target
                .split_once(':')
                .is_some_and(|(ns, _)| ns.chars().all(|c| c.is_ascii_alphabetic()))
            {
                self.issue(
                    "link",
                    format!("TracLink {target} has no Markdown target; kept as its label"),
                );
                return Some(md_escape(if label.is_empty() { &target } else { &label }));
            } else if target.chars().next().is_some_and(char::is_uppercase)
                || !body.starts_with(char::is_alphabetic) && body.starts_with('"')
            {
                target.clone()
            } else if target.chars().all(|c| c.is_ascii_digit()) {
                self.issue("link", format!("changeset link [{target}] kept as text"));
                return Some(md_escape(&format!("[{target}]")));
            } else {
                return None;
            };
        let label = if label.is_empty() {
            target.trim_start_matches("wiki:").to_string()
        } else {
            label
        };
        Some(format!(
            "[{}]({})",
            md_escape(&label),
            href.replace(' ', "%20")
        ))
    }
}

/// Trac's cell alignment rule: `||left  ||  right||  center  || none ||`.
fn cell_alignment(cell: &str) -> &'static str {
    let starts = cell.starts_with(' ');
    let ends = cell.ends_with(' ');
    match (starts, ends) {
        (false, true) => ":---",
        (true, false) => "---:",
        (true, true) if cell.len() >= 4 && cell.starts_with("  ") && cell.ends_with("  ") => {
            ":---:"
        }
        _ => "---",
    }
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '=').count();
    if !(1..=6).contains(&level) || !line[level..].starts_with(char::is_whitespace) {
        return None;
    }
    let mut text = line[level..].trim();
    // optional explicit anchor: `== Title == #anchor`
    if let Some((before, anchor)) = text.rsplit_once(" #")
        && !anchor.contains(' ')
        && before.trim_end().ends_with('=')
    {
        text = before.trim_end();
    }
    Some((level.min(6), text.trim_end_matches('=').trim_end()))
}

fn list_item(trimmed: &str) -> Option<(&str, &str)> {
    let (marker, rest) = trimmed.split_once(' ')?;
    let is_marker = matches!(marker, "*" | "-" | "•")
        || marker.strip_suffix('.').is_some_and(|m| {
            !m.is_empty()
                && (m.chars().all(|c| c.is_ascii_digit())
                    || (m.len() == 1 && m.chars().all(|c| c.is_ascii_alphabetic()))
                    || (m.len() <= 5 && m.chars().all(|c| "ivxIVX".contains(c))))
        });
    is_marker.then_some((marker, rest.trim_start()))
}

fn definition(trimmed: &str) -> Option<(&str, &str)> {
    let (term, def) = trimmed.split_once("::")?;
    (!term.trim().is_empty() && (def.is_empty() || def.starts_with(char::is_whitespace)))
        .then(|| (term.trim(), def.trim()))
}

fn starts(chars: &[char], s: &str) -> bool {
    let mut it = chars.iter();
    s.chars().all(|c| it.next() == Some(&c))
}

/// Index in `chars` (from `from`) where `s` starts.
fn find(chars: &[char], s: &str, from: usize) -> Option<usize> {
    (from..chars.len()).find(|k| starts(&chars[*k..], s))
}

fn url_len(chars: &[char]) -> Option<usize> {
    let scheme = chars
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        .count();
    if scheme < 2 || !chars[0].is_ascii_alphabetic() || !starts(&chars[scheme..], "://") {
        return None;
    }
    let mut n = chars.iter().take_while(|c| !c.is_whitespace()).count();
    while n > 0 && matches!(chars[n - 1], '.' | ',' | ')' | ';' | ':') {
        n -= 1;
    }
    Some(n)
}

/// Does `!` at the start of `rest` escape a Trac token?
fn is_escapable(rest: &[char]) -> bool {
    let next = rest[1];
    matches!(
        next,
        '\'' | '*' | '/' | '_' | '~' | '^' | ',' | '{' | '`' | '[' | '#' | '|' | '\\'
    ) || next.is_uppercase()
        || (next.is_ascii_lowercase() && {
            let word: String = rest[1..]
                .iter()
                .take_while(|c| !c.is_whitespace())
                .collect();
            word.contains(':')
                || (word.starts_with('r')
                    && word[1..].chars().all(|c| c.is_ascii_digit())
                    && word.len() > 1)
        })
}

/// A font toggle at the start of `rest`: (Trac token, Markdown open form, width).
fn font_token(rest: &[char], prev: Option<char>) -> Option<(&'static str, &'static str, usize)> {
    let tokens: [(&str, &str); 9] = [
        ("'''''", "***"),
        ("'''", "**"),
        ("''", "*"),
        ("**", "**"),
        ("//", "*"),
        ("__", "<u>"),
        ("~~", "~~"),
        (",,", "<sub>"),
        ("^", "<sup>"),
    ];
    for (token, md) in tokens {
        if token == "//" && prev == Some(':') {
            continue;
        }
        if starts(rest, token) {
            return Some((token, md, token.chars().count()));
        }
    }
    None
}

fn toggle(out: &mut String, open: &mut Vec<&'static str>, token: &'static str, md: &'static str) {
    // `**` and `'''` both mean bold, `''` and `//` both italic
    let kind = match token {
        "**" => "'''",
        "//" => "''",
        t => t,
    };
    if let Some(pos) = open.iter().rposition(|t| *t == kind) {
        // close everything opened after it, then it
        while open.len() > pos {
            let t = open.pop().unwrap_or(kind);
            out.push_str(closing(t));
        }
    } else {
        open.push(kind);
        out.push_str(md);
    }
}

fn closing(token: &str) -> &'static str {
    match token {
        "'''''" => "***",
        "'''" => "**",
        "''" => "*",
        "__" => "</u>",
        "~~" => "~~",
        ",," => "</sub>",
        "^" => "</sup>",
        _ => "",
    }
}

fn code_span(code: &str) -> String {
    if code.contains('`') {
        format!("`` {code} ``")
    } else {
        format!("`{code}`")
    }
}

/// Backslash-escapes characters that are markup in Markdown.
fn md_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '~' | '|'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A paragraph line must not start a Markdown block by accident.
fn guard_md_line_start(line: &str) -> String {
    let starts_block = line.starts_with('#')
        || line.starts_with("- ")
        || line.starts_with("+ ")
        || line.starts_with('=')
        || line
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    if starts_block {
        format!("\\{line}")
    } else {
        line.to_string()
    }
}

/// Trac processor name → Markdown fence language.
fn markdown_language(processor: &str) -> Option<&'static str> {
    Some(match processor {
        "python" | "py" | "text/x-python" => "python",
        "sh" | "bash" | "application/x-sh" => "sh",
        "js" | "javascript" | "application/javascript" => "javascript",
        "text/html" | "htm" => "html",
        "xml" | "text/xml" => "xml",
        "css" | "text/css" => "css",
        "c" | "h" => "c",
        "cpp" | "c++" | "cc" | "hpp" => "cpp",
        "cs" | "csharp" => "csharp",
        "java" => "java",
        "rb" | "ruby" => "ruby",
        "perl" | "pl" => "perl",
        "php" => "php",
        "sql" => "sql",
        "diff" | "patch" => "diff",
        "yaml" | "yml" => "yaml",
        "ini" | "cfg" => "ini",
        "make" | "makefile" => "makefile",
        "hs" | "haskell" => "haskell",
        "lua" => "lua",
        "tex" => "latex",
        "rst" => "rst",
        "rust" => "rust",
        "go" => "go",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(s: &str) -> String {
        tracwiki_to_markdown(s).text
    }

    #[test]
    fn blocks() {
        assert_eq!(
            md("= Title =\n== Sub == #anchor\ntext\n----\n"),
            "# Title\n\n## Sub\n\ntext\n\n---\n"
        );
        assert_eq!(
            md(" * a\n   * b\n 1. one\n 2. two\n"),
            "- a\n  - b\n1. one\n2. two\n"
        );
        assert_eq!(
            md("{{{\n#!python\nprint(1)\n}}}\n"),
            "```python\nprint(1)\n```\n"
        );
        assert_eq!(
            md("||= a =||= b =||\n|| 1 || 2 ||\n"),
            "| a | b |\n|---|---|\n| 1 | 2 |\n"
        );
        assert_eq!(
            md("||= l =||= r =||= c =||\n||x  ||  y||  z  ||\n"),
            "| l | r | c |\n|:---|---:|:---:|\n| x | y | z |\n"
        );
        assert_eq!(md("> quoted\n"), "> quoted\n");
    }

    #[test]
    fn inline() {
        assert_eq!(
            md("'''b''' ''i'' {{{c}}} `d` ~~s~~ [http://x.org X] [wiki:Page label] x[[BR]]y\n"),
            "**b** *i* `c` `d` ~~s~~ [X](http://x.org) [label](Page) x<br>y\n"
        );
        assert_eq!(md("!WikiStart a*b !''x!''\n"), "WikiStart a\\*b ''x''\n");
        assert_eq!(md("see http://x.org/a_b.\n"), "see <http://x.org/a_b>.\n");
    }

    #[test]
    fn unknown_things_are_reported() {
        let c = tracwiki_to_markdown("[[PageOutline]]\n{{{#!div\nx\n}}}\n [ticket:1 the bug]\n");
        let constructs: Vec<&str> = c.issues.iter().map(|i| i.construct.as_str()).collect();
        assert_eq!(constructs, ["macro", "processor", "link"], "{c:?}");
        assert_eq!(c.issues[1].line, 2);
    }
}
