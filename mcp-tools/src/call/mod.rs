//! The call path around a handler, between the registry's lookup and the handler:
//! argument validation and the middleware ([`Around`] hooks, time budgets, concurrency
//! limits, panic capture, statistics), plus [`run_blocking`] for handlers' blocking work.

pub(crate) mod blocking;
pub(crate) mod flat;
mod json_schema;
pub(crate) mod middleware;
pub(crate) mod validate;

pub use blocking::run_blocking;
pub use middleware::{Around, Next, ToolStats};
