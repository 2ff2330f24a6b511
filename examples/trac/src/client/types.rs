//! Typed Trac data, decoded from (and encoded to) XML-RPC values.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use dxr::Value;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::value::{
    as_array, as_bool, as_datetime, as_i32, as_opt_datetime, as_string, as_struct, datetime_value,
    describe, member, member_string, member_string_or_empty, string_struct, to_plain_string,
};

/// A Trac ticket number.
pub type TicketId = i32;

/// The RPC API version reported by `system.getAPIVersion` (`[epoch, major, minor]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApiVersion {
    /// Incompatible-change counter (0 = Trac 0.10 API, 1 = Trac >= 0.11).
    pub epoch: i32,
    /// Major version of the plugin API.
    pub major: i32,
    /// Minor version of the plugin API.
    pub minor: i32,
}

/// What [`TracClient::ping`](super::TracClient::ping) learnt about the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerInfo {
    /// The XML-RPC endpoint that answered.
    pub endpoint: String,
    /// The user the client authenticates as (`None`: anonymous).
    pub user: Option<String>,
    /// The RPC API version.
    pub api_version: ApiVersion,
    /// The server's clock (HTTP `Date` header of the answer), if it sent one.
    pub server_time: Option<DateTime<Utc>>,
}

/// A ticket as returned by `ticket.get` / `ticket.update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ticket {
    /// Ticket number.
    pub id: TicketId,
    /// Creation time.
    pub created: DateTime<Utc>,
    /// Time of the last change.
    pub changed: DateTime<Utc>,
    /// Change token (`_ts`) to pass to an update for collision detection.
    pub ts: String,
    /// All other fields (summary, description, status, owner, custom fields...)
    /// as text; `time`/`changetime` are in `created`/`changed`.
    pub fields: BTreeMap<String, String>,
}

impl Ticket {
    /// A field's value, if the ticket has that field.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    /// The summary line ("" if missing).
    pub fn summary(&self) -> &str {
        self.field("summary").unwrap_or_default()
    }

    /// The workflow status ("" if missing).
    pub fn status(&self) -> &str {
        self.field("status").unwrap_or_default()
    }

    pub(crate) fn from_value(v: &Value) -> Result<Self, String> {
        let parts = as_array(v, "ticket")?;
        let [id, created, changed, attrs] = parts else {
            return Err(format!(
                "ticket: expected [id, created, changed, attributes], got {}",
                describe(v)
            ));
        };
        let attrs = as_struct(attrs, "ticket attributes")?;
        let mut fields = BTreeMap::new();
        let mut ts = None;
        for (name, value) in attrs {
            match name.as_str() {
                "_ts" => ts = Some(to_plain_string(value).unwrap_or_default()),
                "time" | "changetime" => {}
                _ => {
                    let text = to_plain_string(value).ok_or_else(|| {
                        format!("ticket field {name}: unexpected value {}", describe(value))
                    })?;
                    fields.insert(name.clone(), text);
                }
            }
        }
        Ok(Ticket {
            id: as_i32(id, "ticket id")?,
            created: as_datetime(created, "ticket created")?,
            changed: as_datetime(changed, "ticket changed")?,
            ts: ts.ok_or("ticket attributes: member \"_ts\" missing")?,
            fields,
        })
    }
}

/// A new ticket for [`TracClient::create_ticket`](super::TracClient::create_ticket).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NewTicket {
    /// One-line summary (required by Trac).
    pub summary: String,
    /// Description in TracWiki markup.
    pub description: String,
    /// Further fields: type, priority, milestone, component, keywords, owner, cc, custom fields.
    #[serde(default)]
    pub fields: BTreeMap<String, String>,
    /// Ask Trac to send notification e-mails.
    #[serde(default)]
    pub notify: bool,
}

impl NewTicket {
    /// A ticket with a summary and description and no other fields.
    pub fn new(summary: impl Into<String>, description: impl Into<String>) -> Self {
        NewTicket {
            summary: summary.into(),
            description: description.into(),
            ..Default::default()
        }
    }

    /// Adds a field value.
    pub fn field(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.fields.insert(name.into(), value.into());
        self
    }

    pub(crate) fn params(&self) -> Vec<Value> {
        vec![
            Value::String(self.summary.clone()),
            Value::String(self.description.clone()),
            string_struct(&self.fields),
            Value::Boolean(self.notify),
        ]
    }
}

/// A change to a ticket for [`TracClient::update_ticket`](super::TracClient::update_ticket).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TicketUpdate {
    /// Comment to add (may be empty).
    pub comment: String,
    /// Workflow action, e.g. `leave`, `resolve`, `accept` (see `ticket_actions`).
    pub action: String,
    /// The `_ts` token of the version the change is based on; Trac refuses the
    /// update (conflict) if the ticket changed since. `None`: no check.
    pub ts: Option<String>,
    /// Fields to set, including action inputs such as `action_resolve_resolve_resolution`.
    #[serde(default)]
    pub fields: BTreeMap<String, String>,
    /// Ask Trac to send notification e-mails.
    #[serde(default)]
    pub notify: bool,
}

