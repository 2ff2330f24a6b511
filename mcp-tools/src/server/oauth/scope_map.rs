//! [`ScopeMap`]: how the scopes (and claims) of a verified access token become the caller's
//! [`PermissionSet`].

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::permissions::PermissionSet;

type MapFn = dyn Fn(&[String], &Map<String, Value>) -> PermissionSet + Send + Sync;

/// Turns a token's scopes into permissions.
///
/// Three ways, one type:
/// - [`ScopeMap::identity`] (the default): each scope names a permission of the same name.
/// - [`ScopeMap::parse`] / [`ScopeMap::from_file`]: a mapping file, one scope per line followed by
///   the permissions it grants (`#` starts a comment, blank lines are ignored). A scope the file
///   does not list grants nothing.
/// - [`ScopeMap::from_fn`]: any function of the scopes and the token's claims.
///
/// ```
/// use mcp_toolbelt::server::oauth::ScopeMap;
/// let map = ScopeMap::parse(concat!(
///     "# scope        permissions\n",
///     "notes:read     NOTE_VIEW\n",
///     "notes:write    NOTE_VIEW NOTE_EDIT\n",
/// )).unwrap();
/// let granted = map.permissions(&["notes:write".into(), "other".into()], &Default::default());
/// assert!(granted.contains("NOTE_EDIT") && !granted.contains("other"));
/// assert!(ScopeMap::identity().permissions(&["other".into()], &Default::default()).contains("other"));
/// ```
#[derive(Clone, Default)]
pub struct ScopeMap {
    rule: Rule,
}

#[derive(Clone, Default)]
enum Rule {
    #[default]
    Identity,
    Table(Arc<HashMap<String, Vec<String>>>),
    Function(Arc<MapFn>),
}

impl fmt::Debug for ScopeMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.rule {
            Rule::Identity => f.write_str("ScopeMap::identity"),
            Rule::Table(table) => f
                .debug_struct("ScopeMap")
                .field("scopes", &table.len())
                .finish(),
            Rule::Function(_) => f.write_str("ScopeMap::from_fn"),
        }
    }
}

/// Why a scope-map file could not be used; names the file and line.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ScopeMapError {
    /// The file could not be read.
    #[error("cannot read scope map {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// A line is not `scope permission…`.
    #[error("{where_}line {line}: {problem}")]
    Syntax {
        /// `path: ` when the text came from a file, empty otherwise.
        where_: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong, and how to fix it.
        problem: String,
    },
}

impl ScopeMap {
    /// Each scope names the permission of the same name.
    ///
    /// ```
    /// let map = mcp_toolbelt::server::oauth::ScopeMap::identity();
    /// assert!(map.permissions(&["WIKI_VIEW".into()], &Default::default()).contains("WIKI_VIEW"));
    /// ```
    pub fn identity() -> ScopeMap {
        ScopeMap::default()
    }

    /// Parse the mapping-file format (see the type's docs).
    ///
    /// ```
    /// let err = mcp_toolbelt::server::oauth::ScopeMap::parse("a X\na Y\n").unwrap_err();
    /// assert!(err.to_string().contains("line 2"));
    /// ```
    pub fn parse(text: &str) -> Result<ScopeMap, ScopeMapError> {
        parse(text, None)
    }

