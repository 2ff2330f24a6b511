//! Markdown → TracWiki, driven by pulldown-cmark's event stream.

use std::ops::Range;

use pulldown_cmark::{
    Alignment, CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd,
};

use super::escape::{ZWSP, escape_inline, guard_line_start};
use super::{Conversion, ConversionIssue, line_of};

/// Converts Markdown (CommonMark with GitHub tables, strikethrough and task
/// lists) to TracWiki markup. Plain text is escaped so that Trac shows it
/// as written; constructs without a Trac equivalent are reported.
pub fn markdown_to_tracwiki(markdown: &str) -> Conversion {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut writer = Writer::new(markdown);
    for (event, range) in Parser::new_ext(markdown, options).into_offset_iter() {
        writer.event(event, range);
    }
    writer.finish()
}

struct ListCtx {
    ordered: bool,
    next_number: u64,
    /// Column of the item marker.
    indent: usize,
    /// Width of the current item's marker ("* " or "12. ").
    marker_width: usize,
    /// The current item's marker has not been written yet.
    marker_pending: bool,
    /// The current item already has a line of text.
    has_text: bool,
}

struct LinkCtx {
    dest: String,
    link_type: LinkType,
    /// Where the label starts in `inline`.
    start: usize,
    image: bool,
    line: usize,
}

struct TableCtx {
    aligns: Vec<Alignment>,
    rows: Vec<(bool, Vec<String>)>,
    cells: Vec<String>,
    in_head: bool,
}

struct Writer<'s> {
    src: &'s str,
    out: String,
    issues: Vec<ConversionIssue>,
    quote_depth: usize,
    lists: Vec<ListCtx>,
    /// Inline markup of the block being built.
    inline: String,
    /// Raw text not yet escaped into `inline` (pulldown splits text runs).
    pending_text: String,
    links: Vec<LinkCtx>,
    heading: Option<HeadingLevel>,
    code: Option<(Option<String>, String, usize)>,
    html_block: Option<(String, usize)>,
    metadata: Option<(String, usize)>,
    table: Option<TableCtx>,
    footnote_depth: usize,
    need_gap: bool,
    /// Line of the event being handled (for issues).
    line: usize,
}

impl<'s> Writer<'s> {
    fn new(src: &'s str) -> Self {
        Writer {
            src,
            out: String::new(),
            issues: Vec::new(),
            quote_depth: 0,
            lists: Vec::new(),
            inline: String::new(),
            pending_text: String::new(),
            links: Vec::new(),
            heading: None,
            code: None,
            html_block: None,
            metadata: None,
            table: None,
            footnote_depth: 0,
            need_gap: false,
            line: 1,
        }
    }

