//! The line codec of the byte-stream transports (stdio, TCP, any read/write pair), in
//! front of rmcp's service.
//!
//! rmcp's own codec ignores malformed JSON without a reply, answers envelope errors
//! without an `id`, drops deeply nested JSON and over-long lines silently. This one reads
//! newline-delimited JSON-RPC itself and answers every bad line on the spot, by the rules
//! of `decode.rs` (which also reads HTTP bodies): a line longer than the limit is skipped
//! as it streams in, never buffered whole, and answered `-32600` with `"id": null`; blank
//! lines are skipped. A batch array in a session on protocol 2025-03-26 (the one revision
//! with batches) is taken: each element is handed on as if it came alone, and the replies
//! of its requests are written together as one array line once all are in (`Batches`);
//! refused elements get their error entry, notifications none, and a batch of
//! notifications no line at all.
//!
//! Replies and error lines are written by one writer task fed through a bounded channel,
//! so an error line is never torn by a cancelled `receive` and a client that floods
//! garbage without reading is held back like any other client. `send` completes once its
//! message is written, which the in-flight bound relies on; a reply of a call the transport
//! serves itself instead hands the writer what to do once it is written
//! ([`LineSender::send_then`]), so the call's task ends as soon as its reply is queued.
//! The writer writes every line queued at that moment in one `write` (up to
//! [`WRITE_BATCH`] bytes), and input is read in chunks of [`READ_CHUNK`]: a pipelining
//! client costs a few system calls per batch of messages, not two per message.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId, ServerResult,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

// The deepest nesting accepted in one message: the crate's one nesting limit.
use crate::poison::LockIgnoringPoison;
use crate::server::decode::{Decoded, batch_elements, decode};
use crate::server::protocol::code::INVALID_REQUEST;
use crate::server::protocol::{error_reply, takes_batches};

/// The default cap on one incoming line (one JSON-RPC message), in bytes.
pub(crate) const DEFAULT_MAX_LINE_LENGTH: usize = 4 * 1024 * 1024;

/// Lines queued for the writer before `send` and error replies wait.
const WRITE_QUEUE: usize = 256;

/// The most bytes of queued lines gathered into one `write` (a longer line is written alone).
const WRITE_BATCH: usize = 64 * 1024;

/// Bytes read from the client at once (a pipe's default capacity on Linux).
const READ_CHUNK: usize = 64 * 1024;

/// What the writer does once a line is written (or failed to be).
enum Written {
    /// Nothing: an error reply of the codec's own.
    Nothing,
    /// Tell a waiting `send`.
    Report(oneshot::Sender<std::io::Result<()>>),
    /// Run this, e.g. free the in-flight slot of the request the line answers.
    Then(Box<dyn FnOnce() + Send>),
}

/// One line for the writer, and what to do once it is written.
type Outgoing = (Vec<u8>, Written);

/// `R` read in chunks of up to [`READ_CHUNK`] bytes into one buffer, allocated once and
/// never zeroed (tokio's `BufReader` zeroes its buffer: 64 KiB written at every session's
/// start, most of a short session's input buffer never used).
struct Chunks<R> {
    read: R,
    buffer: Vec<u8>,
    /// How much of `buffer` was consumed.
    at: usize,
}

impl<R: AsyncRead + Unpin> Chunks<R> {
    fn new(read: R) -> Chunks<R> {
        Chunks {
            read,
            buffer: Vec::with_capacity(READ_CHUNK),
            at: 0,
        }
    }

    /// The bytes not consumed yet, reading the next chunk when there are none (empty: end
    /// of input). Cancel-safe: `read_buf` either reads or leaves everything as it was.
    async fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at == self.buffer.len() {
            self.buffer.clear();
            self.at = 0;
            self.read.read_buf(&mut self.buffer).await?;
        }
        Ok(&self.buffer[self.at..])
    }

    fn consume(&mut self, taken: usize) {
        self.at = (self.at + taken).min(self.buffer.len());
    }
}

/// Newline-delimited JSON-RPC over `R`/`W` with a line-length cap and error replies for
/// bad lines.
pub(crate) struct LineCodec<R> {
    read: Chunks<R>,
    line: Vec<u8>,
    max_line_length: usize,
    /// Skipping the rest of an over-long line until its newline.
    discarding: bool,
    /// Error replies (or a finished batch's replies) waiting for room in the writer's queue.
    pending: VecDeque<Vec<u8>>,
    eof: bool,
    out: Option<LineSender>,
    writer: Option<JoinHandle<()>>,
    /// The session's batches (shared with the writer, which gathers their replies).
    batches: Arc<Batches>,
    /// The elements of the batch being read, not handed out yet.
    elements: VecDeque<Box<RawValue>>,
}

