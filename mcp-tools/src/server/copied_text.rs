//! Text a request lends (its session id, its caller's subject and client id, its id)
//! copied for a background thread: the audit writer and the span export take what a call
//! recorded and write it later. A short text is copied inline, so the call's thread
//! allocates nothing the other thread would free: a block freed on another thread than
//! the one that allocated it leaves that thread's allocator cache, and the allocator then
//! takes its arena's lock to refill it (measured: about 650 instructions per such block).

#[cfg(any(feature = "audit", feature = "otel"))]
use std::fmt;

use rmcp::model::NumberOrString;

#[cfg(any(feature = "audit", feature = "otel"))]
/// The longest text kept inline: a UUID, a usual subject or client id or session id.
const INLINE: usize = 64;

/// A text copied from a request: inline up to [`INLINE`] bytes, else on the heap.
#[cfg(any(feature = "audit", feature = "otel"))]
#[derive(Clone)]
pub(crate) enum CopiedText {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

#[cfg(any(feature = "audit", feature = "otel"))]
impl CopiedText {
    /// A copy of `text`.
    pub(crate) fn new(text: &str) -> CopiedText {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..text.len()].copy_from_slice(text.as_bytes());
                CopiedText::Inline { len, bytes }
            }
            _ => CopiedText::Heap(Box::from(text)),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            // The first `len` bytes are a copy of a `str`.
            CopiedText::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            CopiedText::Heap(text) => text,
        }
    }
}

#[cfg(any(feature = "audit", feature = "otel"))]
impl fmt::Debug for CopiedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// A request's id as a request lends it: a number, or a text.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RequestIdRef<'a> {
    Number(i64),
    Text(&'a str),
}

impl<'a> From<&'a NumberOrString> for RequestIdRef<'a> {
    fn from(id: &'a NumberOrString) -> RequestIdRef<'a> {
        match id {
            NumberOrString::Number(number) => RequestIdRef::Number(*number),
            NumberOrString::String(text) => RequestIdRef::Text(text),
        }
    }
}

/// A request's id, copied ([`CopiedText`] for a text id).
#[cfg(any(feature = "audit", feature = "otel"))]
#[derive(Clone, Debug)]
pub(crate) enum CopiedRequestId {
    Number(i64),
    Text(CopiedText),
}

#[cfg(any(feature = "audit", feature = "otel"))]
impl CopiedRequestId {
    pub(crate) fn new(id: RequestIdRef<'_>) -> CopiedRequestId {
        match id {
            RequestIdRef::Number(number) => CopiedRequestId::Number(number),
            RequestIdRef::Text(text) => CopiedRequestId::Text(CopiedText::new(text)),
        }
    }

    pub(crate) fn borrowed(&self) -> RequestIdRef<'_> {
        match self {
            CopiedRequestId::Number(number) => RequestIdRef::Number(*number),
            CopiedRequestId::Text(text) => RequestIdRef::Text(text.as_str()),
        }
    }
}

#[cfg(all(test, any(feature = "audit", feature = "otel")))]
mod tests {
    use super::*;

    #[test]
    fn short_texts_are_inline_and_long_ones_on_the_heap_and_both_read_back() {
        for text in ["", "s-1", &"é".repeat(32), &"x".repeat(64), &"x".repeat(65)] {
            let copied = CopiedText::new(text);
            assert_eq!(copied.as_str(), text);
            assert_eq!(
                matches!(copied, CopiedText::Inline { .. }),
                text.len() <= INLINE,
                "{text}"
            );
        }
        let id = NumberOrString::String("req-7".into());
        let copied = CopiedRequestId::new((&id).into());
        assert!(matches!(copied.borrowed(), RequestIdRef::Text("req-7")));
        let id = NumberOrString::Number(-3);
        assert!(matches!(
            CopiedRequestId::new((&id).into()).borrowed(),
            RequestIdRef::Number(-3)
        ));
    }
}
