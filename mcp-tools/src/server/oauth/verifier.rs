//! [`JwtVerifier`]: checks a JWT access token against the issuer's keys and claims and turns it
//! into a [`Caller`].

use std::time::Duration;

use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::introspection::{Expect, IntrospectionClient, Introspector};
use super::keys::{self, IssuerMetadata, KeyCache};
use super::verified::{TokenAnswers, keep_until};
use super::{OAuthError, ScopeMap, TokenError};
use crate::Caller;

/// The asymmetric algorithms accepted by default. `none` cannot be named at all, and HMAC is
/// never accepted: a resource server holds no shared secret, and an HMAC keyed with the
/// issuer's public key is the classic forgery.
pub const DEFAULT_ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// What to trust and how: the issuer, this server's resource URL (the audience tokens must
/// name), the accepted algorithms, the clock leeway, how the key cache refreshes, which
/// claims to keep, and the [`ScopeMap`].
///
/// ```
/// use std::time::Duration;
/// use mcp_toolbelt::server::oauth::{OAuthConfig, ScopeMap};
/// let config = OAuthConfig::new("https://login.example.org", "https://mcp.example.org/mcp")
///     .leeway(Duration::from_secs(10))
///     .keep_claims(["email"])
///     .scope_map(ScopeMap::identity());
/// assert_eq!(config.resource(), "https://mcp.example.org/mcp");
/// ```
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    issuer: String,
    resource: String,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    keys_max_age: Duration,
    unknown_kid_refetch: Duration,
    http_timeout: Duration,
    keep_claims: Vec<String>,
    scope_map: ScopeMap,
    scopes_supported: Vec<String>,
    challenge_scopes: Vec<String>,
    introspection: Option<IntrospectionClient>,
}

impl OAuthConfig {
    /// Trust tokens from `issuer` (its identifier, exactly as its metadata states it) whose
    /// audience is `resource` (this server's canonical URL, RFC 8707). Defaults: the
    /// [`DEFAULT_ALGORITHMS`], 30 s leeway, keys refetched every 5 min and on an unknown `kid`
    /// at most every 10 s, a 10 s fetch timeout, no extra claims kept, [`ScopeMap::identity`].
    ///
    /// ```
    /// let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs/mcp");
    /// assert_eq!(c.issuer(), "https://idp");
    /// ```
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> OAuthConfig {
        OAuthConfig {
            issuer: issuer.into(),
            resource: resource.into(),
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: Duration::from_secs(30),
            keys_max_age: Duration::from_secs(300),
            unknown_kid_refetch: Duration::from_secs(10),
            http_timeout: Duration::from_secs(10),
            keep_claims: Vec::new(),
            scope_map: ScopeMap::identity(),
            scopes_supported: Vec::new(),
            challenge_scopes: Vec::new(),
            introspection: None,
        }
    }

    /// The trusted issuer.
    ///
    /// ```
    /// # let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs/mcp");
    /// assert_eq!(c.issuer(), "https://idp");
    /// ```
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// This server's resource URL, the audience tokens must carry.
    ///
    /// ```
    /// # let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs/mcp");
    /// assert_eq!(c.resource(), "https://rs/mcp");
    /// ```
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Narrow the accepted algorithms. Anything outside [`DEFAULT_ALGORITHMS`] is dropped, so
    /// HMAC cannot be switched on here.
    ///
    /// ```
    /// use mcp_toolbelt::server::oauth::{Algorithm, OAuthConfig};
    /// let c = OAuthConfig::new("https://idp", "https://rs").algorithms([Algorithm::ES256, Algorithm::HS256]);
    /// assert_eq!(c.allowed_algorithms(), [Algorithm::ES256]);
    /// ```
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> OAuthConfig {
        self.algorithms = algorithms
            .into_iter()
            .filter(|a| DEFAULT_ALGORITHMS.contains(a))
            .collect();
        self
    }

    /// The accepted algorithms.
    ///
    /// ```
    /// # let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs");
    /// assert_eq!(c.allowed_algorithms().len(), 9);
    /// ```
    pub fn allowed_algorithms(&self) -> &[Algorithm] {
        &self.algorithms
    }

