//! A raw JSON-RPC client over TCP, a Unix domain socket or a child's stdio
//! (newline-delimited, one MCP session per connection): no MCP SDK ships the first two, and
//! the SDKs' stdio clients cannot send hostile bytes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{ChildStdin, ChildStdout};
use std::time::Duration;

use serde_json::{Value, json};

/// How long a read waits for the server.
const PATIENCE: Duration = Duration::from_secs(30);

/// One connection to a server speaking newline-delimited JSON-RPC.
pub struct LineClient {
    writer: Box<dyn Write + Send>,
    reader: BufReader<Box<dyn Read + Send>>,
}

impl LineClient {
    /// Connect over TCP to `addr` (`IP:PORT`); reads wait at most 30 s.
    pub fn tcp(addr: &str) -> LineClient {
        let stream =
            TcpStream::connect(addr).unwrap_or_else(|e| panic!("cannot connect to {addr}: {e}"));
        stream.set_read_timeout(Some(PATIENCE)).expect("a timeout");
        LineClient::over(stream.try_clone().expect("a clone"), stream)
    }

    /// Connect to the Unix domain socket at `path`; reads wait at most 30 s.
    pub fn unix(path: &Path) -> LineClient {
        let stream = UnixStream::connect(path)
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", path.display()));
        stream.set_read_timeout(Some(PATIENCE)).expect("a timeout");
        LineClient::over(stream.try_clone().expect("a clone"), stream)
    }

    /// Talk to a child process over its stdin and stdout (the stdio transport); reads
    /// block until the child writes or exits.
    pub fn stdio(stdin: ChildStdin, stdout: ChildStdout) -> LineClient {
        LineClient {
            writer: Box::new(stdin),
            reader: BufReader::new(Box::new(stdout)),
        }
    }

    fn over<S: Read + Write + Send + 'static>(writer: S, reader: S) -> LineClient {
        LineClient {
            writer: Box::new(writer),
            reader: BufReader::new(Box::new(reader)),
        }
    }

    /// Send `line` and a newline.
    pub fn send_line(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .expect("the line can be written");
    }

    /// Send one message.
    pub fn send(&mut self, message: Value) {
        self.send_line(&message.to_string());
    }

    /// The next message, or `None` once the server closed the connection.
    pub fn receive(&mut self) -> Option<Value> {
        let mut line = String::new();
        let read = self
            .reader
            .read_line(&mut line)
            .expect("a line within 30 s");
        (read > 0).then(|| serde_json::from_str(&line).expect("a JSON-RPC line"))
    }

    /// Send a request and return its response (skipping notifications and other ids).
    pub fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.receive().expect("the server closed the connection");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// `initialize` (id 0) then `notifications/initialized`; the initialize response.
    pub fn initialize(&mut self) -> Value {
        let reply = self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "tcp-test", "version": "1"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        reply
    }
}
