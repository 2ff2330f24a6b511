//! The seven tools of seed 001 as `#[mcp_tool]` functions over the shared [`Sandbox`].
//!
//! Each one checks nothing itself: it hands its validated arguments to the tool logic of
//! this module's parent, which enforces the sandbox, and turns a [`SandboxError`] into a tool
//! error with its kind and action line (the `From<SandboxError> for ToolError` impl). Register the sandbox
//! with `ToolRegistryBuilder::state(sandbox)`. Names, categories, tags and permissions match
//! the [`TOOLS`](super::TOOLS) catalog (a unit test holds them together).
//!
//! [`SandboxError`]: crate::sandbox::SandboxError

use mcp_toolbelt::{Json, State, ToolError, mcp_tool};

use super::{
    CommandOutput, ContentEncoding, DirectoryListing, ReadFileOutput, SearchResult, SystemInfo,
    WriteFileOutput,
};
use crate::sandbox::Sandbox;

/// Permission needed to read, list and search files.
pub const FILE_READ: &str = "FILE_READ";
/// Permission needed to write files.
pub const FILE_WRITE: &str = "FILE_WRITE";
/// Permission needed to run commands.
pub const EXEC: &str = "EXEC";
/// Permission needed to read the system information.
pub const SYSTEM_INFO: &str = "SYSTEM_INFO";

/// Echo a message back, prefixed with "Echo: ". Useful to check the connection.
#[mcp_tool(
    name = "echo",
    category = "utility",
    tags = ["utility", "test"],
    read_only,
    idempotent
)]
pub async fn echo(#[arg(desc = "Message to echo", default = "")] message: String) -> String {
    super::echo(&message).await.echo
}

/// Read a file inside the sandbox.
///
/// The content is the result's text block (UTF-8; pass encoding "base64" for binary files),
/// the structured result says what was read. Paths are relative to
/// the sandbox's base directory unless absolute; files over the size limit and paths outside
/// the sandbox are refused.
#[mcp_tool(
    name = "read_file",
    cli_name = "read",
    category = "file",
    tags = ["file", "read"],
    permissions = [FILE_READ],
    read_only,
    idempotent
)]
pub async fn read_file(
    sandbox: State<Sandbox>,
    /// Path of the file to read (relative to the sandbox base directory, or absolute)
    path: String,
    #[arg(
        desc = "How to return the content: \"utf-8\" for text, \"base64\" for binary data",
        default = ContentEncoding::Utf8
    )]
    encoding: ContentEncoding,
) -> Result<ReadFileOutput, ToolError> {
    Ok(super::read_file(&sandbox, &path, encoding).await?)
}

/// Write (create or replace) a file inside the sandbox.
///
/// Missing parent directories are created only with create_dirs. Returns the resolved path
/// and the number of bytes written.
#[mcp_tool(
    name = "write_file",
    cli_name = "write",
    category = "file",
    tags = ["file", "write"],
    permissions = [FILE_WRITE],
    destructive,
    idempotent
)]
pub async fn write_file(
    sandbox: State<Sandbox>,
    /// Path of the file to write (relative to the sandbox base directory, or absolute)
    path: String,
    /// The complete new content of the file
    content: String,
    #[arg(
        desc = "How content is given: \"utf-8\" text, or \"base64\" for binary data",
        default = ContentEncoding::Utf8
    )]
    encoding: ContentEncoding,
    #[arg(
        desc = "Create missing parent directories (inside the sandbox)",
        default = false
    )]
    create_dirs: bool,
) -> Result<Json<WriteFileOutput>, ToolError> {
    Ok(Json(
        super::write_file(&sandbox, &path, &content, encoding, create_dirs).await?,
    ))
}

/// List a directory inside the sandbox, optionally recursively.
///
/// Each entry comes with its name, relative path, type (file, directory, symlink, other) and
/// size. Symlinks are listed, never followed; entries in denied paths are left out and
/// counted in `notice`.
#[mcp_tool(
    name = "list_directory",
    cli_name = "list",
    category = "file",
    tags = ["file", "read", "directory"],
    permissions = [FILE_READ],
    read_only,
    idempotent
)]
pub async fn list_directory(
    sandbox: State<Sandbox>,
    #[arg(
        desc = "Directory to list (default: the sandbox base directory)",
        default = "."
    )]
    path: String,
    #[arg(desc = "Also list everything below subdirectories", default = false)] recursive: bool,
    #[arg(
        desc = "Most entries to return (default and upper bound: the sandbox's max_list_entries)",
        minimum = 1
    )]
    limit: Option<usize>,
) -> Result<Json<DirectoryListing>, ToolError> {
    Ok(Json(
        super::list_directory(&sandbox, &path, recursive, limit).await?,
    ))
}

