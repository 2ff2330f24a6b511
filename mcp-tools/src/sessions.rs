//! Sessions that belong to their caller, bounded per caller, each behind its own lock.
//!
//! A tool that keeps something alive between calls (a debugger, a database transaction, a
//! browser) registers a [`Sessions<S>`] as state. Every call names its session by id, and
//! [`Sessions::lock`] resolves it for the [`Caller`] — a session of another caller answers
//! exactly like an unknown id — and takes the session's lock, so two calls on one session
//! never interleave while calls on different sessions run side by side. An unknown id is a
//! [`Failure`] with the code `session_not_found` and the next step the registry was given
//! ("start a session first: …"), returned before the tool touches anything.
//!
//! ```rust,standalone_crate
//! use mcp_toolbelt::envelope::{Envelope, Failure};
//! use mcp_toolbelt::sessions::Sessions;
//! use mcp_toolbelt::{mcp_tool, Caller, State, ToolContext, ToolRegistry};
//!
//! struct Counter { hits: u32 }
//!
//! /// Start a counter.
//! #[mcp_tool(name = "counter_start")]
//! async fn counter_start(sessions: State<Sessions<Counter>>, caller: Caller) -> Envelope<String> {
//!     match sessions.insert(&caller, Counter { hits: 0 }) {
//!         Ok(id) => Envelope::ok(format!("started {id}"), id).next_step("call counter_hit with the id"),
//!         Err(failure) => failure.into(),
//!     }
//! }
//!
//! /// Count one hit.
//! #[mcp_tool(name = "counter_hit")]
//! async fn counter_hit(sessions: State<Sessions<Counter>>, caller: Caller, id: String) -> Envelope<u32> {
//!     let mut counter = match sessions.lock(&caller, &id).await {
//!         Ok(guard) => guard,
//!         Err(failure) => return failure.into(),
//!     };
//!     counter.hits += 1;
//!     Envelope::ok(format!("{} hits", counter.hits), counter.hits)
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = ToolRegistry::builder()
//!     .state(Sessions::<Counter>::new(2, "start a session first: call counter_start"))
//!     .build()
//!     .unwrap();
//! let started = registry.call_tool(COUNTER_START_TOOL, serde_json::json!({}), ToolContext::default()).await.unwrap();
//! let id = started.structured_content().unwrap()["data"].as_str().unwrap().to_string();
//! let hit = registry.call_tool(COUNTER_HIT_TOOL, serde_json::json!({"id": id}), ToolContext::default()).await.unwrap();
//! assert_eq!(hit.structured_content().unwrap()["data"], 1);
//! let unknown = registry.call_tool(COUNTER_HIT_TOOL, serde_json::json!({"id": "s99"}), ToolContext::default()).await.unwrap();
//! assert_eq!(unknown.structured_content().unwrap()["error"]["code"], "session_not_found");
//! assert!(unknown.text_content().contains("start a session first: call counter_start"));
//! # });
//! ```

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;

use crate::caller::Caller;
use crate::context::{FromContext, State, StateRequirement, ToolContext};
use crate::envelope::Failure;
use crate::output::ToolError;
use crate::poison::LockIgnoringPoison;
use crate::schema::JsonObject;

/// How long [`Sessions::lock`] waits for a session another call holds, by default.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// The owner key of a caller: its subject, else its client id, else `local` (stdio, the
/// command line, in-process calls).
///
/// ```
/// assert_eq!(mcp_toolbelt::sessions::owner_of(&mcp_toolbelt::Caller::local()), "local");
/// ```
pub fn owner_of(caller: &Caller) -> String {
    match (caller.subject(), caller.client_id()) {
        (Some(subject), _) => format!("subject:{subject}"),
        (None, Some(client)) => format!("client:{client}"),
        (None, None) => "local".to_string(),
    }
}

/// One session: its id, its owner and its value behind a lock.
pub struct Session<S> {
    id: String,
    owner: String,
    value: Arc<tokio::sync::Mutex<S>>,
}

