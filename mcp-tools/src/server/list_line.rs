//! A `tools/list` request line decoded straight into rmcp's type, without a
//! `serde_json::Value` in between.
//!
//! Every page of a `tools/list` walk after the first carries a `cursor`; decoded the general
//! way (`codec.rs`: the line into a `Value`, its `params` into a second map, then rmcp's
//! `ListToolsRequest`, whose `params` are a flattened struct that serde buffers field by
//! field) a page request with a cursor cost about a tenth more than one without. A line of
//! the plain shape every client sends (`jsonrpc`, `id`, `method` and at most `cursor` and
//! `_meta` in `params`, each once and of the right type) is read here in one pass instead,
//! into exactly the message the general path gives; `params` is taken as written and a
//! walk's two shapes, `{}` and a compact cursor alone, are read from those bytes
//! ([`params`]). A compact line whose last member is a cursor alone, as clients write a
//! walk's next page, is not even scanned that far: the cursor is read from the line's end
//! and serde parses only the rest ([`cursor_last`]). Anything else — another method, an
//! unknown or repeated member, an id rmcp would have to convert, escapes where a borrowed
//! string is needed — is left to the general path, which also answers every malformed
//! line.

use std::marker::PhantomData;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, Extensions, JsonObject, ListToolsRequest,
    PaginatedRequestParams, RequestId, RequestMetaObject,
};
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// Finds the method this module decodes, as it appears in a line.
static METHOD: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"tools/list\""));

/// The whole line (`deny_unknown_fields`: any other member takes the general path).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    id: Id,
    #[serde(borrow)]
    method: &'a str,
    /// `None` when absent; as written, read by [`params`] (which refuses `null`, as the
    /// general path does).
    #[serde(default, deserialize_with = "present", borrow)]
    params: Option<&'a RawValue>,
}

/// `params` of a `tools/list` request as rmcp reads them: a `cursor` (`null` when there is
/// none) and the request's `_meta` (`null` or an object).
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params<'a> {
    /// Borrowed from the line: a cursor with escapes takes the general path.
    #[serde(default, borrow)]
    cursor: Option<&'a str>,
    #[serde(default, rename = "_meta")]
    meta: Option<JsonObject>,
}

/// A JSON-RPC id as the general path accepts it: a string, or an integer written as one
/// that fits an `i64` (integers in float form are left to rmcp's own conversion).
struct Id(RequestId);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Id, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = Id;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an integer id")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Id, E> {
                Ok(Id(RequestId::Number(n)))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Id, E> {
                i64::try_from(n)
                    .map(|n| Id(RequestId::Number(n)))
                    .map_err(|_| E::custom("an id beyond i64"))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Id, E> {
                Ok(Id(RequestId::String(s.into())))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// `params` present, as written (`null` too: `Option`'s own reading would take it for
/// absent).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// The start and end of `params` with only a cursor, as compact JSON writes it.
const CURSOR_ONLY: (&str, &str) = (r#"{"cursor":""#, r#""}"#);

/// `params` (valid JSON, checked as the line was read) read as rmcp reads them; `None`
/// for anything but an object of [`Params`]' members (`null` and arrays included).
///
/// The two shapes of a walk are read without a second parse: `{}`, and a cursor alone
/// written compactly with no escape in it (`{"cursor":"…"}`: starts so, ends so, and no
/// quote between, so it is one member whose string is exactly those bytes). Any other
/// spelling is read by serde.
fn params(raw: &str) -> Option<Params<'_>> {
    if raw == "{}" {
        return Some(Params::default());
    }
    let (start, end) = CURSOR_ONLY;
    if let Some(cursor) = raw
        .strip_prefix(start)
        .and_then(|rest| rest.strip_suffix(end))
        && !cursor.bytes().any(|b| b == b'"' || b == b'\\')
    {
        return Some(Params {
            cursor: Some(cursor),
            meta: None,
        });
    }
    let mut reader = serde_json::Deserializer::from_str(raw);
    let params = object(&mut reader).ok()?;
    reader.end().ok()?;
    Some(params)
}

/// A `T` read from a JSON object only: a derived struct would also take an array of its
/// fields' values.
fn object<'de, T: Deserialize<'de>, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    struct ObjectOnly<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOnly<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map))
        }
    }
    deserializer.deserialize_map(ObjectOnly(PhantomData))
}

/// The end of a compact line whose last member is `params` holding a cursor alone: the
/// line ends `,"params":{"cursor":"…"}}`.
const CURSOR_LAST: (&str, &str) = (r#","params":{"cursor":""#, r#""}}"#);

/// The longest line start [`decode`] closes on the stack to read it without its `params`.
const HEAD_MAX: usize = 240;

/// `line` split before a compact `params` holding a cursor alone, its last member: the line
/// up to that member, and the cursor. `None` for any other line.
///
/// The cursor is the bytes between the last quote before the end and the end, so it holds
/// no quote; it must hold no backslash or control character either (neither is allowed
/// unescaped in a JSON string). Every quote of the tail is then a string's delimiter: if
/// the line up to it, closed with `}`, is an object of its own, the whole line is that
/// object with one more member, `params`. (Split at ASCII bytes, the line is UTF-8 when
/// both parts are.)
fn cursor_last(line: &[u8]) -> Option<(&[u8], &str)> {
    let (member, end) = CURSOR_LAST;
    let rest = line.strip_suffix(end.as_bytes())?;
    // A backward loop: the cursor is a few bytes, shorter than `memrchr`'s set-up.
    let open = rest.iter().rposition(|&b| b == b'"')?;
    let (head, cursor) = rest.split_at(open + 1);
    if cursor.iter().any(|&b| b == b'\\' || b < 0x20) {
        return None;
    }
    Some((
        head.strip_suffix(member.as_bytes())?,
        std::str::from_utf8(cursor).ok()?,
    ))
}

/// The id and `params` (as written) of `text`, a whole `tools/list` request line of the
/// plain shape; `None` for any other.
fn id_and_params(text: &str) -> Option<(RequestId, Option<&RawValue>)> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let Line {
        jsonrpc,
        id: Id(id),
        method,
        params,
    } = object(&mut reader).ok()?;
    reader.end().ok()?;
    (jsonrpc == "2.0" && method == "tools/list").then_some((id, params))
}