impl TicketUpdate {
    /// A comment-only change with action `leave` and no collision check.
    pub fn new(comment: impl Into<String>) -> Self {
        TicketUpdate {
            comment: comment.into(),
            action: "leave".into(),
            ts: None,
            fields: BTreeMap::new(),
            notify: false,
        }
    }

    /// Sets the workflow action.
    pub fn action(mut self, action: impl Into<String>) -> Self {
        self.action = action.into();
        self
    }

    /// Sets the `_ts` token for collision detection.
    pub fn based_on(mut self, ts: impl Into<String>) -> Self {
        self.ts = Some(ts.into());
        self
    }

    /// Sets a field value.
    pub fn field(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.fields.insert(name.into(), value.into());
        self
    }

    pub(crate) fn params(&self, id: TicketId) -> Vec<Value> {
        let mut attrs: BTreeMap<String, Value> = self
            .fields
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        attrs.insert("action".into(), Value::String(self.action.clone()));
        if let Some(ts) = &self.ts {
            attrs.insert("_ts".into(), Value::String(ts.clone()));
        }
        vec![
            Value::Integer(id),
            Value::String(self.comment.clone()),
            Value::Struct(attrs),
            Value::Boolean(self.notify),
        ]
    }
}

/// One entry of `ticket.changeLog`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangeLogEntry {
    /// When the change was made.
    pub time: DateTime<Utc>,
    /// Who made it.
    pub author: String,
    /// The field that changed (`comment` for comments).
    pub field: String,
    /// Previous value (for comments: the comment number).
    pub old_value: String,
    /// New value (for comments: the comment text).
    pub new_value: String,
    /// Whether the change is permanent (always true for normal changes).
    pub permanent: bool,
}

impl ChangeLogEntry {
    pub(crate) fn from_value(v: &Value) -> Result<Self, String> {
        let parts = as_array(v, "changelog entry")?;
        let [time, author, field, old, new, permanent] = parts else {
            return Err(format!(
                "changelog entry: expected 6 members, got {}",
                describe(v)
            ));
        };
        let text = |v: &Value, what: &str| {
            to_plain_string(v).ok_or_else(|| format!("{what}: got {}", describe(v)))
        };
        Ok(ChangeLogEntry {
            time: as_datetime(time, "changelog time")?,
            author: text(author, "changelog author")?,
            field: text(field, "changelog field")?,
            old_value: text(old, "changelog old value")?,
            new_value: text(new, "changelog new value")?,
            permanent: as_bool(permanent, "changelog permanent")?,
        })
    }
}

/// A ticket field definition from `ticket.getTicketFields`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TicketField {
    /// Field name as used in queries and updates.
    pub name: String,
    /// Human-readable label.
    pub label: String,
    /// Field type: text, textarea, select, radio, checkbox, time.
    #[serde(rename = "type")]
    pub kind: String,
    /// Default value ("" if none).
    pub default: String,
    /// Allowed values for select/radio fields.
    pub options: Vec<String>,
    /// Whether a select field may be left empty.
    pub optional: bool,
    /// Whether this is a custom field from `[ticket-custom]`.
    pub custom: bool,
}

impl TicketField {
    pub(crate) fn from_value(v: &Value) -> Result<Self, String> {
        let s = as_struct(v, "ticket field")?;
        let options = match s.get("options") {
            None => Vec::new(),
            Some(list) => as_array(list, "ticket field options")?
                .iter()
                .map(|o| as_string(o, "ticket field option"))
                .collect::<Result<_, _>>()?,
        };
        let flag = |key: &str| s.get(key).map_or(Ok(false), |v| as_bool(v, key));
        Ok(TicketField {
            name: member_string(s, "name", "ticket field")?,
            label: member_string_or_empty(s, "label", "ticket field")?,
            kind: member_string_or_empty(s, "type", "ticket field")?,
            default: member_string_or_empty(s, "value", "ticket field")?,
            options,
            optional: flag("optional")?,
            custom: flag("custom")?,
        })
    }
}

/// A workflow action available on a ticket (`ticket.getActions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TicketAction {
    /// Action name to pass as [`TicketUpdate::action`].
    pub name: String,
    /// Human-readable label.
    pub label: String,
    /// What the action will do (Trac renders this as HTML).
    pub hints: String,
    /// Extra inputs the action takes, to pass as update fields.
    pub inputs: Vec<ActionInput>,
}

