//! Bearer tokens for HTTP and TCP callers: a [`TokenResolver`] maps a token to the
//! [`Caller`] presenting it; [`TokenTable`] is the resolver read from a tokens file.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::private_file::{self, ExposedFile};
use crate::Caller;
use crate::permissions::PermissionSet;

/// Maps a bearer token to the [`Caller`] presenting it: its permissions and, when the
/// table names one, its subject.
///
/// Called once per HTTP request (once per connection for TCP), before the request reaches
/// the MCP layer; `None` means the token is unknown and the request gets
/// `401 Unauthorized`. Keep it fast (look up a table, or cache what an external check
/// returned).
///
/// Any `Fn(&str) -> Option<C>` closure is a resolver, where `C` is a [`Caller`] or anything
/// that converts into one (a [`PermissionSet`]: a caller with those permissions and no
/// subject):
///
/// ```
/// use mcp_toolbelt::{Caller, PermissionSet, server::TokenResolver};
/// let resolver = |token: &str| (token == "s3cret").then(|| PermissionSet::new(["WIKI_VIEW"]));
/// let caller = resolver.resolve("s3cret").unwrap();
/// assert!(caller.permissions().unwrap().contains("WIKI_VIEW"));
/// assert!(resolver.resolve("guess").is_none());
///
/// let named = |token: &str| (token == "k3y").then(|| {
///     Caller::new(Some("ci-bot".into()), None, vec![], PermissionSet::empty(), Default::default())
/// });
/// assert_eq!(named.resolve("k3y").unwrap().subject(), Some("ci-bot"));
/// ```
pub trait TokenResolver: Send + Sync + 'static {
    /// The caller holding `token`, or `None` for an unknown token.
    fn resolve(&self, token: &str) -> Option<Caller>;
}

impl<F, C> TokenResolver for F
where
    F: Fn(&str) -> Option<C> + Send + Sync + 'static,
    C: Into<Caller>,
{
    fn resolve(&self, token: &str) -> Option<Caller> {
        self(token).map(Into::into)
    }
}

/// A fixed table of bearer tokens and their callers, usually read from a tokens file.
///
/// File format: one token per line followed by the permissions it grants, separated by
/// whitespace; `#` starts a comment; blank lines are ignored. A token alone on its line
/// grants no permission (only tools that need none). Tokens use the RFC 6750 characters
/// (`A-Z a-z 0-9 - . _ ~ + /`, then optional `=` padding); permission names follow the
/// permissions-file rules. One optional word `subject=NAME` anywhere after the token names
/// who holds it: the caller's [`subject`](Caller::subject), which tools see and the call
/// spans log (the audit trail); NAME is 1 to 256 characters without whitespace, `#`, `=`
/// or control characters. Without it the caller has no subject.
///
/// ```
/// use mcp_toolbelt::server::{TokenResolver, TokenTable};
/// let table = TokenTable::parse(concat!(
///     "# agents\n",
///     "reader-7f3a   TICKET_VIEW WIKI_VIEW\n",
///     "admin-91bc    subject=alice  TICKET_VIEW TICKET_ADMIN   # full access\n",
/// )).unwrap();
/// assert_eq!(table.len(), 2);
/// let admin = table.resolve("admin-91bc").unwrap();
/// assert!(admin.permissions().unwrap().contains("TICKET_ADMIN"));
/// assert_eq!(admin.subject(), Some("alice"));
/// assert_eq!(table.resolve("reader-7f3a").unwrap().subject(), None);
/// assert!(table.resolve("nobody").is_none());
/// ```
#[derive(Clone, Default)]
pub struct TokenTable {
    tokens: Arc<HashMap<String, Caller>>,
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
    /// let err = mcp_toolbelt::server::TokenTable::parse("tok A\ntok B\n").unwrap_err();
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
    /// assert!(mcp_toolbelt::server::TokenTable::from_file(&path).is_err());
    /// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    /// let table = mcp_toolbelt::server::TokenTable::from_file(&path).unwrap();
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

    /// A table built in code: each token with its [`Caller`], or with a [`PermissionSet`]
    /// for a caller without a subject.
    ///
    /// ```
    /// use mcp_toolbelt::{Caller, PermissionSet, server::{TokenResolver, TokenTable}};
    /// let table = TokenTable::new([("t1", PermissionSet::new(["A"]))]);
    /// assert!(table.resolve("t1").is_some());
    /// let bob = Caller::new(Some("bob".into()), None, vec![], PermissionSet::empty(), Default::default());
    /// let table = TokenTable::new([("t2", bob)]);
    /// assert_eq!(table.resolve("t2").unwrap().subject(), Some("bob"));
    /// ```
    pub fn new<I, S, C>(entries: I) -> TokenTable
    where
        I: IntoIterator<Item = (S, C)>,
        S: Into<String>,
        C: Into<Caller>,
    {
        TokenTable {
            tokens: Arc::new(
                entries
                    .into_iter()
                    .map(|(t, c)| (t.into(), c.into()))
                    .collect(),
            ),
        }
    }

