//! `--method list`: `tools/list` walks. A walk asks for the first page, then follows
//! `nextCursor` page by page until a page has none, and starts over; `--window` walks run
//! at once, each with one page request in flight, until `--requests` page requests have
//! been answered (so servers listing the same number of pages are measured alike, however
//! many tools each page holds; a walk cut off by the end is not checked). A page is
//! correct when it is a result; a walk that ends must, with `--expect-tools N`, have listed
//! exactly N tools, all distinct, or its last page counts as an error.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::bail;
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{ChildStdin, ChildStdout};

use crate::cli::RunConfig;
use crate::run::{Counters, read_line, write_line};

/// One server message as a walk sees it.
#[derive(Deserialize)]
struct PageReply {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default)]
    result: Option<Page>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// The parts of a `tools/list` result a walk checks.
#[derive(Deserialize)]
struct Page {
    tools: Vec<ListedTool>,
    #[serde(default, rename = "nextCursor")]
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct ListedTool {
    name: String,
}

/// A walk in progress: the names listed so far.
#[derive(Default)]
struct Walk {
    names: Vec<String>,
}

/// How one reply line moves the walks on.
enum Step {
    /// A correct page: ask for the page after `cursor` for the same walk.
    Next { walk: Walk, cursor: String },
    /// The walk's last page; whether it (and the walk) was correct.
    Done(bool),
    /// Not a reply to a page request in flight.
    Unexpected,
    /// A notification: ignored.
    Notification,
}

/// Decides what `line` does to the walk it answers (taken out of `pending`).
fn step(line: &[u8], pending: &mut HashMap<u64, Walk>, expect_tools: Option<u64>) -> Step {
    let Ok(reply) = serde_json::from_slice::<PageReply>(line) else {
        return Step::Unexpected;
    };
    if reply.method.is_some() {
        return if reply.id.is_none() {
            Step::Notification
        } else {
            Step::Unexpected
        };
    }
    let Some(mut walk) = reply
        .id
        .as_ref()
        .and_then(serde_json::Value::as_u64)
        .and_then(|id| pending.remove(&id))
    else {
        return Step::Unexpected;
    };
    match (reply.error, reply.result) {
        (None, Some(page)) => {
            walk.names.extend(page.tools.into_iter().map(|t| t.name));
            match page.next_cursor {
                Some(cursor) => Step::Next { walk, cursor },
                None => Step::Done(listed_once(walk.names, expect_tools)),
            }
        }
        _ => Step::Done(false),
    }
}

/// True when `names` are distinct and, if given, exactly `expected` many.
fn listed_once(mut names: Vec<String>, expected: Option<u64>) -> bool {
    let listed = names.len();
    names.sort_unstable();
    names.dedup();
    names.len() == listed && expected.is_none_or(|n| n == listed as u64)
}

/// The `tools/list` request line with `id`, after `cursor` (the first page without one).
/// Written directly, as compact JSON in the usual member order (cheaper for the harness
/// than building a `Value`: the harness's own cost per page is part of every page's time).
fn page_request(id: u64, cursor: Option<&str>) -> Vec<u8> {
    let params = match cursor {
        Some(cursor) => format!(
            r#"{{"cursor":{}}}"#,
            serde_json::to_string(cursor).expect("a string serializes")
        ),
        None => "{}".to_string(),
    };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{params}}}"#).into_bytes()
}

/// The page requests of one run: the walks waiting for a page, by request id.
struct Walks {
    pending: HashMap<u64, Walk>,
    /// Requests sent; ids are 1, 2, … so this is also the last id.
    sent: u64,
}

impl Walks {
    /// Ask for the page after `cursor` (the first page without one) for `walk`.
    async fn send(
        &mut self,
        writer: &mut BufWriter<ChildStdin>,
        walk: Walk,
        cursor: Option<&str>,
        counters: &Counters,
    ) -> anyhow::Result<()> {
        self.sent += 1;
        self.pending.insert(self.sent, walk);
        counters.sent.store(self.sent, Ordering::Relaxed);
        write_line(writer, &page_request(self.sent, cursor)).await
    }
}

/// The first id of the warm-up's requests: beyond any run's own (1 to `--requests`).
const WARM_UP_FIRST_ID: u64 = 1 << 40;

/// `config.warm_up_walks` whole walks, one after the other and one page at a time (not
/// counted): afterwards the server has served every page once. A wrong page, or a walk
/// that does not list what `--expect-tools` says, fails the run.
pub(crate) async fn warm_up(
    writer: &mut BufWriter<ChildStdin>,
    reader: &mut BufReader<ChildStdout>,
    config: &RunConfig,
) -> anyhow::Result<()> {
    let mut id = WARM_UP_FIRST_ID;
    let mut line = Vec::new();
    for _ in 0..config.warm_up_walks {
        let (mut walk, mut cursor) = (Walk::default(), None::<String>);
        loop {
            id += 1;
            let mut pending = HashMap::from([(id, walk)]);
            write_line(writer, &page_request(id, cursor.as_deref())).await?;
            writer.flush().await?;
            let next = loop {
                if !read_line(reader, &mut line).await? {
                    bail!("the server closed stdout while warming up");
                }
                match step(&line, &mut pending, config.expect_tools) {
                    Step::Notification => continue,
                    next => break next,
                }
            };
            match next {
                Step::Next {
                    walk: rest,
                    cursor: after,
                } => (walk, cursor) = (rest, Some(after)),
                Step::Done(true) => break,
                Step::Done(false) | Step::Unexpected => {
                    bail!(
                        "a warm-up walk got a wrong page: {}",
                        String::from_utf8_lossy(&line)
                    )
                }
                Step::Notification => unreachable!("skipped above"),
            }
        }
    }
    Ok(())
}