    fn issue(&mut self, construct: &str, message: String) {
        self.issues.push(ConversionIssue {
            line: self.line,
            construct: construct.to_string(),
            message,
        });
    }

    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        self.line = line_of(self.src, range.start);
        if let Event::Text(text) = &event {
            if let Some((_, code, _)) = &mut self.code {
                code.push_str(text);
            } else if let Some((meta, _)) = &mut self.metadata {
                meta.push_str(text);
            } else {
                self.pending_text.push_str(text);
            }
            return;
        }
        self.flush_text();
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Code(code) => self.inline_code(&code),
            Event::Html(html) => match &mut self.html_block {
                Some((block, _)) => block.push_str(&html),
                None => self.inline_html(&html),
            },
            Event::InlineHtml(html) => self.inline_html(&html),
            Event::SoftBreak => self
                .inline
                .push(if self.single_line() { ' ' } else { '\n' }),
            Event::HardBreak => {
                self.inline.push_str("[[BR]]");
                if !self.single_line() {
                    self.inline.push('\n');
                }
            }
            Event::Rule => {
                self.block_start();
                self.emit("----");
                self.need_gap = true;
            }
            Event::TaskListMarker(done) => self.inline.push_str(if done { "[x] " } else { "[ ] " }),
            Event::FootnoteReference(label) => {
                self.issue(
                    "footnote",
                    format!("footnote reference [^{label}] kept as text (Trac has no footnotes)"),
                );
                self.inline.push_str(&escape_inline(
                    &format!("[^{label}]"),
                    self.inline.chars().last(),
                ));
            }
            Event::InlineMath(m) | Event::DisplayMath(m) => {
                self.issue("math", "math kept as inline code".into());
                self.inline_code(&m);
            }
            Event::Text(_) => {}
        }
    }

    /// Headings, table cells and link labels cannot span lines in Trac.
    fn single_line(&self) -> bool {
        self.heading.is_some() || self.table.is_some() || !self.links.is_empty()
    }

    fn flush_text(&mut self) {
        if self.pending_text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.pending_text);
        if !self.links.is_empty() {
            // link labels are literal in Trac
            self.inline.push_str(&text.replace('\n', " "));
            return;
        }
        let prev = self.inline.chars().last();
        let mut escaped = escape_inline(&text, prev);
        // keep an apostrophe or other marker character next to a font
        // toggle from merging into a longer token
        if let (Some(p), Some(first)) = (prev, escaped.chars().next())
            && p == first
            && matches!(p, '\'' | '*' | '~' | '/' | '_' | ',' | '^')
        {
            escaped.insert(0, ZWSP);
        }
        self.inline.push_str(&escaped);
    }

    fn marker(&mut self, marker: &str) {
        if !self.links.is_empty() {
            return; // no formatting inside link labels
        }
        let first = marker.chars().next();
        if self.inline.chars().last() == first {
            self.inline.push(ZWSP);
        }
        self.inline.push_str(marker);
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                if self.lists.is_empty() {
                    self.block_start();
                }
            }
            Tag::Heading { level, .. } => {
                self.flush_item_text();
                self.block_start();
                self.heading = Some(level);
            }
            Tag::BlockQuote(_) => {
                self.flush_item_text();
                self.block_start();
                self.quote_depth += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush_item_text();
                self.block_start();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().map(str::to_string)
                    }
                    CodeBlockKind::Indented => None,
                };
                self.code = Some((lang, String::new(), self.line));
            }
            Tag::HtmlBlock => {
                self.flush_item_text();
                self.block_start();
                self.html_block = Some((String::new(), self.line));
            }
            Tag::List(start) => {
                self.flush_item_text();
                if self.lists.is_empty() {
                    self.block_start();
                }
                let indent = self.lists.last().map_or(1, |l| l.indent + l.marker_width);
                self.lists.push(ListCtx {
                    ordered: start.is_some(),
                    next_number: start.unwrap_or(1),
                    indent,
                    marker_width: 2,
                    marker_pending: false,
                    has_text: false,
                });
            }
            Tag::Item => {
                if let Some(list) = self.lists.last_mut() {
                    list.marker_width = if list.ordered {
                        list.next_number.to_string().len() + 2
                    } else {
                        2
                    };
                    list.marker_pending = true;
                    list.has_text = false;
                }
            }
            Tag::Table(aligns) => {
                self.flush_item_text();
                self.block_start();
                self.table = Some(TableCtx {
                    aligns,
                    rows: Vec::new(),
                    cells: Vec::new(),
                    in_head: false,
                });
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.in_head = true;
                }
            }
            Tag::TableRow | Tag::TableCell => {}
            Tag::Emphasis => self.marker("''"),
            Tag::Strong => self.marker("'''"),
            Tag::Strikethrough => self.marker("~~"),
            Tag::Superscript => self.marker("^"),
            Tag::Subscript => self.marker(",,"),
            Tag::Link {
                link_type,
                dest_url,
                ..
            } => self.links.push(LinkCtx {
                dest: dest_url.to_string(),
                link_type,
                start: self.inline.len(),
                image: false,
                line: self.line,
            }),
            Tag::Image {
                dest_url,
                link_type,
                ..
            } => self.links.push(LinkCtx {
                dest: dest_url.to_string(),
                link_type,
                start: self.inline.len(),
                image: true,
                line: self.line,
            }),
            Tag::FootnoteDefinition(label) => {
                self.flush_item_text();
                self.block_start();
                self.issue(
                    "footnote",
                    format!("footnote [^{label}] kept as a plain paragraph"),
                );
                self.inline
                    .push_str(&escape_inline(&format!("[^{label}]: "), None));
                self.footnote_depth += 1;
            }
            Tag::MetadataBlock(_) => {
                self.block_start();
                self.metadata = Some((String::new(), self.line));
            }
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                if self.lists.is_empty() && self.footnote_depth == 0 {
                    self.emit_paragraph();
                    self.need_gap = true;
                } else if self.lists.is_empty() {
                    // footnote definition: its paragraphs are flushed at the end
                } else {
                    self.flush_item_text();
                }
            }
            TagEnd::Heading(level) => {
                let text = std::mem::take(&mut self.inline);
                let eq = "=".repeat(heading_depth(level));
                let text = text.trim();
                self.emit(&format!(
                    "{eq} {} {eq}",
                    if text.is_empty() { "\u{200B}" } else { text }
                ));
                self.heading = None;
                self.need_gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_item_text();
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.need_gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, text, line)) = self.code.take() {
                    self.emit_code_block(lang.as_deref(), &text, line);
                }
                self.need_gap = true;
            }
            TagEnd::HtmlBlock => {
                if let Some((html, line)) = self.html_block.take() {
                    self.emit_html_block(&html, line);
                }
                self.need_gap = true;
            }
            TagEnd::List(_) => {
                self.flush_item_text();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.need_gap = true;
                }
            }
            TagEnd::Item => {
                self.flush_item_text();
                let mut empty_item = None;
                if let Some(list) = self.lists.last_mut() {
                    if list.marker_pending {
                        // empty item: still show its marker
                        empty_item =
                            Some(format!("{}{}", " ".repeat(list.indent), list_marker(list)));
                        list.marker_pending = false;
                    }
                    list.next_number += 1;
                }
                if let Some(line) = empty_item {
                    self.emit(line.trim_end());
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(t) = &mut self.table {
                    t.cells.push(cell.trim().to_string());
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    let cells = std::mem::take(&mut t.cells);
                    t.rows.push((t.in_head, cells));
                    t.in_head = false;
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.emit_table(&t);
                }
                self.need_gap = true;
            }
            TagEnd::Emphasis => self.marker("''"),
            TagEnd::Strong => self.marker("'''"),
            TagEnd::Strikethrough => self.marker("~~"),
            TagEnd::Superscript => self.marker("^"),
            TagEnd::Subscript => self.marker(",,"),
            TagEnd::Link | TagEnd::Image => self.end_link(),
            TagEnd::FootnoteDefinition => {
                self.footnote_depth = self.footnote_depth.saturating_sub(1);
                self.emit_paragraph();
                self.need_gap = true;
            }
            TagEnd::MetadataBlock(_) => {
                if let Some((meta, line)) = self.metadata.take() {
                    self.line = line;
                    self.issue(
                        "front-matter",
                        "front matter kept as a hidden {{{#!comment}}} block".into(),
                    );
                    self.emit("{{{#!comment");
                    for l in meta.trim_end().lines() {
                        self.emit(&guard_block_line(l));
                    }
                    self.emit("}}}");
                }
                self.need_gap = true;
            }
            TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => {}
        }
    }

    fn inline_code(&mut self, code: &str) {
        if !self.links.is_empty() {
            self.inline.push_str(code);
        } else if !code.contains('`') {
            self.inline.push('`');
            self.inline.push_str(code);
            self.inline.push('`');
        } else if !code.contains("}}}") {
            self.inline.push_str("{{{");
            self.inline.push_str(code);
            self.inline.push_str("}}}");
        } else {
            self.issue(
                "code",
                "inline code containing both ` and }}} kept as plain text".into(),
            );
            self.inline
                .push_str(&escape_inline(code, self.inline.chars().last()));
        }
    }

    fn inline_html(&mut self, html: &str) {
        let tag = html.trim().to_ascii_lowercase();
        if matches!(tag.as_str(), "<br>" | "<br/>" | "<br />") {
            self.inline.push_str("[[BR]]");
        } else if tag.starts_with("<!--") {
            self.issue("html", "inline HTML comment dropped".into());
        } else {
            self.issue(
                "html",
                format!("inline HTML {} kept as literal text", html.trim()),
            );
            self.inline
                .push_str(&escape_inline(html, self.inline.chars().last()));
        }
    }

    fn end_link(&mut self) {
        let Some(link) = self.links.pop() else { return };
        let label: String = self.inline[link.start..].trim().to_string();
        self.inline.truncate(link.start);
        self.line = link.line;
        let markup = if link.image {
            self.image_markup(&link, &label)
        } else {
            self.link_markup(&link, &label)
        };
        self.inline.push_str(&markup);
    }

    fn image_markup(&mut self, link: &LinkCtx, alt: &str) -> String {
        if !has_scheme(&link.dest) {
            self.issue(
                "image",
                format!(
                    "image {:?} is a local file: attach it to the page for [[Image]] to find it",
                    link.dest
                ),
            );
        }
        let alt: String = alt
            .chars()
            .filter(|c| !matches!(c, ',' | ')' | '('))
            .collect();
        let target = link.dest.replace(' ', "%20");
        if alt.is_empty() {
            format!("[[Image({target})]]")
        } else {
            format!("[[Image({target}, alt={alt})]]")
        }
    }

    fn link_markup(&mut self, link: &LinkCtx, label: &str) -> String {
        let dest = link.dest.trim();
        if matches!(link.link_type, LinkType::Email) {
            return format!("[mailto:{dest} {}]", quote_label(label, dest));
        }
        if dest.is_empty() {
            return escape_inline(label, self.inline.chars().last());
        }
        let target = if let Some(anchor) = dest.strip_prefix('#') {
            format!("#{anchor}")
        } else if has_scheme(dest) {
            dest.replace(' ', "%20")
        } else {
            self.wiki_target(dest)
        };
        if matches!(link.link_type, LinkType::Autolink) && label == dest {
            return format!("[{target}]");
        }
        let label = if label.is_empty() { dest } else { label };
        format!("[{target} {}]", quote_label(label, dest))
    }

    /// A relative Markdown link becomes a wiki link: `./Other.md#x` → `wiki:Other#x`.
    fn wiki_target(&mut self, dest: &str) -> String {
        let (path, fragment) = match dest.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (dest, None),
        };
        let path = path.trim_start_matches("./");
        let path = path
            .strip_suffix(".md")
            .or_else(|| path.strip_suffix(".markdown"))
            .unwrap_or(path);
        let last = path.rsplit('/').next().unwrap_or(path);
        if last.contains('.') {
            self.issue(
                "link",
                format!("relative link {dest:?} points at a file; it became wiki:{path}, check the target"),
            );
        }
        let page = if path.contains(char::is_whitespace) || path.contains(']') {
            format!("\"{}\"", path.replace('"', ""))
        } else {
            path.to_string()
        };
        match fragment {
            Some(f) if !f.is_empty() => format!("wiki:{page}#{f}"),
            _ => format!("wiki:{page}"),
        }
    }

    /// Lines of item text go after the marker; later lines line up below it.
    fn flush_item_text(&mut self) {
        if self.lists.is_empty() || (self.inline.trim().is_empty() && self.pending_text.is_empty())
        {
            return;
        }
        self.flush_text();
        let text = std::mem::take(&mut self.inline);
        let Some(list) = self.lists.last_mut() else {
            return;
        };
        let content_indent = " ".repeat(list.indent + list.marker_width);
        let mut lines: Vec<String> = Vec::new();
        for (k, line) in text.trim().split('\n').enumerate() {
            let line = line.trim();
            if k == 0 && list.marker_pending {
                lines.push(format!(
                    "{}{}{}",
                    " ".repeat(list.indent),
                    list_marker(list),
                    line
                ));
                list.marker_pending = false;
            } else if k == 0 && list.has_text {
                // a further paragraph of the same item
                lines.push(guard_line_start(
                    &format!("{content_indent}[[BR]]{line}"),
                    true,
                ));
            } else {
                lines.push(guard_line_start(&format!("{content_indent}{line}"), true));
            }
        }
        list.has_text = true;
        for line in lines {
            self.emit(&line);
        }
    }

    fn emit_paragraph(&mut self) {
        let text = std::mem::take(&mut self.inline);
        for line in text.trim().split('\n') {
            let line = guard_line_start(line.trim(), false);
            if !line.is_empty() {
                self.emit(&line);
            }
        }
    }

    fn emit_code_block(&mut self, lang: Option<&str>, text: &str, line: usize) {
        self.line = line;
        let indent = self.content_indent();
        self.emit(&format!("{indent}{{{{{{"));
        if let Some(lang) = lang {
            match trac_processor(lang) {
                Some(p) => self.emit(&format!("{indent}#!{p}")),
                None if lang.is_empty() => {}
                None => self.issue(
                    "code",
                    format!("language {lang:?} is not a Trac processor; the code block has no language hint"),
                ),
            }
        }
        let mut closes = false;
        for l in text.strip_suffix('\n').unwrap_or(text).split('\n') {
            closes |= l.trim() == "}}}";
            let guarded = guard_block_line(l);
            self.emit(&format!("{indent}{guarded}"));
        }
        if closes {
            self.issue(
                "code",
                "a code line consisting of }}} was indented by one space to keep the block open"
                    .into(),
            );
        }
        self.emit(&format!("{indent}}}}}}}"));
        self.mark_item_has_text();
    }

    fn emit_html_block(&mut self, html: &str, line: usize) {
        self.line = line;
        let trimmed = html.trim();
        if let Some(comment) = trimmed
            .strip_prefix("<!--")
            .and_then(|c| c.strip_suffix("-->"))
        {
            self.emit("{{{#!comment");
            for l in comment.trim().lines() {
                self.emit(&guard_block_line(l));
            }
            self.emit("}}}");
            return;
        }
        self.issue(
            "html",
            "HTML block passed through as a {{{#!html}}} block (Trac sanitises it)".into(),
        );
        self.emit("{{{#!html");
        for l in trimmed.lines() {
            self.emit(&guard_block_line(l));
        }
        self.emit("}}}");
    }

    fn emit_table(&mut self, table: &TableCtx) {
        for (header, cells) in &table.rows {
            let mut line = String::new();
            for (k, cell) in cells.iter().enumerate() {
                if *header {
                    line.push_str(&format!("||= {cell} ="));
                } else {
                    let cell = match table.aligns.get(k) {
                        Some(Alignment::Left) => format!("{cell}  "),
                        Some(Alignment::Right) => format!("  {cell}"),
                        Some(Alignment::Center) => format!("  {cell}  "),
                        _ => format!(" {cell} "),
                    };
                    line.push_str("||");
                    line.push_str(&cell);
                }
            }
            line.push_str("||");
            let indent = self.content_indent();
            self.emit(&format!("{indent}{line}"));
        }
        self.mark_item_has_text();
    }

    fn mark_item_has_text(&mut self) {
        if let Some(list) = self.lists.last_mut() {
            list.has_text = true;
        }
    }

    /// Indentation for blocks nested in a list item.
    fn content_indent(&mut self) -> String {
        match self.lists.last_mut() {
            None => String::new(),
            Some(list) => {
                if list.marker_pending {
                    // a block as the first thing in an item: give the marker its own line
                    let marker = format!("{}{}", " ".repeat(list.indent), list_marker(list));
                    list.marker_pending = false;
                    let marker = marker.trim_end().to_string();
                    self.emit(&marker);
                }
                let list = self.lists.last().map_or(0, |l| l.indent + l.marker_width);
                " ".repeat(list)
            }
        }
    }

    /// Starts a block: separates it from the previous one by a blank line
    /// (outside lists, where a blank line would end the Trac list).
    fn block_start(&mut self) {
        if self.need_gap && self.lists.is_empty() && !self.out.is_empty() {
            let prefix = ">".repeat(self.quote_depth);
            self.out.push_str(&prefix);
            self.out.push('\n');
        }
        self.need_gap = false;
    }

    fn emit(&mut self, line: &str) {
        if self.quote_depth > 0 {
            self.out.push_str(&">".repeat(self.quote_depth));
            self.out.push(' ');
        }
        self.out.push_str(line);
        self.out.push('\n');
    }

    fn finish(mut self) -> Conversion {
        self.flush_text();
        if !self.inline.trim().is_empty() {
            self.emit_paragraph();
        }
        let mut text = self.out.trim_end().to_string();
        text.push('\n');
        if text.trim().is_empty() {
            text.clear();
        }
        Conversion {
            text,
            issues: self.issues,
        }
    }
}

