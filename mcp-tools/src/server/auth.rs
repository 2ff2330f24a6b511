//! Bearer tokens for HTTP callers: a [`TokenResolver`] maps a token to the caller's
//! [`PermissionSet`]; [`TokenTable`] is the resolver read from a tokens file.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::private_file::{self, ExposedFile};
use crate::permissions::PermissionSet;

/// Maps a bearer token to the permissions of the caller presenting it.
///
/// Called once per HTTP request, before the request reaches the MCP layer; `None` means
/// the token is unknown and the request gets `401 Unauthorized`. Keep it fast (look up a
/// table, or cache what an external check returned).
///
/// Any `Fn(&str) -> Option<PermissionSet>` closure is a resolver:
///
/// ```
/// use mcp_tools::{PermissionSet, server::TokenResolver};
/// let resolver = |token: &str| (token == "s3cret").then(|| PermissionSet::new(["WIKI_VIEW"]));
/// assert!(resolver.resolve("s3cret").unwrap().contains("WIKI_VIEW"));
/// assert!(resolver.resolve("guess").is_none());
/// ```
pub trait TokenResolver: Send + Sync + 'static {
    /// The permissions of the caller holding `token`, or `None` for an unknown token.
    fn resolve(&self, token: &str) -> Option<PermissionSet>;
}

impl<F> TokenResolver for F
where
    F: Fn(&str) -> Option<PermissionSet> + Send + Sync + 'static,
{
    fn resolve(&self, token: &str) -> Option<PermissionSet> {
        self(token)
    }
}

/// A fixed table of bearer tokens and their permissions, usually read from a tokens file.
///
/// File format: one token per line followed by the permissions it grants, separated by
/// whitespace; `#` starts a comment; blank lines are ignored. A token alone on its line
/// grants no permission (only tools that need none). Tokens use the RFC 6750 characters
/// (`A-Z a-z 0-9 - . _ ~ + /`, then optional `=` padding); permission names follow the
/// permissions-file rules.
///
/// ```
/// use mcp_tools::server::{TokenResolver, TokenTable};
/// let table = TokenTable::parse(concat!(
///     "# agents\n",
///     "reader-7f3a   TICKET_VIEW WIKI_VIEW\n",
///     "admin-91bc    TICKET_VIEW TICKET_ADMIN   # full access\n",
/// )).unwrap();
/// assert_eq!(table.len(), 2);
/// assert!(table.resolve("admin-91bc").unwrap().contains("TICKET_ADMIN"));
/// assert!(table.resolve("nobody").is_none());
/// ```
#[derive(Clone, Default)]
pub struct TokenTable {
    tokens: Arc<HashMap<String, PermissionSet>>,
}

impl fmt::Debug for TokenTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the tokens themselves.
        f.debug_struct("TokenTable")
            .field("tokens", &self.tokens.len())
            .finish()
    }
}

/// Why a tokens file could not be used; names the file and line.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TokensFileError {
    /// The file could not be read.
    #[error("cannot read tokens file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// Group or other users have some access to the file: the tokens are secrets, so the
    /// file is refused until only its owner can read it.
    #[error(transparent)]
    Exposed(ExposedFile),
    /// A line is not `token permission…`.
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

impl TokenTable {
    /// Parse the tokens file format (see the type's docs).
    ///
    /// ```
    /// let err = mcp_tools::server::TokenTable::parse("tok A\ntok B\n").unwrap_err();
    /// assert!(err.to_string().contains("line 2"));
    /// ```
    pub fn parse(text: &str) -> Result<TokenTable, TokensFileError> {
        parse(text, None)
    }

    /// Read and [`parse`](Self::parse) a tokens file. On Unix the file must be private to
    /// its owner: any permission for group or others (mode bits `0o077`, e.g. the usual
    /// `0644`) is refused with [`TokensFileError::Exposed`] (the mode is read from the
    /// opened file, so it is the file actually read).
    ///
    /// ```
    /// use std::os::unix::fs::PermissionsExt;
    /// let path = std::env::temp_dir().join(format!("tokens-doc-{}", std::process::id()));
    /// std::fs::write(&path, "reader WIKI_VIEW\n").unwrap();
    /// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    /// assert!(mcp_tools::server::TokenTable::from_file(&path).is_err());
    /// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    /// let table = mcp_tools::server::TokenTable::from_file(&path).unwrap();
    /// assert_eq!(table.len(), 1);
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<TokenTable, TokensFileError> {
        let path = path.as_ref();
        let text = private_file::read(path, "tokens file").map_err(|refused| match refused {
            private_file::Refused::Io(source) => TokensFileError::Read {
                path: path.to_path_buf(),
                source: Arc::new(source),
            },
            private_file::Refused::Exposed(exposed) => TokensFileError::Exposed(exposed),
        })?;
        parse(&text, Some(path))
    }

