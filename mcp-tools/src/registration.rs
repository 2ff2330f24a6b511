//! Link-time registration: each `#[mcp_tool]`, `#[mcp_resource]` and `#[mcp_prompt]` fn
//! submits one [`Registration`] with `inventory`; a registry builder collects them.

use crate::definition::common::DefError;
use crate::definition::prompt::PromptDef;
use crate::definition::resource::ResourceDef;
use crate::definition::tool::ToolDef;

/// A link-time registration of an annotated fn: the fn that builds its definition `T` (or
/// says why it cannot). Constructed only by the macros' generated code.
#[doc(hidden)]
pub struct Registration<T: 'static> {
    define: fn() -> Result<T, DefError>,
}

impl<T> Registration<T> {
    #[doc(hidden)]
    pub const fn new(define: fn() -> Result<T, DefError>) -> Self {
        Registration { define }
    }
}

inventory::collect!(Registration<ToolDef>);
inventory::collect!(Registration<ResourceDef>);
inventory::collect!(Registration<PromptDef>);

/// Every linked definition of type `T`, each built (or why it could not be).
pub(crate) fn linked<T>() -> impl Iterator<Item = Result<T, DefError>>
where
    Registration<T>: inventory::Collect,
{
    inventory::iter::<Registration<T>>
        .into_iter()
        .map(|registration| (registration.define)())
}
