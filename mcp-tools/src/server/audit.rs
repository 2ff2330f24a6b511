//! The audit log (feature `audit`): one JSON line per call that reached a tool, a resource
//! or a prompt, written by one writer thread from a bounded queue to an append-only file
//! or to stderr.
//!
//! What a line holds, and what it never holds, is in `docs/operations.md` ("Audit log").
//! In short: who (subject, client id), what (method, target), how it ended (outcome,
//! duration), where (replica, session, request id), and a SHA-256 digest of the arguments
//! instead of the arguments, apart from the ones a tool marked safe to keep
//! (`#[arg(audit = "keep")]`, [`ToolDefBuilder::audit_keep`]).
//!
//! [`ToolDefBuilder::audit_keep`]: crate::definition::ToolDefBuilder::audit_keep

use std::cell::RefCell;
use std::fmt;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rmcp::model::ProtocolVersion;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::copied_text::{CopiedRequestId, CopiedText, RequestIdRef};
use super::private_file::{self, ExposedFile};
use crate::output::error::ErrorKind;
use crate::poison::{CondvarIgnoringPoison, LockIgnoringPoison};

/// How many lines may wait for the writer by default ([`AuditLog::queue_bound`]).
pub const DEFAULT_AUDIT_QUEUE: usize = 1024;

/// How often, at most, a failing audit log says so in the server's log.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// The audit log a [`Server`](super::Server) writes one line to per call that reached a
/// tool, resource or prompt ([`Server::audit_log`](super::Server::audit_log), `serve
/// --audit-log PATH|-`).
///
/// Lines go through a queue of at most [`queue_bound`](Self::queue_bound) lines to one
/// writer thread. A call never waits for the log: when the queue is full its line is
/// dropped and counted ([`queue_drops`](Self::queue_drops)); a line the target refuses is
/// counted too ([`write_failures`](Self::write_failures)); both are reported as warnings
/// (at most one every 10 s, with the totals). A `kill -9` loses at most the queue bound;
/// a graceful shutdown flushes the queue. Clones share one log.
///
/// ```
/// use mcp_toolbelt::server::{AuditLog, Server};
/// let dir = std::env::temp_dir().join(format!("audit-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let log = AuditLog::to_file(dir.join("audit.jsonl")).unwrap().queue_bound(256);
/// assert_eq!(log.queue_bound_len(), 256);
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let _server = Server::new(registry).audit_log(log.clone());
/// assert!(log.flush(std::time::Duration::from_secs(1)));
/// assert_eq!(log.write_failures(), 0);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone)]
pub struct AuditLog {
    inner: Arc<Inner>,
    /// Dropped with the last handle: the writer then writes what is queued and ends.
    _closer: Arc<Closer>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("target", &self.inner.target)
            .field("queue_bound", &self.queue_bound_len())
            .finish_non_exhaustive()
    }
}

/// Why an audit log could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum AuditLogError {
    /// The file could not be opened (or created) for appending.
    #[error("audit log {}: cannot open it for appending: {source}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// An existing file other users may read: the log names who called what, so it is
    /// not written to until only its owner can read it.
    #[error(transparent)]
    Exposed(#[from] ExposedFile),
    /// The writer thread could not be started.
    #[error("audit log: cannot start its writer thread: {0}")]
    Thread(std::io::Error),
}

/// How long the writer waits for more lines after the first before writing them.
const GATHER: Duration = Duration::from_millis(20);

struct Inner {
    target: String,
    queue: Mutex<Queue>,
    /// Signalled when a line is queued or the log closes.
    ready: Condvar,
    /// Signalled when the writer has written everything it took.
    idle: Condvar,
    replica: OnceLock<Box<str>>,
    write_failures: AtomicU64,
    queue_drops: AtomicU64,
    written: AtomicU64,
    last_warning: Mutex<Option<Instant>>,
}

struct Queue {
    /// The queued lines, each as its call's time and [`Entry`]: the writer takes them all
    /// by swapping vectors (a call's thread pushes into one that already has room) and
    /// writes them, so the line's text is made in the writer's batches, not on the call's
    /// thread.
    waiting: Vec<(SystemTime, Entry)>,
    /// Lines the writer took and has not finished writing (they count against the bound).
    writing: usize,
    bound: usize,
    closed: bool,
    /// The writer waits on `ready` for a first line: only then does a new line wake it (a
    /// writer at work or gathering a batch takes the line with the next batch), so a busy
    /// log costs no wake-up per line.
    writer_waiting: bool,
    /// The writer has a line and waits up to [`GATHER`] for more before writing: a line
    /// wakes it only when the queue is half full (or a flush or the close does).
    gathering: bool,
    /// Callers of [`AuditLog::flush`] waiting on `idle`: only then does a batch written
    /// wake anyone.
    flushing: usize,
}

