//! Changing tickets one at a time: create (TICKET_CREATE), update
//! (TICKET_MODIFY), delete (TICKET_ADMIN). The argument types are shared with
//! the batch tools.

use std::collections::BTreeMap;

use mcp_toolbelt::{Json, State, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::client::{NewTicket, Ticket, TicketId, TicketUpdate, TracClient};
use crate::errors::ticket_error;

/// A ticket to create.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TicketInput {
    /// One-line summary (required)
    #[schemars(length(min = 1, max = 500))]
    pub summary: String,
    /// Full description in TracWiki markup
    #[serde(default)]
    pub description: String,
    /// Ticket type, e.g. defect, enhancement, task (ticket_fields lists the valid ones)
    #[serde(rename = "type")]
    pub ticket_type: Option<String>,
    /// Priority, e.g. blocker, critical, major, minor, trivial
    pub priority: Option<String>,
    /// Component (must exist in this Trac)
    pub component: Option<String>,
    /// Milestone to schedule the ticket for (must exist)
    pub milestone: Option<String>,
    /// Space- or comma-separated keywords
    pub keywords: Option<String>,
    /// User to assign the ticket to
    pub owner: Option<String>,
    /// Comma-separated users to notify
    pub cc: Option<String>,
    /// Any other fields, including custom fields, as name -> value
    pub fields: Option<BTreeMap<String, String>>,
}

impl TicketInput {
    /// The client's ticket for this input; refuses a blank summary.
    pub fn to_new_ticket(&self) -> Result<NewTicket, ToolError> {
        if self.summary.trim().is_empty() {
            return Err(ToolError::validation("summary must not be blank")
                .with_action("Give the ticket a one-line summary."));
        }
        let mut ticket = NewTicket::new(self.summary.trim(), &self.description);
        if let Some(fields) = &self.fields {
            ticket.fields.extend(fields.clone());
        }
        for (name, value) in [
            ("type", &self.ticket_type),
            ("priority", &self.priority),
            ("component", &self.component),
            ("milestone", &self.milestone),
            ("keywords", &self.keywords),
            ("owner", &self.owner),
            ("cc", &self.cc),
        ] {
            if let Some(value) = value {
                ticket.fields.insert(name.to_string(), value.clone());
            }
        }
        Ok(ticket)
    }
}

/// A created ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TicketCreated {
    /// The new ticket's number.
    pub id: TicketId,
    /// Its summary.
    pub summary: String,
}

/// Create a ticket. Only the summary is required; the description is TracWiki markup.
/// Returns the new ticket number (read it back with ticket_get). Field values must be
/// valid for this Trac: ticket_fields lists types, priorities, components and milestones.
#[mcp_tool(name = "ticket_create", permissions = ["TICKET_CREATE"], destructive = false)]
pub async fn ticket_create(
    trac: State<TracClient>,
    #[args] ticket: TicketInput,
) -> Result<Json<TicketCreated>, ToolError> {
    let new = ticket.to_new_ticket()?;
    let id = trac.create_ticket(&new).await.map_err(ticket_error)?;
    Ok(Json(TicketCreated {
        id,
        summary: new.summary,
    }))
}

/// A change to one ticket.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TicketChange {
    /// Ticket number
    #[schemars(range(min = 1))]
    pub id: TicketId,
    /// Comment to add (TracWiki markup); may be empty when fields or the action change
    #[serde(default)]
    pub comment: String,
    /// Workflow action: leave (default: keep the status), accept, resolve, reassign,
    /// reopen, ... (ticket_actions lists the ones available now and their inputs)
    #[serde(default = "leave")]
    pub action: String,
    /// The ts of the ticket as last read (ticket_get); when given, Trac refuses the change
    /// with a conflict if someone changed the ticket since
    pub ts: Option<String>,
    /// Fields to set, as name -> value (summary, description, priority, milestone,
    /// keywords, owner, custom fields, and the inputs of the action such as
    /// action_resolve_resolve_resolution)
    pub fields: Option<BTreeMap<String, String>>,
}

