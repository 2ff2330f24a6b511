//! Rate limits: the [`Rate`] grammar (shared with `#[mcp_tool(rate = "…")]`), the
//! operator's [`RateLimits`] (what the rate-limits file says), and the bucket arithmetic
//! the server's limiter runs, in this process or (feature `redis`) in Redis
//! (`docs/rate-limits.md`).
//!
//! Each limit is a token bucket kept as one number per key, the generic cell rate
//! algorithm (GCRA): the *theoretical arrival time* (TAT), the time at which the bucket
//! would be full again. A call at `now` is admitted when `max(tat, now) + interval` is at
//! most `burst × interval` ahead of `now`, and then moves the TAT there; otherwise it is
//! refused, and the difference is exactly how long to wait. A key whose TAT has passed
//! holds a full bucket, which is the same as no key at all, so idle keys are dropped.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use mcp_toolbelt_names::rate::{MAX_COUNT, MAX_PERIOD_MS, Rate, RateProblem};

use crate::Caller;
use crate::poison::LockIgnoringPoison;

/// How many keys (caller, or caller and tool) a server's limiter holds at most, unless
/// [`RateLimits::max_keys`] says otherwise.
pub const DEFAULT_MAX_KEYS: usize = 100_000;

/// What the limiter does when its shared store (Redis) cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StoreDown {
    /// Admit the call (the default: a limit protects the server from abuse; an outage of
    /// the store should not become an outage of every tool). Logged and counted.
    #[default]
    Admit,
    /// Refuse the call as rate limited, with a retry time of one second.
    Refuse,
}

/// The operator's rate limits: per-tool limits that override `#[mcp_tool(rate = "…")]`,
/// and overall limits per caller (every `tools/call` of that caller, whatever the tool).
///
/// A caller is its authenticated subject, else its client id; callers with neither (the
/// stdio client, a server without tokens, a token without `subject=`) are one caller, the
/// anonymous one, which only the `*` line limits.
///
/// The file (`serve --rate-limits FILE`), one rule a line, `#` starts a comment:
///
/// ```text
/// tool search 10/s burst 20   # every caller: 10 searches a second, 20 at once
/// tool export none            # no limit, whatever the attribute says
/// caller * 600/min            # every caller: 600 calls a minute in all
/// caller ci-bot 6000/min      # this subject (or client id) instead of `*`
/// caller alice none           # alice has no overall limit
/// max-keys 100000             # the most buckets held (the default)
/// store-down admit            # Redis unreachable: admit (default) or refuse
/// ```
///
/// ```
/// use mcp_toolbelt::rate::RateLimits;
/// let limits = RateLimits::parse("tool search 10/s\ncaller * 100/min\ncaller ci 1000/min\n").unwrap();
/// assert_eq!(limits.tool_rate("search", None).unwrap().to_string(), "10/s");
/// assert_eq!(limits.tool_rate("other", Some("5/s".parse().unwrap())).unwrap().to_string(), "5/s");
/// assert_eq!(limits.caller_rate(Some("ci")).unwrap().to_string(), "1000/min");
/// assert_eq!(limits.caller_rate(None).unwrap().to_string(), "100/min");
/// ```
#[derive(Debug, Clone)]
pub struct RateLimits {
    tools: HashMap<String, Option<Rate>>,
    callers: HashMap<String, Option<Rate>>,
    every_caller: Option<Rate>,
    max_keys: usize,
    store_down: StoreDown,
}

impl Default for RateLimits {
    fn default() -> RateLimits {
        RateLimits::new()
    }
}

impl RateLimits {
    /// No rules: each tool's own `rate`, no overall limit, [`DEFAULT_MAX_KEYS`] keys,
    /// [`StoreDown::Admit`].
    ///
    /// ```
    /// let limits = mcp_toolbelt::rate::RateLimits::new();
    /// assert!(limits.caller_rate(Some("alice")).is_none());
    /// ```
    pub fn new() -> RateLimits {
        RateLimits {
            tools: HashMap::new(),
            callers: HashMap::new(),
            every_caller: None,
            max_keys: DEFAULT_MAX_KEYS,
            store_down: StoreDown::Admit,
        }
    }

    /// Limit each caller's calls of tool `name` to `rate` (`None`: no limit), whatever
    /// the tool's own `rate` says.
    ///
    /// ```
    /// let limits = mcp_toolbelt::rate::RateLimits::new().tool("search", None);
    /// assert!(limits.tool_rate("search", Some("1/s".parse().unwrap())).is_none());
    /// ```
    pub fn tool(mut self, name: impl Into<String>, rate: Option<Rate>) -> RateLimits {
        self.tools.insert(name.into(), rate);
        self
    }

