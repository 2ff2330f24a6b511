//! Unix domain sockets: a local-only transport whose file permissions decide who may
//! connect. One MCP session of newline-delimited JSON-RPC per connection, as on TCP.
//!
//! The socket is created with mode `0600` (only the server's user, and root, may connect)
//! without a window in which it has another mode: it is bound inside a fresh private
//! directory (`0700`), given its mode, then renamed to the path asked for. The peer's user
//! id comes from the kernel (`SO_PEERCRED`); it is logged for every connection and names
//! the session's principal in the session's tracing span (`uid`).

use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::UnixListener;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::ServeError;
use super::drain::Drain;
use super::state::Shared;
use super::stream::{StreamLimits, serve_stream};

/// The mode of the socket file: read and write (connect) for its owner only.
pub(crate) const SOCKET_MODE: u32 = 0o600;

/// A listening Unix socket; the file is removed when this is dropped.
pub(crate) struct Listener {
    pub(crate) listener: UnixListener,
    pub(crate) path: PathBuf,
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Bind `path` with mode `0600`. A stale socket left by a server that is gone (nobody
/// accepts on it) is replaced; any other existing file is an error.
pub(crate) fn bind(path: &Path) -> Result<Listener, ServeError> {
    let fail = |source: std::io::Error| ServeError::BindUnix {
        path: path.to_path_buf(),
        source,
    };
    if let Ok(metadata) = std::fs::symlink_metadata(path) {
        let stale = metadata.file_type().is_socket()
            && std::os::unix::net::UnixStream::connect(path).is_err();
        if !stale {
            return Err(fail(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                "the path exists (a live socket or another file); remove it or choose another",
            )));
        }
        std::fs::remove_file(path).map_err(fail)?;
    }
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let private = parent.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map_or_else(|| "mcp".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&private)
        .map_err(fail)?;
    let staged = private.join("socket");
    let bound = UnixListener::bind(&staged).and_then(|listener| {
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(SOCKET_MODE))?;
        std::fs::rename(&staged, path)?;
        Ok(listener)
    });
    let _ = std::fs::remove_file(&staged);
    let _ = std::fs::remove_dir(&private);
    Ok(Listener {
        listener: bound.map_err(fail)?,
        path: path.to_path_buf(),
    })
}

/// Accept connections until `drain` starts; each is served on its own task, in a span
/// naming the peer's user id. Then the sessions finish their calls in flight (within the
/// shutdown grace) and end.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    listener: Listener,
    limits: StreamLimits,
    drain: Drain,
) -> Result<(), ServeError> {
    let tasks = TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.listener.accept() => accepted,
            _ = drain.draining.cancelled() => {
                drop(listener);
                tasks.close();
                drain.finish(tasks.wait(), &tasks).await;
                return Ok(());
            }
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "accepting a Unix socket connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let (uid, pid) = match stream.peer_cred() {
            Ok(cred) => (cred.uid(), cred.pid()),
            Err(error) => {
                tracing::warn!(%error, "no peer credentials; closing the connection");
                continue;
            }
        };
        tracing::info!(uid, pid, "Unix socket connection opened");
        let (read, write) = stream.into_split();
        let shared = shared.clone();
        let drain = drain.watch();
        let span = tracing::info_span!("unix_session", uid);
        tasks.spawn(
            async move {
                let served = serve_stream(shared, read, write, None, limits, &drain).await;
                if let Err(error) = served {
                    tracing::warn!(%error, "Unix socket session ended with an error");
                }
            }
            .instrument(span),
        );
    }
}
