//! URI templates for resource families (RFC 6570 level 1 and reserved expansion):
//! `{name}` matches one path segment (no `/`, `?` or `#`), `{+name}` matches any non-empty
//! text including `/`. Matched values are percent-decoded.

use std::collections::HashSet;
use std::fmt;

use crate::definition::params::Params;

/// The longest URI matched against templates; longer ones match nothing.
const MAX_URI_LEN: usize = 4 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Variable { name: String, reserved: bool },
}

/// A parsed URI template such as `trac://wiki/{+name}` or `test://template/{id}/data`.
///
/// ```
/// use mcp_toolbelt::definition::UriTemplate;
/// let template = UriTemplate::parse("trac://wiki/{+name}").unwrap();
/// assert_eq!(template.variables().collect::<Vec<_>>(), ["name"]);
/// let params = template.matches("trac://wiki/Guide/Install%20Notes").unwrap();
/// assert_eq!(params.get("name"), Some("Guide/Install Notes"));
/// assert!(template.matches("trac://ticket/1").is_none());
///
/// let segment = UriTemplate::parse("test://template/{id}/data").unwrap();
/// assert_eq!(segment.matches("test://template/123/data").unwrap().get("id"), Some("123"));
/// assert!(segment.matches("test://template/1/2/data").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

/// Why a URI template could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template {template:?}: {problem}")]
pub struct UriTemplateError {
    template: String,
    problem: String,
}

