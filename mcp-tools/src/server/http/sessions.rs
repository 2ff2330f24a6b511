//! Stateful sessions: the cap, which caller each belongs to, idle expiry, cancelling a
//! call in a session whose client is gone, and parking.
//!
//! A live session is rmcp's session worker and service tasks, with their channels: about
//! 50 KB. A session with nothing in flight and no open stream for
//! [`HttpOptions::session_park_after`](super::HttpOptions::session_park_after) is
//! *parked*: its live part is closed and only a small record stays (its id, owner, the
//! `initialize` parameters as JSON, and the handler's session state: log level and
//! resource subscriptions). Its next request rebuilds it: rmcp's restore path replays the
//! handshake (through [`SessionStore::load`] and [`SessionManager::restore_session`]) into
//! a fresh service that takes over the same state. `HttpSessions` is both rmcp's session
//! manager (wrapping [`LocalSessionManager`] for live sessions) and its session store.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager, SessionState, SessionStore,
    SessionStoreError,
};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::poison::LockIgnoringPoison;
use crate::server::state::{Session, Shared};
use crate::server::telemetry::{GaugeSource, SessionClock};

/// Who opened a session: a keyed hash of its credential (`None`: the local caller).
pub(super) type Principal = Option<u64>;

/// How long a restore waits for the parked session's old service to end.
const PARKING_WAIT: Duration = Duration::from_secs(10);

tokio::task_local! {
    /// The session a request opens or uses, for the handler rmcp builds while serving it.
    static SERVING: Serving;
}

/// What rmcp's service factory and session store need to know about the request they
/// run for.
#[derive(Clone)]
pub(super) struct Serving {
    state: Arc<Session>,
    principal: Principal,
}

impl Serving {
    /// The handler state of the session this request serves.
    pub(super) fn state(&self) -> &Arc<Session> {
        &self.state
    }
}

/// The handler state of the session the current request opens or restores (`None`
/// outside a stateful request).
pub(super) fn serving_state() -> Option<Arc<Session>> {
    SERVING.try_with(|s| s.state.clone()).ok()
}

/// One session, live or parked.
struct Record {
    owner: Principal,
    /// The handler's state, shared with the live handler.
    state: Arc<Session>,
    /// The client's `initialize` parameters (JSON), replayed to rebuild a parked session.
    initialize: Box<str>,
    last_used: Instant,
    /// Requests in progress and streams open.
    active: u32,
    phase: Phase,
    /// Measures the session's life (`mcp.server.session.duration`) until the record goes.
    _clock: SessionClock,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Live,
    /// Closing; the old service has not ended yet.
    Parking,
    Parked,
}

/// The stateful sessions of one server.
pub(super) struct HttpSessions {
    live: LocalSessionManager,
    records: Mutex<HashMap<Arc<str>, Record>>,
    max: usize,
    park_after: Duration,
    expire_after: Duration,
    /// How often the sweep runs.
    sweep_every: Duration,
    keys: std::hash::RandomState,
    /// Wakes restores waiting for a session to finish parking.
    parked: Notify,
    /// Sessions parked since the last sweep.
    newly_parked: AtomicUsize,
    shared: Arc<Shared>,
    /// Ends the sweep.
    stop: CancellationToken,
    /// Set once the sweep runs.
    sweeping: AtomicBool,
    /// Held while an `initialize` checks the cap and opens its session, so concurrent
    /// ones cannot overshoot it.
    pub(super) opening: tokio::sync::Mutex<()>,
}

/// A request or stream in progress in a session (the session is not idle while it lives).
pub(super) struct Activity {
    sessions: Arc<HttpSessions>,
    id: Arc<str>,
}

impl Drop for Activity {
    fn drop(&mut self) {
        if let Some(record) = self.sessions.records().get_mut(&self.id) {
            record.active = record.active.saturating_sub(1);
            record.last_used = Instant::now();
        }
    }
}

impl HttpSessions {
    /// The sessions of a server sharing `shared`: at most `max`, parked after `park_after`
    /// idle and ended after `expire_after` idle; the sweep doing so ends when `stop` fires.
    pub(super) fn new(
        shared: Arc<Shared>,
        max: usize,
        park_after: Duration,
        expire_after: Duration,
        stop: CancellationToken,
    ) -> HttpSessions {
        let sweep_every = sweep_period(park_after.min(expire_after));
        // rmcp's session worker does not see the calls served directly, so its own idle
        // time-out is off (`keep_alive: None`, as its docs allow): the sweep, which sees
        // every request, parks and expires idle sessions. A handshake that never
        // completes is still ended by rmcp's `init_timeout`.
        let mut live = LocalSessionManager::default();
        live.session_config.keep_alive = None;
        HttpSessions {
            live,
            records: Mutex::default(),
            max,
            park_after: park_after.min(expire_after),
            expire_after,
            sweep_every,
            keys: std::hash::RandomState::new(),
            parked: Notify::new(),
            newly_parked: AtomicUsize::new(0),
            shared,
            stop,
            sweeping: AtomicBool::new(false),
            opening: tokio::sync::Mutex::new(()),
        }
    }