    /// Clock skew tolerated on `exp`, `nbf` and `iat`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs").leeway(Duration::ZERO);
    /// # let _ = c;
    /// ```
    pub fn leeway(mut self, leeway: Duration) -> OAuthConfig {
        self.leeway = leeway;
        self
    }

    /// How old the cached key set may get before it is fetched again (rotation without an
    /// unknown `kid`, e.g. a removed key). The first token checked after that starts the
    /// fetch in the background and is checked with the cached keys, like every other until
    /// the new set arrives: a request whose key is cached never waits for the issuer.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs").keys_max_age(Duration::from_secs(60));
    /// # let _ = c;
    /// ```
    pub fn keys_max_age(mut self, max_age: Duration) -> OAuthConfig {
        self.keys_max_age = max_age;
        self
    }

    /// The least time between two fetches caused by tokens naming an unknown `kid` (so a flood
    /// of such tokens costs the issuer at most one request per interval).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs").unknown_kid_refetch(Duration::from_secs(1));
    /// # let _ = c;
    /// ```
    pub fn unknown_kid_refetch(mut self, interval: Duration) -> OAuthConfig {
        self.unknown_kid_refetch = interval;
        self
    }

    /// Time limit of each metadata, key or introspection fetch (default 10 s).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs").http_timeout(Duration::from_secs(3));
    /// # let _ = c;
    /// ```
    pub fn http_timeout(mut self, timeout: Duration) -> OAuthConfig {
        self.http_timeout = timeout;
        self
    }

    /// Claims copied into the [`Caller`] (besides `sub`, `client_id` and `scope`, which
    /// always are).
    ///
    /// ```
    /// let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs").keep_claims(["email", "groups"]);
    /// # let _ = c;
    /// ```
    pub fn keep_claims<I, S>(mut self, names: I) -> OAuthConfig
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.keep_claims = names.into_iter().map(Into::into).collect();
        self
    }

    /// Check tokens that are not JWTs (opaque tokens) at the issuer's RFC 7662 introspection
    /// endpoint, authenticating as `client_id` / `client_secret` (HTTP Basic). Answers are
    /// cached for 30 s (or until the token expires, if sooner); the answer must say
    /// `active: true`, name the issuer if it names one, name this resource in `aud`, and be
    /// within `exp`/`nbf`.
    ///
    /// ```
    /// let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs")
    ///     .introspection("mcp-server", "its-secret");
    /// # let _ = c;
    /// ```
    pub fn introspection(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> OAuthConfig {
        self.introspection = Some(IntrospectionClient {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            cache_for: Duration::from_secs(30),
        });
        self
    }

    /// How long an introspection answer is reused (a revoked token is accepted at most this
    /// long after its revocation). No effect without [`introspection`](Self::introspection).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs")
    ///     .introspection("mcp-server", "its-secret")
    ///     .introspection_cache(Duration::from_secs(5));
    /// # let _ = c;
    /// ```
    pub fn introspection_cache(mut self, cache_for: Duration) -> OAuthConfig {
        if let Some(client) = &mut self.introspection {
            client.cache_for = cache_for;
        }
        self
    }

    /// How scopes become permissions.
    ///
    /// ```
    /// use mcp_toolbelt::server::oauth::{OAuthConfig, ScopeMap};
    /// let c = OAuthConfig::new("https://idp", "https://rs").scope_map(ScopeMap::parse("s = P\n").unwrap());
    /// # let _ = c;
    /// ```
    pub fn scope_map(mut self, map: ScopeMap) -> OAuthConfig {
        self.scope_map = map;
        self
    }

    /// The scopes this server advertises (RFC 9728 `scopes_supported`, and the `scope` hint
    /// of a `401`). By default: the scopes a mapping file lists; with the identity map, the
    /// permissions the served registry needs; with a function map, none unless set here.
    ///
    /// ```
    /// let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs")
    ///     .scopes_supported(["notes:read", "notes:write"]);
    /// # let _ = c;
    /// ```
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> OAuthConfig
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes set with [`scopes_supported`](Self::scopes_supported).
    pub(crate) fn advertised_scopes(&self) -> &[String] {
        &self.scopes_supported
    }

    /// The scopes a refused request is told to ask for (the `scope` of the `401`'s
    /// `WWW-Authenticate`, which a client following the MCP authorization spec requests
    /// first). By default every advertised scope, [`scopes_supported`](Self::scopes_supported),
    /// admin scopes included; name the least a client needs here (least privilege), and let
    /// step-up (`403 insufficient_scope`) ask for more when a call needs it.
    ///
    /// ```
    /// let c = mcp_toolbelt::server::oauth::OAuthConfig::new("https://idp", "https://rs")
    ///     .challenge_scopes(["notes:read"]);
    /// # let _ = c;
    /// ```
    pub fn challenge_scopes<I, S>(mut self, scopes: I) -> OAuthConfig
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.challenge_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes set with [`challenge_scopes`](Self::challenge_scopes).
    pub(crate) fn asked_scopes(&self) -> &[String] {
        &self.challenge_scopes
    }

    /// The scope map in use.
    pub(crate) fn mapping(&self) -> &ScopeMap {
        &self.scope_map
    }
}

