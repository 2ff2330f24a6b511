//! `tools/list` cursors: an opaque `"<generation>.<offset>"`, where the generation counts
//! the registry's runtime changes, so a cursor taken before a change is refused (the client
//! lists again from the start) instead of silently skipping or repeating tools.

use rmcp::ErrorData;

/// Where a page starts, decoded from a cursor.
pub(crate) fn page_start(cursor: Option<&str>, generation: u64) -> Result<usize, ErrorData> {
    let Some(cursor) = cursor else { return Ok(0) };
    match parse(cursor) {
        Some((taken_at, offset)) if taken_at == generation => Ok(offset),
        Some(_) => Err(invalid(cursor, "the tool list changed since it was issued")),
        None => Err(invalid(cursor, "not a cursor this server issued")),
    }
}

/// The error refusing `cursor`, and why.
#[cold]
fn invalid(cursor: &str, why: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "invalid cursor {:?}: {why}; list again without a cursor",
            crate::output::error::echo(cursor)
        ),
        None,
    )
}

/// The generation and offset of a cursor of the form this server issues.
fn parse(cursor: &str) -> Option<(u64, usize)> {
    let bytes = cursor.as_bytes();
    // A byte search: `split_once` with a char pattern costs more than the rest of the check.
    let dot = bytes.iter().position(|&b| b == b'.')?;
    let generation = decimal(&bytes[..dot])?;
    let offset = usize::try_from(decimal(&bytes[dot + 1..])?).ok()?;
    Some((generation, offset))
}

/// `digits` as a number, read as `u64::from_str` reads it (an optional `+`, then decimal
/// digits, no overflow), in a few instructions a digit: every page after the first checks
/// a cursor. Up to 19 digits cannot overflow, so only longer numbers check for it.
fn decimal(digits: &[u8]) -> Option<u64> {
    let digits = match digits {
        [b'+', rest @ ..] => rest,
        _ => digits,
    };
    if digits.is_empty() {
        return None;
    }
    let mut n = 0u64;
    if digits.len() <= 19 {
        for &b in digits {
            let digit = b.wrapping_sub(b'0');
            if digit >= 10 {
                return None;
            }
            n = n * 10 + u64::from(digit);
        }
        return Some(n);
    }
    for &b in digits {
        let digit = b.wrapping_sub(b'0');
        if digit >= 10 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(digit))?;
    }
    Some(n)
}

/// The cursor of the page starting at `offset`.
pub(crate) fn cursor(generation: u64, offset: usize) -> String {
    let (mut generation_digits, mut offset_digits) = (itoa::Buffer::new(), itoa::Buffer::new());
    let (generation, offset) = (
        generation_digits.format(generation),
        offset_digits.format(offset),
    );
    let mut cursor = String::with_capacity(generation.len() + 1 + offset.len());
    cursor.push_str(generation);
    cursor.push('.');
    cursor.push_str(offset);
    cursor
}

/// The `[start, end)` bounds of one page and the next page's offset, if any.
pub(crate) fn page_bounds(
    len: usize,
    start: usize,
    page_size: Option<usize>,
) -> Result<(usize, usize, Option<usize>), ErrorData> {
    if start > len || (start == len && start != 0) {
        return Err(ErrorData::invalid_params(
            "invalid cursor: it points past the end of the tool list; list again without a cursor",
            None,
        ));
    }
    let end = page_size.map_or(len, |size| len.min(start.saturating_add(size.max(1))));
    Ok((start, end, (end < len).then_some(end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_stale_or_foreign_cursors() {
        assert_eq!(page_start(None, 3).unwrap(), 0);
        assert_eq!(page_start(Some(&cursor(3, 40)), 3).unwrap(), 40);
        assert!(page_start(Some(&cursor(2, 40)), 3).is_err());
        assert!(page_start(Some("garbage"), 3).is_err());
        assert!(page_start(Some("3.-1"), 3).is_err());
        assert!(page_start(Some("3."), 3).is_err());
        assert!(page_start(Some(".4"), 3).is_err());
        assert!(page_start(Some("3.4.5"), 3).is_err());
        assert_eq!(page_start(Some("3.0"), 3).unwrap(), 0);
    }

    /// `decimal` reads exactly what `u64::from_str` reads.
    #[test]
    fn decimals_read_as_the_standard_library_reads_them() {
        for text in [
            "0",
            "7",
            "+7",
            "0042",
            "18446744073709551615",
            "18446744073709551616",
            "",
            "+",
            "-1",
            "1a",
            " 1",
            "1 ",
            "++1",
            "٣",
            "99999999999999999999",
        ] {
            assert_eq!(
                decimal(text.as_bytes()),
                text.parse::<u64>().ok(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn pages_cover_the_list_once() {
        assert_eq!(page_bounds(5, 0, Some(2)).unwrap(), (0, 2, Some(2)));
        assert_eq!(page_bounds(5, 4, Some(2)).unwrap(), (4, 5, None));
        assert_eq!(page_bounds(5, 0, None).unwrap(), (0, 5, None));
        assert_eq!(page_bounds(0, 0, Some(2)).unwrap(), (0, 0, None));
        assert!(page_bounds(5, 5, Some(2)).is_err());
        assert!(page_bounds(5, 9, Some(2)).is_err());
    }
}
