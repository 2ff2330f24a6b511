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
/// - [`ScopeMap::parse`] / [`ScopeMap::from_file`]: a mapping file of UTF-8 lines
///   `SCOPE = PERMISSION…`: a scope, `=` (a word of its own), then the permissions it grants
///   (none after `=`: the scope is known and grants nothing); `#` starts a comment, blank lines
///   are ignored, each scope has one line. Any other line is refused with its line number. A
///   scope the file does not list grants nothing.
/// - [`ScopeMap::from_fn`]: any function of the scopes and the token's claims.
///
/// ```
/// use mcp_toolbelt::server::oauth::ScopeMap;
/// let map = ScopeMap::parse(concat!(
///     "# scope        permissions\n",
///     "notes:read  =  NOTE_VIEW\n",
///     "notes:write =  NOTE_VIEW NOTE_EDIT\n",
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
    /// let err = mcp_toolbelt::server::oauth::ScopeMap::parse("a = X\na = Y\n").unwrap_err();
    /// assert!(err.to_string().contains("line 2"));
    /// let err = mcp_toolbelt::server::oauth::ScopeMap::parse("lorem ipsum dolor sit amet\n").unwrap_err();
    /// assert!(err.to_string().starts_with("line 1: \"ipsum\" follows the scope"));
    /// ```
    pub fn parse(text: &str) -> Result<ScopeMap, ScopeMapError> {
        parse(text, None)
    }

    /// Read and [`parse`](Self::parse) a mapping file.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("scope-map-doc-{}", std::process::id()));
    /// std::fs::write(&path, "notes:read = NOTE_VIEW\n").unwrap();
    /// let map = mcp_toolbelt::server::oauth::ScopeMap::from_file(&path).unwrap();
    /// assert!(map.permissions(&["notes:read".into()], &Default::default()).contains("NOTE_VIEW"));
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<ScopeMap, ScopeMapError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| ScopeMapError::Read {
            path: path.to_path_buf(),
            source: Arc::new(source),
        })?;
        parse(&utf8(bytes, path)?, Some(path))
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
    /// let map = mcp_toolbelt::server::oauth::ScopeMap::parse("b = P\na = Q\n").unwrap();
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

    /// A mapping file's scopes and the permissions each grants, sorted by scope; empty for the
    /// identity and function maps.
    pub(crate) fn grants(&self) -> Vec<(&str, &[String])> {
        let mut grants: Vec<(&str, &[String])> = match &self.rule {
            Rule::Table(table) => table
                .iter()
                .map(|(scope, names)| (scope.as_str(), names.as_slice()))
                .collect(),
            Rule::Identity | Rule::Function(_) => Vec::new(),
        };
        grants.sort();
        grants
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
    /// let map = ScopeMap::parse("notes:read = NOTE_VIEW\nnotes:write = NOTE_VIEW NOTE_EDIT\n").unwrap();
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
    /// let map = mcp_toolbelt::server::oauth::ScopeMap::parse("s = P Q\n").unwrap();
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

/// The word between a scope and the permissions it grants.
const GRANTS: &str = "=";

/// What a line of a mapping file looks like, for error messages.
const LINE_FORMAT: &str = "write `SCOPE = PERMISSION…` (a scope, `=`, then the permissions \
                           it grants, separated by spaces; nothing after `=` grants none)";

/// At most this much of a word from the file is quoted back in an error.
const QUOTED: usize = 64;

fn shown(word: &str) -> String {
    word.chars().take(QUOTED).collect()
}

/// Decode a mapping file's bytes: the text, or the error naming the line of the first
/// byte that is not UTF-8.
fn utf8(bytes: Vec<u8>, path: &Path) -> Result<String, ScopeMapError> {
    String::from_utf8(bytes).map_err(|err| {
        let valid = &err.as_bytes()[..err.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = valid.len() - valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        ScopeMapError::Syntax {
            where_: format!("{}: ", path.display()),
            line,
            problem: format!("byte {column} of this line is not UTF-8; a scope map is UTF-8 text"),
        }
    })
}

fn parse(text: &str, path: Option<&Path>) -> Result<ScopeMap, ScopeMapError> {
    let where_ = path.map_or_else(String::new, |p| format!("{}: ", p.display()));
    let syntax = |line: usize, problem: String| ScopeMapError::Syntax {
        where_: where_.clone(),
        line,
        problem,
    };
    let mut table = HashMap::new();
    for (line, _, words) in crate::lines::entries(text) {
        let (scope, rest) = (words[0], &words[1..]);
        if scope == GRANTS {
            return Err(syntax(
                line,
                format!("the line starts with `=` where a scope belongs; {LINE_FORMAT}"),
            ));
        }
        // RFC 6749 scope-token: %x21 / %x23-5B / %x5D-7E
        if !scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
        {
            return Err(syntax(
                line,
                format!(
                    "{:?} is not a scope: use printable ASCII without '\"' and '\\'",
                    shown(scope)
                ),
            ));
        }
        let Some((&GRANTS, permissions)) = rest.split_first() else {
            let problem = match rest.first() {
                None => format!("the scope {:?} is alone on its line", shown(scope)),
                Some(word) => format!(
                    "{:?} follows the scope {:?} where `=` belongs",
                    shown(word),
                    shown(scope)
                ),
            };
            return Err(syntax(line, format!("{problem}; {LINE_FORMAT}")));
        };
        let mut names = Vec::new();
        for &name in permissions {
            if !crate::lines::is_permission_name(name) {
                return Err(syntax(
                    line,
                    format!(
                        "{:?} is not a permission name; use ASCII letters, digits, '_', '-', '.' and ':'",
                        shown(name)
                    ),
                ));
            }
            names.push(name.to_string());
        }
        if table.insert(scope.to_string(), names).is_some() {
            return Err(syntax(
                line,
                format!(
                    "scope {:?} is already listed on an earlier line; give each scope one line",
                    shown(scope)
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
        let map = ScopeMap::parse("a = X Y # comment\n\n  b = Y Z\nempty =\n").unwrap();
        let got = map.permissions(
            &["a".into(), "b".into(), "c".into(), "empty".into()],
            &none(),
        );
        let mut names: Vec<_> = got.names().collect();
        names.sort();
        assert_eq!(names, ["X", "Y", "Z"]);
        assert_eq!(map.listed_scopes(), ["a", "b", "empty"]);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let err = ScopeMap::parse("ok = P\nbad\"scope = P\n").unwrap_err();
        assert!(err.to_string().starts_with("line 2: "), "{err}");
        let err = ScopeMap::parse("s = P!\n").unwrap_err();
        assert!(err.to_string().contains("not a permission name"), "{err}");
    }

    /// Issue 32: prose is not a mapping (its words became scopes and permissions).
    #[test]
    fn lines_without_the_equals_sign_are_refused() {
        for (text, line, problem) in [
            (
                "lorem ipsum dolor sit amet\n",
                1,
                "\"ipsum\" follows the scope \"lorem\" where `=` belongs",
            ),
            (
                "a = P\n# prose below\nlorem\n",
                3,
                "the scope \"lorem\" is alone on its line",
            ),
            (
                "a P\n",
                1,
                "\"P\" follows the scope \"a\" where `=` belongs",
            ),
            ("a=P\n", 1, "the scope \"a=P\" is alone on its line"),
            ("= P\n", 1, "the line starts with `=`"),
            ("a = P = Q\n", 1, "\"=\" is not a permission name"),
        ] {
            let err = ScopeMap::parse(text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("line {line}: {problem}")),
                "{text:?}: {err}"
            );
            assert!(
                problem.contains("permission name") || err.contains("SCOPE = PERMISSION"),
                "{err}"
            );
        }
    }

    #[test]
    fn file_errors_name_the_path_and_line() {
        let dir = std::env::temp_dir().join(format!("scope-map-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.map");
        let err = ScopeMap::from_file(&missing).unwrap_err().to_string();
        assert!(err.contains(&missing.display().to_string()), "{err}");
        let prose = dir.join("prose.map");
        std::fs::write(&prose, "lorem ipsum dolor sit amet\n").unwrap();
        let err = ScopeMap::from_file(&prose).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}: line 1: ", prose.display())),
            "{err}"
        );
        let latin1 = dir.join("latin1.map");
        std::fs::write(&latin1, b"a = P\n# caf\xe9\n").unwrap();
        let err = ScopeMap::from_file(&latin1).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "{}: line 2: byte 6 of this line is not UTF-8",
                latin1.display()
            )),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
