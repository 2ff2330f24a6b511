//! The OAuth resource-server verifier against a real identity provider: oidc-provider 9.13.3
//! (tests/oidc/provider.mjs, installed by `scripts/setup-node.sh`) on loopback, issuing JWT
//! access tokens for one resource to two clients with different scopes. Bad tokens are forged
//! by the provider script with `jose`, signed with the provider's own key where that matters.

mod oidc_common;

use std::time::Duration;

use mcp_toolbelt::Caller;
use mcp_toolbelt::server::oauth::TokenError;
use mcp_toolbelt::server::oauth::{
    JwtVerifier, OAuthConfig, OAuthError, ProtectedResource, ScopeMap,
};
use oidc_common::Provider;

const RESOURCE: &str = "http://127.0.0.1:7/mcp";

fn sorted(caller: &Caller) -> Vec<String> {
    let permissions = caller
        .permissions()
        .expect("a token's caller has permissions");
    let mut names: Vec<String> = permissions.names().map(String::from).collect();
    names.sort();
    names
}

fn refused(result: Result<Caller, OAuthError>) -> TokenError {
    match result {
        Err(OAuthError::Token(err)) => err,
        other => panic!("expected a refused token, got {other:?}"),
    }
}

const SCOPE_MAP: &str = "\
# scope        permissions
notes:read   = NOTE_VIEW
notes:write  = NOTE_VIEW NOTE_EDIT
admin        = NOTE_ADMIN
";

#[tokio::test]
async fn real_provider_tokens_map_to_permissions_and_bad_tokens_are_refused() {
    let provider = Provider::start(RESOURCE).await;
    let config = OAuthConfig::new(&provider.issuer, RESOURCE)
        .scope_map(ScopeMap::parse(SCOPE_MAP).unwrap())
        .keep_claims(["jti"])
        .keys_max_age(Duration::from_secs(1))
        .unknown_kid_refetch(Duration::from_millis(200));
    let verifier = JwtVerifier::discover(config).await.expect("discovery");
    assert_eq!(verifier.metadata().issuer, provider.issuer);
    assert_eq!(
        verifier.metadata().jwks_uri,
        format!("{}/jwks", provider.issuer)
    );

    // Good tokens for both clients, each with its own permissions.
    let reader_token = provider.token("reader", "notes:read").await;
    let reader = verifier
        .verify(&reader_token)
        .await
        .expect("reader's token");
    assert_eq!(reader.subject(), Some("reader"));
    assert_eq!(reader.client_id(), Some("reader"));
    assert_eq!(reader.scopes(), ["notes:read"]);
    assert_eq!(sorted(&reader), ["NOTE_VIEW"]);
    assert!(reader.claim("jti").is_some() && reader.claim("iss").is_none());

    let writer_token = provider
        .token("writer", "notes:read notes:write admin")
        .await;
    let writer = verifier
        .verify(&writer_token)
        .await
        .expect("writer's token");
    assert_eq!(writer.client_id(), Some("writer"));
    assert_eq!(sorted(&writer), ["NOTE_ADMIN", "NOTE_EDIT", "NOTE_VIEW"]);

    // The default map: a scope names a permission.
    let identity = JwtVerifier::discover(OAuthConfig::new(&provider.issuer, RESOURCE))
        .await
        .expect("discovery");
    let writer = identity
        .verify(&writer_token)
        .await
        .expect("writer's token");
    assert_eq!(sorted(&writer), ["admin", "notes:read", "notes:write"]);

    // The control case: a token the script forges with the current key is accepted, so each
    // refusal below is due to the one thing that case changes.
    let good = provider.forge("good").await;
    assert!(verifier.verify(&good).await.is_ok());

    // The protected-resource document lists the issuer and the mapping file's scopes.
    let resource = ProtectedResource::of(verifier.config());
    assert_eq!(
        resource.metadata()["scopes_supported"],
        serde_json::json!(["admin", "notes:read", "notes:write"])
    );
    assert_eq!(
        resource.metadata()["authorization_servers"],
        serde_json::json!([provider.issuer])
    );

    // Bad tokens and their answers.
    assert_eq!(refused(verifier.verify("").await), TokenError::Malformed);
    assert_eq!(
        refused(verifier.verify("garbage").await),
        TokenError::Malformed
    );
    assert_eq!(
        refused(verifier.verify("a.b.c").await),
        TokenError::Malformed
    );
    let cases = [
        ("expired", TokenError::Expired),
        ("not-yet-valid", TokenError::NotYetValid),
        ("wrong-audience", TokenError::Audience),
        ("wrong-issuer", TokenError::Issuer),
        ("alg-none", TokenError::Algorithm("none".into())),
        ("hs256-public-key", TokenError::Algorithm("HS256".into())),
        ("unknown-kid", TokenError::UnknownKey),
        ("tampered", TokenError::Signature),
    ];
    for (case, expected) in cases {
        let token = provider.forge(case).await;
        let err = refused(verifier.verify(&token).await);
        assert_eq!(err, expected, "case {case}");
        assert_eq!(OAuthError::from(err).error_code(), Some("invalid_token"));
    }

    // Rotation: a new key is published and signs new tokens; the verifier picks it up on the
    // unknown kid, without a restart. Tokens under the old key keep working while it is
    // published, and stop once it is removed (the key set is refetched when older than 1 s).
    tokio::time::sleep(Duration::from_millis(250)).await;
    provider.admin("rotate").await;
    let rotated = provider.token("reader", "notes:read").await;
    // The header (alg, typ, kid) differs only by the kid.
    assert_ne!(
        rotated.split('.').next(),
        reader_token.split('.').next(),
        "the provider signs with the new key"
    );
    assert_eq!(
        sorted(&verifier.verify(&rotated).await.expect("new key")),
        ["NOTE_VIEW"]
    );
    assert!(
        verifier.verify(&reader_token).await.is_ok(),
        "old key still published"
    );
    provider.admin("retire").await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // The first check after keys_max_age starts the refresh in the background and is answered
    // with the cached keys; the old key stops working once the new set is in.
    let mut outcome = verifier.verify(&reader_token).await;
    for _ in 0..50 {
        if outcome.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        outcome = verifier.verify(&reader_token).await;
    }
    assert_eq!(refused(outcome), TokenError::UnknownKey);
    assert!(verifier.verify(&rotated).await.is_ok());
}

