//! Private files (tokens, TLS private keys, the audit log): used only when no other user
//! can access them.

use std::io::Read;
use std::path::{Path, PathBuf};

/// A private file (tokens, a TLS private key, the audit log) that other users can access
/// (Unix mode bits `0o077`, e.g. the usual `0644`): it is not used until only its owner can.
///
/// ```
/// use std::os::unix::fs::PermissionsExt;
/// let path = std::env::temp_dir().join(format!("exposed-doc-{}", std::process::id()));
/// std::fs::write(&path, "reader WIKI_VIEW\n").unwrap();
/// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
/// let err = mcp_toolbelt::server::TokenTable::from_file(&path).unwrap_err();
/// let mcp_toolbelt::server::TokensFileError::Exposed(exposed) = err else { panic!("{err}") };
/// assert_eq!(exposed.mode(), 0o644);
/// assert!(exposed.to_string().contains("chmod 600"));
/// # std::fs::remove_file(&path).unwrap();
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "{what} {} is accessible to other users (mode {mode:04o}); only its owner may have \
     access, so it is not used: run `chmod 600 {}`",
    path.display(),
    path.display()
)]
pub struct ExposedFile {
    what: &'static str,
    path: PathBuf,
    mode: u32,
}

impl ExposedFile {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its permission bits.
    pub fn mode(&self) -> u32 {
        self.mode
    }
}

/// Why a private file was not read.
#[derive(Debug)]
pub(crate) enum Refused {
    /// It could not be opened or read.
    Io(std::io::Error),
    /// Group or others have some permission on it.
    Exposed(ExposedFile),
}

/// The text of `path` (`what` names the kind of file in errors), refused when group or
/// others may access it (on Unix). The mode is read from the opened file, so it is the
/// file actually read.
pub(crate) fn read(path: &Path, what: &'static str) -> Result<String, Refused> {
    let mut file = std::fs::File::open(path).map_err(Refused::Io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata().map_err(Refused::Io)?.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(Refused::Exposed(ExposedFile {
                what,
                path: path.to_path_buf(),
                mode,
            }));
        }
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(Refused::Io)?;
    Ok(text)
}

/// `path` opened for appending (`O_APPEND`), created with mode `0600` (on Unix) when it
/// does not exist; an existing regular file accessible to group or others is refused.
/// The mode is read from the opened file. Devices (`/dev/stderr`, `/dev/full`) are taken
/// as they are. `what` names the kind of file in errors.
#[cfg(feature = "audit")]
pub(crate) fn open_append(path: &Path, what: &'static str) -> Result<std::fs::File, Refused> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path).map_err(Refused::Io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let metadata = file.metadata().map_err(Refused::Io)?;
        let mode = metadata.permissions().mode() & 0o7777;
        if metadata.is_file() && mode & 0o077 != 0 {
            return Err(Refused::Exposed(ExposedFile {
                what,
                path: path.to_path_buf(),
                mode,
            }));
        }
    }
    Ok(file)
}
