//! The one histogram of `/metrics`: fixed buckets (seconds), counted with atomics; a reading
//! of it adds up with others (the sandboxes) and renders as Prometheus text.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the histogram buckets, in seconds.
pub(super) const BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 90.0,
];

/// A histogram with fixed buckets.
#[derive(Debug, Default)]
pub(super) struct Histogram {
    counts: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    pub(super) fn observe(&self, value: Duration) {
        let seconds = value.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            self.counts[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(value.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// What it holds now, to render or to add to another's.
    pub(super) fn read(&self) -> HistogramReading {
        HistogramReading {
            counts: std::array::from_fn(|i| self.counts[i].load(Ordering::Relaxed)),
            count: self.count.load(Ordering::Relaxed),
            sum_micros: self.sum_micros.load(Ordering::Relaxed),
        }
    }
}

/// A histogram's values at one moment; several add up into one series (the sandboxes).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct HistogramReading {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum_micros: u64,
}

impl HistogramReading {
    pub(super) fn add(&mut self, other: &HistogramReading) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine += theirs;
        }
        self.count += other.count;
        self.sum_micros = self.sum_micros.saturating_add(other.sum_micros);
    }

    pub(super) fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (bound, count) in BUCKETS.iter().zip(&self.counts) {
            cumulative += count;
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {cumulative}"
            );
        }
        let count = self.count;
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {count}");
        let sum = self.sum_micros as f64 / 1e6;
        let braces = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(out, "{name}_sum{braces} {sum}");
        let _ = writeln!(out, "{name}_count{braces} {count}");
    }
}
