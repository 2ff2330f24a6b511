//! The `memo-mcp` command line, generated from the memo tools by `mcp_toolbelt::cli`.
//!
//! `memo-mcp [--db PATH] serve [--http ADDR]` serves the tools over MCP;
//! `memo-mcp memo create --title … --content …`, `memo list`, `memo get --id …`,
//! `memo update`, `memo delete`, `memo search --query …` and `memo context` call one tool
//! and print its result (JSON, or markdown for `context`) on stdout, or its error on stderr
//! with exit status 1.

use std::path::PathBuf;

use mcp_toolbelt::ToolRegistry;
use mcp_toolbelt::cli::App;

use crate::config::StoreConfig;
use crate::store::MemoStore;

/// Global flags of `memo-mcp`.
#[derive(Debug, clap::Args)]
pub struct MemoArgs {
    /// SQLite database file, created on first use [default: ./memos.db]
    #[arg(long, value_name = "PATH", env = crate::config::DB_PATH_ENV)]
    pub db: Option<PathBuf>,
}

impl MemoArgs {
    /// The store configuration these flags select: `--db` (or `$MEMO_MCP_DB`) when given
    /// and not empty, else `memos.db` in the working directory.
    pub fn store_config(&self) -> StoreConfig {
        match &self.db {
            Some(path) if !path.as_os_str().is_empty() => StoreConfig::new(path),
            _ => StoreConfig::default(),
        }
    }
}

/// The command line of `memo-mcp`: every memo tool, with the store opened from `--db` once
/// the command line is parsed (only for commands that call tools).
pub fn app() -> App {
    mcp_toolbelt::cli_app!(ToolRegistry::builder()).setup(|args: MemoArgs, builder| {
        let config = args.store_config();
        tracing::debug!(path = %config.path.display(), "opening the memo database");
        let store = MemoStore::open_blocking(config).map_err(|err| {
            format!(
                "cannot open the memo database: {err}\n\nAction: {}",
                err.action()
            )
        })?;
        Ok(builder.state(store))
    })
}
