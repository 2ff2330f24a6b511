//! What authenticating one HTTP request costs: an OAuth access token (RS256 JWT) checked by
//! `JwtVerifier` against a tokens-file line looked up by `TokenTable`, measured in the same
//! run. The issuer is a small HTTP server on loopback in this process, serving its metadata
//! and key set; the signing key is `benches/data/issuer-rs256.der` (made for this bench).
//!
//! - `tokens_file`: the peer, a tokens-file lookup;
//! - `jwt_seen_before`: the same token every time (a client's every request until it
//!   expires), answered from the verifier's cache of verified tokens;
//! - `jwt_first_sight`: a token the verifier has not seen (signature, claims, scopes).
//!
//! Run: `cargo bench -p mcp-toolbelt --features oauth --bench oauth`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use jsonwebtoken::{EncodingKey, Header, encode};
use mcp_toolbelt::server::oauth::{JwtVerifier, OAuthConfig};
use mcp_toolbelt::server::{TokenResolver, TokenTable};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The issuer's signing key, PKCS#1 DER.
const KEY: &[u8] = include_bytes!("data/issuer-rs256.der");
/// The key's modulus, base64url (its public exponent is 65537, `AQAB`).
const MODULUS: &str = "nuZVQ117S4GQhYwsd7r5l2m3wfBjtcQoIOdKTG_JCdz43-LPpTX9zrc_2oy2K6g_-nMTaZV4zHTU8ZAz96n81N4MDglb2E2WKirZVHFmNB_-uFdnMIIpAEQAZ8UqS__Mu6OEr_pdH7doI9T_XkAFJujPddAFWlyXyrAsCil0_9mS5SN0W6CRuV_bGMYOIfeqq2kjcgrQI5YcnNc6G-OZ97bSwFt_b6RVeQxMu0OgKrCUTR3PgF7qcZafz-1qixhNU6NL3cU73I6bqKcuP_8HlMDO16rMG0buB0wuEK0MrwsVpawfF4GMXNVygAYVnlRTmXVSg2qz_9LQ33rQ6zBWNw";
const RESOURCE: &str = "http://127.0.0.1/mcp";

/// Serve the issuer's metadata and key set on loopback; its URL.
async fn issuer() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({"issuer": url, "jwks_uri": format!("{url}/jwks")}).to_string();
    let jwks = json!({"keys": [{"kty": "RSA", "kid": "bench", "alg": "RS256", "use": "sig",
        "n": MODULUS, "e": "AQAB"}]})
    .to_string();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (metadata, jwks) = (metadata.clone(), jwks.clone());
            tokio::spawn(async move {
                let mut head = vec![0; 4096];
                let read = stream.read(&mut head).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&head[..read]);
                let body = if head.starts_with("GET /jwks ") {
                    jwks
                } else {
                    metadata
                };
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    url
}

/// An access token from `issuer` for the resource, valid for an hour; `n` makes it unique.
fn token(issuer: &str, key: &EncodingKey, n: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut header = Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some("bench".to_string());
    let claims = json!({"iss": issuer, "aud": RESOURCE, "sub": format!("user-{n}"),
        "client_id": "bench-client", "scope": "tools.read tools.write",
        "iat": now, "exp": now + 3600, "jti": n});
    encode(&header, &claims, key).unwrap()
}

fn authenticate(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let issuer = runtime.block_on(issuer());
    let verifier = runtime
        .block_on(JwtVerifier::discover(OAuthConfig::new(&issuer, RESOURCE)))
        .unwrap();
    let key = EncodingKey::from_rsa_der(KEY);
    let table =
        TokenTable::parse("tokens-file-token-7c1e subject=ada tools.read tools.write\n").unwrap();

    let mut group = c.benchmark_group("authenticate");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("tokens_file", |b| {
        b.iter(|| table.resolve("tokens-file-token-7c1e").unwrap())
    });
    let same = token(&issuer, &key, 0);
    runtime.block_on(verifier.verify(&same)).unwrap();
    group.bench_function("jwt_seen_before", |b| {
        b.iter(|| runtime.block_on(verifier.verify(&same)).unwrap())
    });
    let mut n = 0;
    group.bench_function("jwt_first_sight", |b| {
        b.iter_batched(
            || {
                n += 1;
                token(&issuer, &key, n)
            },
            |fresh| runtime.block_on(verifier.verify(&fresh)).unwrap(),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, authenticate);
criterion_main!(benches);
