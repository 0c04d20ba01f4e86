//! Timing decisions of the link, checked as pure functions, plus lower bounds (never faster
//! than the line) on real writes. No test asserts that something is fast on the wall clock.

use super::line::{byte_time, needs_sleep, next_due, Line};
use super::timer::{deadline_after, PreciseTimer};
use super::*;
use tokio::io::AsyncReadExt;

const BAUD: u32 = 115_200;

fn bt() -> Duration {
    byte_time(BAUD).unwrap_or_default()
}

/// A runtime without a timer: any sleep in it panics, so a future that completes in it
/// provably scheduled no sleep.
fn timerless() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread().build() {
        Ok(runtime) => runtime,
        Err(e) => panic!("runtime: {e}"),
    }
}

#[test]
fn a_byte_takes_ten_bits_rounded_up() {
    assert_eq!(byte_time(BAUD), Some(Duration::from_nanos(86_806)));
    assert_eq!(byte_time(9600), Some(Duration::from_nanos(1_041_667)));
    assert_eq!(byte_time(0), None);
}

#[test]
fn paced_deadlines_accumulate_from_the_schedule_not_from_wake_ups() {
    let start = Instant::now();
    let mut free_at = start - Duration::from_secs(1); // an idle line
                                                      // One second of line time in chunks of 11 bytes, as `Line::send` writes them.
    let mut sent = 0;
    for part in [0u8; 11_520].chunks(11) {
        free_at = next_due(free_at, start, part.len(), bt());
        sent += part.len() as u32;
        assert_eq!(free_at, start + bt() * sent);
    }
    let elapsed = free_at - start;
    // 11,520 B/s at 115200 baud: never faster, and the ns rounding adds no more than 6 µs.
    assert!(elapsed >= Duration::from_secs(1), "{elapsed:?}");
    assert!(elapsed < Duration::from_micros(1_000_006), "{elapsed:?}");
}

#[test]
fn bytes_queue_behind_a_busy_line_and_start_at_once_on_an_idle_one() {
    let now = Instant::now();
    let busy_until = now + Duration::from_millis(3);
    assert_eq!(next_due(busy_until, now, 4, bt()), busy_until + bt() * 4);
    let idle_since = now - Duration::from_millis(3);
    assert_eq!(next_due(idle_since, now, 4, bt()), now + bt() * 4);
}

#[test]
fn a_passed_deadline_needs_no_sleep() {
    let now = Instant::now();
    assert!(!needs_sleep(now, now));
    assert!(!needs_sleep(now - Duration::from_millis(1), now));
    assert!(needs_sleep(now + Duration::from_micros(1), now));
}

#[test]
fn zero_or_elapsed_processing_time_is_answered_without_a_sleep() {
    let now = Instant::now();
    let syn = Some(now + Duration::from_millis(60));
    assert_eq!(work_step(now, syn, now), WorkStep::Done);
    assert_eq!(work_step(now, None, now), WorkStep::Done);
    let passed = now - Duration::from_millis(5);
    assert_eq!(work_step(passed, syn, now), WorkStep::Done);
    assert_eq!(work_step(passed, None, now), WorkStep::Done);
}

#[test]
fn processing_sends_syn_only_when_it_lasts_past_the_next_one() {
    let now = Instant::now();
    let syn = now + Duration::from_millis(60);
    let long = now + Duration::from_millis(200);
    assert_eq!(work_step(long, Some(syn), now), WorkStep::Syn(syn));
    assert_eq!(work_step(long, None, now), WorkStep::Finish(long));
    let short = now + Duration::from_millis(60);
    assert_eq!(work_step(short, Some(syn), now), WorkStep::Finish(short));
}

#[test]
fn work_with_no_time_left_never_touches_the_timer() {
    let runtime = timerless();
    let config = LinkConfig::default();
    let mut line = Line::new(tokio::io::sink(), &config);
    runtime.block_on(async {
        let now = Instant::now();
        for syn in [Some(config.syn_interval), None] {
            assert!(work(&mut line, now, syn).await.is_ok());
            let passed = now - Duration::from_millis(1);
            assert!(work(&mut line, passed, syn).await.is_ok());
        }
    });
}

