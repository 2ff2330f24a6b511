//! [`App`]: the generated command line of one server, and [`run`].

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Arg, ArgMatches, Command, FromArgMatches};

use crate::definition::tool::ToolDef;
use crate::permissions::PermissionSet;
use crate::registry::{ToolRegistry, ToolRegistryBuilder};
use crate::schema::provider::Provider;

use super::command::{self, LOG_LEVEL_ARG, PERMISSIONS_ARG, Root};
use super::explain;
use super::extension::{self, Extension};
use super::flags;
use super::inspect;
use super::invoke::{self, FAILURE, USAGE, print_err, print_out};
use super::logging;
use super::plan::{Node, Plan};
use super::prescan;
use super::serve;

/// What an [`App::setup`] hook may fail with: any error converts with `?` or `.into()`
/// (`anyhow::Error` too). It is printed as `error: …` and the exit status is 1.
///
/// ```
/// use mcp_toolbelt::cli::SetupError;
/// let from_text: SetupError = "TRAC_URL is not set".into();
/// let from_io: SetupError = std::io::Error::other("cannot read the config").into();
/// assert_eq!(from_text.to_string(), "TRAC_URL is not set");
/// assert_eq!(from_io.to_string(), "cannot read the config");
/// ```
pub type SetupError = Box<dyn std::error::Error + Send + Sync>;

type SetupFn = Box<
    dyn FnOnce(&ArgMatches, ToolRegistryBuilder) -> Result<ToolRegistryBuilder, SetupError> + Send,
>;

type BuiltFn = Box<dyn FnOnce(&ToolRegistry) + Send>;

/// The command line of one MCP server, generated from its registry builder.
///
/// [`App::new`] (or [`cli_app!`](crate::cli_app)) takes the [`ToolRegistryBuilder`] with
/// the server's state; [`App::setup`] adds global flags whose values build more state
/// (a backend URL, say) once the command line is parsed; [`run`](App::run) parses
/// `std::env::args_os()`, runs the command and returns the exit status.
///
/// ```rust,standalone_crate
/// use std::process::ExitCode;
/// use mcp_toolbelt::{mcp_tool, ToolRegistry, cli::App};
///
/// /// Add two integers.
/// #[mcp_tool(name = "math_add")]
/// async fn add(a: i64, b: i64) -> String {
///     (a + b).to_string()
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let app = App::new("calc", "1.0.0", ToolRegistry::builder());
/// // `calc math add --a 2 --b 3` prints `5` and exits 0.
/// let status = app.run_from(["calc", "math", "add", "--a", "2", "--b", "3"]).await;
/// assert_eq!(status, ExitCode::SUCCESS);
/// # });
/// ```
#[must_use]
pub struct App {
    name: String,
    version: String,
    about: Option<String>,
    builder: ToolRegistryBuilder,
    globals: Vec<Arg>,
    setup: Option<SetupFn>,
    on_built: Option<BuiltFn>,
    extensions: Vec<Extension>,
}

