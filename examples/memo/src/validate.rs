//! Input rules and their limits. Every check returns a [`MemoError`] that says what to change.

use ulid::Ulid;

use crate::error::MemoError;

/// Longest title accepted, in characters (after trimming).
pub const MAX_TITLE_CHARS: usize = 200;
/// Longest idempotency key of `memo_create`, in characters.
pub const MAX_IDEMPOTENCY_KEY_CHARS: usize = 200;
/// How long `memo_create` remembers an idempotency key (a retry later than this creates a
/// new memo): one day, far longer than any balancer's or client's retry.
pub const IDEMPOTENCY_KEY_RETENTION: std::time::Duration =
    std::time::Duration::from_secs(24 * 60 * 60);
/// Largest content accepted, in bytes of UTF-8.
pub const MAX_CONTENT_BYTES: usize = 1024 * 1024;
/// Page size of [`MemoStore::list`](crate::MemoStore::list) when none is given.
pub const DEFAULT_LIST_LIMIT: u32 = 50;
/// Largest page size of [`MemoStore::list`](crate::MemoStore::list).
pub const MAX_LIST_LIMIT: u32 = 1000;
/// Number of hits of [`MemoStore::search`](crate::MemoStore::search) when none is given.
pub const DEFAULT_SEARCH_LIMIT: u32 = 20;
/// Largest number of hits of [`MemoStore::search`](crate::MemoStore::search).
pub const MAX_SEARCH_LIMIT: u32 = 100;
/// Longest search query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Size bound of [`MemoStore::get_all_context`](crate::MemoStore::get_all_context) when none is given.
pub const DEFAULT_CONTEXT_BYTES: u32 = 64 * 1024;
/// Smallest size bound accepted by [`MemoStore::get_all_context`](crate::MemoStore::get_all_context).
pub const MIN_CONTEXT_BYTES: u32 = 1024;
/// Largest size bound accepted by [`MemoStore::get_all_context`](crate::MemoStore::get_all_context).
pub const MAX_CONTEXT_BYTES: u32 = 4 * 1024 * 1024;

/// Parses a memo id (a ULID, case-insensitive) and returns it in canonical upper-case form.
pub fn parse_id(id: &str) -> Result<String, MemoError> {
    let invalid = |reason: &str| MemoError::InvalidId {
        id: id.to_string(),
        reason: reason.to_string(),
    };
    let trimmed = id.trim();
    if trimmed.is_empty() {
        return Err(invalid("the id is empty"));
    }
    if trimmed.chars().count() != ulid::ULID_LEN {
        return Err(invalid("a memo id has exactly 26 characters"));
    }
    // 26 base-32 digits hold 130 bits; a ULID has 128, so the first digit is at most 7.
    if !matches!(trimmed.as_bytes()[0], b'0'..=b'7') {
        return Err(invalid(
            "the first character of a ULID must be a digit from 0 to 7",
        ));
    }
    let ulid = Ulid::from_string(trimmed)
        .map_err(|_| invalid("only Crockford base-32 characters (0-9, A-Z without I, L, O, U)"))?;
    Ok(ulid.to_string())
}

/// Checks an idempotency key: 1 to [`MAX_IDEMPOTENCY_KEY_CHARS`] characters, no control
/// character.
pub fn check_idempotency_key(key: &str) -> Result<(), MemoError> {
    let chars = key.chars().count();
    if chars == 0 || chars > MAX_IDEMPOTENCY_KEY_CHARS || key.chars().any(char::is_control) {
        return Err(MemoError::validation(
            "idempotency_key",
            format!(
                "the idempotency key must be 1 to {MAX_IDEMPOTENCY_KEY_CHARS} characters without \
                 control characters (it has {chars})"
            ),
            "Send a fresh random key, e.g. a UUID, for each new memo, and the same key again \
             only when retrying that memo's creation.",
        ));
    }
    Ok(())
}

/// Trims a title and checks it: not empty, one line, no control characters, not too long.
pub fn check_title(title: &str) -> Result<String, MemoError> {
    let title = title.trim();
    if title.is_empty() {
        return Err(MemoError::validation(
            "title",
            "the title is empty",
            "Give the memo a short, non-empty title.",
        ));
    }
    if title.chars().any(char::is_control) {
        return Err(MemoError::validation(
            "title",
            "the title contains a line break or another control character",
            "Keep the title on one line; put details in the content.",
        ));
    }
    let chars = title.chars().count();
    if chars > MAX_TITLE_CHARS {
        return Err(MemoError::validation(
            "title",
            format!("the title has {chars} characters, more than the limit of {MAX_TITLE_CHARS}"),
            "Shorten the title and move the rest into the content.",
        ));
    }
    Ok(title.to_string())
}

