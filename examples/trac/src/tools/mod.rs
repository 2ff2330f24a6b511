//! The 27 tools of seed 000 as `#[mcp_tool]` fns, one module per seed module.
//!
//! Every tool takes the shared [`TracClient`](crate::client::TracClient) as
//! `State<TracClient>`; register it with `ToolRegistryBuilder::state`. Reads
//! return `Json<T>` (structured content plus its JSON text); Trac failures
//! become tool errors through [`crate::errors`].
//!
//! | module | tools | permissions |
//! |---|---|---|
//! | [`system`] | ping, get_server_time | none |
//! | [`ticket_read`] | ticket_search, ticket_get, ticket_changelog, ticket_fields, ticket_actions | TICKET_VIEW |
//! | [`ticket_write`] | ticket_create, ticket_update, ticket_delete | TICKET_CREATE / TICKET_MODIFY / TICKET_ADMIN |
//! | [`ticket_batch`] | ticket_batch_create, ticket_batch_update, ticket_batch_delete | the single tool's + TICKET_BATCH_MODIFY |
//! | [`wiki_read`] | wiki_get, wiki_search, wiki_recent_changes | WIKI_VIEW |
//! | [`wiki_write`] | wiki_create, wiki_update, wiki_delete | WIKI_CREATE / WIKI_MODIFY / WIKI_DELETE |
//! | [`wiki_file`] | wiki_file_push, wiki_file_pull, wiki_file_detect_format | WIKI_CREATE+WIKI_MODIFY / WIKI_VIEW / none |
//! | [`milestone`] | milestone_list, milestone_get, milestone_create, milestone_update, milestone_delete | MILESTONE_VIEW / _CREATE / _MODIFY / _DELETE |

pub mod batch;
pub mod milestone;
pub mod system;
pub mod ticket_batch;
pub mod ticket_read;
pub mod ticket_write;
pub mod wiki_file;
pub mod wiki_read;
pub mod wiki_text;
pub mod wiki_write;

/// Most items one batch tool call takes (the schema's `maxItems`).
pub const MAX_BATCH_SIZE: usize = 50;

/// Default of the `max_results` arguments.
pub const DEFAULT_MAX_RESULTS: u32 = 10;

/// Upper bound of the `max_results` arguments.
pub const MAX_RESULTS_LIMIT: u32 = 100;

/// Largest local file the wiki file tools read (Trac's own page limit is
/// usually smaller: `[wiki] max_size`, 256 KiB by default).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The names of all 27 tools, in seed 000's order.
pub const ALL_TOOLS: [&str; 27] = [
    system::PING_TOOL,
    system::GET_SERVER_TIME_TOOL,
    ticket_read::TICKET_SEARCH_TOOL,
    ticket_read::TICKET_GET_TOOL,
    ticket_read::TICKET_CHANGELOG_TOOL,
    ticket_read::TICKET_FIELDS_TOOL,
    ticket_read::TICKET_ACTIONS_TOOL,
    ticket_write::TICKET_CREATE_TOOL,
    ticket_write::TICKET_UPDATE_TOOL,
    ticket_write::TICKET_DELETE_TOOL,
    ticket_batch::TICKET_BATCH_CREATE_TOOL,
    ticket_batch::TICKET_BATCH_UPDATE_TOOL,
    ticket_batch::TICKET_BATCH_DELETE_TOOL,
    wiki_read::WIKI_GET_TOOL,
    wiki_read::WIKI_SEARCH_TOOL,
    wiki_read::WIKI_RECENT_CHANGES_TOOL,
    wiki_write::WIKI_CREATE_TOOL,
    wiki_write::WIKI_UPDATE_TOOL,
    wiki_write::WIKI_DELETE_TOOL,
    wiki_file::WIKI_FILE_PUSH_TOOL,
    wiki_file::WIKI_FILE_PULL_TOOL,
    wiki_file::WIKI_FILE_DETECT_FORMAT_TOOL,
    milestone::MILESTONE_LIST_TOOL,
    milestone::MILESTONE_GET_TOOL,
    milestone::MILESTONE_CREATE_TOOL,
    milestone::MILESTONE_UPDATE_TOOL,
    milestone::MILESTONE_DELETE_TOOL,
];