/// An input of a workflow action, e.g. the resolution of `resolve`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActionInput {
    /// Field name to set in [`TicketUpdate::fields`].
    pub name: String,
    /// Default value.
    pub value: String,
    /// Allowed values (empty: free text).
    pub options: Vec<String>,
}

impl TicketAction {
    pub(crate) fn from_value(v: &Value) -> Result<Self, String> {
        let parts = as_array(v, "ticket action")?;
        let [name, label, hints, inputs] = parts else {
            return Err(format!(
                "ticket action: expected 4 members, got {}",
                describe(v)
            ));
        };
        let inputs = as_array(inputs, "action inputs")?
            .iter()
            .map(|input| {
                let parts = as_array(input, "action input")?;
                let [name, value, options] = parts else {
                    return Err(format!(
                        "action input: expected [name, value, options], got {}",
                        describe(input)
                    ));
                };
                Ok(ActionInput {
                    name: as_string(name, "action input name")?,
                    value: to_plain_string(value).unwrap_or_default(),
                    options: as_array(options, "action input options")?
                        .iter()
                        .map(|o| as_string(o, "action input option"))
                        .collect::<Result<_, _>>()?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(TicketAction {
            name: as_string(name, "action name")?,
            label: as_string(label, "action label")?,
            hints: to_plain_string(hints).unwrap_or_default(),
            inputs,
        })
    }
}

/// Metadata of one wiki page version (`wiki.getPageInfo`, `wiki.getRecentChanges`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WikiPageInfo {
    /// Page name.
    pub name: String,
    /// Version number (1 for a new page).
    pub version: i32,
    /// When this version was saved.
    pub last_modified: DateTime<Utc>,
    /// Who saved it.
    pub author: String,
    /// The change comment ("" if none).
    pub comment: String,
}

impl WikiPageInfo {
    pub(crate) fn from_value(v: &Value) -> Result<Self, String> {
        let s = as_struct(v, "wiki page info")?;
        Ok(WikiPageInfo {
            name: member_string(s, "name", "wiki page info")?,
            version: as_i32(member(s, "version", "wiki page info")?, "wiki page version")?,
            last_modified: as_datetime(
                member(s, "lastModified", "wiki page info")?,
                "wiki lastModified",
            )?,
            author: member_string_or_empty(s, "author", "wiki page info")?,
            comment: member_string_or_empty(s, "comment", "wiki page info")?,
        })
    }
}

/// Options for [`TracClient::put_wiki_page`](super::TracClient::put_wiki_page).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PutPageOptions {
    /// Change comment.
    pub comment: Option<String>,
    /// Author to record instead of the logged-in user (Trac may ignore it).
    pub author: Option<String>,
}

impl PutPageOptions {
    pub(crate) fn to_value(&self) -> Value {
        let mut attrs = BTreeMap::new();
        if let Some(c) = &self.comment {
            attrs.insert("comment".to_string(), Value::String(c.clone()));
        }
        if let Some(a) = &self.author {
            attrs.insert("author".to_string(), Value::String(a.clone()));
        }
        Value::Struct(attrs)
    }
}

/// One hit of `search.performSearch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchResult {
    /// Absolute URL of the hit (e.g. `.../wiki/PageName` or `.../ticket/7`).
    pub href: String,
    /// Title as Trac shows it.
    pub title: String,
    /// Time of the matching object.
    pub date: DateTime<Utc>,
    /// Author of the matching object.
    pub author: String,
    /// Text excerpt around the match.
    pub excerpt: String,
}

impl SearchResult {
    pub(crate) fn from_value(v: &Value) -> Result<Self, String> {
        let parts = as_array(v, "search result")?;
        let [href, title, date, author, excerpt] = parts else {
            return Err(format!(
                "search result: expected 5 members, got {}",
                describe(v)
            ));
        };
        Ok(SearchResult {
            href: as_string(href, "search href")?,
            title: to_plain_string(title).unwrap_or_default(),
            date: as_datetime(date, "search date")?,
            author: to_plain_string(author).unwrap_or_default(),
            excerpt: to_plain_string(excerpt).unwrap_or_default(),
        })
    }

    /// The wiki page name, if this hit is a wiki page.
    pub fn wiki_page(&self) -> Option<&str> {
        self.href.split_once("/wiki/").map(|(_, name)| name)
    }
}

/// A search filter (`search.getSearchFilters`): `wiki`, `ticket`, `milestone`, ...
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchFilter {
    /// Filter name to pass to [`TracClient::search`](super::TracClient::search).
    pub name: String,
    /// Human-readable label.
    pub label: String,
}

impl SearchFilter {
    pub(crate) fn from_value(v: &Value) -> Result<Self, String> {
        let parts = as_array(v, "search filter")?;
        let [name, label] = parts else {
            return Err(format!(
                "search filter: expected [name, label], got {}",
                describe(v)
            ));
        };
        Ok(SearchFilter {
            name: as_string(name, "filter name")?,
            label: as_string(label, "filter label")?,
        })
    }
}

/// A milestone (`ticket.milestone.get`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Milestone {
    /// Milestone name.
    pub name: String,
    /// Description in TracWiki markup.
    pub description: String,
    /// Due date, if set.
    pub due: Option<DateTime<Utc>>,
    /// Completion date, if completed.
    pub completed: Option<DateTime<Utc>>,
}