impl Queue {
    /// Lines waiting or being written fill half the bound: the writer gathers no longer.
    fn half_full(&self) -> bool {
        self.waiting.len() + self.writing >= self.bound / 2
    }
}

struct Closer(Arc<Inner>);

impl Drop for Closer {
    fn drop(&mut self) {
        self.0.queue.lock_ignoring_poison().closed = true;
        self.0.ready.notify_all();
    }
}

/// Where the writer writes.
enum Sink {
    File(File),
    Stderr,
}

impl Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            // One `write` per batch on an O_APPEND file: lines of other writers never
            // land inside ours.
            Sink::File(file) => file.write_all(bytes),
            Sink::Stderr => {
                let mut stderr = std::io::stderr().lock();
                stderr.write_all(bytes)?;
                stderr.flush()
            }
        }
    }
}

impl AuditLog {
    /// Append lines to `path`, created with mode `0600` if it does not exist (opened with
    /// `O_APPEND`: every batch of lines lands at the end, whoever else appends).
    ///
    /// # Errors
    ///
    /// [`AuditLogError::Open`] when the file cannot be opened for appending (a missing
    /// directory, no permission); [`AuditLogError::Exposed`] when an existing regular file
    /// is accessible to group or others (mode bits `0o077`).
    ///
    /// ```
    /// let err = mcp_toolbelt::server::AuditLog::to_file("/nonexistent-dir/audit.jsonl").unwrap_err();
    /// assert!(err.to_string().contains("cannot open it for appending"));
    /// ```
    pub fn to_file(path: impl AsRef<Path>) -> Result<AuditLog, AuditLogError> {
        let path = path.as_ref();
        let file =
            private_file::open_append(path, "audit log").map_err(|refused| match refused {
                private_file::Refused::Io(source) => AuditLogError::Open {
                    path: path.to_path_buf(),
                    source,
                },
                private_file::Refused::Exposed(exposed) => AuditLogError::Exposed(exposed),
            })?;
        AuditLog::start(Sink::File(file), path.display().to_string())
    }

    /// Write lines to this process's stderr (each line one write, among the log lines).
    ///
    /// # Errors
    ///
    /// [`AuditLogError::Thread`] when the writer thread cannot be started.
    ///
    /// ```
    /// let log = mcp_toolbelt::server::AuditLog::to_stderr().unwrap();
    /// assert_eq!(log.lines_written(), 0);
    /// ```
    pub fn to_stderr() -> Result<AuditLog, AuditLogError> {
        AuditLog::start(Sink::Stderr, "stderr".into())
    }

    fn start(mut sink: Sink, target: String) -> Result<AuditLog, AuditLogError> {
        let inner = Arc::new(Inner {
            target,
            queue: Mutex::new(Queue {
                waiting: Vec::new(),
                writing: 0,
                bound: DEFAULT_AUDIT_QUEUE,
                closed: false,
                writer_waiting: false,
                flushing: 0,
                gathering: false,
            }),
            ready: Condvar::new(),
            idle: Condvar::new(),
            replica: OnceLock::new(),
            write_failures: AtomicU64::new(0),
            queue_drops: AtomicU64::new(0),
            written: AtomicU64::new(0),
            last_warning: Mutex::new(None),
        });
        let writer = inner.clone();
        std::thread::Builder::new()
            .name("mcp-audit-log".into())
            .spawn(move || writer.run(&mut sink))
            .map_err(AuditLogError::Thread)?;
        Ok(AuditLog {
            _closer: Arc::new(Closer(inner.clone())),
            inner,
        })
    }

    /// At most `bound` lines wait for the writer (at least 1; [`DEFAULT_AUDIT_QUEUE`] by
    /// default): the most a `kill -9` can lose, and the most memory the queue holds.
    pub fn queue_bound(self, bound: usize) -> AuditLog {
        self.inner.queue.lock_ignoring_poison().bound = bound.max(1);
        self
    }

    /// The queue's bound ([`queue_bound`](Self::queue_bound)).
    pub fn queue_bound_len(&self) -> usize {
        self.inner.queue.lock_ignoring_poison().bound
    }

    /// Name this replica in every line (`replica`). [`HttpOptions::replica_id`] sets it
    /// when the server is served over HTTP, unless it was set here first.
    ///
    /// [`HttpOptions::replica_id`]: crate::server::HttpOptions
    ///
    /// ```
    /// let log = mcp_toolbelt::server::AuditLog::to_stderr().unwrap().replica("mcp-7c9f");
    /// assert_eq!(log.replica_id(), Some("mcp-7c9f"));
    /// ```
    pub fn replica(self, id: impl Into<String>) -> AuditLog {
        self.set_replica(id.into());
        self
    }

    /// The replica named in every line, if any.
    pub fn replica_id(&self) -> Option<&str> {
        self.inner.replica.get().map(|id| &**id)
    }

