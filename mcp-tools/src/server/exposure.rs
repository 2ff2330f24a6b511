//! Who can reach a listener: the refusal to serve the network without authentication, and
//! the startup line that says what is exposed, to whom, and how callers are checked.

use std::fmt;
use std::net::SocketAddr;

use super::ServeError;
use crate::registry::ToolRegistry;

/// True when only this machine can connect to `addr` (`127.0.0.0/8`, `::1`, or an
/// IPv4-mapped loopback address). The unspecified addresses (`0.0.0.0`, `::`) listen on
/// every interface and are not loopback.
pub(crate) fn is_loopback(addr: SocketAddr) -> bool {
    addr.ip().to_canonical().is_loopback()
}

/// How a listener checks its callers, for the startup line and the refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Authentication {
    /// Nobody is checked.
    None,
    /// Bearer tokens (HTTP `Authorization` header, or the TCP authentication line).
    Tokens,
    /// OAuth 2.1 access tokens checked against the issuer's keys (HTTP), and static bearer
    /// tokens too when `tokens` is true.
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    OAuth {
        /// A tokens file (or resolver) is accepted as well.
        tokens: bool,
    },
    /// The kernel: the socket file's mode decides who may connect, and the peer's user id
    /// is known (Unix domain sockets).
    PeerCredentials,
}

impl Authentication {
    /// [`Tokens`](Self::Tokens) when a token resolver is configured.
    pub(crate) fn with_tokens(configured: bool) -> Authentication {
        if configured {
            Authentication::Tokens
        } else {
            Authentication::None
        }
    }
}

impl fmt::Display for Authentication {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Authentication::None => "none",
            Authentication::Tokens => "bearer tokens",
            Authentication::OAuth { tokens: false } => "OAuth access tokens",
            Authentication::OAuth { tokens: true } => "OAuth access tokens and bearer tokens",
            Authentication::PeerCredentials => {
                "socket file mode 0600 (this user and root may connect); peer uid logged"
            }
        })
    }
}

/// Refuse to listen on `addr` beyond loopback with no authentication unless the operator
/// opted in ([`Server::unauthenticated_network_access`](super::Server::unauthenticated_network_access)).
/// Called before the socket is bound.
pub(crate) fn check(
    transport: &'static str,
    addr: SocketAddr,
    authentication: Authentication,
    opted_in: bool,
) -> Result<(), ServeError> {
    if is_loopback(addr) || authentication != Authentication::None || opted_in {
        return Ok(());
    }
    Err(ServeError::Unauthenticated { transport, addr })
}

/// Who can reach a socket address, in words.
fn reach(addr: SocketAddr) -> &'static str {
    if is_loopback(addr) {
        "loopback only"
    } else {
        "reachable from the network"
    }
}

/// One line saying what a listener exposes: its address and reach, its authentication and
/// the tools it serves (every tool; with tokens, each caller sees its own part).
pub(crate) fn summary(
    transport: &str,
    addr: SocketAddr,
    authentication: Authentication,
    registry: &ToolRegistry,
) -> String {
    summary_at(
        transport,
        &addr.to_string(),
        reach(addr),
        authentication,
        registry,
    )
}

/// [`summary`] for any kind of address (`place`) and reach.
pub(crate) fn summary_at(
    transport: &str,
    place: &str,
    reach: &str,
    authentication: Authentication,
    registry: &ToolRegistry,
) -> String {
    let tools = registry.list_tools();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
    format!(
        "exposing {transport} at {place} ({reach}); authentication: {authentication}; {} tools: {}",
        names.len(),
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        }
    )
}

/// Log [`summary`] when a listener starts: info on loopback; beyond loopback a warning with
/// no authentication (the operator opted in), and with tokens when the transport is not
/// `encrypted` (they cross the network in clear text).
pub(crate) fn log(
    transport: &str,
    addr: SocketAddr,
    authentication: Authentication,
    encrypted: bool,
    registry: &ToolRegistry,
) {
    let line = summary(transport, addr, authentication, registry);
    match (is_loopback(addr), authentication) {
        (true, _) => tracing::info!("{line}"),
        (false, Authentication::Tokens | Authentication::OAuth { .. }) if encrypted => {
            tracing::info!("{line}")
        }
        (false, Authentication::None) => tracing::warn!(
            "{line} — UNAUTHENTICATED: anyone who can reach this address may call every tool"
        ),
        (
            false,
            Authentication::Tokens | Authentication::OAuth { .. } | Authentication::PeerCredentials,
        ) => tracing::warn!(
            "{line} — the tokens cross the network in clear text over plain {transport}: \
             anyone on the path can read and replay them; put TLS in front (a reverse proxy \
             or a tunnel) or use this only on a network you trust"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn loopback_addresses() {
        for yes in [
            "127.0.0.1:1",
            "127.8.9.10:1",
            "[::1]:1",
            "[::ffff:127.0.0.1]:1",
        ] {
            assert!(is_loopback(addr(yes)), "{yes}");
        }
        for no in [
            "0.0.0.0:1",
            "[::]:1",
            "192.168.1.5:1",
            "[fe80::1]:1",
            "[::ffff:10.0.0.1]:1",
        ] {
            assert!(!is_loopback(addr(no)), "{no}");
        }
    }

    #[test]
    fn refuses_only_the_unauthenticated_network() {
        let network = addr("0.0.0.0:0");
        let err = check("TCP", network, Authentication::None, false).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("0.0.0.0:0"), "{text}");
        assert!(text.contains("--tokens-file"), "{text}");
        assert!(text.contains("--unauthenticated-network-access"), "{text}");
        assert!(check("TCP", network, Authentication::Tokens, false).is_ok());
        let oauth = Authentication::OAuth { tokens: false };
        assert!(check("HTTP", network, oauth, false).is_ok());
        assert_eq!(oauth.to_string(), "OAuth access tokens");
        assert!(check("TCP", network, Authentication::None, true).is_ok());
        assert!(check("HTTP", addr("127.0.0.1:0"), Authentication::None, false).is_ok());
    }
}