/// Verifies JWT access tokens of one issuer for one resource.
///
/// Built once with [`discover`](Self::discover) (fetches the issuer's metadata and keys), then
/// shared: [`verify`](Self::verify) takes `&self` and is cheap while the key cache is fresh.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_toolbelt::server::oauth::{JwtVerifier, OAuthConfig};
/// let verifier = JwtVerifier::discover(OAuthConfig::new("https://login.example.org", "https://mcp.example.org/mcp")).await?;
/// let caller = verifier.verify("eyJ...").await?;
/// println!("{:?} may use {:?}", caller.subject(), caller.permissions());
/// # Ok(()) }
/// ```
pub struct JwtVerifier {
    config: OAuthConfig,
    metadata: IssuerMetadata,
    keys: KeyCache,
    introspector: Option<Introspector>,
    /// One validation per allowed algorithm: the JOSE crate wants every algorithm of a
    /// validation to be of the key's family, so each token is checked with exactly its own.
    validations: Vec<(Algorithm, Validation)>,
    /// The callers of tokens verified already, each kept until its token's `exp` and at
    /// most [`OAuthConfig::keys_max_age`] (a key the issuer withdraws stops counting no
    /// later than a refetched key set would notice).
    verified: TokenAnswers<Caller>,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("config", &self.config)
            .field("metadata", &self.metadata)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// Fetch the issuer's metadata (RFC 8414 `/.well-known/oauth-authorization-server`, else
    /// OpenID discovery; its `issuer` must equal the configured one) and its keys; with
    /// [`OAuthConfig::introspection`], the metadata must name an `introspection_endpoint`.
    ///
    /// ```no_run
    /// # async fn demo() {
    /// use mcp_toolbelt::server::oauth::{JwtVerifier, OAuthConfig};
    /// let err = JwtVerifier::discover(OAuthConfig::new("http://127.0.0.1:9", "http://127.0.0.1/mcp")).await.unwrap_err();
    /// println!("{err}");
    /// # }
    /// ```
    pub async fn discover(config: OAuthConfig) -> Result<JwtVerifier, OAuthError> {
        let http = keys::client(config.http_timeout)?;
        let metadata = keys::discover(&http, &config.issuer).await?;
        let introspector =
            match &config.introspection {
                None => None,
                Some(client) => {
                    let endpoint = metadata.introspection_endpoint.clone().ok_or_else(|| {
                        OAuthError::Fetch {
                            url: config.issuer.clone(),
                            problem: "the issuer's metadata names no introspection_endpoint".into(),
                        }
                    })?;
                    Some(Introspector::new(http.clone(), endpoint, client.clone()))
                }
            };
        let keys =
            KeyCache::load(http, metadata.jwks_uri.clone(), config.unknown_kid_refetch).await?;
        let validations = config
            .algorithms
            .iter()
            .map(|&alg| {
                let mut validation = Validation::new(alg);
                validation.leeway = config.leeway.as_secs();
                validation.validate_exp = true;
                validation.validate_nbf = true;
                validation.validate_aud = true;
                validation.set_issuer(&[&config.issuer]);
                validation.set_audience(&[&config.resource]);
                validation.set_required_spec_claims(&["exp", "iss", "aud"]);
                (alg, validation)
            })
            .collect();
        Ok(JwtVerifier {
            config,
            metadata,
            keys,
            introspector,
            validations,
            verified: TokenAnswers::new(),
        })
    }