/// The JSON-RPC batches of a session on a revision that takes them ([`takes_batches`]):
/// each request of a batch is handed to rmcp as if it came alone, and its reply (whoever
/// writes it: rmcp, a directly served call) is kept here instead of written, until every
/// request of the batch is answered; the replies are then written as one array. An
/// element that is refused gets its error entry; notifications (and responses) get none;
/// a cancelled request none either (it gets no reply).
#[derive(Default)]
struct Batches {
    /// The session negotiated a revision that takes batches.
    taken: AtomicBool,
    /// How many batches wait for replies: while none does, the writer looks at nothing.
    open: AtomicUsize,
    waiting: Mutex<Vec<Batch>>,
}

/// One batch waiting for its replies.
struct Batch {
    /// Elements not handed out yet (the batch being read is the last one).
    unread: usize,
    /// The requests handed out and not answered yet.
    ids: Vec<RequestId>,
    /// `[` and the replies so far, separated by commas.
    array: Vec<u8>,
}

/// What an element of a batch turned out to be.
enum Element {
    /// A request, answered later.
    Request(RequestId),
    /// A refused element: its error reply.
    Refused(Value),
    /// A notification or a response: no reply.
    Silent,
}

/// The `id` of a line the server writes, when it is a response or an error (a request of
/// the server's own has a `method`).
#[derive(Deserialize)]
struct Answered {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

impl Batches {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Batch>> {
        self.waiting.lock_ignoring_poison()
    }

    /// A batch of `elements` (at least one) starts being read.
    fn open(&self, elements: usize) {
        self.lock().push(Batch {
            unread: elements,
            ids: Vec::new(),
            array: vec![b'['],
        });
        self.open.fetch_add(1, Ordering::SeqCst);
    }

    /// The next element of the batch being read was `element`; the batch's line when that
    /// finished it with something to say.
    fn element(&self, element: Element) -> Option<Vec<u8>> {
        let mut waiting = self.lock();
        let at = waiting.iter().rposition(|batch| batch.unread > 0)?;
        let batch = &mut waiting[at];
        batch.unread -= 1;
        match element {
            Element::Request(id) => batch.ids.push(id),
            Element::Refused(reply) => batch.add(reply.to_string().as_bytes()),
            Element::Silent => {}
        }
        self.finish(&mut waiting, at)
    }

    /// Request `id` was cancelled: it gets no reply.
    fn cancelled(&self, id: &RequestId) -> Option<Vec<u8>> {
        if self.open.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let mut waiting = self.lock();
        let at = waiting.iter().position(|batch| batch.ids.contains(id))?;
        let ids = &mut waiting[at].ids;
        ids.swap_remove(ids.iter().position(|i| i == id)?);
        self.finish(&mut waiting, at)
    }

    /// `line` (with its newline) as the writer writes it: as it is; kept in its batch
    /// (`None`); or, when it was the batch's last reply, the batch's array.
    fn route(&self, line: Vec<u8>) -> Option<Vec<u8>> {
        if self.open.load(Ordering::SeqCst) == 0 {
            return Some(line);
        }
        let id = match serde_json::from_slice::<Answered>(&line) {
            Ok(Answered {
                id: Some(id),
                method: None,
            }) => id,
            _ => return Some(line),
        };
        let mut waiting = self.lock();
        let Some(at) = waiting.iter().position(|batch| batch.ids.contains(&id)) else {
            return Some(line);
        };
        let batch = &mut waiting[at];
        batch
            .ids
            .swap_remove(batch.ids.iter().position(|i| *i == id)?);
        batch.add(line.strip_suffix(b"\n").unwrap_or(&line));
        self.finish(&mut waiting, at)
    }

