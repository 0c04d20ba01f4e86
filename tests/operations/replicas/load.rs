//! Clients as an ERP writes them, sending invoices through HAProxy: each posts new invoices
//! one after the other, and retries the same request (same `rn`, same body) on a 503 that
//! carries `Retry-After`, until it is certified; a client that also lost answers (a replica
//! killed under it: no answer, HAProxy's 502) retries on those too, and on the 409 of an
//! invoice still in flight. Every answer is recorded, a failure to get one too, for the test
//! to judge.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common;

/// The longest a client waits before a retry, whatever `Retry-After` says (the tests' outages
/// last seconds).
const RETRY_PAUSE: Duration = Duration::from_millis(200);
/// The longest a client keeps retrying one invoice.
const RETRY_FOR: Duration = Duration::from_secs(90);

/// One answer (or none) to one POST.
#[derive(Debug, Clone)]
pub struct Answer {
    pub rn: String,
    /// The HTTP status, or what went wrong instead of an answer.
    pub status: Result<u16, String>,
    pub error_code: Option<u64>,
    /// Its `errorDesc`, or what HAProxy said.
    pub error_desc: Option<String>,
    pub retry_after: Option<String>,
    /// When it came, since the load began.
    pub at: Duration,
}

impl Answer {
    /// A certification, or the clean refusal a load balancer's client is promised: a 503 with
    /// `Retry-After`, or the 409 (111) of an invoice whose outcome is being settled, with a
    /// short `Retry-After` (docs/error-codes.md: retry the same request; an earlier try's
    /// intent that the database's outage left open is settled within seconds). Not the 409
    /// of an invoice left to an administrator (`Retry-After` 300 s).
    pub fn is_clean(&self) -> bool {
        let soon = || {
            self.retry_after
                .as_deref()
                .and_then(|s| s.parse::<u64>().ok())
                .is_some_and(|secs| secs <= 10)
        };
        match self.status {
            Ok(200) => true,
            Ok(503) => self.retry_after.is_some(),
            Ok(409) => self.error_code == Some(111) && soon(),
            _ => false,
        }
    }
}

/// POSTs `rn` (a small valid invoice) to `addr` with `key`; the answer as recorded.
pub async fn post(addr: SocketAddr, key: &str, rn: &str, since: Instant) -> Answer {
    let auth = format!("Bearer {key}");
    let body = serde_json::to_vec(&common::invoice(rn)).expect("json");
    let response = common::http::try_request(
        addr,
        "POST",
        "/api/v1/Invoice",
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        Some(&body),
        Duration::from_secs(150),
    )
    .await;
    match response {
        Ok(response) => Answer {
            rn: rn.to_owned(),
            status: Ok(response.status),
            error_code: response.json["errorCode"].as_u64(),
            error_desc: (response.status != 200).then(|| response.body.clone()),
            retry_after: response.header("retry-after").map(str::to_owned),
            at: since.elapsed(),
        },
        Err(error) => Answer {
            rn: rn.to_owned(),
            status: Err(error),
            error_code: None,
            error_desc: None,
            retry_after: None,
            at: since.elapsed(),
        },
    }
}

/// Clients posting through one address until told to stop.
pub struct Load {
    stop: Arc<AtomicBool>,
    answers: Arc<Mutex<Vec<Answer>>>,
    clients: Vec<tokio::task::JoinHandle<()>>,
    since: Instant,
}

impl Load {
    /// `clients` clients posting to `addr` with `key`, client `c`'s rns `{prefix}{c}-{n}`.
    pub fn start(addr: SocketAddr, key: &str, prefix: &str, clients: usize) -> Load {
        Load::start_with(addr, key, prefix, clients, Retry::Clean503)
    }

    /// [`Load::start`] with clients that retry whatever does not settle the invoice
    /// ([`Retry::UntilSettled`]).
    pub fn start_retrying(addr: SocketAddr, key: &str, prefix: &str, clients: usize) -> Load {
        Load::start_with(addr, key, prefix, clients, Retry::UntilSettled)
    }

    fn start_with(addr: SocketAddr, key: &str, prefix: &str, clients: usize, retry: Retry) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let answers = Arc::new(Mutex::new(Vec::new()));
        let since = Instant::now();
        let clients = (0..clients)
            .map(|c| {
                let (stop, answers) = (Arc::clone(&stop), Arc::clone(&answers));
                let (key, prefix) = (key.to_owned(), format!("{prefix}{c}-"));
                tokio::spawn(async move {
                    let mut n = 0;
                    while !stop.load(Ordering::Acquire) {
                        n += 1;
                        let rn = format!("{prefix}{n}");
                        let first = Instant::now();
                        loop {
                            let answer = post(addr, &key, &rn, since).await;
                            let again = retry.again(&answer) && first.elapsed() < RETRY_FOR;
                            answers.lock().unwrap().push(answer);
                            if !again {
                                break;
                            }
                            tokio::time::sleep(RETRY_PAUSE).await;
                        }
                    }
                })
            })
            .collect();
        Load {
            stop,
            answers,
            clients,
            since,
        }
    }

    /// Invoices certified so far.
    pub fn certified(&self) -> usize {
        self.answers
            .lock()
            .unwrap()
            .iter()
            .filter(|a| a.status == Ok(200))
            .count()
    }

    /// Waits until `more` invoices more than `from` are certified, within `within`.
    pub async fn until_certified(&self, from: usize, more: usize, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while self.certified() < from + more {
            if Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        true
    }

    /// Time since the load began.
    pub fn elapsed(&self) -> Duration {
        self.since.elapsed()
    }

    /// Stops the clients once each has its current invoice answered (certified, or given up
    /// on); every answer.
    pub async fn finish(self) -> Vec<Answer> {
        self.stop.store(true, Ordering::Release);
        for client in self.clients {
            client.await.expect("client task");
        }
        let answers = self.answers.lock().unwrap();
        answers.clone()
    }
}

/// What a client retries.
#[derive(Debug, Clone, Copy)]
enum Retry {
    /// A clean refusal ([`Answer::is_clean`]): a 503 with `Retry-After`, the 409 (111) of an
    /// invoice being settled.
    Clean503,
    /// Anything but a certification or a refusal of the request itself (4xx other than 409):
    /// no answer, 409 (in flight), 502, 503, 504.
    UntilSettled,
}

impl Retry {
    fn again(self, answer: &Answer) -> bool {
        match (self, &answer.status) {
            (Retry::Clean503, status) => *status != Ok(200) && answer.is_clean(),
            (Retry::UntilSettled, Err(_)) => true,
            (Retry::UntilSettled, Ok(status)) => matches!(status, 409 | 502 | 503 | 504),
        }
    }
}

/// The rns answered 200.
pub fn certified(answers: &[Answer]) -> BTreeSet<String> {
    answers
        .iter()
        .filter(|a| a.status == Ok(200))
        .map(|a| a.rn.clone())
        .collect()
}

/// The answers that are neither a certification nor a clean refusal ([`Answer::is_clean`]).
pub fn unclean(answers: &[Answer]) -> Vec<&Answer> {
    answers.iter().filter(|a| !a.is_clean()).collect()
}
