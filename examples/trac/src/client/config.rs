//! Where the Trac server is and how to log in.

use std::fmt;
use std::time::Duration;

use reqwest::Url;

use super::TracError;

/// Environment variable holding the Trac project URL.
pub const ENV_URL: &str = "TRAC_URL";
/// Environment variable holding the Trac user name (optional).
pub const ENV_USER: &str = "TRAC_USER";
/// Environment variable holding the Trac password (required when a user is set).
pub const ENV_PASSWORD: &str = "TRAC_PASSWORD";
/// Environment variable holding the request timeout in seconds (optional).
pub const ENV_TIMEOUT: &str = "TRAC_TIMEOUT_SECS";

/// Default time allowed for one RPC round trip.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time allowed to open a TCP connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Configuration of a [`TracClient`](super::TracClient).
///
/// The password is never shown by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct TracConfig {
    /// Base URL of the Trac project, e.g. `https://trac.example.org/myproject`.
    /// A trailing `/rpc` or `/login/rpc` is accepted and ignored.
    pub url: String,
    /// User name for HTTP basic auth; `None` calls the anonymous endpoint `/rpc`.
    pub user: Option<String>,
    /// Password for `user`.
    pub password: Option<String>,
    /// Time allowed for one whole RPC round trip.
    pub timeout: Duration,
    /// Time allowed to establish a connection.
    pub connect_timeout: Duration,
}

impl fmt::Debug for TracConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TracConfig")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

impl TracConfig {
    /// Anonymous access to the Trac project at `url`, default timeouts.
    pub fn new(url: impl Into<String>) -> Self {
        TracConfig {
            url: url.into(),
            user: None,
            password: None,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }

    /// Logs in with HTTP basic auth (the client then calls `/login/rpc`).
    pub fn with_credentials(
        mut self,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        self.user = Some(user.into());
        self.password = Some(password.into());
        self
    }

    /// Sets the round-trip timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the connection timeout.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Reads `TRAC_URL` (required), `TRAC_USER` + `TRAC_PASSWORD` (optional,
    /// together) and `TRAC_TIMEOUT_SECS` (optional) from the process environment.
    pub fn from_env() -> Result<Self, TracError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`TracConfig::from_env`], reading variables through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, TracError> {
        let non_empty = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let url = non_empty(ENV_URL).ok_or_else(|| {
            TracError::Config(format!(
                "{ENV_URL} is not set (the Trac project URL, e.g. http://127.0.0.1:8000/myproject)"
            ))
        })?;
        let mut config = TracConfig::new(url);
        match (non_empty(ENV_USER), lookup(ENV_PASSWORD)) {
            (Some(user), Some(password)) => config = config.with_credentials(user, password),
            (None, None) => {}
            (Some(_), None) => {
                return Err(TracError::Config(format!(
                    "{ENV_USER} is set but {ENV_PASSWORD} is not"
                )));
            }
            (None, Some(_)) => {
                return Err(TracError::Config(format!(
                    "{ENV_PASSWORD} is set but {ENV_USER} is not"
                )));
            }
        }
        if let Some(secs) = non_empty(ENV_TIMEOUT) {
            let secs: f64 = secs
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
                .ok_or_else(|| {
                    TracError::Config(format!(
                        "{ENV_TIMEOUT} must be a number of seconds in (0, 86400], got {secs:?}"
                    ))
                })?;
            config.timeout = Duration::from_secs_f64(secs);
        }
        Ok(config)
    }