    /// Close batch `at` if it is complete: its line (`None` when it holds no reply, a batch
    /// of notifications).
    fn finish(&self, waiting: &mut Vec<Batch>, at: usize) -> Option<Vec<u8>> {
        let batch = &waiting[at];
        if batch.unread > 0 || !batch.ids.is_empty() {
            return None;
        }
        let mut array = waiting.remove(at).array;
        self.open.fetch_sub(1, Ordering::SeqCst);
        if array.len() == 1 {
            return None;
        }
        array.extend_from_slice(b"]\n");
        Some(array)
    }
}

impl Batch {
    fn add(&mut self, reply: &[u8]) {
        if self.array.len() > 1 {
            self.array.push(b',');
        }
        self.array.extend_from_slice(reply);
    }
}

/// A handle on a codec's writer: sends whole messages, each as one line, in order with
/// every other line of the codec. Cloned by the calls the transport serves itself
/// (`bounded.rs`), so their replies need no hop through rmcp.
#[derive(Clone)]
pub(crate) struct LineSender(mpsc::Sender<Outgoing>);

impl LineSender {
    /// Serialize `message` as one line and wait until the writer has written it.
    pub(crate) async fn send(&self, message: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<()> {
        let (done, written) = oneshot::channel();
        self.queue(serialize(message)?, Written::Report(done))
            .await?;
        written.await.map_err(|_| closed("the writer stopped"))?
    }

    /// Serialize `message` as one line and queue it (waiting only for room in the queue);
    /// the writer runs `then` once the line is written or its write failed. When the writer
    /// is gone, or `message` does not serialize, `then` runs here.
    pub(crate) async fn send_then(
        &self,
        message: &TxJsonRpcMessage<RoleServer>,
        then: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        match serialize(message) {
            Ok(line) => self.send_line_then(line, then).await,
            Err(error) => {
                then();
                Err(error)
            }
        }
    }

    /// [`send_then`](Self::send_then) for a message already serialized (without its
    /// newline, which this adds).
    pub(crate) async fn send_line_then(
        &self,
        line: Vec<u8>,
        then: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        self.queue(line, Written::Then(Box::new(then))).await
    }

    /// [`send_line_then`](Self::send_line_then) without waiting: the line is queued at
    /// once when the writer's queue has room, else by a task of its own that waits for
    /// room (the caller's in-flight slot, freed by `then`, bounds those tasks).
    pub(crate) fn queue_line_then(&self, mut line: Vec<u8>, then: impl FnOnce() + Send + 'static) {
        line.push(b'\n');
        match self.0.try_send((line, Written::Then(Box::new(then)))) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(outgoing)) => {
                let queue = self.0.clone();
                tokio::spawn(async move {
                    if let Err(mpsc::error::SendError((_, written))) = queue.send(outgoing).await {
                        written.run(Err(closed("the writer stopped")));
                    }
                });
            }
            Err(mpsc::error::TrySendError::Closed((_, written))) => {
                written.run(Err(closed("the writer stopped")));
            }
        }
    }

    async fn queue(&self, mut line: Vec<u8>, written: Written) -> std::io::Result<()> {
        line.push(b'\n');
        if let Err(mpsc::error::SendError((_, written))) = self.0.send((line, written)).await {
            written.run(Err(closed("the writer stopped")));
            return Err(closed("the writer stopped"));
        }
        Ok(())
    }
}

