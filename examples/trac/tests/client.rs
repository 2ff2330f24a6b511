//! The typed client against real tracd servers started by scripts/trac/.

mod common;

#[path = "client/faults.rs"]
mod faults;
#[path = "client/milestone.rs"]
mod milestone;
#[path = "client/system.rs"]
mod system;
#[path = "client/ticket.rs"]
mod ticket;
#[path = "client/ticket_batch.rs"]
mod ticket_batch;
#[path = "client/wiki.rs"]
mod wiki;
#[path = "client/wiki_format.rs"]
mod wiki_format;
