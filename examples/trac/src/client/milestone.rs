//! `ticket.milestone.*`.

use super::value::as_string;
use super::{
    Milestone, MilestoneChanges, RpcCall, TracClient, TracError, Value, check_name, decode_list,
};

impl TracClient {
    /// `ticket.milestone.getAll`: all milestone names.
    pub async fn list_milestones(&self) -> Result<Vec<String>, TracError> {
        self.call_as("ticket.milestone.getAll", vec![], |v| {
            decode_list(v, "milestone names", |n| as_string(n, "milestone name"))
        })
        .await
    }

    /// `ticket.milestone.get`: one milestone; fault 404 if missing.
    pub async fn get_milestone(&self, name: &str) -> Result<Milestone, TracError> {
        check_name("milestone", name)?;
        self.call_as(
            "ticket.milestone.get",
            vec![Value::String(name.to_string())],
            Milestone::from_value,
        )
        .await
    }

    /// Several milestones in one round trip, one result per name.
    pub async fn get_milestones(
        &self,
        names: &[String],
    ) -> Result<Vec<Result<Milestone, TracError>>, TracError> {
        let calls = names
            .iter()
            .map(|n| RpcCall::new("ticket.milestone.get", vec![Value::String(n.clone())]))
            .collect();
        self.multicall_as(calls, Milestone::from_value).await
    }

    /// `ticket.milestone.create` (Trac requires TICKET_ADMIN). Fails with an
    /// "already exists" fault for a taken name.
    pub async fn create_milestone(
        &self,
        name: &str,
        attributes: &MilestoneChanges,
    ) -> Result<(), TracError> {
        check_name("milestone", name)?;
        let mut attributes = attributes.clone();
        attributes.name = None; // the name is the first argument
        let params = vec![Value::String(name.to_string()), attributes.to_value()];
        self.call("ticket.milestone.create", params).await.map(drop)
    }

    /// `ticket.milestone.update` (TICKET_ADMIN); [`MilestoneChanges::name`] renames.
    pub async fn update_milestone(
        &self,
        name: &str,
        changes: &MilestoneChanges,
    ) -> Result<(), TracError> {
        check_name("milestone", name)?;
        if let Some(new_name) = &changes.name {
            check_name("new milestone", new_name)?;
        }
        if changes.is_empty() {
            return Err(TracError::InvalidArgument(format!(
                "nothing to change on milestone {name:?}"
            )));
        }
        let params = vec![Value::String(name.to_string()), changes.to_value()];
        self.call("ticket.milestone.update", params).await.map(drop)
    }

    /// `ticket.milestone.delete` (TICKET_ADMIN); fault 404 if missing.
    pub async fn delete_milestone(&self, name: &str) -> Result<(), TracError> {
        check_name("milestone", name)?;
        self.call(
            "ticket.milestone.delete",
            vec![Value::String(name.to_string())],
        )
        .await
        .map(drop)
    }
}