impl fmt::Debug for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("App")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("about", &self.about)
            .field("globals", &self.globals.len())
            .field("setup", &self.setup.is_some())
            .field("on_built", &self.on_built.is_some())
            .field(
                "commands",
                &self
                    .extensions
                    .iter()
                    .map(Extension::name)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl App {
    /// The command line of the server `name` at `version`, for the tools `builder`
    /// collects (its state is what the commands use; `--permissions-file` is applied to
    /// it before `build()`).
    ///
    /// ```
    /// let app = mcp_toolbelt::cli::App::new("demo", "0.1.0", mcp_toolbelt::ToolRegistry::builder());
    /// assert_eq!(app.name(), "demo");
    /// ```
    pub fn new(
        name: impl Into<String>,
        version: impl Into<String>,
        builder: ToolRegistryBuilder,
    ) -> App {
        App {
            name: name.into(),
            version: version.into(),
            about: None,
            builder,
            globals: Vec::new(),
            setup: None,
            on_built: None,
            extensions: Vec::new(),
        }
    }

    /// The one-line description shown at the top of `--help` (empty text: none).
    ///
    /// ```
    /// let app = mcp_toolbelt::cli::App::new("demo", "0.1.0", mcp_toolbelt::ToolRegistry::builder())
    ///     .about("A demo server");
    /// assert_eq!(app.get_about(), Some("A demo server"));
    /// ```
    pub fn about(mut self, about: impl Into<String>) -> App {
        let about = about.into();
        self.about = (!about.trim().is_empty()).then_some(about);
        self
    }

    /// Global flags `G` (a `#[derive(clap::Args)]` struct) and a hook that turns their
    /// values into registry state. The hook runs after parsing, only for commands that
    /// call tools (a tool command, `call`, `serve`, `tools check`); `--help`,
    /// `tools list`, `tools show` and `tools matrix` work without it. Keep `G`'s flags
    /// optional (defaults or `env = ...`) so those commands never need them, and fail in
    /// the hook instead: its error is printed and the exit status is 1. Calling `setup`
    /// again replaces the previous flags and hook. Secrets read from the environment
    /// should be marked `hide_env_values = true`, or `--help` shows them.
    ///
    /// ```
    /// use mcp_toolbelt::{ToolRegistry, cli::{App, clap}};
    ///
    /// struct Backend { url: String }
    ///
    /// #[derive(clap::Args)]
    /// struct BackendArgs {
    ///     /// Backend base URL
    ///     #[arg(long, env = "BACKEND_URL", default_value = "http://127.0.0.1:8000")]
    ///     backend_url: String,
    /// }
    ///
    /// let app = App::new("demo", "0.1.0", ToolRegistry::builder())
    ///     .setup(|args: BackendArgs, builder| {
    ///         if !args.backend_url.starts_with("http") {
    ///             return Err("--backend-url must be an http(s) URL".into());
    ///         }
    ///         Ok(builder.state(Backend { url: args.backend_url }))
    ///     });
    /// # drop(app);
    /// ```
    pub fn setup<G, F>(mut self, hook: F) -> App
    where
        G: clap::Args + FromArgMatches + 'static,
        F: FnOnce(G, ToolRegistryBuilder) -> Result<ToolRegistryBuilder, SetupError>
            + Send
            + 'static,
    {
        let carrier = G::augment_args(Command::new("setup"));
        self.globals = carrier
            .get_arguments()
            .filter(|arg| !arg.is_positional())
            .cloned()
            .collect();
        self.setup = Some(Box::new(move |matches, builder| {
            let values = G::from_arg_matches(matches).map_err(|err| Box::new(err) as SetupError)?;
            hook(values, builder)
        }));
        self
    }

    /// A hook that gets the registry once it is built, before the command uses it (only
    /// for commands that build one: a tool command, `call`, `serve`, `tools check`). For
    /// state that needs the registry itself, e.g. a tool that enables or disables other
    /// tools. Calling it again replaces the previous hook.
    ///
    /// ```
    /// use std::sync::{Arc, OnceLock};
    /// use mcp_toolbelt::{ToolRegistry, cli::App};
    ///
    /// let slot: Arc<OnceLock<ToolRegistry>> = Arc::default();
    /// let app = App::new("demo", "0.1.0", ToolRegistry::builder().state_arc(slot.clone()))
    ///     .on_built(move |registry| {
    ///         let _ = slot.set(registry.clone());
    ///     });
    /// # drop(app);
    /// ```
    pub fn on_built<F>(mut self, hook: F) -> App
    where
        F: FnOnce(&ToolRegistry) + Send + 'static,
    {
        self.on_built = Some(Box::new(hook));
        self
    }

    /// Add a subcommand of the server's own: `command` (any `clap::Command`, with its
    /// arguments, about text and subcommands) is listed in `--help` with the generated
    /// ones, and `run` calls `handler` with the command's own `ArgMatches` and the built
    /// registry (after the [`setup`](Self::setup) and [`on_built`](Self::on_built) hooks,
    /// so it sees their state) on the tokio runtime. The handler returns what a `main`
    /// may: `()`, an `ExitCode`, or a `Result` of them (an `Err` is printed, exit status
    /// 1). The global flags (`--log-level`, `--permissions-file`, the `setup` flags) apply
    /// to it as to every command.
    ///
    /// A name (or alias) that `serve`, `tools`, `call`, `help`, a tool's command or
    /// another added command already answers to is an error naming both, printed by any
    /// run (exit status 1); a clash with a tool's command shows once the tools' commands
    /// are built (every command line but `serve`, e.g. `--help` or `tools check`).
    ///
    /// ```rust,standalone_crate
    /// use std::process::ExitCode;
    /// use mcp_toolbelt::cli::{App, clap};
    /// use mcp_toolbelt::{mcp_tool, ToolRegistry};
    ///
    /// /// Add two integers.
    /// #[mcp_tool(name = "math_add")]
    /// async fn add(a: i64, b: i64) -> String {
    ///     (a + b).to_string()
    /// }
    ///
    /// let app = App::new("calc", "1.0.0", ToolRegistry::builder()).command(
    ///     clap::Command::new("count")
    ///         .about("Print how many tools are served")
    ///         .arg(clap::Arg::new("at-least").long("at-least").value_parser(clap::value_parser!(usize))),
    ///     |matches, registry| async move {
    ///         let served = registry.list_tools().len();
    ///         println!("{served}");
    ///         let floor = matches.get_one::<usize>("at-least").copied().unwrap_or(0);
    ///         if served >= floor { ExitCode::SUCCESS } else { ExitCode::from(3) }
    ///     },
    /// );
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert_eq!(app.run_from(["calc", "count", "--at-least", "2"]).await, ExitCode::from(3));
    /// # });
    /// ```
    pub fn command<F, Fut>(mut self, command: Command, handler: F) -> App
    where
        F: FnOnce(ArgMatches, ToolRegistry) -> Fut + Send + 'static,
        Fut: std::future::Future + Send + 'static,
        Fut::Output: std::process::Termination,
    {
        self.extensions.push(Extension::new(command, handler));
        self
    }

    /// The program name.
    ///
    /// ```
    /// # let app = mcp_toolbelt::cli::App::new("demo", "0.1.0", mcp_toolbelt::ToolRegistry::builder());
    /// assert_eq!(app.name(), "demo");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The version `--version` prints.
    ///
    /// ```
    /// # let app = mcp_toolbelt::cli::App::new("demo", "0.1.0", mcp_toolbelt::ToolRegistry::builder());
    /// assert_eq!(app.version(), "0.1.0");
    /// ```
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The description set with [`about`](Self::about).
    ///
    /// ```
    /// # let app = mcp_toolbelt::cli::App::new("demo", "0.1.0", mcp_toolbelt::ToolRegistry::builder());
    /// assert_eq!(app.get_about(), None);
    /// ```
    pub fn get_about(&self) -> Option<&str> {
        self.about.as_deref()
    }

    /// Parse `std::env::args_os()` and run the command on a new tokio runtime; returns
    /// the exit status (see [`run_from`](Self::run_from)). The whole `main` of a server.
    /// Do not call it from inside a runtime (use [`run_async`](Self::run_async)).
    ///
    /// `serve` over stdio runs on a current-thread runtime (one session: the fastest way
    /// to serve it, see `docs/performance.md`), every other command on a multi-threaded
    /// one. A tool that blocks its thread holds up the whole stdio session on it, so do
    /// blocking work with [`run_blocking`](crate::call::run_blocking).
    ///
    /// ```no_run
    /// fn main() -> std::process::ExitCode {
    ///     mcp_toolbelt::cli_app!(mcp_toolbelt::ToolRegistry::builder()).run()
    /// }
    /// ```
    pub fn run(self) -> ExitCode {
        let parsed = self.parse(std::env::args_os().collect());
        // One stdio session is served best by one thread: its pipes are non-blocking, and
        // a reply then costs no wake-up of another thread (blocking work goes to tokio's
        // blocking pool, `run_blocking`, either way). Everything else gets the workers.
        let runtime = if parsed.serves_stdio() {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        } else {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
        };
        match runtime {
            Ok(runtime) => {
                let code = runtime.block_on(parsed.run());
                // A tool still blocking a thread (cancelled work cannot stop it) must not
                // hold the exit.
                runtime.shutdown_timeout(std::time::Duration::from_millis(200));
                code
            }
            Err(err) => {
                print_err(&format!("error: cannot start the tokio runtime: {err}\n"));
                ExitCode::from(FAILURE)
            }
        }
    }

    /// Parse `std::env::args_os()` and run the command, on the caller's runtime.
    ///
    /// ```no_run
    /// #[tokio::main]
    /// async fn main() -> std::process::ExitCode {
    ///     mcp_toolbelt::cli_app!(mcp_toolbelt::ToolRegistry::builder()).run_async().await
    /// }
    /// ```
    pub async fn run_async(self) -> ExitCode {
        self.run_from(std::env::args_os()).await
    }

    /// Run the command line `args` (the first item is the program name, as in
    /// `std::env::args_os()`). Writes to this process's stdout and stderr.
    ///
    /// Exit status: 0 on success (and for `--help` / `--version`); 1 for an error result,
    /// `tools check` errors, a failed setup hook or registry build, or a server failure;
    /// 2 for a usage error (bad flags or values, unreadable permissions file).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let app = mcp_toolbelt::cli::App::new("demo", "0.1.0", mcp_toolbelt::ToolRegistry::builder());
    /// let status = app.run_from(["demo", "no-such-command"]).await;
    /// assert_eq!(status, std::process::ExitCode::from(2));
    /// # });
    /// ```
    pub async fn run_from<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        self.parse(args).run().await
    }

    /// Parse the command line `args` (printing help, version and errors); the command is
    /// not run yet.
    fn parse(self, args: Vec<OsString>) -> Parsed {
        let App {
            name,
            version,
            about,
            mut builder,
            globals,
            setup,
            on_built,
            extensions,
        } = self;
        if let Err(problem) = extension::check_built_in(&extensions) {
            print_err(&format!("error: {problem}\n"));
            return Parsed::Done(ExitCode::from(FAILURE));
        }

        // The permissions file decides which tools get a command: read it first.
        let scanned = prescan::permissions_file(&args);
        let permissions = match &scanned {
            None => None,
            Some(path) => match PermissionSet::from_file(path) {
                Ok(set) => Some(set),
                Err(err) => {
                    print_err(&format!("error: {err}\n"));
                    return Parsed::Done(ExitCode::from(USAGE));
                }
            },
        };
        if let Some(set) = permissions {
            builder = builder.allowed_permissions(set);
        }

        let build = Build {
            name,
            version,
            builder,
            setup,
            on_built,
        };
        // `serve` over stdio without flags, as MCP clients start a server, leaves nothing
        // to parse: with no setup flags (which may read the environment), it is served
        // without building the parser at all.
        if globals.is_empty() && build.setup.is_none() && serve::plain_stdio(&args) {
            logging::init(None);
            return Parsed::ServeStdio(build);
        }
        // `serve` needs neither the tools' commands nor their definitions (the registry
        // collects them once): parse a root that knows only `serve` first, and build the
        // whole tree for any other command line (its errors and help come from the tree).
        let serving = command::serve_root(&build.name, &build.version, about.as_deref(), &globals);
        if let Err(problem) = check_globals(&serving, &globals) {
            print_err(&format!("error: {problem}\n"));
            return Parsed::Done(ExitCode::from(FAILURE));
        }
        if let Ok(matches) = serving.try_get_matches_from(&args)
            && matches.subcommand_name() == Some("serve")
        {
            if let Err(status) = start(&matches, scanned.as_ref(), &build.name) {
                return Parsed::Done(status);
            }
            return Parsed::Serve { build, matches };
        }
        let Build {
            name,
            version,
            builder,
            setup,
            on_built,
        } = build;

        let defs = builder.definitions();
        let mut all_globals = command::builtin_globals();
        all_globals.extend(globals.iter().cloned());
        let plan = Plan::new(&defs, &command::reserved_longs(&all_globals));
        let tools: Vec<String> = defs.iter().map(|d| d.name().to_string()).collect();
        let mut categories: Vec<String> = defs
            .iter()
            .filter_map(|d| d.category().map(str::to_string))
            .collect();
        categories.sort();
        categories.dedup();
        let root = Root {
            name: &name,
            version: &version,
            about: about.as_deref(),
            extra_globals: &globals,
            tools: &tools,
            categories: &categories,
            plan: &plan,
        }
        .command();
        let root =
            check_globals(&root, &globals).and_then(|()| extension::attach(root, &extensions));
        let root = match root {
            Ok(root) => root,
            Err(problem) => {
                print_err(&format!("error: {problem}\n"));
                return Parsed::Done(ExitCode::from(FAILURE));
            }
        };
        let matches = match root.try_get_matches_from(&args) {
            Ok(matches) => matches,
            Err(err) => {
                let _ = err.print();
                return Parsed::Done(ExitCode::from(
                    u8::try_from(err.exit_code()).unwrap_or(USAGE),
                ));
            }
        };
        if let Err(status) = start(&matches, scanned.as_ref(), &name) {
            return Parsed::Done(status);
        }
        let run = Run {
            defs,
            plan,
            extensions,
            build: Build {
                name,
                version,
                builder,
                setup,
                on_built,
            },
        };
        Parsed::Command { run, matches }
    }
}

