//! A bounded run of every fuzz target on stable: the seed corpus of `fuzz/corpus/<target>/`,
//! then mutations of it from a fixed-seed generator, for at most `MCP_TOOLBELT_FUZZ_MS`
//! milliseconds per target (default 1,500). Coverage-guided campaigns use the same bodies:
//! `scripts/fuzz-campaign.sh` (docs/fuzzing.md). Each finding of a campaign is also a named
//! test below.

use std::time::{Duration, Instant};

use mcp_toolbelt_tests::fuzz::TARGETS;
use mcp_toolbelt_tests::workspace_root;

/// xorshift64*: reproducible mutations without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that make parsers take their rare branches.
const INTERESTING: &[&[u8]] = &[
    b"\"",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\n",
    b"\r",
    b"#",
    b"\xff",
    b"\\u",
    b"\\ud800",
    b"{+",
    b"{?",
    b"*}",
    b"null",
    b"1e999",
    b"-0",
    b"\0",
    b"\xf0\x9f\x98",
];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..=rng.below(8) {
        let at = rng.below(data.len() + 1);
        match rng.below(4) {
            0 if !data.is_empty() => {
                let end = (at + rng.below(16)).min(data.len());
                data.drain(at.min(end)..end);
            }
            1 => {
                let piece = INTERESTING[rng.below(INTERESTING.len())];
                data.splice(at..at, piece.iter().copied());
            }
            2 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = rng.next() as u8;
            }
            _ => {
                let from = rng.below(data.len() + 1);
                let end = (from + rng.below(32)).min(data.len());
                let copy = data[from..end].to_vec();
                data.splice(at..at, copy);
            }
        }
    }
    data
}

#[test]
fn every_fuzz_target_survives_its_corpus_and_mutations() {
    let budget = std::env::var("MCP_TOOLBELT_FUZZ_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_millis(1500), Duration::from_millis);
    for (name, target) in TARGETS {
        let dir = workspace_root().join("fuzz/corpus").join(name);
        let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("the seed corpus {} is missing: {e}", dir.display()))
            .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
            .collect();
        seeds.push(Vec::new());
        for seed in &seeds {
            target(seed);
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
        let started = Instant::now();
        let mut runs = 0;
        while started.elapsed() < budget {
            let seed = &seeds[rng.below(seeds.len())];
            let input = mutate(&mut rng, seed);
            let outcome = std::panic::catch_unwind(|| target(&input));
            assert!(
                outcome.is_ok(),
                "fuzz target {name} failed on {:?}",
                String::from_utf8_lossy(&input)
            );
            runs += 1;
        }
        eprintln!("{name}: {runs} mutated inputs");
    }
}

// Findings of the coverage-guided campaigns, each kept as a named case (its input is in the
// seed corpus too).

/// The body check skipped a UTF-8 byte-order mark and accepted the request, but rmcp parsed
/// the raw body again and answered a plain-text `415`.
#[test]
fn http_body_with_a_byte_order_mark_is_answered() {
    mcp_toolbelt_tests::fuzz::http_body(
        b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\r\n",
    );
}

/// The body check read a member given twice as its last value (as `serde_json::Value`
/// does) and accepted the notification; rmcp's typed parse of the raw body refused it with
/// a plain-text `415`.
#[test]
fn http_body_with_a_member_given_twice_is_answered() {
    mcp_toolbelt_tests::fuzz::http_body(
        br#"{"jsonrpc":"2.0","method":"noti.0","method":"notifications/initialized"}"#,
    );
    mcp_toolbelt_tests::fuzz::http_body(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#);
}
