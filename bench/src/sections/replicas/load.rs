//! The clients: `per_org` keep-alive clients for each organization, each posting 3-item
//! invoices one after the other, request k of client c to replica (c + k) mod N (round robin,
//! as a load balancer would spread them; one keep-alive connection per replica and client).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::http::{self, Conn};
use crate::invoices::invoice;

/// What one load run saw.
pub struct Load {
    /// Invoices certified (200) in each second of the window.
    pub per_second: Vec<u64>,
    /// HTTP latency of each invoice certified in the window, ms.
    pub latencies_ms: Vec<f64>,
    /// The statuses of the answers other than 200 (warm-up included).
    pub errors: Vec<u16>,
    /// Every 200, warm-up and the window's last requests included.
    pub certified: u64,
    /// Seconds from the clients' start to the last answer.
    pub seconds: f64,
}

/// Posts for `warmup` then `window` (each client finishes the request under way); `run`
/// makes the invoice numbers unique across runs on the same register.
pub async fn post_for(
    replicas: &[SocketAddr],
    keys: &[String],
    per_org: usize,
    run: &str,
    (warmup, window): (Duration, Duration),
) -> anyhow::Result<Load> {
    let started = Instant::now();
    let begin = started + warmup;
    let end = begin + window;
    let mut tasks = Vec::new();
    for (org, key) in keys.iter().enumerate() {
        for client in 0..per_org {
            let key = key.clone();
            let replicas = replicas.to_vec();
            let first = org * per_org + client;
            let run = run.to_owned();
            tasks.push(tokio::spawn(async move {
                let mut conns: Vec<Option<Conn>> = replicas.iter().map(|_| None).collect();
                let mut done = Vec::new();
                let mut errors = Vec::new();
                for number in 0usize.. {
                    if Instant::now() >= end {
                        break;
                    }
                    let at = (first + number) % replicas.len();
                    let addr = replicas[at];
                    let conn = match &mut conns[at] {
                        Some(conn) => conn,
                        slot => slot.insert(Conn::connect(addr).await?),
                    };
                    let rn = format!("{run}-{org}-{client}-{number}");
                    let body = serde_json::to_vec(&invoice(&rn, 3))?;
                    let request = http::post_invoice_request(addr, &key, &body, true);
                    let sent = Instant::now();
                    let response = conn.exchange(&request).await?;
                    let answered = Instant::now();
                    if response.status == 200 {
                        done.push((answered, answered - sent));
                    } else {
                        errors.push(response.status);
                        conns[at] = None;
                    }
                }
                Ok::<_, anyhow::Error>((done, errors))
            }));
        }
    }
    let mut load = Load {
        per_second: vec![0u64; window.as_secs() as usize],
        latencies_ms: Vec::new(),
        errors: Vec::new(),
        certified: 0,
        seconds: 0.0,
    };
    for task in tasks {
        let (done, failed) = task.await??;
        load.certified += done.len() as u64;
        for (at, took) in done {
            if at >= begin && at < end {
                let second = (at - begin).as_secs() as usize;
                if let Some(count) = load.per_second.get_mut(second) {
                    *count += 1;
                }
                load.latencies_ms.push(took.as_secs_f64() * 1e3);
            }
        }
        load.errors.extend(failed);
    }
    load.seconds = started.elapsed().as_secs_f64();
    Ok(load)
}