/// A command line parsed by [`App::parse`], ready to run.
enum Parsed {
    /// Nothing (more) to run: help, version or an error was printed.
    Done(ExitCode),
    /// `serve` over stdio without flags ([`serve::plain_stdio`]): nothing was parsed.
    ServeStdio(Build),
    /// `serve`, parsed by the root that knows only `serve`.
    Serve { build: Build, matches: ArgMatches },
    /// Any other command.
    Command { run: Run, matches: ArgMatches },
}

impl Parsed {
    /// Whether this is `serve` over stdio.
    fn serves_stdio(&self) -> bool {
        match self {
            Parsed::ServeStdio(_) => true,
            Parsed::Serve { matches, .. } => matches
                .subcommand_matches("serve")
                .is_some_and(serve::over_stdio),
            _ => false,
        }
    }

    async fn run(self) -> ExitCode {
        match self {
            Parsed::Done(status) => status,
            Parsed::ServeStdio(build) => build.serve(None).await,
            Parsed::Serve { build, matches } => {
                let Some(("serve", sub)) = matches.subcommand() else {
                    return ExitCode::from(USAGE);
                };
                build.serve(Some((&matches, sub))).await
            }
            Parsed::Command { run, matches } => run.dispatch(&matches).await,
        }
    }
}

/// After parsing: check that the `--permissions-file` read before parsing is the one
/// parsed (`scanned`), and start logging (with `serve --otlp-endpoint`, exporting as
/// service `name`).
fn start(matches: &ArgMatches, scanned: Option<&PathBuf>, name: &str) -> Result<(), ExitCode> {
    if matches.get_one::<PathBuf>(PERMISSIONS_ARG) != scanned {
        print_err(
            "error: could not read --permissions-file before parsing; put it as `--permissions-file FILE` before the command\n",
        );
        return Err(ExitCode::from(USAGE));
    }
    let level = matches.get_one::<String>(LOG_LEVEL_ARG).map(String::as_str);
    #[cfg(not(feature = "otel"))]
    let _ = name;
    #[cfg(feature = "otel")]
    if let Some(serve) = matches.subcommand_matches("serve")
        && let Some(url) = serve.get_one::<String>("otlp_endpoint")
    {
        let ratio = serve
            .get_one::<f64>("otlp_sample_ratio")
            .copied()
            .unwrap_or(1.0);
        return match crate::server::telemetry::otel::Otel::new(url)
            .service_name(name)
            .sample_ratio(ratio)
            .build()
        {
            Ok(otel) => {
                logging::init_with_otel(level, &otel);
                let _ = logging::OTEL.set(otel);
                Ok(())
            }
            Err(err) => {
                let flag = match err {
                    crate::server::telemetry::otel::OtelError::SampleRatio(_) => {
                        "--otlp-sample-ratio"
                    }
                    _ => "--otlp-endpoint",
                };
                print_err(&format!("error: {flag}: {err}\n"));
                Err(ExitCode::from(USAGE))
            }
        };
    }
    logging::init(level);
    Ok(())
}