fn leave() -> String {
    "leave".to_string()
}

impl TicketChange {
    /// The client's update for this change; refuses a change that changes nothing.
    pub fn to_update(&self) -> Result<TicketUpdate, ToolError> {
        let action = self.action.trim();
        let fields = self.fields.clone().unwrap_or_default();
        if action.is_empty() {
            return Err(
                ToolError::validation("action must not be blank").with_action(
                    "Use \"leave\" to keep the workflow status, or an action from ticket_actions.",
                ),
            );
        }
        if action == "leave" && fields.is_empty() && self.comment.trim().is_empty() {
            return Err(ToolError::validation(format!(
                "nothing to change on ticket #{}: no comment, no fields, action \"leave\"",
                self.id
            ))
            .with_action("Pass a comment, fields to set, or a workflow action."));
        }
        let mut update = TicketUpdate::new(&self.comment).action(action);
        if let Some(ts) = &self.ts {
            update = update.based_on(ts);
        }
        update.fields = fields;
        Ok(update)
    }
}

/// Change a ticket: add a comment, set fields, and/or apply a workflow action (resolve,
/// accept, reassign, ...; see ticket_actions). Pass `ts` from ticket_get to make Trac
/// refuse the change if the ticket was modified since (a conflict error). Returns the
/// ticket as it is after the change.
#[mcp_tool(name = "ticket_update", permissions = ["TICKET_MODIFY"])]
pub async fn ticket_update(
    trac: State<TracClient>,
    #[args] change: TicketChange,
) -> Result<Json<Ticket>, ToolError> {
    let update = change.to_update()?;
    Ok(Json(
        trac.update_ticket(change.id, &update)
            .await
            .map_err(ticket_error)?,
    ))
}

/// A deleted ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TicketDeleted {
    /// The number of the ticket that no longer exists.
    pub id: TicketId,
}

/// Delete a ticket permanently, with its history and attachments. This cannot be undone;
/// to close a ticket instead, use ticket_update with action "resolve". Needs TICKET_ADMIN.
#[mcp_tool(
    name = "ticket_delete",
    permissions = ["TICKET_ADMIN"],
    destructive,
    idempotent
)]
pub async fn ticket_delete(
    trac: State<TracClient>,
    /// Number of the ticket to delete
    #[arg(minimum = 1)]
    id: TicketId,
) -> Result<Json<TicketDeleted>, ToolError> {
    trac.delete_ticket(id).await.map_err(ticket_error)?;
    Ok(Json(TicketDeleted { id }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(comment: &str, action: &str) -> TicketChange {
        TicketChange {
            id: 3,
            comment: comment.into(),
            action: action.into(),
            ts: None,
            fields: None,
        }
    }

    #[test]
    fn a_change_must_change_something() {
        assert!(change("", "leave").to_update().is_err());
        assert!(change("  ", "leave").to_update().is_err());
        assert!(change("", " ").to_update().is_err());
        assert_eq!(
            change("noted", "leave").to_update().unwrap().comment,
            "noted"
        );
        assert_eq!(change("", "accept").to_update().unwrap().action, "accept");
        let mut c = change("", "leave");
        c.fields = Some([("priority".to_string(), "minor".to_string())].into());
        c.ts = Some("123".into());
        let u = c.to_update().unwrap();
        assert_eq!((u.ts.as_deref(), u.fields.len()), (Some("123"), 1));
    }

    #[test]
    fn typed_fields_win_over_the_fields_map() {
        let input = TicketInput {
            summary: " Crash ".into(),
            description: String::new(),
            ticket_type: Some("defect".into()),
            priority: None,
            component: None,
            milestone: None,
            keywords: None,
            owner: None,
            cc: None,
            fields: Some([("type".to_string(), "task".to_string())].into()),
        };
        let t = input.to_new_ticket().unwrap();
        assert_eq!(t.summary, "Crash");
        assert_eq!(t.fields["type"], "defect");
    }
}
