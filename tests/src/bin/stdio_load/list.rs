//! `--method list`: full `tools/list` walks. A walk asks for the first page, then follows
//! `nextCursor` page by page until a page has none; `--window` walks run at once (each
//! with one page request in flight) until `--requests` walks have completed. A walk is
//! correct when every page was a result and, with `--expect-tools N`, it listed exactly N
//! tools with distinct names.

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
    /// Ask for the page after `cursor` for the same walk.
    Next { walk: Walk, cursor: String },
    /// The walk is over; whether it was correct.
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
fn page_request(id: u64, cursor: Option<&str>) -> Vec<u8> {
    let params = match cursor {
        Some(cursor) => serde_json::json!({ "cursor": cursor }),
        None => serde_json::json!({}),
    };
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params})
        .to_string()
        .into_bytes()
}

/// Runs `config.requests` walks, `config.window` at a time, counting correct walks in
/// `ok`, wrong ones in `errors`, pages in `pages`. Returns the writer (stdin kept open).
pub(crate) async fn walk_lists(
    mut writer: BufWriter<ChildStdin>,
    mut reader: BufReader<ChildStdout>,
    config: &RunConfig,
    counters: &Arc<Counters>,
) -> anyhow::Result<BufWriter<ChildStdin>> {
    let total = config.requests;
    let mut pending: HashMap<u64, Walk> = HashMap::new();
    let mut next_id = 1u64;
    let mut started = 0u64;
    let mut finished = 0u64;
    while started < total.min(config.window) {
        write_line(&mut writer, &page_request(next_id, None)).await?;
        pending.insert(next_id, Walk::default());
        next_id += 1;
        started += 1;
    }
    counters.sent.store(started, Ordering::Relaxed);
    writer.flush().await?;
    let mut line = Vec::new();
    while finished < total {
        if !read_line(&mut reader, &mut line).await? {
            bail!("the server closed stdout after {finished} of {total} walks");
        }
        let follow_up = match step(&line, &mut pending, config.expect_tools) {
            Step::Notification => None,
            Step::Unexpected => {
                counters.unexpected.fetch_add(1, Ordering::Relaxed);
                None
            }
            Step::Next { walk, cursor } => {
                counters.pages.fetch_add(1, Ordering::Relaxed);
                Some((walk, Some(cursor)))
            }
            Step::Done(correct) => {
                counters.pages.fetch_add(1, Ordering::Relaxed);
                finished += 1;
                let counter = if correct {
                    &counters.ok
                } else {
                    &counters.errors
                };
                counter.fetch_add(1, Ordering::Relaxed);
                (started < total).then(|| {
                    started += 1;
                    counters.sent.store(started, Ordering::Relaxed);
                    (Walk::default(), None)
                })
            }
        };
        if let Some((walk, cursor)) = follow_up {
            write_line(&mut writer, &page_request(next_id, cursor.as_deref())).await?;
            pending.insert(next_id, walk);
            next_id += 1;
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
    }
}
