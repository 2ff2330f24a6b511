//! Reading tickets: search, get, changelog, field definitions, workflow actions
//! (all need TICKET_VIEW).

use chrono::{DateTime, Utc};
use mcp_toolbelt::envelope::Envelope;
use mcp_toolbelt::{Json, State, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::Serialize;

use super::{DEFAULT_MAX_RESULTS, MAX_RESULTS_LIMIT};
use crate::client::{
    ChangeLogEntry, ErrorKind, Ticket, TicketAction, TicketField, TicketId, TracClient,
};
use crate::errors::ticket_error;
use mcp_toolbelt::paging::Limited;

/// One ticket in a search result.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TicketSummary {
    /// Ticket number.
    pub id: TicketId,
    /// One-line summary.
    pub summary: String,
    /// Workflow status (new, assigned, accepted, reopened, closed).
    pub status: String,
    /// Owner ("" if nobody).
    pub owner: String,
    /// Ticket type (defect, enhancement, task, ...).
    #[serde(rename = "type")]
    pub ticket_type: String,
    /// Priority.
    pub priority: String,
    /// Milestone ("" if none).
    pub milestone: String,
    /// Component ("" if none).
    pub component: String,
    /// Resolution of a closed ticket ("" while open).
    pub resolution: String,
    /// Time of the last change.
    pub changed: DateTime<Utc>,
}

impl TicketSummary {
    /// The summary of a full ticket.
    pub fn of(ticket: &Ticket) -> TicketSummary {
        let field = |name| ticket.field(name).unwrap_or_default().to_string();
        TicketSummary {
            id: ticket.id,
            summary: field("summary"),
            status: field("status"),
            owner: field("owner"),
            ticket_type: field("type"),
            priority: field("priority"),
            milestone: field("milestone"),
            component: field("component"),
            resolution: field("resolution"),
            changed: ticket.changed,
        }
    }
}

/// The answer of `ticket_search`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TicketSearch {
    /// The Trac query that was run (with the `max=` this tool adds).
    pub query: String,
    /// Number of tickets returned.
    pub count: usize,
    /// True when more tickets match than were returned: raise max_results or narrow the query.
    pub truncated: bool,
    /// The matching tickets, in the query's order.
    pub tickets: Vec<TicketSummary>,
}

/// Rejects empty queries and `max=`/`page=` clauses (this tool sets them).
fn check_query(query: &str) -> Result<&str, ToolError> {
    let query = query.trim().trim_matches('&');
    if query.is_empty() {
        return Err(ToolError::validation("query must not be empty")
            .with_action("Pass a Trac query such as \"status!=closed\" (the default), \"owner=alice&status=new\" or \"milestone=1.0\"."));
    }
    for clause in query.split('&') {
        let key = clause.split(['=', '!', '~', '^', '$']).next().unwrap_or("");
        if matches!(key.trim(), "max" | "page") {
            return Err(ToolError::validation(format!(
                "the query sets {:?}; this tool pages by itself",
                key.trim()
            ))
            .with_action("Remove max=/page= from the query and set max_results instead."));
        }
    }
    Ok(query)
}

/// Search tickets with a Trac query and return a summary of each match (id, summary,
/// status, owner, type, priority, milestone, component, last change). The query language
/// is Trac's: clauses joined by `&`, e.g. `status!=closed` (default: all open tickets),
/// `status=new&owner=alice`, `milestone=1.0&type=defect`, `summary~=crash` (contains),
/// `keywords~=ui`, `order=priority`, `desc=1`. Use ticket_get for a ticket's full
/// description and fields.
#[mcp_tool(name = "ticket_search", permissions = ["TICKET_VIEW"], read_only, idempotent)]
pub async fn ticket_search(
    trac: State<TracClient>,
    /// Trac query string: clauses like field=value, field!=value, field~=text joined by &
    #[arg(default = "status!=closed")]
    query: String,
    /// Most tickets to return
    #[arg(default = DEFAULT_MAX_RESULTS, minimum = 1, maximum = MAX_RESULTS_LIMIT)]
    max_results: u32,
) -> Result<Envelope<TicketSearch>, ToolError> {
    let query = check_query(&query)?;
    let limit = max_results as usize;
    // one more than asked, to know whether the result was cut
    let full = format!("{query}&max={}", limit + 1);
    let found = Limited::new(
        trac.query_tickets(&full).await.map_err(ticket_error)?,
        limit,
    );
    let (truncated, ids) = (found.truncated, found.items);
    let mut tickets = Vec::with_capacity(ids.len());
    for (id, fetched) in ids
        .iter()
        .zip(trac.get_tickets(&ids).await.map_err(ticket_error)?)
    {
        match fetched {
            Ok(ticket) => tickets.push(TicketSummary::of(&ticket)),
            // deleted between the query and the fetch: it no longer matches
            Err(e) if e.kind() == ErrorKind::NotFound => {
                tracing::debug!(id, "ticket vanished during search")
            }
            Err(e) => return Err(ticket_error(e)),
        }
    }
    let summary = format!(
        "{} ticket{} for {query}{}",
        tickets.len(),
        if tickets.len() == 1 { "" } else { "s" },
        if truncated { " (more match)" } else { "" }
    );
    let read = tickets.first().map(|t| {
        format!(
            "read a ticket's description and fields: ticket_get id={}",
            t.id
        )
    });
    let more = truncated.then(|| {
        if limit < MAX_RESULTS_LIMIT as usize {
            format!(
                "more match: narrow the query, or raise max_results (at most {MAX_RESULTS_LIMIT})"
            )
        } else {
            "more match: narrow the query (add clauses such as status=new or owner=NAME)"
                .to_string()
        }
    });
    Ok(Envelope::ok(
        summary,
        TicketSearch {
            query: format!("{query}&max={limit}"),
            count: tickets.len(),
            truncated,
            tickets,
        },
    )
    .next_steps(read)
    .next_steps(more))
}

