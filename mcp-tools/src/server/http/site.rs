//! The DNS-rebinding check: which `Host` and `Origin` a request to the endpoint may carry.
//!
//! Every request is checked here, first, whichever path then serves it; rmcp's own check
//! is switched off (its documented `disable_allowed_hosts`), so one rule decides and a
//! request is never judged twice. The rule reads [`HttpOptions::allow_host`] and
//! [`HttpOptions::allow_origin`] entries as rmcp documents its own lists:
//!
//! - a host entry is a name or `name:port`; without a port it matches any port; names
//!   compare without case and IPv6 brackets (`[::1]` is `::1`); an empty list allows every
//!   host;
//! - an origin entry is `scheme://host`, `scheme://host:port`, `scheme://host:*` or
//!   `null`; an origin without a port has its scheme's default port (RFC 6454), an entry
//!   without one matches any port; a request without `Origin` passes (it is not a
//!   browser's); an empty list allows every origin.
//!
//! A `Host` that is missing (and not in the request's URI), repeated, not text or not an
//! authority is `400`; a host or origin not allowed, a repeated or malformed `Origin`, is
//! `403`. Both are client mistakes, logged at `debug`.
//!
//! [`HttpOptions::allow_host`]: super::HttpOptions::allow_host
//! [`HttpOptions::allow_origin`]: super::HttpOptions::allow_origin

use http::uri::Authority;
use http::{HeaderMap, StatusCode, Uri, header};

/// A host without IPv6 brackets.
fn bare_host(host: &str) -> &str {
    host.trim_start_matches('[').trim_end_matches(']')
}

/// A host as kept in a rule: lower case, without IPv6 brackets.
fn normal_host(host: &str) -> String {
    bare_host(host).to_ascii_lowercase()
}

/// A `Host` header's host and port (RFC 9110: `uri-host [ ":" port ]`), read in place:
/// `None` when it is not one (an empty host, a character no host has, a port that is not
/// a number).
fn host_and_port(text: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = match text.strip_prefix('[') {
        Some(rest) => {
            let (inside, after) = rest.split_once(']')?;
            let ipv6 = !inside.is_empty()
                && inside
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
            if !ipv6 {
                return None;
            }
            (&text[..inside.len() + 2], after)
        }
        None => match text.rfind(':') {
            Some(at) => (&text[..at], &text[at..]),
            None => (text, ""),
        },
    };
    let port = match port {
        "" => None,
        colon => Some(colon.strip_prefix(':')?.parse::<u16>().ok()?),
    };
    let name_like = |b: u8| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=%".contains(&b);
    if host.is_empty() || (!host.starts_with('[') && !host.bytes().all(name_like)) {
        return None;
    }
    Some((host, port))
}

/// An allowed host: its name, and its port when the entry names one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostRule {
    host: String,
    port: Option<u16>,
}

impl HostRule {
    fn parse(entry: &str) -> Option<HostRule> {
        let entry = entry.trim();
        if entry.is_empty() {
            return None;
        }
        Some(match entry.parse::<Authority>() {
            Ok(authority) => HostRule {
                host: normal_host(authority.host()),
                port: authority.port_u16(),
            },
            Err(_) => HostRule {
                host: normal_host(entry),
                port: None,
            },
        })
    }

    /// `host` as it came (case and IPv6 brackets aside).
    fn allows(&self, host: &str, port: Option<u16>) -> bool {
        self.host.eq_ignore_ascii_case(bare_host(host)) && self.port.is_none_or(|p| port == Some(p))
    }
}

/// An origin as compared (`None` host: the opaque origin `null`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

/// Which ports an origin entry takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ports {
    /// `:*`, or no port in the entry.
    Any,
    Exactly(u16),
}

/// An allowed origin.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OriginRule {
    Null,
    Tuple {
        scheme: String,
        host: String,
        ports: Ports,
    },
}

/// `Some(None)`: the origin `null`; `None`: not an origin.
fn parse_origin(value: &str) -> Option<Option<Origin>> {
    let value = value.trim();
    if value.eq_ignore_ascii_case("null") {
        return Some(None);
    }
    let uri = value.parse::<Uri>().ok()?;
    let authority = uri.authority()?;
    Some(Some(Origin {
        scheme: uri.scheme_str()?.to_ascii_lowercase(),
        host: normal_host(authority.host()),
        port: authority.port_u16(),
    }))
}

/// The port a scheme implies when an origin leaves it out.
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

impl OriginRule {
    fn parse(entry: &str) -> Option<OriginRule> {
        let (entry, any_port) = match entry.trim().strip_suffix(":*") {
            Some(base) => (base, true),
            None => (entry.trim(), false),
        };
        match parse_origin(entry)? {
            None if any_port => None,
            None => Some(OriginRule::Null),
            Some(origin) if any_port && origin.port.is_some() => None,
            Some(Origin { scheme, host, port }) => Some(OriginRule::Tuple {
                scheme,
                host,
                ports: port.map_or(Ports::Any, Ports::Exactly),
            }),
        }
    }

