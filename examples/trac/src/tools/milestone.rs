//! Milestones: list and get (MILESTONE_VIEW), create (MILESTONE_CREATE),
//! update (MILESTONE_MODIFY), delete (MILESTONE_DELETE). These are the
//! permissions this server filters on; Trac's XML-RPC plugin itself asks for
//! TICKET_ADMIN on milestone writes, so a Trac account without it gets
//! permission_denied from Trac.

use chrono::{DateTime, NaiveDate, Utc};
use mcp_toolbelt::{Json, State, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::Serialize;

use crate::client::{ErrorKind, Milestone, MilestoneChanges, TracClient};
use crate::errors::{check_name, milestone_error};

/// Parses a date argument: RFC 3339 (`2026-06-30T12:00:00Z`) or a plain date
/// (`2026-06-30`, midnight UTC); with `allow_now`, also `now`.
fn parse_date(what: &str, text: &str, allow_now: bool) -> Result<DateTime<Utc>, ToolError> {
    let text = text.trim();
    if allow_now && text.eq_ignore_ascii_case("now") {
        return Ok(Utc::now());
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d")
        && let Some(t) = d.and_hms_opt(0, 0, 0)
    {
        return Ok(t.and_utc());
    }
    Err(
        ToolError::validation(format!("{what} {text:?} is not a date")).with_action(format!(
            "Give {what} as YYYY-MM-DD or an RFC 3339 time such as 2026-06-30T12:00:00Z{}.",
            if allow_now { ", or \"now\"" } else { "" }
        )),
    )
}

/// A date change: "" clears, anything else is parsed.
fn date_change(
    what: &str,
    text: Option<&str>,
    allow_now: bool,
) -> Result<Option<Option<DateTime<Utc>>>, ToolError> {
    match text {
        None => Ok(None),
        Some(t) if t.trim().is_empty() => Ok(Some(None)),
        Some(t) => parse_date(what, t, allow_now).map(|d| Some(Some(d))),
    }
}

/// The answer of `milestone_list`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MilestoneList {
    /// Number of milestones returned.
    pub count: usize,
    /// The milestones in Trac's order (by due date, then name).
    pub milestones: Vec<Milestone>,
}

/// List the milestones with their due and completion dates and descriptions. Completed
/// milestones are left out unless include_completed is true.
#[mcp_tool(name = "milestone_list", permissions = ["MILESTONE_VIEW"], read_only, idempotent)]
pub async fn milestone_list(
    trac: State<TracClient>,
    /// Also list milestones that are completed
    #[arg(default = false)]
    include_completed: bool,
) -> Result<Json<MilestoneList>, ToolError> {
    let names = trac.list_milestones().await.map_err(milestone_error)?;
    let mut milestones = Vec::with_capacity(names.len());
    for fetched in trac.get_milestones(&names).await.map_err(milestone_error)? {
        match fetched {
            Ok(m) if include_completed || m.completed.is_none() => milestones.push(m),
            Ok(_) => {}
            // deleted between the two calls: no longer part of the list
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(milestone_error(e)),
        }
    }
    Ok(Json(MilestoneList {
        count: milestones.len(),
        milestones,
    }))
}

/// Get one milestone: description (TracWiki markup), due date and completion date (null
/// while open).
#[mcp_tool(name = "milestone_get", permissions = ["MILESTONE_VIEW"], read_only, idempotent)]
pub async fn milestone_get(
    trac: State<TracClient>,
    /// Milestone name, e.g. 1.0 or milestone1 (case-sensitive)
    #[arg(min_length = 1)]
    name: String,
) -> Result<Json<Milestone>, ToolError> {
    check_name("milestone name", &name)?;
    Ok(Json(
        trac.get_milestone(&name).await.map_err(milestone_error)?,
    ))
}

/// Create a milestone, optionally with a description (TracWiki markup) and a due date.
/// Returns the milestone as Trac stored it. Fails with a conflict if the name is taken.
#[mcp_tool(name = "milestone_create", permissions = ["MILESTONE_CREATE"], destructive = false)]
pub async fn milestone_create(
    trac: State<TracClient>,
    /// Name of the new milestone, e.g. 2.0
    #[arg(min_length = 1, max_length = 255)]
    name: String,
    /// Description (TracWiki markup)
    description: Option<String>,
    /// Due date: YYYY-MM-DD or an RFC 3339 time
    due: Option<String>,
) -> Result<Json<Milestone>, ToolError> {
    check_name("milestone name", &name)?;
    let changes = MilestoneChanges {
        name: None,
        description,
        due: date_change("due", due.as_deref(), false)?,
        completed: None,
    };
    trac.create_milestone(&name, &changes)
        .await
        .map_err(milestone_error)?;
    Ok(Json(
        trac.get_milestone(&name).await.map_err(milestone_error)?,
    ))
}

/// Change a milestone: rename it, replace its description, set or clear its due date,
/// mark it completed ("now" or a date) or re-open it (completed = ""). Only the given
/// values change. Returns the milestone after the change.
#[mcp_tool(name = "milestone_update", permissions = ["MILESTONE_MODIFY"], idempotent)]
pub async fn milestone_update(
    trac: State<TracClient>,
    /// Current name of the milestone
    #[arg(min_length = 1)]
    name: String,
    /// New name (renames the milestone; its tickets follow)
    new_name: Option<String>,
    /// New description (TracWiki markup), replacing the old one
    description: Option<String>,
    /// New due date (YYYY-MM-DD or RFC 3339); "" clears it
    due: Option<String>,
    /// Completion time: "now", YYYY-MM-DD or RFC 3339 marks it completed; "" re-opens it
    completed: Option<String>,
) -> Result<Json<Milestone>, ToolError> {
    check_name("milestone name", &name)?;
    if let Some(new_name) = &new_name {
        check_name("new milestone name", new_name)?;
    }
    let changes = MilestoneChanges {
        name: new_name.clone(),
        description,
        due: date_change("due", due.as_deref(), false)?,
        completed: date_change("completed", completed.as_deref(), true)?,
    };
    if changes.is_empty() {
        return Err(
            ToolError::validation(format!("nothing to change on milestone {name:?}"))
                .with_action("Pass at least one of new_name, description, due, completed."),
        );
    }
    trac.update_milestone(&name, &changes)
        .await
        .map_err(milestone_error)?;
    let current = new_name.as_deref().unwrap_or(&name);
    Ok(Json(
        trac.get_milestone(current).await.map_err(milestone_error)?,
    ))
}

/// A deleted milestone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MilestoneDeleted {
    /// The name of the milestone that no longer exists.
    pub name: String,
}