/// Issue 32: what `jsonwebtoken` reads but does not check. Each token is signed with the
/// provider's current key (by node's own RSA signer where jose refuses to write the header),
/// so only the one thing named is wrong.
#[tokio::test]
async fn future_iat_critical_extensions_and_malformed_header_members_are_refused() {
    let provider = Provider::start(RESOURCE).await;
    let verifier = JwtVerifier::discover(OAuthConfig::new(&provider.issuer, RESOURCE))
        .await
        .expect("discovery");
    // The control cases: both signers' well-formed tokens are accepted.
    for case in ["good", "raw-good"] {
        let token = provider.forge(case).await;
        assert!(verifier.verify(&token).await.is_ok(), "case {case}");
    }
    let malformed_crit =
        TokenError::MalformedHeader("its crit is not a non-empty array of extension names".into());
    let cases = [
        ("iat-future", TokenError::IssuedInFuture),
        (
            "crit-unknown",
            TokenError::Critical("urn:example:must-check".into()),
        ),
        ("crit-b64", TokenError::Critical("b64".into())),
        ("crit-empty", malformed_crit.clone()),
        ("crit-not-array", malformed_crit.clone()),
        ("crit-not-strings", malformed_crit),
        (
            "kid-number",
            TokenError::MalformedHeader("its kid is not a string".into()),
        ),
    ];
    for (case, expected) in cases {
        let token = provider.forge(case).await;
        let err = refused(verifier.verify(&token).await);
        assert_eq!(err, expected, "case {case}");
        assert_eq!(OAuthError::from(err).error_code(), Some("invalid_token"));
    }
    // The leeway covers a clock a little behind the issuer's: an `iat` 10 s ahead is fine with
    // the default 30 s, and refused with none.
    let strict =
        JwtVerifier::discover(OAuthConfig::new(&provider.issuer, RESOURCE).leeway(Duration::ZERO))
            .await
            .expect("discovery");
    let ahead = provider.forge("iat-ahead-10s").await;
    assert!(verifier.verify(&ahead).await.is_ok());
    assert_eq!(
        refused(strict.verify(&ahead).await),
        TokenError::IssuedInFuture
    );
}