    fn records(&self) -> MutexGuard<'_, HashMap<Arc<str>, Record>> {
        self.records.lock_ignoring_poison()
    }

    /// The principal presenting `credential`.
    pub(super) fn principal(&self, credential: &[u8]) -> u64 {
        self.keys.hash_one(credential)
    }

    /// The cap on sessions.
    pub(super) fn max(&self) -> usize {
        self.max
    }

    /// True when no new session may open.
    pub(super) fn full(&self) -> bool {
        self.records().len() >= self.max
    }

    /// Make room for one more session when the cap is reached: forget the parked session
    /// idle the longest (its client's next request gets `404` and opens a new session).
    /// False when no session is parked (every one is live or in use).
    pub(super) fn evict_parked(&self) -> bool {
        let mut records = self.records();
        let oldest = records
            .iter()
            .filter(|(_, record)| record.phase == Phase::Parked && record.active == 0)
            .min_by_key(|(_, record)| record.last_used)
            .map(|(id, _)| id.clone());
        let Some(id) = oldest else {
            return false;
        };
        records.remove(&id);
        tracing::debug!(session = %id, "forgot the longest-idle parked session to make room");
        true
    }

    /// Start a request in session `id` for `principal`: `None` when the session is
    /// unknown, ended, or another principal's.
    pub(super) fn enter(
        self: &Arc<Self>,
        id: &Arc<str>,
        principal: Principal,
    ) -> Option<(Activity, Serving)> {
        let mut records = self.records();
        let record = records.get_mut(id).filter(|r| r.owner == principal)?;
        record.active += 1;
        record.last_used = Instant::now();
        let serving = Serving {
            state: record.state.clone(),
            principal,
        };
        let activity = Activity {
            sessions: self.clone(),
            id: id.clone(),
        };
        Some((activity, serving))
    }

    /// What a request opening a new session for `principal` serves with.
    pub(super) fn opening_for(principal: Principal) -> Serving {
        Serving {
            state: Arc::new(Session::default()),
            principal,
        }
    }

    /// Run `future` (rmcp serving one request) as part of `serving`.
    pub(super) async fn serve<F: Future>(serving: Serving, future: F) -> F::Output {
        SERVING.scope(serving, future).await
    }

    /// Cancel request `request_id` of session `id`, as `notifications/cancelled` from the
    /// client would: nobody is left to receive its result.
    pub(super) fn cancel(self: &Arc<Self>, id: Arc<str>, request_id: Value) {
        let sessions = self.clone();
        tokio::spawn(async move {
            let notification = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request_id, "reason": "the client disconnected"},
            });
            let Ok(message) = serde_json::from_value::<ClientJsonRpcMessage>(notification) else {
                return;
            };
            let id = SessionId::from(id.to_string());
            if let Err(error) = sessions.live.accept_message(&id, message).await {
                tracing::debug!(%error, "cannot cancel a disconnected client's call");
            }
        });
    }

    /// Start parking and expiring idle sessions (once; needs a Tokio runtime), checking a
    /// few times per period, until the stop token fires or the sessions are dropped.
    pub(super) fn start_sweep(self: &Arc<Self>) {
        if self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        let shutdown = self.stop.clone();
        let every = self.sweep_every;
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = ticks.tick() => {}
                    _ = shutdown.cancelled() => return,
                }
                let Some(sessions) = weak.upgrade() else {
                    return;
                };
                sessions.sweep().await;
            }
        });
    }

    async fn sweep(&self) {
        let now = Instant::now();
        let mut to_close = Vec::new();
        {
            let mut records = self.records();
            records.retain(|id, record| {
                let idle = now.saturating_duration_since(record.last_used);
                if record.active == 0 && idle >= self.expire_after {
                    if record.phase == Phase::Live {
                        to_close.push(id.clone());
                    }
                    tracing::debug!(session = %id, "an idle session expired");
                    return false;
                }
                if record.phase != Phase::Live {
                    return true;
                }
                if record.active == 0 && idle >= self.park_after {
                    record.phase = Phase::Parking;
                    to_close.push(id.clone());
                }
                true
            });
        }
        for id in to_close {
            // The worker ends; its service ends and calls `close_session`, which
            // completes the parking.
            let id = SessionId::from(id.to_string());
            if let Err(error) = self.live.close_session(&id).await {
                tracing::debug!(%error, "closing an idle session");
            }
        }
        if self.newly_parked.swap(0, Ordering::Relaxed) > 0 {
            // The parked services' peers are closed now: let go of them and of the memory
            // their channels held.
            self.shared.list_changed.forget_closed();
            self.shared.subscriptions.forget_closed();
            release_free_memory();
        }
    }

    /// The phase of session `id` (`None`: no such session).
    fn phase(&self, id: &str) -> Option<Phase> {
        self.records().get(id).map(|r| r.phase)
    }

    /// Wait until session `id` is no longer parking; its phase then.
    async fn settled(&self, id: &str) -> Option<Phase> {
        let deadline = tokio::time::Instant::now() + PARKING_WAIT;
        loop {
            let notified = self.parked.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            match self.phase(id) {
                Some(Phase::Parking) => {}
                phase => return phase,
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                tracing::warn!(session = id, "a parked session's service did not end");
                return Some(Phase::Parking);
            }
        }
    }
}