/// Delete a milestone. Its tickets keep their other fields and lose the milestone. This
/// cannot be undone.
#[mcp_tool(
    name = "milestone_delete",
    permissions = ["MILESTONE_DELETE"],
    destructive,
    idempotent
)]
pub async fn milestone_delete(
    trac: State<TracClient>,
    /// Name of the milestone to delete
    #[arg(min_length = 1)]
    name: String,
) -> Result<Json<MilestoneDeleted>, ToolError> {
    check_name("milestone name", &name)?;
    trac.delete_milestone(&name)
        .await
        .map_err(milestone_error)?;
    Ok(Json(MilestoneDeleted { name }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_or_explain() {
        let d = parse_date("due", "2026-06-30", false).unwrap();
        assert_eq!(d.to_rfc3339(), "2026-06-30T00:00:00+00:00");
        let t = parse_date("due", "2026-06-30T12:00:00+02:00", false).unwrap();
        assert_eq!(t.to_rfc3339(), "2026-06-30T10:00:00+00:00");
        assert!(parse_date("due", "now", false).is_err());
        assert!(parse_date("completed", "now", true).is_ok());
        let err = parse_date("due", "next week", false).unwrap_err();
        assert!(err.action().unwrap().contains("YYYY-MM-DD"));
        assert_eq!(date_change("due", Some(""), false).unwrap(), Some(None));
        assert_eq!(date_change("due", None, false).unwrap(), None);
    }
}