    /// The issuer's metadata as discovered.
    ///
    /// ```no_run
    /// # async fn demo(v: mcp_toolbelt::server::oauth::JwtVerifier) {
    /// println!("keys at {}", v.metadata().jwks_uri);
    /// # }
    /// ```
    pub fn metadata(&self) -> &IssuerMetadata {
        &self.metadata
    }

    /// The configuration this verifier runs with.
    ///
    /// ```no_run
    /// # async fn demo(v: mcp_toolbelt::server::oauth::JwtVerifier) {
    /// assert!(!v.config().resource().is_empty());
    /// # }
    /// ```
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// Check `token` (the bearer credentials, without `Bearer `) and say who presents it.
    ///
    /// Checked, in order: a JWS in compact form whose header's members have their RFC 7515
    /// types and names no `crit` extension (none is implemented), and whose `alg` is allowed;
    /// a published key named by `kid` (the key set is refetched, rate-limited, when the `kid`
    /// is unknown, and in the background when it is older than [`OAuthConfig::keys_max_age`])
    /// whose own `alg`, if its JWK pins one, matches; the signature; `iss`, `aud`, `exp`,
    /// `nbf` and `iat` (not in the future; each with the leeway). A token that is
    /// not a JWT goes to introspection instead when it is configured. Failures are
    /// [`OAuthError::Token`]; a key set that cannot be fetched is [`OAuthError::Fetch`].
    ///
    /// ```no_run
    /// # async fn demo(v: mcp_toolbelt::server::oauth::JwtVerifier) {
    /// use mcp_toolbelt::server::oauth::{OAuthError, TokenError};
    /// assert!(matches!(v.verify("garbage").await, Err(OAuthError::Token(TokenError::Malformed))));
    /// # }
    /// ```
    pub async fn verify(&self, token: &str) -> Result<Caller, OAuthError> {
        if let Some(introspector) = &self.introspector
            && token.bytes().filter(|&b| b == b'.').count() != 2
        {
            let expect = Expect {
                issuer: &self.config.issuer,
                resource: &self.config.resource,
                leeway: self.config.leeway,
            };
            let claims = introspector.introspect(token, &expect).await?;
            return Ok(self.caller(claims));
        }
        if let Some(caller) = self.verified.get(token) {
            return Ok(caller);
        }
        let json = header_json(token)?;
        check_header(&json)?;
        let header = jsonwebtoken::decode_header(token).map_err(|_| header_error(&json))?;
        let Some((_, validation)) = self.validations.iter().find(|(alg, _)| *alg == header.alg)
        else {
            return Err(TokenError::Algorithm(format!("{:?}", header.alg)).into());
        };
        self.keys.refresh_if_older(self.config.keys_max_age);
        let key = self
            .keys
            .find(header.kid.as_deref())
            .await?
            .ok_or(TokenError::UnknownKey)?;
        if key.pinned_alg().is_some_and(|alg| alg != header.alg) {
            return Err(TokenError::Algorithm(format!("{:?}", header.alg)).into());
        }
        let data =
            jsonwebtoken::decode::<Map<String, Value>>(token, key.decoding_key(), validation)
                .map_err(token_error)?;
        check_issued_at(&data.claims, self.config.leeway)?;
        let until = keep_until(&data.claims, self.config.keys_max_age);
        let caller = self.caller(data.claims);
        self.verified.put(token, until, caller.clone());
        Ok(caller)
    }

    fn caller(&self, claims: Map<String, Value>) -> Caller {
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_string);
        let scopes: Vec<String> = text("scope")
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default();
        let permissions = self.config.scope_map.permissions(&scopes, &claims);
        let kept = self
            .config
            .keep_claims
            .iter()
            .filter_map(|name| Some((name.clone(), claims.get(name)?.clone())))
            .collect();
        Caller::new(text("sub"), text("client_id"), scopes, permissions, kept)
    }
}

