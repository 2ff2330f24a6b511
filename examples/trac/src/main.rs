//! `trac-mcp`: for now a connectivity check of the configured Trac (the MCP
//! server comes with the `mcp-tools` core). Reads `TRAC_URL`, `TRAC_USER`,
//! `TRAC_PASSWORD`, `TRAC_TIMEOUT_SECS`; logs to stderr; exit code 0 when
//! Trac answers, 1 otherwise.

use std::process::ExitCode;

use trac_mcp::client::TracClient;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let client = match TracClient::from_env() {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("{e}");
            return ExitCode::FAILURE;
        }
    };
    match client.ping().await {
        Ok(info) => {
            tracing::info!(
                endpoint = %info.endpoint,
                user = info.user.as_deref().unwrap_or("anonymous"),
                api = %info.api_version,
                server_time = ?info.server_time,
                "Trac answers"
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!(kind = ?e.kind(), "{e}");
            ExitCode::FAILURE
        }
    }
}
