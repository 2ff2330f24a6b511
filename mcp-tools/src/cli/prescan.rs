//! Reading `--permissions-file` before the command tree exists: the file decides which
//! tools get a command, so it is found in the raw arguments first. The full parse later
//! checks the flag like any other.

use std::ffi::OsString;
use std::path::PathBuf;

/// The global flag's long name.
pub(crate) const PERMISSIONS_FILE: &str = "permissions-file";

/// The last `--permissions-file F` / `--permissions-file=F` before a `--`.
pub(crate) fn permissions_file(args: &[OsString]) -> Option<PathBuf> {
    let flag = format!("--{PERMISSIONS_FILE}");
    let with_value = format!("{flag}=");
    let mut found = None;
    let mut tokens = args.iter().skip(1);
    while let Some(token) = tokens.next() {
        // A non-UTF-8 token cannot be this flag (`--permissions-file=` + a non-UTF-8 path
        // is found by the full parse only; the separate-value form works for any path).
        let Some(text) = token.to_str() else {
            continue;
        };
        if text == "--" {
            break;
        }
        if text == flag {
            found = tokens.next().map(PathBuf::from);
        } else if let Some(value) = text.strip_prefix(&with_value) {
            found = Some(PathBuf::from(value));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(args: &[&str]) -> Option<PathBuf> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        permissions_file(&args)
    }

    #[test]
    fn finds_both_spellings_and_stops_at_double_dash() {
        assert_eq!(scan(&["p", "tools", "list"]), None);
        assert_eq!(
            scan(&["p", "--permissions-file", "a", "tools"]),
            Some("a".into())
        );
        assert_eq!(
            scan(&["p", "demo", "echo", "--permissions-file=b"]),
            Some("b".into())
        );
        assert_eq!(scan(&["p", "--", "--permissions-file", "c"]), None);
        assert_eq!(scan(&["p", "--permissions-file"]), None);
    }
}
