//! The open HTTP connections: the cap on how many, which one to close when a new one
//! needs room (the one idle longest), the idle time-out, and the socket wrapper that
//! notices when a client closes its side.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Every open connection, up to a cap.
pub(super) struct Connections {
    max: usize,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Connection>>>,
}

/// One open connection's state, shared by its task and its requests.
pub(super) struct Connection {
    /// Requests whose response is not finished yet.
    busy: AtomicUsize,
    /// When `busy` last dropped to 0 (or the connection opened).
    idle_since: Mutex<Instant>,
    /// Asks the connection's task to close it (it was chosen to make room).
    evict: Notify,
    /// Fired when the client closes its side (end of input).
    pub(super) client_closed: CancellationToken,
}

/// A place among the open connections; frees it when dropped.
pub(super) struct Admitted {
    connections: Arc<Connections>,
    id: u64,
    pub(super) connection: Arc<Connection>,
}

/// Marks a connection busy while a request is in progress (until its response ends).
pub(super) struct Busy(Arc<Connection>);

impl Connections {
    pub(super) fn new(max: usize) -> Connections {
        Connections {
            max: max.max(1),
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Make room for a new connection: at the cap, the connection idle longest is asked
    /// to close and gives up its place at once. `None` when every connection is busy.
    pub(super) fn admit(self: &Arc<Self>) -> Option<Admitted> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() >= self.max {
            let (&victim, _) = open
                .iter()
                .filter(|(_, c)| c.busy.load(Ordering::Acquire) == 0)
                .min_by_key(|(_, c)| c.idle_since())?;
            if let Some(evicted) = open.remove(&victim) {
                evicted.evict.notify_one();
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            busy: AtomicUsize::new(0),
            idle_since: Mutex::new(Instant::now()),
            evict: Notify::new(),
            client_closed: CancellationToken::new(),
        });
        open.insert(id, connection.clone());
        Some(Admitted {
            connections: self.clone(),
            id,
            connection,
        })
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self
            .connections
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        open.remove(&self.id);
    }
}

impl Connection {
    fn idle_since(&self) -> Instant {
        *self.idle_since.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A request started; the connection is busy until the returned guard drops.
    pub(super) fn busy(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }

    /// Wait until this connection should be closed: it was evicted, or it has been idle
    /// for `idle_timeout`.
    pub(super) async fn closing(&self, idle_timeout: Duration) -> Closing {
        loop {
            let deadline = if self.busy.load(Ordering::Acquire) == 0 {
                let deadline = self.idle_since() + idle_timeout;
                if deadline <= Instant::now() {
                    return Closing::Idle;
                }
                deadline
            } else {
                Instant::now() + idle_timeout
            };
            tokio::select! {
                _ = self.evict.notified() => return Closing::Evicted,
                _ = tokio::time::sleep_until(deadline.into()) => {}
            }
        }
    }
}

/// Why a connection is being closed.
#[derive(Debug, Clone, Copy)]
pub(super) enum Closing {
    Evicted,
    Idle,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.0.idle_since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        }
    }
}

/// The accepted socket, reporting the client's end of input to its [`Connection`].
pub(super) struct Socket {
    stream: TcpStream,
    client_closed: CancellationToken,
}

impl Socket {
    pub(super) fn new(stream: TcpStream, connection: &Connection) -> Socket {
        Socket {
            stream,
            client_closed: connection.client_closed.clone(),
        }
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled
            && buf.filled().len() == before
            && buf.remaining() > 0
        {
            self.client_closed.cancel();
        }
        polled
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_evicts_the_connection_idle_longest_and_refuses_when_all_are_busy() {
        let connections = Arc::new(Connections::new(2));
        let first = connections.admit().expect("room");
        std::thread::sleep(Duration::from_millis(2));
        let second = connections.admit().expect("room");
        let _working = second.connection.busy();
        // Full: the idle one (first) gives way, the busy one stays.
        let third = connections.admit().expect("the idle connection gives way");
        assert!(
            first.connection.evict.notified().now_or_never_is_ready(),
            "the idle connection was told to close"
        );
        let _busy_too = third.connection.busy();
        assert!(connections.admit().is_none(), "every connection is busy");
        drop(third);
        assert!(
            connections.admit().is_some(),
            "a closed connection frees its place"
        );
    }

    trait NowOrNever {
        fn now_or_never_is_ready(self) -> bool;
    }

    impl<F: std::future::Future> NowOrNever for F {
        fn now_or_never_is_ready(self) -> bool {
            futures::FutureExt::now_or_never(self).is_some()
        }
    }
}