/// The token's JOSE header as JSON (the first of its three parts).
fn header_json(token: &str) -> Result<Map<String, Value>, TokenError> {
    use base64::Engine as _;
    let (encoded, _) = token.split_once('.').ok_or(TokenError::Malformed)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(encoded)
        .map_err(|_| TokenError::Malformed)?;
    serde_json::from_slice(&bytes).map_err(|_| TokenError::Malformed)
}

/// The header members RFC 7515 and RFC 7519 define as strings (among those `jsonwebtoken`
/// reads).
const STRING_MEMBERS: [&str; 7] = ["kid", "typ", "cty", "jku", "x5u", "x5t", "x5t#S256"];

/// What `jsonwebtoken` reads but does not check: the types of the string members (it only
/// fails to parse them, which would be reported as something else), and `crit` (RFC 7515
/// §4.1.11): a non-empty array of extension names, every one of which the recipient must
/// understand. This verifier implements no extension, so any `crit` is refused.
fn check_header(header: &Map<String, Value>) -> Result<(), TokenError> {
    if let Some(name) = STRING_MEMBERS
        .iter()
        .find(|name| header.get(**name).is_some_and(|value| !value.is_string()))
    {
        return Err(TokenError::MalformedHeader(format!(
            "its {name} is not a string"
        )));
    }
    let Some(crit) = header.get("crit") else {
        return Ok(());
    };
    let names: Option<Vec<&str>> =
        crit.as_array()
            .filter(|names| !names.is_empty())
            .and_then(|names| {
                names
                    .iter()
                    .map(|name| name.as_str().filter(|name| !name.is_empty()))
                    .collect()
            });
    match names.as_deref() {
        Some([first, ..]) => Err(TokenError::Critical(first.chars().take(64).collect())),
        _ => Err(TokenError::MalformedHeader(
            "its crit is not a non-empty array of extension names".into(),
        )),
    }
}

/// Why a header that [`check_header`] let through did not parse: an `alg` the JOSE crate does
/// not know (`none`, say) is named as such; anything else is a malformed header.
fn header_error(header: &Map<String, Value>) -> TokenError {
    match header.get("alg") {
        Some(Value::String(alg)) if alg.parse::<Algorithm>().is_err() => {
            TokenError::Algorithm(alg.chars().take(64).collect())
        }
        Some(Value::String(_)) => {
            TokenError::MalformedHeader("it is not a JOSE header this server can read".into())
        }
        _ => TokenError::MalformedHeader("its alg is missing or not a string".into()),
    }
}

/// `iat` (RFC 7519 §4.1.6), which `jsonwebtoken` does not check: optional, but when present a
/// number no later than now plus the leeway. A token issued in the future comes from a clock
/// gone wrong or from a forger; either way it is refused.
fn check_issued_at(claims: &Map<String, Value>, leeway: Duration) -> Result<(), TokenError> {
    let Some(iat) = claims.get("iat") else {
        return Ok(());
    };
    let iat = iat
        .as_f64()
        .ok_or_else(|| TokenError::MissingClaim("iat".into()))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    if iat > (now + leeway).as_secs_f64() {
        return Err(TokenError::IssuedInFuture);
    }
    Ok(())
}

fn token_error(err: jsonwebtoken::errors::Error) -> OAuthError {
    use jsonwebtoken::errors::ErrorKind as K;
    let kind = match err.kind() {
        K::InvalidSignature => TokenError::Signature,
        K::ExpiredSignature => TokenError::Expired,
        K::ImmatureSignature => TokenError::NotYetValid,
        K::InvalidAudience => TokenError::Audience,
        K::InvalidIssuer => TokenError::Issuer,
        K::InvalidAlgorithm | K::MissingAlgorithm | K::UnsupportedAlgorithm => {
            TokenError::Algorithm(String::from("not allowed for this key"))
        }
        K::MissingRequiredClaim(claim) => TokenError::MissingClaim(claim.clone()),
        K::InvalidClaimFormat(claim) => TokenError::MissingClaim(claim.clone()),
        _ => TokenError::Malformed,
    };
    kind.into()
}
