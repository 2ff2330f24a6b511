//! Answers about access tokens, kept for a while so that a client's every request does not
//! pay for its token's check again (an RS256 signature costs far more than the rest of a
//! call): a bounded map from each token's SHA-256 digest (the token itself is not kept) to
//! the answer and until when it holds.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::poison::LockIgnoringPoison;

/// The most answers kept; when full, expired ones are dropped, then all.
const MAX_KEPT: usize = 10_000;

/// What was found out about tokens, each until a time of its own.
pub(super) struct TokenAnswers<V> {
    kept: Mutex<HashMap<[u8; 32], (Instant, V)>>,
}

impl<V: Clone> TokenAnswers<V> {
    pub(super) fn new() -> TokenAnswers<V> {
        TokenAnswers {
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// The answer about `token`, while it holds.
    pub(super) fn get(&self, token: &str) -> Option<V> {
        let now = Instant::now();
        self.lock()
            .get(&digest(token))
            .filter(|(until, _)| *until > now)
            .map(|(_, answer)| answer.clone())
    }

    /// Keep `answer` about `token` until `until`.
    pub(super) fn put(&self, token: &str, until: Instant, answer: V) {
        let now = Instant::now();
        if until <= now {
            return;
        }
        let mut kept = self.lock();
        if kept.len() >= MAX_KEPT {
            kept.retain(|_, (until, _)| *until > now);
            if kept.len() >= MAX_KEPT {
                kept.clear();
            }
        }
        kept.insert(digest(token), (until, answer));
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<[u8; 32], (Instant, V)>> {
        self.kept.lock_ignoring_poison()
    }
}

/// Until when an answer about a token with `claims` may be kept: `cap` from now, and never
/// past the token's `exp`.
pub(super) fn keep_until(claims: &Map<String, Value>, cap: Duration) -> Instant {
    let now = Instant::now();
    match claims.get("exp").and_then(Value::as_u64) {
        Some(exp) => now + cap.min(Duration::from_secs(exp.saturating_sub(unix_now()))),
        None => now + cap,
    }
}

/// Seconds since the Unix epoch.
pub(super) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn an_answer_holds_until_its_time_and_only_for_its_token() {
        let answers = TokenAnswers::new();
        let now = Instant::now();
        answers.put("a.b.c", now + Duration::from_secs(60), 1);
        answers.put("a.b.d", now + Duration::from_millis(1), 2);
        answers.put("a.b.e", now, 3);
        assert_eq!(answers.get("a.b.c"), Some(1));
        assert_eq!(answers.get("a.b.cc"), None);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(answers.get("a.b.d"), None, "past its time");
        assert_eq!(answers.get("a.b.e"), None, "never kept");
    }

    #[test]
    fn the_answers_kept_are_bounded() {
        let answers = TokenAnswers::new();
        let until = Instant::now() + Duration::from_secs(60);
        for n in 0..MAX_KEPT + 10 {
            answers.put(&format!("token-{n}"), until, n);
        }
        assert!(answers.lock().len() <= MAX_KEPT);
        assert_eq!(
            answers.get(&format!("token-{}", MAX_KEPT + 9)),
            Some(MAX_KEPT + 9)
        );
    }
}