    fn allows(&self, origin: Option<&Origin>) -> bool {
        match (self, origin) {
            (OriginRule::Null, None) => true,
            (
                OriginRule::Tuple {
                    scheme,
                    host,
                    ports,
                },
                Some(origin),
            ) => {
                *scheme == origin.scheme
                    && *host == origin.host
                    && match ports {
                        Ports::Any => true,
                        Ports::Exactly(port) => {
                            origin.port.or_else(|| default_port(&origin.scheme)) == Some(*port)
                        }
                    }
            }
            _ => false,
        }
    }
}

/// Why a request's site was refused: its status and the plain-text body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SiteRefusal {
    pub(super) status: StatusCode,
    pub(super) message: &'static str,
}

/// The hosts and origins an endpoint accepts, read once from its options.
#[derive(Debug, Clone)]
pub(super) struct SiteRule {
    hosts: Vec<HostRule>,
    origins: Vec<OriginRule>,
}

impl SiteRule {
    /// The rule of `hosts` and `origins` (entries that cannot be read are left out, with a
    /// warning: they match nothing).
    pub(super) fn new(hosts: &[String], origins: &[String]) -> SiteRule {
        fn read<T>(entries: &[String], parse: fn(&str) -> Option<T>, what: &str) -> Vec<T> {
            let kept = |entry: &String| {
                let rule = parse(entry);
                if rule.is_none() {
                    tracing::warn!(%entry, "an allowed {what} that cannot be read is left out");
                }
                rule
            };
            entries.iter().filter_map(kept).collect()
        }
        let hosts = read(hosts, HostRule::parse, "host");
        let origins = read(origins, OriginRule::parse, "origin");
        SiteRule { hosts, origins }
    }

    /// Check the `Host` (or the URI's authority, as HTTP/2 sends it) and the `Origin` of a
    /// request.
    pub(super) fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), SiteRefusal> {
        let mut hosts = headers.get_all(header::HOST).iter();
        let (host, port) = match (hosts.next(), hosts.next()) {
            (Some(_), Some(_)) => {
                return Err(refused(bad_host("Bad Request: more than one Host header")));
            }
            (Some(value), None) => value
                .to_str()
                .ok()
                .and_then(host_and_port)
                .ok_or_else(|| refused(bad_host("Bad Request: Invalid Host header")))?,
            (None, _) => {
                let authority = uri
                    .authority()
                    .ok_or_else(|| refused(bad_host("Bad Request: missing Host header")))?;
                (authority.host(), authority.port_u16())
            }
        };
        if !self.hosts.is_empty() && !self.hosts.iter().any(|rule| rule.allows(host, port)) {
            return Err(refused(forbidden("Forbidden: Host header is not allowed")));
        }
        let mut origins = headers.get_all(header::ORIGIN).iter();
        let origin = match (origins.next(), origins.next()) {
            (None, _) => return Ok(()),
            (Some(_), Some(_)) => {
                return Err(refused(forbidden("Forbidden: more than one Origin header")));
            }
            (Some(value), None) => value
                .to_str()
                .ok()
                .and_then(parse_origin)
                .ok_or_else(|| refused(forbidden("Forbidden: Invalid Origin header")))?,
        };
        if !self.origins.is_empty() && !self.origins.iter().any(|rule| rule.allows(origin.as_ref()))
        {
            return Err(refused(forbidden(
                "Forbidden: Origin header is not allowed",
            )));
        }
        Ok(())
    }
}

/// A `400` for a `Host` that cannot be read.
fn bad_host(message: &'static str) -> SiteRefusal {
    let status = StatusCode::BAD_REQUEST;
    SiteRefusal { status, message }
}

/// A `403` for a host or origin not allowed.
fn forbidden(message: &'static str) -> SiteRefusal {
    let status = StatusCode::FORBIDDEN;
    SiteRefusal { status, message }
}

