//! How Trac failures reach the client: [`TracError`] → [`ToolError`].
//!
//! | Trac failure | tool error kind |
//! |---|---|
//! | fault 404, "does not exist" | `not_found` |
//! | fault 403, HTTP 403 | `permission_denied` |
//! | HTTP 401 (credentials rejected) | `permission_denied`, action: check the credentials |
//! | stale `_ts` ("modified since you started editing") | `conflict` |
//! | "already exists" | `conflict`, action: pick another name or update |
//! | other Trac faults with code 1 (Trac refused the values) | `validation_error` with Trac's message |
//! | connection refused, time-outs, broken connections | `upstream_error` naming the URL |
//! | other faults, bad HTTP statuses, malformed answers | `upstream_error` with the details |
//! | arguments the client refuses before sending | `validation_error` |
//!
//! The plain `From` conversion leaves the action line of `not_found`,
//! `permission_denied`, `conflict` and other upstream errors to the tool's
//! category (`ErrorKind::default_action`, e.g. "Check the ticket identifier
//! ..."). [`Domain::error`] replaces it where a domain knows a better next step
//! (which tool finds a ticket number, a page name, a milestone).

use mcp_toolbelt::ToolError;

use crate::client::{ErrorKind, TracError};

impl From<TracError> for ToolError {
    fn from(err: TracError) -> ToolError {
        let message = err.trac_message();
        match err.kind() {
            ErrorKind::NotFound => ToolError::not_found(message),
            ErrorKind::PermissionDenied => {
                ToolError::permission_denied(format!("Trac refused: {message}"))
            }
            ErrorKind::Conflict => ToolError::conflict(message),
            ErrorKind::AlreadyExists => ToolError::conflict(message).with_action(
                "Something with this name exists already: choose another name, or change the existing one with the matching update tool.",
            ),
            ErrorKind::InvalidInput => ToolError::validation(format!("Trac rejected the request: {message}"))
                .with_action("Correct what Trac complains about and call again (for ticket fields, ticket_fields lists the allowed values)."),
            ErrorKind::AuthenticationFailed => ToolError::permission_denied(message).with_action(
                "Trac rejected the user name or password this server logs in with; fix --user/--password (TRAC_USER/TRAC_PASSWORD) and restart the server.",
            ),
            ErrorKind::Unavailable => {
                let action = match err.url() {
                    Some(url) => format!(
                        "Trac at {url} did not answer; check that tracd is running and reachable there, then retry."
                    ),
                    None => "Trac did not answer; check that it is running, then retry.".to_string(),
                };
                ToolError::upstream(message).with_action(action)
            }
            ErrorKind::Upstream => ToolError::upstream(message),
            ErrorKind::Usage => match err {
                TracError::Config(_) => ToolError::internal(message).with_action(
                    "The server's Trac settings are unusable; fix --url/--user/--password (TRAC_URL/TRAC_USER/TRAC_PASSWORD) and restart it.",
                ),
                _ => ToolError::validation(message),
            },
        }
    }
}

/// The part of Trac a tool works on; decides the better action lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// Tickets (`ticket_*` tools).
    Ticket,
    /// Wiki pages (`wiki_*` tools).
    Wiki,
    /// Milestones (`milestone_*` tools).
    Milestone,
}

impl Domain {
    /// Converts `err` like the `From` impl, with this domain's action line for
    /// not-found, already-exists and conflict errors.
    pub fn error(self, err: TracError) -> ToolError {
        let kind = err.kind();
        let error = ToolError::from(err);
        let action = match (self, kind) {
            (Domain::Ticket, ErrorKind::NotFound) => {
                "Check the ticket number; ticket_search lists existing tickets (e.g. query \"status!=closed\")."
            }
            (Domain::Ticket, ErrorKind::Conflict) => {
                "The ticket changed since you read it: call ticket_get for its current values and ts, re-apply your change, and call again with that ts."
            }
            (Domain::Wiki, ErrorKind::NotFound) => {
                "Check the page name (names are case-sensitive, e.g. WikiStart); wiki_search or wiki_recent_changes find existing pages, wiki_create makes a new one."
            }
            (Domain::Wiki, ErrorKind::AlreadyExists) => {
                "The page exists already: change it with wiki_update, or choose another name."
            }
            (Domain::Milestone, ErrorKind::NotFound) => {
                "Check the milestone name (case-sensitive); milestone_list shows the existing milestones."
            }
            (Domain::Milestone, ErrorKind::AlreadyExists) => {
                "A milestone with this name exists already: change it with milestone_update, or choose another name."
            }
            _ => return error,
        };
        error.with_action(action)
    }
}