/// Get one ticket with all its fields: summary, description (TracWiki markup), status,
/// owner, reporter, type, priority, milestone, component, keywords, cc, resolution,
/// custom fields, creation and change times, and `ts`, the change token to pass to
/// ticket_update so it refuses to overwrite changes made since this read.
#[mcp_tool(name = "ticket_get", permissions = ["TICKET_VIEW"], read_only, idempotent)]
pub async fn ticket_get(
    trac: State<TracClient>,
    /// Ticket number, e.g. 42 for #42
    #[arg(minimum = 1)]
    id: TicketId,
) -> Result<Json<Ticket>, ToolError> {
    Ok(Json(trac.get_ticket(id).await.map_err(ticket_error)?))
}

/// The history of a ticket.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TicketChangelog {
    /// Ticket number.
    pub id: TicketId,
    /// Changes and comments, oldest first.
    pub entries: Vec<ChangeLogEntry>,
}

/// The history of a ticket, oldest first: every field change (field, old and new value)
/// and every comment (field "comment", the text in new_value), with author and time.
#[mcp_tool(name = "ticket_changelog", permissions = ["TICKET_VIEW"], read_only, idempotent)]
pub async fn ticket_changelog(
    trac: State<TracClient>,
    /// Ticket number
    #[arg(minimum = 1)]
    id: TicketId,
) -> Result<Json<TicketChangelog>, ToolError> {
    let entries = trac.ticket_changelog(id).await.map_err(ticket_error)?;
    Ok(Json(TicketChangelog { id, entries }))
}

/// The ticket field definitions of this Trac.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TicketFields {
    /// Every standard and custom field.
    pub fields: Vec<TicketField>,
}

/// The ticket fields this Trac has (standard and custom) with their type, default and,
/// for select fields, the allowed values (e.g. the valid priorities, types, components
/// and milestones). Check it before creating or updating tickets.
#[mcp_tool(name = "ticket_fields", permissions = ["TICKET_VIEW"], read_only, idempotent)]
pub async fn ticket_fields(trac: State<TracClient>) -> Result<Json<TicketFields>, ToolError> {
    let fields = trac.ticket_fields().await.map_err(ticket_error)?;
    Ok(Json(TicketFields { fields }))
}

/// The workflow actions available on a ticket.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TicketActions {
    /// Ticket number.
    pub id: TicketId,
    /// The actions this Trac user may apply now.
    pub actions: Vec<TicketAction>,
}

/// The workflow actions this server's Trac user may apply to a ticket now (leave, accept,
/// resolve, reassign, reopen, ...), each with the inputs it takes: pass the action's name
/// as `action` to ticket_update and each input's name in `fields` (e.g. resolve needs
/// `action_resolve_resolve_resolution` = fixed).
#[mcp_tool(name = "ticket_actions", permissions = ["TICKET_VIEW"], read_only, idempotent)]
pub async fn ticket_actions(
    trac: State<TracClient>,
    /// Ticket number
    #[arg(minimum = 1)]
    id: TicketId,
) -> Result<Json<TicketActions>, ToolError> {
    let actions = trac.ticket_actions(id).await.map_err(ticket_error)?;
    Ok(Json(TicketActions { id, actions }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_checked() {
        assert_eq!(check_query(" status=new& ").unwrap(), "status=new");
        assert!(check_query("").is_err());
        assert!(check_query("status=new&max=5").is_err());
        assert!(check_query("page=2").is_err());
        // a field merely containing "max" is fine
        assert!(check_query("summary~=max").is_ok());
    }
}