/// The flags of [`App::setup`] must not reuse a built-in flag or id (clap would reject
/// the whole command line).
fn check_globals(root: &Command, globals: &[Arg]) -> Result<(), String> {
    let clash = |ours: &Arg, theirs: &Arg| {
        ours.get_id() == theirs.get_id()
            || (ours.get_long().is_some() && ours.get_long() == theirs.get_long())
            || (ours.get_short().is_some() && ours.get_short() == theirs.get_short())
    };
    let reserved_short = |arg: &Arg| matches!(arg.get_short(), Some('h' | 'V'));
    let reserved_long = |arg: &Arg| matches!(arg.get_long(), Some("help" | "version" | "json"));
    for global in globals {
        if reserved_short(global) || reserved_long(global) {
            return Err(format!(
                "App::setup flag {:?} uses a name the command line reserves (-h, -V, --help, --version, --json)",
                global.get_id()
            ));
        }
        let mut stack = vec![root];
        while let Some(command) = stack.pop() {
            for arg in command.get_arguments() {
                let ours = globals.iter().any(|g| std::ptr::eq(g, arg))
                    || (arg.is_global_set() && globals.iter().any(|g| g.get_id() == arg.get_id()));
                if !ours && clash(global, arg) {
                    return Err(format!(
                        "App::setup flag {:?} clashes with the `{}` command's flag {:?}",
                        global.get_id(),
                        command.get_name(),
                        arg.get_id()
                    ));
                }
            }
            stack.extend(command.get_subcommands());
        }
    }
    Ok(())
}