    /// Limit every call of the caller `subject` (its subject, else its client id) to
    /// `rate` (`None`: no overall limit), instead of [`every_caller`](Self::every_caller)'s.
    ///
    /// ```
    /// let limits = mcp_toolbelt::rate::RateLimits::new().caller("ci", Some("9/s".parse().unwrap()));
    /// assert!(limits.caller_rate(Some("ci")).is_some() && limits.caller_rate(Some("bob")).is_none());
    /// ```
    pub fn caller(mut self, subject: impl Into<String>, rate: Option<Rate>) -> RateLimits {
        self.callers.insert(subject.into(), rate);
        self
    }

    /// Limit every call of each caller to `rate`, unless a [`caller`](Self::caller) rule
    /// names it.
    ///
    /// ```
    /// let limits = mcp_toolbelt::rate::RateLimits::new().every_caller("100/min".parse().unwrap());
    /// assert!(limits.caller_rate(None).is_some());
    /// ```
    pub fn every_caller(mut self, rate: Rate) -> RateLimits {
        self.every_caller = Some(rate);
        self
    }

    /// Hold at most `keys` buckets (default [`DEFAULT_MAX_KEYS`]; at least 1). When the
    /// limiter is full and none has expired, a call that needs a new bucket is refused
    /// (retry when the soonest bucket expires): a flood of new subjects cannot grow memory,
    /// and cannot reset the buckets of callers already held. In Redis, keys expire by
    /// themselves and this bound does not apply.
    ///
    /// ```
    /// let limits = mcp_toolbelt::rate::RateLimits::new().max_keys(10);
    /// # let _ = limits;
    /// ```
    pub fn max_keys(mut self, keys: usize) -> RateLimits {
        self.max_keys = keys.max(1);
        self
    }

    /// What to do when the shared store cannot be reached (default [`StoreDown::Admit`]).
    ///
    /// ```
    /// use mcp_toolbelt::rate::{RateLimits, StoreDown};
    /// let limits = RateLimits::new().when_store_down(StoreDown::Refuse);
    /// assert_eq!(limits.store_down(), StoreDown::Refuse);
    /// ```
    pub fn when_store_down(mut self, policy: StoreDown) -> RateLimits {
        self.store_down = policy;
        self
    }

    /// The policy when the shared store is down.
    pub fn store_down(&self) -> StoreDown {
        self.store_down
    }

    /// The most buckets held in this process.
    pub fn key_limit(&self) -> usize {
        self.max_keys
    }

    /// The per-caller limit of tool `name` whose own rate is `declared`: the file's rule
    /// for it if there is one, else `declared`.
    pub fn tool_rate(&self, name: &str, declared: Option<Rate>) -> Option<Rate> {
        match self.tools.get(name) {
            Some(rule) => *rule,
            None => declared,
        }
    }

    /// The overall limit of the caller named `identity` (its subject, else client id;
    /// `None`: the anonymous caller).
    pub fn caller_rate(&self, identity: Option<&str>) -> Option<Rate> {
        match identity.and_then(|id| self.callers.get(id)) {
            Some(rule) => *rule,
            None => self.every_caller,
        }
    }

    /// True when no rule limits any caller overall (the HTTP front door then has nothing
    /// to check before reading a body).
    pub fn has_caller_limits(&self) -> bool {
        self.every_caller.is_some() || self.callers.values().any(Option::is_some)
    }

    /// Read the rules of a rate-limits file (see [`RateLimits`]).
    ///
    /// # Errors
    ///
    /// [`RateLimitsError::BadLine`] naming the line and what is wrong with it.
    ///
    /// ```
    /// let err = mcp_toolbelt::rate::RateLimits::parse("tool search fast\n").unwrap_err();
    /// assert!(err.to_string().contains("line 1"));
    /// ```
    pub fn parse(text: &str) -> Result<RateLimits, RateLimitsError> {
        parse_lines(text, None)
    }

    /// Read and [`parse`](RateLimits::parse) a rate-limits file; errors name `path:line`.
    ///
    /// # Errors
    ///
    /// [`RateLimitsError::Read`] when the file cannot be read, else as [`parse`](Self::parse).
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("rate-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let file = dir.join("rate-limits");
    /// std::fs::write(&file, "caller * 100/min\n").unwrap();
    /// let limits = mcp_toolbelt::rate::RateLimits::from_file(&file).unwrap();
    /// assert!(limits.has_caller_limits());
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<RateLimits, RateLimitsError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| RateLimitsError::Read {
            path: path.to_path_buf(),
            source: Arc::new(source),
        })?;
        parse_lines(&text, Some(path))
    }
}