/// Answers `config.requests` page requests in walks, `config.window` walks at a time,
/// counting correct pages in `ok` and wrong ones in `errors`. Returns the writer (stdin
/// kept open).
pub(crate) async fn walk_lists(
    mut writer: BufWriter<ChildStdin>,
    mut reader: BufReader<ChildStdout>,
    config: &RunConfig,
    counters: &Arc<Counters>,
) -> anyhow::Result<BufWriter<ChildStdin>> {
    let total = config.requests;
    let mut walks = Walks {
        pending: HashMap::new(),
        sent: 0,
    };
    for _ in 0..total.min(config.window) {
        walks
            .send(&mut writer, Walk::default(), None, counters)
            .await?;
    }
    writer.flush().await?;
    let mut answered = 0u64;
    let mut line = Vec::new();
    while answered < total {
        if !read_line(&mut reader, &mut line).await? {
            bail!("the server closed stdout after {answered} of {total} pages");
        }
        let (correct, walk, cursor) = match step(&line, &mut walks.pending, config.expect_tools) {
            Step::Notification => continue,
            Step::Unexpected => {
                counters.unexpected.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            Step::Next { walk, cursor } => (true, walk, Some(cursor)),
            Step::Done(correct) => (correct, Walk::default(), None),
        };
        answered += 1;
        let counter = if correct {
            &counters.ok
        } else {
            &counters.errors
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if walks.sent < total {
            walks
                .send(&mut writer, walk, cursor.as_deref(), counters)
                .await?;
        }
        // Send what was written once every reply already read has been handled.
        if reader.buffer().is_empty() {
            writer.flush().await?;
        }
    }
    writer.flush().await?;
    Ok(writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(id: u64, names: &[&str], next: Option<&str>) -> Vec<u8> {
        let tools: Vec<_> = names
            .iter()
            .map(|n| serde_json::json!({"name": n}))
            .collect();
        let mut result = serde_json::json!({ "tools": tools });
        if let Some(next) = next {
            result["nextCursor"] = next.into();
        }
        serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn a_walk_follows_cursors_and_checks_the_names() {
        let mut pending = HashMap::from([(1, Walk::default())]);
        let Step::Next { walk, cursor } =
            step(&page(1, &["a", "b"], Some("c1")), &mut pending, Some(3))
        else {
            panic!("a page with a cursor continues the walk");
        };
        assert_eq!(cursor, "c1");
        pending.insert(2, walk);
        assert!(matches!(
            step(&page(2, &["c"], None), &mut pending, Some(3)),
            Step::Done(true)
        ));
        assert!(pending.is_empty());
    }

    #[test]
    fn wrong_counts_repeats_errors_and_strangers_are_caught() {
        let mut pending = HashMap::from([(1, Walk::default()), (2, Walk::default())]);
        assert!(matches!(
            step(&page(1, &["a"], None), &mut pending, Some(2)),
            Step::Done(false)
        ));
        let mut repeated = HashMap::from([(1, Walk::default())]);
        assert!(matches!(
            step(&page(1, &["a", "a"], None), &mut repeated, None),
            Step::Done(false)
        ));
        let error = br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad cursor"}}"#;
        assert!(matches!(step(error, &mut pending, None), Step::Done(false)));
        assert!(matches!(
            step(&page(9, &["a"], None), &mut pending, None),
            Step::Unexpected
        ));
        assert!(matches!(
            step(b"nope", &mut pending, None),
            Step::Unexpected
        ));
        let note = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        assert!(matches!(step(note, &mut pending, None), Step::Notification));
    }

    #[test]
    fn requests_carry_the_cursor() {
        let first: serde_json::Value = serde_json::from_slice(&page_request(4, None)).unwrap();
        assert_eq!(first["params"], serde_json::json!({}));
        let next: serde_json::Value =
            serde_json::from_slice(&page_request(5, Some("1.2"))).unwrap();
        assert_eq!(next["params"]["cursor"], "1.2");
        assert_eq!(next["id"], 5);
        assert_eq!(next["method"], "tools/list");
        let quoted: serde_json::Value =
            serde_json::from_slice(&page_request(6, Some("a\"b\\"))).unwrap();
        assert_eq!(quoted["params"]["cursor"], "a\"b\\");
    }
}