fn serialize(message: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<Vec<u8>> {
    serde_json::to_vec(message).map_err(std::io::Error::other)
}

impl Written {
    fn run(self, outcome: std::io::Result<()>) {
        match self {
            Written::Nothing => {}
            Written::Report(done) => {
                let _ = done.send(outcome);
            }
            Written::Then(then) => then(),
        }
    }
}

impl<R: AsyncRead + Send + Unpin + 'static> LineCodec<R> {
    /// A codec reading `read` and writing `write` (spawns the writer task).
    pub(crate) fn new<W>(read: R, write: W, max_line_length: usize) -> LineCodec<R>
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (out, queue) = mpsc::channel(WRITE_QUEUE);
        let batches = Arc::new(Batches::default());
        LineCodec {
            read: Chunks::new(read),
            line: Vec::new(),
            max_line_length: max_line_length.max(1),
            discarding: false,
            pending: VecDeque::new(),
            eof: false,
            out: Some(LineSender(out)),
            writer: Some(tokio::spawn(write_lines(write, queue, batches.clone()))),
            batches,
            elements: VecDeque::new(),
        }
    }

    /// A handle that writes lines of this codec from elsewhere (`None` once closed).
    pub(crate) fn sender(&self) -> Option<LineSender> {
        self.out.clone()
    }

    /// Read up to the end of the next line: `Some(true)`, a line is in `self.line`;
    /// `Some(false)`, an over-long line is being skipped; `None`, end of input.
    /// Cancel-safe: `fill_buf` consumes nothing and progress is kept in `self`.
    async fn read_line(&mut self) -> std::io::Result<Option<bool>> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                self.eof = true;
                // The tail of an over-long line was answered already; a last line
                // without a newline still counts.
                let last = !self.discarding && !self.line.is_empty();
                self.discarding = false;
                return Ok(last.then_some(true));
            }
            // Many bytes at a time: this is the one scan of every byte a client sends.
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |at| at + 1);
            if self.discarding {
                self.read.consume(take);
                self.discarding = newline.is_none();
                continue;
            }
            let content = self.line.len() + take - usize::from(newline.is_some());
            if content > self.max_line_length {
                self.read.consume(take);
                self.line.clear();
                // Answer now; the rest of the line is skipped by later reads.
                self.discarding = newline.is_none();
                return Ok(Some(false));
            }
            self.line.extend_from_slice(&available[..take]);
            self.read.consume(take);
            if newline.is_some() {
                return Ok(Some(true));
            }
        }
    }
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for LineCodec<R> {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "mcp-toolbelt line codec".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Response(response) = &item
            && let ServerResult::InitializeResult(result) = &response.result
        {
            let taken = takes_batches(&result.protocol_version);
            self.batches.taken.store(taken, Ordering::SeqCst);
        }
        let out = self.out.clone();
        async move {
            out.ok_or_else(|| closed("the transport is closed"))?
                .send(&item)
                .await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            while !self.pending.is_empty() {
                // Cancel-safe: if this wait is dropped, the replies stay pending.
                let permit = self.out.as_ref()?.0.reserve().await.ok()?;
                permit.send((self.pending.pop_front()?, Written::Nothing));
            }
            if let Some(element) = self.elements.pop_front() {
                let (element, message) = match decode(element.get().as_bytes()) {
                    Decoded::Message(message) => match &*message {
                        JsonRpcMessage::Request(request) => {
                            (Element::Request(request.id.clone()), Some(message))
                        }
                        _ => (Element::Silent, Some(message)),
                    },
                    Decoded::Reply(reply) => {
                        tracing::debug!(%reply, "answering a bad batch element");
                        (Element::Refused(reply), None)
                    }
                    Decoded::Skip => (Element::Silent, None),
                };
                self.pending.extend(self.batches.element(element));
                if let Some(message) = message {
                    self.cancelling(&message);
                    return Some(*message);
                }
                continue;
            }
            if self.eof {
                return None;
            }
            let whole = match self.read_line().await {
                Ok(Some(whole)) => whole,
                Ok(None) => return None,
                Err(error) => {
                    tracing::warn!(%error, "reading from the client failed");
                    return None;
                }
            };
            let decoded = if whole {
                let batch = match self.batches.taken.load(Ordering::SeqCst) {
                    true => batch_elements(&self.line),
                    false => None,
                };
                let decoded = match batch {
                    None => decode(&self.line),
                    Some(Err(reply)) => Decoded::Reply(reply),
                    Some(Ok(elements)) => {
                        self.batches.open(elements.len());
                        self.elements.extend(elements);
                        self.line.clear();
                        continue;
                    }
                };
                self.line.clear();
                decoded
            } else {
                tracing::warn!(
                    limit = self.max_line_length,
                    "discarding a line longer than the limit"
                );
                Decoded::Reply(error_reply(
                    Value::Null,
                    INVALID_REQUEST,
                    format!(
                        "Invalid Request: line longer than {} bytes (discarded)",
                        self.max_line_length
                    ),
                ))
            };
            match decoded {
                Decoded::Message(message) => {
                    self.cancelling(&message);
                    return Some(*message);
                }
                Decoded::Skip => {}
                Decoded::Reply(reply) => {
                    tracing::debug!(%reply, "answering a bad line");
                    let mut line = reply.to_string().into_bytes();
                    line.push(b'\n');
                    self.pending.push_back(line);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out = None;
        if let Some(writer) = self.writer.take() {
            // In-flight `send` futures hold their own senders; the writer ends after them.
            let _ = writer.await;
        }
        Ok(())
    }
}

impl<R> LineCodec<R> {
    /// A `notifications/cancelled` for a request of a batch: that request gets no reply,
    /// so its batch no longer waits for one.
    fn cancelling(&mut self, message: &ClientJsonRpcMessage) {
        if let JsonRpcMessage::Notification(notification) = message
            && let ClientNotification::CancelledNotification(cancelled) = &notification.notification
            && let Some(id) = &cancelled.params.request_id
        {
            self.pending.extend(self.batches.cancelled(id));
        }
    }
}

fn closed(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, what.to_string())
}

/// Write queued lines in order: every line queued at the moment in one write (up to
/// [`WRITE_BATCH`] bytes), flushed before waiting for more.
/// A reply to a request of a batch is kept in its batch (`batches`) until the batch's array
/// is written instead.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut write: W,
    mut queue: mpsc::Receiver<Outgoing>,
    batches: Arc<Batches>,
) {
    let mut failed = false;
    let mut batch: Vec<u8> = Vec::new();
    let mut done: Vec<Written> = Vec::new();
    while let Some((first, written)) = queue.recv().await {
        done.push(written);
        // One line alone is written from its own buffer; more are gathered into `batch`.
        let mut single = batches.route(first);
        while single.as_ref().map_or(batch.len(), Vec::len) < WRITE_BATCH
            && let Ok((line, written)) = queue.try_recv()
        {
            done.push(written);
            let Some(line) = batches.route(line) else {
                continue;
            };
            if let Some(first) = single.take() {
                batch.extend_from_slice(&first);
            }
            batch.extend_from_slice(&line);
        }
        let bytes = single.as_deref().unwrap_or(&batch);
        let outcome = if failed {
            Err(closed("an earlier write failed"))
        } else if bytes.is_empty() {
            // Only replies kept for their batch: nothing to write yet.
            Ok(())
        } else {
            let mut outcome = write.write_all(bytes).await;
            if outcome.is_ok() {
                outcome = write.flush().await;
            }
            outcome
        };
        batch.clear();
        batch.shrink_to(WRITE_BATCH);
        if let Err(error) = &outcome
            && !failed
        {
            tracing::debug!(%error, "writing to the client failed");
            failed = true;
        }
        for written in done.drain(..) {
            let outcome = match &outcome {
                Ok(()) => Ok(()),
                Err(error) => Err(std::io::Error::new(error.kind(), error.to_string())),
            };
            written.run(outcome);
        }
    }
    let _ = write.flush().await;
    let _ = write.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line queued without waiting goes out at once when there is room, else once room
    /// frees, and its `then` runs as it is written; with the writer gone, `then` runs at once.
    #[tokio::test]
    async fn lines_queued_without_waiting_wait_for_room_and_run_their_then() {
        let (out, mut queue) = mpsc::channel(1);
        let lines = LineSender(out);
        let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let then = || {
            let written = written.clone();
            move || {
                written.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        };
        lines.queue_line_then(b"one".to_vec(), then());
        // The queue is full: the second line waits in a task of its own.
        lines.queue_line_then(b"two".to_vec(), then());
        for expected in [&b"one\n"[..], b"two\n"] {
            let (line, done) = queue.recv().await.expect("a line");
            assert_eq!(line, expected);
            done.run(Ok(()));
        }
        assert_eq!(written.load(std::sync::atomic::Ordering::SeqCst), 2);
        drop(queue);
        lines.queue_line_then(b"three".to_vec(), then());
        assert_eq!(written.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    /// The codec over a pipe: long lines are skipped in pieces and answered, and the
    /// lines after them still read.
    #[tokio::test]
    async fn over_long_lines_are_answered_and_reading_goes_on() {
        let (mut client, server) = tokio::io::duplex(1024);
        let (read, write) = tokio::io::split(server);
        let mut codec = LineCodec::new(read, write, 100);
        let feeder = tokio::spawn(async move {
            let mut input = vec![b'x'; 10_000];
            input.push(b'\n');
            input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
            input.extend_from_slice(&[b'{'; 5_000]); // unterminated, then EOF
            client.write_all(&input).await.unwrap();
            client.shutdown().await.unwrap();
            let mut output = String::new();
            tokio::io::AsyncReadExt::read_to_string(&mut client, &mut output)
                .await
                .unwrap();
            output
        });
        let message = codec.receive().await.expect("the ping after the long line");
        assert!(matches!(message, rmcp::model::JsonRpcMessage::Request(_)));
        assert!(codec.receive().await.is_none());
        codec.close().await.unwrap();
        drop(codec);
        let output = feeder.await.unwrap();
        let replies: Vec<Value> = output
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(replies.len(), 2, "{output}");
        for reply in replies {
            assert_eq!(reply["id"], Value::Null);
            assert_eq!(reply["error"]["code"], INVALID_REQUEST);
            assert!(
                reply["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("longer than 100")
            );
        }
    }
}