    /// Checks the configuration and returns the XML-RPC endpoint:
    /// `<url>/login/rpc` with credentials, `<url>/rpc` without.
    pub fn endpoint(&self) -> Result<Url, TracError> {
        let raw = self.url.trim();
        let mut url = Url::parse(raw)
            .map_err(|e| TracError::Config(format!("invalid Trac URL {raw:?}: {e}")))?;
        match url.scheme() {
            "http" => {}
            "https" if cfg!(feature = "tls") => {}
            "https" => {
                return Err(TracError::Config(format!(
                    "{raw}: https needs trac-mcp built with the `tls` feature"
                )));
            }
            other => {
                return Err(TracError::Config(format!(
                    "{raw}: unsupported URL scheme {other:?}"
                )));
            }
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(TracError::Config(format!("{raw}: URL has no host")));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(TracError::Config(format!(
                "{raw}: URL must not have a query or fragment"
            )));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(TracError::Config(format!(
                "{}: put credentials in TRAC_USER/TRAC_PASSWORD, not in the URL",
                redact_userinfo(&url)
            )));
        }
        match (&self.user, &self.password) {
            (Some(u), Some(_)) if u.is_empty() || u.contains(':') => {
                return Err(TracError::Config(
                    "user name must be non-empty and contain no ':'".into(),
                ));
            }
            (Some(_), None) => {
                return Err(TracError::Config(
                    "a user was given without a password".into(),
                ));
            }
            (None, Some(_)) => {
                return Err(TracError::Config(
                    "a password was given without a user".into(),
                ));
            }
            _ => {}
        }
        for (name, t) in [
            ("timeout", self.timeout),
            ("connect timeout", self.connect_timeout),
        ] {
            if t.is_zero() {
                return Err(TracError::Config(format!(
                    "{name} must be greater than zero"
                )));
            }
        }
        let mut path = url.path().trim_end_matches('/').to_string();
        for suffix in ["/login/rpc", "/login/xmlrpc", "/rpc", "/xmlrpc"] {
            if let Some(base) = path.strip_suffix(suffix) {
                path = base.to_string();
                break;
            }
        }
        let rpc = if self.user.is_some() {
            "/login/rpc"
        } else {
            "/rpc"
        };
        url.set_path(&format!("{path}{rpc}"));
        Ok(url)
    }
}

fn redact_userinfo(url: &Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn endpoint_depends_on_credentials() {
        let anon = TracConfig::new("http://127.0.0.1:8124/");
        assert_eq!(
            anon.endpoint().unwrap().as_str(),
            "http://127.0.0.1:8124/rpc"
        );
        let auth = TracConfig::new("http://h:1/proj/login/rpc").with_credentials("bob", "pw");
        assert_eq!(
            auth.endpoint().unwrap().as_str(),
            "http://h:1/proj/login/rpc"
        );
        let anon_sub = TracConfig::new("http://h/proj/rpc");
        assert_eq!(anon_sub.endpoint().unwrap().as_str(), "http://h/proj/rpc");
    }

    #[test]
    fn bad_urls_are_rejected_clearly() {
        for (url, needle) in [
            ("not a url", "invalid Trac URL"),
            ("ftp://h/x", "unsupported URL scheme"),
            ("http://h/x?q=1", "query"),
            ("http://bob:pw@h/x", "not in the URL"),
        ] {
            let err = TracConfig::new(url).endpoint().unwrap_err().to_string();
            assert!(err.contains(needle), "{url}: {err}");
            assert!(!err.contains("pw@"), "password leaked: {err}");
        }
    }

    #[test]
    fn env_lookup() {
        let c = TracConfig::from_lookup(lookup(&[
            ("TRAC_URL", "http://h"),
            ("TRAC_USER", "bob"),
            ("TRAC_PASSWORD", "pw"),
            ("TRAC_TIMEOUT_SECS", "2.5"),
        ]))
        .unwrap();
        assert_eq!(c.user.as_deref(), Some("bob"));
        assert_eq!(c.timeout, Duration::from_millis(2500));
        let e = TracConfig::from_lookup(lookup(&[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("TRAC_URL is not set"), "{e}");
        let e = TracConfig::from_lookup(lookup(&[("TRAC_URL", "http://h"), ("TRAC_USER", "bob")]))
            .unwrap_err();
        assert!(e.to_string().contains("TRAC_PASSWORD is not"), "{e}");
        let e = TracConfig::from_lookup(lookup(&[
            ("TRAC_URL", "http://h"),
            ("TRAC_TIMEOUT_SECS", "0"),
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("TRAC_TIMEOUT_SECS"), "{e}");
    }

    #[test]
    fn debug_hides_password() {
        let c = TracConfig::new("http://h").with_credentials("bob", "s3cret");
        let dbg = format!("{c:?}");
        assert!(!dbg.contains("s3cret") && dbg.contains("redacted"), "{dbg}");
    }
}