impl<S> Session<S> {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The owner key ([`owner_of`] its creator).
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Take the session's lock, waiting at most `timeout` (then `session_busy`).
    pub async fn lock_within(&self, timeout: Duration) -> Result<SessionGuard<S>, Failure> {
        match tokio::time::timeout(timeout, self.value.clone().lock_owned()).await {
            Ok(guard) => Ok(SessionGuard {
                id: self.id.clone(),
                guard,
            }),
            Err(_) => Err(Failure::timeout(
                "session_busy",
                format!(
                    "session '{}' is busy with another call (waited {} ms)",
                    self.id,
                    timeout.as_millis()
                ),
            )
            .next_step("retry when the other call has finished")),
        }
    }

    /// Take the session's lock without waiting: `None` while another call holds it
    /// (listings use it to show a busy session as busy instead of waiting).
    pub fn try_lock(&self) -> Option<SessionGuard<S>> {
        let guard = self.value.clone().try_lock_owned().ok()?;
        Some(SessionGuard {
            id: self.id.clone(),
            guard,
        })
    }
}

/// Exclusive access to one session's value for the length of a call (derefs to `S`).
pub struct SessionGuard<S> {
    id: String,
    guard: OwnedMutexGuard<S>,
}

impl<S> SessionGuard<S> {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl<S> Deref for SessionGuard<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.guard
    }
}

impl<S> DerefMut for SessionGuard<S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.guard
    }
}

impl<S> std::fmt::Debug for Session<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for SessionGuard<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionGuard")
            .field("id", &self.id)
            .field("value", &*self.guard)
            .finish()
    }
}

impl<S> std::fmt::Debug for Sessions<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("live", &self.len())
            .field("per_caller", &self.per_caller)
            .finish_non_exhaustive()
    }
}

struct Table<S> {
    next_id: u64,
    sessions: HashMap<String, Arc<Session<S>>>,
}

/// The sessions of every caller: see the [module docs](self).
///
/// ```
/// use mcp_toolbelt::sessions::Sessions;
/// use mcp_toolbelt::Caller;
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let sessions = Sessions::new(1, "start one first");
/// let me = Caller::local();
/// let id = sessions.insert(&me, 5u32).unwrap();
/// assert_eq!(*sessions.lock(&me, &id).await.unwrap(), 5);
/// // One per caller here: the second is refused with a clear code.
/// assert_eq!(sessions.insert(&me, 6).unwrap_err().code(), "too_many_sessions");
/// sessions.remove(&me, &id).unwrap();
/// assert_eq!(sessions.lock(&me, &id).await.err().unwrap().code(), "session_not_found");
/// # });
/// ```
pub struct Sessions<S> {
    table: Mutex<Table<S>>,
    per_caller: usize,
    start_hint: String,
    lock_timeout: Duration,
}

impl<S> Sessions<S> {
    /// Sessions bounded to `per_caller` live ones per caller; `start_hint` is the next step
    /// an unknown id answers with (`"start a session first: call debug_start"`).
    pub fn new(per_caller: usize, start_hint: impl Into<String>) -> Self {
        Sessions {
            table: Mutex::new(Table {
                next_id: 1,
                sessions: HashMap::new(),
            }),
            per_caller,
            start_hint: start_hint.into(),
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
        }
    }

    /// How long [`lock`](Self::lock) waits for a session held by another call before
    /// answering `session_busy` (default [`DEFAULT_LOCK_TIMEOUT`]).
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// The most live sessions one caller may hold.
    pub fn per_caller(&self) -> usize {
        self.per_caller
    }

