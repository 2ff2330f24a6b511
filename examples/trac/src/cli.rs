//! The `trac-mcp` command line, generated from the tools by `mcp_toolbelt::cli`.
//!
//! `trac-mcp --url URL [--user U --password P] serve` serves the 27 tools over
//! MCP (stdio; `--http ADDR` or `--tcp ADDR` for the network transports);
//! `trac-mcp ticket search --query "status=new"`, `trac-mcp wiki get --name WikiStart`,
//! ... call one tool and print its result. `--permissions-file F` keeps only the
//! tools the file allows, for serving and for the commands alike.

use mcp_toolbelt::ToolRegistry;
use mcp_toolbelt::cli::App;

use crate::client::{
    ENV_PASSWORD, ENV_TIMEOUT, ENV_URL, ENV_USER, TracClient, TracConfig, TracError,
};

/// Each setting's flag and environment variable.
const SETTINGS: [(&str, &str); 4] = [
    ("--url", ENV_URL),
    ("--user", ENV_USER),
    ("--password", ENV_PASSWORD),
    ("--timeout-secs", ENV_TIMEOUT),
];

/// A configuration message naming the flags as well as the variables.
fn with_flag_names(message: &str) -> String {
    SETTINGS
        .iter()
        .fold(message.to_string(), |text, (flag, var)| {
            text.replace(var, &format!("{flag} (or {var})"))
        })
}

/// Global flags of `trac-mcp`: where Trac is and how to log in.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TracArgs {
    /// Trac project URL, e.g. http://127.0.0.1:8000/myproject (required to call tools)
    #[arg(long, value_name = "URL", env = ENV_URL)]
    pub url: Option<String>,
    /// Trac user for HTTP basic auth (then the RPC endpoint is <url>/login/rpc); anonymous if unset
    #[arg(long, value_name = "USER", env = ENV_USER)]
    pub user: Option<String>,
    /// Password of --user
    #[arg(long, value_name = "PASSWORD", env = ENV_PASSWORD, hide_env_values = true)]
    pub password: Option<String>,
    /// Seconds allowed for one Trac round trip [default: 30]
    #[arg(long, value_name = "SECONDS", env = ENV_TIMEOUT)]
    pub timeout_secs: Option<String>,
}

impl TracArgs {
    /// The client configuration these flags give, checked exactly as the
    /// environment variables would be (`TracConfig::from_lookup`).
    pub fn config(&self) -> Result<TracConfig, TracError> {
        TracConfig::from_lookup(|name| match name {
            ENV_URL => self.url.clone(),
            ENV_USER => self.user.clone(),
            ENV_PASSWORD => self.password.clone(),
            ENV_TIMEOUT => self.timeout_secs.clone(),
            _ => None,
        })
    }
}

/// The command line of `trac-mcp`: every tool, with the Trac client built from
/// the global flags once the command line is parsed (only for commands that
/// call tools, so `--help` and `tools list` need no Trac).
pub fn app() -> App {
    mcp_toolbelt::cli_app!(ToolRegistry::builder()).setup(|args: TracArgs, builder| {
        let config = args.config().map_err(|e| match e {
            TracError::Config(message) => with_flag_names(&message),
            other => other.to_string(),
        })?;
        let client = TracClient::new(config).map_err(|e| e.to_string())?;
        tracing::debug!(endpoint = client.endpoint(), user = ?client.user(), "Trac client ready");
        Ok(builder.state(client))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_checked_like_the_environment() {
        let args = TracArgs {
            url: Some("http://127.0.0.1:1/proj".into()),
            user: Some("bob".into()),
            password: Some("pw".into()),
            timeout_secs: Some("2.5".into()),
        };
        let config = args.config().unwrap();
        assert_eq!(config.user.as_deref(), Some("bob"));
        assert_eq!(config.timeout.as_millis(), 2500);
        let missing = TracArgs::default().config().unwrap_err();
        assert!(missing.to_string().contains(ENV_URL), "{missing}");
        let half = TracArgs {
            url: Some("http://h".into()),
            user: Some("bob".into()),
            ..TracArgs::default()
        };
        let err = half.config().unwrap_err().to_string();
        assert!(
            with_flag_names(&err)
                .contains("--user (or TRAC_USER) is set but --password (or TRAC_PASSWORD) is not"),
            "{err}"
        );
    }
}
