//! `memo-mcp`: command line over the memo store.
//!
//! `memo-mcp [--db PATH] memo <create|get|list|update|delete|search|context> ...`
//! prints JSON (or markdown for `context`) on stdout and errors as
//! `Error (kind): message` plus an `Action:` line on stderr, exiting with status 1.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use memo_mcp::{MemoError, MemoStore, StoreConfig};
use serde::Serialize;

/// Persistent memos with full-text search, stored in SQLite.
#[derive(Debug, Parser)]
#[command(name = "memo-mcp", version)]
struct Cli {
    /// Database file (default: $MEMO_MCP_DB, else ./memos.db).
    #[arg(long, global = true)]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

/// Top-level command groups.
#[derive(Debug, Subcommand)]
enum Command {
    /// Work with memos.
    #[command(subcommand)]
    Memo(MemoCommand),
}

/// Memo operations, one per tool.
#[derive(Debug, Subcommand)]
enum MemoCommand {
    /// Create a memo and print it.
    Create {
        /// One-line title.
        #[arg(long)]
        title: String,
        /// Markdown content.
        #[arg(long, default_value = "")]
        content: String,
    },
    /// Print one memo.
    Get {
        /// Memo id (ULID).
        id: String,
    },
    /// List memos, newest first.
    List {
        /// Page size.
        #[arg(long)]
        limit: Option<u32>,
        /// Memos to skip.
        #[arg(long)]
        offset: Option<u32>,
    },
    /// Change a memo's title and/or content.
    Update {
        /// Memo id (ULID).
        id: String,
        /// New title.
        #[arg(long)]
        title: Option<String>,
        /// New content.
        #[arg(long)]
        content: Option<String>,
    },
    /// Delete a memo and print what it held.
    Delete {
        /// Memo id (ULID).
        id: String,
    },
    /// Full-text search over titles and contents.
    Search {
        /// Words, "phrases", prefix*, OR, NOT.
        query: String,
        /// Most hits to return.
        #[arg(long)]
        limit: Option<u32>,
    },
    /// Print all memos as one markdown document.
    Context {
        /// Size bound in bytes.
        #[arg(long)]
        max_bytes: Option<u32>,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    let config = match cli.db {
        Some(path) => StoreConfig::new(path),
        None => StoreConfig::from_env(),
    };
    match run(config, cli.command).await {
        Ok(output) => {
            println!("{output}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("Error ({}): {err}\n\nAction: {}", err.kind(), err.action());
            ExitCode::FAILURE
        }
    }
}

/// Opens the store and runs one command, returning what to print.
async fn run(config: StoreConfig, command: Command) -> Result<String, MemoError> {
    let store = MemoStore::open(config).await?;
    let Command::Memo(command) = command;
    match command {
        MemoCommand::Create { title, content } => json(&store.create(&title, &content).await?),
        MemoCommand::Get { id } => json(&store.get(&id).await?),
        MemoCommand::List { limit, offset } => json(&store.list(limit, offset).await?),
        MemoCommand::Update { id, title, content } => json(
            &store
                .update(&id, title.as_deref(), content.as_deref())
                .await?,
        ),
        MemoCommand::Delete { id } => json(&store.delete(&id).await?),
        MemoCommand::Search { query, limit } => json(&store.search(&query, limit).await?),
        MemoCommand::Context { max_bytes } => Ok(store.get_all_context(max_bytes).await?.markdown),
    }
}

/// Pretty JSON of a result.
fn json(value: &impl Serialize) -> Result<String, MemoError> {
    serde_json::to_string_pretty(value).map_err(|e| MemoError::Storage {
        message: format!("could not serialize the result: {e}"),
        action: "Report this as a bug.".to_string(),
    })
}