/// What builds the registry of a command that needs one.
struct Build {
    name: String,
    version: String,
    builder: ToolRegistryBuilder,
    setup: Option<SetupFn>,
    on_built: Option<BuiltFn>,
}

impl Build {
    /// `serve`: `Some((matches, sub))` with its flags `sub` (`matches`: the whole command
    /// line's), `None` for the plain stdio start (no setup hook, nothing parsed).
    async fn serve(self, parsed: Option<(&ArgMatches, &ArgMatches)>) -> ExitCode {
        let (matches, sub) = parsed.unzip();
        match self.registry(matches) {
            Ok((registry, name, version)) => serve::run(registry, &name, &version, sub).await,
            Err(status) => status,
        }
    }

    /// Run the setup hook and build the registry; on failure the error is printed and
    /// the exit status returned. `matches` is `None` only when there is no setup hook
    /// (the plain stdio start).
    fn registry(
        self,
        matches: Option<&ArgMatches>,
    ) -> Result<(ToolRegistry, String, String), ExitCode> {
        let mut builder = self.builder;
        if let (Some(setup), Some(matches)) = (self.setup, matches) {
            builder = setup(matches, builder).map_err(|err| {
                print_err(&format!("error: {err}\n"));
                ExitCode::from(FAILURE)
            })?;
        }
        let registry = builder.build().map_err(|err| {
            print_err(&format!("error: {err}\n"));
            ExitCode::from(FAILURE)
        })?;
        if let Some(on_built) = self.on_built {
            on_built(&registry);
        }
        Ok((registry, self.name, self.version))
    }
}

/// One parsed command line being run.
struct Run {
    defs: Vec<Arc<ToolDef>>,
    plan: Plan,
    /// The commands of [`App::command`].
    extensions: Vec<Extension>,
    build: Build,
}