/// `line` (trimmed, not nested too deep) as a `tools/list` request message, when it has the
/// plain shape; `None`: decode it the general way.
pub(crate) fn decode(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    // Most lines are something else: a scan for the method's name is cheaper than a parse.
    METHOD.find(line)?;
    // Checked as UTF-8 once, not string by string as a byte reader does (a line that is
    // not UTF-8 gets its parse error from the general path).
    let mut closed = [0u8; HEAD_MAX + 1];
    let (id, params) = match cursor_last(line) {
        // A walk's page request as compact JSON writes it: the cursor is read from the
        // line's end and only the rest is parsed (closed with `}`; `params` must not be in
        // it again).
        Some((head, cursor)) if head.len() <= HEAD_MAX => {
            closed[..head.len()].copy_from_slice(head);
            closed[head.len()] = b'}';
            let head = std::str::from_utf8(&closed[..=head.len()]).ok()?;
            let (id, None) = id_and_params(head)? else {
                return None;
            };
            (
                id,
                Some(Params {
                    cursor: Some(cursor),
                    meta: None,
                }),
            )
        }
        _ => {
            let (id, params) = id_and_params(std::str::from_utf8(line).ok()?)?;
            let params = match params {
                Some(raw) => Some(self::params(raw.get())?),
                None => None,
            };
            (id, params)
        }
    };
    let mut extensions = Extensions::new();
    let params = params.map(|Params { cursor, meta }| {
        if let Some(meta) = meta {
            extensions.insert(RequestMetaObject::from(meta));
        }
        PaginatedRequestParams::default().with_cursor(cursor.map(String::from))
    });
    let request = ListToolsRequest {
        method: Default::default(),
        params,
        extensions,
    };
    Some(ClientJsonRpcMessage::request(
        ClientRequest::ListToolsRequest(request),
        id,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of the plain shape are read here, into the message rmcp's own decoding gives
    /// (`_meta` with its progress token and protocol version included).
    #[test]
    fn plain_lines_decode_as_rmcp_decodes_them() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"4.17"}}"#,
            r#"{"method":"tools/list","params":{"cursor":"x.y"},"id":"s\n","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":""}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"é/ü"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{ "cursor" : "4.17" }}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"4.17","_meta":null}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"k":"\"}"},"cursor":"1"}}"#,
            r#"{"jsonrpc":"2.0","id":-5,"method":"tools/list","params":{"cursor":null,"_meta":null}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/list","params":{"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28"},"cursor":"c"}}"#,
            r#" { "jsonrpc" : "2.0" , "id" : 6 , "method" : "tools/list" } "#,
            r#"{"method":"tools/list","jsonrpc":"2.0","id":"a,\"params\":{\"cursor\":\"","params":{"cursor":"z"}}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\",\"params\":{\"cursor\":\"a\u{7f}\"}}",
        ]
        .into_iter()
        .map(String::from)
        // A line start longer than the stack buffer the compact cursor's line is read in.
        .chain([format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"tools/list","params":{{"cursor":"9"}}}}"#,
            "i".repeat(HEAD_MAX)
        )])
        {
            let line = line.as_str();
            let ours = decode(line.as_bytes()).unwrap_or_else(|| panic!("{line} declined"));
            let theirs: ClientJsonRpcMessage = serde_json::from_str(line).unwrap();
            assert_eq!(format!("{ours:?}"), format!("{theirs:?}"), "{line}");
            assert_eq!(
                serde_json::to_value(&ours).unwrap(),
                serde_json::to_value(&theirs).unwrap(),
                "{line}"
            );
        }
    }

    /// Anything but the plain shape is left to the general path (which answers the
    /// malformed ones and decodes the rest its own way).
    #[test]
    fn other_lines_are_left_to_the_general_path() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tools/list"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":"\"tools/list\""}}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#,
            r#"{"id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2\u002e0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"a","cursor":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"a","x":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"a\"}"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x\"y"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"a"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"a"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"a","limit":3}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":7}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","extra":true}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"} trailing"#,
            r#"["2.0",1,"tools/list"]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":["c",null]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#,
            // Compact cursors last that are not what they look like (or escaped).
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"\u0041"}}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"a\u{1}\"}}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"a\tb\"}}",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{},"params":{"cursor":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","s":"x,"params":{"cursor":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","x":{"params":{"cursor":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list",,"params":{"cursor":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""params":{"cursor":"a"}}"#,
            r#"{,"params":{"cursor":"a"}}"#,
            r#","params":{"cursor":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"cursor":"a"}}"#,
        ] {
            assert!(decode(line.as_bytes()).is_none(), "{line} taken");
        }
        // Not UTF-8, in the cursor or before it.
        for line in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"\xff\"}}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\",\"method\":\"tools/list\",\"params\":{\"cursor\":\"1\"}}",
        ] {
            assert!(decode(line).is_none(), "{line:?} taken");
        }
    }
}