    fn table(&self) -> MutexGuard<'_, Table<S>> {
        self.table.lock_ignoring_poison()
    }

    fn not_found(&self, id: &str) -> Failure {
        let shown = crate::output::error::echo(id);
        Failure::not_found("session_not_found", format!("no session '{shown}'"))
            .next_step(self.start_hint.clone())
    }

    /// Check that `caller` may add a session (under its bound), without adding one: lets a
    /// tool refuse before it starts anything costly. [`insert`](Self::insert) checks again.
    pub fn check_room(&self, caller: &Caller) -> Result<(), Failure> {
        let owner = owner_of(caller);
        let table = self.table();
        self.room_for(&table, &owner)
    }

    fn room_for(&self, table: &Table<S>, owner: &str) -> Result<(), Failure> {
        let held = table.sessions.values().filter(|s| s.owner == owner).count();
        if held >= self.per_caller {
            return Err(Failure::conflict(
                "too_many_sessions",
                format!(
                    "you already have {held} sessions (at most {} per caller)",
                    self.per_caller
                ),
            )
            .next_step("stop a session you no longer need, then start again"));
        }
        Ok(())
    }

    /// Add a session for `caller`; its new id, or `too_many_sessions` past the bound (the
    /// value is then dropped).
    pub fn insert(&self, caller: &Caller, value: S) -> Result<String, Failure> {
        let owner = owner_of(caller);
        let mut table = self.table();
        self.room_for(&table, &owner)?;
        let id = format!("s{}", table.next_id);
        table.next_id += 1;
        let session = Session {
            id: id.clone(),
            owner,
            value: Arc::new(tokio::sync::Mutex::new(value)),
        };
        table.sessions.insert(id.clone(), Arc::new(session));
        Ok(id)
    }

    /// The session `id` of `caller`, or `session_not_found` (also for another caller's).
    pub fn get(&self, caller: &Caller, id: &str) -> Result<Arc<Session<S>>, Failure> {
        let owner = owner_of(caller);
        let table = self.table();
        match table.sessions.get(id) {
            Some(session) if session.owner == owner => Ok(session.clone()),
            _ => Err(self.not_found(id)),
        }
    }

    /// Resolve `id` for `caller` and take its lock, waiting at most the lock timeout (then
    /// `session_busy`). Calls holding the guard on one session run one at a time.
    pub async fn lock(&self, caller: &Caller, id: &str) -> Result<SessionGuard<S>, Failure> {
        self.get(caller, id)?.lock_within(self.lock_timeout).await
    }

    /// Take session `id` of `caller` out of the table (no new call can find it); the
    /// value goes when the last call holding it ends.
    pub fn remove(&self, caller: &Caller, id: &str) -> Result<Arc<Session<S>>, Failure> {
        let owner = owner_of(caller);
        let mut table = self.table();
        match table.sessions.get(id) {
            Some(session) if session.owner == owner => {}
            _ => return Err(self.not_found(id)),
        }
        Ok(table.sessions.remove(id).expect("checked above"))
    }

    /// The sessions of `caller`, oldest first.
    pub fn list(&self, caller: &Caller) -> Vec<Arc<Session<S>>> {
        let owner = owner_of(caller);
        let table = self.table();
        let mut mine: Vec<_> = table
            .sessions
            .values()
            .filter(|s| s.owner == owner)
            .cloned()
            .collect();
        mine.sort_by_key(|s| s.id[1..].parse::<u64>().unwrap_or(u64::MAX));
        mine
    }

    /// How many sessions there are, of all callers.
    pub fn len(&self) -> usize {
        self.table().sessions.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Take every session out (at shutdown).
    pub fn drain(&self) -> Vec<Arc<Session<S>>> {
        self.table().sessions.drain().map(|(_, s)| s).collect()
    }
}

/// The argument [`SessionRef`] reads: `session_id`.
pub const SESSION_ID_ARGUMENT: &str = "session_id";