    /// Read and [`parse`](Self::parse) a mapping file.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("scope-map-doc-{}", std::process::id()));
    /// std::fs::write(&path, "notes:read NOTE_VIEW\n").unwrap();
    /// let map = mcp_toolbelt::server::oauth::ScopeMap::from_file(&path).unwrap();
    /// assert!(map.permissions(&["notes:read".into()], &Default::default()).contains("NOTE_VIEW"));
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<ScopeMap, ScopeMapError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScopeMapError::Read {
            path: path.to_path_buf(),
            source: Arc::new(source),
        })?;
        parse(&text, Some(path))
    }

    /// Any rule written in code, given the token's scopes and all its claims.
    ///
    /// ```
    /// use mcp_toolbelt::{PermissionSet, server::oauth::ScopeMap};
    /// // Only the "ops" client may administer, whatever its scopes say.
    /// let map = ScopeMap::from_fn(|scopes, claims| {
    ///     let ops = claims.get("client_id").and_then(|c| c.as_str()) == Some("ops");
    ///     scopes.iter().filter(|s| ops || *s != "admin").collect::<PermissionSet>()
    /// });
    /// assert!(!map.permissions(&["admin".into()], &Default::default()).contains("admin"));
    /// ```
    pub fn from_fn<F>(rule: F) -> ScopeMap
    where
        F: Fn(&[String], &Map<String, Value>) -> PermissionSet + Send + Sync + 'static,
    {
        ScopeMap {
            rule: Rule::Function(Arc::new(rule)),
        }
    }

    /// The scopes a mapping file lists, sorted (for `scopes_supported`); empty for
    /// [`identity`](Self::identity) and [`from_fn`](Self::from_fn), which take any scope.
    ///
    /// ```
    /// let map = mcp_toolbelt::server::oauth::ScopeMap::parse("b P\na Q\n").unwrap();
    /// assert_eq!(map.listed_scopes(), ["a", "b"]);
    /// ```
    pub fn listed_scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = match &self.rule {
            Rule::Table(table) => table.keys().cloned().collect(),
            Rule::Identity | Rule::Function(_) => Vec::new(),
        };
        scopes.sort();
        scopes
    }

    /// True for [`identity`](Self::identity).
    pub(crate) fn is_identity(&self) -> bool {
        matches!(self.rule, Rule::Identity)
    }

    /// Scopes that together grant every one of `permissions` (sorted; for a step-up
    /// `insufficient_scope` answer): with the identity map the permissions themselves; with a
    /// mapping file, for each permission the scope granting it with the fewest other
    /// permissions; `None` when some permission no listed scope grants, or for a function map
    /// (which cannot be inverted).
    ///
    /// ```
    /// use mcp_toolbelt::server::oauth::ScopeMap;
    /// let map = ScopeMap::parse("notes:read NOTE_VIEW\nnotes:write NOTE_VIEW NOTE_EDIT\n").unwrap();
    /// assert_eq!(map.scopes_granting(&["NOTE_EDIT"]), Some(vec!["notes:write".to_string()]));
    /// assert_eq!(map.scopes_granting(&["NOTE_VIEW"]), Some(vec!["notes:read".to_string()]));
    /// assert_eq!(map.scopes_granting(&["OTHER"]), None);
    /// assert_eq!(ScopeMap::identity().scopes_granting(&["P"]), Some(vec!["P".to_string()]));
    /// ```
    pub fn scopes_granting(&self, permissions: &[&str]) -> Option<Vec<String>> {
        let mut scopes: Vec<String> = match &self.rule {
            Rule::Identity => permissions.iter().map(|p| p.to_string()).collect(),
            Rule::Table(table) => permissions
                .iter()
                .map(|permission| {
                    table
                        .iter()
                        .filter(|(_, granted)| granted.iter().any(|g| g == permission))
                        .min_by(|a, b| a.1.len().cmp(&b.1.len()).then(a.0.cmp(b.0)))
                        .map(|(scope, _)| scope.clone())
                })
                .collect::<Option<_>>()?,
            Rule::Function(_) => return None,
        };
        scopes.sort();
        scopes.dedup();
        Some(scopes)
    }

    /// The permissions granted by `scopes` (the token's `scope` claim, split on spaces) and the
    /// token's `claims`.
    ///
    /// ```
    /// let map = mcp_toolbelt::server::oauth::ScopeMap::parse("s P Q\n").unwrap();
    /// assert_eq!(map.permissions(&["s".into()], &Default::default()).len(), 2);
    /// ```
    pub fn permissions(&self, scopes: &[String], claims: &Map<String, Value>) -> PermissionSet {
        match &self.rule {
            Rule::Identity => scopes.iter().collect(),
            Rule::Table(table) => scopes
                .iter()
                .filter_map(|scope| table.get(scope))
                .flatten()
                .collect(),
            Rule::Function(rule) => rule(scopes, claims),
        }
    }
}

fn parse(text: &str, path: Option<&Path>) -> Result<ScopeMap, ScopeMapError> {
    let where_ = path.map_or_else(String::new, |p| format!("{}: ", p.display()));
    let syntax = |line: usize, problem: String| ScopeMapError::Syntax {
        where_: where_.clone(),
        line,
        problem,
    };
    let mut table = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.split('#').next().unwrap_or("");
        let mut words = content.split_whitespace();
        let Some(scope) = words.next() else { continue };
        // RFC 6749 scope-token: %x21 / %x23-5B / %x5D-7E
        if !scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
        {
            return Err(syntax(
                line,
                format!("{scope:?} is not a scope: use printable ASCII without '\"' and '\\'"),
            ));
        }
        let mut names = Vec::new();
        for name in words {
            if !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b))
            {
                return Err(syntax(
                    line,
                    format!(
                        "{name:?} is not a permission name; use ASCII letters, digits, '_', '-', '.' and ':'"
                    ),
                ));
            }
            names.push(name.to_string());
        }
        if table.insert(scope.to_string(), names).is_some() {
            return Err(syntax(
                line,
                format!(
                    "scope {scope:?} is already listed on an earlier line; give each scope one line"
                ),
            ));
        }
    }
    Ok(ScopeMap {
        rule: Rule::Table(Arc::new(table)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> Map<String, Value> {
        Map::new()
    }

    #[test]
    fn table_grants_only_listed_scopes_and_unions_them() {
        let map = ScopeMap::parse("a X Y # comment\n\n  b Y Z\nempty\n").unwrap();
        let got = map.permissions(
            &["a".into(), "b".into(), "c".into(), "empty".into()],
            &none(),
        );
        let mut names: Vec<_> = got.names().collect();
        names.sort();
        assert_eq!(names, ["X", "Y", "Z"]);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let err = ScopeMap::parse("ok P\nbad\"scope P\n").unwrap_err();
        assert!(err.to_string().starts_with("line 2: "), "{err}");
        let err = ScopeMap::parse("s P!\n").unwrap_err();
        assert!(err.to_string().contains("not a permission name"), "{err}");
    }
}