/// How often the sweep runs for sessions parked after `park_after` idle.
fn sweep_period(park_after: Duration) -> Duration {
    (park_after / 4).clamp(Duration::from_millis(50), Duration::from_secs(5))
}

/// Return freed memory to the operating system (glibc keeps it in its arenas otherwise).
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free pages of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

impl SessionManager for HttpSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.live.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.live.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        match self.phase(id) {
            Some(Phase::Parking | Phase::Parked) => Ok(false),
            _ => self.live.has_session(id).await,
        }
    }

    /// Called on `DELETE` and when a session's service ends (parked, expired, or failed).
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        {
            let mut records = self.records();
            if let Some(record) = records.get_mut(&**id) {
                match record.phase {
                    Phase::Parking => {
                        record.phase = Phase::Parked;
                        // The next handler registers its own peer for `list_changed`.
                        record.state.parked();
                        self.newly_parked.fetch_add(1, Ordering::Relaxed);
                        tracing::debug!(session = %id, "parked an idle session");
                        drop(records);
                        self.parked.notify_waiters();
                        return Ok(());
                    }
                    Phase::Parked => return Ok(()),
                    // The service ended by itself (or the client deleted the session,
                    // whose record goes next): the session can be rebuilt.
                    Phase::Live => {
                        record.phase = Phase::Parked;
                        record.state.parked();
                        self.newly_parked.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        self.live.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.live.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.live.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.live.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.live.resume(id, last_event_id).await
    }

    /// A parked session comes back (rmcp then replays its handshake into a new service).
    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        if self.settled(&id).await != Some(Phase::Parked) {
            return Ok(RestoreOutcome::NotSupported);
        }
        let outcome = self.live.restore_session(id.clone()).await?;
        if let Some(record) = self.records().get_mut(&*id) {
            record.phase = Phase::Live;
        }
        tracing::debug!(session = %id, "rebuilt a parked session");
        Ok(outcome)
    }
}

impl GaugeSource for HttpSessions {
    fn sessions(&self, open: &mut i64, parked: &mut i64) {
        for record in self.records().values() {
            match record.phase {
                Phase::Parked => *parked += 1,
                Phase::Live | Phase::Parking => *open += 1,
            }
        }
    }
}

#[async_trait::async_trait]
impl SessionStore for HttpSessions {
    /// The `initialize` parameters of a parked session, for rmcp to replay.
    async fn load(&self, id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let initialize = match self.records().get(id) {
            Some(record) => record.initialize.clone(),
            None => return Ok(None),
        };
        Ok(Some(SessionState::new(serde_json::from_str(&initialize)?)))
    }

    /// A session opened (rmcp calls this after its handshake).
    async fn store(&self, id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let initialize = serde_json::to_string(&state.initialize_params)?.into_boxed_str();
        let serving = SERVING
            .try_with(Serving::clone)
            .map_err(|_| "a session opened outside a request")?;
        self.records().insert(
            id.into(),
            Record {
                owner: serving.principal,
                state: serving.state,
                initialize,
                last_used: Instant::now(),
                active: 0,
                phase: Phase::Live,
                _clock: SessionClock::http(&self.shared.telemetry.metrics),
            },
        );
        Ok(())
    }

    /// A session was deleted by its client.
    async fn delete(&self, id: &str) -> Result<(), SessionStoreError> {
        self.records().remove(id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http_body_util::BodyExt;
    use serde_json::{Value, json};
    use tower_service::Service;

    use super::Phase;
    use crate::server::{HttpOptions, McpService, Server};

    /// POST `message` to `service` (in session `session`): the status, the session id
    /// answered and the body as JSON (`Null` when empty).
    async fn post(
        service: &mut McpService,
        session: Option<&str>,
        message: Value,
    ) -> (u16, Option<String>, Value) {
        let mut request = http::Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(id) = session {
            request = request.header("mcp-session-id", id);
        }
        let request = request
            .body(http_body_util::Full::new(bytes::Bytes::from(
                message.to_string(),
            )))
            .unwrap();
        let response = service.call(request).await.unwrap();
        let status = response.status().as_u16();
        let id = response
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_string());
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body = match body.is_empty() {
            true => Value::Null,
            false => serde_json::from_slice(&body).unwrap(),
        };
        (status, id, body)
    }

    /// At the cap, a new session takes the place of the parked session idle longest; with
    /// every session live, it is refused (`503`).
    #[test]
    fn at_the_cap_a_parked_session_makes_room_and_a_live_one_does_not() {
        let registry = crate::ToolRegistry::builder()
            .include_linked(false)
            .build()
            .unwrap();
        let options = HttpOptions::default()
            .max_sessions(1)
            .session_park_after(Duration::from_millis(50))
            .session_idle_timeout(Duration::from_secs(30));
        let mut service = Server::new(registry).http_service(options);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let initialize = json!({
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "cap-test", "version": "1"},
                },
            });
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let (status, first, _) = post(&mut service, None, initialize.clone()).await;
            assert_eq!(status, 200);
            let first = first.expect("a session id");
            assert_eq!(
                post(&mut service, Some(&first), initialized.clone())
                    .await
                    .0,
                202
            );
            // Live: a newcomer is refused.
            let (status, _, body) = post(&mut service, None, initialize.clone()).await;
            assert_eq!(status, 503, "{body}");
            let sessions = service.sessions().expect("a stateful endpoint").clone();
            for _ in 0..100 {
                if sessions.phase(&first) == Some(Phase::Parked) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert_eq!(sessions.phase(&first), Some(Phase::Parked));
            // Parked: the newcomer takes its place.
            let (status, second, body) = post(&mut service, None, initialize).await;
            assert_eq!(status, 200, "{body}");
            assert_ne!(second.as_deref(), Some(first.as_str()));
            let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
            let (status, _, body) = post(&mut service, Some(&first), list).await;
            assert_eq!(status, 404, "the forgotten session is unknown: {body}");
        });
    }

    /// A mounted endpoint built outside a runtime parks its idle sessions all the same
    /// (its first request starts the sweep), and the next request rebuilds one.
    #[test]
    fn a_mounted_endpoint_parks_idle_sessions_and_rebuilds_them() {
        let registry = crate::ToolRegistry::builder()
            .include_linked(false)
            .build()
            .unwrap();
        let options = HttpOptions::default()
            .session_park_after(Duration::from_millis(50))
            .session_idle_timeout(Duration::from_secs(30));
        let mut service = Server::new(registry).http_service(options);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let initialize = json!({
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "parking-test", "version": "1"},
                },
            });
            let (status, id, body) = post(&mut service, None, initialize).await;
            assert_eq!(status, 200, "{body}");
            let id = id.expect("a session id");
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            assert_eq!(post(&mut service, Some(&id), initialized).await.0, 202);
            let sessions = service.sessions().expect("a stateful endpoint").clone();
            let mut phase = sessions.phase(&id);
            for _ in 0..100 {
                if phase == Some(Phase::Parked) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                phase = sessions.phase(&id);
            }
            assert_eq!(
                phase,
                Some(Phase::Parked),
                "the idle session was not parked"
            );
            let state = sessions.records().get(id.as_str()).unwrap().state.clone();
            assert!(
                state.live.peer().is_none(),
                "a parked session's next request goes through rmcp, which rebuilds it"
            );
            let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
            let (status, _, body) = post(&mut service, Some(&id), list).await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["id"], 2, "{body}");
            assert!(body["result"]["tools"].is_array(), "{body}");
            assert_eq!(sessions.phase(&id), Some(Phase::Live));
        });
    }
}
