//! Turns a user's search text into an FTS5 expression that cannot be a syntax error.
//!
//! Supported syntax, deliberately small:
//! - words are matched as whole tokens, all of them required (implicit AND);
//! - `"a phrase"` matches those words next to each other (an unclosed quote runs to the end);
//! - a trailing `*` on a word matches any token starting with it (`rust*`);
//! - upper-case `AND`, `OR`, `NOT` between two terms are operators (`a NOT b` = a without b).
//!
//! Every term is emitted as a quoted FTS5 string, so characters FTS5 would treat as syntax
//! (`:`, `^`, `(`, `-`, `+`, `NEAR`, stray quotes...) are inert. Words with no letter or digit
//! are dropped, because the tokenizer would drop them too. Operators at either end or next to
//! another operator are dropped, except when the whole query is operator words, which are then
//! searched for literally.

use crate::error::MemoError;
use crate::validate::MAX_QUERY_CHARS;

/// Most terms (words and phrases) in one query.
const MAX_TERMS: usize = 64;

/// One lexical piece of the user's query.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// A word or phrase; `prefix` when it ended in `*`.
    Term { text: String, prefix: bool },
    /// `AND`, `OR` or `NOT`.
    Op(&'static str),
}

/// Builds the FTS5 MATCH expression for `query`, or says why there is nothing to search for.
pub(crate) fn to_fts5(query: &str) -> Result<String, MemoError> {
    let chars = query.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(MemoError::validation(
            "query",
            format!("the query has {chars} characters, more than the limit of {MAX_QUERY_CHARS}"),
            "Search with a few distinctive words.",
        ));
    }
    let pieces = lex(query);
    let all_ops = !pieces.is_empty() && pieces.iter().all(|p| matches!(p, Piece::Op(_)));
    let pieces: Vec<Piece> = if all_ops {
        pieces
            .into_iter()
            .map(|p| match p {
                Piece::Op(op) => Piece::Term {
                    text: op.to_string(),
                    prefix: false,
                },
                term => term,
            })
            .collect()
    } else {
        pieces
    };

    let mut out: Vec<String> = Vec::new();
    let mut pending_op: Option<&'static str> = None;
    let mut terms = 0usize;
    for piece in pieces {
        match piece {
            Piece::Op(op) => {
                // Only meaningful after a term; a later operator in a run replaces an earlier one.
                if !out.is_empty() {
                    pending_op = Some(op);
                }
            }
            Piece::Term { text, prefix } => {
                if !text.chars().any(char::is_alphanumeric) {
                    continue;
                }
                terms += 1;
                if terms > MAX_TERMS {
                    return Err(MemoError::validation(
                        "query",
                        format!("the query has more than {MAX_TERMS} words or phrases"),
                        "Search with a few distinctive words.",
                    ));
                }
                if let Some(op) = pending_op.take() {
                    out.push(op.to_string());
                }
                let mut quoted = format!("\"{}\"", text.replace('"', "\"\""));
                if prefix {
                    quoted.push('*');
                }
                out.push(quoted);
            }
        }
    }
    if out.is_empty() {
        return Err(MemoError::validation(
            "query",
            format!("the query {query:?} contains no word to search for"),
            "Search with at least one word made of letters or digits.",
        ));
    }
    Ok(out.join(" "))
}

/// Splits the query into words, phrases and operators.
fn lex(query: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut chars = query.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            chars.next();
            let mut phrase = String::new();
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                phrase.push(c);
            }
            pieces.push(Piece::Term {
                text: phrase,
                prefix: false,
            });
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == '"' {
                    break;
                }
                word.push(c);
                chars.next();
            }
            pieces.push(match word.as_str() {
                "AND" => Piece::Op("AND"),
                "OR" => Piece::Op("OR"),
                "NOT" => Piece::Op("NOT"),
                _ => {
                    let stem = word.trim_end_matches('*');
                    let prefix = stem.len() < word.len() && stem.chars().any(char::is_alphanumeric);
                    Piece::Term {
                        text: stem.to_string(),
                        prefix,
                    }
                }
            });
        }
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::to_fts5;

    fn ok(q: &str) -> String {
        to_fts5(q).unwrap_or_else(|e| panic!("{q:?}: {e}"))
    }

    #[test]
    fn words_are_quoted_and_anded() {
        assert_eq!(ok("rust sqlite"), r#""rust" "sqlite""#);
        assert_eq!(ok("  spaced\tout\n"), r#""spaced" "out""#);
    }

    #[test]
    fn phrases_prefixes_and_operators() {
        assert_eq!(ok(r#""exact phrase" x"#), r#""exact phrase" "x""#);
        assert_eq!(ok("rus*"), r#""rus"*"#);
        assert_eq!(ok("a OR b"), r#""a" OR "b""#);
        assert_eq!(ok("a AND NOT b"), r#""a" NOT "b""#);
        assert_eq!(ok("a or b"), r#""a" "or" "b""#);
    }

    #[test]
    fn syntax_characters_become_inert() {
        assert_eq!(ok(r#"say "hi"#), r#""say" "hi""#);
        assert_eq!(ok(r#"it's a"b"#), r#""it's" "a" "b""#);
        assert_eq!(ok("title:x"), r#""title:x""#);
        assert_eq!(ok("NEAR(a b)"), r#""NEAR(a" "b)""#);
        assert_eq!(ok("-x +y ^z"), r#""-x" "+y" "^z""#);
        assert_eq!(ok("* a"), r#""a""#);
        assert_eq!(ok("a**"), r#""a"*"#);
    }

    #[test]
    fn edge_operators_are_dropped_or_literal() {
        assert_eq!(ok("AND a OR"), r#""a""#);
        assert_eq!(ok("AND"), r#""AND""#);
        assert_eq!(ok("OR NOT"), r#""OR" "NOT""#);
    }

    #[test]
    fn nothing_to_search_is_a_validation_error() {
        for q in ["", "   ", "*", "\"\"", "!!! ???", "🦀 🎉", "\"", "AND *"] {
            let err = to_fts5(q).unwrap_err();
            assert_eq!(err.kind(), "validation", "{q:?}");
        }
    }

    #[test]
    fn oversized_queries_are_rejected() {
        assert!(to_fts5(&"a ".repeat(65)).is_err());
        assert!(to_fts5(&"a".repeat(1001)).is_err());
    }
}