impl Run {
    async fn dispatch(self, matches: &ArgMatches) -> ExitCode {
        let Some((word, sub)) = matches.subcommand() else {
            return ExitCode::from(USAGE);
        };
        match word {
            "tools" => self.tools(matches, sub).await,
            "call" => {
                let tool = sub.get_one::<String>("name").cloned().unwrap_or_default();
                let arguments = flags::json_input(sub);
                let json = flags::wants_json_output(sub);
                self.call(matches, &tool, arguments, json).await
            }
            // Parsed by the `serve` root first (`App::parse`); the whole tree has it too.
            "serve" => self.build.serve(Some((matches, sub))).await,
            _ if self.extensions.iter().any(|e| e.name() == word) => {
                let Run {
                    mut extensions,
                    build,
                    ..
                } = self;
                let Some(at) = extensions.iter().position(|e| e.name() == word) else {
                    return ExitCode::from(USAGE);
                };
                match build.registry(Some(matches)) {
                    Ok((registry, _, _)) => {
                        extensions.swap_remove(at).run(sub.clone(), registry).await
                    }
                    Err(status) => status,
                }
            }
            _ => {
                let leaf = match self.plan.tree.get(word) {
                    Some(Node::Leaf(leaf)) => Some((leaf, sub)),
                    Some(Node::Group { children, .. }) => {
                        sub.subcommand().and_then(|(action, leaf_matches)| {
                            children.get(action).map(|leaf| (leaf, leaf_matches))
                        })
                    }
                    None => None,
                };
                let Some((leaf, leaf_matches)) = leaf else {
                    return ExitCode::from(USAGE);
                };
                let tool = leaf.def.name().to_string();
                let arguments = leaf.flags.arguments(leaf_matches);
                let json = flags::wants_json_output(leaf_matches);
                self.call(matches, &tool, arguments, json).await
            }
        }
    }

    async fn call(
        self,
        matches: &ArgMatches,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        json: bool,
    ) -> ExitCode {
        match self.build.registry(Some(matches)) {
            Ok((registry, _, _)) => invoke::call(&registry, tool, arguments, json).await,
            Err(status) => status,
        }
    }

