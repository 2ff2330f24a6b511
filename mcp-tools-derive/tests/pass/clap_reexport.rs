//! `#[derive(clap::Args)]` through `mcp_toolbelt::cli::clap`, in a crate (this test's)
//! that has no `clap` dependency of its own: the derive's code names `clap::…`, which the
//! `use` below resolves to the re-export.
use mcp_toolbelt::cli::clap;

#[derive(Debug, clap::Args)]
struct Flags {
    /// Where the notes live.
    #[arg(long, default_value = "notes")]
    dir: String,
}

fn main() {
    use clap::{Args, Command, FromArgMatches};
    let command = Flags::augment_args(Command::new("t"));
    let matches = command.get_matches_from(["t", "--dir", "elsewhere"]);
    let flags = Flags::from_arg_matches(&matches).unwrap();
    assert_eq!(flags.dir, "elsewhere");
}
