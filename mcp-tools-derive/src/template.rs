//! Compile-time checks of resource URIs and URI templates. The runtime (`mcp_toolbelt`'
//! `uri_template.rs`) parses and matches templates with the same rules; this side only
//! needs the variable names and a precise message for each mistake.

/// The problem with a fixed resource URI, if any.
pub fn uri_problem(uri: &str) -> Option<String> {
    if let Some(problem) = scheme_problem(uri) {
        return Some(problem);
    }
    uri.contains(['{', '}']).then(|| {
        "this URI has `{...}` in it; a URI with variables is a template: write `uri_template = \"...\"`"
            .to_string()
    })
}

/// The variable names of a URI template (`{name}`, or `{+name}` which may contain `/`), in
/// order; or what is wrong with it.
pub fn variables(template: &str) -> Result<Vec<String>, String> {
    if let Some(problem) = scheme_problem(template) {
        return Err(problem);
    }
    let mut names: Vec<String> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err(format!(
                "unmatched `}}` at byte {} of the URI template",
                template.len() - rest.len() + open
            ));
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| "unclosed `{` in the URI template; close it with `}`".to_string())?;
        let expression = &after[..close];
        let name = expression.strip_prefix('+').unwrap_or(expression);
        if name.is_empty() {
            return Err("empty `{}` in the URI template; name the variable, e.g. `{id}`".into());
        }
        if let Some(bad) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
        {
            return Err(format!(
                "`{{{expression}}}`: {bad:?} is not supported in a template variable; use `{{name}}` (one path segment) or `{{+name}}` (may contain `/`), with a name of ASCII letters, digits and `_`"
            ));
        }
        if names.iter().any(|n| n == name) {
            return Err(format!(
                "the variable `{name}` appears twice in the URI template; use each name once"
            ));
        }
        names.push(name.to_string());
        rest = &after[close + 1..];
        if rest.starts_with('{') {
            return Err(
                "two template variables touch (`{a}{b}`), so a URI cannot be split between them; put a literal such as `/` between them"
                    .to_string(),
            );
        }
    }
    if names.is_empty() {
        return Err(
            "this URI template has no `{variable}`; for a single resource write `uri = \"...\"`"
                .to_string(),
        );
    }
    Ok(names)
}

/// URIs and templates must start with a scheme (`trac:`, `file:`, `https:`…).
fn scheme_problem(uri: &str) -> Option<String> {
    let scheme = uri.split_once(':').map(|(scheme, _)| scheme).unwrap_or("");
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (!valid).then(|| {
        format!(
            "{uri:?} does not start with a URI scheme; write it like \"myapp://path\" or \"file:///path\""
        )
    })
}
