//! Permission sets: parsing (`PermissionSet::from_file`), interning to bit masks, and the
//! subset rule that decides which tools a caller sees.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::poison::LockIgnoringPoison;

/// A set of permission names a caller holds (e.g. `TICKET_VIEW`).
///
/// Each name is interned once per process to a bit, so a set carries a bit mask and the
/// subset test behind every list and call is a few word operations.
///
/// ```
/// use mcp_toolbelt::PermissionSet;
/// let read_only = PermissionSet::new(["TICKET_VIEW", "WIKI_VIEW"]);
/// assert!(read_only.contains("WIKI_VIEW"));
/// assert!(read_only.allows(&PermissionSet::new(["TICKET_VIEW"])));
/// assert!(!read_only.allows(&PermissionSet::new(["TICKET_VIEW", "TICKET_ADMIN"])));
/// assert!(read_only.allows(&PermissionSet::empty()));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PermissionSet {
    names: Arc<BTreeSet<Arc<str>>>,
    mask: Mask,
}

/// A bit per interned permission name.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct Mask(Arc<[u64]>);

impl Mask {
    fn from_bits(bits: impl IntoIterator<Item = usize>) -> Mask {
        let mut words: Vec<u64> = Vec::new();
        for bit in bits {
            let word = bit / 64;
            if words.len() <= word {
                words.resize(word + 1, 0);
            }
            words[word] |= 1 << (bit % 64);
        }
        Mask(words.into())
    }

    /// True when every bit of `self` is also set in `other`.
    pub(crate) fn is_subset_of(&self, other: &Mask) -> bool {
        self.0.iter().enumerate().all(|(i, word)| {
            let theirs = other.0.get(i).copied().unwrap_or(0);
            word & !theirs == 0
        })
    }
}

fn interner() -> &'static Mutex<HashMap<Arc<str>, usize>> {
    static INTERNER: OnceLock<Mutex<HashMap<Arc<str>, usize>>> = OnceLock::new();
    INTERNER.get_or_init(Default::default)
}

impl PermissionSet {
    /// A set of the given names (duplicates are folded; names are trimmed).
    ///
    /// ```
    /// let set = mcp_toolbelt::PermissionSet::new(["A", " A ", "B"]);
    /// assert_eq!(set.len(), 2);
    /// ```
    pub fn new<I, S>(names: I) -> PermissionSet
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let names: BTreeSet<Arc<str>> = names
            .into_iter()
            .map(|name| Arc::from(name.as_ref().trim()))
            .filter(|name: &Arc<str>| !name.is_empty())
            .collect();
        let mask = {
            let mut interner = interner().lock_ignoring_poison();
            let bits: Vec<usize> = names
                .iter()
                .map(|name| {
                    let next = interner.len();
                    *interner.entry(name.clone()).or_insert(next)
                })
                .collect();
            Mask::from_bits(bits)
        };
        PermissionSet {
            names: Arc::new(names),
            mask,
        }
    }

    /// The empty set: it allows only tools that need no permission.
    ///
    /// ```
    /// assert!(mcp_toolbelt::PermissionSet::empty().is_empty());
    /// ```
    pub fn empty() -> PermissionSet {
        PermissionSet::new(std::iter::empty::<&str>())
    }

    /// Parse the permissions file format: one permission per line, `#` starts a comment,
    /// blank lines are ignored, names are trimmed. A name may hold only ASCII letters,
    /// digits, `_`, `-`, `.` and `:`; any other line is an error naming its line number.
    ///
    /// ```
    /// let set = mcp_toolbelt::PermissionSet::parse("# read-only agent\nTICKET_VIEW\n\nWIKI_VIEW  # wiki too\n").unwrap();
    /// assert_eq!(set.names().collect::<Vec<_>>(), ["TICKET_VIEW", "WIKI_VIEW"]);
    /// assert!(mcp_toolbelt::PermissionSet::parse("TICKET VIEW").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<PermissionSet, PermissionFileError> {
        parse_lines(text, None)
    }

    /// Read and [`parse`](PermissionSet::parse) a permissions file; errors name `path:line`.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("perm-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let file = dir.join("read-only.permissions");
    /// std::fs::write(&file, "TICKET_VIEW\nWIKI_VIEW\nMILESTONE_VIEW\n").unwrap();
    /// let set = mcp_toolbelt::PermissionSet::from_file(&file).unwrap();
    /// assert_eq!(set.len(), 3);
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<PermissionSet, PermissionFileError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| PermissionFileError::Read {
            path: path.to_path_buf(),
            source: Arc::new(source),
        })?;
        parse_lines(&text, Some(path))
    }

    /// True when the set holds `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|name| &**name)
    }

    /// How many names the set holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when the set holds no name.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The library's filter rule: a tool needing `required` is allowed when it needs nothing
    /// or when every permission it needs is in `self`.
    pub fn allows(&self, required: &PermissionSet) -> bool {
        required.mask.is_subset_of(&self.mask)
    }

    pub(crate) fn mask(&self) -> &Mask {
        &self.mask
    }
}