/// Sends `parts` on a paced line over an in-memory pipe; returns the bytes received and
/// the time the sends took.
async fn paced_send(parts: &[&[u8]]) -> (Vec<u8>, Duration) {
    let config = LinkConfig {
        pace: true,
        ..LinkConfig::default()
    };
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let (device, mut host) = tokio::io::duplex(total + 64);
    let mut line = Line::new(device, &config);
    let started = Instant::now();
    for part in parts {
        assert!(line.send(part).await.is_ok());
    }
    let elapsed = started.elapsed();
    drop(line);
    let mut received = Vec::new();
    assert!(host.read_to_end(&mut received).await.is_ok());
    (received, elapsed)
}

#[tokio::test]
async fn a_paced_send_is_never_faster_than_the_line() {
    let frame: Vec<u8> = (0..=255u8).cycle().take(1_152).collect();
    let (received, elapsed) = paced_send(&[&frame]).await;
    assert_eq!(received, frame);
    assert!(elapsed >= bt() * 1_152, "{elapsed:?}");
}

#[tokio::test]
async fn back_to_back_paced_sends_share_the_line() {
    let (a, b, c) = ([0x16u8; 1], [0x42u8; 300], [0x15u8; 1]);
    let (received, elapsed) = paced_send(&[&a, &b, &c]).await;
    assert_eq!(received, [&a[..], &b[..], &c[..]].concat());
    assert!(elapsed >= bt() * 302, "{elapsed:?}");
}

#[test]
fn a_timer_deadline_carries_nanoseconds_and_saturates() {
    let ms = Duration::from_millis(1);
    assert_eq!(deadline_after((5, 0), ms), (5, 1_000_000));
    assert_eq!(deadline_after((5, 999_500_000), ms), (6, 500_000));
    assert_eq!(
        deadline_after((5, 999_999_999), Duration::new(2, 999_999_999)),
        (8, 999_999_998)
    );
    assert_eq!(
        deadline_after((u64::MAX, 0), Duration::from_secs(1)).0,
        u64::MAX
    );
}

/// Waits on `timer` for each offset from now (negative: already passed) and checks that no
/// wait returned before its deadline. A lower bound only: nothing here is timed from above.
async fn assert_never_early(timer: &PreciseTimer) {
    let offsets_us: [i64; 9] = [-1_000, 0, 1, 50, 400, 900, 1_100, 2_500, 7_000];
    for round in 0..20 {
        for offset in offsets_us {
            let now = Instant::now();
            let due = if offset < 0 {
                now - Duration::from_micros(offset.unsigned_abs())
            } else {
                now + Duration::from_micros(offset.unsigned_abs() + round)
            };
            assert!(timer.wait_until(due).await.is_ok());
            let woke = Instant::now();
            assert!(woke >= due, "woke {:?} early", due - woke);
        }
    }
}

#[tokio::test]
async fn the_precise_timer_never_returns_before_its_deadline() {
    let timer = PreciseTimer::new();
    assert!(timer.is_ok(), "{timer:?}");
    if let Ok(timer) = timer {
        assert_never_early(&timer).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_precise_timer_never_returns_early_on_a_multi_thread_runtime() {
    let timer = PreciseTimer::new();
    assert!(timer.is_ok(), "{timer:?}");
    if let Ok(timer) = timer {
        assert_never_early(&timer).await;
    }
}

#[tokio::test]
async fn a_dropped_wait_leaves_the_next_one_exact_or_late() {
    let timer = PreciseTimer::new();
    assert!(timer.is_ok(), "{timer:?}");
    let Ok(timer) = timer else { return };
    // Abandoned while armed far away, and one whose expiration nobody reads.
    let far = Instant::now() + Duration::from_secs(60);
    assert!(
        tokio::time::timeout(Duration::from_millis(2), timer.wait_until(far))
            .await
            .is_err()
    );
    let near = Instant::now() + Duration::from_micros(200);
    // Polled once (armed), then dropped.
    assert!(futures::FutureExt::now_or_never(timer.wait_until(near)).is_none());
    tokio::time::sleep(Duration::from_millis(2)).await;
    assert_never_early(&timer).await;
}