/// Checks a memo's content: at most [`MAX_CONTENT_BYTES`], no NUL characters. May be empty.
pub fn check_content(content: &str) -> Result<(), MemoError> {
    if content.len() > MAX_CONTENT_BYTES {
        return Err(MemoError::validation(
            "content",
            format!(
                "the content has {} bytes, more than the limit of {MAX_CONTENT_BYTES}",
                content.len()
            ),
            "Split the text over several memos.",
        ));
    }
    if content.contains('\0') {
        return Err(MemoError::validation(
            "content",
            "the content contains a NUL character",
            "Remove NUL characters; memos hold text, not binary data.",
        ));
    }
    Ok(())
}

/// Resolves an optional count against its default and checks it lies in `1..=max`.
pub(crate) fn check_limit(
    field: &'static str,
    value: Option<u32>,
    default: u32,
    max: u32,
) -> Result<u32, MemoError> {
    let value = value.unwrap_or(default);
    if value == 0 || value > max {
        return Err(MemoError::validation(
            field,
            format!("{value} is outside the allowed range 1..={max}"),
            format!("Use a {field} between 1 and {max}, and page with offset for more."),
        ));
    }
    Ok(value)
}

/// Resolves the optional size bound of the context document and checks its range.
pub(crate) fn check_context_bytes(value: Option<u32>) -> Result<u32, MemoError> {
    let value = value.unwrap_or(DEFAULT_CONTEXT_BYTES);
    if !(MIN_CONTEXT_BYTES..=MAX_CONTEXT_BYTES).contains(&value) {
        return Err(MemoError::validation(
            "max_bytes",
            format!(
                "{value} is outside the allowed range {MIN_CONTEXT_BYTES}..={MAX_CONTEXT_BYTES}"
            ),
            format!("Use a max_bytes between {MIN_CONTEXT_BYTES} and {MAX_CONTEXT_BYTES}."),
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_canonicalized_and_checked() {
        assert_eq!(
            parse_id("01arz3ndektsv4rrffq69g5fav").unwrap(),
            "01ARZ3NDEKTSV4RRFFQ69G5FAV"
        );
        assert_eq!(
            parse_id(" 01ARZ3NDEKTSV4RRFFQ69G5FAV ").unwrap(),
            "01ARZ3NDEKTSV4RRFFQ69G5FAV"
        );
        for bad in [
            "",
            "   ",
            "abc",
            "01ARZ3NDEKTSV4RRFFQ69G5FAVX",
            "81ARZ3NDEKTSV4RRFFQ69G5FAV",
            "ZZZZZZZZZZZZZZZZZZZZZZZZZZ",
            "01ARZ3NDEKTSV4RRFFQ69G5FAI",
            "01ARZ3NDEKTSV4RRFFQ69G5FA!",
            "01ARZ3NDEKTSV4RRFFQ69G5FÄ",
            "../../../../etc/passwd0000",
        ] {
            let err = parse_id(bad).unwrap_err();
            assert!(
                matches!(err, MemoError::InvalidId { .. }),
                "{bad:?}: {err:?}"
            );
            assert_eq!(err.kind(), "validation");
        }
    }

    #[test]
    fn titles_are_trimmed_and_bounded() {
        assert_eq!(check_title("  hello ").unwrap(), "hello");
        assert!(check_title(" \t ").is_err());
        assert!(check_title("two\nlines").is_err());
        assert!(check_title(&"é".repeat(MAX_TITLE_CHARS)).is_ok());
        assert!(check_title(&"é".repeat(MAX_TITLE_CHARS + 1)).is_err());
    }

    #[test]
    fn content_is_bounded() {
        assert!(check_content("").is_ok());
        assert!(check_content(&"a".repeat(MAX_CONTENT_BYTES)).is_ok());
        assert!(check_content(&"a".repeat(MAX_CONTENT_BYTES + 1)).is_err());
        assert!(check_content("a\0b").is_err());
    }

    #[test]
    fn limits_have_defaults_and_ranges() {
        assert_eq!(check_limit("limit", None, 5, 10).unwrap(), 5);
        assert_eq!(check_limit("limit", Some(10), 5, 10).unwrap(), 10);
        assert!(check_limit("limit", Some(0), 5, 10).is_err());
        assert!(check_limit("limit", Some(11), 5, 10).is_err());
        assert_eq!(check_context_bytes(None).unwrap(), DEFAULT_CONTEXT_BYTES);
        assert!(check_context_bytes(Some(MIN_CONTEXT_BYTES - 1)).is_err());
        assert!(check_context_bytes(Some(MAX_CONTEXT_BYTES + 1)).is_err());
    }
}