impl UriTemplateError {
    /// The template as given.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// What is wrong and how to fix it.
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

impl UriTemplate {
    /// Parse `template`. Fails on a missing scheme, unbalanced braces, unsupported
    /// operators (`{?q}`, `{#f}`, `{a,b}`, `{x*}`, `{x:3}`), repeated names, two variables
    /// with nothing between them, or no variable at all.
    pub fn parse(template: &str) -> Result<UriTemplate, UriTemplateError> {
        let fail = |problem: String| UriTemplateError {
            template: template.to_string(),
            problem,
        };
        if !has_scheme(template) {
            return Err(fail(
                "it does not start with a URI scheme such as `myapp://`".into(),
            ));
        }
        let mut parts = Vec::new();
        let mut names = HashSet::new();
        let mut literal = String::new();
        let mut chars = template.char_indices();
        while let Some((at, c)) = chars.next() {
            match c {
                '}' => return Err(fail(format!("unmatched `}}` at byte {at}"))),
                '{' => {
                    let expression: String = chars
                        .by_ref()
                        .map(|(_, c)| c)
                        .take_while(|c| *c != '}')
                        .collect();
                    if !template[at..].contains('}') {
                        return Err(fail("unclosed `{`".into()));
                    }
                    let (name, reserved) = match expression.strip_prefix('+') {
                        Some(name) => (name, true),
                        None => (expression.as_str(), false),
                    };
                    if name.is_empty()
                        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        return Err(fail(format!(
                            "`{{{expression}}}` is not supported; use `{{name}}` or `{{+name}}` with a name of ASCII letters, digits and `_`"
                        )));
                    }
                    if !names.insert(name.to_string()) {
                        return Err(fail(format!("the variable `{name}` appears twice")));
                    }
                    if literal.is_empty() && matches!(parts.last(), Some(Part::Variable { .. })) {
                        return Err(fail(
                            "two variables touch; put a literal such as `/` between them".into(),
                        ));
                    }
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(Part::Variable {
                        name: name.to_string(),
                        reserved,
                    });
                }
                other => literal.push(other),
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        if names.is_empty() {
            return Err(fail(
                "it has no `{variable}`; a single resource has a plain URI".into(),
            ));
        }
        Ok(UriTemplate {
            source: template.to_string(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Variable { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables' (percent-decoded) values when `uri` is an instance of this template.
    pub fn matches(&self, uri: &str) -> Option<Params> {
        if uri.len() > MAX_URI_LEN {
            return None;
        }
        let mut spans = Vec::new();
        let mut failed = HashSet::new();
        if !self.match_from(uri, 0, 0, &mut spans, &mut failed) {
            return None;
        }
        let mut params = Params::new();
        for (name, start, end) in spans {
            params.insert(name, percent_decode(&uri[start..end])?);
        }
        Some(params)
    }

    /// Match parts `index..` against `uri[at..]`, recording variable spans; remembers failed
    /// `(index, at)` pairs so the search stays polynomial.
    fn match_from<'a>(
        &'a self,
        uri: &str,
        index: usize,
        at: usize,
        spans: &mut Vec<(&'a str, usize, usize)>,
        failed: &mut HashSet<(usize, usize)>,
    ) -> bool {
        let Some(part) = self.parts.get(index) else {
            return at == uri.len();
        };
        if failed.contains(&(index, at)) {
            return false;
        }
        let found = match part {
            Part::Literal(text) => {
                uri[at..].starts_with(text.as_str())
                    && self.match_from(uri, index + 1, at + text.len(), spans, failed)
            }
            Part::Variable { name, reserved } => {
                let rest = &uri[at..];
                // A plain variable stops at the first '/', '?' or '#'.
                let limit = if *reserved {
                    rest.len()
                } else {
                    rest.find(['/', '?', '#']).unwrap_or(rest.len())
                };
                let next = match self.parts.get(index + 1) {
                    Some(Part::Literal(text)) => Some(text.as_str()),
                    _ => None,
                };
                let mut found = false;
                for end in 1..=limit {
                    let fits = rest.is_char_boundary(end)
                        && match next {
                            Some(text) => rest[end..].starts_with(text),
                            None => end == rest.len(),
                        };
                    if !fits {
                        continue;
                    }
                    spans.push((name.as_str(), at, at + end));
                    if self.match_from(uri, index + 1, at + end, spans, failed) {
                        found = true;
                        break;
                    }
                    spans.pop();
                }
                found
            }
        };
        if !found {
            failed.insert((index, at));
        }
        found
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// True when `uri` starts with `scheme:` (RFC 3986: a letter, then letters, digits, `+-.`).
pub(crate) fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Decode `%XX` escapes; `None` when an escape is malformed or the result is not UTF-8.
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(template: &str) -> String {
        UriTemplate::parse(template).unwrap_err().problem
    }

    #[test]
    fn rejects_bad_templates_with_reasons() {
        assert!(problem("wiki/{name}").contains("scheme"));
        assert!(problem("x://{a").contains("unclosed"));
        assert!(problem("x://a}").contains("unmatched"));
        assert!(problem("x://{?q}").contains("not supported"));
        assert!(problem("x://{a,b}").contains("not supported"));
        assert!(problem("x://{a}/{a}").contains("twice"));
        assert!(problem("x://{a}{b}").contains("touch"));
        assert!(problem("x://plain").contains("no `{variable}`"));
    }

    #[test]
    fn matches_with_literals_between() {
        let t = UriTemplate::parse("x://{owner}/{+path}.md").unwrap();
        let p = t.matches("x://me/docs/a.b.md").unwrap();
        assert_eq!(p.get("owner"), Some("me"));
        assert_eq!(p.get("path"), Some("docs/a.b"));
        assert!(t.matches("x://me/.md").is_none(), "variables are not empty");
        assert!(t.matches("x://me/a%ZZ.md").is_none(), "bad escape");
        assert_eq!(
            t.matches("x://%C3%A9/p.md").unwrap().get("owner"),
            Some("é")
        );
    }

    #[test]
    fn pathological_input_stays_fast() {
        let t = UriTemplate::parse("x://{+a}-{+b}-{+c}-{+d}!").unwrap();
        let uri = format!("x://{}", "-".repeat(4000));
        assert!(t.matches(&uri).is_none());
    }
}