    /// The permissions of the tokens whose line names `subject` (`tools explain
    /// --tokens-file --subject`); an error when no line names it, or when its lines grant
    /// different permissions (then only a token line says which one is meant).
    #[cfg(feature = "cli")]
    pub(crate) fn permissions_of_subject(&self, subject: &str) -> Result<PermissionSet, String> {
        let mut found: Option<&PermissionSet> = None;
        for caller in self.tokens.values() {
            if caller.subject() != Some(subject) {
                continue;
            }
            let permissions = caller.permissions();
            match (found, permissions) {
                (None, Some(permissions)) => found = Some(permissions),
                (Some(seen), Some(permissions)) if seen != permissions => {
                    return Err(format!(
                        "the subject {subject:?} has tokens granting different permissions; give one with --token-line"
                    ));
                }
                _ => {}
            }
        }
        found
            .cloned()
            .ok_or_else(|| format!("no line names the subject {subject:?} (`subject={subject}`)"))
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
    fn resolve(&self, token: &str) -> Option<Caller> {
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
        let mut subject = None;
        for &name in words {
            if let Some(value) = name.strip_prefix(SUBJECT_PREFIX) {
                if subject.is_some() {
                    return Err(syntax(
                        line,
                        "this line names its subject twice; keep one `subject=NAME`".into(),
                    ));
                }
                if !is_subject(value) {
                    return Err(syntax(
                        line,
                        "the subject must be 1 to 256 characters without whitespace, '#', '=' or control characters".into(),
                    ));
                }
                subject = Some(value.to_string());
                continue;
            }
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
        let permissions = PermissionSet::new(names);
        let caller = Caller::new(subject, None, Vec::new(), permissions, Default::default());
        if tokens.insert(token.to_string(), caller).is_some() {
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

/// The word that names a token's subject in a tokens file (`subject=alice`); `=` cannot
/// occur in a permission name, so it is never taken for one.
const SUBJECT_PREFIX: &str = "subject=";

/// A subject a tokens file may name: it goes into logs and tools' records as written.
fn is_subject(subject: &str) -> bool {
    (1..=256).contains(&subject.chars().count())
        && !subject.contains('=')
        && !subject.chars().any(char::is_control)
}

/// RFC 6750 `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// RFC 6750 §3.1 error code: the token is expired, revoked, malformed or otherwise invalid.
#[cfg(feature = "http")]
pub(crate) const INVALID_TOKEN: &str = "invalid_token";

/// RFC 6750 §3.1 error code: the request is malformed, for one thing by using more than one
/// method (here: more than one `Authorization` header) to carry a token.
#[cfg(feature = "http")]
pub(crate) const INVALID_REQUEST: &str = "invalid_request";

/// RFC 6750 §3.1 error code: the token is valid but its scopes do not reach the resource.
#[cfg(feature = "oauth")]
pub(crate) const INSUFFICIENT_SCOPE: &str = "insufficient_scope";

/// What a request with more than one `Authorization` header is told.
#[cfg(feature = "http")]
pub(crate) const MANY_AUTHORIZATIONS: &str =
    "the request carries more than one Authorization header; send exactly one";

/// A request carries more than one `Authorization` header: which one counts is anybody's
/// guess (a proxy may forward the first, this server would read another), so none does and
/// the request is refused (RFC 6750 §3.1 `invalid_request`, `400`).
#[cfg(feature = "http")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ManyAuthorizations;

/// The `Bearer` credentials of a request's headers: `Ok(None)` without an `Authorization`
/// header holding a bearer token; [`ManyAuthorizations`] when there is more than one
/// `Authorization` header, whatever they hold.
#[cfg(feature = "http")]
pub(crate) fn request_bearer(
    headers: &http::HeaderMap,
) -> Result<Option<&str>, ManyAuthorizations> {
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(ManyAuthorizations);
    }
    Ok(first
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_token))
}

/// The `Bearer` credentials of an `Authorization` header value, if it holds any.
#[cfg(feature = "http")]
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
        assert!(
            table
                .resolve("bare")
                .unwrap()
                .permissions()
                .unwrap()
                .is_empty()
        );
        let full = table.resolve("full").unwrap();
        let permissions = full.permissions().unwrap();
        assert!(permissions.contains("A") && permissions.contains("B"));
        assert_eq!(full.subject(), None);
    }

    #[test]
    fn a_line_may_name_its_subject() {
        let table =
            TokenTable::parse("t1 A subject=alice B\nt2 subject=bob@example.org\n").unwrap();
        let alice = table.resolve("t1").unwrap();
        assert_eq!(alice.subject(), Some("alice"));
        let names: Vec<&str> = alice.permissions().unwrap().names().collect();
        assert_eq!(names, ["A", "B"]);
        let bob = table.resolve("t2").unwrap();
        assert_eq!(bob.subject(), Some("bob@example.org"));
        assert!(bob.permissions().unwrap().is_empty());
        for (text, problem) in [
            ("t subject=a subject=b\n", "twice"),
            ("t subject=\n", "1 to 256"),
            ("t subject=a=b\n", "1 to 256"),
            ("t subject=a\u{7}b\n", "1 to 256"),
        ] {
            let err = TokenTable::parse(text).unwrap_err().to_string();
            assert!(
                err.starts_with("line 1:") && err.contains(problem),
                "{text:?}: {err}"
            );
        }
        let long = format!("t subject={}\n", "x".repeat(257));
        assert!(TokenTable::parse(&long).is_err());
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

    #[cfg(feature = "http")]
    #[test]
    fn more_than_one_authorization_header_is_refused_whatever_they_hold() {
        let header = http::header::AUTHORIZATION;
        let mut headers = http::HeaderMap::new();
        assert_eq!(request_bearer(&headers), Ok(None));
        headers.append(&header, "Bearer good".parse().unwrap());
        assert_eq!(request_bearer(&headers), Ok(Some("good")));
        headers.append(&header, "garbage".parse().unwrap());
        assert_eq!(request_bearer(&headers), Err(ManyAuthorizations));
        let mut headers = http::HeaderMap::new();
        headers.append(&header, "Basic x".parse().unwrap());
        headers.append(&header, "Bearer good".parse().unwrap());
        assert_eq!(request_bearer(&headers), Err(ManyAuthorizations));
    }

    #[cfg(feature = "http")]
    #[test]
    fn bearer_header_parsing() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer   abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer  "), None);
    }
}
