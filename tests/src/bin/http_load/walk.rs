//! `--method list`: each client walks `tools/list` instead of calling `echo`. A walk asks
//! for the first page, then follows `nextCursor` page by page until a page has none, and
//! starts over; every page request counts as one request. A page is correct when it is a
//! result listing tools; a walk that ends must, with `--expect-tools N`, have listed exactly
//! N tools, all distinct, or its last page counts as an error.

use serde::Deserialize;
use serde_json::{Value, json};

/// One client's walk in progress.
#[derive(Default)]
pub struct Walk {
    /// The cursor of the next page (`None`: the first).
    cursor: Option<String>,
    /// The names listed so far.
    names: Vec<String>,
}

#[derive(Deserialize)]
struct Reply {
    result: Page,
}

/// The parts of a `tools/list` result a walk checks.
#[derive(Deserialize)]
struct Page {
    tools: Vec<Listed>,
    #[serde(default, rename = "nextCursor")]
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct Listed {
    name: String,
}

impl Walk {
    /// The next page request's params.
    pub fn params(&self) -> Value {
        match &self.cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        }
    }

    /// Move on with the reply `body` (a JSON body, or an event stream whose data holds
    /// it); false when the page, or the walk it ended, was wrong.
    pub fn advance(&mut self, body: &[u8], expect_tools: Option<usize>) -> bool {
        let Some(page) = page(body) else {
            *self = Walk::default();
            return false;
        };
        self.names.extend(page.tools.into_iter().map(|t| t.name));
        if let Some(next) = page.next_cursor {
            self.cursor = Some(next);
            return true;
        }
        let mut names = std::mem::take(self).names;
        let listed = names.len();
        names.sort_unstable();
        names.dedup();
        names.len() == listed && expect_tools.is_none_or(|n| n == listed)
    }
}

/// The `tools/list` result in `body`.
fn page(body: &[u8]) -> Option<Page> {
    if let Ok(reply) = serde_json::from_slice::<Reply>(body) {
        return Some(reply.result);
    }
    body.split(|&b| b == b'\n')
        .filter_map(|line| line.strip_prefix(b"data: "))
        .find_map(|data| serde_json::from_slice::<Reply>(data).ok())
        .map(|reply| reply.result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_follows_cursors_and_checks_the_names() {
        let mut walk = Walk::default();
        assert_eq!(walk.params(), json!({}));
        let first =
            br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"1.1"}}"#;
        assert!(walk.advance(first, Some(2)));
        assert_eq!(walk.params(), json!({"cursor": "1.1"}));
        let last =
            b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"b\"}]}}\n\n";
        assert!(walk.advance(last, Some(2)));
        assert_eq!(walk.params(), json!({}), "a finished walk starts over");
        assert!(walk.advance(first, Some(2)));
        let again = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}"#;
        assert!(!walk.advance(again, Some(2)), "a tool listed twice");
        assert!(!walk.advance(again, Some(2)), "a tool too few");
        let error = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad cursor"}}"#;
        assert!(!walk.advance(error, None));
    }
}