/// `Domain::Ticket.error`, for `map_err`.
pub fn ticket_error(err: TracError) -> ToolError {
    Domain::Ticket.error(err)
}

/// `Domain::Wiki.error`, for `map_err`.
pub fn wiki_error(err: TracError) -> ToolError {
    Domain::Wiki.error(err)
}

/// `Domain::Milestone.error`, for `map_err`.
pub fn milestone_error(err: TracError) -> ToolError {
    Domain::Milestone.error(err)
}

/// A page or milestone name argument that is empty or padded with spaces.
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), ToolError> {
    if name.trim().is_empty() {
        return Err(ToolError::validation(format!("{what} must not be empty")));
    }
    if name.trim() != name {
        return Err(ToolError::validation(format!(
            "{what} {name:?} has leading or trailing spaces"
        ))
        .with_action(format!("Pass the {what} without surrounding spaces.")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_toolbelt::ErrorKind as Kind;
    use std::time::Duration;

    fn tool_kind(err: &TracError) -> Kind {
        ToolError::from(err.clone()).kind()
    }

    fn fault(code: i32, message: &str) -> TracError {
        TracError::Fault {
            method: "ticket.get".into(),
            code,
            message: message.into(),
        }
    }

    #[test]
    fn faults_map_to_tool_kinds() {
        assert_eq!(
            tool_kind(&fault(404, "Ticket 9 does not exist.")),
            Kind::NotFound
        );
        assert_eq!(
            tool_kind(&fault(403, "TICKET_ADMIN privileges are required")),
            Kind::PermissionDenied
        );
        let stale = fault(
            1,
            "'Sorry, can not save your changes. This ticket has been modified by someone else since you started' while executing 'ticket.update()'",
        );
        assert_eq!(tool_kind(&stale), Kind::Conflict);
        let refused = ToolError::from(fault(
            1,
            "'Tickets must contain a summary.' while executing 'ticket.create()'",
        ));
        assert_eq!(refused.kind(), Kind::Validation);
        assert_eq!(
            refused.message(),
            "Trac rejected the request: Tickets must contain a summary."
        );
        assert_eq!(tool_kind(&fault(-32601, "no such method")), Kind::Upstream);
    }

    #[test]
    fn unreachable_trac_is_upstream_naming_the_url() {
        let err = ToolError::from(TracError::Connect {
            url: "http://127.0.0.1:1/rpc".into(),
            reason: "Connection refused (os error 111)".into(),
        });
        assert_eq!(err.kind(), Kind::Upstream);
        assert!(err.message().contains("http://127.0.0.1:1/rpc"), "{err:?}");
        assert!(err.action().unwrap().contains("http://127.0.0.1:1/rpc"));
        let timeout = ToolError::from(TracError::Timeout {
            url: "http://h/rpc".into(),
            timeout: Duration::from_secs(2),
        });
        assert_eq!(timeout.kind(), Kind::Upstream);
        assert!(timeout.message().contains("http://h/rpc"));
    }

    #[test]
    fn domains_give_their_own_actions_and_keep_the_rest() {
        let missing = Domain::Wiki.error(fault(404, "Wiki page \"X\" does not exist"));
        assert_eq!(missing.kind(), Kind::NotFound);
        assert!(missing.action().unwrap().contains("wiki_search"));
        let ticket = ticket_error(fault(404, "Ticket 9 does not exist."));
        assert!(ticket.action().unwrap().contains("ticket_search"));
        // permission errors keep the category default (no explicit action)
        let denied = milestone_error(fault(403, "TICKET_ADMIN privileges are required"));
        assert_eq!(denied.action(), None);
        assert!(
            denied
                .render(Some("milestone"))
                .contains("Action: The caller may not do this milestone operation")
        );
        let exists = milestone_error(fault(
            1,
            "'Milestone m1 already exists.' while executing 'ticket.milestone.create()'",
        ));
        assert_eq!(exists.kind(), Kind::Conflict);
        assert!(exists.action().unwrap().contains("milestone_update"));
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("page name", "WikiStart").is_ok());
        assert_eq!(
            check_name("page name", " ").unwrap_err().kind(),
            Kind::Validation
        );
        assert!(check_name("page name", "X ").is_err());
    }
}