fn parse_lines(text: &str, path: Option<&Path>) -> Result<PermissionSet, PermissionFileError> {
    let mut names = Vec::new();
    for (line, raw, words) in crate::lines::entries(text) {
        match words[..] {
            [name] if crate::lines::is_permission_name(name) => names.push(name),
            _ => {
                return Err(PermissionFileError::BadLine {
                    path: path.map(Path::to_path_buf),
                    line,
                    text: raw.split('#').next().unwrap_or("").trim().to_string(),
                });
            }
        }
    }
    Ok(PermissionSet::new(names))
}

impl fmt::Debug for PermissionSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

impl<S: AsRef<str>> FromIterator<S> for PermissionSet {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        PermissionSet::new(iter)
    }
}

/// Why a permissions file could not be loaded.
///
/// ```
/// let err = mcp_toolbelt::PermissionSet::parse("OK\nnot ok!").unwrap_err();
/// assert_eq!(err.to_string(), "line 2: invalid permission name \"not ok!\" (use one name per line of letters, digits, _ - . :)");
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PermissionFileError {
    /// The file could not be read.
    #[error("cannot read permissions file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// A line is not a valid permission name.
    #[error("{}: invalid permission name {text:?} (use one name per line of letters, digits, _ - . :)",
        match path { Some(p) => format!("{}:{line}", p.display()), None => format!("line {line}") })]
    BadLine {
        /// The file, when parsing a file.
        path: Option<PathBuf>,
        /// 1-based line number.
        line: usize,
        /// The offending line.
        text: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subset_rule_over_many_words() {
        let many: Vec<String> = (0..200).map(|i| format!("P{i}")).collect();
        let all = PermissionSet::new(&many);
        let some = PermissionSet::new(["P3", "P150"]);
        assert!(all.allows(&some));
        assert!(!some.allows(&all));
        assert!(some.allows(&PermissionSet::empty()));
        assert!(PermissionSet::empty().allows(&PermissionSet::empty()));
        assert!(!PermissionSet::empty().allows(&some));
    }

    /// 200 names fill four mask words; each must stay its own bit, in particular bits n and
    /// n + 64 (same position, next word).
    #[test]
    fn distinct_permissions_stay_distinct_past_64() {
        let names: Vec<String> = (0..200).map(|i| format!("DISTINCT_{i}")).collect();
        let all = PermissionSet::new(&names);
        let singles: Vec<PermissionSet> = names.iter().map(|n| PermissionSet::new([n])).collect();
        for (i, held) in singles.iter().enumerate() {
            for (j, needed) in singles.iter().enumerate() {
                assert_eq!(
                    held.allows(needed),
                    i == j,
                    "holding {} vs needing {}",
                    names[i],
                    names[j]
                );
            }
            assert!(all.allows(held));
            assert!(!held.allows(&all));
            let all_but_one = PermissionSet::new(names.iter().filter(|n| **n != names[i]));
            assert!(!all_but_one.allows(held), "{}", names[i]);
            assert_ne!(all_but_one, all);
        }
        let bits =
            |set: &PermissionSet| -> u32 { set.mask().0.iter().map(|w| w.count_ones()).sum() };
        assert_eq!(bits(&all), 200);
        // A mask holds no more words than the interned names need.
        let interned = interner().lock().unwrap().len();
        for set in singles.iter().chain([&all]) {
            assert!(set.mask().0.len() <= interned.div_ceil(64), "{set:?}");
        }
    }

    #[test]
    fn contains_answers_both_ways() {
        let set = PermissionSet::new(["CONTAINS_A", "CONTAINS_B"]);
        assert!(set.contains("CONTAINS_A"));
        assert!(set.contains("CONTAINS_B"));
        assert!(!set.contains("CONTAINS_C"));
        assert!(!set.contains("CONTAINS"));
        assert!(!PermissionSet::empty().contains("CONTAINS_A"));
    }

    #[test]
    fn names_len_is_empty_and_debug_describe_the_set() {
        let set: PermissionSet = ["ACCESS_B", " ACCESS_A ", "ACCESS_B", ""]
            .into_iter()
            .collect();
        assert_eq!(set.names().collect::<Vec<_>>(), ["ACCESS_A", "ACCESS_B"]);
        assert_eq!(set.len(), 2);
        assert!(!set.is_empty());
        assert_eq!(format!("{set:?}"), r#"{"ACCESS_A", "ACCESS_B"}"#);
        let empty = PermissionSet::empty();
        assert_eq!((empty.len(), empty.is_empty()), (0, true));
        assert_eq!(format!("{empty:?}"), "{}");
        let parsed = PermissionSet::parse("# comment\nACCESS_A\n\n ACCESS_B # why\n").unwrap();
        assert_eq!(parsed, set);
        let bad = PermissionSet::parse("ACCESS_A\nACCESS!B\n").unwrap_err();
        assert!(bad.to_string().starts_with("line 2: "), "{bad}");
    }

    #[test]
    fn file_errors_name_path_and_line() {
        let dir = std::env::temp_dir().join(format!("perm-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("bad.permissions");
        std::fs::write(&file, "# header\nTICKET_VIEW\nWIKI VIEW\n").unwrap();
        let err = PermissionSet::from_file(&file).unwrap_err().to_string();
        assert!(err.contains("bad.permissions:3:"), "{err}");
        let missing = PermissionSet::from_file(dir.join("missing"))
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("cannot read permissions file"),
            "{missing}"
        );
    }
}