/// `refusal`, logged as the client mistake it is.
fn refused(refusal: SiteRefusal) -> SiteRefusal {
    tracing::debug!(status = %refusal.status, reason = refusal.message, "refused a request's site");
    refusal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> SiteRule {
        let options = super::super::HttpOptions::default()
            .allow_host("mcp.example.com:8443")
            .allow_host("Any.Example")
            .allow_origin("https://app.example.com")
            .allow_origin("https://exact.example:8443")
            .allow_origin("null");
        SiteRule::new(&options.allowed_hosts, &options.allowed_origins)
    }

    fn check(host: Option<&str>, origin: Option<&str>) -> Result<(), StatusCode> {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, host.parse().unwrap());
        }
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, origin.parse().unwrap());
        }
        rule()
            .check(&Uri::from_static("/mcp"), &headers)
            .map_err(|refusal| refusal.status)
    }

    #[test]
    fn hosts_are_matched_by_name_and_by_port_when_the_entry_has_one() {
        assert_eq!(check(Some("localhost:8080"), None), Ok(()));
        assert_eq!(check(Some("127.0.0.1"), None), Ok(()));
        assert_eq!(check(Some("[::1]:9"), None), Ok(()));
        assert_eq!(check(Some("LOCALHOST"), None), Ok(()));
        assert_eq!(check(Some("any.example:1"), None), Ok(()));
        assert_eq!(check(Some("mcp.example.com:8443"), None), Ok(()));
        assert_eq!(
            check(Some("mcp.example.com:443"), None),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            check(Some("mcp.example.com"), None),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            check(Some("evil.example"), None),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            check(Some("localhost.evil.example"), None),
            Err(StatusCode::FORBIDDEN)
        );
    }

    #[test]
    fn host_headers_are_read_in_place() {
        assert_eq!(host_and_port("localhost"), Some(("localhost", None)));
        assert_eq!(
            host_and_port("Example.COM:8080"),
            Some(("Example.COM", Some(8080)))
        );
        assert_eq!(host_and_port("[::1]:9"), Some(("[::1]", Some(9))));
        assert_eq!(host_and_port("[::1]"), Some(("[::1]", None)));
        assert_eq!(host_and_port("127.0.0.1:80"), Some(("127.0.0.1", Some(80))));
        for bad in [
            "", ":80", "a b", "a:port", "a:99999", "[::1", "[zz]:1", "[::1]x", "a/b", "a@b",
        ] {
            assert_eq!(host_and_port(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_missing_repeated_or_unreadable_host_is_a_bad_request() {
        assert_eq!(check(None, None), Err(StatusCode::BAD_REQUEST));
        assert_eq!(check(Some("a b"), None), Err(StatusCode::BAD_REQUEST));
        let mut headers = HeaderMap::new();
        headers.append(header::HOST, "localhost".parse().unwrap());
        headers.append(header::HOST, "evil.example".parse().unwrap());
        let refusal = rule()
            .check(&Uri::from_static("/mcp"), &headers)
            .unwrap_err();
        assert_eq!(refusal.status, StatusCode::BAD_REQUEST);
        // HTTP/2 carries the host in the URI.
        let uri = Uri::from_static("http://localhost:3000/mcp");
        assert_eq!(rule().check(&uri, &HeaderMap::new()), Ok(()));
        let uri = Uri::from_static("http://evil.example/mcp");
        assert_eq!(
            rule().check(&uri, &HeaderMap::new()).unwrap_err().status,
            StatusCode::FORBIDDEN
        );
    }

    #[test]
    fn origins_are_matched_by_scheme_host_and_port() {
        let local = Some("localhost");
        assert_eq!(check(local, None), Ok(()));
        assert_eq!(check(local, Some("http://localhost:6274")), Ok(()));
        assert_eq!(check(local, Some("https://[::1]")), Ok(()));
        assert_eq!(check(local, Some("https://app.example.com:1234")), Ok(()));
        assert_eq!(check(local, Some("https://exact.example:8443")), Ok(()));
        assert_eq!(
            check(local, Some("https://exact.example")),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            check(local, Some("http://app.example.com")),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            check(local, Some("https://evil.example")),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(check(local, Some("null")), Ok(()));
        assert_eq!(
            check(local, Some("not an origin")),
            Err(StatusCode::FORBIDDEN)
        );
    }

    #[test]
    fn the_default_port_of_a_scheme_meets_an_exact_entry() {
        let rule = SiteRule::new(&[], &["https://app.example:443".into()]);
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, "anything".parse().unwrap());
        headers.insert(header::ORIGIN, "https://app.example".parse().unwrap());
        assert_eq!(rule.check(&Uri::from_static("/"), &headers), Ok(()));
        headers.insert(header::ORIGIN, "http://app.example".parse().unwrap());
        assert!(rule.check(&Uri::from_static("/"), &headers).is_err());
    }

    #[test]
    fn entries_that_are_not_hosts_or_origins_match_nothing() {
        assert_eq!(OriginRule::parse("null:*"), None);
        assert_eq!(OriginRule::parse("https://a.example:443:*"), None);
        assert_eq!(OriginRule::parse("a.example"), None);
        assert_eq!(HostRule::parse(" "), None);
        // Without an origin list every origin passes; without hosts, every host.
        let open = SiteRule::new(&[], &[]);
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, "evil.example".parse().unwrap());
        headers.insert(header::ORIGIN, "https://evil.example".parse().unwrap());
        assert_eq!(open.check(&Uri::from_static("/"), &headers), Ok(()));
    }
}
