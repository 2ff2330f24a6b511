//! The open HTTP connections: the cap on how many, which one to close when a new one
//! needs room (the one idle longest), the idle time-out, and the socket wrapper that
//! notices when a client closes its side.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::poison::LockIgnoringPoison;

/// How long a new connection may take to send its first request before it counts as
/// idle (and may be closed to make room for another).
pub(super) const FIRST_REQUEST: Duration = Duration::from_millis(100);

/// How long a connection may take, once the shutdown grace is over, to send the errors of
/// the calls the shutdown cut short (within `drain.rs`'s time to unwind).
pub(super) const LAST_WORDS: Duration = Duration::from_millis(200);

/// How long a connection asked to close may take to finish the request it is serving.
pub(super) const CLOSING_GRACE: Duration = Duration::from_secs(1);

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
    opened: Instant,
    /// Chosen to make room; closing.
    evicted: AtomicBool,
    /// When `busy` last dropped to 0 (or the connection opened).
    idle_since: Mutex<Instant>,
    /// Asks the connection's task to close it (it was chosen to make room).
    evict: Notify,
    /// Fired when the client closes its side (end of input).
    pub(super) client_closed: CancellationToken,
    /// hyper's read, parked on an end of input held back while a request is in progress.
    parked_read: Mutex<Option<Waker>>,
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
    /// to close (it counts until it has). A connection gets [`FIRST_REQUEST`] to send its
    /// first request before it counts as idle. `None` when no connection can give way.
    pub(super) fn admit(self: &Arc<Self>) -> Option<Admitted> {
        let mut open = self.open.lock_ignoring_poison();
        let leaving = open
            .values()
            .filter(|c| c.evicted.load(Ordering::Acquire))
            .count();
        if open.len() - leaving >= self.max {
            let now = Instant::now();
            let victim = open
                .values()
                .filter(|c| {
                    !c.evicted.load(Ordering::Acquire)
                        && c.busy.load(Ordering::Acquire) == 0
                        && now.duration_since(c.opened) >= FIRST_REQUEST
                })
                .min_by_key(|c| c.idle_since())?;
            victim.evicted.store(true, Ordering::Release);
            victim.evict.notify_one();
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        let connection = Arc::new(Connection {
            busy: AtomicUsize::new(0),
            opened: now,
            idle_since: Mutex::new(now),
            evicted: AtomicBool::new(false),
            evict: Notify::new(),
            client_closed: CancellationToken::new(),
            parked_read: Mutex::new(None),
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
        let mut open = self.connections.open.lock_ignoring_poison();
        open.remove(&self.id);
    }
}

impl Connection {
    fn idle_since(&self) -> Instant {
        *self.idle_since.lock_ignoring_poison()
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
            *self.0.idle_since.lock_ignoring_poison() = Instant::now();
            let parked = self.0.parked_read.lock_ignoring_poison().take();
            if let Some(read) = parked {
                read.wake();
            }
        }
    }
}

/// The accepted socket, reporting the client's end of input to its [`Connection`].
///
/// hyper ends a connection (dropping the reply in progress) on an end of input in the
/// middle of a request; its `half_close` mode instead stops reading then, so a client
/// that left goes unnoticed. This socket does neither: it reports the end of input at
/// once (the disconnect grace starts; a body still being read ends early) and shows it
/// to hyper only once no request is in progress, so a half-closed client still gets its
/// reply.
pub(super) struct Socket {
    stream: TcpStream,
    connection: Arc<Connection>,
}

impl Socket {
    pub(super) fn new(stream: TcpStream, connection: Arc<Connection>) -> Socket {
        Socket { stream, connection }
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
            let connection = &self.connection;
            connection.client_closed.cancel();
            let mut parked = connection.parked_read.lock_ignoring_poison();
            if connection.busy.load(Ordering::Acquire) > 0 {
                *parked = Some(cx.waker().clone());
                return Poll::Pending;
            }
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
    fn a_full_table_evicts_the_connection_idle_longest_and_refuses_when_none_can_go() {
        let connections = Arc::new(Connections::new(2));
        let first = connections.admit().expect("room");
        let second = connections.admit().expect("room");
        let _working = second.connection.busy();
        assert!(
            connections.admit().is_none(),
            "a connection younger than FIRST_REQUEST is not idle yet"
        );
        std::thread::sleep(FIRST_REQUEST);
        // Full: the idle one (first) gives way, the busy one stays.
        let third = connections.admit().expect("the idle connection gives way");
        assert!(
            first.connection.evict.notified().now_or_never_is_ready(),
            "the idle connection was told to close"
        );
        assert!(
            connections.admit().is_none(),
            "the rest are busy or too young"
        );
        drop(first);
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