/// Why a rate-limits file could not be loaded.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RateLimitsError {
    /// The file could not be read.
    #[error("cannot read rate-limits file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// A line is not a rule.
    #[error("{}line {line}: {problem}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    BadLine {
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// The 1-based line number.
        line: usize,
        /// What is wrong, and how it is written.
        problem: String,
    },
}

const RULES: &str = "write `tool NAME RATE|none`, `caller SUBJECT|* RATE|none`, `max-keys N` or `store-down admit|refuse`";

fn parse_lines(text: &str, path: Option<&Path>) -> Result<RateLimits, RateLimitsError> {
    let mut limits = RateLimits::new();
    for (line, _, words) in crate::lines::entries(text) {
        let bad = |problem: String| RateLimitsError::BadLine {
            path: path.map(Path::to_path_buf),
            line,
            problem,
        };
        let rate = |words: &[&str]| -> Result<Option<Rate>, RateLimitsError> {
            match words {
                ["none"] => Ok(None),
                [] => Err(bad(format!("the rule has no rate; {RULES}"))),
                words => mcp_toolbelt_names::rate::parse(&words.join(" "))
                    .map(Some)
                    .map_err(|problem| bad(problem.to_string())),
            }
        };
        match words[..] {
            ["tool", name, ref rest @ ..] => {
                if let Some(problem) = crate::names::check_name(name, true) {
                    return Err(bad(format!("tool {name:?}: {problem}")));
                }
                let rule = rate(rest)?;
                if limits.tools.insert(name.to_string(), rule).is_some() {
                    return Err(bad(format!(
                        "tool {name:?} has a rule on an earlier line; keep one"
                    )));
                }
            }
            ["caller", "*", ref rest @ ..] => {
                if limits.every_caller.is_some() {
                    return Err(bad("`caller *` is set on an earlier line; keep one".into()));
                }
                limits.every_caller = rate(rest)?;
            }
            ["caller", subject, ref rest @ ..] => {
                let rule = rate(rest)?;
                if limits.callers.insert(subject.to_string(), rule).is_some() {
                    return Err(bad(format!(
                        "caller {subject:?} has a rule on an earlier line; keep one"
                    )));
                }
            }
            ["max-keys", keys] => match keys.parse::<usize>() {
                Ok(keys) if keys > 0 => limits.max_keys = keys,
                _ => {
                    return Err(bad(format!(
                        "max-keys takes a number of 1 or more, not {keys:?}"
                    )));
                }
            },
            ["store-down", "admit"] => limits.store_down = StoreDown::Admit,
            ["store-down", "refuse"] => limits.store_down = StoreDown::Refuse,
            _ => return Err(bad(format!("not a rule; {RULES}"))),
        }
    }
    Ok(limits)
}

/// Which limit refused a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitKind {
    /// The caller's overall limit (every call it makes).
    Overall(Rate),
    /// The tool's limit per caller.
    PerTool(Rate),
    /// The limiter holds as many keys as it may, none expired.
    KeyLimit,
    /// The shared store is down and the policy is to refuse.
    StoreUnreachable,
}

/// A call refused by a rate limit: which limit, and when a call may succeed again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateRefusal {
    /// The limit that refused it.
    pub limit: LimitKind,
    /// How long until the call would be admitted.
    pub retry_after: Duration,
}

impl RateRefusal {
    /// The limit as the error's `data.limit` names it: `"caller 100/min"`,
    /// `"tool search 10/s"`, `"limiter full"`, `"store down"`.
    ///
    /// ```
    /// use mcp_toolbelt::rate::{LimitKind, RateRefusal};
    /// let refusal = RateRefusal { limit: LimitKind::Overall("5/s".parse().unwrap()),
    ///     retry_after: std::time::Duration::from_millis(200) };
    /// assert_eq!(refusal.describe("search"), "caller 5/s");
    /// ```
    pub fn describe(&self, tool: &str) -> String {
        match &self.limit {
            LimitKind::Overall(rate) => format!("caller {rate}"),
            LimitKind::PerTool(rate) => format!("tool {tool} {rate}"),
            LimitKind::KeyLimit => "limiter full".into(),
            LimitKind::StoreUnreachable => "store down".into(),
        }
    }

