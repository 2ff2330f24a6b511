//! What every definition shares (tools, resources, prompts): where it was written
//! ([`SourceLocation`]), why it could not be built ([`DefError`]), and its common metadata —
//! title, description, permissions, state requirements, source location. One builder-side
//! struct with one description check, and macros that give each builder and definition the
//! same methods.

use std::borrow::Cow;
use std::fmt;

use crate::context::StateRequirement;

/// Where a tool, resource or prompt was defined (for duplicate-name errors and reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceLocation {
    /// Source file, as `file!()` gives it.
    pub file: &'static str,
    /// Line of the annotated fn.
    pub line: u32,
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// `defined at A and at B` for two definitions of one name, in source order (file, then
/// line; definitions made at run time, which have no location, last), whatever order the
/// linker collected them in.
pub(crate) fn defined_at(a: Option<SourceLocation>, b: Option<SourceLocation>) -> String {
    let mut both = [a, b];
    both.sort_by_key(|location| (location.is_none(), *location));
    let at = |location: Option<SourceLocation>| {
        location.map_or_else(|| "a runtime definition".to_string(), |l| l.to_string())
    };
    format!("defined at {} and at {}", at(both[0]), at(both[1]))
}

/// Why a tool, resource or prompt definition could not be built.
///
/// ```
/// let err = mcp_toolbelt::definition::ResourceDef::fixed("no-scheme").name("x").description("d")
///     .handler(|_r, _c| async { Ok(vec![]) }).build().unwrap_err();
/// assert!(err.to_string().starts_with("resource \"no-scheme\": "));
/// assert_eq!(err.item(), "resource \"no-scheme\"");
///
/// let err = mcp_toolbelt::definition::ToolDef::builder("bad name").description("d")
///     .handler(|_a, _c| async { Ok(mcp_toolbelt::ToolResult::empty()) }).build().unwrap_err();
/// assert_eq!(err.item(), "tool \"bad name\"");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{item}: {problem}")]
pub struct DefError {
    item: String,
    problem: String,
}

impl DefError {
    pub(crate) fn new(kind: &str, name: &str, problem: String) -> DefError {
        DefError {
            item: format!("{kind} {name:?}"),
            problem,
        }
    }

    /// What was being defined, e.g. `prompt "summarize"`.
    pub fn item(&self) -> &str {
        &self.item
    }

    /// What is wrong and how to fix it.
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

/// The shared metadata a definition builder collects before `build`.
#[derive(Default)]
pub(crate) struct DefCommon {
    pub(crate) title: Option<Cow<'static, str>>,
    pub(crate) description: Option<Cow<'static, str>>,
    pub(crate) permissions: Vec<Cow<'static, str>>,
    pub(crate) requirements: Vec<StateRequirement>,
    pub(crate) source: Option<SourceLocation>,
}

impl DefCommon {
    /// The description, or the problem to report when it is missing or blank.
    pub(crate) fn checked_description(&self) -> Result<Cow<'static, str>, String> {
        match &self.description {
            Some(d) if !d.trim().is_empty() => Ok(d.clone()),
            _ => Err("has no description; add a doc comment or `description = \"...\"`".into()),
        }
    }
}

/// The handler, or the problem to report when none was given.
pub(crate) fn checked_handler<H>(handler: Option<H>) -> Result<H, String> {
    handler.ok_or_else(|| "has no handler".to_string())
}

/// The builder methods that set a [`DefCommon`] kept in the builder's `common` field:
/// `title`, `description`, `permissions`, `requires`, `source`. The three doc strings name
/// who sees the description, what the permissions gate, and what is defined.
macro_rules! def_common_builder_methods {
    (
        description: $description_doc:literal,
        permissions: $permissions_doc:literal,
        source: $source_doc:literal $(,)?
    ) => {
        /// Human-readable title.
        pub fn title(mut self, title: impl Into<::std::borrow::Cow<'static, str>>) -> Self {
            self.common.title = Some(title.into());
            self
        }

        #[doc = $description_doc]
        pub fn description(
            mut self,
            description: impl Into<::std::borrow::Cow<'static, str>>,
        ) -> Self {
            self.common.description = Some(description.into());
            self
        }

        #[doc = $permissions_doc]
        pub fn permissions<I, S>(mut self, permissions: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<::std::borrow::Cow<'static, str>>,
        {
            self.common.permissions = permissions.into_iter().map(Into::into).collect();
            self
        }

        /// A state type the handler needs (checked at registry build).
        pub fn requires(mut self, requirement: Option<$crate::context::StateRequirement>) -> Self {
            if let Some(requirement) = requirement {
                self.common.requirements.push(requirement);
            }
            self
        }

        #[doc = $source_doc]
        pub fn source(mut self, file: &'static str, line: u32) -> Self {
            self.common.source = Some($crate::definition::common::SourceLocation { file, line });
            self
        }
    };
}

/// The read accessors of the shared metadata on a built definition, whose fields `title`,
/// `description`, `permissions`, `requirements` and `source` hold it.
macro_rules! def_common_accessors {
    (
        description: $description_doc:literal,
        requirements: $requirements_doc:literal,
        source: $source_doc:literal $(,)?
    ) => {
        /// The human-readable title, if any.
        pub fn title(&self) -> Option<&str> {
            self.title.as_deref()
        }

        #[doc = $description_doc]
        pub fn description(&self) -> &str {
            &self.description
        }

        /// The permissions a caller needs (empty: always available).
        pub fn permissions(&self) -> &$crate::permissions::PermissionSet {
            &self.permissions
        }

        #[doc = $requirements_doc]
        pub fn requirements(&self) -> &[$crate::context::StateRequirement] {
            &self.requirements
        }

        #[doc = $source_doc]
        pub fn source(&self) -> Option<$crate::definition::common::SourceLocation> {
            self.source
        }
    };
}

pub(crate) use {def_common_accessors, def_common_builder_methods};