impl Milestone {
    pub(crate) fn from_value(v: &Value) -> Result<Self, String> {
        let s = as_struct(v, "milestone")?;
        let date = |key: &str| s.get(key).map_or(Ok(None), |d| as_opt_datetime(d, key));
        Ok(Milestone {
            name: member_string(s, "name", "milestone")?,
            description: member_string_or_empty(s, "description", "milestone")?,
            due: date("due")?,
            completed: date("completed")?,
        })
    }
}

/// Attributes to set on a milestone; `None` leaves a value unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MilestoneChanges {
    /// New name (rename; only for updates).
    pub name: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// `Some(Some(t))` sets the due date, `Some(None)` clears it.
    pub due: Option<Option<DateTime<Utc>>>,
    /// `Some(Some(t))` marks completed at `t`, `Some(None)` re-opens.
    pub completed: Option<Option<DateTime<Utc>>>,
}

impl MilestoneChanges {
    pub(crate) fn to_value(&self) -> Value {
        let mut attrs = BTreeMap::new();
        if let Some(n) = &self.name {
            attrs.insert("name".to_string(), Value::String(n.clone()));
        }
        if let Some(d) = &self.description {
            attrs.insert("description".to_string(), Value::String(d.clone()));
        }
        for (key, change) in [("due", self.due), ("completed", self.completed)] {
            if let Some(date) = change {
                attrs.insert(key.to_string(), date.map_or(Value::Nil, datetime_value));
            }
        }
        Value::Struct(attrs)
    }

    /// True when nothing would be changed.
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.description.is_none()
            && self.due.is_none()
            && self.completed.is_none()
    }
}

impl ApiVersion {
    pub(crate) fn from_value(v: &Value) -> Result<Self, String> {
        let parts = as_array(v, "API version")?;
        match parts {
            [epoch, major, minor] => Ok(ApiVersion {
                epoch: as_i32(epoch, "API epoch")?,
                major: as_i32(major, "API major")?,
                minor: as_i32(minor, "API minor")?,
            }),
            _ => Err(format!(
                "API version: expected [epoch, major, minor], got {}",
                describe(v)
            )),
        }
    }
}

impl std::fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.epoch, self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn s(x: &str) -> Value {
        Value::String(x.into())
    }

    #[test]
    fn ticket_decodes_and_rejects_bad_shapes() {
        let t = Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap();
        let attrs: BTreeMap<String, Value> = [
            ("_ts".to_string(), s("1767323045000000")),
            ("summary".to_string(), s("Hello")),
            ("status".to_string(), s("new")),
            ("time".to_string(), datetime_value(t)),
        ]
        .into();
        let v = Value::Array(vec![
            Value::Integer(3),
            datetime_value(t),
            datetime_value(t),
            Value::Struct(attrs),
        ]);
        let ticket = Ticket::from_value(&v).unwrap();
        assert_eq!(
            (ticket.id, ticket.summary(), ticket.status()),
            (3, "Hello", "new")
        );
        assert_eq!(ticket.ts, "1767323045000000");
        assert!(!ticket.fields.contains_key("time"));
        let err = Ticket::from_value(&Value::Array(vec![Value::Integer(3)])).unwrap_err();
        assert!(
            err.contains("expected [id, created, changed, attributes]"),
            "{err}"
        );
    }

    #[test]
    fn milestone_changes_encode_clear_as_nil() {
        let c = MilestoneChanges {
            due: Some(None),
            description: Some("d".into()),
            ..Default::default()
        };
        let Value::Struct(m) = c.to_value() else {
            panic!()
        };
        assert_eq!(m.get("due"), Some(&Value::Nil));
        assert!(!m.contains_key("completed"));
        assert!(MilestoneChanges::default().is_empty());
    }

    #[test]
    fn update_params_carry_action_and_ts() {
        let u = TicketUpdate::new("c")
            .action("resolve")
            .based_on("42")
            .field("action_resolve_resolve_resolution", "fixed");
        let p = u.params(7);
        let Value::Struct(attrs) = &p[2] else {
            panic!()
        };
        assert_eq!(attrs.get("action"), Some(&s("resolve")));
        assert_eq!(attrs.get("_ts"), Some(&s("42")));
        assert_eq!(p[0], Value::Integer(7));
    }
}