/// An extractor: the caller's session named by the call's `session_id` argument, resolved
/// before the fn runs. An unknown id — or another caller's — fails the call there with
/// `session_not_found` and the registry's "start a session first: …" step (in the error
/// form of the fn's return type: an [`Envelope`](crate::envelope::Envelope)'s when it
/// returns one). Then [`lock`](SessionRef::lock) takes the session for the call.
///
/// Mark the parameter `#[extract]` (the macro knows only `State`, `Caller` and
/// `ToolContext` by name). The tool still declares `session_id: String` as an argument (so it is in the schema and
/// validated); the extractor reads that same value. It needs a `Sessions<S>` registered as
/// state (`build()` fails without one).
///
/// ```rust,standalone_crate
/// use mcp_toolbelt::envelope::{Envelope, Failure};
/// use mcp_toolbelt::sessions::{SessionRef, Sessions};
/// use mcp_toolbelt::{mcp_tool, Caller, State, ToolContext, ToolRegistry};
///
/// /// Open a scratch pad.
/// #[mcp_tool(name = "pad_open")]
/// async fn pad_open(pads: State<Sessions<Vec<String>>>, caller: Caller) -> Result<Envelope<String>, Failure> {
///     let id = pads.insert(&caller, Vec::new())?;
///     Ok(Envelope::ok(format!("opened {id}"), id))
/// }
///
/// /// Write a line on a pad.
/// #[mcp_tool(name = "pad_write")]
/// async fn pad_write(
///     #[extract] pad: SessionRef<Vec<String>>,
///     /// The pad, as pad_open answered
///     session_id: String,
///     line: String,
/// ) -> Result<Envelope<usize>, Failure> {
///     let mut pad = pad.lock().await?;
///     pad.push(line);
///     Ok(Envelope::ok(format!("{session_id} has {} lines", pad.len()), pad.len()))
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = ToolRegistry::builder()
///     .state(Sessions::<Vec<String>>::new(4, "start a session first: call pad_open"))
///     .build()
///     .unwrap();
/// let ctx = ToolContext::default;
/// let opened = registry.call_tool(PAD_OPEN_TOOL, serde_json::json!({}), ctx()).await.unwrap();
/// let id = opened.structured_content().unwrap()["data"].clone();
/// let wrote = registry.call_tool(PAD_WRITE_TOOL, serde_json::json!({"session_id": id, "line": "hi"}), ctx()).await.unwrap();
/// assert_eq!(wrote.structured_content().unwrap()["data"], 1);
/// // An unknown pad: refused before pad_write runs, in the envelope's error form.
/// let unknown = registry.call_tool(PAD_WRITE_TOOL, serde_json::json!({"session_id": "s9", "line": "x"}), ctx()).await.unwrap();
/// assert!(unknown.is_error());
/// assert_eq!(unknown.structured_content().unwrap()["error"]["code"], "session_not_found");
/// assert!(unknown.text_content().contains("start a session first: call pad_open"));
/// # });
/// ```
pub struct SessionRef<S> {
    session: Arc<Session<S>>,
    lock_timeout: Duration,
}

impl<S> SessionRef<S> {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.session.id
    }

    /// The session itself (to [`try_lock`](Session::try_lock) it, for instance).
    pub fn session(&self) -> &Arc<Session<S>> {
        &self.session
    }

    /// Take the session's lock for this call, waiting at most the registry's lock timeout
    /// (then `session_busy`): calls holding it on one session run one at a time.
    pub async fn lock(self) -> Result<SessionGuard<S>, Failure> {
        self.session.lock_within(self.lock_timeout).await
    }
}

impl<S> std::fmt::Debug for SessionRef<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SessionRef").field(&self.session.id).finish()
    }
}