    /// The retry time in whole milliseconds, rounded up.
    pub fn retry_after_ms(&self) -> u64 {
        u64::try_from(self.retry_after.as_micros().div_ceil(1_000)).unwrap_or(u64::MAX)
    }
}

impl fmt::Display for RateRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wait = self.retry_after_ms();
        match &self.limit {
            LimitKind::Overall(rate) => write!(
                f,
                "rate limited: this caller may make {rate} calls in all; retry in {wait} ms"
            ),
            LimitKind::PerTool(rate) => write!(
                f,
                "rate limited: this tool allows {rate} calls per caller; retry in {wait} ms"
            ),
            LimitKind::KeyLimit => write!(
                f,
                "rate limited: the server tracks as many callers as it may; retry in {wait} ms"
            ),
            LimitKind::StoreUnreachable => write!(
                f,
                "rate limited: the rate-limit store is unreachable; retry in {wait} ms"
            ),
        }
    }
}

/// One GCRA step: the TAT stored for a key (0: none) at `now_us`. `Ok(new TAT)` admits
/// the call; `Err(µs)` refuses it for that long.
///
/// ```
/// use mcp_toolbelt::rate::{Rate, gcra};
/// let rate: Rate = "2/s".parse().unwrap(); // 500 ms apart, 2 at once
/// let tat = gcra(0, 1_000_000, rate).unwrap();
/// let tat = gcra(tat, 1_000_000, rate).unwrap();
/// assert_eq!(gcra(tat, 1_000_000, rate), Err(500_000));
/// assert!(gcra(tat, 1_500_000, rate).is_ok());
/// ```
///
/// # Errors
///
/// The time to wait, in microseconds, when the bucket is empty.
pub fn gcra(tat_us: u64, now_us: u64, rate: Rate) -> Result<u64, u64> {
    let interval = rate.interval_us();
    let tolerance = interval.saturating_mul(rate.burst());
    let next = tat_us.max(now_us).saturating_add(interval);
    let ahead = next - now_us;
    if ahead > tolerance {
        Err(ahead - tolerance)
    } else {
        Ok(next)
    }
}

// What follows is the server's (`server/rate_limit/`): the caller's key, the buckets a call
// draws on, and the buckets of one process.

/// The key a caller's buckets are filed under: `s:` and its subject, else `c:` and its
/// client id, else `-` (the anonymous caller); and the identity the file's `caller`
/// rules name.
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) fn caller_identity(caller: &Caller) -> (String, Option<&str>) {
    match (caller.subject(), caller.client_id()) {
        (Some(subject), _) => (format!("s:{subject}"), Some(subject)),
        (None, Some(client)) => (format!("c:{client}"), Some(client)),
        (None, None) => ("-".to_string(), None),
    }
}

/// One bucket a call draws on: its key, its rate and the limit it stands for.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) struct Draw {
    pub(crate) key: String,
    pub(crate) rate: Rate,
    pub(crate) limit: LimitKind,
}

/// The buckets of one process: a map from key to TAT, at most `max_keys` long.
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) struct LocalBuckets {
    start: Instant,
    max_keys: usize,
    inner: Mutex<Inner>,
}

#[cfg_attr(not(feature = "server"), allow(dead_code))]
struct Inner {
    tats: HashMap<String, u64>,
    /// No key expires before this time (µs): a sweep before it would free nothing.
    next_expiry: u64,
}

#[cfg_attr(not(feature = "server"), allow(dead_code))]
impl LocalBuckets {
    pub(crate) fn new(max_keys: usize) -> LocalBuckets {
        LocalBuckets {
            start: Instant::now(),
            max_keys: max_keys.max(1),
            inner: Mutex::new(Inner {
                tats: HashMap::new(),
                next_expiry: 0,
            }),
        }
    }