    /// Set the replica unless one is set already (an empty id sets nothing).
    pub(crate) fn set_replica(&self, id: String) {
        if !id.is_empty() {
            let _ = self.inner.replica.set(id.into_boxed_str());
        }
    }

    /// Lines the target refused (a write error: disk full, a closed stderr), counted when
    /// the writer gave up on them. Each is also reported as a warning (rate-limited).
    pub fn write_failures(&self) -> u64 {
        self.inner.write_failures.load(Ordering::Relaxed)
    }

    /// Lines dropped because the queue was full (the call was answered without waiting).
    pub fn queue_drops(&self) -> u64 {
        self.inner.queue_drops.load(Ordering::Relaxed)
    }

    /// Lines written.
    pub fn lines_written(&self) -> u64 {
        self.inner.written.load(Ordering::Relaxed)
    }

    /// Wait until every queued line is written (or failed), at most `timeout`: true when
    /// the queue is empty. Serving flushes on its own when a graceful shutdown ends.
    pub fn flush(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut queue = self.inner.queue.lock_ignoring_poison();
        queue.flushing += 1;
        if queue.gathering {
            // Write what is there now.
            self.inner.ready.notify_one();
        }
        let mut empty = true;
        while !queue.waiting.is_empty() || queue.writing > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                empty = false;
                break;
            }
            queue = self.inner.idle.wait_timeout_ignoring_poison(queue, left);
        }
        queue.flushing -= 1;
        empty
    }

    /// Queue the line of a call that ended now; never waits (a full queue drops it, and
    /// counts and reports the drop).
    pub(crate) fn record(&self, entry: Entry) {
        let now = SystemTime::now();
        let mut queue = self.inner.queue.lock_ignoring_poison();
        if queue.waiting.len() + queue.writing >= queue.bound {
            drop(queue);
            self.inner.queue_drops.fetch_add(1, Ordering::Relaxed);
            self.inner.warn(None);
            return;
        }
        queue.waiting.push((now, entry));
        let wake = queue.writer_waiting || (queue.gathering && queue.half_full());
        drop(queue);
        if wake {
            self.inner.ready.notify_one();
        }
    }
}

impl Inner {
    /// The writer thread: take every queued line, write them in one go, repeat until the
    /// log is closed and empty.
    fn run(&self, sink: &mut Sink) {
        let mut taken = Vec::new();
        let mut text = Vec::new();
        loop {
            {
                let mut queue = self.queue.lock_ignoring_poison();
                while queue.waiting.is_empty() && !queue.closed {
                    queue.writer_waiting = true;
                    queue = self.ready.wait_ignoring_poison(queue);
                    queue.writer_waiting = false;
                }
                if queue.waiting.is_empty() {
                    return;
                }
                // One write (and one wake-up) for the lines of the next moment rather than
                // for each: a line lands at most GATHER later.
                let until = Instant::now() + GATHER;
                while !queue.closed && queue.flushing == 0 && !queue.half_full() {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    queue.gathering = true;
                    queue = self.ready.wait_timeout_ignoring_poison(queue, left);
                    queue.gathering = false;
                }
                queue.writing = queue.waiting.len();
                std::mem::swap(&mut taken, &mut queue.waiting);
            }
            let lines = self.write_lines(&mut text, taken.drain(..));
            match sink.write(&text) {
                Ok(()) => {
                    self.written.fetch_add(lines, Ordering::Relaxed);
                }
                Err(error) => {
                    self.write_failures.fetch_add(lines, Ordering::Relaxed);
                    self.warn(Some(&error.to_string()));
                }
            }
            // A burst of long lines leaves no large buffer behind.
            text.shrink_to(KEPT_BUFFER);
            let mut queue = self.queue.lock_ignoring_poison();
            queue.writing = 0;
            let flushing = queue.flushing > 0;
            drop(queue);
            if flushing {
                self.idle.notify_all();
            }
        }
    }

    /// Write the lines of `entries` into `text` (emptied first), each with its newline:
    /// how many were written. A line that cannot be written is counted as failed and left
    /// out.
    fn write_lines(
        &self,
        text: &mut Vec<u8>,
        entries: impl Iterator<Item = (SystemTime, Entry)>,
    ) -> u64 {
        text.clear();
        let replica = self.replica.get().map(|id| &**id);
        let mut lines = 0;
        for (time, entry) in entries {
            let start = text.len();
            match entry.write(text, replica, time) {
                Ok(()) => {
                    text.push(b'\n');
                    lines += 1;
                }
                // Serializing a map of strings and numbers does not fail; if it ever did,
                // the line is counted as lost, not skipped silently.
                Err(error) => {
                    text.truncate(start);
                    self.write_failures.fetch_add(1, Ordering::Relaxed);
                    self.warn(Some(&error.to_string()));
                }
            }
        }
        lines
    }

