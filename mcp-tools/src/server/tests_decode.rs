//! The decoding of one message (`decode.rs`): every bad message answered as the rules say.

use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};

use super::decode::*;
use crate::call::validate::MAX_DEPTH;
use crate::server::protocol::code::{INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR};

fn reply(line: &str) -> Value {
    match decode(line.as_bytes()) {
        Decoded::Reply(reply) => reply,
        other => panic!("{line:?} decoded to {other:?}"),
    }
}

fn code_and_id(line: &str) -> (i64, Value) {
    let reply = reply(line);
    assert_eq!(reply["jsonrpc"], "2.0");
    assert!(reply["error"]["message"].is_string());
    (
        reply["error"]["code"].as_i64().unwrap(),
        reply["id"].clone(),
    )
}

/// JSON whose numbers no `f64` holds is JSON all the same: the reply says so and
/// carries the request's id when it can be read.
#[test]
fn numbers_out_of_range_are_answered_with_the_id() {
    let out_in_params = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","arguments":{"n":1e400}}}"#;
    assert_eq!(code_and_id(out_in_params), (INVALID_PARAMS, json!(4)));
    let out_in_string_id = r#"{"jsonrpc":"2.0","id":"a","method":"ping","params":{"n":-1e400}}"#;
    assert_eq!(code_and_id(out_in_string_id), (INVALID_PARAMS, json!("a")));
    let out_as_id = r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#;
    assert_eq!(code_and_id(out_as_id), (INVALID_REQUEST, Value::Null));
    let no_method = r#"{"jsonrpc":"2.0","id":5,"n":1e400}"#;
    assert_eq!(code_and_id(no_method), (INVALID_REQUEST, json!(5)));
    assert!(
        reply(out_in_params)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("out of range")
    );
    // Not JSON at all is still a parse error, and so is a string no JSON has, even
    // next to a number out of range (found by the fuzz smoke test).
    assert_eq!(
        code_and_id(r#"{"jsonrpc":"2.0","id":4,"n":1e400"#),
        (PARSE_ERROR, Value::Null)
    );
    let surrogate = r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":{"s":"\ud800"}}"#;
    assert_eq!(code_and_id(surrogate), (PARSE_ERROR, Value::Null));
    assert!(has_number_out_of_range(b"[1, -2e999]"));
    assert!(!has_number_out_of_range(br#"["1e400", 1e300, -0.5]"#));
}

#[test]
fn bad_json_is_a_parse_error_with_null_id() {
    for line in [
        "garbage",
        "{\"jsonrpc\":\"2.0\",",
        "{'a':1}",
        "[1,2",
        "\u{1}\u{2}",
        "{} {}",
    ] {
        assert_eq!(code_and_id(line), (PARSE_ERROR, Value::Null), "{line:?}");
    }
    let binary = [0xff, 0xfe, b'{', 0x80, b'}'];
    let Decoded::Reply(reply) = decode(&binary) else {
        panic!("binary bytes accepted")
    };
    assert_eq!(reply["error"]["code"], PARSE_ERROR);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Parse error:")
    );
}

#[test]
fn wrong_envelopes_are_invalid_requests() {
    let cases = [
        ("1", Value::Null),
        ("\"text\"", Value::Null),
        ("null", Value::Null),
        ("[]", Value::Null),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, Value::Null),
        (r#"{"foo":"bar"}"#, Value::Null),
        (r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, json!(3)),
        (r#"{"id":"a","method":"ping"}"#, json!("a")),
        (r#"{"jsonrpc":"2.0","id":4}"#, json!(4)),
        (r#"{"jsonrpc":"2.0","id":5,"method":7}"#, json!(5)),
        (r#"{"jsonrpc":"2.0","method":7}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":[1]}"#,
            json!(6),
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{},"error":{}}"#,
            json!(7),
        ),
    ];
    for (line, id) in cases {
        assert_eq!(code_and_id(line), (INVALID_REQUEST, id), "{line}");
    }
}

/// Integer ids in float form are ids (rmcp's rule: the equal integer, up to 2^53),
/// decoded and echoed as that integer; other numbers are not.
#[test]
fn integer_ids_in_float_form_are_read_as_rmcp_reads_them() {
    for (line, id) in [
        (r#"{"jsonrpc":"2.0","id":2.0,"method":"ping"}"#, 2),
        (r#"{"jsonrpc":"2.0","id":1e3,"method":"tools/list"}"#, 1000),
        (r#"{"jsonrpc":"2.0","id":-0.0,"method":"ping"}"#, 0),
        (
            r#"{"jsonrpc":"2.0","id":7.0,"method":"tools/call","params":{"name":"x"}}"#,
            7,
        ),
    ] {
        let Decoded::Message(message) = decode(line.as_bytes()) else {
            panic!("{line} refused")
        };
        let theirs: ClientJsonRpcMessage = serde_json::from_str(line).unwrap();
        assert_eq!(format!("{message:?}"), format!("{theirs:?}"), "{line}");
        assert_eq!(serde_json::to_value(&*message).unwrap()["id"], json!(id));
    }
    assert_eq!(
        code_and_id(r#"{"jsonrpc":"2.0","id":4.0,"method":7}"#),
        (INVALID_REQUEST, json!(4))
    );
    for line in [
        r#"{"jsonrpc":"2.0","id":2.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1e300,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":9007199254740992.0,"method":"ping"}"#,
    ] {
        assert_eq!(code_and_id(line), (INVALID_REQUEST, Value::Null), "{line}");
    }
}

/// Params rmcp would misread are answered -32602 with the request's id: a list cursor
/// that is not a string (rmcp drops it and serves the first page), an `initialize`
/// whose params do not fit (rmcp takes it for another method).
#[test]
fn params_rmcp_would_misread_are_invalid_params() {
    let invalid_params = INVALID_PARAMS;
    for line in [
        r#"{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"cursor":5}}"#,
        r#"{"jsonrpc":"2.0","id":14,"method":"resources/list","params":{"cursor":{}}}"#,
        r#"{"jsonrpc":"2.0","id":14,"method":"resources/templates/list","params":{"cursor":[]}}"#,
        r#"{"jsonrpc":"2.0","id":14,"method":"prompts/list","params":{"cursor":false}}"#,
        r#"{"jsonrpc":"2.0","id":14,"method":"initialize"}"#,
        r#"{"jsonrpc":"2.0","id":14,"method":"initialize","params":{"capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","id":14,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    ] {
        assert_eq!(code_and_id(line), (invalid_params, json!(14)), "{line}");
    }
    // Not requests of those methods, or cursors rmcp reads: decoded as before.
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","cursor":5}}"#,
        r#"{"jsonrpc":"2.0","method":"initialize"}"#,
        r#"{"jsonrpc":"2.0","method":"tools/list","params":{"cursor":5}}"#,
    ] {
        assert!(
            matches!(decode(line.as_bytes()), Decoded::Message(_)),
            "{line}"
        );
    }
}

#[test]
fn deep_nesting_is_refused_without_recursion() {
    let deep = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
    assert_eq!(code_and_id(&deep), (INVALID_REQUEST, Value::Null));
    let inside = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{}1{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    assert!(
        reply(&inside)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nested")
    );
    // Brackets inside strings do not count.
    let quoted = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"s":"{}\"["}}}}"#,
        "[".repeat(500)
    );
    assert!(matches!(decode(quoted.as_bytes()), Decoded::Message(_)));
    // Just under the bound still parses.
    let ok = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{}1{}}}}}"#,
        "[".repeat(MAX_DEPTH - 2),
        "]".repeat(MAX_DEPTH - 2)
    );
    let decoded = decode(ok.as_bytes());
    assert!(matches!(decoded, Decoded::Message(_)), "{decoded:?}");
    let over = ok.replacen("[1]", "[[1]]", 1);
    assert_eq!(code_and_id(&over), (INVALID_REQUEST, Value::Null));
    // Many brackets side by side, few deep: scanned, and accepted.
    let wide = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":[{}[]]}}}}"#,
        "[],".repeat(3 * MAX_DEPTH)
    );
    assert!(matches!(decode(wide.as_bytes()), Decoded::Message(_)));
    // A list request nested too deep in its `_meta` is refused like any other line.
    let meta = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"a":{}1{}}}}}}}"#,
        "[".repeat(MAX_DEPTH),
        "]".repeat(MAX_DEPTH)
    );
    assert_eq!(code_and_id(&meta), (INVALID_REQUEST, Value::Null));
}

