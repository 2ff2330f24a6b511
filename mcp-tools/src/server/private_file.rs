//! Files holding secrets (tokens, TLS private keys): read only when no other user can
//! access them.

use std::io::Read;
use std::path::Path;

/// Why a private file was not read.
#[derive(Debug)]
pub(crate) enum Refused {
    /// It could not be opened or read.
    Io(std::io::Error),
    /// Group or others have some permission on it (Unix mode bits `0o077`): the mode.
    Exposed(u32),
}

/// The text of `path`, refused when group or others may access it (on Unix). The mode is
/// read from the opened file, so it is the file actually read.
pub(crate) fn read(path: &Path) -> Result<String, Refused> {
    let mut file = std::fs::File::open(path).map_err(Refused::Io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata().map_err(Refused::Io)?.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(Refused::Exposed(mode));
        }
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(Refused::Io)?;
    Ok(text)
}
