//! The issuer's metadata (RFC 8414, or OpenID discovery) and its signing keys (JWKS), fetched
//! over HTTP with bounded size and time, cached, and refreshed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;

use super::OAuthError;

/// The largest metadata or JWKS document accepted.
const MAX_DOCUMENT: usize = 1 << 20;

/// What the verifier uses from the issuer's metadata document.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct IssuerMetadata {
    /// The issuer identifier; equals the configured issuer (checked, RFC 8414 §3.3).
    pub issuer: String,
    /// Where the signing keys are published.
    pub jwks_uri: String,
    /// Where opaque tokens are introspected (RFC 7662), if the issuer offers it.
    #[serde(default)]
    pub introspection_endpoint: Option<String>,
    /// The scopes the issuer supports, if it says.
    #[serde(default)]
    pub scopes_supported: Vec<String>,
}

/// One published key: the key and the algorithm its JWK pins, if any.
struct Key {
    key: DecodingKey,
    alg: Option<Algorithm>,
}

/// The current key set and when it was fetched.
struct KeySet {
    keys: HashMap<String, Arc<Key>>,
    fetched: Instant,
}

/// The keys of one issuer: a cached set swapped atomically; one refresh at a time.
pub(super) struct KeyCache {
    inner: Arc<Inner>,
}

/// What a background refresh shares with the cache.
struct Inner {
    http: reqwest::Client,
    jwks_uri: String,
    current: ArcSwap<KeySet>,
    /// Held by the one fetch under way; holds how the last fetch went.
    refresh: Arc<tokio::sync::Mutex<LastFetch>>,
    min_refetch: Duration,
}

/// When the last fetch of the key set started, and why it failed if it did.
struct LastFetch {
    started: Instant,
    failed: Option<String>,
}

impl LastFetch {
    /// Start a fetch now.
    fn start(&mut self) {
        self.started = Instant::now();
    }

    /// Note how the fetch started last ended.
    fn ended<T>(&mut self, outcome: &Result<T, OAuthError>) {
        self.failed = outcome.as_ref().err().map(ToString::to_string);
    }
}

/// A shareable handle on one key.
pub(super) struct KeyHandle(Arc<Key>);

impl KeyHandle {
    pub fn decoding_key(&self) -> &DecodingKey {
        &self.0.key
    }
    pub fn pinned_alg(&self) -> Option<Algorithm> {
        self.0.alg
    }
}

pub(super) fn client(timeout: Duration) -> Result<reqwest::Client, OAuthError> {
    reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| OAuthError::Fetch {
            url: String::new(),
            problem: chain(&e),
        })
}

/// An error and its sources, `: `-joined (reqwest's own message omits the cause).
pub(super) fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// GET `url` and parse its JSON body, refusing bodies over [`MAX_DOCUMENT`].
pub(super) async fn get_json<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &str,
) -> Result<T, OAuthError> {
    let fail = |problem: String| OAuthError::Fetch {
        url: url.to_string(),
        problem,
    };
    let response = http
        .get(url)
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| fail(chain(&e)))?;
    if !response.status().is_success() {
        return Err(fail(format!("HTTP status {}", response.status())));
    }
    read_json(response, url).await
}

