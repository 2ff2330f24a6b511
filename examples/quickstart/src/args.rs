//! The command line, parsed by hand (a stand-in until `mcp_tools::cli::run` takes over).

use std::net::SocketAddr;
use std::path::PathBuf;

/// Where to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// stdin/stdout (the default).
    Stdio,
    /// Streamable HTTP at `http://ADDR/mcp`.
    Http(SocketAddr),
    /// Newline-delimited JSON-RPC over TCP.
    Tcp(SocketAddr),
}

/// Parsed options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub transport: Transport,
    pub stateless: bool,
    pub tokens_file: Option<PathBuf>,
    pub permissions_file: Option<PathBuf>,
    pub page_size: Option<usize>,
    pub max_in_flight: Option<usize>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    Serve(Options),
    Help,
    Version,
}

pub const USAGE: &str = "\
Usage: quickstart-mcp [--stdio | --http ADDR | --tcp ADDR] [OPTIONS]

Serves the quickstart tools over MCP (stdio by default). Logs go to stderr
(RUST_LOG, default info).

Transports:
  --stdio                 serve over stdin/stdout (default)
  --http ADDR             serve streamable HTTP at http://ADDR/mcp (e.g. 127.0.0.1:8080)
  --tcp ADDR              serve newline-delimited JSON-RPC over TCP

Options:
  --stateless             HTTP only: no sessions, every request on its own
  --tokens-file F         HTTP only: require a bearer token; each line of F is
                          `token PERMISSION...` (# comments)
  --permissions-file F    serve only tools whose permissions are listed in F
  --page-size N           split tools/list into pages of N tools
  --max-in-flight N       requests in flight per connection (default 256)
  -h, --help              print this help
  -V, --version           print the version
";

/// Parse `args` (without the program name).
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut options = Options {
        transport: Transport::Stdio,
        stateless: false,
        tokens_file: None,
        permissions_file: None,
        page_size: None,
        max_in_flight: None,
    };
    let mut transports = 0;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or_else(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--stdio" => {
                transports += 1;
                options.transport = Transport::Stdio;
            }
            "--http" => {
                transports += 1;
                options.transport = Transport::Http(address("--http", &value("--http")?)?);
            }
            "--tcp" => {
                transports += 1;
                options.transport = Transport::Tcp(address("--tcp", &value("--tcp")?)?);
            }
            "--stateless" => options.stateless = true,
            "--tokens-file" => options.tokens_file = Some(value("--tokens-file")?.into()),
            "--permissions-file" => {
                options.permissions_file = Some(value("--permissions-file")?.into())
            }
            "--page-size" => {
                options.page_size = Some(number("--page-size", &value("--page-size")?)?)
            }
            "--max-in-flight" => {
                options.max_in_flight = Some(number("--max-in-flight", &value("--max-in-flight")?)?)
            }
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    if transports > 1 {
        return Err("give at most one of --stdio, --http, --tcp".into());
    }
    let is_http = matches!(options.transport, Transport::Http(_));
    if !is_http && (options.stateless || options.tokens_file.is_some()) {
        return Err("--stateless and --tokens-file apply to --http only".into());
    }
    Ok(Command::Serve(options))
}

fn address(flag: &str, text: &str) -> Result<SocketAddr, String> {
    text.parse()
        .map_err(|_| format!("{flag} wants IP:PORT (e.g. 127.0.0.1:8080), not '{text}'"))
}

fn number(flag: &str, text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{flag} wants a positive whole number, not '{text}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(line: &str) -> Result<Command, String> {
        parse(line.split_whitespace().map(String::from))
    }

    #[test]
    fn defaults_to_stdio() {
        let Command::Serve(options) = parse_str("").unwrap() else {
            panic!()
        };
        assert_eq!(options.transport, Transport::Stdio);
    }

    #[test]
    fn http_with_tokens() {
        let Command::Serve(options) =
            parse_str("--http 127.0.0.1:0 --tokens-file t --stateless --page-size 2").unwrap()
        else {
            panic!()
        };
        assert_eq!(
            options.transport,
            Transport::Http("127.0.0.1:0".parse().unwrap())
        );
        assert!(options.stateless);
        assert_eq!(options.page_size, Some(2));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(parse_str("--http").unwrap_err().contains("needs a value"));
        assert!(parse_str("--http nowhere").unwrap_err().contains("IP:PORT"));
        assert!(parse_str("--tcp 127.0.0.1:1 --http 127.0.0.1:2").is_err());
        assert!(
            parse_str("--tokens-file t")
                .unwrap_err()
                .contains("--http only")
        );
        assert!(parse_str("--page-size 0").is_err());
        assert!(parse_str("--bogus").unwrap_err().contains("--bogus"));
    }
}
