//! Keeping a tools library linked, and noticing when it contributes nothing.
//!
//! `#[mcp_tool]` fns are collected at link time from every crate linked into the binary. A
//! library crate the binary never references is not linked at all, and its tools vanish
//! without an error. [`tool_library!`](crate::tool_library) gives a library one function
//! that a server passes to [`ToolRegistryBuilder::library`](super::ToolRegistryBuilder::library):
//! the call links the crate, and the registry checks that it did contribute tools.

use std::fmt;

use crate::definition::SourceLocation;

/// A tools library a server expects tools from; made by [`tool_library!`](crate::tool_library).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Library {
    name: &'static str,
    /// `file!()` where the library invoked `tool_library!`: its source tree is that file's
    /// directory.
    anchor: &'static str,
}

impl Library {
    #[doc(hidden)]
    pub const fn new(name: &'static str, anchor: &'static str) -> Library {
        Library { name, anchor }
    }

    /// The library's crate name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// True when a definition at `source` belongs to this library's source tree.
    pub(crate) fn contains(&self, source: Option<SourceLocation>) -> bool {
        let root = self
            .anchor
            .rsplit_once(['/', '\\'])
            .map_or("", |(dir, _)| dir);
        source.is_some_and(|s| {
            s.file
                .strip_prefix(root)
                .is_some_and(|rest| rest.starts_with(['/', '\\']))
        })
    }
}

impl fmt::Display for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// What `tools check` and `serve` say about a registry that serves nothing.
pub(crate) const EMPTY: &str = "the registry serves no tools, resources or prompts. Tools in \
a library crate are collected only when the binary links that crate: add \
`mcp_toolbelt::tool_library!();` to the library and `.library(my_tools::mcp_toolbelt_library())` to \
the registry builder (or reference any item of the library from the binary)";

/// The problem when `library` contributed no tool.
pub(crate) fn silent(library: &Library) -> String {
    format!(
        "library `{library}` is linked but contributed no tools: check that its #[mcp_tool] fns \
are in the crate that invoked `mcp_toolbelt::tool_library!()` and compiled in (features, cfg)"
    )
}

/// Gives a tools library a `pub fn mcp_toolbelt_library() -> Library` for the server's
/// [`ToolRegistryBuilder::library`](crate::registry::ToolRegistryBuilder::library): calling it
/// keeps the library linked (so its `#[mcp_tool]` fns are collected), and the registry
/// reports the library if it contributes no tools. Invoke it once, in the library's
/// `lib.rs`.
///
/// ```rust,standalone_crate
/// // In the tools library's lib.rs:
/// mcp_toolbelt::tool_library!();
///
/// /// Say hello.
/// #[mcp_toolbelt::mcp_tool(name = "hello")]
/// async fn hello() -> &'static str { "hello" }
///
/// // In the server (here the same crate):
/// let registry = mcp_toolbelt::ToolRegistry::builder()
///     .library(mcp_toolbelt_library())
///     .build()
///     .unwrap();
/// assert!(!registry.validation_report().has_errors());
/// assert_eq!(registry.list_tools().len(), 1);
/// ```
#[macro_export]
macro_rules! tool_library {
    () => {
        /// This library's tools, for `mcp_toolbelt::ToolRegistry::builder().library(...)`: the call
        /// keeps the library linked into the server.
        #[inline(never)]
        pub fn mcp_toolbelt_library() -> $crate::registry::Library {
            $crate::registry::Library::new(env!("CARGO_PKG_NAME"), file!())
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_owns_the_files_under_its_source_directory() {
        let lib = Library::new("tool-lib", "tests/fixtures/tool-lib/src/lib.rs");
        let at = |file| Some(SourceLocation { file, line: 1 });
        assert!(lib.contains(at("tests/fixtures/tool-lib/src/lib.rs")));
        assert!(lib.contains(at("tests/fixtures/tool-lib/src/text/words.rs")));
        assert!(!lib.contains(at("tests/fixtures/tool-lib2/src/lib.rs")));
        assert!(!lib.contains(at("src/lib.rs")));
        assert!(!lib.contains(None));
    }
}