/// Parse a response's JSON body, refusing bodies over [`MAX_DOCUMENT`].
pub(super) async fn read_json<T: serde::de::DeserializeOwned>(
    mut response: reqwest::Response,
    url: &str,
) -> Result<T, OAuthError> {
    let fail = |problem: String| OAuthError::Fetch {
        url: url.to_string(),
        problem,
    };
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| fail(chain(&e)))? {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(fail(format!(
                "the document is larger than {MAX_DOCUMENT} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| fail(format!("not the expected JSON: {e}")))
}

/// The well-known URL `name` of `url` (RFC 8414 §3.1, RFC 9728 §3.1): the well-known segment
/// goes between the host and the URL's path, e.g. `https://h/p` → `https://h/.well-known/NAME/p`.
pub(super) fn well_known(url: &str, name: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    let (origin, path) = match trimmed.find("://").map(|i| i + 3) {
        Some(start) => match trimmed[start..].find('/') {
            Some(slash) => trimmed.split_at(start + slash),
            None => (trimmed, ""),
        },
        None => (trimmed, ""),
    };
    format!("{origin}/.well-known/{name}{path}")
}

/// Find the issuer's metadata: RFC 8414 first, then OpenID discovery. The document's `issuer`
/// must equal `issuer` exactly. When neither place answers with a document, the error lists
/// both URLs and what failed at each.
pub(super) async fn discover(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<IssuerMetadata, OAuthError> {
    let candidates = [
        well_known(issuer, "oauth-authorization-server"),
        format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ),
    ];
    let mut tried = Vec::new();
    for url in candidates {
        match get_json::<IssuerMetadata>(http, &url).await {
            Ok(metadata) if metadata.issuer == issuer => return Ok(metadata),
            Ok(metadata) => {
                return Err(OAuthError::IssuerMismatch {
                    url,
                    found: metadata.issuer,
                });
            }
            Err(OAuthError::Fetch { problem, .. }) => tried.push((url, problem)),
            Err(other) => tried.push((url, other.to_string())),
        }
    }
    Err(OAuthError::Discovery { tried })
}

impl KeyCache {
    pub(super) async fn load(
        http: reqwest::Client,
        jwks_uri: String,
        min_refetch: Duration,
    ) -> Result<KeyCache, OAuthError> {
        let set = fetch(&http, &jwks_uri).await?;
        Ok(KeyCache {
            inner: Arc::new(Inner {
                http,
                jwks_uri,
                current: ArcSwap::from_pointee(set),
                refresh: Arc::new(tokio::sync::Mutex::new(LastFetch {
                    started: Instant::now(),
                    failed: None,
                })),
                min_refetch,
            }),
        })
    }

    /// The key named `kid` (or the only key, when the token names none), refetching the set
    /// once if it is not there and the last fetch is older than the refetch floor.
    ///
    /// # Errors
    ///
    /// [`OAuthError::Fetch`] when the key is not cached and the issuer's key set cannot be
    /// fetched: by this call, or by the last fetch if it is more recent than the floor (so
    /// every such request gets the same answer while the issuer is unreachable, `503`, not
    /// a `401` for a key that may well be valid).
    pub(super) async fn find(&self, kid: Option<&str>) -> Result<Option<KeyHandle>, OAuthError> {
        if let Some(found) = self.lookup(kid) {
            return Ok(Some(found));
        }
        let inner = &self.inner;
        let seen = inner.current.load().fetched;
        let mut last = inner.refresh.lock().await;
        // Someone else refreshed while this call waited: use their set.
        if inner.current.load().fetched != seen {
            return Ok(self.lookup(kid));
        }
        if last.started.elapsed() < inner.min_refetch {
            return match &last.failed {
                Some(problem) => Err(OAuthError::Fetch {
                    url: inner.jwks_uri.clone(),
                    problem: problem.clone(),
                }),
                None => Ok(None),
            };
        }
        last.start();
        let fetched = fetch(&inner.http, &inner.jwks_uri).await;
        last.ended(&fetched);
        inner.current.store(Arc::new(fetched?));
        Ok(self.lookup(kid))
    }

    /// When the set is older than `max_age`, refetch it in the background: this call, and
    /// every other meanwhile, goes on with the cached set (a request whose key is cached never
    /// waits for the issuer). One fetch at a time; a failed one keeps the cached set, is
    /// logged, and is not retried before the refetch floor has passed.
    pub(super) fn refresh_if_older(&self, max_age: Duration) {
        let inner = &self.inner;
        if inner.current.load().fetched.elapsed() < max_age {
            return;
        }
        let Ok(mut last) = inner.refresh.clone().try_lock_owned() else {
            return;
        };
        if inner.current.load().fetched.elapsed() < max_age
            || last.started.elapsed() < inner.min_refetch
        {
            return;
        }
        last.start();
        let inner = inner.clone();
        tokio::spawn(async move {
            let fetched = fetch(&inner.http, &inner.jwks_uri).await;
            last.ended(&fetched);
            match fetched {
                Ok(set) => inner.current.store(Arc::new(set)),
                Err(err) => {
                    tracing::warn!(%err, "could not refresh the issuer's keys; using the cached set");
                }
            }
            // The lock is held until the fetch ends: a single flight.
            drop(last);
        });
    }

    fn lookup(&self, kid: Option<&str>) -> Option<KeyHandle> {
        let set = self.inner.current.load();
        match kid {
            Some(kid) => set.keys.get(kid).cloned().map(KeyHandle),
            None if set.keys.len() == 1 => set.keys.values().next().cloned().map(KeyHandle),
            None => None,
        }
    }
}

async fn fetch(http: &reqwest::Client, jwks_uri: &str) -> Result<KeySet, OAuthError> {
    let set: JwkSet = get_json(http, jwks_uri).await?;
    let mut keys = HashMap::new();
    for (index, jwk) in set.keys.iter().enumerate() {
        // Encryption keys, symmetric keys (never a public verification key) and key types this
        // crate cannot verify with are skipped.
        if matches!(
            jwk.common.public_key_use,
            Some(jsonwebtoken::jwk::PublicKeyUse::Encryption)
        ) || matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_))
            || !jwk.is_supported()
        {
            continue;
        }
        let Ok(key) = DecodingKey::from_jwk(jwk) else {
            continue;
        };
        let alg = jwk
            .common
            .key_algorithm
            .and_then(|a| a.to_string().parse::<Algorithm>().ok());
        let kid = jwk
            .common
            .key_id
            .clone()
            .unwrap_or_else(|| format!("#{index}"));
        keys.insert(kid, Arc::new(Key { key, alg }));
    }
    tracing::debug!(
        jwks_uri,
        keys = keys.len(),
        "fetched the issuer's signing keys"
    );
    Ok(KeySet {
        keys,
        fetched: Instant::now(),
    })
}