    /// A table built in code.
    ///
    /// ```
    /// use mcp_tools::{PermissionSet, server::{TokenResolver, TokenTable}};
    /// let table = TokenTable::new([("t1", PermissionSet::new(["A"]))]);
    /// assert!(table.resolve("t1").is_some());
    /// ```
    pub fn new<I, S>(entries: I) -> TokenTable
    where
        I: IntoIterator<Item = (S, PermissionSet)>,
        S: Into<String>,
    {
        TokenTable {
            tokens: Arc::new(entries.into_iter().map(|(t, p)| (t.into(), p)).collect()),
        }
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// True when the table holds no token (every request would get 401).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

impl TokenResolver for TokenTable {
    fn resolve(&self, token: &str) -> Option<PermissionSet> {
        self.tokens.get(token).cloned()
    }
}

fn parse(text: &str, path: Option<&Path>) -> Result<TokenTable, TokensFileError> {
    let where_ = path.map_or_else(String::new, |p| format!("{}: ", p.display()));
    let syntax = |line: usize, problem: String| TokensFileError::Syntax {
        where_: where_.clone(),
        line,
        problem,
    };
    let mut tokens = HashMap::new();
    for (line, _, words) in crate::lines::entries(text) {
        let (token, words) = (words[0], &words[1..]);
        if !is_token(token) {
            return Err(syntax(
                line,
                "the token holds characters a bearer token cannot carry; use A-Z a-z 0-9 - . _ ~ + / (then optional = padding)".into(),
            ));
        }
        let mut names = Vec::new();
        for &name in words {
            if !crate::lines::is_permission_name(name) {
                return Err(syntax(
                    line,
                    format!(
                        "{name:?} is not a permission name; use ASCII letters, digits, '_', '-', '.' and ':'"
                    ),
                ));
            }
            names.push(name);
        }
        if tokens
            .insert(token.to_string(), PermissionSet::new(names))
            .is_some()
        {
            return Err(syntax(
                line,
                "this token is already listed on an earlier line; give each token one line".into(),
            ));
        }
    }
    Ok(TokenTable {
        tokens: Arc::new(tokens),
    })
}

/// RFC 6750 `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// The `Bearer` credentials of an `Authorization` header value, if it holds any.
pub(crate) fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, rest) = header.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comments_blank_lines_and_bare_tokens() {
        let table = TokenTable::parse("\n# c\nbare\nfull A B # trailing\n").unwrap();
        assert_eq!(table.len(), 2);
        assert!(table.resolve("bare").unwrap().is_empty());
        let full = table.resolve("full").unwrap();
        assert!(full.contains("A") && full.contains("B"));
    }

    #[test]
    fn rejects_bad_tokens_permissions_and_duplicates() {
        let err = TokenTable::parse("ok A\nbad\"tok A\n").unwrap_err();
        assert!(err.to_string().starts_with("line 2:"), "{err}");
        let err = TokenTable::parse("tok A!\n").unwrap_err();
        assert!(err.to_string().contains("\"A!\""), "{err}");
        let err = TokenTable::parse("tok A\ntok B\n").unwrap_err();
        assert!(err.to_string().contains("already listed"), "{err}");
        assert!(TokenTable::parse("===").is_err());
        assert!(TokenTable::parse("YWJj== A").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn files_other_users_can_access_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::temp_dir().join(format!("tokens-mode-{}", std::process::id()));
        std::fs::write(&path, "secret-token-value A\n").unwrap();
        for (mode, accepted) in [
            (0o600, true),
            (0o400, true),
            (0o640, false),
            (0o604, false),
            (0o620, false),
        ] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let outcome = TokenTable::from_file(&path);
            assert_eq!(outcome.is_ok(), accepted, "mode {mode:o}");
            if let Err(err) = outcome {
                let text = err.to_string();
                assert!(text.contains("chmod 600"), "{text}");
                assert!(text.contains(&format!("{mode:04o}")), "{text}");
                assert!(!text.contains("secret-token-value"), "{text}");
            }
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn file_errors_name_the_path() {
        let err = TokenTable::from_file("/nonexistent/tokens").unwrap_err();
        assert!(err.to_string().contains("/nonexistent/tokens"), "{err}");
    }

    #[test]
    fn bearer_header_parsing() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer   abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer  "), None);
    }
}
