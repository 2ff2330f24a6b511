//! The quickstart example as a real process over TCP (newline-delimited JSON-RPC, one MCP
//! session per connection), driven by a raw JSON-RPC client: no MCP SDK ships a TCP
//! transport.

use mcp_toolbelt_tests::line_client::LineClient;
use mcp_toolbelt_tests::{ServerProcess, quickstart};
use serde_json::json;

#[test]
fn tcp_sessions_list_call_and_pipeline() {
    let server = ServerProcess::start_cli(
        &quickstart(),
        &["serve", "--tcp", "127.0.0.1:0", "--max-in-flight", "8"],
    );
    let bound: std::net::SocketAddr = server
        .endpoint
        .parse()
        .unwrap_or_else(|_| panic!("TCP announces IP:PORT, not {}", server.endpoint));
    assert_ne!(bound.port(), 0, "port 0 is announced as the port bound");
    let mut first = LineClient::tcp(server.authority());
    let mut second = LineClient::tcp(server.authority());

    let info = first.initialize();
    assert_eq!(
        info["result"]["serverInfo"]["name"], "quickstart-mcp",
        "{info}"
    );
    second.initialize();

    let listed = first.request(1, "tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"].as_array().unwrap().len(),
        7,
        "{listed}"
    );

    let stats = second.request(
        1,
        "tools/call",
        json!({"name": "word_stats", "arguments": {"text": "over tcp"}}),
    );
    assert_eq!(stats["result"]["structuredContent"]["words"], 2, "{stats}");

    let unknown = first.request(2, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    // 2,000 pipelined calls through a bound of 8 in flight: every one is answered.
    for id in 100..2100 {
        first.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": {"name": "echo", "arguments": {"message": format!("m{id}")}}}));
    }
    let mut answered = 0;
    while answered < 2000 {
        let reply = first.receive().expect("a reply");
        let id = reply["id"]
            .as_i64()
            .expect("only replies on this connection");
        assert_eq!(
            reply["result"]["content"][0]["text"],
            format!("m{id}"),
            "{reply}"
        );
        answered += 1;
    }

    // Sessions are separate connections: the second still works after all that.
    let echo = second.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "ok"}}),
    );
    assert_eq!(echo["result"]["content"][0]["text"], "ok");
}