#[tokio::test]
async fn opaque_tokens_are_introspected_and_a_revocation_counts_once_the_cache_expires() {
    let provider = Provider::start(RESOURCE).await;
    let config = OAuthConfig::new(&provider.issuer, RESOURCE)
        .scope_map(ScopeMap::parse(SCOPE_MAP).unwrap())
        .introspection("mcp-server", "mcp-server-secret")
        .introspection_cache(Duration::from_millis(500));
    let verifier = JwtVerifier::discover(config).await.expect("discovery");

    let opaque = provider.token("legacy", "notes:read notes:write").await;
    assert_ne!(
        opaque.matches('.').count(),
        2,
        "the legacy client gets opaque tokens"
    );
    let legacy = verifier.verify(&opaque).await.expect("introspected");
    assert_eq!(legacy.client_id(), Some("legacy"));
    assert_eq!(sorted(&legacy), ["NOTE_EDIT", "NOTE_VIEW"]);
    // JWTs are still checked locally by the same verifier.
    let jwt = provider.token("reader", "notes:read").await;
    assert_eq!(sorted(&verifier.verify(&jwt).await.unwrap()), ["NOTE_VIEW"]);

    assert_eq!(
        refused(verifier.verify("not-a-token-the-issuer-knows").await),
        TokenError::Inactive
    );
    assert_eq!(refused(verifier.verify("").await), TokenError::Malformed);

    // A resource server the issuer does not let introspect learns nothing.
    let stranger = JwtVerifier::discover(
        OAuthConfig::new(&provider.issuer, RESOURCE).introspection("writer", "writer-secret"),
    )
    .await
    .expect("discovery");
    assert_eq!(
        refused(stranger.verify(&opaque).await),
        TokenError::Inactive
    );

    // Revoked: still accepted from the cache, refused once the cached answer is older than 500 ms.
    provider.revoke("legacy", &opaque).await;
    assert!(verifier.verify(&opaque).await.is_ok(), "cached answer");
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        refused(verifier.verify(&opaque).await),
        TokenError::Inactive
    );
}

#[tokio::test]
async fn a_flood_of_unknown_kids_costs_the_issuer_at_most_one_key_fetch_per_interval() {
    let provider = Provider::start(RESOURCE).await;
    // The defaults: unknown-kid refetches at most every 10 s.
    let verifier = std::sync::Arc::new(
        JwtVerifier::discover(OAuthConfig::new(&provider.issuer, RESOURCE))
            .await
            .expect("discovery"),
    );
    let before = provider.jwks_fetches().await;
    assert_eq!(before, 1, "discovery fetched the keys once");
    let mut tokens = Vec::new();
    for _ in 0..20 {
        tokens.push(provider.forge("unknown-kid").await);
    }
    for token in &tokens {
        assert_eq!(
            refused(verifier.verify(token).await),
            TokenError::UnknownKey
        );
    }
    // Concurrently too.
    let mut calls = tokio::task::JoinSet::new();
    for token in tokens.clone() {
        let verifier = verifier.clone();
        calls.spawn(async move { refused(verifier.verify(&token).await) });
    }
    while let Some(err) = calls.join_next().await {
        assert_eq!(err.expect("no panic"), TokenError::UnknownKey);
    }
    let after = provider.jwks_fetches().await;
    assert!(
        after - before <= 1,
        "{} fetches for 40 unknown kids",
        after - before
    );
    // The good tokens keep working meanwhile.
    let good = provider.token("reader", "notes:read").await;
    assert!(verifier.verify(&good).await.is_ok());
}

/// Issue 32: a key set older than `keys_max_age` is refetched in the background, once, while
/// tokens whose key is cached are checked with the cached set: an issuer that hangs (its
/// JWKS requests are read and never answered) holds no request for the fetch timeout.
#[tokio::test]
async fn a_hanging_issuer_holds_no_request_whose_key_is_cached() {
    let provider = Provider::start(RESOURCE).await;
    let fetch_timeout = Duration::from_secs(30);
    let verifier = std::sync::Arc::new(
        JwtVerifier::discover(
            OAuthConfig::new(&provider.issuer, RESOURCE)
                .http_timeout(fetch_timeout)
                .keys_max_age(Duration::from_secs(1))
                .unknown_kid_refetch(Duration::from_millis(100)),
        )
        .await
        .expect("discovery"),
    );
    let token = provider.token("reader", "notes:read").await;
    assert!(verifier.verify(&token).await.is_ok());
    provider.admin("hang-jwks").await;
    let before = provider.jwks_fetches().await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // The key set is stale now: each of these starts (or finds under way) a refresh that
    // never ends, and must not wait for it. Well inside the 30 s fetch timeout.
    let started = std::time::Instant::now();
    let checks = async {
        for _ in 0..5 {
            assert!(verifier.verify(&token).await.is_ok());
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mut concurrent = tokio::task::JoinSet::new();
        for _ in 0..10 {
            let (verifier, token) = (verifier.clone(), token.clone());
            concurrent.spawn(async move { verifier.verify(&token).await.is_ok() });
        }
        while let Some(ok) = concurrent.join_next().await {
            assert!(ok.expect("no panic"));
        }
    };
    tokio::time::timeout(Duration::from_secs(10), checks)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "requests with a cached key waited for the hanging issuer ({:?})",
                started.elapsed()
            )
        });
    // One fetch under way (single flight), not one per request.
    assert_eq!(provider.jwks_fetches().await - before, 1);
}