    /// Say that lines were lost, at most once per [`WARN_EVERY`], with the totals.
    fn warn(&self, error: Option<&str>) {
        let now = Instant::now();
        {
            let mut last = self.last_warning.lock_ignoring_poison();
            if last.is_some_and(|at| now.duration_since(at) < WARN_EVERY) {
                return;
            }
            *last = Some(now);
        }
        tracing::warn!(
            target_log = %self.target,
            write_failures = self.write_failures.load(Ordering::Relaxed),
            queue_drops = self.queue_drops.load(Ordering::Relaxed),
            error = error.unwrap_or("the queue is full"),
            "audit log: lines could not be written"
        );
    }
}

/// How a call ended, as the audit line says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It succeeded.
    Ok,
    /// A tool answered with an error result (`isError`), of this kind.
    ToolError(ErrorKind),
    /// The request was answered with a JSON-RPC error: its code, and the error's kind when
    /// the error carries one (a resource or prompt fn that failed).
    ProtocolError(i32, Option<String>),
}

/// One call's line, as it waits for the writer: what the line says, copied, so that its
/// text is made by the writer ([`Entry::write`]) rather than on the call's thread (and
/// what the call's thread allocated is not freed on the writer's: `copied_text`).
pub(crate) struct Entry {
    pub(crate) method: &'static str,
    /// The tool name, prompt name, fixed resource URI or resource template.
    pub(crate) target: CopiedText,
    /// The caller's subject and client id.
    pub(crate) subject: Option<CopiedText>,
    pub(crate) client_id: Option<CopiedText>,
    pub(crate) request_id: CopiedRequestId,
    pub(crate) session: Option<CopiedText>,
    /// The protocol's own constant for a revision it knows (`shared_version`).
    pub(crate) protocol_version: Option<ProtocolVersion>,
    pub(crate) outcome: Outcome,
    pub(crate) duration: Duration,
    /// [`arguments_digest`] of the arguments.
    pub(crate) digest: ArgumentsDigest,
    /// The arguments the tool lets the log keep.
    pub(crate) kept: Option<Map<String, Value>>,
}

impl Entry {
    /// Append the JSON line (no newline) at time `now` to `line`: its fields in a fixed
    /// order (`time`, `subject`, `client_id`, `method`, `target`, `outcome`, `error_kind`,
    /// `error_code`, `duration_us`, `replica`, `request_id`, `session`, `protocol_version`,
    /// `arguments_digest`, `arguments`), the optional ones left out when absent and
    /// `subject`, `client_id` and `replica` written as `null`. The names are written as
    /// they are; every value that did not come from this module is escaped as
    /// `serde_json` escapes it ([`json_string`]).
    fn write(
        &self,
        line: &mut Vec<u8>,
        replica: Option<&str>,
        now: SystemTime,
    ) -> serde_json::Result<()> {
        let (outcome, error_kind, error_code) = match &self.outcome {
            Outcome::Ok => ("ok", None, None),
            Outcome::ToolError(kind) => ("tool_error", Some(kind.as_str()), None),
            Outcome::ProtocolError(code, kind) => ("protocol_error", kind.as_deref(), Some(*code)),
        };
        let mut digits = itoa::Buffer::new();
        line.extend_from_slice(b"{\"time\":\"");
        line.extend_from_slice(rfc3339(now).as_str().as_bytes());
        line.extend_from_slice(b"\",\"subject\":");
        json_option(line, self.subject.as_ref().map(CopiedText::as_str));
        line.extend_from_slice(b",\"client_id\":");
        json_option(line, self.client_id.as_ref().map(CopiedText::as_str));
        line.extend_from_slice(b",\"method\":");
        json_string(line, self.method);
        line.extend_from_slice(b",\"target\":");
        json_string(line, self.target.as_str());
        line.extend_from_slice(b",\"outcome\":\"");
        line.extend_from_slice(outcome.as_bytes());
        line.push(b'"');
        if let Some(kind) = error_kind {
            line.extend_from_slice(b",\"error_kind\":");
            json_string(line, kind);
        }
        if let Some(code) = error_code {
            line.extend_from_slice(b",\"error_code\":");
            line.extend_from_slice(digits.format(code).as_bytes());
        }
        line.extend_from_slice(b",\"duration_us\":");
        let micros = u64::try_from(self.duration.as_micros()).unwrap_or(u64::MAX);
        line.extend_from_slice(digits.format(micros).as_bytes());
        line.extend_from_slice(b",\"replica\":");
        json_option(line, replica);
        line.extend_from_slice(b",\"request_id\":");
        match self.request_id.borrowed() {
            RequestIdRef::Text(text) => json_string(line, text),
            RequestIdRef::Number(number) => {
                line.push(b'"');
                line.extend_from_slice(digits.format(number).as_bytes());
                line.push(b'"');
            }
        }
        if let Some(session) = &self.session {
            line.extend_from_slice(b",\"session\":");
            json_string(line, session.as_str());
        }
        if let Some(version) = &self.protocol_version {
            line.extend_from_slice(b",\"protocol_version\":");
            json_string(line, version.as_str());
        }
        // Hex digits: nothing to escape.
        line.extend_from_slice(b",\"arguments_digest\":\"");
        line.extend_from_slice(&self.digest.hex());
        line.push(b'"');
        if let Some(kept) = &self.kept {
            line.extend_from_slice(b",\"arguments\":");
            serde_json::to_writer(&mut *line, kept)?;
        }
        line.push(b'}');
        Ok(())
    }
}

