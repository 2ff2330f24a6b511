//! `ticket.*`: query, read, create, update, delete (single and batched).

use super::value::as_i32;
use super::{
    ChangeLogEntry, NewTicket, RpcCall, Ticket, TicketAction, TicketField, TicketId, TicketUpdate,
    TracClient, TracError, Value, decode_list,
};

impl TracClient {
    /// `ticket.query`: ids of the tickets matching a Trac query string such as
    /// `status!=closed&owner=bob&max=10`. Without `max=`, Trac's default page size applies.
    pub async fn query_tickets(&self, query: &str) -> Result<Vec<TicketId>, TracError> {
        self.call_as(
            "ticket.query",
            vec![Value::String(query.to_string())],
            |v| decode_list(v, "ticket ids", |id| as_i32(id, "ticket id")),
        )
        .await
    }

    /// `ticket.get`: one ticket; fault 404 if it does not exist.
    pub async fn get_ticket(&self, id: TicketId) -> Result<Ticket, TracError> {
        self.call_as("ticket.get", vec![Value::Integer(id)], Ticket::from_value)
            .await
    }

    /// Several tickets in one round trip, one result per id.
    pub async fn get_tickets(
        &self,
        ids: &[TicketId],
    ) -> Result<Vec<Result<Ticket, TracError>>, TracError> {
        let calls = ids
            .iter()
            .map(|id| RpcCall::new("ticket.get", vec![Value::Integer(*id)]))
            .collect();
        self.multicall_as(calls, Ticket::from_value).await
    }

    /// `ticket.changeLog`: all changes and comments, oldest first.
    pub async fn ticket_changelog(&self, id: TicketId) -> Result<Vec<ChangeLogEntry>, TracError> {
        self.call_as("ticket.changeLog", vec![Value::Integer(id)], |v| {
            decode_list(v, "changelog", ChangeLogEntry::from_value)
        })
        .await
    }

    /// `ticket.getTicketFields`: the field definitions (standard and custom).
    pub async fn ticket_fields(&self) -> Result<Vec<TicketField>, TracError> {
        self.call_as("ticket.getTicketFields", vec![], |v| {
            decode_list(v, "ticket fields", TicketField::from_value)
        })
        .await
    }

    /// `ticket.getActions`: the workflow actions the user may apply now.
    pub async fn ticket_actions(&self, id: TicketId) -> Result<Vec<TicketAction>, TracError> {
        self.call_as("ticket.getActions", vec![Value::Integer(id)], |v| {
            decode_list(v, "ticket actions", TicketAction::from_value)
        })
        .await
    }

    /// `ticket.create`: returns the new ticket's id.
    pub async fn create_ticket(&self, ticket: &NewTicket) -> Result<TicketId, TracError> {
        check_summary(ticket)?;
        self.call_as("ticket.create", ticket.params(), |v| {
            as_i32(v, "new ticket id")
        })
        .await
    }

    /// Creates several tickets in one round trip, one result per ticket.
    pub async fn create_tickets(
        &self,
        tickets: &[NewTicket],
    ) -> Result<Vec<Result<TicketId, TracError>>, TracError> {
        let calls = tickets
            .iter()
            .map(|t| RpcCall::new("ticket.create", t.params()))
            .collect();
        self.multicall_as(calls, |v| as_i32(v, "new ticket id"))
            .await
    }

    /// `ticket.update`: applies a workflow action, field changes and a comment;
    /// returns the updated ticket. A stale [`TicketUpdate::ts`] gives a conflict fault.
    pub async fn update_ticket(
        &self,
        id: TicketId,
        update: &TicketUpdate,
    ) -> Result<Ticket, TracError> {
        check_action(update)?;
        self.call_as("ticket.update", update.params(id), Ticket::from_value)
            .await
    }

    /// Updates several tickets in one round trip, one result per update.
    pub async fn update_tickets(
        &self,
        updates: &[(TicketId, TicketUpdate)],
    ) -> Result<Vec<Result<Ticket, TracError>>, TracError> {
        let calls = updates
            .iter()
            .map(|(id, u)| RpcCall::new("ticket.update", u.params(*id)))
            .collect();
        self.multicall_as(calls, Ticket::from_value).await
    }

    /// `ticket.delete` (needs TICKET_ADMIN).
    pub async fn delete_ticket(&self, id: TicketId) -> Result<(), TracError> {
        self.call("ticket.delete", vec![Value::Integer(id)])
            .await
            .map(drop)
    }

    /// Deletes several tickets in one round trip, one result per id.
    pub async fn delete_tickets(
        &self,
        ids: &[TicketId],
    ) -> Result<Vec<Result<(), TracError>>, TracError> {
        let calls = ids
            .iter()
            .map(|id| RpcCall::new("ticket.delete", vec![Value::Integer(*id)]))
            .collect();
        self.multicall_as(calls, |_| Ok(())).await
    }
}

fn check_summary(ticket: &NewTicket) -> Result<(), TracError> {
    if ticket.summary.trim().is_empty() {
        return Err(TracError::InvalidArgument(
            "a ticket needs a non-empty summary".into(),
        ));
    }
    Ok(())
}

fn check_action(update: &TicketUpdate) -> Result<(), TracError> {
    if update.action.trim().is_empty() {
        return Err(TracError::InvalidArgument(
            "a ticket update needs a workflow action (e.g. \"leave\")".into(),
        ));
    }
    Ok(())
}
