//! Batch ticket tools: up to [`MAX_BATCH_SIZE`] tickets created, updated or
//! deleted in one `system.multicall` round trip, with a result per item. They
//! need the single tool's permission plus TICKET_BATCH_MODIFY.

use mcp_toolbelt::{Json, State, ToolError, mcp_tool};

use super::MAX_BATCH_SIZE;
use super::batch::BatchReport;
use super::ticket_read::TicketSummary;
use super::ticket_write::{TicketChange, TicketCreated, TicketDeleted, TicketInput};
use crate::client::{TicketId, TracClient};
use crate::errors::{Domain, ticket_error};

/// Splits `items` into local checks and the prepared values of those that passed.
fn prepare<I, P>(
    items: &[I],
    check: impl Fn(&I) -> Result<P, ToolError>,
) -> (Vec<Result<(), ToolError>>, Vec<P>) {
    let mut checks = Vec::with_capacity(items.len());
    let mut ready = Vec::new();
    for item in items {
        match check(item) {
            Ok(prepared) => {
                ready.push(prepared);
                checks.push(Ok(()));
            }
            Err(refused) => checks.push(Err(refused)),
        }
    }
    (checks, ready)
}

/// Create several tickets in one round trip (each item takes the arguments of
/// ticket_create). Every item gets its own result, in request order: the new ticket
/// number, or the error that item met (the others are still created). Check `failed`.
#[mcp_tool(
    name = "ticket_batch_create",
    permissions = ["TICKET_CREATE", "TICKET_BATCH_MODIFY"],
    destructive = false
)]
pub async fn ticket_batch_create(
    trac: State<TracClient>,
    /// The tickets to create
    #[arg(min_items = 1, max_items = MAX_BATCH_SIZE)]
    tickets: Vec<TicketInput>,
) -> Result<Json<BatchReport<TicketCreated>>, ToolError> {
    let (checks, ready) = prepare(&tickets, TicketInput::to_new_ticket);
    let answers = trac.create_tickets(&ready).await.map_err(ticket_error)?;
    let created = answers
        .into_iter()
        .zip(&ready)
        .map(|(answer, ticket)| {
            answer.map(|id| TicketCreated {
                id,
                summary: ticket.summary.clone(),
            })
        })
        .collect();
    Ok(Json(BatchReport::assemble(
        checks,
        created,
        Domain::Ticket,
        "ticket",
    )))
}

/// Change several tickets in one round trip (each item takes the arguments of
/// ticket_update: id, comment, action, ts, fields). Every item gets its own result, in
/// request order: the ticket after the change, or that item's error (a missing ticket,
/// a stale ts, a refused value...); the other items are still applied. Check `failed`.
#[mcp_tool(
    name = "ticket_batch_update",
    permissions = ["TICKET_MODIFY", "TICKET_BATCH_MODIFY"]
)]
pub async fn ticket_batch_update(
    trac: State<TracClient>,
    /// The changes, one per ticket
    #[arg(min_items = 1, max_items = MAX_BATCH_SIZE)]
    updates: Vec<TicketChange>,
) -> Result<Json<BatchReport<TicketSummary>>, ToolError> {
    let (checks, ready) = prepare(&updates, |c| Ok((c.id, c.to_update()?)));
    let answers = trac.update_tickets(&ready).await.map_err(ticket_error)?;
    let updated = answers
        .into_iter()
        .map(|answer| answer.map(|ticket| TicketSummary::of(&ticket)))
        .collect();
    Ok(Json(BatchReport::assemble(
        checks,
        updated,
        Domain::Ticket,
        "ticket",
    )))
}

/// Delete several tickets permanently in one round trip. Every id gets its own result,
/// in request order (a missing ticket is a not_found item; the others are still
/// deleted). This cannot be undone. Needs TICKET_ADMIN.
#[mcp_tool(
    name = "ticket_batch_delete",
    permissions = ["TICKET_ADMIN", "TICKET_BATCH_MODIFY"],
    destructive,
    idempotent
)]
pub async fn ticket_batch_delete(
    trac: State<TracClient>,
    /// Numbers of the tickets to delete
    #[arg(min_items = 1, max_items = MAX_BATCH_SIZE)]
    ids: Vec<TicketId>,
) -> Result<Json<BatchReport<TicketDeleted>>, ToolError> {
    let (checks, ready) = prepare(&ids, |&id| {
        if id < 1 {
            Err(ToolError::validation(format!(
                "{id} is not a ticket number (they start at 1)"
            )))
        } else {
            Ok(id)
        }
    });
    let answers = trac.delete_tickets(&ready).await.map_err(ticket_error)?;
    let deleted = answers
        .into_iter()
        .zip(&ready)
        .map(|(answer, &id)| answer.map(|()| TicketDeleted { id }))
        .collect();
    Ok(Json(BatchReport::assemble(
        checks,
        deleted,
        Domain::Ticket,
        "ticket",
    )))
}
