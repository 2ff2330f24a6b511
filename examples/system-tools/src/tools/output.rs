//! Command output on the wire: each stream is sent once, as the text of its own content
//! block, encoded compactly (UTF-8 text, or base64 when the bytes are not text or would grow
//! more than base64 does under JSON escaping), and cut so that its *encoded* size stays within
//! `max_output_bytes`.

use base64::Engine as _;

use super::ContentEncoding;

/// One encoded output stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Encoded {
    /// The text of the stream's content block.
    pub text: String,
    /// How `text` carries the bytes.
    pub encoding: ContentEncoding,
    /// Whether bytes were left out to keep the encoded size within the cap.
    pub cut: bool,
}

/// Bytes a character takes inside a JSON string.
fn json_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Encodes `bytes` so that the JSON string carrying them is at most `cap` bytes.
pub(crate) fn encode(bytes: &[u8], cap: usize) -> Encoded {
    if let Ok(text) = std::str::from_utf8(bytes) {
        let escaped: usize = text.chars().map(json_len).sum();
        // Text unless escaping costs more than base64's 4/3.
        if escaped.saturating_mul(3) <= bytes.len().saturating_mul(4) + 3 {
            let mut used = 0;
            let mut end = text.len();
            for (i, c) in text.char_indices() {
                used += json_len(c);
                if used > cap {
                    end = i;
                    break;
                }
            }
            return Encoded {
                text: text[..end].to_string(),
                encoding: ContentEncoding::Utf8,
                cut: end < text.len(),
            };
        }
    }
    let keep = bytes.len().min(cap / 4 * 3);
    Encoded {
        text: base64::engine::general_purpose::STANDARD.encode(&bytes[..keep]),
        encoding: ContentEncoding::Base64,
        cut: keep < bytes.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire_len(s: &str) -> usize {
        serde_json::to_string(s).unwrap().len() - 2
    }

    #[test]
    fn plain_text_stays_text() {
        let e = encode(b"hello\nworld\n", 100);
        assert_eq!(e.text, "hello\nworld\n");
        assert_eq!(e.encoding, ContentEncoding::Utf8);
        assert!(!e.cut);
    }

    #[test]
    fn binary_and_control_heavy_output_becomes_base64() {
        let e = encode(&[0xff, 0x00, 0x80], 100);
        assert_eq!(e.encoding, ContentEncoding::Base64);
        assert_eq!(e.text, "/wCA");
        let controls = vec![1u8; 300];
        let e = encode(&controls, 10_000);
        assert_eq!(e.encoding, ContentEncoding::Base64);
        assert_eq!(e.text.len(), 400, "6 bytes each escaped, 4/3 as base64");
    }

    #[test]
    fn the_cap_applies_to_the_encoded_size() {
        let quoted = "xx\"".repeat(1000);
        let e = encode(quoted.as_bytes(), 101);
        assert_eq!(e.encoding, ContentEncoding::Utf8);
        assert!(e.cut);
        assert_eq!(wire_len(&e.text), 101);
        let quotes = "\"".repeat(1000);
        let e = encode(quotes.as_bytes(), 101);
        assert_eq!(
            e.encoding,
            ContentEncoding::Base64,
            "escaping would double it"
        );
        assert_eq!(e.text.len(), 100);
        let e = encode(&vec![0xffu8; 1000], 100);
        assert!(e.cut);
        assert!(e.text.len() <= 100);
        let multibyte = "é".repeat(100);
        let e = encode(multibyte.as_bytes(), 51);
        assert_eq!(e.text, "é".repeat(25));
    }
}