impl<S: Send + 'static> FromContext for SessionRef<S> {
    fn from_context(_: &ToolContext) -> Result<Self, ToolError> {
        Err(ToolError::internal(
            "SessionRef reads the call's session_id argument: it extracts only for #[mcp_tool] fns",
        ))
    }

    fn from_call(ctx: &ToolContext, arguments: &JsonObject) -> Result<Self, ToolError> {
        let sessions = State::<Sessions<S>>::from_context(ctx)?;
        let Some(id) = arguments.get(SESSION_ID_ARGUMENT).and_then(|v| v.as_str()) else {
            return Err(ToolError::validation(format!(
                "the `{SESSION_ID_ARGUMENT}` argument is missing or not a string"
            ))
            .with_code("session_id_missing")
            .with_action(sessions.start_hint.clone()));
        };
        let session = sessions.get(ctx.caller(), id)?;
        Ok(SessionRef {
            session,
            lock_timeout: sessions.lock_timeout,
        })
    }

    fn requirement() -> Option<StateRequirement> {
        <State<Sessions<S>> as FromContext>::requirement()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::PermissionSet;

    fn caller(subject: &str) -> Caller {
        Caller::new(
            Some(subject.to_string()),
            None,
            Vec::new(),
            PermissionSet::empty(),
            serde_json::Map::new(),
        )
    }

    #[tokio::test]
    async fn another_callers_session_is_unknown() {
        let sessions = Sessions::new(2, "start one");
        let (alice, bob) = (caller("alice"), caller("bob"));
        let id = sessions.insert(&alice, 1).unwrap();
        let err = sessions.lock(&bob, &id).await.err().unwrap();
        assert_eq!(err.code(), "session_not_found");
        assert_eq!(err.steps(), ["start one"]);
        assert_eq!(
            sessions.remove(&bob, &id).err().unwrap().code(),
            "session_not_found"
        );
        assert!(sessions.list(&bob).is_empty());
        assert_eq!(sessions.list(&alice).len(), 1);
        // The bound is per caller.
        sessions.insert(&alice, 2).unwrap();
        assert!(sessions.insert(&alice, 3).is_err());
        sessions.insert(&bob, 4).unwrap();
        assert_eq!(sessions.len(), 3);
    }

    #[tokio::test]
    async fn calls_on_one_session_never_interleave() {
        let sessions = Arc::new(Sessions::new(1, "start one"));
        let me = Caller::local();
        let id = sessions.insert(&me, Vec::<u32>::new()).unwrap();
        let mut tasks = Vec::new();
        for n in 0..8u32 {
            let (sessions, me, id) = (sessions.clone(), me.clone(), id.clone());
            tasks.push(tokio::spawn(async move {
                let mut log = sessions.lock(&me, &id).await.unwrap();
                log.push(n);
                tokio::task::yield_now().await;
                log.push(n);
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        let log = sessions.lock(&me, &id).await.unwrap();
        assert_eq!(log.len(), 16);
        for pair in log.chunks(2) {
            assert_eq!(
                pair[0], pair[1],
                "a call's two pushes are adjacent: {log:?}"
            );
        }
    }

    #[tokio::test]
    async fn the_extractor_resolves_the_callers_session_from_the_arguments() {
        let mut states = crate::context::StateMap::default();
        let sessions = Arc::new(Sessions::new(1, "start one first"));
        let id = sessions.insert(&caller("alice"), 7u32).unwrap();
        states.insert(sessions);
        let ctx = |who: &str| {
            let mut ctx = ToolContext::default().with_caller(caller(who));
            ctx.states = Arc::new(states.clone());
            ctx
        };
        let args =
            |value: serde_json::Value| -> JsonObject { serde_json::from_value(value).unwrap() };
        let mine = SessionRef::<u32>::from_call(
            &ctx("alice"),
            &args(serde_json::json!({"session_id": id})),
        )
        .unwrap();
        assert_eq!(*mine.lock().await.unwrap(), 7);
        let theirs =
            SessionRef::<u32>::from_call(&ctx("bob"), &args(serde_json::json!({"session_id": id})))
                .unwrap_err();
        assert_eq!(theirs.code(), Some("session_not_found"));
        assert_eq!(theirs.action(), Some("start one first"));
        let missing =
            SessionRef::<u32>::from_call(&ctx("alice"), &args(serde_json::json!({}))).unwrap_err();
        assert_eq!(missing.code(), Some("session_id_missing"));
        assert!(SessionRef::<u32>::from_context(&ctx("alice")).is_err());
    }

    #[tokio::test]
    async fn a_held_session_answers_busy_after_the_timeout() {
        let sessions = Sessions::new(1, "start one").with_lock_timeout(Duration::from_millis(20));
        let me = Caller::local();
        let id = sessions.insert(&me, ()).unwrap();
        let _held = sessions.lock(&me, &id).await.unwrap();
        assert_eq!(
            sessions.lock(&me, &id).await.err().unwrap().code(),
            "session_busy"
        );
        assert!(sessions.get(&me, &id).unwrap().try_lock().is_none());
    }
}