/// The most the writer's batch buffer or a thread's digest buffer keeps between uses (a
/// longer one is shrunk to this).
const KEPT_BUFFER: usize = 256 * 1024;

/// The top-level arguments of `arguments` named in `keep` (those present), if any.
pub(crate) fn kept_arguments<'k>(
    object: &Map<String, Value>,
    keep: impl Iterator<Item = &'k str>,
) -> Option<Map<String, Value>> {
    let kept: Map<String, Value> = keep
        .filter_map(|name| Some((name.to_string(), object.get(name)?.clone())))
        .collect();
    (!kept.is_empty()).then_some(kept)
}

/// The SHA-256 digest, in lower-case hex, of `value`'s canonical JSON: object keys sorted
/// (by their UTF-8 bytes), no whitespace, strings escaped and numbers written as
/// `serde_json` writes them. Equal arguments give equal digests whatever order the client
/// sent their keys in; `1` and `1.0` are different arguments. The audit log writes it as
/// `arguments_digest`, so an operator holding some arguments can find their calls.
///
/// ```
/// use mcp_toolbelt::server::arguments_digest;
/// use serde_json::json;
/// let a = arguments_digest(&json!({"b": 1, "a": [true, null, "x"]}));
/// let b: serde_json::Value = serde_json::from_str(r#"{ "a": [true, null, "x"], "b": 1 }"#).unwrap();
/// assert_eq!(a, arguments_digest(&b));
/// assert_eq!(a.len(), 64);
/// assert_ne!(a, arguments_digest(&json!({"b": 2, "a": [true, null, "x"]})));
/// ```
pub fn arguments_digest(value: &Value) -> String {
    value_digest(value).to_string()
}

/// [`arguments_digest`] of `value`, not copied into a `String`.
pub(crate) fn value_digest(value: &Value) -> ArgumentsDigest {
    digest(Step::Value(value))
}

/// [`arguments_digest`] of a request's arguments object (none counts as `{}`), without
/// copying it into a [`Value`].
pub(crate) fn object_digest(object: Option<&Map<String, Value>>) -> ArgumentsDigest {
    match object {
        Some(object) => digest(Step::Object(object)),
        None => ArgumentsDigest::of(b"{}"),
    }
}

/// Room for the canonical text of usual arguments: digested in one go, not piece by piece.
const DIGESTED_CAPACITY: usize = 256;

/// The digest of the canonical JSON of `first`, written in this thread's buffer.
fn digest(first: Step<'_>) -> ArgumentsDigest {
    thread_local! {
        static TEXT: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(DIGESTED_CAPACITY));
    }
    TEXT.with_borrow_mut(|text| {
        text.clear();
        canonical(text, first);
        let digest = ArgumentsDigest::of(text);
        text.shrink_to(KEPT_BUFFER);
        digest
    })
}

/// A SHA-256 digest ([`arguments_digest`]), written in lower-case hex.
#[derive(Clone, Copy)]
pub(crate) struct ArgumentsDigest([u8; 32]);

impl ArgumentsDigest {
    /// The digest of `text`.
    fn of(text: &[u8]) -> ArgumentsDigest {
        ArgumentsDigest(Sha256::digest(text).into())
    }

    /// The digest in lower-case hex.
    fn hex(&self) -> [u8; 64] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut hex = [0u8; 64];
        for (pair, byte) in hex.chunks_exact_mut(2).zip(self.0) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 0xf)];
        }
        hex
    }
}

impl fmt::Display for ArgumentsDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Hex digits only.
        f.write_str(std::str::from_utf8(&self.hex()).unwrap_or_default())
    }
}