#[test]
fn valid_messages_pass_and_blank_lines_are_skipped() {
    for line in [
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/list\"}\r\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"some/custom"}"#,
    ] {
        assert!(
            matches!(decode(line.as_bytes()), Decoded::Message(_)),
            "{line:?}"
        );
    }
    for line in ["", "\n", "   \r\n", "\t"] {
        assert!(matches!(decode(line.as_bytes()), Decoded::Skip), "{line:?}");
    }
}

/// `tools/call`, `tools/list`, `initialize` and `notifications/initialized` lines
/// decoded by method give the message rmcp's own decoding gives, `_meta` (progress
/// token, protocol version) included; params that do not fit take the general path
/// unchanged.
#[test]
fn lines_decoded_by_method_decode_as_rmcp_decodes_them() {
    for line in [
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","n":[1,{"a":null}]}}}"#,
        r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"x","_meta":{"progressToken":3}}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":5}}"#,
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":12,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"cursor":"abc","_meta":{"progressToken":"p"}}}"#,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"roots":{"listChanged":true},"experimental":{"x":{"y":1}}},"clientInfo":{"name":"c","version":"1","title":"C"},"_meta":{"progressToken":1}}}"#,
        r#"{"jsonrpc":"2.0","id":15,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"a":1}}}"#,
        r#"{"jsonrpc":"2.0","id":18,"method":"notifications/initialized"}"#,
    ] {
        let Decoded::Message(ours) = decode(line.as_bytes()) else {
            panic!("{line} refused")
        };
        let theirs: ClientJsonRpcMessage = serde_json::from_str(line).unwrap();
        assert_eq!(
            serde_json::to_value(&*ours).unwrap(),
            serde_json::to_value(&theirs).unwrap(),
            "{line}"
        );
        assert_eq!(format!("{ours:?}"), format!("{theirs:?}"), "{line}");
    }
}

/// A batch that is not JSON as a whole is one parse error, even where reading its
/// elements as raw values would let it through (a lone surrogate escape is skipped by
/// that reading and refused by decoding); found by the fuzz smoke test.
#[test]
fn a_batch_that_is_not_json_is_one_parse_error() {
    for document in [
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":"\ud800","method":"ping"}]"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"#,
    ] {
        match batch_elements(document.as_bytes()) {
            Some(Err(reply)) => {
                assert_eq!(reply["error"]["code"], PARSE_ERROR, "{document}: {reply}");
                assert_eq!(reply["id"], Value::Null);
            }
            other => panic!("{document}: {other:?}"),
        }
    }
    let good = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping"}]"#;
    assert!(matches!(batch_elements(good.as_bytes()), Some(Ok(elements)) if elements.len() == 2));
}
