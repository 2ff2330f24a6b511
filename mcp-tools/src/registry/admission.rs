//! Admission: whether a tool may enter a registry at all. The registry's filter (the
//! builder's permission, category and tag selection) is the one decision, and an [`Entry`]
//! — the only thing a catalog holds — can only be made by [`Filter::admit`]. So build,
//! runtime registration and every later change (enable, disable) work on admitted tools
//! only: a tool the filter excludes is never stored, and a name never stored answers as
//! unknown everywhere.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::call::middleware::ToolRuntime;
use crate::call::validate::LazyValidator;
use crate::context::StateMap;
use crate::definition::tool::ToolDef;
use crate::permissions::PermissionSet;
use crate::schema::provider::{self, Provider};

/// Which tools a registry serves at all (its builder's selection). Fixed once the registry
/// is built.
#[derive(Clone, Default)]
pub(super) struct Filter {
    pub(super) allowed: Option<PermissionSet>,
    pub(super) categories: Option<BTreeSet<String>>,
    pub(super) tags: Option<BTreeSet<String>>,
    /// The provider whose rules the listed input schemas follow
    /// ([`ToolRegistryBuilder::schemas_for`](super::ToolRegistryBuilder::schemas_for));
    /// the validator keeps the original schema.
    pub(super) schemas: Option<Provider>,
}

/// Why an admitted tool still cannot be served.
pub(super) enum Refusal {
    /// It needs state types that were never registered (their names).
    MissingStates(Vec<&'static str>),
}

impl Refusal {
    /// The problem as one line about tool `name`.
    pub(super) fn into_problem(self, name: &str) -> String {
        match self {
            Refusal::MissingStates(states) => format!(
                "tool {name:?} needs state {} but none was registered; call .state(value) on the registry builder",
                states.join(", ")
            ),
        }
    }
}

/// One admitted tool as the registry holds it: definition, validator (compiled at its
/// first call), counters and limits.
pub(super) struct Entry {
    pub(super) def: Arc<ToolDef>,
    pub(super) validator: LazyValidator,
    pub(super) runtime: ToolRuntime,
    /// Arguments whose `null` means "left out" (the listed schema made them nullable for a
    /// provider; the original refuses `null`).
    pub(super) absent_when_null: Box<[String]>,
    /// Private: no code outside this module can make an `Entry` without [`Filter::admit`].
    _admitted: (),
}

impl Filter {
    /// The admission rule: the tool's permissions are a subset of the allowed ones, its
    /// category is one of the selected categories, and it carries one of the selected tags
    /// (each part only when the builder set it).
    pub(super) fn admits(&self, def: &ToolDef) -> bool {
        let permitted = self
            .allowed
            .as_ref()
            .is_none_or(|allowed| allowed.allows(def.permissions()));
        let in_category = self.categories.as_ref().is_none_or(|categories| {
            def.category()
                .is_some_and(|category| categories.contains(category))
        });
        let tagged = self
            .tags
            .as_ref()
            .is_none_or(|tags| def.tags().any(|tag| tags.contains(tag)));
        permitted && in_category && tagged
    }

    /// Admit `def`: `None` when the filter excludes it (its states are then not looked
    /// at), otherwise its entry, or why it cannot be served. The input schema is compiled
    /// at the tool's first call (or by `validation_report`), not here.
    pub(super) fn admit(
        &self,
        def: Arc<ToolDef>,
        states: &StateMap,
    ) -> Result<Option<Entry>, Refusal> {
        if !self.admits(&def) {
            return Ok(None);
        }
        let missing: Vec<&'static str> = def
            .requirements()
            .iter()
            .filter(|req| !states.contains(req.type_id))
            .map(|req| req.type_name)
            .collect();
        if !missing.is_empty() {
            return Err(Refusal::MissingStates(missing));
        }
        let validator = LazyValidator::new(def.input_schema().clone());
        let (def, absent_when_null) = match self.schemas {
            Some(provider) => listed_for(provider, def),
            None => (def, Box::default()),
        };
        Ok(Some(Entry {
            runtime: ToolRuntime::new(&def),
            validator,
            def,
            absent_when_null,
            _admitted: (),
        }))
    }
}

/// `def` with its input schema as `provider` takes it (what could be rewritten rewritten,
/// the rest left for `tools check --provider` to report); the same `def` when nothing
/// changes.
fn listed_for(provider: Provider, def: Arc<ToolDef>) -> (Arc<ToolDef>, Box<[String]>) {
    let adapted = provider::adapt(provider, def.input_schema());
    if adapted.findings.iter().all(|f| !f.rewritable) {
        return (def, Box::default());
    }
    let mut listed = (*def).clone();
    listed.input_schema = Arc::new(adapted.schema);
    (Arc::new(listed), adapted.absent_when_null.into())
}

impl Entry {
    /// `arguments` with a `null` for an argument the listed schema made nullable removed
    /// (the argument left out, as the original schema wants it). Others are untouched.
    pub(super) fn null_as_absent(&self, arguments: &mut serde_json::Value) {
        if let Some(object) = arguments.as_object_mut() {
            for name in &self.absent_when_null {
                if object.get(name).is_some_and(serde_json::Value::is_null) {
                    object.remove(name);
                }
            }
        }
    }
}