/// Find files and directories inside the sandbox by glob pattern.
///
/// A pattern without "/" matches entry names at any depth ("*.rs"); a pattern with "/"
/// matches paths relative to the searched directory ("src/**/*.toml").
#[mcp_tool(
    name = "search_files",
    cli_name = "search",
    category = "file",
    tags = ["file", "read", "search", "glob"],
    permissions = [FILE_READ],
    read_only,
    idempotent
)]
pub async fn search_files(
    sandbox: State<Sandbox>,
    #[arg(
        desc = "Glob: *, ?, [abc], and ** as a whole path component",
        default = "*"
    )]
    pattern: String,
    #[arg(
        desc = "Directory to search in (default: the sandbox base directory)",
        default = "."
    )]
    path: String,
    #[arg(
        desc = "Most matches to return (default and upper bound: the sandbox's max_list_entries)",
        minimum = 1
    )]
    limit: Option<usize>,
) -> Result<Json<SearchResult>, ToolError> {
    Ok(Json(
        super::search_files(&sandbox, &path, &pattern, limit).await?,
    ))
}

/// Run an allowed program with arguments, without a shell.
///
/// Each argument is passed as-is, so pipes, redirections, `;` and `$(...)` do nothing. Only
/// programs in the sandbox's allowed_commands run, confined by the kernel, with a cleared
/// environment, a timeout and an output cap. The first content block is stdout, the second
/// stderr (encodings in the structured result). A non-zero exit is a result, not an error.
#[mcp_tool(
    name = "execute_command",
    cli_name = "exec",
    category = "system",
    tags = ["system", "exec"],
    permissions = [EXEC],
    destructive,
    open_world
)]
pub async fn execute_command(
    sandbox: State<Sandbox>,
    /// Program to run: a name looked up in the sandbox's search path (such as "ls"), or a path
    command: String,
    #[arg(desc = "Arguments, one per item, passed without any shell interpretation", default = Vec::new())]
    args: Vec<String>,
    /// Working directory inside the sandbox (default: the sandbox base directory)
    cwd: Option<String>,
    #[arg(
        desc = "Timeout in seconds; can only shorten the configured one",
        maximum = 86400
    )]
    timeout_secs: Option<f64>,
) -> Result<CommandOutput, ToolError> {
    Ok(super::execute_command(&sandbox, &command, &args, cwd.as_deref(), timeout_secs).await?)
}

/// Report the operating system, kernel, CPU, memory and uptime of the server's machine.
///
/// Also gives the architecture and host name (fields the platform cannot provide are null),
/// and what the kernel enforces on commands (Landlock ABI and rules, process containment).
#[mcp_tool(
    name = "system_info",
    cli_name = "info",
    category = "system",
    tags = ["system", "info"],
    permissions = [SYSTEM_INFO],
    read_only,
    idempotent
)]
pub async fn system_info(sandbox: State<Sandbox>) -> Json<SystemInfo> {
    Json(super::system_info(&sandbox).await)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use mcp_toolbelt::ToolRegistry;

    use super::super::TOOLS;
    use crate::sandbox::Sandbox;

    /// The macro attributes above and the static catalog describe the same seven tools.
    #[test]
    fn registered_tools_match_the_catalog() {
        let registry = ToolRegistry::builder()
            .state(Sandbox::with_defaults().expect("default sandbox"))
            .build()
            .expect("registry");
        let definitions = registry.list_tools();
        let names: BTreeSet<&str> = definitions.iter().map(|d| d.name()).collect();
        let expected: BTreeSet<&str> = TOOLS.iter().map(|t| t.name).collect();
        assert_eq!(names, expected);
        for spec in TOOLS {
            let def = registry.get(spec.name).expect("registered");
            assert_eq!(def.category(), Some(spec.category), "{}", spec.name);
            assert_eq!(
                def.tags().collect::<Vec<_>>(),
                spec.tags.to_vec(),
                "{}",
                spec.name
            );
            let permissions: Vec<&str> = def.permissions().names().collect();
            assert_eq!(
                permissions,
                spec.permission.into_iter().collect::<Vec<_>>(),
                "{}",
                spec.name
            );
            assert_eq!(
                def.annotations().read_only_hint.unwrap_or(false),
                spec.read_only,
                "{}",
                spec.name
            );
        }
    }
}