/// Issue 32: while the issuer's keys cannot be fetched, a token whose `kid` is not cached
/// gets the same answer every time, the issuer's problem (`OAuthError::Fetch`: 503), and
/// never "unknown key" (401) for a key that may be the issuer's newest. Tokens whose key is
/// cached still pass.
#[tokio::test]
async fn an_unknown_kid_while_the_issuer_is_unreachable_is_the_servers_problem_every_time() {
    let provider = Provider::start(RESOURCE).await;
    let verifier = JwtVerifier::discover(
        OAuthConfig::new(&provider.issuer, RESOURCE)
            .http_timeout(Duration::from_millis(300))
            .unknown_kid_refetch(Duration::from_secs(3)),
    )
    .await
    .expect("discovery");
    provider.admin("hang-jwks").await;
    // Past the refetch floor: the first unknown kid fetches (and the fetch fails); the
    // next ones, within the floor, must not turn into "unknown key".
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let mut tokens = Vec::new();
    for _ in 0..4 {
        tokens.push(provider.forge("unknown-kid").await);
    }
    for (attempt, token) in tokens.iter().enumerate() {
        match verifier.verify(token).await {
            Err(OAuthError::Fetch { .. }) => {}
            other => panic!("attempt {attempt}: expected the issuer's problem, got {other:?}"),
        }
    }
    let good = provider.token("reader", "notes:read").await;
    assert!(verifier.verify(&good).await.is_ok());
}

#[tokio::test]
async fn discovery_refuses_a_metadata_document_for_another_issuer_and_a_dead_issuer() {
    let provider = Provider::start(RESOURCE).await;
    // The metadata names the issuer without the trailing slash: not the configured one.
    let err = JwtVerifier::discover(OAuthConfig::new(format!("{}/", provider.issuer), RESOURCE))
        .await
        .unwrap_err();
    assert!(matches!(err, OAuthError::IssuerMismatch { .. }), "{err}");
    assert_eq!(err.error_code(), None);
    // Nothing listens on port 9 of loopback here.
    let err = JwtVerifier::discover(
        OAuthConfig::new("http://127.0.0.1:9", RESOURCE).http_timeout(Duration::from_secs(2)),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, OAuthError::Discovery { .. }), "{err}");
    assert_eq!(err.error_code(), None);
}

/// Issue 32: the start-up error of an issuer whose metadata cannot be found names every URL
/// tried and why each failed (it named the last only). Here each fails its own way: the
/// RFC 8414 place answers 404, the OpenID one is not JSON.
#[tokio::test]
async fn a_failed_discovery_names_every_url_tried_and_why() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}/tenant", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = vec![0; 4096];
                let read = stream.read(&mut request).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&request[..read]).into_owned();
                let (status, body) =
                    if head.starts_with("GET /tenant/.well-known/openid-configuration ") {
                        ("200 OK", "<html>a login page</html>")
                    } else {
                        ("404 Not Found", "not here")
                    };
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    let err = JwtVerifier::discover(OAuthConfig::new(&issuer, RESOURCE))
        .await
        .unwrap_err();
    let text = err.to_string();
    let origin = issuer.trim_end_matches("/tenant");
    let rfc8414 =
        format!("{origin}/.well-known/oauth-authorization-server/tenant: HTTP status 404");
    let openid = format!("{issuer}/.well-known/openid-configuration: not the expected JSON");
    assert!(text.contains(&rfc8414), "{text}");
    assert!(text.contains(&openid), "{text}");
    assert!(
        text.find(&rfc8414) < text.find(&openid),
        "in the order tried: {text}"
    );
}