    /// Now, in µs since the limiter started (never 0).
    fn now_us(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX - 1) + 1
    }

    /// Admit a call drawing on every bucket of `draws` (all or none), or say which limit
    /// refuses it and for how long (the longest wait among the refusing ones).
    pub(crate) fn admit(&self, draws: &[Draw]) -> Result<(), RateRefusal> {
        let now = self.now_us();
        self.admit_at(draws, now)
    }

    fn admit_at(&self, draws: &[Draw], now: u64) -> Result<(), RateRefusal> {
        let mut inner = self.inner.lock_ignoring_poison();
        let mut next = [0u64; 2];
        let mut refusal: Option<RateRefusal> = None;
        let mut new_keys = 0;
        for (at, draw) in draws.iter().enumerate().take(2) {
            let stored = inner.tats.get(&draw.key).copied();
            new_keys += usize::from(stored.is_none());
            match gcra(stored.unwrap_or(0), now, draw.rate) {
                Ok(tat) => next[at] = tat,
                Err(wait) => {
                    if refusal
                        .as_ref()
                        .is_none_or(|r| r.retry_after < Duration::from_micros(wait))
                    {
                        refusal = Some(RateRefusal {
                            limit: draw.limit.clone(),
                            retry_after: Duration::from_micros(wait),
                        });
                    }
                }
            }
        }
        if let Some(refusal) = refusal {
            return Err(refusal);
        }
        if inner.tats.len() + new_keys > self.max_keys {
            inner.sweep(now);
            if inner.tats.len() + new_keys > self.max_keys {
                return Err(RateRefusal {
                    limit: LimitKind::KeyLimit,
                    retry_after: Duration::from_micros(
                        inner.next_expiry.saturating_sub(now).max(1),
                    ),
                });
            }
        }
        for (at, draw) in draws.iter().enumerate().take(2) {
            inner.tats.insert(draw.key.clone(), next[at]);
        }
        Ok(())
    }

    /// How long until a call drawing on `draw` alone would be admitted (`None`: now),
    /// without drawing on it.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn wait(&self, draw: &Draw) -> Option<Duration> {
        let now = self.now_us();
        let inner = self.inner.lock_ignoring_poison();
        let tat = inner.tats.get(&draw.key).copied().unwrap_or(0);
        gcra(tat, now, draw.rate).err().map(Duration::from_micros)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().unwrap().tats.len()
    }
}

