//! A minimal HTTP/1.1 keep-alive client for MCP's streamable HTTP: one POST at a time on
//! one connection (`TCP_NODELAY` set), reading a reply with a `Content-Length` or chunked
//! (an event stream) whole. Small on purpose, so the harness's own cost stays low.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// One reply.
pub struct Reply {
    pub status: u16,
    pub session: Option<String>,
    pub body: Vec<u8>,
}

impl Reply {
    /// True when the body holds `needle`.
    pub fn contains(&self, needle: &[u8]) -> bool {
        self.body.windows(needle.len()).any(|w| w == needle)
    }
}

/// One keep-alive connection to an MCP endpoint, with its session (if any).
pub struct Conn {
    stream: Option<BufReader<TcpStream>>,
    authority: String,
    path: String,
    pub session: Option<String>,
}

impl Conn {
    pub fn new(url: &str) -> Conn {
        let rest = url.strip_prefix("http://").unwrap_or(url);
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        Conn {
            stream: None,
            authority: authority.to_string(),
            path: if path.is_empty() {
                "/".into()
            } else {
                path.into()
            },
            session: None,
        }
    }

    /// The `host:port` the client connects to.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// Open the TCP connection now (otherwise the first request does).
    pub async fn connect(&mut self) -> io::Result<()> {
        let stream = TcpStream::connect(&self.authority).await?;
        stream.set_nodelay(true)?;
        self.stream = Some(BufReader::new(stream));
        Ok(())
    }

    /// POST `body`; reconnects once if the server had closed the connection.
    pub async fn post(&mut self, body: &[u8]) -> io::Result<Reply> {
        if self.stream.is_none() {
            self.connect().await?;
        }
        match self.exchange(body).await {
            Ok(reply) => Ok(reply),
            Err(_) => {
                self.connect().await?;
                self.exchange(body).await
            }
        }
    }

    async fn exchange(&mut self, body: &[u8]) -> io::Result<Reply> {
        let mut request = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Content-Length: {}\r\n",
            self.path,
            self.authority,
            body.len()
        );
        if let Some(session) = &self.session {
            request.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        let stream = self.stream.as_mut().ok_or_else(closed)?;
        stream.get_mut().write_all(&bytes).await?;
        let reply = read_reply(stream).await;
        if reply.is_err() {
            self.stream = None;
        }
        reply
    }
}

fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the server closed the connection",
    )
}

async fn read_reply(stream: &mut BufReader<TcpStream>) -> io::Result<Reply> {
    let mut line = String::new();
    if stream.read_line(&mut line).await? == 0 {
        return Err(closed());
    }
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, line.clone()))?;
    let mut length = None;
    let mut chunked = false;
    let mut session = None;
    loop {
        line.clear();
        if stream.read_line(&mut line).await? == 0 {
            return Err(closed());
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => session = Some(value.to_string()),
                _ => {}
            }
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            stream.read_line(&mut line).await?;
            let size = usize::from_str_radix(line.trim(), 16)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
            let mut chunk = vec![0; size + 2];
            stream.read_exact(&mut chunk).await?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = length {
        body.resize(length, 0);
        stream.read_exact(&mut body).await?;
    }
    Ok(Reply {
        status,
        session,
        body,
    })
}
