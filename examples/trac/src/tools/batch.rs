//! The result of a batch tool: one entry per requested item, in order.
//!
//! Items are checked locally first; the valid ones go to Trac in one
//! `system.multicall` round trip; [`BatchReport::assemble`] puts the local
//! refusals and Trac's per-item answers back in request order, so every item
//! gets a result and none is dropped.

use mcp_toolbelt::ToolError;
use schemars::JsonSchema;
use serde::Serialize;

use crate::client::TracError;
use crate::errors::Domain;

/// What one batch call did, item by item.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BatchReport<T> {
    /// Number of items in the request.
    pub total: usize,
    /// Items that succeeded.
    pub succeeded: usize,
    /// Items that failed (each with its own error below).
    pub failed: usize,
    /// One entry per request item, in request order.
    pub items: Vec<BatchItem<T>>,
}

/// The outcome of one batch item.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BatchItem<T> {
    /// Position of the item in the request (0-based).
    pub index: usize,
    /// Whether this item succeeded.
    pub ok: bool,
    /// The item's result, when it succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<T>,
    /// Why the item failed, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ItemError>,
}

/// The error of one failed batch item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ItemError {
    /// Error kind: not_found, permission_denied, validation_error, conflict, upstream_error, ...
    pub kind: String,
    /// What went wrong (Trac's message where Trac refused).
    pub message: String,
    /// What to do about it.
    pub action: String,
}

impl ItemError {
    /// The item error for a tool error, with the action for `category`.
    pub fn from_tool_error(error: &ToolError, category: &str) -> ItemError {
        ItemError {
            kind: error.kind().as_str().to_string(),
            message: error.message().to_string(),
            action: error
                .action()
                .map(str::to_string)
                .unwrap_or_else(|| error.kind().default_action(Some(category))),
        }
    }
}

impl<T> BatchReport<T> {
    /// Merges the local checks of all items (`Err`: refused before sending)
    /// with Trac's answers for the items that were sent (in order, one per
    /// `Ok` check; the multicall client guarantees one answer per call, and
    /// a missing one would be reported as an internal error of its item).
    pub fn assemble(
        checks: Vec<Result<(), ToolError>>,
        sent: Vec<Result<T, TracError>>,
        domain: Domain,
        category: &str,
    ) -> BatchReport<T> {
        let mut answers = sent.into_iter();
        let items: Vec<BatchItem<T>> = checks
            .into_iter()
            .enumerate()
            .map(|(index, check)| {
                let outcome = match check {
                    Ok(()) => match answers.next() {
                        Some(answer) => answer.map_err(|e| domain.error(e)),
                        None => Err(ToolError::internal("Trac sent no answer for this item")),
                    },
                    Err(refused) => Err(refused),
                };
                match outcome {
                    Ok(result) => BatchItem {
                        index,
                        ok: true,
                        result: Some(result),
                        error: None,
                    },
                    Err(error) => BatchItem {
                        index,
                        ok: false,
                        result: None,
                        error: Some(ItemError::from_tool_error(&error, category)),
                    },
                }
            })
            .collect();
        let succeeded = items.iter().filter(|i| i.ok).count();
        BatchReport {
            total: items.len(),
            succeeded,
            failed: items.len() - succeeded,
            items,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_refusals_and_trac_answers_keep_request_order() {
        let checks = vec![
            Ok(()),
            Err(ToolError::validation("summary must not be empty")),
            Ok(()),
        ];
        let sent = vec![
            Ok(7),
            Err(TracError::Fault {
                method: "ticket.update".into(),
                code: 404,
                message: "Ticket 99 does not exist.".into(),
            }),
        ];
        let report = BatchReport::assemble(checks, sent, Domain::Ticket, "ticket");
        assert_eq!((report.total, report.succeeded, report.failed), (3, 1, 2));
        assert_eq!(report.items[0].result, Some(7));
        let refused = report.items[1].error.as_ref().unwrap();
        assert_eq!(refused.kind, "validation_error");
        assert!(refused.action.contains("input schema"), "{refused:?}");
        let missing = report.items[2].error.as_ref().unwrap();
        assert_eq!(missing.kind, "not_found");
        assert!(missing.action.contains("ticket_search"));
        assert_eq!(
            report.items.iter().map(|i| i.index).collect::<Vec<_>>(),
            [0, 1, 2]
        );
    }
}