/// A piece of canonical JSON still to write.
enum Step<'v> {
    Value(&'v Value),
    /// An object, whether inside a [`Value`] or not.
    Object(&'v Map<String, Value>),
    Raw(&'static [u8]),
    Key(&'v str),
}

/// The canonical JSON of `first`, appended to `text`, written iteratively (no nesting
/// depth can overflow the stack).
fn canonical(text: &mut Vec<u8>, first: Step<'_>) {
    // Room for a few members of a few levels: one allocation, no growing, for usual ones.
    let mut stack = Vec::with_capacity(16);
    stack.push(first);
    while let Some(step) = stack.pop() {
        match step {
            Step::Raw(bytes) => text.extend_from_slice(bytes),
            Step::Key(key) => {
                json_string(text, key);
                text.push(b':');
            }
            Step::Value(Value::Null) => text.extend_from_slice(b"null"),
            Step::Value(Value::Bool(true)) => text.extend_from_slice(b"true"),
            Step::Value(Value::Bool(false)) => text.extend_from_slice(b"false"),
            Step::Value(Value::Number(number)) => {
                // Writing a number into a `Vec` cannot fail.
                let _ = serde_json::to_writer(&mut *text, number);
            }
            Step::Value(Value::String(string)) => json_string(text, string),
            Step::Value(Value::Array(items)) => {
                text.push(b'[');
                stack.push(Step::Raw(b"]"));
                for (at, item) in items.iter().enumerate().rev() {
                    stack.push(Step::Value(item));
                    if at > 0 {
                        stack.push(Step::Raw(b","));
                    }
                }
            }
            Step::Value(Value::Object(object)) | Step::Object(object) => {
                text.push(b'{');
                stack.push(Step::Raw(b"}"));
                // serde_json's map keeps its keys sorted unless a crate turns on its
                // `preserve_order`: then they are sorted here.
                if object
                    .keys()
                    .is_sorted_by(|a, b| a.as_bytes() < b.as_bytes())
                {
                    push_members(&mut stack, object.iter().rev());
                } else {
                    let mut keys: Vec<(&String, &Value)> = object.iter().collect();
                    keys.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                    push_members(&mut stack, keys.into_iter().rev());
                }
            }
        }
    }
}

/// Push an object's `members`, given last first, to be written first to last with a comma
/// between them.
fn push_members<'v>(
    stack: &mut Vec<Step<'v>>,
    members: impl ExactSizeIterator<Item = (&'v String, &'v Value)>,
) {
    let mut left = members.len();
    for (key, item) in members {
        left -= 1;
        stack.push(Step::Value(item));
        stack.push(Step::Key(key));
        if left > 0 {
            stack.push(Step::Raw(b","));
        }
    }
}

/// `string` quoted and escaped as `serde_json` writes it, appended to `text`: as it is
/// when nothing in it needs escaping (the usual case, without `serde_json`'s machinery),
/// else by `serde_json`.
fn json_string(text: &mut Vec<u8>, string: &str) {
    if needs_escaping(string.as_bytes()) {
        // Writing a string into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *text, string);
    } else {
        text.push(b'"');
        text.extend_from_slice(string.as_bytes());
        text.push(b'"');
    }
}

/// Whether `bytes` hold one that JSON requires escaped, which is all `serde_json`
/// escapes: a control character (below 0x20), '"' or '\\'. Eight bytes are tested at a
/// time: a byte below `n` leaves its high bit set in `(word - n per byte) & !word`, and
/// the first such byte is found exactly (a borrow only runs on past a byte that is
/// below `n` itself).
fn needs_escaping(bytes: &[u8]) -> bool {
    const EACH: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = EACH * 0x80;
    let below = |word: u64, n: u8| word.wrapping_sub(EACH * u64::from(n)) & !word & HIGH;
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_ne_bytes(word);
        let found = below(word, 0x20)
            | below(word ^ (EACH * u64::from(b'"')), 1)
            | below(word ^ (EACH * u64::from(b'\\')), 1);
        if found != 0 {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&byte| byte < 0x20 || byte == b'"' || byte == b'\\')
}

/// `string` as [`json_string`] writes it, or `null`.
fn json_option(text: &mut Vec<u8>, string: Option<&str>) {
    match string {
        Some(string) => json_string(text, string),
        None => text.extend_from_slice(b"null"),
    }
}

/// A time as RFC 3339 in UTC with milliseconds, e.g. `2026-11-27T17:51:18.123Z`.
struct Rfc3339([u8; 24]);

impl Rfc3339 {
    fn as_str(&self) -> &str {
        // Only ASCII digits and separators are ever written.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// `time` as RFC 3339 in UTC with milliseconds (years 0 to 9999; the clock of a running
/// server is within them).
fn rfc3339(time: SystemTime) -> Rfc3339 {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    let mut text = *b"0000-00-00T00:00:00.000Z";
    let mut digits = |at: usize, width: usize, mut value: u64| {
        for place in (at..at + width).rev() {
            text[place] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    digits(0, 4, year.clamp(0, 9999) as u64);
    digits(5, 2, u64::from(month));
    digits(8, 2, u64::from(day));
    digits(11, 2, rest / 3600);
    digits(14, 2, rest % 3600 / 60);
    digits(17, 2, rest % 60);
    digits(20, 3, u64::from(since.subsec_millis()));
    Rfc3339(text)
}

/// The proleptic Gregorian date of `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    impl Entry {
        /// The line on its own.
        fn line(&self, replica: Option<&str>, now: SystemTime) -> serde_json::Result<Vec<u8>> {
            let mut line = Vec::new();
            self.write(&mut line, replica, now)?;
            Ok(line)
        }

        /// A successful call of the tool `target` by no one in particular.
        fn of_tool(target: &str) -> Entry {
            Entry {
                method: "tools/call",
                target: CopiedText::new(target),
                subject: None,
                client_id: None,
                request_id: CopiedRequestId::Number(1),
                session: None,
                protocol_version: None,
                outcome: Outcome::Ok,
                duration: Duration::from_micros(1),
                digest: ArgumentsDigest::of(b"{}"),
                kept: None,
            }
        }
    }

    fn canonical_text(value: &Value) -> String {
        let mut text = Vec::new();
        canonical(&mut text, Step::Value(value));
        String::from_utf8(text).unwrap()
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level_and_parses_back_equal() {
        let value =
            json!({"z": {"b": [1, {"y": null, "x": "é\"\n"}], "a": true}, "a": -2.5e-3, "": []});
        let text = canonical_text(&value);
        assert_eq!(
            text,
            r#"{"":[],"a":-0.0025,"z":{"a":true,"b":[1,{"x":"é\"\n","y":null}]}}"#
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    }

    #[test]
    fn the_digest_is_sha256_of_the_canonical_form_and_ignores_key_order() {
        // `printf '{"a":1,"b":"x"}' | sha256sum`
        assert_eq!(
            arguments_digest(&json!({"b": "x", "a": 1})),
            "ecf9e98ec0641e23113ff3ce8bdc78d0ddd249886517fd4a7f68cc83d4e65667"
        );
        let one: Value = serde_json::from_str(r#"{"b":"x","a":1}"#).unwrap();
        let two: Value = serde_json::from_str(r#"{ "a" : 1 , "b" : "x" }"#).unwrap();
        assert_eq!(arguments_digest(&one), arguments_digest(&two));
        assert_ne!(
            arguments_digest(&json!({"a": 1})),
            arguments_digest(&json!({"a": 1.0}))
        );
        let object = json!({"b": [1, {"d": 2, "c": 3}], "a": 1});
        assert_eq!(
            object_digest(object.as_object()).to_string(),
            arguments_digest(&object)
        );
        assert_eq!(
            object_digest(None).to_string(),
            arguments_digest(&json!({}))
        );
        assert_ne!(
            arguments_digest(&json!(["a", "b"])),
            arguments_digest(&json!(["b", "a"]))
        );
    }

    #[test]
    fn deep_values_are_digested_without_recursion() {
        let mut value = json!(0);
        for _ in 0..100_000 {
            value = Value::Array(vec![value]);
        }
        assert_eq!(arguments_digest(&value).len(), 64);
        // serde_json's own drop of the value would recurse: take it apart by hand.
        let mut next = Some(value);
        while let Some(Value::Array(mut items)) = next {
            next = items.pop();
        }
    }

    #[test]
    fn times_are_rfc3339_utc() {
        let text = |time| rfc3339(time).as_str().to_string();
        assert_eq!(text(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_801_878_123);
        assert_eq!(text(t), "2026-11-27T17:51:18.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(text(leap), "2000-02-29T00:00:00.000Z");
        let last = UNIX_EPOCH + Duration::from_millis(946_684_799_999); // every digit 9
        assert_eq!(text(last), "1999-12-31T23:59:59.999Z");
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut every: Vec<String> = (0u8..=0x7f).map(|b| char::from(b).to_string()).collect();
        every.extend(["", "plain", "é\u{2028}😀", "a\"b\\c\u{1}\u{7f}"].map(String::from));
        // Each byte at each place of a word, and past the words, among bytes that need
        // no escaping (and next to each other, for the borrows between them).
        for byte in (0u8..=0x7f).chain([0xc3, 0xff]) {
            for at in 0..19 {
                let mut bytes = vec![b'a'; 19];
                bytes[at] = byte;
                every.push(String::from_utf8_lossy(&bytes).into_owned());
                bytes[(at + 1) % 19] = 0x1f;
                every.push(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        for string in every {
            let mut ours = Vec::new();
            json_string(&mut ours, &string);
            assert_eq!(ours, serde_json::to_vec(&string).unwrap(), "{string:?}");
        }
    }

    #[test]
    fn values_are_escaped_and_the_fields_keep_their_order() {
        let hostile = "al\"ice\n\u{7}}{";
        let entry = Entry {
            subject: Some(CopiedText::new(hostile)),
            request_id: CopiedRequestId::Text(CopiedText::new("\"7\"")),
            outcome: Outcome::ProtocolError(-32000, Some("odd\r\nkind".into())),
            duration: Duration::from_micros(3),
            ..Entry::of_tool("t\\x")
        };
        let text = String::from_utf8(entry.line(Some("r\"1"), UNIX_EPOCH).unwrap()).unwrap();
        assert!(!text.contains(['\n', '\r', '\u{7}']), "{text}");
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["subject"], hostile);
        assert_eq!(parsed["client_id"], Value::Null);
        assert_eq!(parsed["target"], "t\\x");
        assert_eq!(parsed["request_id"], "\"7\"");
        assert_eq!(parsed["error_kind"], "odd\r\nkind");
        assert_eq!(parsed["replica"], "r\"1");
        let order = [
            "time",
            "subject",
            "client_id",
            "method",
            "target",
            "outcome",
            "error_kind",
            "error_code",
            "duration_us",
            "replica",
            "request_id",
            "arguments_digest",
        ];
        let at: Vec<usize> = order
            .iter()
            .map(|key| text.find(&format!("\"{key}\":")).expect(key))
            .collect();
        assert!(at.windows(2).all(|pair| pair[0] < pair[1]), "{text}");
        assert_eq!(parsed.as_object().unwrap().len(), order.len(), "{text}");
    }

    #[test]
    fn a_line_has_every_field_and_only_the_kept_arguments() {
        let arguments = json!({"region": "eu", "password": "hunter2"});
        let digest = value_digest(&arguments);
        let entry = Entry {
            method: "tools/call",
            target: CopiedText::new("deploy"),
            subject: Some(CopiedText::new("alice")),
            client_id: Some(CopiedText::new("ci")),
            request_id: CopiedRequestId::Number(7),
            session: Some(CopiedText::new("s-1")),
            protocol_version: Some(ProtocolVersion::V_2025_11_25),
            outcome: Outcome::ToolError(ErrorKind::Upstream),
            duration: Duration::from_micros(1500),
            digest,
            kept: kept_arguments(
                arguments.as_object().unwrap(),
                ["region", "absent"].into_iter(),
            ),
        };
        let now = UNIX_EPOCH + Duration::from_millis(1_795_801_878_123);
        let line = entry.line(Some("r1"), now).unwrap();
        let text = String::from_utf8(line).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains('\n'));
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            parsed,
            json!({
                "time": "2026-11-27T17:51:18.123Z",
                "subject": "alice",
                "client_id": "ci",
                "method": "tools/call",
                "target": "deploy",
                "outcome": "tool_error",
                "error_kind": "upstream_error",
                "duration_us": 1500,
                "replica": "r1",
                "request_id": "7",
                "session": "s-1",
                "protocol_version": "2025-11-25",
                "arguments_digest": digest.to_string(),
                "arguments": {"region": "eu"},
            })
        );
        let protocol = Entry {
            outcome: Outcome::ProtocolError(-32602, None),
            kept: None,
            session: None,
            ..entry
        };
        let parsed: Value = serde_json::from_slice(&protocol.line(None, now).unwrap()).unwrap();
        assert_eq!(parsed["outcome"], "protocol_error");
        assert_eq!(parsed["error_code"], -32602);
        assert_eq!(parsed["replica"], Value::Null);
        assert!(parsed.get("arguments").is_none() && parsed.get("session").is_none());
    }

    #[test]
    fn a_full_queue_drops_and_counts_and_the_writer_drains_it() {
        let dir = std::env::temp_dir().join(format!("audit-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("queue.jsonl");
        let log = AuditLog::to_file(&path).unwrap().queue_bound(4);
        for n in 0..1000 {
            log.record(Entry::of_tool(&format!("t{n}")));
        }
        assert!(log.flush(Duration::from_secs(10)));
        let lines = std::fs::read_to_string(&path).unwrap().lines().count() as u64;
        assert_eq!(lines, log.lines_written());
        assert_eq!(lines + log.queue_drops(), 1000);
        assert_eq!(log.write_failures(), 0);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn write_failures_are_counted() {
        // /dev/full: every write fails with ENOSPC, a real device refusing lines.
        let log = AuditLog::to_file("/dev/full").unwrap();
        for n in 0..10 {
            log.record(Entry::of_tool(&format!("t{n}")));
        }
        assert!(log.flush(Duration::from_secs(10)));
        assert_eq!(log.write_failures(), 10);
        assert_eq!(log.lines_written(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn an_exposed_existing_file_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::temp_dir().join(format!("audit-exposed-{}", std::process::id()));
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = AuditLog::to_file(&path).unwrap_err();
        assert!(matches!(err, AuditLogError::Exposed(_)), "{err}");
        std::fs::remove_file(&path).unwrap();
    }
}
