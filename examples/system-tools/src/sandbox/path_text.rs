//! Paths as the tools' text: a file name on Linux is any bytes but `/` and NUL, the wire is
//! JSON strings (UTF-8), so a name that is not UTF-8 needs a form a client can send back.
//!
//! The rule, one way and back:
//! - **Out** ([`path_text`]): a path that is UTF-8 and holds no `\x` is given as it is. Any
//!   other path is escaped: each byte that is not part of valid UTF-8 as `\xHH` (always 80
//!   to FF: bytes below 80 are ASCII, always valid), and each backslash as `\\`.
//! - **In** ([`path_from_text`]): a path with no `\x` in it is taken as it is. A path with
//!   `\x` is unescaped: `\xHH` (80 to FF) is that byte, `\\` a backslash; any other
//!   backslash, or `\x` below 80 (which could spell `/`, `.` or NUL), is refused.
//!
//! So every name round-trips, including one whose UTF-8 text holds `\x` (it goes out escaped,
//! `\\x…`), and ordinary names — even with a backslash — read as they are.
//!
//! ```
//! use std::ffi::OsStr;
//! use std::os::unix::ffi::OsStrExt;
//! use system_tools_mcp::sandbox::{path_from_text, path_text};
//! let latin1 = OsStr::from_bytes(b"caf\xe9.txt"); // "café" in Latin-1: not UTF-8
//! assert_eq!(path_text(latin1), r"caf\xe9.txt");
//! assert_eq!(path_from_text(r"caf\xe9.txt").unwrap(), latin1);
//! assert_eq!(path_text(OsStr::new("notes.txt")), "notes.txt");
//! assert_eq!(path_text(OsStr::new(r"a\x41")), r"a\\x41");
//! assert_eq!(path_from_text(r"a\\x41").unwrap(), OsStr::new(r"a\x41"));
//! assert!(path_from_text(r"..\x2fetc").is_err());
//! ```

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use super::error::SandboxError;

/// The marker of an escaped path.
const ESCAPE: &str = "\\x";

/// How a path appears in replies: as it is when it is UTF-8 without `\x`, else escaped
/// (see the module docs).
pub fn path_text(path: &OsStr) -> String {
    let bytes = path.as_bytes();
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.contains(ESCAPE)
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push_str("\\\\");
            } else {
                out.push(c);
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out
}

/// The path a client's text names: as it is without `\x`, else unescaped (see the module
/// docs).
///
/// # Errors
/// `InvalidInput` for a path with `\x` that holds a backslash not starting `\\` or `\xHH`,
/// or an `\xHH` below 80.
pub fn path_from_text(text: &str) -> Result<OsString, SandboxError> {
    if !text.contains(ESCAPE) {
        return Ok(OsString::from(text));
    }
    let bad = |reason: String| {
        SandboxError::invalid(
            format!("path {text:?}"),
            reason,
            "A path with \\x is an escaped one, as list_directory and search_files give it: \
             \\xHH (80 to ff) is a byte of a name that is not UTF-8 and \\\\ is a backslash. \
             Copy the path from their reply.",
        )
    };
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first != b'\\' {
            out.push(first);
            rest = tail;
            continue;
        }
        match tail {
            [b'\\', more @ ..] => {
                out.push(b'\\');
                rest = more;
            }
            [b'x', hi, lo, more @ ..] => {
                let hex = [*hi, *lo];
                let byte = std::str::from_utf8(&hex)
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| bad("\\x is not followed by two hex digits".into()))?;
                if byte < 0x80 {
                    return Err(bad(format!(
                        "\\x{byte:02x} is below \\x80: such bytes are written as they are"
                    )));
                }
                out.push(byte);
                rest = more;
            }
            _ => {
                return Err(bad(
                    "a backslash in an escaped path must start \\\\ or \\xHH".into(),
                ));
            }
        }
    }
    Ok(OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips() {
        let names: [&[u8]; 8] = [
            b"plain.txt",
            b"caf\xc3\xa9",         // UTF-8
            b"caf\xe9",             // Latin-1
            b"\xff\xfe\\x41",       // invalid bytes, a backslash and x41
            b"a\\x41",              // UTF-8 holding \x
            b"back\\slash",         // UTF-8 with a backslash, no \x
            b"\xe2\x82",            // a cut UTF-8 sequence
            b"mixed \xc3\xa9 \x80", // valid multi-byte next to an invalid byte
        ];
        for name in names {
            let os = OsStr::from_bytes(name);
            let text = path_text(os);
            assert_eq!(path_from_text(&text).unwrap(), os, "{text}");
        }
        assert_eq!(path_text(OsStr::new("back\\slash")), "back\\slash");
        assert_eq!(path_text(OsStr::from_bytes(b"\xe2\x82")), "\\xe2\\x82");
    }

    #[test]
    fn escapes_that_could_spell_other_paths_are_refused() {
        for bad in [
            "a\\x2fb",
            "\\x2e\\x2e",
            "a\\x00",
            "a\\x4",
            "a\\xzz",
            "\\x80\\q",
        ] {
            assert!(path_from_text(bad).is_err(), "{bad}");
        }
        // Without \x a backslash is an ordinary character.
        assert_eq!(path_from_text("a\\q").unwrap(), OsStr::new("a\\q"));
    }
}