    async fn tools(self, matches: &ArgMatches, sub: &ArgMatches) -> ExitCode {
        let Some((what, args)) = sub.subcommand() else {
            return ExitCode::from(USAGE);
        };
        let json = args.try_get_one::<bool>("json").ok().flatten() == Some(&true);
        match what {
            "list" => {
                let category = args.get_one::<String>("category").map(String::as_str);
                print_out(&inspect::list(&self.defs, &self.plan, category, json));
            }
            "show" => {
                let name = args.get_one::<String>("name").map(String::as_str);
                let Some(def) = self.defs.iter().find(|d| Some(d.name()) == name) else {
                    return ExitCode::from(USAGE);
                };
                print_out(&inspect::show(def, &self.plan, &self.build.name, json));
            }
            "matrix" => print_out(&inspect::matrix(&self.defs)),
            "explain" => {
                let registry = match self.build.registry(Some(matches)) {
                    Ok((registry, _, _)) => registry,
                    Err(status) => return status,
                };
                match explain::explain(&registry, args) {
                    Ok(text) => print_out(&text),
                    Err(problem) => {
                        print_err(&format!("error: {problem}\n"));
                        return ExitCode::from(USAGE);
                    }
                }
            }
            "check" => {
                let plan = self.plan.clone();
                let registry = match self.build.registry(Some(matches)) {
                    Ok((registry, _, _)) => registry,
                    Err(status) => return status,
                };
                let (mut report, mut failed) =
                    inspect::check(registry.validation_report(), &plan, registry.is_empty());
                for provider in args.get_many::<String>("provider").into_iter().flatten() {
                    let Ok(provider) = provider.parse::<Provider>() else {
                        return ExitCode::from(USAGE);
                    };
                    let checked = registry.provider_report(provider);
                    failed |= !checked.is_acceptable();
                    report.push_str(&checked.to_string());
                }
                print_out(&report);
                if failed {
                    return ExitCode::from(FAILURE);
                }
            }
            _ => return ExitCode::from(USAGE),
        }
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::result::ToolResult;

    fn tool(name: &str) -> ToolDef {
        ToolDef::builder(name.to_string())
            .description("A tool for command-line tests.")
            .handler(|_args, _ctx| async { Ok(ToolResult::text("done")) })
            .build()
            .unwrap()
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn check_fails_on_registry_errors() {
        let builder = ToolRegistry::builder()
            .include_linked(false)
            .lenient(true)
            .tool(tool("dup_x"))
            .tool(tool("dup_x"));
        let app = App::new("t", "1", builder);
        assert_eq!(
            block_on(app.run_from(["t", "tools", "check"])),
            ExitCode::from(FAILURE)
        );
        let clean = ToolRegistry::builder()
            .include_linked(false)
            .tool(tool("dup_x"));
        let app = App::new("t", "1", clean);
        assert_eq!(
            block_on(app.run_from(["t", "tools", "check"])),
            ExitCode::SUCCESS
        );
    }

    #[test]
    fn check_with_a_provider_fails_on_what_cannot_be_rewritten() {
        let either = ToolDef::builder("pick_either")
            .description("A tool taking a string or an integer.")
            .input_schema(serde_json::json!({"type": "object", "properties": {
                "value": {"type": ["string", "integer"], "description": "Either"}}}))
            .handler(|_args, _ctx| async { Ok(ToolResult::text("done")) })
            .build()
            .unwrap();
        let app = |provider: &str| {
            let builder = ToolRegistry::builder()
                .include_linked(false)
                .tool(either.clone());
            block_on(App::new("t", "1", builder).run_from([
                "t",
                "tools",
                "check",
                "--provider",
                provider,
            ]))
        };
        // Gemini takes one type per value; OpenAI and Anthropic take the union.
        assert_eq!(app("gemini"), ExitCode::from(FAILURE));
        assert_eq!(app("openai"), ExitCode::SUCCESS);
        assert_eq!(app("anthropic"), ExitCode::SUCCESS);
    }

    #[test]
    fn check_fails_on_an_empty_registry() {
        // The usual cause: the tools are in a library the binary does not link.
        let empty = App::new("t", "1", ToolRegistry::builder().include_linked(false));
        assert_eq!(
            block_on(empty.run_from(["t", "tools", "check"])),
            ExitCode::from(FAILURE)
        );
        let (text, failed) = inspect::check(
            ToolRegistry::builder()
                .include_linked(false)
                .build()
                .unwrap()
                .validation_report(),
            &Plan::default(),
            true,
        );
        assert!(failed);
        assert!(
            text.starts_with("error: the registry serves no tools"),
            "{text}"
        );
        assert!(text.contains("tool_library!"), "the fix is named: {text}");
        assert!(
            text.ends_with("1 error(s), 0 warning(s)\n"),
            "said once: {text}"
        );
    }

    #[test]
    fn tools_run_and_unknown_commands_are_usage_errors() {
        let builder = || {
            ToolRegistry::builder()
                .include_linked(false)
                .tool(tool("demo_run"))
        };
        let run = |args: &[&str]| block_on(App::new("t", "1", builder()).run_from(args.to_vec()));
        assert_eq!(run(&["t", "demo", "run"]), ExitCode::SUCCESS);
        assert_eq!(run(&["t", "demo", "walk"]), ExitCode::from(USAGE));
        assert_eq!(run(&["t", "call", "demo_run"]), ExitCode::SUCCESS);
        assert_eq!(run(&["t", "call", "demo_walk"]), ExitCode::from(USAGE));
    }

    #[derive(Debug, clap::Args)]
    struct Clashing {
        /// Clashes with `serve --stdio` (in every build with `cli`).
        #[arg(long)]
        stdio: Option<String>,
    }

    #[derive(Debug, clap::Args)]
    struct Reserved {
        /// Clashes with `--json`.
        #[arg(long = "json")]
        payload: Option<String>,
    }

    #[test]
    fn setup_flags_may_not_reuse_built_in_names() {
        let app = App::new("t", "1", ToolRegistry::builder().include_linked(false))
            .setup(|_: Clashing, builder| Ok(builder));
        assert_eq!(
            block_on(app.run_from(["t", "tools", "list"])),
            ExitCode::from(FAILURE)
        );
        let app = App::new("t", "1", ToolRegistry::builder().include_linked(false))
            .setup(|_: Reserved, builder| Ok(builder));
        assert_eq!(
            block_on(app.run_from(["t", "tools", "list"])),
            ExitCode::from(FAILURE)
        );
    }

    #[derive(Debug, clap::Args)]
    struct Url {
        /// Backend URL.
        #[arg(long)]
        url: Option<String>,
    }

    /// An app with one tool, `demo_run` (command `demo run`).
    fn demo_app() -> App {
        App::new(
            "t",
            "1",
            ToolRegistry::builder()
                .include_linked(false)
                .tool(tool("demo_run")),
        )
    }

    #[test]
    fn the_setup_hook_runs_only_when_tools_are_called() {
        let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let app = |ran: Arc<std::sync::atomic::AtomicBool>| {
            demo_app().setup(move |args: Url, builder| {
                ran.store(true, std::sync::atomic::Ordering::SeqCst);
                match args.url {
                    Some(_) => Ok(builder),
                    None => Err("--url is required".into()),
                }
            })
        };
        let status = block_on(app(ran.clone()).run_from(["t", "tools", "list"]));
        assert_eq!(status, ExitCode::SUCCESS);
        assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
        let status = block_on(app(ran.clone()).run_from(["t", "demo", "run"]));
        assert_eq!(status, ExitCode::from(FAILURE));
        assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
        let status = block_on(app(ran.clone()).run_from(["t", "demo", "run", "--url", "u"]));
        assert_eq!(status, ExitCode::SUCCESS);
    }

    /// `serve` is parsed by a root without the tools' commands: the setup flags still
    /// reach the hook, before or after the command word, and bad flags are usage errors.
    #[test]
    fn serve_gets_the_setup_flags_without_the_tool_commands() {
        let seen: Arc<std::sync::Mutex<Vec<Option<String>>>> = Arc::default();
        let app = |seen: Arc<std::sync::Mutex<Vec<Option<String>>>>| {
            demo_app().setup(move |args: Url, _builder| {
                seen.lock().unwrap().push(args.url);
                Err("stopping before serving".into())
            })
        };
        for args in [
            &["t", "--url", "u", "serve", "--stdio"][..],
            &["t", "serve", "--url", "v"],
        ] {
            let status = block_on(app(seen.clone()).run_from(args));
            assert_eq!(status, ExitCode::from(FAILURE), "{args:?}");
        }
        assert_eq!(
            *seen.lock().unwrap(),
            [Some("u".to_string()), Some("v".to_string())]
        );
        let status = block_on(app(seen.clone()).run_from(["t", "serve", "--no-such-flag"]));
        assert_eq!(status, ExitCode::from(USAGE));
        // The other commands still have the whole tree.
        let status = block_on(app(seen.clone()).run_from(["t", "tools", "list"]));
        assert_eq!(status, ExitCode::SUCCESS);
        assert_eq!(seen.lock().unwrap().len(), 2);
    }

    #[test]
    fn the_on_built_hook_sees_the_registry_commands_use() {
        let seen: Arc<std::sync::Mutex<Option<ToolRegistry>>> = Arc::default();
        let app = |seen: Arc<std::sync::Mutex<Option<ToolRegistry>>>| {
            demo_app().on_built(move |registry| *seen.lock().unwrap() = Some(registry.clone()))
        };
        let status = block_on(app(seen.clone()).run_from(["t", "tools", "list"]));
        assert_eq!(status, ExitCode::SUCCESS);
        assert!(seen.lock().unwrap().is_none());
        let status = block_on(app(seen.clone()).run_from(["t", "demo", "run"]));
        assert_eq!(status, ExitCode::SUCCESS);
        let registry = seen.lock().unwrap().take().expect("the hook ran");
        assert!(registry.get("demo_run").is_some());
        // The hook's registry is the one the command then uses: disabling the tool there
        // makes the call fail.
        let app = App::new(
            "t",
            "1",
            ToolRegistry::builder()
                .include_linked(false)
                .tool(tool("demo_run")),
        )
        .on_built(|registry| registry.disable("demo_run").unwrap());
        assert_ne!(
            block_on(app.run_from(["t", "demo", "run"])),
            ExitCode::SUCCESS
        );
    }

    /// An added command: dispatched with its own matches and the registry the setup hook
    /// built, its handler's exit status and error returned.
    #[test]
    fn an_added_command_runs_with_its_matches_and_the_built_registry() {
        struct Seen(String);
        let app = || {
            demo_app()
                .setup(|args: Url, builder| Ok(builder.state(Seen(args.url.unwrap_or_default()))))
                .command(
                    Command::new("inspect")
                        .alias("look")
                        .arg(Arg::new("tool").required(true)),
                    |matches, registry| async move {
                        let tool = matches
                            .get_one::<String>("tool")
                            .cloned()
                            .unwrap_or_default();
                        let seen = registry.state::<Seen>().map(|s| s.0.clone());
                        if registry.get(&tool).is_none() {
                            return Err(format!("no tool {tool}"));
                        }
                        Ok(if seen.as_deref() == Some("u") {
                            ExitCode::from(7)
                        } else {
                            ExitCode::SUCCESS
                        })
                    },
                )
        };
        let run = |args: &[&str]| block_on(app().run_from(args));
        assert_eq!(run(&["t", "inspect", "demo_run"]), ExitCode::SUCCESS);
        assert_eq!(
            run(&["t", "--url", "u", "look", "demo_run"]),
            ExitCode::from(7)
        );
        assert_eq!(run(&["t", "inspect", "nothing"]), ExitCode::from(FAILURE));
        assert_eq!(run(&["t", "inspect"]), ExitCode::from(USAGE));
        // The generated commands still work next to it.
        assert_eq!(run(&["t", "demo", "run"]), ExitCode::SUCCESS);
    }

    #[test]
    fn an_added_command_may_not_reuse_a_name() {
        let ok = |_: ArgMatches, _: ToolRegistry| async {};
        let clashes = [
            demo_app().command(Command::new("tools"), ok),
            demo_app().command(Command::new("mine").alias("serve"), ok),
            demo_app().command(Command::new("demo"), ok),
            demo_app()
                .command(Command::new("a").alias("b"), ok)
                .command(Command::new("b"), ok),
        ];
        for app in clashes {
            assert_eq!(
                block_on(app.run_from(["t", "--help"])),
                ExitCode::from(FAILURE)
            );
        }
        // The messages name both commands (the generated tree here: one tool group `demo`).
        let problem = |app: App| {
            extension::check_built_in(&app.extensions)
                .and_then(|()| {
                    let root = Command::new("t").subcommand(Command::new("demo"));
                    extension::attach(root, &app.extensions).map(drop)
                })
                .unwrap_err()
        };
        assert_eq!(
            problem(demo_app().command(Command::new("mine").alias("serve"), ok)),
            "App::command `mine` clashes with the built-in command `serve`"
        );
        assert_eq!(
            problem(demo_app().command(Command::new("demo"), ok)),
            "App::command `demo` clashes with the tools' command `demo` (rename one: the tool's with `cli_category`/`cli_name`)"
        );
        assert_eq!(
            problem(
                demo_app()
                    .command(Command::new("a").alias("b"), ok)
                    .command(Command::new("b"), ok)
            ),
            "App::command `b` clashes with the App::command `a` (both answer to `b`)"
        );
    }
}
