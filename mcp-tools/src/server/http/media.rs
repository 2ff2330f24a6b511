//! The one reader of the media-type headers: which of MCP's two reply types (JSON and
//! server-sent events) a request's `Accept` takes and prefers, and whether its
//! `Content-Type` says JSON.

use http::{HeaderMap, header};

const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";

/// A media range's rank in `Accept`: its weight, then its position (earlier is higher).
type Rank = (f32, std::cmp::Reverse<usize>);

/// The weight a range's parameters give it: its `q`, 1 without one (or an unreadable one).
fn weight(params: &[u8]) -> f32 {
    params
        .split(|&b| b == b';')
        .filter_map(|param| param.trim_ascii().strip_prefix(b"q="))
        .find_map(|q| std::str::from_utf8(q).ok()?.trim().parse::<f32>().ok())
        .unwrap_or(1.0)
}

/// What a request's `Accept` says of JSON and event-stream replies.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Accepts {
    json: Option<Rank>,
    stream: Option<Rank>,
    /// Every value was text without parameters or quotes.
    plain: bool,
}

impl Accepts {
    /// Read the `Accept` headers of `headers` (every value, every range; a range's `q`
    /// parameter is its weight, 1 without one; the first range of a type counts). Read
    /// once per request, as bytes, and without allocating: every request pays for it.
    pub(super) fn of(headers: &HeaderMap) -> Accepts {
        let mut accepts = Accepts {
            plain: true,
            ..Accepts::default()
        };
        let mut position = 0;
        for value in headers.get_all(header::ACCEPT) {
            if value.to_str().is_err() {
                accepts.plain = false;
                continue;
            }
            for range in value.as_bytes().split(|&b| b == b',') {
                let (essence, params) = match range.iter().position(|&b| b == b';') {
                    Some(at) => (&range[..at], Some(&range[at + 1..])),
                    None => (range, None),
                };
                accepts.plain &= params.is_none() && !range.contains(&b'"');
                let essence = essence.trim_ascii();
                let slot = if essence.eq_ignore_ascii_case(JSON.as_bytes()) {
                    &mut accepts.json
                } else if essence.eq_ignore_ascii_case(EVENT_STREAM.as_bytes()) {
                    &mut accepts.stream
                } else {
                    position += 1;
                    continue;
                };
                if slot.is_none() {
                    *slot = Some((params.map_or(1.0, weight), std::cmp::Reverse(position)));
                }
                position += 1;
            }
        }
        accepts
    }

    /// True when JSON ranks above an event stream (by weight, then by order), or only JSON
    /// is named.
    pub(super) fn prefers_json(&self) -> bool {
        match (self.json, self.stream) {
            (Some(json), Some(stream)) => json.partial_cmp(&stream).is_some_and(|o| o.is_gt()),
            (Some(_), None) => true,
            _ => false,
        }
    }

    /// True when both JSON and event streams are named, and plainly: no parameter, no
    /// quoting (the form in which every reading agrees, so a request can be judged without
    /// rmcp's own reading).
    pub(super) fn names_both_plainly(&self) -> bool {
        self.plain && self.json.is_some() && self.stream.is_some()
    }
}

/// True when `Content-Type` says the body is JSON (parameters aside).
pub(super) fn body_is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case(JSON)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(values: &[&str]) -> Accepts {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::ACCEPT, value.parse().unwrap());
        }
        Accepts::of(&headers)
    }

    #[test]
    fn preference_is_by_weight_then_order() {
        assert!(accepts(&["application/json, text/event-stream"]).prefers_json());
        assert!(!accepts(&["text/event-stream, application/json"]).prefers_json());
        assert!(!accepts(&["application/json;q=0.5, text/event-stream"]).prefers_json());
        assert!(accepts(&["text/event-stream;q=0.1", "Application/JSON"]).prefers_json());
        assert!(accepts(&["text/event-stream;q=0.5, application/json"]).prefers_json());
        assert!(accepts(&["application/json"]).prefers_json());
        assert!(!accepts(&["text/event-stream"]).prefers_json());
        assert!(!accepts(&[]).prefers_json());
    }

    #[test]
    fn both_named_plainly_only_without_parameters() {
        assert!(accepts(&["application/json, text/event-stream"]).names_both_plainly());
        assert!(accepts(&["text/event-stream", "application/json"]).names_both_plainly());
        assert!(!accepts(&["application/json;q=1, text/event-stream"]).names_both_plainly());
        assert!(!accepts(&["application/json"]).names_both_plainly());
        assert!(!accepts(&["\"application/json\", text/event-stream"]).names_both_plainly());
        assert!(accepts(&["TEXT/EVENT-STREAM,application/json"]).names_both_plainly());
        assert!(!accepts(&["application/json, */*"]).names_both_plainly());
        assert!(!accepts(&[]).names_both_plainly());
    }

    #[test]
    fn a_json_body_is_told_by_its_essence() {
        let mut headers = HeaderMap::new();
        assert!(!body_is_json(&headers));
        headers.insert(
            header::CONTENT_TYPE,
            "Application/Json; charset=utf-8".parse().unwrap(),
        );
        assert!(body_is_json(&headers));
        headers.insert(header::CONTENT_TYPE, "text/plain".parse().unwrap());
        assert!(!body_is_json(&headers));
    }
}