fn heading_depth(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

fn list_marker(list: &ListCtx) -> String {
    if list.ordered {
        format!("{}. ", list.next_number)
    } else {
        "* ".to_string()
    }
}

/// A line inside `{{{ }}}`: only a line that is exactly `}}}` would end it.
fn guard_block_line(line: &str) -> String {
    if line.trim() == "}}}" {
        format!(" {line}")
    } else {
        line.to_string()
    }
}

fn has_scheme(dest: &str) -> bool {
    let scheme = dest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        .count();
    scheme > 1
        && dest.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && dest[scheme..].starts_with(':')
}

/// A link label as Trac reads it: up to the first `]`, or quoted.
fn quote_label(label: &str, fallback: &str) -> String {
    let label = if label.is_empty() { fallback } else { label };
    if !label.contains(']') {
        label.to_string()
    } else if !label.contains('"') {
        format!("\"{label}\"")
    } else {
        label.replace(']', ")")
    }
}

/// Markdown fence languages Trac 1.6 renders without Pygments (its built-in
/// MIME map), mapped to the processor name Trac accepts.
fn trac_processor(lang: &str) -> Option<&'static str> {
    let lang = lang.to_ascii_lowercase();
    Some(match lang.as_str() {
        "python" | "py" | "python3" => "python",
        "sh" | "bash" | "shell" | "console" | "shell-session" => "sh",
        "zsh" => "zsh",
        "ksh" => "ksh",
        "csh" => "csh",
        "js" | "javascript" | "jsx" | "node" | "mjs" => "js",
        "html" | "htm" | "xhtml" => "text/html",
        "xml" | "xsl" | "xslt" | "svg" => "xml",
        "css" => "css",
        "c" => "c",
        "h" => "h",
        "cpp" | "c++" | "cc" | "cxx" => "cpp",
        "hpp" | "hh" | "hxx" => "hpp",
        "cs" | "csharp" | "c#" => "cs",
        "java" => "java",
        "rb" | "ruby" => "rb",
        "perl" | "pl" => "perl",
        "php" => "php",
        "sql" => "sql",
        "diff" | "patch" => "diff",
        "yaml" | "yml" => "yaml",
        "ini" | "cfg" => "ini",
        "make" | "makefile" | "mk" => "make",
        "haskell" | "hs" => "hs",
        "lua" => "lua",
        "tex" | "latex" => "tex",
        "tcl" => "tcl",
        "awk" => "awk",
        "rst" => "rst",
        "fortran" | "f" => "fortran",
        "pascal" | "pas" => "pascal",
        "ocaml" | "ml" => "ocaml",
        "objc" | "objective-c" => "objc",
        "scheme" | "scm" => "scheme",
        "elisp" | "emacs-lisp" | "el" => "elisp",
        "vb" | "vba" | "vbnet" => "vba",
        "verilog" | "v" => "verilog",
        "vhdl" => "vhdl",
        "asm" | "nasm" => "asm",
        "ada" => "ada",
        "apache" | "apacheconf" => "apache",
        "nginx" => "nginx",
        "bat" | "batch" | "cmd" | "dos" => "bat",
        "text" | "txt" | "plain" | "plaintext" => return None,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(md: &str) -> String {
        markdown_to_tracwiki(md).text
    }

    #[test]
    fn headings_and_paragraphs() {
        assert_eq!(
            convert("# Title\n\nSome *em* and **strong** and `code`.\n\n### Three\n"),
            "= Title =\n\nSome ''em'' and '''strong''' and `code`.\n\n=== Three ===\n"
        );
    }

    #[test]
    fn nested_and_ordered_lists() {
        let md = "- a\n- b\n  - b1\n  - b2\n    1. x\n    2. y\n- c\n\n3. three\n4. four\n";
        assert_eq!(
            convert(md),
            " * a\n * b\n   * b1\n   * b2\n     1. x\n     2. y\n * c\n\n 3. three\n 4. four\n"
        );
    }

    #[test]
    fn loose_list_items_stay_in_one_trac_list() {
        let md = "* one\n\n  more of one\n\n* two\n";
        assert_eq!(convert(md), " * one\n   [[BR]]more of one\n * two\n");
    }

    #[test]
    fn links_of_every_kind() {
        let md = "[site](<https://example.org/a b>) [page](Other.md#sec) [top](#intro) <https://x.org> <me@x.org> [f](doc.pdf)";
        let c = markdown_to_tracwiki(md);
        assert_eq!(
            c.text,
            "[https://example.org/a%20b site] [wiki:Other#sec page] [#intro top] [https://x.org] [mailto:me@x.org me@x.org] [wiki:doc.pdf f]\n"
        );
        assert_eq!(c.issues.len(), 1);
        assert_eq!(c.issues[0].construct, "link");
    }

    #[test]
    fn code_blocks_with_and_without_known_language() {
        let c = markdown_to_tracwiki(
            "```python\nprint(1)\n}}}\n```\n\n```rust\nfn main() {}\n```\n\n    indented\n",
        );
        assert_eq!(
            c.text,
            "{{{\n#!python\nprint(1)\n }}}\n}}}\n\n{{{\nfn main() {}\n}}}\n\n{{{\nindented\n}}}\n"
        );
        let constructs: Vec<&str> = c.issues.iter().map(|i| i.construct.as_str()).collect();
        assert_eq!(constructs, ["code", "code"]);
        assert_eq!(c.issues[1].line, 6);
    }

    #[test]
    fn tables_with_alignment() {
        let md = "| a | b | c |\n|:--|--:|:-:|\n| 1 | 2 | 3 |\n";
        assert_eq!(
            convert(md),
            "||= a =||= b =||= c =||\n||1  ||  2||  3  ||\n"
        );
    }

    #[test]
    fn quotes_rules_breaks_tasks() {
        assert_eq!(
            convert("> quoted\n> > deeper\n"),
            "> quoted\n>\n>> deeper\n"
        );
        assert_eq!(convert("a\n\n---\n\nb  \nc\n"), "a\n\n----\n\nb[[BR]]\nc\n");
        assert_eq!(
            convert("- [ ] todo\n- [x] done\n"),
            " * [ ] todo\n * [x] done\n"
        );
    }

    #[test]
    fn unconvertible_things_are_reported() {
        let c = markdown_to_tracwiki(
            "![logo](img/logo.png)\n\n<div>x</div>\n\nText<kbd>k</kbd>\n\nnote[^1]\n\n[^1]: the note\n",
        );
        let constructs: Vec<&str> = c.issues.iter().map(|i| i.construct.as_str()).collect();
        assert!(
            constructs.contains(&"image")
                && constructs.contains(&"html")
                && constructs.contains(&"footnote"),
            "{c:?}"
        );
        assert!(
            c.text
                .starts_with("[[Image(img/logo.png, alt=logo)]]\n\n{{{#!html\n<div>x</div>\n}}}\n"),
            "{}",
            c.text
        );
        assert_eq!(c.issues[0].line, 1);
    }

    #[test]
    fn plain_text_is_escaped_and_emphasis_kept_apart() {
        assert_eq!(
            convert("Use JavaScript, see #12.\n"),
            "Use !JavaScript, see !#12.\n"
        );
        assert_eq!(convert("*'quoted'*\n"), "''\u{200B}'quoted'\u{200B}''\n");
        assert_eq!(convert("***both***\n"), "''\u{200B}'''both'''\u{200B}''\n");
    }

    #[test]
    fn empty_input_gives_empty_output() {
        assert_eq!(markdown_to_tracwiki("").text, "");
        assert_eq!(markdown_to_tracwiki("\n\n").issues, vec![]);
    }
}
