//! The client's end of the in-memory pipe: the writer, the requests waiting for their
//! answers, the notifications collected, and the task that reads the server's lines.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinSet;

use super::Notification;
use super::answers::Answers;

/// The client's side of one session.
pub(crate) struct Pipe {
    /// `None` once the client closed its side.
    writer: tokio::sync::Mutex<Option<WriteHalf<DuplexStream>>>,
    /// Requests sent and not answered yet, by id.
    pending: Mutex<HashMap<i64, oneshot::Sender<Value>>>,
    /// Notifications received and not taken yet.
    pub(crate) notifications: Mutex<Vec<Notification>>,
    /// Woken on every notification.
    pub(crate) notified: Notify,
}

impl Pipe {
    pub(crate) fn new(writer: WriteHalf<DuplexStream>) -> Pipe {
        Pipe {
            writer: tokio::sync::Mutex::new(Some(writer)),
            pending: Mutex::default(),
            notifications: Mutex::default(),
            notified: Notify::new(),
        }
    }

    /// Write `message` as one line; false when the session is closed.
    pub(crate) async fn send(&self, message: &Value) -> bool {
        let mut line = message.to_string();
        line.push('\n');
        let mut writer = self.writer.lock().await;
        let Some(writer) = writer.as_mut() else {
            return false;
        };
        writer.write_all(line.as_bytes()).await.is_ok() && writer.flush().await.is_ok()
    }

    /// The answer to request `id`, once it comes (an error once the session ends).
    pub(crate) fn expect(&self, id: i64) -> oneshot::Receiver<Value> {
        let (sender, receiver) = oneshot::channel();
        self.pending
            .lock()
            .expect("the pending map")
            .insert(id, sender);
        receiver
    }

    /// Stop waiting for request `id` (it timed out).
    pub(crate) fn forget(&self, id: i64) {
        self.pending.lock().expect("the pending map").remove(&id);
    }

    /// Close the client's side: the server reads the end of its input.
    pub(crate) async fn close(&self) {
        if let Some(mut writer) = self.writer.lock().await.take() {
            let _ = writer.shutdown().await;
        }
    }

    fn answered(&self, message: Value) {
        let Some(id) = message.get("id").and_then(Value::as_i64) else {
            tracing::warn!(%message, "the test client got an answer it cannot match");
            return;
        };
        let waiter = self.pending.lock().expect("the pending map").remove(&id);
        if let Some(waiter) = waiter {
            let _ = waiter.send(message);
        }
    }

    fn notify(&self, method: String, params: Value) {
        self.notifications
            .lock()
            .expect("the notifications")
            .push(Notification { method, params });
        self.notified.notify_waiters();
    }
}

/// Read the server's lines until the session ends: answers go to their waiters,
/// notifications are collected, and the server's requests are answered by `answers`, each
/// in a task of its own (a closure may take its time), owned by this one.
pub(crate) async fn read_lines(pipe: Arc<Pipe>, read: ReadHalf<DuplexStream>, answers: Answers) {
    let mut lines = BufReader::new(read).lines();
    let mut answering = JoinSet::new();
    loop {
        let line = tokio::select! {
            line = lines.next_line() => line,
            Some(_) = answering.join_next(), if !answering.is_empty() => continue,
        };
        let Ok(Some(line)) = line else { break };
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(%error, %line, "the server wrote a line that is not JSON");
                continue;
            }
        };
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            pipe.answered(message);
            continue;
        };
        let method = method.to_string();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = message.get("id").cloned() else {
            pipe.notify(method, params);
            continue;
        };
        let (pipe, answers) = (pipe.clone(), answers.clone());
        answering.spawn(async move {
            let reply = match answers.answer(&method, params).await {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err((code, message)) => json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": code, "message": message}}),
            };
            pipe.send(&reply).await;
        });
    }
    // The session ended: whoever still waits gets `Closed`.
    pipe.pending.lock().expect("the pending map").clear();
}
