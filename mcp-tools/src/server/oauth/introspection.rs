//! RFC 7662 token introspection for opaque access tokens, with a short, bounded cache.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::verified::{TokenAnswers, keep_until, unix_now};
use super::{OAuthError, TokenError};

/// Longer tokens are refused before any request is made.
const MAX_TOKEN: usize = 4096;

/// The credentials this server uses at the issuer's introspection endpoint.
#[derive(Clone)]
pub(super) struct IntrospectionClient {
    pub client_id: String,
    pub client_secret: String,
    pub cache_for: Duration,
}

impl std::fmt::Debug for IntrospectionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.debug_struct("IntrospectionClient")
            .field("client_id", &self.client_id)
            .field("cache_for", &self.cache_for)
            .finish_non_exhaustive()
    }
}

/// What the verifier checks an introspection answer against.
pub(super) struct Expect<'a> {
    pub issuer: &'a str,
    pub resource: &'a str,
    pub leeway: Duration,
}

type Answer = Result<Map<String, Value>, TokenError>;

pub(super) struct Introspector {
    http: reqwest::Client,
    endpoint: String,
    client: IntrospectionClient,
    answers: TokenAnswers<Answer>,
}

impl Introspector {
    pub(super) fn new(
        http: reqwest::Client,
        endpoint: String,
        client: IntrospectionClient,
    ) -> Introspector {
        Introspector {
            http,
            endpoint,
            client,
            answers: TokenAnswers::new(),
        }
    }

    /// The claims of an active token meant for this resource, from the cache while fresh.
    pub(super) async fn introspect(
        &self,
        token: &str,
        expect: &Expect<'_>,
    ) -> Result<Map<String, Value>, OAuthError> {
        if token.len() > MAX_TOKEN || token.is_empty() {
            return Err(TokenError::Malformed.into());
        }
        if let Some(answer) = self.answers.get(token) {
            return answer.map_err(OAuthError::from);
        }
        let response = self.ask(token).await?;
        let answer = check(response, expect);
        let until = match &answer {
            Ok(claims) => keep_until(claims, self.client.cache_for),
            Err(_) => Instant::now() + self.client.cache_for,
        };
        self.answers.put(token, until, answer.clone());
        answer.map_err(OAuthError::from)
    }

    async fn ask(&self, token: &str) -> Result<Map<String, Value>, OAuthError> {
        let fail = |problem: String| OAuthError::Fetch {
            url: self.endpoint.clone(),
            problem,
        };
        let body = format!("token={}&token_type_hint=access_token", form_encode(token));
        let response = self
            .http
            .post(&self.endpoint)
            // RFC 6749 §2.3.1: the client id and secret are form-encoded before Basic.
            .basic_auth(
                form_encode(&self.client.client_id),
                Some(form_encode(&self.client.client_secret)),
            )
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| fail(super::keys::chain(&e)))?;
        if !response.status().is_success() {
            return Err(fail(format!("HTTP status {}", response.status())));
        }
        super::keys::read_json(response, &self.endpoint).await
    }
}

/// An active answer for this issuer and resource, within its lifetime.
fn check(claims: Map<String, Value>, expect: &Expect<'_>) -> Answer {
    if claims.get("active") != Some(&Value::Bool(true)) {
        return Err(TokenError::Inactive);
    }
    if let Some(iss) = claims.get("iss")
        && iss.as_str() != Some(expect.issuer)
    {
        return Err(TokenError::Issuer);
    }
    // Audience binding (RFC 8707) needs the `aud` member: an answer without one is refused.
    let audience_ok = match claims.get("aud") {
        Some(Value::String(aud)) => aud == expect.resource,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(expect.resource)),
        _ => false,
    };
    if !audience_ok {
        return Err(TokenError::Audience);
    }
    let now = unix_now();
    let leeway = expect.leeway.as_secs();
    if let Some(exp) = claims.get("exp").and_then(Value::as_u64)
        && exp.saturating_add(leeway) <= now
    {
        return Err(TokenError::Expired);
    }
    if let Some(nbf) = claims.get("nbf").and_then(Value::as_u64)
        && nbf > now.saturating_add(leeway)
    {
        return Err(TokenError::NotYetValid);
    }
    Ok(claims)
}

/// `application/x-www-form-urlencoded` for one value: unreserved bytes as they are, the rest
/// as `%XX`.
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect() -> Expect<'static> {
        Expect {
            issuer: "https://idp",
            resource: "https://rs/mcp",
            leeway: Duration::from_secs(5),
        }
    }

    fn answer(json: Value) -> Answer {
        check(json.as_object().unwrap().clone(), &expect())
    }

    #[test]
    fn answers_are_checked_for_activity_issuer_audience_and_lifetime() {
        let now = unix_now();
        let ok = serde_json::json!({"active": true, "iss": "https://idp", "aud": ["x", "https://rs/mcp"], "exp": now + 60});
        assert!(answer(ok).is_ok());
        assert_eq!(
            answer(serde_json::json!({"active": false})),
            Err(TokenError::Inactive)
        );
        assert_eq!(
            answer(serde_json::json!({"active": "true", "aud": "https://rs/mcp"})),
            Err(TokenError::Inactive)
        );
        assert_eq!(
            answer(
                serde_json::json!({"active": true, "iss": "https://other", "aud": "https://rs/mcp"})
            ),
            Err(TokenError::Issuer)
        );
        assert_eq!(
            answer(serde_json::json!({"active": true})),
            Err(TokenError::Audience)
        );
        assert_eq!(
            answer(serde_json::json!({"active": true, "aud": "https://rs/mcp", "exp": now - 10})),
            Err(TokenError::Expired)
        );
        assert_eq!(
            answer(serde_json::json!({"active": true, "aud": "https://rs/mcp", "nbf": now + 60})),
            Err(TokenError::NotYetValid)
        );
    }

    #[test]
    fn form_encoding_escapes_reserved_bytes() {
        assert_eq!(form_encode("a+b/c=d e~"), "a%2Bb%2Fc%3Dd%20e~");
    }
}
