//! The harness's clients: each posts its rns in order, retries the same body until a 200 or
//! a definitive 4xx, and now and then replays an rn already answered (same codeDEFDGI).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;

use super::http::{self, Response};
use super::invoice;
use super::{lock, Shared, REQUEST_LIMIT};

/// The rn of a client's `number`th invoice.
pub fn rn_of(client: usize, number: u64) -> String {
    format!("K{client}-{number:07}")
}

/// The body of `rn` (the same every time: retries and replays must be identical).
pub fn invoice_body(rn: &str, number: u64) -> Value {
    invoice::invoice_of(rn, 1 + number % 3)
}

/// What a client does after one answer.
enum Next {
    /// Answered 200: go on with the next rn.
    Answered,
    /// Done with this rn without a 200 (a replay that did not answer, a definitive refusal).
    Skip,
    /// Retry the same rn after a short pause.
    Retry,
}

/// One client: its rns in order, each until a 200 or a definitive 4xx, and now and then a
/// replay of one already answered 200 (which must answer the same codeDEFDGI).
pub(super) async fn run_client(shared: Arc<Shared>, id: usize, key: String, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let auth = format!("Bearer {key}");
    let mut next: u64 = 0;
    let mut answered: Vec<u64> = Vec::new();
    // Where the last try of an rn went (replicas: a retry may reach another).
    let mut last_sent: Option<(u64, SocketAddr)> = None;
    while !shared.stop.load(Ordering::SeqCst) {
        let replay = !answered.is_empty() && rng.gen_ratio(1, 8);
        let number = if replay {
            answered[rng.gen_range(0..answered.len())]
        } else {
            next
        };
        let rn = rn_of(id, number);
        let body = serde_json::to_vec(&invoice_body(&rn, number)).unwrap_or_default();
        let outcome = {
            let _permit = shared.gate.read().await;
            if shared.stop.load(Ordering::SeqCst) {
                return;
            }
            let addr = {
                let addrs = lock(&shared.addrs);
                match addrs.len() {
                    0 => None,
                    1 => Some(addrs[0]),
                    n => Some(addrs[rng.gen_range(0..n)]),
                }
            };
            let Some(addr) = addr else {
                continue;
            };
            {
                let mut stats = lock(&shared.stats);
                stats.posts += 1;
                if !replay {
                    // Replicas keep their address across restarts: another is another replica.
                    let before = last_sent.filter(|(n, _)| *n == number);
                    if shared.replicas && before.is_some_and(|(_, to)| to != addr) {
                        stats.retried_elsewhere += 1;
                    }
                    last_sent = Some((number, addr));
                }
            }
            let outcome = request(
                addr,
                "POST",
                "/api/v1/Invoice",
                &[
                    ("Authorization", &auth),
                    ("Content-Type", "application/json"),
                ],
                Some(&body),
            )
            .await;
            // Recorded before the permit goes: the oracle runs under the write lock and must
            // see every 200 already received.
            answer(&shared, &rn, replay, outcome)
        };
        match outcome {
            Next::Answered if !replay => {
                answered.push(number);
                next += 1;
            }
            Next::Skip if !replay => next += 1,
            Next::Answered | Next::Skip => {}
            Next::Retry => {
                tokio::time::sleep(Duration::from_millis(rng.gen_range(5..40))).await;
            }
        }
    }
}

/// Records one answer to `rn`; what to do next. A definitive refusal is an anomaly and moves
/// on (it is not in `answered`: it is never replayed).
fn answer(shared: &Shared, rn: &str, replay: bool, outcome: Result<Response, String>) -> Next {
    if replay {
        lock(&shared.stats).replays += 1;
    }
    let response = match outcome {
        Ok(response) => response,
        Err(error) => {
            lock(&shared.stats).no_answer += 1;
            if error.contains("timed out") {
                shared.anomaly(format!("{rn}: {error}"));
            }
            return if replay { Next::Skip } else { Next::Retry };
        }
    };
    if response.status == 200 {
        let code = response.json["codeDEFDGI"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        {
            let mut stats = lock(&shared.stats);
            if response.header("Idempotent-Replayed") == Some("true") {
                stats.ok_replayed += 1;
            } else {
                stats.ok_new += 1;
            }
        }
        let mut acks = lock(&shared.acks);
        match acks.get(rn) {
            Some(first) if *first != code => {
                shared.anomaly(format!(
                    "{rn}: answered {first} first, then {code} ({})",
                    response.body
                ));
                lock(&shared.changed).insert(rn.to_string());
            }
            Some(_) => {}
            None => {
                acks.insert(rn.to_string(), code);
            }
        }
        return Next::Answered;
    }
    let code = response.json["errorCode"].as_u64();
    {
        let mut stats = lock(&shared.stats);
        *stats.statuses.entry(response.status).or_default() += 1;
        *stats
            .codes
            .entry((response.status, code.unwrap_or(0)))
            .or_default() += 1;
    }
    let retryable = response.status >= 500 || (response.status == 409 && code == Some(111));
    if retryable {
        return if replay { Next::Skip } else { Next::Retry };
    }
    let what = if replay { "replay of " } else { "" };
    shared.anomaly(format!(
        "{what}{rn}: definitive {} {}",
        response.status, response.body
    ));
    Next::Skip
}

/// One request (`Connection: close`); `Err` when no complete response came back.
pub(super) async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Result<Response, String> {
    http::try_request(addr, method, path, headers, body, REQUEST_LIMIT).await
}