#[cfg_attr(not(feature = "server"), allow(dead_code))]
impl Inner {
    /// Drop every key whose bucket is full again, unless none can be yet.
    fn sweep(&mut self, now: u64) {
        if now < self.next_expiry {
            return;
        }
        self.tats.retain(|_, tat| *tat > now);
        self.next_expiry = self.tats.values().copied().min().unwrap_or(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(text: &str) -> Rate {
        text.parse().unwrap()
    }

    fn draw(key: &str, text: &str) -> Draw {
        Draw {
            key: key.into(),
            rate: rate(text),
            limit: LimitKind::PerTool(rate(text)),
        }
    }

    #[test]
    fn a_full_bucket_admits_its_burst_then_one_per_interval() {
        let r = rate("10/s burst 3");
        let mut tat = 0;
        for _ in 0..3 {
            tat = gcra(tat, 5_000_000, r).unwrap();
        }
        assert_eq!(gcra(tat, 5_000_000, r), Err(100_000));
        // The retry time is exact: a microsecond early is still refused, on time admitted.
        assert_eq!(gcra(tat, 5_099_999, r), Err(1));
        let tat = gcra(tat, 5_100_000, r).unwrap();
        assert_eq!(gcra(tat, 5_100_000, r), Err(100_000));
        // Idle long enough, the bucket is full again (and no fuller).
        let mut tat = gcra(tat, 60_000_000, r).unwrap();
        tat = gcra(tat, 60_000_000, r).unwrap();
        tat = gcra(tat, 60_000_000, r).unwrap();
        assert!(gcra(tat, 60_000_000, r).is_err());
    }

    #[test]
    fn admitted_calls_never_exceed_burst_plus_elapsed_over_interval() {
        let r = rate("7/s burst 4");
        let (mut tat, mut admitted) = (0, 0u64);
        let (first, last, step) = (1_000_000u64, 4_000_000u64, 3_331);
        let mut now = first;
        while now <= last {
            if let Ok(next) = gcra(tat, now, r) {
                tat = next;
                admitted += 1;
            }
            now += step;
        }
        let bound = r.burst() + (last - first) / r.interval_us();
        assert!(
            admitted <= bound && admitted + 1 >= bound,
            "{admitted} vs {bound}"
        );
    }

    #[test]
    fn both_buckets_or_neither() {
        let buckets = LocalBuckets::new(100);
        let draws = [draw("c", "2/s"), draw("t", "1/s")];
        assert!(buckets.admit_at(&draws, 1).is_ok());
        let refused = buckets.admit_at(&draws, 1).unwrap_err();
        assert_eq!(refused.retry_after, Duration::from_secs(1));
        // The caller's bucket was not drawn on by the refused call: one token is left.
        assert!(buckets.admit_at(&draws[..1], 1).is_ok());
        assert!(buckets.admit_at(&draws[..1], 1).is_err());
        // The longest wait names its limit.
        let refused = buckets.admit_at(&draws, 2).unwrap_err();
        assert_eq!(refused.retry_after, Duration::from_micros(999_999));
    }

    #[test]
    fn keys_are_bounded_and_expire() {
        let buckets = LocalBuckets::new(3);
        for key in ["a", "b", "c"] {
            assert!(buckets.admit_at(&[draw(key, "1/s")], 10).is_ok());
        }
        let full = buckets.admit_at(&[draw("d", "1/s")], 20).unwrap_err();
        assert_eq!(full.limit, LimitKind::KeyLimit);
        assert_eq!(full.retry_after, Duration::from_micros(1_000_010 - 20));
        // A caller already held is still served (refused on its own bucket only).
        assert_ne!(
            buckets.admit_at(&[draw("a", "1/s")], 30).unwrap_err().limit,
            LimitKind::KeyLimit
        );
        // Once the buckets are full again their keys go, and new callers come in.
        assert!(buckets.admit_at(&[draw("d", "1/s")], 1_000_011).is_ok());
        assert_eq!(buckets.len(), 1);
    }

    #[test]
    fn the_file_reads_every_rule_and_names_bad_lines() {
        let limits = RateLimits::parse(
            "# limits\ntool search 10/s burst 20\ntool export none\ncaller * 600/min\n\
             caller ci-bot 6000/min # the robot\ncaller alice none\nmax-keys 50\nstore-down refuse\n",
        )
        .unwrap();
        assert_eq!(
            limits.tool_rate("search", None),
            Some(rate("10/s burst 20"))
        );
        assert_eq!(limits.tool_rate("export", Some(rate("1/s"))), None);
        assert_eq!(
            limits.tool_rate("other", Some(rate("1/s"))),
            Some(rate("1/s"))
        );
        assert_eq!(limits.caller_rate(Some("ci-bot")), Some(rate("6000/min")));
        assert_eq!(limits.caller_rate(Some("alice")), None);
        assert_eq!(limits.caller_rate(Some("bob")), Some(rate("600/min")));
        assert_eq!(limits.caller_rate(None), Some(rate("600/min")));
        assert_eq!(limits.key_limit(), 50);
        assert_eq!(limits.store_down(), StoreDown::Refuse);
        for (text, says) in [
            ("tool search\n", "line 1: the rule has no rate"),
            ("\ntool search fast\n", "line 2: \"fast\" is not a rate"),
            ("tool a b c 1/s\n", "not a rate"),
            ("tool bad/name 1/s\n", "name contains '/'"),
            (
                "tool a 1/s\ntool a 2/s\n",
                "line 2: tool \"a\" has a rule on an earlier line",
            ),
            (
                "caller * 1/s\ncaller * 2/s\n",
                "`caller *` is set on an earlier line",
            ),
            ("caller x 1/s\ncaller x none\n", "caller \"x\" has a rule"),
            ("max-keys 0\n", "max-keys takes a number of 1 or more"),
            ("store-down maybe\n", "not a rule; write `tool NAME"),
            ("limit 1/s\n", "not a rule"),
            ("tool a 0/s\n", "count must be 1 to"),
        ] {
            let err = RateLimits::parse(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }

    #[test]
    fn refusals_say_which_limit_and_when() {
        let refusal = RateRefusal {
            limit: LimitKind::PerTool(rate("10/s")),
            retry_after: Duration::from_micros(1_001),
        };
        assert_eq!(refusal.retry_after_ms(), 2);
        assert_eq!(refusal.describe("search"), "tool search 10/s");
        assert!(
            refusal
                .to_string()
                .contains("10/s calls per caller; retry in 2 ms")
        );
    }

    #[test]
    fn callers_are_filed_by_subject_then_client() {
        let alice = Caller::new(
            Some("alice".into()),
            Some("app".into()),
            vec![],
            crate::PermissionSet::empty(),
            Default::default(),
        );
        assert_eq!(
            caller_identity(&alice),
            ("s:alice".to_string(), Some("alice"))
        );
        let app = Caller::new(
            None,
            Some("app".into()),
            vec![],
            crate::PermissionSet::empty(),
            Default::default(),
        );
        assert_eq!(caller_identity(&app), ("c:app".to_string(), Some("app")));
        assert_eq!(caller_identity(&Caller::local()), ("-".to_string(), None));
    }
}
