//! Metadata of the seven tools (name, category, tags, permission), as in seed 001.

/// Static description of one tool, for the step that registers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    /// Tool name as exposed to clients.
    pub name: &'static str,
    /// Seed 001 category: `utility`, `file` or `system`.
    pub category: &'static str,
    /// Free-form tags.
    pub tags: &'static [&'static str],
    /// Permission a caller needs, or `None` for tools anyone may call.
    pub permission: Option<&'static str>,
    /// Whether the tool leaves the environment unchanged.
    pub read_only: bool,
    /// One-line description.
    pub description: &'static str,
}

/// The seven tools in seed 001's order.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "echo",
        category: "utility",
        tags: &["utility", "test"],
        permission: None,
        read_only: true,
        description: "Echo a message back.",
    },
    ToolSpec {
        name: "read_file",
        category: "file",
        tags: &["file", "read"],
        permission: Some("FILE_READ"),
        read_only: true,
        description: "Read a file inside the sandbox (size-capped).",
    },
    ToolSpec {
        name: "write_file",
        category: "file",
        tags: &["file", "write"],
        permission: Some("FILE_WRITE"),
        read_only: false,
        description: "Write a file inside the sandbox, optionally creating parent directories.",
    },
    ToolSpec {
        name: "list_directory",
        category: "file",
        tags: &["file", "read", "directory"],
        permission: Some("FILE_READ"),
        read_only: true,
        description: "List a directory inside the sandbox, optionally recursively, with types and sizes.",
    },
    ToolSpec {
        name: "search_files",
        category: "file",
        tags: &["file", "read", "search", "glob"],
        permission: Some("FILE_READ"),
        read_only: true,
        description: "Find files below a directory inside the sandbox by glob pattern.",
    },
    ToolSpec {
        name: "execute_command",
        category: "system",
        tags: &["system", "exec"],
        permission: Some("EXEC"),
        read_only: false,
        description: "Run an allowed program without a shell, with timeout and output cap.",
    },
    ToolSpec {
        name: "system_info",
        category: "system",
        tags: &["system", "info"],
        permission: Some("SYSTEM_INFO"),
        read_only: true,
        description: "Report OS, architecture, hostname, CPU count and memory.",
    },
];
